// What happens to a message the transport could not deliver
// (Peer::undelivered): every request still answered once, with its own
// outcome, batch or not; and a call whose timeout passes (Peer::advance),
// which tells the other side. One TEST_CASE per rule, asserting the bytes
// sent and the callbacks run.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "policy_loop.h"
#include "weft/weft.h"

using namespace weft;
using weft::test::PolicyLoop;

TEST_CASE("undelivered fails a request, re-answers a result, reports the rest", "[policy]") {
  PolicyLoop l;
  l.peer->method("echo", SyncHandler([](const json& p) -> Result<json> { return p; }));
  l.peer->method("fail", SyncHandler([](const json&) -> Result<json> { return Error(-5, "nope"); }));
  const Error why(code::kInternalError, "DataCloneError");

  SECTION("a request: its call fails with kClosed") {
    std::optional<Error> got;
    REQUIRE(l.peer->call("up", std::nullopt, [&](Result<json> r) { got = r.error(); }, {}, 0).ok());
    REQUIRE(l.out.size() == 1);
    l.peer->undelivered(l.out[0], why);
    REQUIRE(got);
    CHECK(got->code == code::kClosed);
    CHECK_THAT(got->message, Catch::Contains("Transport send failed"));
    CHECK(l.peer->pending() == 0);
    CHECK(l.sent.size() == 1);
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::SendFailed});
  }
  SECTION("a result: answered again as -32603 with the same id") {
    l.in(R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":"r"})");
    REQUIRE(l.out.size() == 1);
    l.peer->undelivered(l.out[0], why);
    REQUIRE(l.sent.size() == 2);
    CHECK(l.sent[1] ==
          R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the result could not be sent: DataCloneError"},"id":"r"})");
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::SendFailed});
  }
  SECTION("an error response without data: once more with a short message, then only SendFailed; a notification: only SendFailed") {
    l.in(R"({"jsonrpc":"2.0","method":"fail","id":1})");
    REQUIRE(l.peer->notify("n", json::array({1})).ok());
    REQUIRE(l.out.size() == 2);
    l.peer->undelivered(l.out[0], why);
    l.peer->undelivered(l.out[1], why);
    REQUIRE(l.sent.size() == 3);
    CHECK(l.sent[2] == R"({"jsonrpc":"2.0","error":{"code":-5,"message":"the answer could not be sent"},"id":1})");
    REQUIRE(l.out.size() == 3);
    l.peer->undelivered(l.out[2], why);  // that failing too ends it
    CHECK(l.sent.size() == 3);
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::SendFailed, Diagnostic::Kind::SendFailed,
                                                   Diagnostic::Kind::SendFailed});
    REQUIRE(l.full.size() == 3);
    REQUIRE(l.full[0].error);
    CHECK(*l.full[0].error == why);
  }
  SECTION("a batch of results is answered again as a batch") {
    l.in(R"([{"jsonrpc":"2.0","method":"echo","params":[1],"id":1},{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}])");
    REQUIRE(l.out.size() == 1);
    REQUIRE(l.out[0].batch);
    l.peer->undelivered(l.out[0], why);
    REQUIRE(l.sent.size() == 2);
    CHECK(l.sent[1] ==
          R"([{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the result could not be sent: DataCloneError"},"id":1},)"
          R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the result could not be sent: DataCloneError"},"id":2}])");
  }
  SECTION("an error response with data: sent again without its data") {
    l.peer->method("deny", SyncHandler([](const json&) -> Result<json> { return Error(7, "seven", json::array({7})); }));
    l.in(R"({"jsonrpc":"2.0","method":"deny","id":5})");
    REQUIRE(l.out.size() == 1);
    l.peer->undelivered(l.out[0], why);
    REQUIRE(l.sent.size() == 2);
    CHECK(l.sent[1] == R"({"jsonrpc":"2.0","error":{"code":7,"message":"seven"},"id":5})");
    // That one failing too goes once more with the short message, then no more.
    REQUIRE(l.out.size() == 2);
    l.peer->undelivered(l.out[1], why);
    REQUIRE(l.sent.size() == 3);
    CHECK(l.sent[2] == R"({"jsonrpc":"2.0","error":{"code":7,"message":"the answer could not be sent"},"id":5})");
    l.peer->undelivered(l.out[2], why);
    CHECK(l.sent.size() == 3);
  }
}

