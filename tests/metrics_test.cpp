// Per-response metrics (docs/protocol.md, "Metrics"): negotiated by
// rpc.handshake, measured by the serving side with the host's microsecond
// clock, exposed to the caller through CallOptions::on_metrics.
#include <catch2/catch.hpp>

#include "conn_pair.h"

using namespace weft;
using namespace weft::test;

namespace {

// A server that serves "metrics" with a clock the test moves, and a method
// "later" whose answer the test gives.
struct Metered {
  std::int64_t us = 1000;
  std::optional<Reply> held;
  ConnPair p;
  static ConnectionOptions server_options(CodecKind c, Metered* clock) {
    ConnectionOptions o = serving(Framing::Len32Be, c, {"streams", "metrics"});
    if (clock) o.clock_us = [clock] { return clock->us; };
    return o;
  }
  explicit Metered(CodecKind c = CodecKind::Json, bool clock = true)
      : p(plain(Framing::Len32Be, c), server_options(c, clock ? this : nullptr)) {
    p.server.peer().method("later", [this](json, Reply r, const CallInfo&) { held = std::move(r); });
    p.server.peer().method("echo", SyncHandler([](const json& v) -> Result<json> { return v; }));
  }
};

std::string response_text(Id id, json result) { return to_json_text(Response{std::move(id), std::move(result)}); }

}  // namespace

TEST_CASE("metrics: once agreed, an answer carries its processing time and its size without metrics",
          "[metrics]") {
  Metered m;
  auto agreed = m.p.handshake({"streams", "metrics"});
  REQUIRE(agreed.ok());
  CHECK(agreed->capabilities == std::vector<std::string>{"streams", "metrics"});

  std::optional<ResponseMetrics> got;
  json result;
  CallOptions o;
  o.on_metrics = [&](const ResponseMetrics& x) { got = x; };
  auto id = m.p.client.peer().call("later", json::array({1}), [&](Result<json> r) { result = r.value(); }, o, 0);
  REQUIRE(id.ok());
  m.p.pump();
  REQUIRE(m.held);
  m.us += 250;  // the handler takes 250 µs by the host's clock
  m.held->ok(json{{"answer", 42}});
  const std::string wire = m.p.server.wire.substr(4);  // after the len32 prefix
  m.p.pump();

  REQUIRE(got);
  CHECK(got->processing_time_us == 250);
  // response_size: the response as the codec encodes it without "metrics".
  const std::string bare = response_text(*id, json{{"answer", 42}});
  CHECK(got->response_size == bare.size());
  CHECK(wire == bare.substr(0, bare.size() - 1) + R"(,"metrics":{"processing_time_us":250,"response_size":)" +
                    std::to_string(bare.size()) + "}}");
  CHECK(result == json{{"answer", 42}});
}

TEST_CASE("metrics: error answers carry them too", "[metrics]") {
  Metered m;
  REQUIRE(m.p.handshake({"metrics"}).ok());
  std::optional<ResponseMetrics> got;
  CallOptions o;
  o.on_metrics = [&](const ResponseMetrics& x) { got = x; };
  REQUIRE(m.p.client.peer().call("nope", std::nullopt, [](Result<json>) {}, o, 0).ok());
  m.p.pump();
  REQUIRE(got);
  CHECK(got->processing_time_us == 0);
  CHECK(got->response_size > 0);
}

TEST_CASE("metrics: a caller that did not agree on metrics never gets them", "[metrics]") {
  SECTION("no handshake at all") {
    Metered m;
    bool called = false;
    CallOptions o;
    o.on_metrics = [&](const ResponseMetrics&) { called = true; };
    REQUIRE(m.p.client.peer().call("echo", json::array({1}), [](Result<json>) {}, o, 0).ok());
    m.p.server.conn->feed(m.p.client.take(), 0);
    CHECK(m.p.server.wire.find("metrics") == std::string::npos);
    m.p.pump();
    CHECK_FALSE(called);
  }
  SECTION("a handshake without \"metrics\"") {
    Metered m;
    auto agreed = m.p.handshake({"streams"});
    REQUIRE(agreed.ok());
    CHECK(agreed->capabilities == std::vector<std::string>{"streams"});
    REQUIRE(m.p.client.peer().call("echo", json::array({1}), [](Result<json>) {}, {}, 0).ok());
    m.p.server.conn->feed(m.p.client.take(), 0);
    CHECK(m.p.server.wire.find("metrics") == std::string::npos);
  }
}

