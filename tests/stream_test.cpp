// Streamed results and progress (docs/streams.md), between two Peers wired
// back to back: credit bounds what is in flight, answers follow queued
// chunks, cancellation and close drop what was queued, and the caller
// rejects a sender that breaks the rules.
#include <catch2/catch.hpp>

#include <deque>
#include <fstream>
#include <set>

#include "peer_loop.h"
#include "count_fixture.h"
#include "peer_pair.h"
#include "weft/weft.h"

using namespace weft;
using weft::test::Pair;
using weft::test::serve_count;

namespace {

struct Consumer {
  std::vector<Chunk> chunks;
  std::optional<Result<json>> done;
  StreamOptions options(std::uint32_t credit) {
    StreamOptions so;
    so.credit = credit;
    so.on_chunk = [this](Chunk&& c) { chunks.push_back(std::move(c)); };
    return so;
  }
  CallCallback callback() {
    return [this](Result<json> r) { done = std::move(r); };
  }
};

}  // namespace

TEST_CASE("a stream delivers every chunk in order, then the answer", "[stream]") {
  Pair p;
  serve_count(*p.server);
  Consumer c;
  auto id = p.client->stream("count", json{{"n", 5}}, c.options(16), c.callback(), {}, 0);
  REQUIRE(id.ok());
  CHECK(p.from_client[0] == R"({"jsonrpc":"2.0","method":"$/weft/open","params":{"credit":16,"id":1}})");
  p.run();
  REQUIRE(c.chunks.size() == 5);
  for (std::uint64_t i = 0; i < 5; ++i) {
    CHECK(c.chunks[i].seq == i);
    CHECK(c.chunks[i].value == i);
    CHECK(c.chunks[i].total == std::optional<std::uint64_t>(5));
    CHECK(c.chunks[i].final == (i == 4));
  }
  REQUIRE(c.done);
  CHECK(c.done->value() == json{{"chunks", 5}});
  CHECK(p.from_server.back() == R"({"jsonrpc":"2.0","result":{"chunks":5},"id":1})");
  CHECK(p.client->pending() == 0);
  CHECK(p.server->in_flight() == 0);
}

TEST_CASE("the sender never has more chunks in flight than granted", "[stream][credit]") {
  Pair p;
  serve_count(*p.server);
  Consumer c;
  auto id = p.client->stream("count", json{{"n", 10}}, c.options(3), c.callback(), {}, 0);
  p.run();
  CHECK(c.chunks.size() == 3);  // paused: no credit left
  CHECK_FALSE(c.done);
  p.run();
  CHECK(c.chunks.size() == 3);
  REQUIRE(p.client->grant(*id, 2));  // resume
  p.run();
  CHECK(c.chunks.size() == 5);
  REQUIRE(p.client->grant(*id, 100));
  p.run();
  CHECK(c.chunks.size() == 10);
  REQUIRE(c.done);
  CHECK(c.done->ok());
  CHECK_FALSE(p.client->grant(*id, 1));  // finished
}

TEST_CASE("an answer given while chunks are queued follows them", "[stream]") {
  Pair p;
  p.server->method("burst", MethodHandler([](json, Reply r, const CallInfo&) {
    for (int i = 0; i < 4; ++i) REQUIRE(r.write(i).ok());  // beyond credit: queued
    r.ok("end");
  }));
  Consumer c;
  auto id = p.client->stream("burst", std::nullopt, c.options(1), c.callback(), {}, 0);
  p.run();
  CHECK(c.chunks.size() == 1);
  CHECK_FALSE(c.done);
  CHECK(p.server->in_flight() == 1);
  p.client->grant(*id, 10);
  p.run();
  CHECK(c.chunks.size() == 4);
  REQUIRE(c.done);
  CHECK(c.done->value() == "end");
}

