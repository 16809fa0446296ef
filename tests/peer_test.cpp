// Peer rules that need code rather than a vector: Reply lifetime, limits,
// re-entrancy, outgoing batches, deadlines.
#include <catch2/catch.hpp>

#include "demo.h"
#include "weft/weft.h"
#include "peer_loop.h"

using namespace weft;

using weft::test::Loop;

TEST_CASE("a Reply dropped unanswered answers -32603", "[peer]") {
  Loop l;
  l.peer->method("drop", MethodHandler([](json, Reply, const CallInfo&) {}));
  l.in(R"({"jsonrpc":"2.0","method":"drop","id":1})");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] ==
        R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: request dropped without a reply"},"id":1})");
  CHECK(l.peer->in_flight() == 0);
}

TEST_CASE("a DeferrableHandler answers now, or later through the Reply it takes; nothing taken and nothing returned is -32603", "[peer]") {
  Loop l;
  Reply held;
  l.peer->method("now", DeferrableHandler([](json& p, Deferral&, const CallInfo&) -> std::optional<Result<json>> {
    return Result<json>(p["a"].get<int>() + 1);
  }));
  l.peer->method("later", DeferrableHandler([&](json&, Deferral& d, const CallInfo&) -> std::optional<Result<json>> {
    held = d.reply();
    CHECK(d.taken());
    CHECK(d.reply().done());  // taken once
    return std::nullopt;
  }));
  l.peer->method("none", DeferrableHandler([](json&, Deferral&, const CallInfo&) -> std::optional<Result<json>> {
    return std::nullopt;
  }));
  l.in(R"({"jsonrpc":"2.0","method":"now","params":{"a":1},"id":1})");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","result":2,"id":1})");
  CHECK(l.peer->in_flight() == 0);
  l.in(R"({"jsonrpc":"2.0","method":"later","id":2})");
  CHECK(l.sent.size() == 1);
  CHECK(l.peer->in_flight() == 1);
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}})");  // taken: cancellable
  REQUIRE(l.sent.size() == 2);
  CHECK(l.sent[1] == R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":2})");
  CHECK(held.cancelled());
  l.in(R"({"jsonrpc":"2.0","method":"none","id":3})");
  REQUIRE(l.sent.size() == 3);
  CHECK(l.sent[2] ==
        R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: request dropped without a reply"},"id":3})");
}

TEST_CASE("a Reply that outlives its Peer is inert", "[peer]") {
  Reply kept;
  {
    Loop l;
    l.peer->method("keep", MethodHandler([&](json, Reply r, const CallInfo&) { kept = std::move(r); }));
    l.in(R"({"jsonrpc":"2.0","method":"keep","id":1})");
    CHECK(l.peer->in_flight() == 1);
  }
  CHECK(kept.cancelled());
  kept.ok(1);  // must not crash or send anything
  CHECK(kept.done());
}

TEST_CASE("a second answer from the same Reply is ignored", "[peer]") {
  Loop l;
  l.peer->method("twice", MethodHandler([](json, Reply r, const CallInfo&) {
    r.ok(1);
    r.ok(2);
    r.error(Error(code::kServerError, "x"));
  }));
  l.in(R"({"jsonrpc":"2.0","method":"twice","id":1})");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","result":1,"id":1})");
}

TEST_CASE("a cancelled request is answered -32800 at once; a later answer is dropped", "[peer][cancel]") {
  Loop l;
  Reply held;
  std::vector<std::string> dropped;
  l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) { held = std::move(r); }));
  l.in(R"({"jsonrpc":"2.0","method":"hold","id":"h"})");
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"h"}})");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"h"})");
  CHECK(held.cancelled());
  CHECK(l.peer->in_flight() == 0);
  bool ran = false;
  held.on_cancel([&] { ran = true; });  // registered after the fact: runs at once
  CHECK(ran);
  held.ok("finished anyway");
  CHECK(l.sent.size() == 1);
}

TEST_CASE("an answer given from on_cancel replaces the core's -32800", "[peer][cancel]") {
  Loop l;
  Reply held;
  l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) {
    held = std::move(r);
    held.on_cancel([&] { held.ok("partial"); });
  }));
  l.in(R"({"jsonrpc":"2.0","method":"hold","id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","result":"partial","id":1})");
}

