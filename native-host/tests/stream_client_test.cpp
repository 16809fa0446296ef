// Streamed calls on the native host (docs/streams.md, "Native host"): the
// Client's callback API and credit, BlockingClient's pull API, the `bytes`
// builtin serving a stream, binary chunks on each codec, cancellation, and
// the size limits (max_stream_chunk, max_response, max_request). Servers run
// in this process on their own thread; the client on the test's thread.
// (1 GiB against a slow consumer, two processes: stream_memory_test.cpp.)
#include <catch2/catch.hpp>

#include "weft/host/host.h"

#include "client_test_support.h"

using weft::Chunk;
using weft::json;
using weft::host::BlockingClient;
using weft::host::Client;
using weft::host::Outcome;
using weft::host::StreamPolicy;
using S = weft::host::Outcome::Status;

namespace {

// A server of `bytes`, `echo` and `tables` (its connection's in-flight
// requests, read on the server's own thread) over `codec`.
struct BytesServer {
  TempDir dir;
  std::string address;
  Running srv;
  explicit BytesServer(weft::CodecKind codec = weft::CodecKind::MessagePack,
                       weft::host::ServerOptions so = quiet_server())
      : srv([&] {
          so.codec = codec;
          return so;
        }()) {
    srv.server.on_peer([](weft::Peer& p) {
      weft::host::register_bytes(p);
      p.method("echo", weft::SyncHandler([](const json& v) -> weft::Result<json> { return v; }));
      // Writes one chunk of `n` bytes and answers what the write said.
      p.method("chunk_of", weft::MethodHandler([](json n, weft::Reply reply, const weft::CallInfo&) {
                 auto w = reply.write(json(std::string(n.at(0).get<std::size_t>(), 'x')));
                 if (!w) return reply.error(w.error());
                 reply.ok(json("written"));
               }));
      weft::Peer* peer = &p;
      p.method("tables", weft::SyncHandler([peer](const json&) -> weft::Result<json> {
                 // This call itself is not counted: a sync handler is not in flight.
                 return json{{"in_flight", peer->in_flight()}, {"pending", peer->pending()}};
               }));
    });
    address = srv.serve_unix(dir.path + "/s.sock");
  }
  ClientConfig config(weft::CodecKind codec = weft::CodecKind::MessagePack) const {
    ClientConfig c = client_test::config(address);
    c.codec = codec;
    return c;
  }
};

json bytes_params(std::uint64_t count, std::uint64_t size) { return json{{"count", count}, {"size", size}}; }

// Calls `method` and runs the loop until it is answered.
Outcome call(boost::asio::io_context& io, Client& c, const std::string& method, json params = json::object()) {
  std::optional<Outcome> out;
  c.call(method, std::move(params), {.timeout = 10000}, [&](Outcome o) { out = std::move(o); });
  run_until(io, [&] { return out.has_value(); });
  REQUIRE(out);
  return *out;
}

}  // namespace

TEST_CASE("a stream's chunks arrive in order with seq, final and total, then its result") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  std::vector<Chunk> got;
  std::optional<Outcome> done;
  client.stream("bytes", bytes_params(100, 10), {}, [&](Chunk&& c) { got.push_back(std::move(c)); },
                [&](Outcome o) {
                  CHECK(got.size() == 100);  // the answer follows the last chunk
                  done = std::move(o);
                });
  run_until(io, [&] { return done.has_value(); });
  REQUIRE(done->ok());
  CHECK(done->result == json{{"chunks", 100}, {"bytes", 1000}});
  REQUIRE(got.size() == 100);
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].seq == i);
    CHECK(got[i].final == (i == 99));
    CHECK(got[i].total == std::optional<std::uint64_t>(100));
  }
}

TEST_CASE("a binary chunk travels as MessagePack bin and arrives as binary") {
  BytesServer s(weft::CodecKind::MessagePack);
  boost::asio::io_context io;
  Client client(io, s.config(weft::CodecKind::MessagePack));
  std::vector<json> values;
  std::optional<Outcome> done;
  client.stream("bytes", bytes_params(3, 5), {}, [&](Chunk&& c) { values.push_back(std::move(c.value)); },
                [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return done.has_value(); });
  REQUIRE(done->ok());
  REQUIRE(values.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    REQUIRE(values[k].is_binary());
    const std::vector<std::uint8_t>& b = values[k].get_binary();
    CHECK(b == std::vector<std::uint8_t>(5, static_cast<std::uint8_t>(k)));
  }
}

