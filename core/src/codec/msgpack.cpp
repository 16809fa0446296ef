// The MessagePack codec: its decoder (a msgpack-cxx visitor building json
// values) and the Codec itself; the encoder is in msgpack_encode.cpp.
//
// Decoding uses msgpack-cxx's visitor parser (msgpack::parse with a visitor,
// API v3), which reports each value as it is read; JsonBuilder below turns the
// calls straight into a json value (no msgpack::object, no zone). Everything a
// JSON-RPC message may hold must also be representable as JSON text, because
// codec.h promises that a message decodes to the same value with either
// codec. Hence:
//   nil → null, bool → boolean, positive int → number_unsigned, negative int →
//   number_integer (a signed-format int that is >= 0 becomes number_unsigned,
//   exactly as JSON "5" does), float32/float64 → number_float, str → string,
//   array → array, map → object;
//   str must be valid UTF-8 (RFC 8259 §8.1)                       → -32700
//   map keys must be str (JSON object names are strings)          → -32700
//   NaN/±Infinity floats have no JSON form (RFC 8259 §6)          → -32700
//   ext values are not supported (no JSON form, no agreed meaning) → -32700
//   bin → json::binary_t: MessagePack's one extension over JSON (codec.h).
// Nesting deeper than CodecLimits::max_depth stops the parse (-32600, the
// same message as the JSON codec's).
//
// No exceptions: the visitor records errors instead of throwing, and the one
// `throw` on msgpack-cxx's visitor path — check_ext_size<4>, an ext32 whose
// length is 0xffffffff on a 32-bit size_t, i.e. WebAssembly — is avoided by
// ext32_overflow_at() (msgpack_ext32.cpp). (Allocation failure aside.)
//
// Encoding walks the Message directly (envelope keys in spec order, then the
// json payload) with msgpack::packer into the caller's std::string
// (msgpack_encode.cpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <msgpack.hpp>

#include "weft/codec.h"
#include "codec/msgpack_detail.h"
#include "json/parse.h"  // nesting_too_deep: one wording for both codecs
#include "json/utf8.h"

