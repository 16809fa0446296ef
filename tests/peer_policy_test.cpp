// The Peer's policies: role and foreign-message filtering, cancellation
// answered by the core, the discard and inspect hooks, non-finite ids,
// Diagnostic::error (undelivered() and timeouts: undelivered_test.cpp).
// One TEST_CASE per rule, each asserting the exact bytes sent (or discarded)
// and the callbacks run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <initializer_list>
#include <utility>

#include "weft/weft.h"
#include "policy_loop.h"

using namespace weft;
using weft::test::PolicyLoop;
using weft::test::add_echo;

// ---- 1. Role ------------------------------------------------------------------

TEST_CASE("Role::Client ignores incoming calls and still settles its own calls", "[policy]") {
  PolicyLoop l([](PeerOptions& o) { o.role = Role::Client; });
  int runs = 0, notes = 0;
  add_echo(*l.peer, runs);
  l.peer->notification("note", [&](const json&) { ++notes; });

  SECTION("a request and a notification: nothing sent, no handler, IgnoredMessage") {
    l.in(R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":1})");
    l.in(R"({"jsonrpc":"2.0","method":"note","params":[1]})");
    CHECK(l.sent.empty());
    CHECK(runs == 0);
    CHECK(notes == 0);
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::IgnoredMessage,
                                                   Diagnostic::Kind::IgnoredMessage});
  }
  SECTION("a response settles the pending call") {
    std::optional<Result<json>> got;
    REQUIRE(l.peer->call("up", std::nullopt, [&](Result<json> r) { got = std::move(r); }, {}, 0).ok());
    REQUIRE(l.sent == std::vector<std::string>{R"({"jsonrpc":"2.0","method":"up","id":1})"});
    l.in(R"({"jsonrpc":"2.0","result":"yes","id":1})");
    REQUIRE(got);
    REQUIRE(got->ok());
    CHECK(got->value() == "yes");
    CHECK(l.peer->pending() == 0);
    CHECK(l.sent.size() == 1);
    CHECK(l.diags.empty());
  }
  SECTION("in a batch only the call elements are dropped") {
    std::optional<Result<json>> got;
    REQUIRE(l.peer->call("up", std::nullopt, [&](Result<json> r) { got = std::move(r); }, {}, 0).ok());
    l.in(R"([{"jsonrpc":"2.0","method":"echo","params":[1],"id":7},)"
         R"({"jsonrpc":"2.0","result":42,"id":1},)"
         R"({"jsonrpc":"2.0","method":"note"}])");
    REQUIRE(got);
    REQUIRE(got->ok());
    CHECK(got->value() == 42);
    CHECK(runs == 0);
    CHECK(notes == 0);
    CHECK(l.sent.size() == 1);  // only the call made above: no batch answer
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::IgnoredMessage});
    REQUIRE(l.full.size() == 1);
    CHECK(l.full[0].message == "2 message(s) not for this endpoint; ignored");
  }
  SECTION("an invalid element that has a \"method\" member is ignored") {
    l.in(R"({"jsonrpc":"2.0","method":5,"id":1})");
    l.in(R"({"jsonrpc":"2.0","method":"echo","params":7,"id":2})");
    CHECK(l.sent.empty());
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::IgnoredMessage,
                                                   Diagnostic::Kind::IgnoredMessage});
  }
}

