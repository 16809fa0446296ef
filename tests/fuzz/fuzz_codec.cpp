// libFuzzer target for weft/codec.h.
//
// Input: byte 0 picks the codec (bit 0: JSON / MessagePack), a small
// max_depth (bits 1-4: 0..15) and a batch limit (bits 5-7: 0..6, 7 = 65536);
// the rest is one frame to decode. Decoding must
// never crash, throw or hang. When it succeeds, the value is wrapped as a
// Response result, encoded with both codecs and decoded again, and the
// round trips must preserve it (codec.h: "a message encoded with either codec
// decodes to the same value"). Values holding binary are only checked through
// MessagePack, the one codec that can carry them. JSON is also checked against
// nlohmann's own parser (ours replaced its SAX lexer, json/parse.h): the same
// texts are accepted, with equal values (nlohmann stops at a NUL byte, we
// do not, so inputs holding one are left out of that comparison). And the
// JSON hot path (json/parse.h, EnvelopeBuilder: classify from the parser's
// events) must give what decode + classify(Document) gives: the same error,
// or the same messages.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "weft/codec.h"
#include "../../core/src/json/parse.h"

namespace {

std::string render(const weft::Item& item) {
  std::string s;
  auto id = [&](const weft::Id& i) { s += i.to_string() + "/" + std::to_string(static_cast<int>(i.kind())) + " "; };
  if (auto* r = std::get_if<weft::Request>(&item)) {
    id(r->id);
    s += "request " + r->method + " " + (r->params ? r->params->dump() : "-");
  } else if (auto* n = std::get_if<weft::Notification>(&item)) {
    s += "notification " + n->method + " " + (n->params ? n->params->dump() : "-");
  } else if (auto* p = std::get_if<weft::Response>(&item)) {
    id(p->id);
    if (!p->is_error()) {
      s += "result " + std::get<weft::json>(p->outcome).dump();
    } else {
      const auto& e = std::get<weft::Error>(p->outcome);
      s += "error " + std::to_string(e.code) + " " + e.message + " " + (e.data ? e.data->dump() : "-");
    }
  } else {
    const auto& bad = std::get<weft::Invalid>(item);
    id(bad.id);
    s += "invalid " + std::to_string(bad.error.code) + " " + bad.error.message + (bad.reply ? " r" : "") +
         (bad.foreign ? " f" : "") + (bad.call ? " c" : "");
  }
  return s;
}

std::string render(const weft::Incoming& in) {
  std::string s = in.batch ? "batch" : "single";
  for (const auto& i : in.items) s += "\n" + render(i);
  return s;
}

bool has_binary(const weft::json& v) {
  if (v.is_binary()) return true;
  if (v.is_array() || v.is_object())
    for (const auto& x : v) if (has_binary(x)) return true;
  return false;
}

[[noreturn]] void fail(const char* why) {
  __builtin_printf("fuzz_codec: %s\n", why);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool msgpack = data[0] & 1;
  const std::size_t max_depth = (data[0] >> 1) & 15;
  const std::size_t max_batch = (data[0] >> 5) == 7 ? 65536 : (data[0] >> 5);
  const std::string_view frame(reinterpret_cast<const char*>(data + 1), size - 1);

  auto codec = weft::make_codec(msgpack ? weft::CodecKind::MessagePack : weft::CodecKind::Json,
                                weft::CodecLimits{max_depth});
  auto doc = codec->decode(frame);
  if (!msgpack && frame.find('\0') == std::string_view::npos &&
      (doc.ok() || doc.error().code == weft::code::kParseError)) {
    const weft::json ref = weft::json::parse(frame.begin(), frame.end(), nullptr, false);
    if (doc.ok() != !ref.is_discarded()) fail("JSON accepted/rejected unlike nlohmann");
    if (doc.ok() && !(doc->value == ref)) fail("JSON value differs from nlohmann's");
  }
  if (!msgpack) {
    weft::detail::EnvelopeBuilder envelope(max_batch);
    auto parsed = weft::detail::parse_json(frame, max_depth, envelope);
    if (parsed.ok() != doc.ok()) fail("envelope path accepted/rejected unlike decode");
    if (!doc.ok() && !(parsed.error() == doc.error())) fail("envelope path error differs from decode's");
    if (doc.ok() && render(envelope.take()) != render(weft::classify(*doc, max_batch)))
      fail("envelope path classified unlike decode + classify");
  }
  if (!doc.ok()) {
    const int c = doc.error().code;
    if (c != weft::code::kParseError && c != weft::code::kInvalidRequest) fail("unexpected error code");
    return 0;
  }

  const weft::json& value = doc->value;
  const bool binary = has_binary(value);
  if (binary && !msgpack) fail("JSON produced a binary value");
  weft::Outgoing out;
  out.messages.push_back(weft::Response{weft::Id::integer(1), value});

  // The envelope adds one level; JSON's rendering of binary adds two more.
  const weft::CodecLimits deeper{max_depth + 3};
  auto mp = weft::make_codec(weft::CodecKind::MessagePack, deeper);
  auto js = weft::make_codec(weft::CodecKind::Json, deeper);

  std::string mbuf, jbuf;
  // Decoded values are finite (both decoders refuse NaN and infinities).
  if (!mp->encode(out, mbuf)) fail("MessagePack encode refused a decoded value");
  if (!js->encode(out, jbuf)) fail("JSON encode refused a decoded value");

  auto m2 = mp->decode(mbuf);
  if (!m2.ok()) fail("MessagePack re-decode failed");
  if (m2->value["result"] != value) fail("MessagePack round trip changed the value");

  auto j2 = js->decode(jbuf);
  if (!j2.ok()) fail("JSON re-decode failed");
  if (!binary) {
    if (j2->value["result"] != value) fail("JSON round trip changed the value");
    if (j2->value != m2->value) fail("codecs disagree");
  }
  return 0;
}