TEST_CASE("metrics: a serving side without a microsecond clock does not agree on them", "[metrics]") {
  Metered m(CodecKind::Json, /*clock=*/false);
  auto agreed = m.p.handshake({"streams", "metrics"});
  REQUIRE(agreed.ok());
  CHECK(agreed->capabilities == std::vector<std::string>{"streams"});
}

TEST_CASE("metrics: the answer to rpc.handshake itself carries none", "[metrics]") {
  Metered m;
  Handshake mine;
  mine.capabilities = {"metrics"};
  REQUIRE(m.p.client.conn->handshake(mine, [](Result<Handshake>) {}, {}, 0).ok());
  m.p.server.conn->feed(m.p.client.take(), 0);
  CHECK(m.p.server.wire.find("processing_time_us") == std::string::npos);
}

TEST_CASE("metrics: in MessagePack, response_size is the bytes of the response without the member",
          "[metrics][msgpack]") {
  Metered m(CodecKind::MessagePack);
  REQUIRE(m.p.handshake({"metrics"}).ok());
  std::optional<ResponseMetrics> got;
  CallOptions o;
  o.on_metrics = [&](const ResponseMetrics& x) { got = x; };
  auto id = m.p.client.peer().call("echo", json::array({"abc"}), [](Result<json>) {}, o, 0);
  REQUIRE(id.ok());
  m.p.pump();
  REQUIRE(got);
  std::string bare;
  Outgoing out;
  out.messages.emplace_back(Response{*id, json::array({"abc"})});
  REQUIRE(make_codec(CodecKind::MessagePack)->encode(out, bare));
  CHECK(got->response_size == bare.size());
}

TEST_CASE("metrics: each answer of a batch carries its own", "[metrics]") {
  Metered m;
  REQUIRE(m.p.handshake({"metrics"}).ok());
  std::vector<ResponseMetrics> got;
  // A batch from the wire: the caller side here is raw JSON text.
  const std::string batch = R"([{"jsonrpc":"2.0","method":"echo","params":[1],"id":7},)"
                            R"({"jsonrpc":"2.0","method":"echo","params":[22],"id":8}])";
  std::string frame;
  encode_frame(Framing::Len32Be, batch, frame);
  m.p.server.conn->feed(frame, 0);
  const std::string wire = m.p.server.take().substr(4);
  CHECK(wire == R"([{"jsonrpc":"2.0","result":[1],"id":7,"metrics":{"processing_time_us":0,"response_size":37}},)"
                R"({"jsonrpc":"2.0","result":[22],"id":8,"metrics":{"processing_time_us":0,"response_size":38}}])");
}

TEST_CASE("metrics: a malformed metrics member is ignored and the response still settles", "[metrics]") {
  ConnEnd client(plain(Framing::Ndjson, CodecKind::Json));
  bool called = false;
  json result;
  CallOptions o;
  o.on_metrics = [&](const ResponseMetrics&) { called = true; };
  REQUIRE(client.peer().call("x", std::nullopt, [&](Result<json> r) { result = r.value(); }, o, 0).ok());
  client.conn->feed(R"({"jsonrpc":"2.0","result":5,"id":1,"metrics":{"processing_time_us":-1,"response_size":"big"}})"
                    "\n",
                    0);
  CHECK(result == 5);
  CHECK_FALSE(called);
  CHECK(client.diags.empty());
}

TEST_CASE("metrics: each call of an outgoing batch gets its own, just before its completion", "[metrics]") {
  Metered m;
  REQUIRE(m.p.handshake({"metrics"}).ok());
  std::vector<std::string> events;
  auto note = [&](std::string who) {
    return [&events, who](const ResponseMetrics& x) {
      events.push_back(who + " metrics " + std::to_string(x.response_size));
    };
  };
  std::vector<BatchEntry> entries(3);
  entries[0].method = "echo";
  entries[0].params = json::array({1});
  entries[0].done = [&](Result<json>) { events.push_back("first done"); };
  entries[0].on_metrics = note("first");  // its own
  entries[1].method = "echo";
  entries[1].params = json::array({"note"});  // a notification: no answer, no metrics
  entries[2].method = "echo";
  entries[2].params = json::array({22});
  entries[2].done = [&](Result<json>) { events.push_back("third done"); };
  CallOptions o;
  o.on_metrics = note("batch");  // for entries without their own
  REQUIRE(m.p.client.peer().batch(std::move(entries), o, 0).ok());
  m.p.pump();
  // {"jsonrpc":"2.0","result":[1],"id":2} and …[22],"id":3}: 37 and 38 bytes.
  CHECK(events == std::vector<std::string>{"first metrics 37", "first done", "batch metrics 38", "third done"});
}