TEST_CASE("Role::Server ignores incoming responses, refuses calls and serves requests", "[policy]") {
  PolicyLoop l([](PeerOptions& o) { o.role = Role::Server; });
  int runs = 0;
  add_echo(*l.peer, runs);

  SECTION("a call is refused at once (its answer would be ignored); a response is ignored") {
    auto r = l.peer->call("up", std::nullopt, [](Result<json>) {}, {}, 0);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == code::kInvalidRequest);
    CHECK_THAT(r.error().message, Catch::Contains("ignores responses"));
    CHECK_FALSE(l.peer->batch({BatchEntry{"up", std::nullopt, [](Result<json>) {}, {}}}, {}, 0).ok());
    CHECK(l.peer->notify("note", std::nullopt).ok());  // notifications need no answer
    l.in(R"({"jsonrpc":"2.0","result":1,"id":1})");
    l.in(R"({"jsonrpc":"2.0","error":{"code":-1,"message":"no"},"id":1})");
    CHECK(l.peer->pending() == 0);
    CHECK(l.sent == std::vector<std::string>{R"({"jsonrpc":"2.0","method":"note"})"});
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::IgnoredMessage,
                                                   Diagnostic::Kind::IgnoredMessage});
  }
  SECTION("requests are served") {
    l.in(R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":1})");
    CHECK(runs == 1);
    CHECK(l.sent == std::vector<std::string>{R"({"jsonrpc":"2.0","result":[1],"id":1})"});
    CHECK(l.diags.empty());
  }
  SECTION("in a batch only the responses are dropped") {
    l.in(R"([{"jsonrpc":"2.0","result":1,"id":9},{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}])");
    CHECK(runs == 1);
    CHECK(l.sent == std::vector<std::string>{R"([{"jsonrpc":"2.0","result":[2],"id":2}])"});
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::IgnoredMessage});
  }
  SECTION("a malformed response is ignored, not reported as InvalidResponse") {
    l.in(R"({"jsonrpc":"2.0","result":1})");                       // no id
    l.in(R"({"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":3})");  // both
    CHECK(l.sent.empty());
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::IgnoredMessage,
                                                   Diagnostic::Kind::IgnoredMessage});
  }
}

TEST_CASE("a server's batch of notifications alone goes out, as notify() does", "[policy]") {
  PolicyLoop l([](PeerOptions& o) { o.role = Role::Server; });
  auto r = l.peer->batch({BatchEntry{"progress", json::array({1}), nullptr, {}},
                          BatchEntry{"progress", json::array({2}), nullptr, {}}}, {}, 0);
  REQUIRE(r.ok());
  CHECK(r->empty());
  CHECK(l.sent == std::vector<std::string>{
                      R"([{"jsonrpc":"2.0","method":"progress","params":[1]},{"jsonrpc":"2.0","method":"progress","params":[2]}])"});
}

TEST_CASE("a malformed answer to a pending call fails that call at once, -32603 naming the rule; it is not answered",
          "[policy]") {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":1})",
       "Invalid response: response must have exactly one of \"result\" and \"error\""},
      {R"({"jsonrpc":"2.0","error":{"code":"7","message":"x"},"id":1})", "Invalid response: error \"code\" must be an integer"},
      {R"({"jsonrpc":"2.0","error":{"code":7},"id":1})", "Invalid response: error \"message\" must be a string"},
      // Neither "method" nor "result": a server that left out a result it
      // could not encode (JSON.stringify drops undefined).
      {R"({"jsonrpc":"2.0","id":1})", "Invalid response: no \"method\" member"},
      // A JSON-RPC 1.0 server's answer: without it the call would wait for
      // its timeout, or for ever.
      {R"({"id":1,"result":1})", "Invalid response: response \"jsonrpc\" must be exactly \"2.0\""},
      {R"({"jsonrpc":"1.0","error":{"code":1,"message":"x"},"id":1})",
       "Invalid response: response \"jsonrpc\" must be exactly \"2.0\""},
  };
  for (Role role : {Role::Peer, Role::Client}) {
    for (const auto& [text, message] : cases) {
      PolicyLoop l([role](PeerOptions& o) { o.role = role; });
      std::optional<Result<json>> got;
      REQUIRE(l.peer->call("up", std::nullopt, [&](Result<json> r) { got = std::move(r); }, {}, 0).ok());
      l.in(text);
      INFO(text);
      REQUIRE(got);
      REQUIRE_FALSE(got->ok());
      CHECK(got->error().code == code::kInternalError);
      CHECK(got->error().message == message);
      CHECK(l.sent.size() == 1);  // the call only: nothing answers the answer
      CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::InvalidResponse});
      CHECK(l.peer->pending() == 0);
    }
  }
}

