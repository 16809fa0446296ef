// fuzz_peer.cpp — a whole Connection (framing × codec × Peer) against
// message sequences and arbitrary bytes, checking the promises of
// docs/protocol.md rather than only "no crash":
//
//  * exactly one response per request id (never two, and by the end one);
//  * no response for a notification (a run without noise gets exactly as many
//    responses as it sent requests, none with id null);
//  * every response names an id that was sent;
//  * each of our own calls completes exactly once;
//  * streamed results (docs/streams.md): never more $/weft/chunk than the
//    credit granted, in sequence, none after the answer;
//  * after close nothing is pending or in flight.
//
// Input: byte 0 picks the framing (bits 0-1), the codec (bit 2; JSON under
// NDJSON, where MessagePack is not allowed), the mode (bit 3: 0 = message
// sequence, 1 = raw bytes) and the feed chunk size (bits 4-7). In sequence
// mode the rest is read as operations: clean requests (ids from 1e9 upward,
// each used once), notifications, batches, answers to our calls,
// $/cancelRequest, parked async answers, our own calls and cancels, clock
// steps, streamed calls ($/weft/open + request) and credit grants, and "noise" frames (fuzzer bytes, correctly framed so that they
// cannot swallow the clean frames after them). In raw mode the rest is the
// byte stream itself and only the close-time invariants apply.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "demo.h"
#include "json/pool.h"
#include "message_writer.h"
#include "weft/weft.h"

namespace {

using namespace weft;

constexpr std::int64_t kCleanBase = 1000000000;

[[noreturn]] void fail(const char* why, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_peer: %s %s\n", why, detail.c_str());
  std::abort();
}

bool clean_id(const Id& id) { return id.kind() == Id::Kind::Int && id.as_int() >= kCleanBase; }

struct Cursor {
  const std::uint8_t* p;
  std::size_t n;
  bool empty() const { return n == 0; }
  std::uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  std::string bytes(std::size_t k) {
    k = std::min(k, n);
    std::string s(reinterpret_cast<const char*>(p), k);
    p += k;
    n -= k;
    return s;
  }
};

// Reads what the Connection wrote: frames → documents → responses.
struct Wire : FrameHandler {
  std::unique_ptr<FrameDecoder> dec;
  std::unique_ptr<Codec> codec;
  std::map<std::int64_t, int> clean_answers;  // clean id → responses seen
  std::map<std::int64_t, std::uint64_t> credit;  // stream id → credit granted so far
  struct Seen {
    std::uint64_t chunks = 0;
    std::optional<std::uint64_t> last_seq;
  };
  std::map<std::int64_t, Seen> chunks;
  std::set<std::string> sent_ids;             // every id the fuzzer sent (to_string)
  std::size_t responses = 0, null_responses = 0;
  bool noise = false;
  bool raw = false;  // raw mode: ids unknown, only the close-time invariants