namespace weft {
namespace {

using detail::clamp32;
using detail::ext32_overflow_at;
using detail::pack_message;
using detail::Packer;
using detail::StringSink;

// ---------------------------------------------------------------------------
// UTF-8 validation by the core's one rule (utf8.h), as for JSON strings.
// Returns the index of the lead byte of the first bad sequence, or npos.
std::size_t invalid_utf8_at(const unsigned char* s, std::size_t n) {
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    std::size_t bad = 0;
    const std::size_t len = detail::utf8_sequence(s + i, s + n, bad);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

// ---------------------------------------------------------------------------
// Builds the json value from msgpack-cxx visitor callbacks. Returning false
// stops the parser (PARSE_STOP_VISITOR); the reason is kept in `problem_`.
class JsonBuilder : public msgpack::null_visitor {
 public:
  enum class Problem { None, Depth, Utf8, KeyType, NonFinite, Ext, Syntax, Truncated };

  JsonBuilder(std::size_t max_depth, std::size_t input_size)
      : max_depth_(max_depth), input_size_(input_size) {
    stack_.reserve(16);
  }

  json& root() { return root_; }
  Problem problem() const { return problem_; }
  std::size_t detail_offset() const { return detail_; }

  bool visit_nil() { return put(json(nullptr)); }
  bool visit_boolean(bool v) { return put(json(v)); }
  bool visit_positive_integer(std::uint64_t v) { return put(json(v)); }
  bool visit_negative_integer(std::int64_t v) {
    // Signed formats may carry non-negative values; type them as JSON would.
    if (v >= 0) return put(json(static_cast<std::uint64_t>(v)));
    return put(json(v));
  }
  bool visit_float32(float v) { return visit_float64(static_cast<double>(v)); }
  bool visit_float64(double v) {
    if (!std::isfinite(v)) return stop(Problem::NonFinite);
    return put(json(v));
  }
  bool visit_str(const char* v, std::uint32_t size) {
    const auto* u = reinterpret_cast<const unsigned char*>(v);
    const std::size_t bad = size ? invalid_utf8_at(u, size) : std::string_view::npos;
    if (bad != std::string_view::npos) {
      // The parser's stop offset is the string's last byte; remember how far
      // before that the bad byte is.
      detail_ = size - 1 - bad;
      return stop(Problem::Utf8);
    }
    std::string s = size ? std::string(v, size) : std::string();
    if (expecting_key()) {
      stack_.back().key = std::move(s);
      return true;
    }
    return put(json(std::move(s)));
  }
  bool visit_bin(const char* v, std::uint32_t size) {
    const auto* u = reinterpret_cast<const std::uint8_t*>(v);
    // json::binary(vector&&) moves the bytes in; json(binary_t&&) would copy
    // them again (nlohmann's to_json takes a binary_t by const reference),
    // which the profile of a 64 KiB `bin` stream showed as a third of the
    // receiver's instructions.
    return put(json::binary(size ? std::vector<std::uint8_t>(u, u + size) : std::vector<std::uint8_t>()));
  }
  bool visit_ext(const char*, std::uint32_t) { return stop(Problem::Ext); }

  bool start_array(std::uint32_t n) { return open(json::value_t::array, n); }
  bool start_map(std::uint32_t n) { return open(json::value_t::object, n); }
  bool end_array() { return close(); }
  bool end_map() { return close(); }
  bool start_map_key() {
    stack_.back().expect_key = true;
    return true;
  }
  bool start_map_value() {
    stack_.back().expect_key = false;
    return true;
  }

  void parse_error(std::size_t, std::size_t) { stop(Problem::Syntax); }
  void insufficient_bytes(std::size_t, std::size_t) { stop(Problem::Truncated); }

 private:
  struct Frame {
    json* value;
    bool is_map;
    bool expect_key = false;
    std::string key;
  };

  bool expecting_key() const { return !stack_.empty() && stack_.back().expect_key; }

  bool stop(Problem p) {
    if (problem_ == Problem::None) problem_ = p;
    return false;
  }

  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (!f.is_map) {
      json::array_t* arr = f.value->get_ptr<json::array_t*>();
      arr->push_back(std::move(v));
      return &arr->back();
    }
    json& slot = (*f.value->get_ptr<json::object_t*>())[std::move(f.key)];
    slot = std::move(v);
    return &slot;
  }

  bool put(json&& v) {
    if (expecting_key()) return stop(Problem::KeyType);
    place(std::move(v));
    return true;
  }

  bool open(json::value_t type, std::uint32_t n) {
    if (expecting_key()) return stop(Problem::KeyType);
    // Depth counts the top level as 1 (codec.h).
    if (stack_.size() >= max_depth_) return stop(Problem::Depth);
    json* v = place(json(type));
    if (type == json::value_t::array) {
      // The count is the sender's claim: reserve at most a little (each
      // element takes at least one input byte, and nested arrays would
      // otherwise each reserve that much), and let growth handle the rest.
      constexpr std::uint32_t kMaxReserve = 64;
      std::size_t r = n < kMaxReserve ? n : kMaxReserve;
      v->get_ptr<json::array_t*>()->reserve(r < input_size_ ? r : input_size_);
    }
    stack_.push_back(Frame{v, type == json::value_t::object, false, std::string()});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  std::size_t max_depth_;
  std::size_t input_size_;
  json root_;
  std::vector<Frame> stack_;
  Problem problem_ = Problem::None;
  std::size_t detail_ = 0;
};

Error parse_error_at(std::size_t at, const char* what) {
  return Error(code::kParseError,
               "invalid MessagePack at byte " + std::to_string(at) + ": " + what);
}

class MsgpackCodec final : public Codec {
 public:
  explicit MsgpackCodec(CodecLimits limits) : limits_(limits) {}

  CodecKind kind() const override { return CodecKind::MessagePack; }

  Result<Document> decode(std::string_view bytes) const override {
    if (bytes.empty()) return parse_error_at(0, "empty input");
    const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t ext32 = ext32_overflow_at(u, bytes.size());
    if (ext32 != std::string_view::npos) {
      // Parse only up to the offending header so that an earlier problem is
      // still reported first; reaching the header shows up as truncation.
      JsonBuilder::Problem problem;
      Result<Document> head = parse(bytes.substr(0, ext32 + 1), problem);
      if (problem != JsonBuilder::Problem::Truncated) return head;
      return parse_error_at(ext32, "ext values are not supported");
    }
    JsonBuilder::Problem problem;
    return parse(bytes, problem);
  }

  bool encode(const Outgoing& out, std::string& buffer) const override {
    const std::size_t mark = buffer.size();
    StringSink sink{buffer};
    Packer pk(sink);
    if (out.batch) pk.pack_array(clamp32(out.messages.size()));  // §6 batch
    for (const Message& m : out.messages) pack_message(pk, buffer, m);
    if (!pk.non_finite) return true;
    buffer.resize(mark);
    return false;
  }

 private:
  Result<Document> parse(std::string_view bytes, JsonBuilder::Problem& problem) const {
    JsonBuilder builder(limits_.max_depth, bytes.size());
    std::size_t off = 0;
    const bool ok = msgpack::parse(bytes.data(), bytes.size(), off, builder);
    using P = JsonBuilder::Problem;
    problem = builder.problem();
    // For a stopped parse `off` is the last byte of the value being visited.
    switch (builder.problem()) {
      case P::None:
        break;
      case P::Depth:
        return detail::nesting_too_deep(limits_.max_depth);
      case P::Utf8:
        return parse_error_at(off - builder.detail_offset(), "invalid UTF-8 in str");
      case P::KeyType:
        return parse_error_at(off, "map key must be a string");
      case P::NonFinite:
        return parse_error_at(off, "NaN and Infinity have no JSON representation");
      case P::Ext:
        return parse_error_at(off, "ext values are not supported");
      case P::Syntax:  // 0xc1, the one unassigned type byte
        return parse_error_at(off, "invalid type byte 0xc1");
      case P::Truncated:
        return parse_error_at(bytes.size(), "input truncated (value incomplete)");
    }
    if (!ok) return parse_error_at(off, "malformed input");
    if (off < bytes.size())
      return parse_error_at(off, "trailing bytes after the value");
    Document doc;
    doc.value = std::move(builder.root());
    return doc;
  }

  CodecLimits limits_;
};

}  // namespace

namespace detail {
std::unique_ptr<Codec> make_msgpack_codec(CodecLimits limits) {
  return std::make_unique<MsgpackCodec>(limits);
}
}  // namespace detail

}  // namespace weft