TEST_CASE("with ignore_foreign, an answer without \"jsonrpc\":\"2.0\" is foreign traffic: the call it names stays pending",
          "[policy]") {
  PolicyLoop l([](PeerOptions& o) { o.ignore_foreign = true; });
  std::optional<Result<json>> got;
  REQUIRE(l.peer->call("up", std::nullopt, [&](Result<json> r) { got = std::move(r); }, {}, 0).ok());
  l.in(R"({"id":1,"result":"another library's"})");
  CHECK_FALSE(got);
  CHECK(l.peer->pending() == 1);
  l.in(R"({"jsonrpc":"2.0","result":2,"id":1})");
  REQUIRE(got);
  CHECK(got->value() == 2);
}

TEST_CASE("a message without method, result or error is -32600 to a peer, ignored by a client, when it answers no call",
          "[policy]") {
  PolicyLoop peer;
  peer.in(R"({"jsonrpc":"2.0","id":5})");
  CHECK(peer.sent == std::vector<std::string>{
                         R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: no \"method\" member"},"id":5})"});
  PolicyLoop client([](PeerOptions& o) { o.role = Role::Client; });
  client.in(R"({"jsonrpc":"2.0","id":5})");
  client.in(R"({"jsonrpc":"2.0","method":"up","params":3,"id":6})");
  CHECK(client.sent.empty());
  CHECK(client.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::IgnoredMessage, Diagnostic::Kind::IgnoredMessage});
}

TEST_CASE("a ParamSpec that declares a name twice: the method answers every request -32603 saying so", "[policy]") {
  PolicyLoop l;
  int runs = 0;
  ParamSpec spec;
  spec.params = {Param{"a", ParamType::Number, true}, Param{"a", ParamType::String, true}};
  l.peer->method("twice", SyncHandler([&](const json&) -> Result<json> { ++runs; return json(1); }), spec);
  l.in(R"({"jsonrpc":"2.0","method":"twice","params":[1,"x"],"id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"twice","params":{"a":1},"id":2})");
  CHECK(runs == 0);
  const std::string why = R"(Internal error: method \"twice\" has an invalid ParamSpec: parameter \"a\" is declared twice)";
  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":-32603,"message":")" + why + R"("},"id":1})",
                      R"({"jsonrpc":"2.0","error":{"code":-32603,"message":")" + why + R"("},"id":2})"});
}

// ---- 2. Foreign values ---------------------------------------------------------

TEST_CASE("ignore_foreign ignores values without jsonrpc 2.0 unless mixed into a batch", "[policy]") {
  SECTION("ignore_foreign = true") {
    PolicyLoop l([](PeerOptions& o) { o.ignore_foreign = true; });
    int runs = 0;
    add_echo(*l.peer, runs);
    l.in(R"({"hello":1})");
    l.in(R"({"jsonrpc":"1.0","method":"echo","id":1})");
    l.in("42");
    CHECK(l.sent.empty());
    CHECK(runs == 0);
    CHECK(l.count(Diagnostic::Kind::IgnoredMessage) == 3);

    l.in(R"([1,{"hello":1},{"jsonrpc":"1.0","method":"echo","id":2}])");  // all foreign
    CHECK(l.sent.empty());
    CHECK(l.count(Diagnostic::Kind::IgnoredMessage) == 4);

    // Mixed: processed, and the foreign elements are answered -32600 in the batch answer.
    l.in(R"([{"hello":1},{"jsonrpc":"2.0","method":"echo","params":[5],"id":3},7])");
    CHECK(runs == 1);
    REQUIRE(l.sent.size() == 1);
    CHECK(l.sent[0] ==
          R"j([{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: no \"method\" member"},"id":null},)j"
          R"j({"jsonrpc":"2.0","result":[5],"id":3},)j"
          R"j({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: expected an object, got a number"},"id":null}])j");
  }
  SECTION("default (false): answered -32600 as before") {
    PolicyLoop l;
    int runs = 0;
    add_echo(*l.peer, runs);
    l.in(R"({"hello":1})");
    l.in(R"({"jsonrpc":"1.0","method":"echo","id":1})");
    l.in("42");
    l.in(R"([1,{"hello":1}])");
    CHECK(runs == 0);
    CHECK(l.diags.empty());
    CHECK(l.sent == std::vector<std::string>{
                        R"j({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: no \"method\" member"},"id":null})j",
                        R"j({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be exactly \"2.0\""},"id":1})j",
                        R"j({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: expected an object, got a number"},"id":null})j",
                        R"j([{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: expected an object, got a number"},"id":null},)j"
                        R"j({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: no \"method\" member"},"id":null}])j"});
  }
}