TEST_CASE("writing beyond the queue bound is refused with -32003", "[stream][limits]") {
  PeerLimits limits;
  limits.max_stream_queue = 2;
  Pair p(limits);
  std::vector<int> codes;
  p.server->method("flood", MethodHandler([&](json, Reply r, const CallInfo&) {
    for (int i = 0; i < 5; ++i) {
      auto w = r.write(i);
      codes.push_back(w.ok() ? 0 : w.error().code);
    }
    r.ok(nullptr);
  }));
  Consumer c;
  p.client->stream("flood", std::nullopt, c.options(1), c.callback(), {}, 0);
  p.run();
  // One sent on credit, two queued, then the queue is full.
  CHECK(codes == std::vector<int>{0, 0, 0, code::kOverloaded, code::kOverloaded});
  CHECK(p.discarded.size() == 2);  // the refused values are given up, not lost track of
}

TEST_CASE("cancelling mid-stream drops queued chunks and answers -32800", "[stream][cancel]") {
  Pair p;
  Reply held;
  p.server->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) {
    for (int i = 0; i < 5; ++i) REQUIRE(r.write(i).ok());
    held = std::move(r);
  }));
  Consumer c;
  auto id = p.client->stream("hold", std::nullopt, c.options(2), c.callback(), {}, 0);
  p.run();
  CHECK(c.chunks.size() == 2);
  REQUIRE(p.client->cancel(*id));
  p.run();
  REQUIRE(c.done);
  CHECK(c.done->error().code == code::kRequestCancelled);
  CHECK(p.server->in_flight() == 0);
  CHECK(p.discarded.size() == 3);  // the three chunks that never left
  CHECK(p.from_server.back() ==
        R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":1})");
  CHECK_FALSE(held.write(9).ok());
}

TEST_CASE("closing the serving side drops queued chunks", "[stream][close]") {
  Pair p;
  Reply held;
  p.server->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) {
    for (int i = 0; i < 3; ++i) REQUIRE(r.write(i).ok());
    held = std::move(r);
  }));
  Consumer c;
  p.client->stream("hold", std::nullopt, c.options(0), c.callback(), {}, 0);
  p.run();
  CHECK(c.chunks.empty());
  p.server->close();
  CHECK(p.discarded.size() == 3);
  CHECK(p.server->in_flight() == 0);
}

TEST_CASE("a request whose caller opened no stream cannot write chunks", "[stream]") {
  Pair p;
  std::optional<Error> refused;
  p.server->method("m", MethodHandler([&](json, Reply r, const CallInfo&) {
    CHECK_FALSE(r.streaming());
    auto w = r.write(1);
    if (!w) refused = w.error();
    r.ok(2);
  }));
  Consumer c;
  p.client->call("m", std::nullopt, c.callback(), {}, 0);
  p.run();
  REQUIRE(refused);
  CHECK(refused->code == code::kInvalidRequest);
  CHECK(c.done->value() == 2);
  for (const auto& t : p.from_server) CHECK(t.find("$/weft/chunk") == std::string::npos);
}

TEST_CASE("opens whose requests never come do not stop later streams: past max_in_flight the oldest goes",
          "[stream][limits]") {
  PeerLimits limits;
  limits.max_in_flight = 4;
  Pair p(limits);
  serve_count(*p.server);
  // A caller whose requests were refused before they were read (too large
  // for their frame) or could not be sent at all: only the opens arrived.
  for (int id = 100; id < 110; ++id)
    p.server->receive(Item{Notification{"$/weft/open", json{{"id", id}, {"credit", 8}}}});
  Consumer c;
  REQUIRE(p.client->stream("count", json{{"n", 3}}, c.options(8), c.callback(), {}, 0).ok());
  p.run();
  REQUIRE(c.done);
  REQUIRE(c.done->ok());
  CHECK(c.chunks.size() == 3);
}