#if defined(__cpp_exceptions)
TEST_CASE("a handler that throws is answered -32603, not unwound through the peer", "[peer]") {
  Loop l;
  l.peer->method("boom", SyncHandler([](const json&) -> Result<json> { throw std::runtime_error("kaput"); }));
  l.in(R"({"jsonrpc":"2.0","method":"boom","id":1})");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: kaput"},"id":1})");
}
#endif

TEST_CASE("the in-flight limit answers -32003 and frees up as answers leave", "[peer][limits]") {
  PeerLimits lim;
  lim.max_in_flight = 2;
  Loop l(lim);
  std::vector<Reply> held;
  l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) { held.push_back(std::move(r)); }));
  for (int i = 1; i <= 3; ++i) l.in(R"({"jsonrpc":"2.0","method":"hold","id":)" + std::to_string(i) + "}");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] ==
        R"j({"jsonrpc":"2.0","error":{"code":-32003,"message":"Too many requests in flight (limit 2)"},"id":3})j");
  held[0].ok(0);
  l.in(R"({"jsonrpc":"2.0","method":"hold","id":4})");
  CHECK(l.peer->in_flight() == 2);
  CHECK(l.sent.size() == 2);
}

TEST_CASE("the pending limit fails a call with -32003 without sending it", "[peer][limits]") {
  PeerLimits lim;
  lim.max_pending = 1;
  Loop l(lim);
  REQUIRE(l.peer->call("a", std::nullopt, {}, {}, 0).ok());
  auto r = l.peer->call("b", std::nullopt, {}, {}, 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kOverloaded);
  CHECK(l.sent.size() == 1);
}

TEST_CASE("a batch over the batch limit answers each call -32600 with its id", "[peer][limits]") {
  PeerLimits lim;
  lim.max_batch = 2;
  Loop l(lim);
  register_demo_methods(*l.peer);
  l.in(R"([{"jsonrpc":"2.0","method":"echo","id":1},{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","method":"echo","id":3}])");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] ==
        R"([{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch of 3 messages exceeds the limit of 2"},"id":1},)"
        R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch of 3 messages exceeds the limit of 2"},"id":3}])");
}

TEST_CASE("a client peer ignores the calls of an over-long batch as it ignores any call", "[peer][limits]") {
  Loop l([](PeerOptions& o) {
    o.role = Role::Client;
    o.limits.max_batch = 2;
  });
  for (const std::size_t n : {2u, 3u, 4u}) {
    std::string batch = "[";
    for (std::size_t i = 0; i < n; ++i) batch += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","method":"a","id":1})";
    l.in(batch + "]");
    CHECK(l.sent.empty());
  }
}

TEST_CASE("a batch classified with another limit is held to the peer's own", "[peer][limits]") {
  PeerLimits lim;
  lim.max_batch = 2;
  Loop l(lim);
  register_demo_methods(*l.peer);
  Document d;
  d.value = json::parse(R"([{"jsonrpc":"2.0","method":"echo","id":1},{"jsonrpc":"2.0","method":"echo","id":2},{"jsonrpc":"2.0","method":"echo","id":3}])");
  l.peer->receive(classify(std::move(d)));  // classify's own default limit is 65,536
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0].find("batch of 3 messages exceeds the limit of 2") != std::string::npos);
  CHECK(l.sent[0].find(R"("id":3)") != std::string::npos);
}

TEST_CASE("calls after close fail with -32002 and send nothing", "[peer]") {
  Loop l;
  l.peer->close();
  auto r = l.peer->call("a", std::nullopt, {}, {}, 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kClosed);
  CHECK_FALSE(l.peer->notify("n", std::nullopt).ok());
  CHECK(l.sent.empty());
}

TEST_CASE("close fails pending calls with the reason given", "[peer]") {
  Loop l;
  std::optional<Error> got;
  REQUIRE(l.peer->call("a", std::nullopt, [&](Result<json> r) { got = r.error(); }, {}, 0).ok());
  l.peer->close(Error(code::kClosed, "transport closed: worker terminated"));
  REQUIRE(got);
  CHECK(got->message == "transport closed: worker terminated");
  l.peer->close();  // idempotent
}

TEST_CASE("call refuses params that are neither array nor object", "[peer]") {
  Loop l;
  auto r = l.peer->call("a", json(5), {}, {}, 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kInvalidParams);
  CHECK(l.sent.empty());
}