TEST_CASE("an empty array is foreign: ignored where ignore_foreign is set and by a client, else -32600", "[policy]") {
  // The binding hands the core a batch with no elements; a decoder, the text.
  auto empty_batch = [] {
    Incoming in;
    in.batch = true;
    return in;
  };
  const std::string answer =
      R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: empty batch array"},"id":null})";
  SECTION("ignore_foreign = true") {
    PolicyLoop l([](PeerOptions& o) { o.ignore_foreign = true; });
    l.in("[]");
    l.peer->receive(empty_batch());
    CHECK(l.sent.empty());
    CHECK(l.count(Diagnostic::Kind::IgnoredMessage) == 2);
  }
  SECTION("Role::Client") {
    PolicyLoop l([](PeerOptions& o) { o.role = Role::Client; });
    l.in("[]");
    l.peer->receive(empty_batch());
    CHECK(l.sent.empty());
  }
  SECTION("default: §6, a single Response with id null") {
    PolicyLoop l;
    l.in("[]");
    l.peer->receive(empty_batch());
    CHECK(l.sent == std::vector<std::string>{answer, answer});
  }
}

TEST_CASE("first_id numbers calls from it, so two callers on one channel never share an id", "[policy]") {
  for (const auto& [first, want] : {std::pair<std::int64_t, int>{1000, 1000}, {0, 1}, {-5, 1}}) {
    PolicyLoop l([first = first](PeerOptions& o) { o.first_id = first; });
    REQUIRE(l.peer->call("a", std::nullopt, [](Result<json>) {}, {}, 0).ok());
    REQUIRE(l.peer->call("b", std::nullopt, [](Result<json>) {}, {}, 0).ok());
    CHECK(l.sent == std::vector<std::string>{
                        R"({"jsonrpc":"2.0","method":"a","id":)" + std::to_string(want) + "}",
                        R"({"jsonrpc":"2.0","method":"b","id":)" + std::to_string(want + 1) + "}"});
  }
}

// ---- 3. Cancellation -------------------------------------------------------------

TEST_CASE("$/cancelRequest answers -32800 at once and a later reply is discarded", "[policy]") {
  PolicyLoop l;
  Reply held;
  bool cancel_seen = false;
  l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) { held = std::move(r); }));
  int runs = 0;
  add_echo(*l.peer, runs);

  SECTION("single request") {
    l.in(R"({"jsonrpc":"2.0","method":"hold","id":"h"})");
    held.on_cancel([&] { cancel_seen = true; });
    CHECK(l.sent.empty());
    l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"h"}})");
    CHECK(cancel_seen);
    CHECK(l.sent == std::vector<std::string>{
                        R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"h"})"});
    CHECK(l.peer->in_flight() == 0);
    CHECK(l.discarded.empty());
    held.ok("late");
    CHECK(l.sent.size() == 1);
    CHECK(l.discarded == std::vector<std::string>{R"({"jsonrpc":"2.0","result":"late","id":null})"});
    CHECK(l.count(Diagnostic::Kind::LateReply) == 1);
  }
  SECTION("an answer from on_cancel replaces the -32800") {
    l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) {
      held = std::move(r);
      held.on_cancel([&] { held.error(Error(-1, "stopped early")); });
    }));
    l.in(R"({"jsonrpc":"2.0","method":"hold","id":4})");
    l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":4}})");
    CHECK(l.sent == std::vector<std::string>{R"({"jsonrpc":"2.0","error":{"code":-1,"message":"stopped early"},"id":4})"});
    CHECK(l.discarded.empty());
    held.ok("ignored");  // already answered: the Reply is done, nothing anywhere
    CHECK(l.sent.size() == 1);
    CHECK(l.discarded.empty());
  }
  SECTION("inside a batch the -32800 takes the element's place") {
    l.in(R"([{"jsonrpc":"2.0","method":"hold","id":1},{"jsonrpc":"2.0","method":"echo","params":["e"],"id":2}])");
    CHECK(l.sent.empty());  // the batch waits for "hold"
    l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})");
    CHECK(l.sent == std::vector<std::string>{
                        R"([{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":1},)"
                        R"({"jsonrpc":"2.0","result":["e"],"id":2}])"});
    held.ok("late");
    CHECK(l.sent.size() == 1);
    CHECK(l.discarded == std::vector<std::string>{R"({"jsonrpc":"2.0","result":"late","id":null})"});
  }
  SECTION("a cancel within the same batch") {
    l.in(R"([{"jsonrpc":"2.0","method":"hold","id":1},{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}])");
    CHECK(l.sent == std::vector<std::string>{
                        R"([{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":1}])"});
  }
}