TEST_CASE("past max_in_flight the older half of the opens goes: one opened again counts from then",
          "[stream][limits]") {
  PeerLimits limits;
  limits.max_in_flight = 4;
  std::vector<std::string> diags;
  Pair p(limits, [&](PeerOptions& o, bool server) {
    if (server) o.diagnostic = [&](const Diagnostic& d) { diags.push_back(d.message); };
  });
  serve_count(*p.server);
  auto open = [&](int id) { p.server->receive(Item{Notification{"$/weft/open", json{{"id", id}, {"credit", 8}}}}); };
  for (int id = 1; id <= 4; ++id) open(id);
  open(1);  // again: now the newest
  open(5);  // one too many: 2 and 3 go, not 1 or 4
  CHECK(diags == std::vector<std::string>{"too many $/weft/open awaiting their requests; the older half dropped"});
  for (int id : {1, 2, 3, 4, 5}) p.server->receive(Item{Request{Id::integer(id), "count", json{{"n", 1}}}});
  p.run();
  std::set<std::int64_t> streamed;
  for (const auto& text : p.from_server) {
    json m = json::parse(text);
    if (m.value("method", "") == "$/weft/chunk") streamed.insert(m["params"]["id"].get<std::int64_t>());
  }
  CHECK(streamed == std::set<std::int64_t>{1, 4, 5});
}

TEST_CASE("a $/weft/open whose credit is not a non-negative number: its request is refused -32600, not left waiting",
          "[stream][rules]") {
  for (const json& credit : {json(-1), json("5"), json(-0.5), json(nullptr)}) {
    Pair p;
    serve_count(*p.server);
    p.server->receive(Item{Notification{"$/weft/open", json{{"id", 1}, {"credit", credit}}}});
    p.server->receive(Item{Request{Id::integer(1), "count", json{{"n", 2}}}});
    p.run();
    INFO(credit.dump());
    REQUIRE(p.from_server.size() == 1);
    CHECK(p.from_server[0] ==
          R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: its $/weft/open's credit is not a non-negative number"},"id":1})");
  }
  // A grant keeps the whole part of its number (streams.txt).
  Pair p;
  serve_count(*p.server);
  p.server->receive(Item{Notification{"$/weft/open", json{{"id", 1}, {"credit", 2.5}}}});
  p.server->receive(Item{Request{Id::integer(1), "count", json{{"n", 2}}}});
  p.run();
  CHECK(p.from_server.size() == 3);  // two chunks and the answer
}

TEST_CASE("a flood of opens whose requests never come costs O(1) per open", "[stream][limits]") {
  // Every drop sweeps the older half at once: a flood of n opens past the
  // limit sweeps about 2n / max_in_flight times, not n.
  PeerLimits limits;
  limits.max_in_flight = 1000;
  std::size_t sweeps = 0;
  Pair p(limits, [&](PeerOptions& o, bool server) {
    if (server)
      o.diagnostic = [&](const Diagnostic& d) { sweeps += d.message.find("$/weft/open awaiting") != std::string::npos; };
  });
  serve_count(*p.server);
  for (int id = 0; id < 20000; ++id)
    p.server->receive(Item{Notification{"$/weft/open", json{{"id", id}, {"credit", 8}}}});
  CHECK(sweeps == 38);  // at 1,000 and then every 500
  Consumer c;
  REQUIRE(p.client->stream("count", json{{"n", 2}}, c.options(8), c.callback(), {}, 0).ok());
  p.run();
  REQUIRE(c.done);
  CHECK(c.chunks.size() == 2);
}

TEST_CASE("a chunk beyond the granted credit fails the call with -32600 and cancels it", "[stream][rules]") {
  weft::test::Loop l;
  Consumer c;
  auto id = l.peer->stream("s", std::nullopt, c.options(1), c.callback(), {}, 0);
  l.in(R"({"jsonrpc":"2.0","method":"$/weft/chunk","params":{"id":1,"seq":0,"value":"a"}})");
  CHECK(c.chunks.size() == 1);
  l.in(R"({"jsonrpc":"2.0","method":"$/weft/chunk","params":{"id":1,"seq":1,"value":"b"}})");
  REQUIRE(c.done);
  CHECK(c.done->error().code == code::kInvalidRequest);
  CHECK(c.done->error().message == "Invalid Request: stream: more chunks than granted");
  CHECK(l.sent.back() == R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})");
  CHECK(c.chunks.size() == 1);
  (void)id;
}