// JSON-RPC 2.0 §4: "method" is a String; the empty string is one. The
// caller's side accepts what the serving side serves.
TEST_CASE("the empty string is a method name on both sides", "[peer]") {
  Loop l;
  l.peer->method("", SyncHandler([](const json&) -> Result<json> { return json("served"); }));
  std::string got;
  auto id = l.peer->call("", std::nullopt, [&](Result<json> r) { got = r.value().get<std::string>(); }, {}, 0);
  REQUIRE(id.ok());
  REQUIRE(l.peer->notify("", json::array()).ok());
  std::vector<BatchEntry> entries;
  entries.push_back({"", std::nullopt, [](Result<json>) {}});
  REQUIRE(l.peer->batch(std::move(entries), {}, 0).ok());
  REQUIRE(l.sent.size() == 3);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","method":"","id":1})");
  CHECK(l.sent[1] == R"({"jsonrpc":"2.0","method":"","params":[]})");
  CHECK(l.sent[2] == R"([{"jsonrpc":"2.0","method":"","id":2}])");
  l.in(R"({"jsonrpc":"2.0","method":"","id":"s"})");
  CHECK(l.sent.back() == R"({"jsonrpc":"2.0","result":"served","id":"s"})");
  l.in(R"({"jsonrpc":"2.0","result":"back","id":1})");
  CHECK(got == "back");
}

TEST_CASE("an outgoing batch is one array and each call settles on its own", "[peer][batch]") {
  Loop l;
  std::vector<std::string> got;
  std::vector<BatchEntry> entries;
  entries.push_back({"a", json::array({1}), [&](Result<json> r) { got.push_back("a:" + r.value().dump()); }});
  entries.push_back({"note", json::object(), {}});
  entries.push_back({"b", std::nullopt, [&](Result<json> r) { got.push_back("b:" + r.error().message); }});
  auto ids = l.peer->batch(std::move(entries), {}, 0);
  REQUIRE(ids.ok());
  REQUIRE(ids->size() == 2);
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] ==
        R"([{"jsonrpc":"2.0","method":"a","params":[1],"id":1},{"jsonrpc":"2.0","method":"note","params":{}},{"jsonrpc":"2.0","method":"b","id":2}])");
  l.in(R"([{"jsonrpc":"2.0","error":{"code":-32601,"message":"nope"},"id":2},{"jsonrpc":"2.0","result":10,"id":1}])");
  CHECK(got == std::vector<std::string>{"b:nope", "a:10"});
  CHECK(l.peer->pending() == 0);
}

TEST_CASE("an empty outgoing batch is refused", "[peer][batch]") {
  Loop l;
  auto r = l.peer->batch({}, {}, 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kInvalidRequest);
}

TEST_CASE("an outgoing batch with an entry that cannot be sent is refused whole, naming the entry", "[peer][batch]") {
  Loop l;
  std::vector<BatchEntry> entries(2);
  entries[0].method = "save";
  entries[0].params = json::array({1});
  entries[0].done = [](Result<json>) {};
  entries[1].method = "save";
  entries[1].params = json(7);
  entries[1].done = [](Result<json>) {};
  auto r = l.peer->batch(std::move(entries), {}, 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kInvalidParams);
  CHECK(r.error().message == "Invalid params: batch entry 1 (save): params must be an array or an object");
  CHECK(l.sent.empty());
  CHECK(l.peer->pending() == 0);
}

TEST_CASE("next_deadline is the earliest timeout and the default applies", "[peer][time]") {
  Loop l({}, 1000);
  CHECK_FALSE(l.peer->next_deadline());
  REQUIRE(l.peer->call("a", std::nullopt, {}, {}, 100).ok());           // default: 1100
  REQUIRE(l.peer->call("b", std::nullopt, {}, CallOptions{50}, 200).ok());  // 250
  CHECK(l.peer->next_deadline() == 250);
  l.peer->advance(250);
  CHECK(l.peer->next_deadline() == 1100);
  l.peer->advance(5000);
  CHECK_FALSE(l.peer->next_deadline());
  CHECK(l.peer->pending() == 0);
}