  Wire(Framing f, CodecKind k) {
    FramingLimits l;
    l.max_frame = 64u << 20;
    l.read_timeout = 0;
    dec = make_decoder(f, l);
    codec = make_codec(k, CodecLimits{1000});
  }
  void on_frame(std::string_view payload) override {
    auto doc = codec->decode(payload);
    if (!doc.ok()) fail("the peer wrote an undecodable frame", doc.error().message);
    Incoming in = classify(std::move(*doc));
    for (const Item& item : in.items) {
      if (auto* n = std::get_if<Notification>(&item); n && n->method == "$/weft/chunk" && !raw) chunk(*n);
      const Response* r = std::get_if<Response>(&item);
      if (!r) continue;  // our own requests and cancel notifications
      ++responses;
      if (raw) continue;
      if (r->id.is_null()) {
        ++null_responses;
        continue;
      }
      if (clean_id(r->id)) {
        if (++clean_answers[r->id.as_int()] > 1) fail("two responses for one request id", r->id.to_string());
        continue;
      }
      if (!sent_ids.count(r->id.to_string())) fail("response for an id never sent", r->id.to_string());
    }
  }
  void chunk(const Notification& n) {
    if (!n.params || !n.params->is_object()) fail("a chunk without params");
    const json& p = *n.params;
    if (!p.contains("id") || !p["id"].is_number_integer() || p["id"].get<std::int64_t>() < kCleanBase) return;
    const std::int64_t id = p["id"].get<std::int64_t>();
    if (!credit.count(id)) fail("a chunk for a request that opened no stream", std::to_string(id));
    if (clean_answers.count(id)) fail("a chunk after the answer", std::to_string(id));
    Seen& s = chunks[id];
    if (++s.chunks > credit[id]) fail("more chunks than credit granted", std::to_string(id));
    const std::uint64_t seq = p.value("seq", std::uint64_t(0));
    if (s.last_seq && seq != *s.last_seq + 1) fail("chunks out of sequence", std::to_string(id));
    s.last_seq = seq;
  }
  void on_frame_error(const FrameError& e) override { fail("the peer wrote a bad frame", e.error.message); }
};

// The ids a noise payload carries, as the Connection will see them; false
// when it uses a clean id (it would make the clean bookkeeping ambiguous).
bool note_noise_ids(const Codec& codec, std::string_view payload, Wire& wire) {
  auto doc = codec.decode(payload);
  if (!doc.ok()) return true;
  Incoming in = classify(std::move(*doc));
  for (const Item& item : in.items) {
    const Id* id = nullptr;
    if (auto* r = std::get_if<Request>(&item)) id = &r->id;
    if (auto* bad = std::get_if<Invalid>(&item)) id = &bad->id;
    if (auto* n = std::get_if<Notification>(&item)) {
      // Stream control in noise would change the credit the oracle counts.
      if (n->method == "$/weft/open" || n->method == "$/weft/credit") return false;
      continue;
    }
    if (!id) continue;
    // Clean ids are Int; a Number/Uint spelling of the same value is as bad.
    if (clean_id(*id)) return false;
    if (id->kind() != Id::Kind::String && id->kind() != Id::Kind::Null && id->to_json() >= kCleanBase)
      return false;
    wire.sent_ids.insert(id->to_string());
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t sel = data[0];
  const Framing framing = static_cast<Framing>(sel & 3);
  const CodecKind kind = (sel & 4) && framing != Framing::Ndjson ? CodecKind::MessagePack : CodecKind::Json;
  const bool raw = sel & 8;
  const std::size_t step = 1 + (sel >> 4) * 5;
  Cursor in{data + 1, size - 1};

  Wire wire(framing, kind);
  auto codec = make_codec(kind);

  ConnectionOptions o;
  o.framing = framing;
  o.codec = kind;
  o.framing_limits.max_frame = 4096;
  o.framing_limits.read_timeout = 50;
  o.codec_limits.max_depth = 16;
  o.peer_limits.max_batch = 64;
  o.peer_limits.max_in_flight = 8;
  o.peer_limits.max_pending = 16;
  o.write = [&](std::string_view b) { wire.dec->feed(b, 0, wire); };
  Connection conn(std::move(o));
  Peer& peer = conn.peer();
  register_demo_methods(peer);
  std::vector<Reply> parked;  // an async method answered when the input says so
  peer.method("park", MethodHandler([&](json, Reply r, const CallInfo&) { parked.push_back(std::move(r)); }));
  // Streams its answer in params[0] chunks when the caller opened a stream
  // (writes beyond the credit queue up; the answer follows them).
  peer.method("stream", MethodHandler([](json params, Reply r, const CallInfo&) {
    const int k = params.is_array() && !params.empty() && params[0].is_number_integer() ? params[0].get<int>() % 6 : 0;
    if (r.streaming())
      for (int i = 0; i < k; ++i) (void)r.write(i, i == k - 1);
    r.ok("done");
  }));

  // Our own calls: each completion counted.
  std::map<std::int64_t, int> completions;
  std::vector<Id> ours;
  Millis now = 0;
  auto call = [&](Millis timeout) {
    auto slot = std::make_shared<std::int64_t>(-1);
    auto r = peer.call("remote", json::array({1}), [&completions, slot](Result<json>) {
      if (*slot < 0) fail("completion before call() returned");
      if (++completions[*slot] > 1) fail("a call completed twice");
    }, CallOptions{timeout}, now);
    if (r.ok()) {
      *slot = r->as_int();
      completions.emplace(*slot, 0);
      ours.push_back(*r);
    }
  };
  for (int i = 0; i < 3; ++i) call(i * 40);

  std::string stream;
  auto flush = [&] {
    for (std::size_t off = 0; off < stream.size(); off += step)
      conn.feed(std::string_view(stream).substr(off, step), now);
    stream.clear();
  };
  // Our messages, written with members in key order (message_writer.h);
  // frame() frames what was written so far.
  fuzz::Writer w(kind);
  auto frame = [&] { encode_frame(framing, w.take(), stream); };
  auto envelope = [&](std::size_t members) { w.map(members); };
  auto version = [&] { w.key("jsonrpc").str("2.0"); };

  std::int64_t next_clean = kCleanBase;
  std::set<std::int64_t> clean_sent;
  const char* sync_methods[] = {"subtract", "echo", "get_data", "sum", "nope", "fail"};
  auto clean_request = [&](std::uint8_t b) {
    const std::int64_t id = next_clean++;
    clean_sent.insert(id);
    envelope(b & 1 ? 3 : 4);
    w.key("id").num(id);
    version();
    if (b & 1) {
      w.key("method").str("park");
    } else {
      w.key("method").str(sync_methods[(b >> 1) % 6]);
      w.key("params").array(2).num(b).num(1).end();
    }
    w.end();
  };
  auto clean_notification = [&](std::uint8_t b) {
    envelope(3);
    version();
    w.key("method").str((b & 1) ? "notify_hello" : "park");
    w.key("params").array(1).num(b).end();
    w.end();
  };
  auto control = [&](const char* method, std::int64_t id, std::optional<std::uint64_t> credit, bool progress) {
    envelope(3);
    version();
    w.key("method").str(method);
    w.key("params").map(1 + (credit ? 1 : 0) + (progress ? 1 : 0));
    if (credit) w.key("credit").num(std::int64_t(*credit));
    w.key("id").num(id);
    if (progress) w.key("progress").boolean(true);
    w.end().end();
  };

  if (raw) {
    stream = in.bytes(in.n);
    wire.noise = wire.raw = true;
    flush();
  }
  while (!in.empty()) {
    const std::uint8_t op = in.byte(), arg = in.byte();
    switch (op % 14) {
      case 0:
      case 1:
        clean_request(arg);
        frame();
        break;
      case 2:
        clean_notification(arg);
        frame();
        break;
      case 3: {
        const int k = 1 + arg % 6;
        w.array(k);
        for (int i = 0; i < k; ++i) {
          if (in.byte() & 1) clean_request(in.byte());
          else clean_notification(in.byte());
        }
        w.end();
        frame();
        break;
      }
      case 4: {  // an answer to one of our calls (maybe twice, maybe late)
        if (ours.empty()) break;
        envelope(3);
        if (!(arg & 1)) w.key("error").map(2).key("code").num(-1).key("message").str("no").end();
        w.key("id").num(ours[arg % ours.size()].as_int());
        version();
        if (arg & 1) w.key("result").num(arg);
        w.end();
        frame();
        break;
      }
      case 5:  // cancel one of the clean requests (parked ones are answered -32800)
        if (next_clean > kCleanBase) {
          control("$/cancelRequest", kCleanBase + arg % (next_clean - kCleanBase), std::nullopt, false);
          frame();
        }
        break;
      case 6:
        flush();
        if (!parked.empty()) {
          Reply r = std::move(parked[arg % parked.size()]);
          parked.erase(parked.begin() + arg % parked.size());
          if (arg & 1) r.ok(arg);
          else r.error(Error(code::kServerError, "parked"));
        }
        break;
      case 7:
        flush();
        now += arg;
        conn.advance(now);
        break;
      case 8: flush(); call(arg % 3 ? Millis(arg) : Millis(0)); break;
      case 9:
        flush();
        if (!ours.empty()) peer.cancel(ours[arg % ours.size()]);
        break;
      case 12: {  // a streamed call: $/weft/open (maybe without credit), then the request
        const std::int64_t id = next_clean++;
        clean_sent.insert(id);
        const std::uint64_t c = arg % 3;
        wire.credit[id] = c;
        control("$/weft/open", id, c, arg & 8);
        frame();
        envelope(4);
        w.key("id").num(id);
        version();
        w.key("method").str("stream");
        w.key("params").array(1).num(arg >> 4).end();
        w.end();
        frame();
        break;
      }
      case 13: {  // more credit for a stream
        if (wire.credit.empty()) break;
        auto it = std::next(wire.credit.begin(), arg % wire.credit.size());
        const std::uint64_t n = (arg >> 3) % 4;
        it->second += n;
        control("$/weft/credit", it->first, n, false);
        frame();
        break;
      }
      default: {  // noise: fuzzer bytes in a well-formed frame
        std::string payload = in.bytes(arg);
        if (framing == Framing::Ndjson)
          for (char& c : payload)
            if (c == '\n') c = ' ';
        if (payload.empty() || !note_noise_ids(*codec, payload, wire)) break;
        wire.noise = true;
        encode_frame(framing, payload, stream);
        break;
      }
    }
  }
  // Enough credit for every stream, so that queued chunks and answers go out.
  for (auto& [id, c] : wire.credit) {
    c += 64;
    control("$/weft/credit", id, 64, false);
    frame();
  }
  flush();
  conn.finish(now);
  // Everything still parked is answered; time runs past every deadline.
  for (auto& r : parked) r.ok(0);
  parked.clear();
  now += 100000;
  conn.advance(now);

  if (!raw) {
    for (std::int64_t id : clean_sent) {
      auto it = wire.clean_answers.find(id);
      if (it == wire.clean_answers.end()) fail("a request was never answered", std::to_string(id));
    }
    if (!wire.noise) {
      if (wire.null_responses) fail("a response with id null without bad input");
      if (wire.responses != clean_sent.size()) fail("responses != requests (a notification answered?)");
    }
  }
  conn.close();
  if (peer.pending() != 0) fail("calls pending after close");
  if (peer.in_flight() != 0) fail("requests in flight after close");
  for (auto& [id, n] : completions)
    if (n != 1) fail("a call did not complete exactly once", std::to_string(id) + ":" + std::to_string(n));
  // The thread's pool of json objects (json/pool.h) keeps the params maps of
  // answered calls for the next message, up to its bound. Emptied here so that
  // each input starts from the same state (a finding replays from its input
  // alone) and allocates exactly what it frees: libFuzzer checks for leaks
  // after any input that does not (a full LeakSanitizer pass, the input run
  // twice), and gives up checking after 1,000 such inputs (docs/reliability.md).
  detail::object_pool() = detail::ObjectPool{};
  return 0;
}