TEST_CASE("a chunk out of order fails the call", "[stream][rules]") {
  weft::test::Loop l;
  Consumer c;
  l.peer->stream("s", std::nullopt, c.options(4), c.callback(), {}, 0);
  l.in(R"({"jsonrpc":"2.0","method":"$/weft/chunk","params":{"id":1,"seq":1,"value":"b"}})");
  REQUIRE(c.done);
  CHECK(c.done->error().message == "Invalid Request: stream: chunk out of order (expected seq 0)");
}

TEST_CASE("a chunk after the final one fails the call", "[stream][rules]") {
  weft::test::Loop l;
  Consumer c;
  l.peer->stream("s", std::nullopt, c.options(4), c.callback(), {}, 0);
  l.in(R"({"jsonrpc":"2.0","method":"$/weft/chunk","params":{"id":1,"seq":0,"value":1,"final":true}})");
  l.in(R"({"jsonrpc":"2.0","method":"$/weft/chunk","params":{"id":1,"seq":1,"value":2}})");
  REQUIRE(c.done);
  CHECK(c.done->error().message == "Invalid Request: stream: a chunk after the final one");
}

TEST_CASE("a chunk for no pending stream is reported and dropped", "[stream][rules]") {
  weft::test::Loop l;
  l.in(R"({"jsonrpc":"2.0","method":"$/weft/chunk","params":{"id":9,"seq":0,"value":1}})");
  CHECK(l.sent.empty());
  REQUIRE(l.diags.size() == 1);
  CHECK(l.diags[0] == Diagnostic::Kind::UnknownResponse);
}

TEST_CASE("each chunk restarts a stream's timeout", "[stream][timeout]") {
  Pair p;
  Reply held;
  p.server->method("slow", MethodHandler([&](json, Reply r, const CallInfo&) { held = std::move(r); }));
  Consumer c;
  CallOptions opts;
  opts.timeout = 100;
  p.client->stream("slow", std::nullopt, c.options(8), c.callback(), opts, 0);
  p.run();
  p.now = 90;
  REQUIRE(held.write(1).ok());
  p.run();
  p.client->advance(150);  // 60 ms after the chunk: still alive
  CHECK_FALSE(c.done);
  p.client->advance(190);
  REQUIRE(c.done);
  CHECK(c.done->error().code == code::kTimeout);
}

TEST_CASE("progress reaches the caller only when it asked for it", "[progress]") {
  Pair p;
  p.server->method("work", MethodHandler([](json, Reply r, const CallInfo&) {
    r.progress(json{{"done", 1}});
    r.progress(json{{"done", 2}});
    r.ok("ok");
  }));
  std::vector<json> seen;
  Consumer plain, asked;
  p.client->call("work", std::nullopt, plain.callback(), {}, 0);
  p.run();
  CHECK(plain.done->value() == "ok");
  for (const auto& t : p.from_server) CHECK(t.find("$/progress") == std::string::npos);
  CHECK(p.discarded.size() == 2);  // the values nobody asked for

  CallOptions opts;
  opts.on_progress = [&](json v) { seen.push_back(std::move(v)); };
  p.client->call("work", std::nullopt, asked.callback(), opts, 0);
  p.run();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == json{{"done", 2}});
  CHECK(asked.done->value() == "ok");
  CHECK(std::find(p.from_server.begin(), p.from_server.end(),
                  R"({"jsonrpc":"2.0","method":"$/progress","params":{"token":2,"value":{"done":1}}})") !=
        p.from_server.end());
}

TEST_CASE("progress restarts the timeout only when asked to", "[progress][timeout]") {
  for (bool resets : {false, true}) {
    Pair p;
    Reply held;
    p.server->method("work", MethodHandler([&](json, Reply r, const CallInfo&) { held = std::move(r); }));
    Consumer c;
    CallOptions opts;
    opts.timeout = 100;
    opts.on_progress = [](json) {};
    opts.progress_resets_timeout = resets;
    p.client->call("work", std::nullopt, c.callback(), opts, 0);
    p.run();
    p.now = 80;
    held.progress(0.5);
    p.run();
    p.client->advance(120);
    CHECK(c.done.has_value() == !resets);
    p.client->advance(180);
    REQUIRE(c.done);
    CHECK(c.done->error().code == code::kTimeout);
  }
}