TEST_CASE("undelivered with the failing element marked sends the rest of its batch again as it was", "[policy]") {
  PolicyLoop l;
  l.peer->method("echo", SyncHandler([](const json& p) -> Result<json> { return p; }));
  l.peer->method("deny", SyncHandler([](const json&) -> Result<json> { return Error(7, "seven", json::array({7})); }));
  const Error why(code::kInternalError, "DataCloneError");

  SECTION("answers: each keeps its own id and its own outcome") {
    l.in(R"([{"jsonrpc":"2.0","method":"echo","params":[1],"id":1},{"jsonrpc":"2.0","method":"echo","params":[2],"id":2},)"
         R"({"jsonrpc":"2.0","method":"deny","id":3},{"jsonrpc":"2.0","method":"deny","id":4}])");
    REQUIRE(l.out.size() == 1);
    l.peer->undelivered(l.out[0], why, {false, true, true, false});
    REQUIRE(l.sent.size() == 2);
    CHECK(l.sent[1] ==
          R"([{"jsonrpc":"2.0","result":[1],"id":1},)"
          R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the result could not be sent: DataCloneError"},"id":2},)"
          R"({"jsonrpc":"2.0","error":{"code":7,"message":"seven"},"id":3},)"
          R"({"jsonrpc":"2.0","error":{"code":7,"message":"seven","data":[7]},"id":4}])");
    CHECK(l.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::SendFailed});
  }
  SECTION("calls: the marked one fails, the others are sent again and still answered") {
    std::vector<std::optional<Result<json>>> got(2);
    std::vector<BatchEntry> entries(2);
    entries[0].method = "a";
    entries[0].params = json::array({1});
    entries[0].done = [&](Result<json> r) { got[0] = std::move(r); };
    entries[1].method = "b";
    entries[1].params = json::array({2});
    entries[1].done = [&](Result<json> r) { got[1] = std::move(r); };
    REQUIRE(l.peer->batch(std::move(entries), {}, 0).ok());
    REQUIRE(l.out.size() == 1);
    l.peer->undelivered(l.out[0], why, {false, true});
    REQUIRE(got[1]);
    CHECK(got[1]->error().code == code::kClosed);
    CHECK_FALSE(got[0]);
    REQUIRE(l.sent.size() == 2);
    CHECK(l.sent[1] == R"([{"jsonrpc":"2.0","method":"a","params":[1],"id":1}])");
    l.in(R"([{"jsonrpc":"2.0","result":"A","id":1}])");
    REQUIRE(got[0]);
    CHECK(got[0]->value() == "A");
    CHECK(l.peer->pending() == 0);
  }
  SECTION("none marked: the transport failed, every message counts") {
    l.in(R"([{"jsonrpc":"2.0","method":"echo","params":[1],"id":1},{"jsonrpc":"2.0","method":"deny","id":2}])");
    l.peer->undelivered(l.out[0], why, {false, false});
    REQUIRE(l.sent.size() == 2);
    CHECK(l.sent[1] ==
          R"([{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the result could not be sent: DataCloneError"},"id":1},)"
          R"({"jsonrpc":"2.0","error":{"code":7,"message":"seven"},"id":2}])");
  }
}

TEST_CASE("a timed-out call sends $/cancelRequest and settles -32001, even when the cancel is answered at once", "[policy]") {
  PolicyLoop* self = nullptr;
  PolicyLoop l([&self](PeerOptions& o) {
    auto record = std::move(o.send);
    o.send = [&self, record](Outgoing&& m) {
      const bool cancel = !m.batch && std::holds_alternative<Notification>(m.messages[0]) &&
                          std::get<Notification>(m.messages[0]).method == "$/cancelRequest";
      record(std::move(m));
      // A synchronous transport: the other side answers the cancel inside this send.
      if (cancel) self->in(R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":1})");
    };
  });
  self = &l;
  std::optional<Result<json>> got;
  CallOptions opts;
  opts.timeout = 100;
  REQUIRE(l.peer->call("slow", std::nullopt, [&](Result<json> r) { got = std::move(r); }, std::move(opts), 0).ok());
  l.peer->advance(100);
  REQUIRE(got);
  CHECK(got->error().code == code::kTimeout);
  CHECK(l.sent == std::vector<std::string>{R"({"jsonrpc":"2.0","method":"slow","id":1})",
                                           R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})"});
  CHECK(l.count(Diagnostic::Kind::UnknownResponse) == 1);  // the cancel's answer
}

TEST_CASE("undelivered after close sends nothing and settles nothing more", "[policy]") {
  PolicyLoop l;
  l.peer->method("echo", SyncHandler([](const json& p) -> Result<json> { return p; }));
  l.in(R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":"r"})");
  REQUIRE(l.out.size() == 1);
  l.peer->close();
  const std::size_t sent = l.sent.size();
  l.peer->undelivered(l.out[0], Error(code::kInternalError, "DataCloneError"));
  CHECK(l.sent.size() == sent);
  CHECK(l.count(Diagnostic::Kind::SendFailed) == 1);
}

TEST_CASE("undelivered: a stream chunk that could not be sent fails its stream, -32603, and later writes are refused",
          "[policy][stream]") {
  PolicyLoop l;
  Reply held;
  bool cancelled = false;
  l.peer->method("rows", MethodHandler([&](json, Reply r, const CallInfo&) {
                   r.on_cancel([&] { cancelled = true; });
                   held = std::move(r);
                 }));
  l.in(R"({"jsonrpc":"2.0","method":"$/weft/open","params":{"credit":4,"id":"s"}})");
  l.in(R"({"jsonrpc":"2.0","method":"rows","id":"s"})");
  REQUIRE(held.write(json("a")).ok());
  REQUIRE(l.out.size() == 1);
  l.peer->undelivered(l.out[0], Error(code::kInternalError, "DataCloneError"));
  CHECK(cancelled);
  REQUIRE(l.sent.size() == 2);
  CHECK(l.sent[1] ==
        R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: a stream chunk could not be sent: DataCloneError"},"id":"s"})");
  auto again = held.write(json("b"));
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code == code::kClosed);
  CHECK(l.sent.size() == 2);
}