TEST_CASE("no_timeout overrides the default timeout for one call", "[peer][time]") {
  Loop l({}, 1000);
  CallOptions forever;
  forever.no_timeout = true;
  REQUIRE(l.peer->call("a", std::nullopt, {}, forever, 0).ok());
  CHECK_FALSE(l.peer->next_deadline());
  l.peer->advance(1000000);
  CHECK(l.peer->pending() == 1);
}

TEST_CASE("a handler may call out and answer when that call settles", "[peer][reentrancy]") {
  Loop l;
  l.peer->method("relay", MethodHandler([&](json p, Reply r, const CallInfo&) {
    auto reply = std::make_shared<Reply>(std::move(r));
    auto c = l.peer->call("upstream", p, [reply](Result<json> res) { reply->respond(std::move(res)); }, {}, 0);
    REQUIRE(c.ok());
  }));
  l.in(R"({"jsonrpc":"2.0","method":"relay","params":[7],"id":"x"})");
  REQUIRE(l.sent.size() == 1);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","method":"upstream","params":[7],"id":1})");
  l.in(R"({"jsonrpc":"2.0","result":49,"id":1})");
  REQUIRE(l.sent.size() == 2);
  CHECK(l.sent[1] == R"({"jsonrpc":"2.0","result":49,"id":"x"})");
}

TEST_CASE("a call settled synchronously inside send still completes once", "[peer][reentrancy]") {
  // A loopback transport that answers while the request is being sent.
  int settled = 0;
  Peer* self = nullptr;
  PeerOptions o;
  o.send = [&](Outgoing&& m) {
    if (auto* rq = std::get_if<Request>(&m.messages[0])) {
      Document d;
      d.value = json{{"jsonrpc", "2.0"}, {"result", 1}, {"id", rq->id.as_int()}};
      self->receive(d);
    }
  };
  Peer p(std::move(o));
  self = &p;
  REQUIRE(p.call("x", std::nullopt, [&](Result<json> r) { settled += r.ok(); }, {}, 0).ok());
  CHECK(settled == 1);
  CHECK(p.pending() == 0);
}

TEST_CASE("ParamSpec can require names or positions", "[peer][params]") {
  Loop l;
  ParamSpec named;
  named.params = {{"x", ParamType::Integer}};
  named.by_position = false;
  l.peer->method("n", SyncHandler([](const json& p) -> Result<json> { return p["x"]; }), named);
  l.in(R"({"jsonrpc":"2.0","method":"n","params":[1],"id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"n","params":{"x":2},"id":2})");
  l.in(R"({"jsonrpc":"2.0","method":"n","params":{"x":2.5},"id":3})");
  REQUIRE(l.sent.size() == 3);
  CHECK(l.sent[0] ==
        R"j({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: parameters must be given by name (an object)"},"id":1})j");
  CHECK(l.sent[1] == R"({"jsonrpc":"2.0","result":2,"id":2})");
  CHECK(l.sent[2] ==
        R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \"x\" must be an integer, got a number"},"id":3})");
}

TEST_CASE("positional arguments reach the handler by name", "[peer][params]") {
  Loop l;
  ParamSpec spec;
  spec.params = {{"a", ParamType::String}, {"b", ParamType::Any, false}};
  json seen;
  l.peer->method("f", SyncHandler([&](const json& p) -> Result<json> { seen = p; return json(nullptr); }), spec);
  l.in(R"({"jsonrpc":"2.0","method":"f","params":["s"],"id":1})");
  CHECK(seen == json{{"a", "s"}});
}

TEST_CASE("methods() lists registrations by name for discovery", "[peer]") {
  Loop l;
  register_demo_methods(*l.peer);
  l.peer->notification("log", [](const json&) {});
  auto ms = l.peer->methods();
  std::vector<std::string> names;
  for (auto& m : ms) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"add", "echo", "fail", "get_data", "log", "notify_hello",
                                          "notify_sum", "subtract", "sum", "update"});
  CHECK(ms[7].spec.has_value());
  CHECK(ms[4].notification);
  CHECK_FALSE(ms[5].notification);
  CHECK(l.peer->remove("echo"));
  CHECK_FALSE(l.peer->remove("echo"));
}

TEST_CASE("cancel of an unknown id is false and sends nothing", "[peer]") {
  Loop l;
  CHECK_FALSE(l.peer->cancel(Id::integer(5)));
  CHECK(l.sent.empty());
}