TEST_CASE("on the JSON codec a binary chunk arrives as the object {bytes, subtype}") {
  BytesServer s(weft::CodecKind::Json);
  boost::asio::io_context io;
  Client client(io, s.config(weft::CodecKind::Json));
  std::vector<json> values;
  std::optional<Outcome> done;
  client.stream("bytes", bytes_params(2, 3), {}, [&](Chunk&& c) { values.push_back(std::move(c.value)); },
                [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return done.has_value(); });
  REQUIRE(done->ok());
  REQUIRE(values.size() == 2);
  CHECK(values[1] == json::parse(R"({"bytes":[1,1,1],"subtype":null})"));
}

TEST_CASE("the server sends no more than the credit beyond what was granted") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  std::size_t got = 0;
  std::optional<Outcome> done;
  StreamPolicy p;
  p.credit = 4;
  p.auto_grant = false;
  const auto id = client.stream("bytes", bytes_params(10, 8), p, [&](Chunk&&) { ++got; },
                                [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return got == 4; });
  // An answer sent after the chunks would arrive after them: none came.
  REQUIRE(call(io, client, "rpc.ping").ok());
  CHECK(got == 4);
  CHECK_FALSE(done);
  REQUIRE(client.grant(id, 3));
  run_until(io, [&] { return got == 7; });
  REQUIRE(call(io, client, "rpc.ping").ok());
  CHECK(got == 7);
  REQUIRE(client.grant(id, 3));
  run_until(io, [&] { return done.has_value(); });
  CHECK(got == 10);
  REQUIRE(done->ok());
  CHECK_FALSE(client.grant(id, 1));  // settled: not a stream on the wire any more
}

TEST_CASE("pause stops the server once its credit is spent; resume lets the stream finish") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  std::size_t got = 0;
  std::optional<Outcome> done;
  weft::host::CallId id = 0;
  StreamPolicy p;
  p.credit = 8;
  id = client.stream("bytes", bytes_params(100, 8), p,
                     [&](Chunk&&) {
                       if (++got == 20) client.pause(id);
                     },
                     [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return got >= 20; });
  REQUIRE(call(io, client, "rpc.ping").ok());
  const std::size_t at_pause = got;
  CHECK(at_pause <= 20 + 8);  // at most the credit beyond the pause
  REQUIRE(call(io, client, "rpc.ping").ok());
  CHECK(got == at_pause);  // stopped, not just slow
  CHECK_FALSE(done);
  REQUIRE(client.resume(id));
  run_until(io, [&] { return done.has_value(); });
  REQUIRE(done->ok());
  CHECK(got == 100);
}

TEST_CASE("cancel mid-stream: -32800 once, no chunk after it, and the server's tables are empty") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  std::size_t got = 0, after = 0;
  std::optional<Outcome> done;
  weft::host::CallId id = 0;
  id = client.stream("bytes", bytes_params(1u << 20, 1024), {},
                     [&](Chunk&&) {
                       if (done) ++after;
                       if (++got == 50) client.cancel(id);
                     },
                     [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return done.has_value(); });
  CHECK(done->status == S::Cancelled);
  CHECK(done->error.code == weft::code::kRequestCancelled);
  // The server's answers come in order: once this is in, the cancel was seen.
  Outcome t = call(io, client, "tables");
  REQUIRE(t.ok());
  CHECK(t.result == json{{"in_flight", 0}, {"pending", 0}});
  CHECK(after == 0);
  CHECK(got == 50);
  CHECK(client.pending() == 0);
}

TEST_CASE("a stream's timeout is silence: a consumer that grants nothing times out with -32001") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  std::size_t got = 0;
  std::optional<Outcome> done;
  StreamPolicy p;
  p.credit = 2;
  p.auto_grant = false;
  p.timeout = 300;
  client.stream("bytes", bytes_params(10, 8), p, [&](Chunk&&) { ++got; }, [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return done.has_value(); });
  CHECK(done->status == S::Timeout);
  CHECK(done->error.code == weft::code::kTimeout);
  CHECK(got == 2);
  Outcome t = call(io, client, "tables");
  CHECK(t.result["in_flight"] == 0);  // the server was told to stop
}

TEST_CASE("bytes called without a stream is -32600 naming how to call it") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  Outcome o = call(io, client, "bytes", bytes_params(1, 1));
  CHECK(o.error.code == weft::code::kInvalidRequest);
  CHECK_THAT(o.error.message, Catch::Contains("--stream"));
}

TEST_CASE("a chunk over max_stream_chunk: the writer gets -32600, nothing is sent") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  std::size_t got = 0;
  std::optional<Outcome> done;
  client.stream("chunk_of", json::array({1000u * 1000u + 1}), {}, [&](Chunk&&) { ++got; },
                [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return done.has_value(); });
  CHECK(done->status == S::RemoteError);
  CHECK(done->error.code == weft::code::kInvalidRequest);
  CHECK_THAT(done->error.message, Catch::Contains("larger than max_stream_chunk (1000000 bytes)"));
  CHECK(got == 0);
}