TEST_CASE("a client-role peer still takes chunks and progress for its calls", "[stream][roles]") {
  std::vector<std::string> sent;
  PeerOptions o;
  o.role = Role::Client;
  o.send = [&](Outgoing&& m) { write_json(m, sent.emplace_back()); };
  Peer peer(std::move(o));
  Consumer c;
  peer.stream("s", std::nullopt, c.options(4), c.callback(), {}, 0);
  Document d;
  d.value = json::parse(R"({"jsonrpc":"2.0","method":"$/weft/chunk","params":{"id":1,"seq":0,"value":7}})");
  peer.receive(std::move(d));
  REQUIRE(c.chunks.size() == 1);
  CHECK(c.chunks[0].value == 7);
}

namespace {
std::size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}
}  // namespace

TEST_CASE("1 GiB through a slow consumer keeps both sides' memory bounded", "[stream][memory]") {
  constexpr std::size_t kChunk = 64 * 1024, kChunks = 16 * 1024;  // 1 GiB
  constexpr std::uint32_t kCredit = 8;
  Pair p;
  p.record = false;
  std::size_t max_queued = 0;
  p.server->method("bytes", MethodHandler([&](json, Reply r, const CallInfo&) {
    struct Producer : std::enable_shared_from_this<Producer> {
      Reply reply;
      std::size_t next = 0;
      void go() {
        while (next < kChunks) {
          auto w = reply.write(json::binary(std::vector<std::uint8_t>(kChunk, std::uint8_t(next))));
          REQUIRE(w.ok());
          ++next;
          if (!*w) return reply.on_writable([self = shared_from_this()] { self->go(); });
        }
        reply.ok(next);
      }
    };
    auto prod = std::make_shared<Producer>();
    prod->reply = std::move(r);
    prod->go();
  }));
  std::size_t received = 0, in_hand = 0;
  std::optional<Result<json>> done;
  StreamOptions so;
  so.credit = kCredit;
  so.on_chunk = [&](Chunk&& c) {
    received += c.value.get_binary().size();
    ++in_hand;
  };
  auto id = p.client->stream("bytes", std::nullopt, so, [&](Result<json> r) { done = std::move(r); }, {}, 0);
  const std::size_t before = rss_bytes();
  std::size_t peak = before;
  // The slow consumer: it takes what arrived, then grants one chunk at a time.
  while (!done) {
    p.run();
    max_queued = std::max(max_queued, p.to_client.size());
    while (in_hand > 0) {
      --in_hand;
      p.client->grant(*id, 1);
    }
    peak = std::max(peak, rss_bytes());
  }
  REQUIRE(done->ok());
  CHECK(received == kChunk * kChunks);
  CHECK(max_queued <= kCredit);               // never more in flight than granted
  CHECK(peak - before < 64u * 1024 * 1024);   // bounded, far below the 1 GiB sent
}

TEST_CASE("chunk_size: the JSON codec's form of binary data counts as its bytes, as the binary value did",
          "[stream]") {
  std::vector<std::uint8_t> raw(1000);
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::uint8_t>(i % 256);
  const json bin = json::binary(raw);
  CHECK(chunk_size(bin) == 1000);
  // What a receiver decodes from the JSON codec's text for that value.
  const json form = json::parse(bin.dump());
  REQUIRE(form.is_object());
  CHECK(chunk_size(form) == 1000);
  CHECK(chunk_size(json{{"bytes", raw}, {"subtype", 7}}) == 1000);
  // Not that form: measured as any object (its strings count in full).
  CHECK(chunk_size(json{{"bytes", json::array({std::string(5000, 'x')})}, {"subtype", nullptr}}) > 5000);
  CHECK(chunk_size(json{{"bytes", json::array({256})}, {"subtype", nullptr}}) > 1);
  CHECK(chunk_size(json{{"bytes", raw}, {"subtype", nullptr}, {"more", 1}}) > 9000);
}