// ---- 4. discard -------------------------------------------------------------------

TEST_CASE("discard receives exactly once every answer the peer will not send", "[policy]") {
  PolicyLoop l;
  std::vector<Reply> held;
  l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) { held.push_back(std::move(r)); }));
  l.peer->method("echo", SyncHandler([](const json& p) -> Result<json> { return p; }));

  // A reply after cancellation.
  l.in(R"({"jsonrpc":"2.0","method":"hold","id":"c"})");
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"c"}})");
  held.at(0).ok("after-cancel");
  // The result of a sync handler called as a notification.
  l.in(R"({"jsonrpc":"2.0","method":"echo","params":["as-notification"]})");
  // A batch cut short by close(): "echo" answered and held, "hold" unanswered.
  l.in(R"([{"jsonrpc":"2.0","method":"echo","params":["held-in-batch"],"id":"b1"},)"
       R"({"jsonrpc":"2.0","method":"hold","id":"b2"}])");
  // A single request still being served at close().
  l.in(R"({"jsonrpc":"2.0","method":"hold","id":"s"})");
  REQUIRE(held.size() == 3);
  l.peer->close();
  held.at(1).ok("batch-after-close");
  held.at(2).ok("single-after-close");

  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"c"})"});
  CHECK(l.discarded == std::vector<std::string>{
                           R"({"jsonrpc":"2.0","result":"after-cancel","id":null})",
                           R"({"jsonrpc":"2.0","result":["as-notification"],"id":null})",
                           R"({"jsonrpc":"2.0","result":["held-in-batch"],"id":"b1"})",
                           R"({"jsonrpc":"2.0","result":"batch-after-close","id":null})",
                           R"({"jsonrpc":"2.0","result":"single-after-close","id":null})"});
  // Each answer ends in exactly one of send or discard.
  for (const char* tag : {"after-cancel", "as-notification", "held-in-batch", "batch-after-close",
                          "single-after-close", "Request cancelled"}) {
    int n = 0;
    for (const auto& s : l.sent) n += s.find(tag) != std::string::npos;
    for (const auto& s : l.discarded) n += s.find(tag) != std::string::npos;
    INFO(tag);
    CHECK(n == 1);
  }
  // Replies destroyed unanswered later (they are all done here) add nothing.
  held.clear();
  CHECK(l.discarded.size() == 5);
}

// ---- 5. inspect -------------------------------------------------------------------