TEST_CASE("bytes refuses a size over max_stream_chunk with -32602 before allocating it") {
  BytesServer s;
  boost::asio::io_context io;
  Client client(io, s.config());
  std::optional<Outcome> done;
  client.stream("bytes", bytes_params(1, std::uint64_t{1} << 32), {}, [](Chunk&&) {},
                [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return done.has_value(); });
  CHECK(done->error.code == weft::code::kInvalidParams);
  CHECK(done->error.message == "Invalid params: size must be an integer from 0 to 1000000 (max_stream_chunk)");
}

TEST_CASE("a received chunk over max_stream_chunk fails the stream with -32600") {
  BytesServer s;
  boost::asio::io_context io;
  ClientConfig cfg = s.config();
  cfg.peer_limits.max_stream_chunk = 100;
  Client client(io, cfg);
  std::size_t got = 0;
  std::optional<Outcome> done;
  client.stream("bytes", bytes_params(3, 101), {}, [&](Chunk&&) { ++got; }, [&](Outcome o) { done = std::move(o); });
  run_until(io, [&] { return done.has_value(); });
  CHECK(done->error.code == weft::code::kInvalidRequest);
  CHECK_THAT(done->error.message, Catch::Contains("Invalid Request: stream: a chunk larger than max_stream_chunk (100 bytes)"));
  CHECK(got == 0);
  CHECK(call(io, client, "tables").result["in_flight"] == 0);  // and the server was told to stop
}

TEST_CASE("a result over max_response is answered -32603 naming its size") {
  weft::host::ServerOptions so = quiet_server();
  so.max_response = 1000;
  BytesServer s(weft::CodecKind::Json, so);
  boost::asio::io_context io;
  Client client(io, s.config(weft::CodecKind::Json));
  Outcome small = call(io, client, "echo", json::array({std::string(100, 'x')}));
  CHECK(small.ok());
  Outcome o = call(io, client, "echo", json::array({std::string(2000, 'x')}));
  CHECK(o.status == S::RemoteError);
  CHECK(o.error.code == weft::code::kInternalError);
  CHECK_THAT(o.error.message, Catch::Contains("over max_response (1000)"));
}

TEST_CASE("a request over max_request is not sent: its call fails at once naming its size") {
  BytesServer s(weft::CodecKind::Json);
  boost::asio::io_context io;
  ClientConfig cfg = s.config(weft::CodecKind::Json);
  cfg.max_request = 1000;
  Client client(io, cfg);
  Outcome o = call(io, client, "echo", json::array({std::string(2000, 'x')}));
  CHECK(o.error.code == weft::code::kClosed);
  CHECK_THAT(o.error.message, Catch::Contains("over max_request (1000)"));
  CHECK(call(io, client, "echo", json::array({1})).ok());  // the connection goes on
}

TEST_CASE("the limits' defaults: 1,000 in flight, 10 MB requests, 100 MB responses, 1 MB chunks") {
  weft::host::ServerOptions so;
  weft::host::ClientConfig cc;
  CHECK(so.peer_limits.max_in_flight == 1000);
  CHECK(so.framing_limits.max_frame == 10u * 1000u * 1000u);
  CHECK(so.max_response == 100u * 1000u * 1000u);
  CHECK(cc.framing_limits.max_frame == 100u * 1000u * 1000u);
  CHECK(cc.max_request == 10u * 1000u * 1000u);
  CHECK(so.peer_limits.max_stream_chunk == 1000u * 1000u);
}

TEST_CASE("BlockingClient::stream: next() pulls each chunk, then the outcome") {
  BytesServer s;
  BlockingClient bc(s.config());
  auto st = bc.stream("bytes", bytes_params(1000, 16));
  std::uint64_t n = 0;
  while (auto c = st.next()) {
    REQUIRE(c->seq == n);
    REQUIRE(c->value.get_binary().size() == 16);
    ++n;
  }
  CHECK(n == 1000);
  REQUIRE(st.outcome().ok());
  CHECK(st.outcome().result == json{{"chunks", 1000}, {"bytes", 16000}});
}

TEST_CASE("BlockingClient::stream: destroying an unfinished stream cancels its call") {
  BytesServer s;
  BlockingClient bc(s.config());
  {
    StreamPolicy p;
    p.credit = 8;
    auto st = bc.stream("bytes", bytes_params(1000, 16), p);
    for (int i = 0; i < 3; ++i) REQUIRE(st.next());
  }
  Outcome t = bc.call("tables", std::nullopt);
  REQUIRE(t.ok());
  CHECK(t.result["in_flight"] == 0);
  CHECK(bc.client().pending() == 0);
}
