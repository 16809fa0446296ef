// Deferral::hold, Peer::answer_held and Peer::defer_held (weft/peer.h): a
// host that runs its handlers after the receive has returned (the
// WebAssembly binding) holds a request's answer instead of giving it now,
// and gives it later exactly as the handler's own answer would have gone.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "peer_loop.h"
#include "weft/weft.h"

using namespace weft;

using weft::test::Loop;

namespace {

// Registers "m" on `l`: its handler holds its answer when it may (counted
// in `held`), else answers `now`.
void holding(Loop& l, int& held, json now = json(0)) {
  l.peer->method("m", DeferrableHandler([&held, now](json&, Deferral& later, const CallInfo&) -> std::optional<Result<json>> {
                   if (later.hold()) {
                     ++held;
                     return std::nullopt;
                   }
                   return std::optional<Result<json>>(std::in_place, now);
                 }));
}

// What a Peer whose "m" answers `answer` at once sends for `text`.
std::vector<std::string> answered_now(const std::string& text, Result<json> answer) {
  Loop l;
  l.peer->method("m", DeferrableHandler([answer](json&, Deferral&, const CallInfo&) {
                   return std::optional<Result<json>>(answer);
                 }));
  l.in(text);
  return l.sent;
}

}  // namespace

TEST_CASE("a request received alone may hold its answer; answer_held sends it as the handler's own", "[peer][held]") {
  Loop l;
  int held = 0;
  holding(l, held);
  const std::string request = R"({"jsonrpc":"2.0","method":"m","params":[1],"id":1})";
  l.in(request);
  CHECK(held == 1);
  CHECK(l.sent.empty());
  CHECK(l.peer->answer_held(Result<json>(json(3))));
  CHECK(l.sent == answered_now(request, Result<json>(json(3))));
  CHECK(l.diags.empty());
  // Answered: nothing is held any more.
  Result<json> again(json(4));
  CHECK_FALSE(l.peer->answer_held(std::move(again)));
  CHECK(again.value() == json(4));  // left as it was
  CHECK(l.sent.size() == 1);
}

TEST_CASE("a held error answer goes out as the handler's error would, code, message and data", "[peer][held]") {
  Loop l;
  int held = 0;
  holding(l, held);
  const std::string request = R"({"jsonrpc":"2.0","method":"m","id":"e"})";
  Error e(7, "seven");
  e.data = json::array({7});
  l.in(request);
  REQUIRE(held == 1);
  CHECK(l.peer->answer_held(Result<json>(e)));
  CHECK(l.sent == answered_now(request, Result<json>(e)));
}

TEST_CASE("§6: a batch's requests cannot hold their answers; they answer as they are read", "[peer][held]") {
  Loop l;
  int held = 0;
  holding(l, held, json(5));
  l.in(R"([{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"m","id":2}])");
  CHECK(held == 0);
  REQUIRE(l.sent.size() == 1);
  CHECK(json::parse(l.sent[0]) ==
        json::parse(R"([{"jsonrpc":"2.0","result":5,"id":1},{"jsonrpc":"2.0","result":5,"id":2}])"));
  Result<json> none(json(1));
  CHECK_FALSE(l.peer->answer_held(std::move(none)));
}

TEST_CASE("one answer is held at a time: a message received meanwhile is answered now", "[peer][held]") {
  Loop l;
  int held = 0;
  holding(l, held, json("now"));
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"m","id":2})");
  CHECK(held == 1);
  REQUIRE(l.sent.size() == 1);
  CHECK(json::parse(l.sent[0]) == json::parse(R"({"jsonrpc":"2.0","result":"now","id":2})"));
  CHECK(l.peer->answer_held(Result<json>(json("held"))));
  REQUIRE(l.sent.size() == 2);
  CHECK(json::parse(l.sent[1]) == json::parse(R"({"jsonrpc":"2.0","result":"held","id":1})"));
}

TEST_CASE("a held request is not in flight: $/cancelRequest finds nothing, as for one answered now", "[peer][held]") {
  Loop l;
  int held = 0;
  holding(l, held);
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})");
  CHECK(l.sent.empty());
  CHECK(l.peer->answer_held(Result<json>(json(1))));
  REQUIRE(l.sent.size() == 1);
  CHECK(json::parse(l.sent[0]) == json::parse(R"({"jsonrpc":"2.0","result":1,"id":1})"));
}

TEST_CASE("defer_held makes the held request one served later: its Reply answers, and a cancel reaches it", "[peer][held]") {
  Loop l;
  int held = 0;
  holding(l, held);
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  Reply r = l.peer->defer_held();
  REQUIRE_FALSE(r.done());
  CHECK(l.peer->defer_held().done());  // nothing held any more
  bool told = false;
  r.on_cancel([&told] { told = true; });
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})");
  CHECK(told);
  REQUIRE(l.sent.size() == 1);
  CHECK(json::parse(l.sent[0])["error"]["code"] == code::kRequestCancelled);
  r.ok(json(9));  // too late: dropped
  CHECK(l.sent.size() == 1);

  l.in(R"({"jsonrpc":"2.0","method":"m","id":2})");
  Reply r2 = l.peer->defer_held();
  r2.ok(json(2));
  REQUIRE(l.sent.size() == 2);
  CHECK(json::parse(l.sent[1]) == json::parse(R"({"jsonrpc":"2.0","result":2,"id":2})"));
}

TEST_CASE("§4.1: a notification to a method may hold too; its answer is dropped, a failure reported", "[peer][held]") {
  Loop l;
  int held = 0;
  holding(l, held);
  l.in(R"({"jsonrpc":"2.0","method":"m"})");
  REQUIRE(held == 1);
  CHECK(l.peer->answer_held(Result<json>(Error(5, "five"))));
  CHECK(l.sent.empty());
  REQUIRE(l.diags.size() == 1);
  CHECK(l.diags[0] == Diagnostic::Kind::NotificationFailed);
  l.in(R"({"jsonrpc":"2.0","method":"m"})");
  CHECK(l.peer->answer_held(Result<json>(json(1))));
  CHECK(l.sent.empty());
  CHECK(l.diags.size() == 1);
}