TEST_CASE("inspect sees params before a ParamSpec and in $/cancelRequest, not without a spec", "[policy]") {
  std::vector<json> inspected;
  PolicyLoop l([&](PeerOptions& o) {
    o.inspect = [&](json& p, const char*) {
      inspected.push_back(p);
      if (p == json{{"ph", 1}}) p = json{{"a", 1}, {"b", 2}};
      if (p == json{{"ph", 2}}) p = json{{"id", "h"}};
    };
  });
  ParamSpec spec;
  spec.params = {{"a", ParamType::Integer}, {"b", ParamType::Integer}};
  json seen_spec, seen_plain;
  l.peer->method("sum", SyncHandler([&](const json& p) -> Result<json> {
                   seen_spec = p;
                   return json(p["a"].get<int>() + p["b"].get<int>());
                 }),
                 spec);
  l.peer->method("plain", SyncHandler([&](const json& p) -> Result<json> {
                   seen_plain = p;
                   return json(nullptr);
                 }));
  Reply held;
  l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) { held = std::move(r); }));

  l.in(R"({"jsonrpc":"2.0","method":"sum","params":{"ph":1},"id":1})");
  CHECK(seen_spec == json{{"a", 1}, {"b", 2}});
  CHECK(inspected == std::vector<json>{json{{"ph", 1}}});

  l.in(R"({"jsonrpc":"2.0","method":"plain","params":{"ph":1},"id":2})");
  CHECK(seen_plain == json{{"ph", 1}});
  CHECK(inspected.size() == 1);  // no spec: not inspected

  l.in(R"({"jsonrpc":"2.0","method":"hold","id":"h"})");
  CHECK(inspected.size() == 1);  // no spec: not inspected
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"ph":2}})");
  CHECK(inspected == std::vector<json>{json{{"ph", 1}}, json{{"ph", 2}}});

  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","result":3,"id":1})",
                      R"({"jsonrpc":"2.0","result":null,"id":2})",
                      R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"h"})"});
}

TEST_CASE("$/cancelRequest cancels a number id whose text its params could not keep (1.50, 1E3, 30 digits)",
          "[policy]") {
  PolicyLoop l;
  std::vector<Reply> held;
  l.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) { held.push_back(std::move(r)); }));
  auto codec = make_codec(CodecKind::Json);
  auto in = [&](const std::string& text) { l.peer->receive(std::move(codec->decode(text).value())); };
  for (const std::string id : {"1.50", "1E3", "123456789012345678901234567890", "-0.0"}) {
    INFO(id);
    l.sent.clear();
    in(R"({"jsonrpc":"2.0","method":"hold","id":)" + id + "}");
    in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":)" + id + "}}");
    CHECK(l.sent == std::vector<std::string>{
                        R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":)" + id + "}"});
  }
  // Two requests in flight whose ids have one value: a cancel cannot say
  // which is meant, so it cancels neither.
  l.sent.clear();
  in(R"({"jsonrpc":"2.0","method":"hold","id":2.50})");
  in(R"({"jsonrpc":"2.0","method":"hold","id":2.500})");
  in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2.5}})");
  CHECK(l.sent.empty());
}

TEST_CASE("inspect_members: placeholders are checked by the type they stand for and reach the handler as given",
          "[policy]") {
  // A host placeholder here: binary whose one byte is the ParamType it stands for.
  auto ph = [](ParamType t, std::uint64_t n) { return json::binary({static_cast<std::uint8_t>(t)}, n); };
  int whole = 0;
  PolicyLoop l([&](PeerOptions& o) {
    o.inspect = [&](json&, const char*) { ++whole; };
    o.inspect_members = [&](json& p) -> std::optional<Error> {
      if (p == json{{"refuse", true}}) return Error(code::kInvalidParams, "Invalid params: not describable");
      if (p == json::array({"big"})) p = json::array({ph(ParamType::Integer, 7)});
      if (p == json::array({"nan"})) p = json::array({ph(ParamType::Number, 8)});
      return std::nullopt;
    };
    o.placeholder_type = [](const json& v) -> std::optional<ParamType> {
      const auto* b = v.get_ptr<const json::binary_t*>();
      if (!b || b->size() != 1) return std::nullopt;
      return static_cast<ParamType>((*b)[0]);
    };
  });
  ParamSpec spec;
  spec.params = {{"n", ParamType::Integer}};
  json seen;
  l.peer->method("int", SyncHandler([&](const json& p) -> Result<json> {
                   seen = p;
                   return json(nullptr);
                 }),
                 spec);
  spec.params = {{"x", ParamType::Number}};
  l.peer->method("num", SyncHandler([](const json&) -> Result<json> { return json(nullptr); }), spec);

  l.in(R"({"jsonrpc":"2.0","method":"int","params":["big"],"id":1})");
  CHECK(seen == json{{"n", ph(ParamType::Integer, 7)}});  // the placeholder itself, named
  l.in(R"({"jsonrpc":"2.0","method":"int","params":["nan"],"id":2})");
  l.in(R"({"jsonrpc":"2.0","method":"num","params":["big"],"id":3})");  // an integer is a number
  l.in(R"({"jsonrpc":"2.0","method":"int","params":{"refuse":true},"id":4})");
  l.in(R"({"jsonrpc":"2.0","method":"int","params":[5],"id":5})");  // real members: as before
  CHECK(whole == 0);  // inspect_members replaces inspect for a ParamSpec check
  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","result":null,"id":1})",
                      R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \"n\" must be an integer, got a number"},"id":2})",
                      R"({"jsonrpc":"2.0","result":null,"id":3})",
                      R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: not describable"},"id":4})",
                      R"({"jsonrpc":"2.0","result":null,"id":5})"});
  CHECK(seen == json{{"n", 5}});
}