TEST_CASE("Id equality follows type and value", "[message]") {
  CHECK(Id::integer(1) == Id::number("1"));
  CHECK_FALSE(Id::integer(1) == Id::string("1"));
  CHECK(Id::unsigned_integer(5) == Id::integer(5));
  CHECK(Id::number("18446744073709551615").kind() == Id::Kind::Uint);
  CHECK(Id::number("1.0").kind() == Id::Kind::Number);
  CHECK(Id::number("1.0").to_string() == "1.0");
  CHECK_FALSE(Id::from_json(json::array()).has_value());
  CHECK(Id::null() == Id());
}

// dispatch remembers the registration it found last (PeerState::last_method):
// a replacement, a removal or another method in between must not leave it stale.
TEST_CASE("each call runs the method registered under its name at that time", "[peer]") {
  Loop l;
  auto answer = [](std::string v) { return SyncHandler([v](const json&) -> Result<json> { return json(v); }); };
  l.peer->method("a", answer("a1"));
  l.peer->method("b", answer("b1"));
  l.in(R"({"jsonrpc":"2.0","method":"a","id":1})");
  l.peer->method("a", answer("a2"));
  l.in(R"({"jsonrpc":"2.0","method":"a","id":2})");
  l.in(R"({"jsonrpc":"2.0","method":"b","id":3})");
  l.in(R"({"jsonrpc":"2.0","method":"a","id":4})");
  CHECK(l.peer->remove("a"));
  l.in(R"({"jsonrpc":"2.0","method":"a","id":5})");
  for (int i = 0; i < 64; ++i) l.peer->method("m" + std::to_string(i), answer("m"));  // rehashes
  l.peer->method("a", answer("a3"));
  l.in(R"({"jsonrpc":"2.0","method":"b","id":6})");
  l.in(R"({"jsonrpc":"2.0","method":"a","id":7})");
  REQUIRE(l.sent.size() == 7);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","result":"a1","id":1})");
  CHECK(l.sent[1] == R"({"jsonrpc":"2.0","result":"a2","id":2})");
  CHECK(l.sent[2] == R"({"jsonrpc":"2.0","result":"b1","id":3})");
  CHECK(l.sent[3] == R"({"jsonrpc":"2.0","result":"a2","id":4})");
  CHECK(l.sent[4] == R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: a"},"id":5})");
  CHECK(l.sent[5] == R"({"jsonrpc":"2.0","result":"b1","id":6})");
  CHECK(l.sent[6] == R"({"jsonrpc":"2.0","result":"a3","id":7})");
}

// dispatch runs handlers in place; a registration replaced or removed by its
// own handler is kept until that handler returns. The captures live on the
// heap, so a handler destroyed mid-call would be a use after free (ASan).
TEST_CASE("a handler may replace or remove its own method while it runs", "[peer][reentrancy]") {
  Loop l;
  const std::string tag(64, 'x');
  l.peer->method("m", SyncHandler([&l, tag](const json&) -> Result<json> {
    l.peer->method("m", SyncHandler([](const json&) -> Result<json> { return json("second"); }));
    return json(tag.size());
  }));
  l.peer->method("gone", MethodHandler([&l, tag](json, Reply r, const CallInfo&) {
    CHECK(l.peer->remove("gone"));
    r.ok(tag.size());
  }));
  int notified = 0;
  l.peer->notification("once", [&l, &notified, tag](const json&) {
    l.peer->remove("once");
    notified += static_cast<int>(tag.size());
  });
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"m","id":2})");
  l.in(R"({"jsonrpc":"2.0","method":"gone","id":3})");
  l.in(R"({"jsonrpc":"2.0","method":"gone","id":4})");
  l.in(R"({"jsonrpc":"2.0","method":"once"})");
  l.in(R"({"jsonrpc":"2.0","method":"once"})");
  REQUIRE(l.sent.size() == 4);
  CHECK(l.sent[0] == R"({"jsonrpc":"2.0","result":64,"id":1})");
  CHECK(l.sent[1] == R"({"jsonrpc":"2.0","result":"second","id":2})");
  CHECK(l.sent[2] == R"({"jsonrpc":"2.0","result":64,"id":3})");
  CHECK(l.sent[3] == R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: gone"},"id":4})");
  CHECK(notified == 64);
}