TEST_CASE("a ParamSpec refuses binary data for every type but any, naming it", "[policy]") {
  PolicyLoop l;
  ParamSpec spec;
  spec.params = {{"s", ParamType::String}, {"a", ParamType::Any, false}};
  l.peer->method("m", SyncHandler([](const json&) -> Result<json> { return json(nullptr); }), spec);
  Document d;
  d.value = json{{"jsonrpc", "2.0"}, {"method", "m"}, {"params", json::array({json::binary({1, 2})})}, {"id", 1}};
  l.peer->receive(std::move(d));
  d.value = json{{"jsonrpc", "2.0"}, {"method", "m"}, {"params", json::array({"s", json::binary({1})})}, {"id", 2}};
  l.peer->receive(std::move(d));
  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \"s\" must be a string, got binary data"},"id":1})",
                      R"({"jsonrpc":"2.0","result":null,"id":2})"});
}

// ---- 6. Non-finite ids ---------------------------------------------------------------

TEST_CASE("a non-finite number id is an invalid id", "[policy]") {
  PolicyLoop l;
  int runs = 0;
  add_echo(*l.peer, runs);
  const char* expected =
      R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: \"id\" must be a string, number or null, got a number JSON cannot hold"},"id":null})";
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    INFO(bad);
    CHECK_FALSE(Id::from_json(json(bad)).has_value());
    Document d;
    d.value = json{{"jsonrpc", "2.0"}, {"method", "echo"}, {"params", json::array({1})}, {"id", bad}};
    l.sent.clear();
    l.peer->receive(std::move(d));
    CHECK(l.sent == std::vector<std::string>{expected});
  }
  CHECK(runs == 0);
}

// ---- 7. Diagnostic::error ---------------------------------------------------------------

TEST_CASE("Diagnostic::error is set for ErrorWithoutId and NotificationFailed", "[policy]") {
  PolicyLoop l;
  l.peer->method("fail", SyncHandler([](const json&) -> Result<json> { return Error(-7, "sync failed"); }));
  l.peer->method("afail", MethodHandler([](json, Reply r, const CallInfo&) { r.error(Error(-8, "async failed")); }));
  ParamSpec spec;
  spec.params = {{"n", ParamType::Integer}};
  l.peer->notification("typed", [](const json&) {}, spec);

  l.in(R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null})");
  l.in(R"({"jsonrpc":"2.0","method":"fail"})");
  l.in(R"({"jsonrpc":"2.0","method":"afail"})");
  l.in(R"({"jsonrpc":"2.0","method":"typed","params":{"n":"x"}})");
  CHECK(l.sent.empty());

  REQUIRE(l.full.size() == 4);
  CHECK(l.full[0].kind == Diagnostic::Kind::ErrorWithoutId);
  REQUIRE(l.full[0].error);
  CHECK(*l.full[0].error == Error(-32700, "Parse error"));
  for (std::size_t i = 1; i < 4; ++i) {
    INFO(i);
    CHECK(l.full[i].kind == Diagnostic::Kind::NotificationFailed);
    CHECK(l.full[i].error.has_value());
  }
  if (l.full[1].error) CHECK(*l.full[1].error == Error(-7, "sync failed"));
  if (l.full[2].error) CHECK(*l.full[2].error == Error(-8, "async failed"));
  if (l.full[3].error)
    CHECK(*l.full[3].error == Error(code::kInvalidParams, "Invalid params: \"n\" must be an integer, got a string"));
}
