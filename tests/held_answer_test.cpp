// Deferral::hold, Peer::answer_held and Peer::defer_held (weft/peer.h): a
// host that runs its handlers after the receive has returned (the
// WebAssembly binding) holds a request's answer instead of giving it now,
// and gives it later exactly as the handler's own answer would have gone.
// In a batch, the reading pauses after such a member (Peer::pause,
// Peer::resume), so each handler still runs before the next member is read.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

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

// Registers notification sink "n" on `l`: its handler pauses the batch
// being read (Peer::pause), as the WebAssembly binding's does.
void pausing_sink(Loop& l) {
  Peer* peer = l.peer.get();
  l.peer->notification("n", [peer](const json&) { CHECK(peer->pause()); });
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

TEST_CASE("§6: a batch pauses after a member that held its answer; resume reads the next", "[peer][held][pause]") {
  Loop l;
  int held = 0;
  holding(l, held, json(5));
  const std::string batch = R"([{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"m","id":2}])";
  l.in(batch);
  CHECK(held == 1);
  CHECK(l.peer->paused());
  CHECK(l.peer->answer_held(Result<json>(json(5))));
  CHECK(l.sent.empty());  // §6: the batch's answers leave together
  // After the last member too: its answers leave once its handler has run.
  CHECK(l.peer->resume());
  CHECK(held == 2);
  CHECK(l.peer->answer_held(Result<json>(json(5))));
  CHECK(l.sent.empty());
  CHECK_FALSE(l.peer->resume());
  CHECK_FALSE(l.peer->paused());
  CHECK(l.sent == answered_now(batch, Result<json>(json(5))));
  CHECK_FALSE(l.peer->resume());  // none paused: nothing done
  CHECK(l.diags.empty());
}

TEST_CASE("§6: a cancel later in a paused batch finds the earlier request answered, as natively", "[peer][held][pause]") {
  Loop l;
  int held = 0;
  holding(l, held);
  const std::string batch = R"([{"jsonrpc":"2.0","method":"m","id":1},)"
                            R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}},)"
                            R"({"jsonrpc":"2.0","method":"m","id":2}])";
  l.in(batch);
  REQUIRE(l.peer->paused());
  CHECK(l.peer->answer_held(Result<json>(json(0))));
  CHECK(l.peer->resume());
  CHECK(held == 2);
  CHECK(l.peer->answer_held(Result<json>(json(0))));
  CHECK_FALSE(l.peer->resume());
  CHECK(l.sent == answered_now(batch, Result<json>(json(0))));
}

TEST_CASE("a paused batch's member served later (defer_held) is in flight: a cancel later in the batch reaches it", "[peer][held][pause]") {
  Loop l;
  int held = 0;
  holding(l, held);
  l.in(R"([{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}])");
  REQUIRE(l.peer->paused());
  Reply r = l.peer->defer_held();
  REQUIRE_FALSE(r.done());
  bool told = false;
  r.on_cancel([&told] { told = true; });
  CHECK_FALSE(l.peer->resume());
  CHECK(told);
  REQUIRE(l.sent.size() == 1);
  const json answers = json::parse(l.sent[0]);
  REQUIRE(answers.is_array());
  REQUIRE(answers.size() == 1);
  CHECK(answers[0]["id"] == 1);
  CHECK(answers[0]["error"]["code"] == code::kRequestCancelled);
  r.ok(json(9));  // too late: dropped
  CHECK(l.sent.size() == 1);
}

TEST_CASE("resume answers -32603 for a paused member whose held answer the host never gave", "[peer][held][pause]") {
  Loop l;
  int held = 0;
  holding(l, held);
  l.in(R"([{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"m","id":2}])");
  REQUIRE(l.peer->paused());
  CHECK(l.peer->resume());
  CHECK(l.peer->answer_held(Result<json>(json(2))));
  CHECK_FALSE(l.peer->resume());
  REQUIRE(l.sent.size() == 1);
  const json answers = json::parse(l.sent[0]);
  REQUIRE(answers.size() == 2);
  CHECK(answers[0]["id"] == 1);
  CHECK(answers[0]["error"]["code"] == code::kInternalError);
  CHECK(answers[0]["error"]["message"] == "Internal error: request dropped without a reply");
  CHECK(answers[1] == json::parse(R"({"jsonrpc":"2.0","result":2,"id":2})"));
}

TEST_CASE("close drops what a paused batch had left; resume then does nothing", "[peer][held][pause]") {
  Loop l;
  int held = 0;
  holding(l, held);
  l.in(R"([{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"m","id":2}])");
  REQUIRE(l.peer->paused());
  l.peer->close();
  CHECK_FALSE(l.peer->paused());
  CHECK_FALSE(l.peer->resume());
  l.peer->answer_held(Result<json>(json(1)));
  CHECK(held == 1);  // the second member was never read
  CHECK(l.sent.empty());
}

TEST_CASE("a notification sink in a batch pauses its reading with Peer::pause", "[peer][held][pause]") {
  Loop l;
  std::vector<std::string> order;
  Peer* peer = l.peer.get();
  l.peer->notification("n", [&order, peer](const json&) {
    order.push_back(peer->pause() ? "n paused" : "n ran");
  });
  l.peer->method("m", SyncHandler([&order](const json&) -> Result<json> {
                   order.push_back("m");
                   return json(1);
                 }));
  l.in(R"([{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"m","id":1}])");
  CHECK(order == std::vector<std::string>{"n paused"});
  CHECK(l.peer->paused());
  CHECK(l.sent.empty());
  CHECK_FALSE(l.peer->resume());
  CHECK(order == std::vector<std::string>{"n paused", "m"});
  REQUIRE(l.sent.size() == 1);
  CHECK(json::parse(l.sent[0]) == json::parse(R"([{"jsonrpc":"2.0","result":1,"id":1}])"));
}

TEST_CASE("§6: a batch's answers wait for the handler of its last member, a notification, to run", "[peer][held][pause]") {
  // Its one answer (-32601) is in before the notification's handler runs.
  const std::string batch = R"([{"jsonrpc":"2.0","method":"nope","id":1},{"jsonrpc":"2.0","method":"n"}])";
  Loop l;
  pausing_sink(l);
  l.in(batch);
  CHECK(l.peer->paused());
  CHECK(l.sent.empty());
  // The host runs n's handler, which closes the Peer: natively nothing is
  // sent then, and so here.
  l.peer->close();
  CHECK_FALSE(l.peer->resume());
  CHECK(l.sent.empty());

  Loop m;
  pausing_sink(m);
  m.in(batch);
  CHECK(m.sent.empty());
  CHECK_FALSE(m.peer->resume());
  REQUIRE(m.sent.size() == 1);
  CHECK(json::parse(m.sent[0])[0]["error"]["code"] == code::kMethodNotFound);
}

TEST_CASE("a batch read inside a handler does not pause: its members answer as they are read", "[peer][held][pause]") {
  Loop l;
  int held = 0;
  holding(l, held, json(5));
  l.peer->method("outer", SyncHandler([&l](const json&) -> Result<json> {
                   l.in(R"([{"jsonrpc":"2.0","method":"m","id":10},{"jsonrpc":"2.0","method":"m","id":11}])");
                   return json("outer");
                 }));
  l.in(R"({"jsonrpc":"2.0","method":"outer","id":1})");
  CHECK(held == 0);
  CHECK_FALSE(l.peer->paused());
  REQUIRE(l.sent.size() == 2);
  CHECK(json::parse(l.sent[0]) ==
        json::parse(R"([{"jsonrpc":"2.0","result":5,"id":10},{"jsonrpc":"2.0","result":5,"id":11}])"));
  CHECK(json::parse(l.sent[1]) == json::parse(R"({"jsonrpc":"2.0","result":"outer","id":1})"));
}

TEST_CASE("while a batch is paused, a batch received in its member's handler does not pause", "[peer][held][pause]") {
  Loop l;
  int held = 0;
  holding(l, held, json(5));
  pausing_sink(l);
  l.in(R"([{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"m","id":1}])");
  REQUIRE(l.peer->paused());
  // The host runs n's handler, which receives a batch of its own: no
  // answer is held, yet its members answer now.
  l.in(R"([{"jsonrpc":"2.0","method":"m","id":10},{"jsonrpc":"2.0","method":"m","id":11}])");
  CHECK(held == 0);
  REQUIRE(l.sent.size() == 1);
  CHECK(json::parse(l.sent[0]) ==
        json::parse(R"([{"jsonrpc":"2.0","result":5,"id":10},{"jsonrpc":"2.0","result":5,"id":11}])"));
  CHECK(l.peer->resume());
  CHECK(held == 1);
  CHECK(l.peer->answer_held(Result<json>(json(5))));
  CHECK_FALSE(l.peer->resume());
  REQUIRE(l.sent.size() == 2);
  CHECK(json::parse(l.sent[1]) == json::parse(R"([{"jsonrpc":"2.0","result":5,"id":1}])"));
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

namespace {

// A Loop whose Peer has PeerOptions::send_result: each result it is given
// is written to `results`, as `send` writes the rest to `sent`. Its "m"
// holds its answer when it may (holding), counted in `held`.
struct Releasing : Loop {
  std::vector<std::string> results;
  int held = 0;
  Releasing()
      : Loop([this](PeerOptions& o) {
          o.send_result = [this](const Id& id, json&& v) {
            Outgoing m;
            m.messages.emplace_back(Response{id, std::move(v)});
            std::string s;
            write_json(m, s);
            results.push_back(std::move(s));
          };
        }) {
    holding(*this, held);
  }
};

}  // namespace

TEST_CASE("release_held: a request received alone is let go, nothing sent, and the next may hold", "[peer][held][release]") {
  Releasing l;
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  REQUIRE(l.held == 1);
  CHECK(l.peer->release_held());
  CHECK(l.sent.empty());
  CHECK(l.results.empty());
  // Nothing is held: the host sends the result itself (send_result's way).
  CHECK_FALSE(l.peer->answer_held(Result<json>(json(3))));
  CHECK_FALSE(l.peer->release_held());
  l.in(R"({"jsonrpc":"2.0","method":"m","id":2})");
  CHECK(l.held == 2);
  CHECK(l.peer->answer_held(Result<json>(json(3))));
  CHECK(l.results == std::vector<std::string>{R"({"jsonrpc":"2.0","result":3,"id":2})"});
  CHECK(l.diags.empty());
}

TEST_CASE("rehold: a request let go and held again answers an error as the handler's own", "[peer][held][release]") {
  Releasing l;
  const std::string request = R"({"jsonrpc":"2.0","method":"m","id":7})";
  l.in(request);
  REQUIRE(l.peer->release_held());
  CHECK(l.peer->rehold(Id::integer(7)));
  CHECK_FALSE(l.peer->rehold(Id::integer(7)));  // one answer is held at a time
  Error e(7, "seven");
  e.data = json::array({7});
  CHECK(l.peer->answer_held(Result<json>(e)));
  CHECK(l.sent == answered_now(request, Result<json>(e)));
  CHECK(l.results.empty());
}

TEST_CASE("rehold then defer_held: served later, in flight for $/cancelRequest", "[peer][held][release]") {
  Releasing l;
  l.in(R"({"jsonrpc":"2.0","method":"m","id":"c"})");
  REQUIRE(l.peer->release_held());
  REQUIRE(l.peer->rehold(Id::string("c")));
  Reply r = l.peer->defer_held();
  REQUIRE_FALSE(r.done());
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"c"}})");
  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"c"})"});
}

namespace {

// Receives `text` on `l`, whose "m" holds it (counted in `held`):
// release_held() must keep it held, and answer_held() then answers it with 0.
void kept_held(Loop& l, const int& held, const std::string& text) {
  l.in(text);
  REQUIRE(held == 1);
  CHECK_FALSE(l.peer->release_held());
  CHECK(l.peer->answer_held(Result<json>(json(0))));
}

}  // namespace

TEST_CASE("release_held keeps what send_result would not be given: a batch's member, a notification, no send_result", "[peer][held][release]") {
  SECTION("a member of a batch (§6: its answer goes in the batch's array)") {
    Releasing l;
    kept_held(l, l.held, R"([{"jsonrpc":"2.0","method":"m","id":1}])");
    CHECK_FALSE(l.peer->resume());
    CHECK(l.sent == std::vector<std::string>{R"([{"jsonrpc":"2.0","result":0,"id":1}])"});
  }
  SECTION("a notification (§4.1: never answered)") {
    Releasing l;
    kept_held(l, l.held, R"({"jsonrpc":"2.0","method":"m"})");
    CHECK(l.sent.empty());
  }
  SECTION("a Peer without send_result") {
    Loop l;
    int held = 0;
    holding(l, held);
    kept_held(l, held, R"({"jsonrpc":"2.0","method":"m","id":1})");
    CHECK(l.sent == std::vector<std::string>{R"({"jsonrpc":"2.0","result":0,"id":1})"});
  }
}

TEST_CASE("release_held and rehold on a closed Peer: nothing let go, nothing held", "[peer][held][release]") {
  Releasing l;
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  REQUIRE(l.held == 1);
  l.peer->close();
  CHECK_FALSE(l.peer->release_held());
  Releasing k;
  k.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  REQUIRE(k.peer->release_held());
  k.peer->close();
  CHECK_FALSE(k.peer->rehold(Id::integer(1)));
  CHECK(k.sent.empty());
  CHECK(k.results.empty());
}

TEST_CASE("defer_held on a closed Peer serves nothing: no Reply, nothing in flight, nothing sent", "[peer][held][release]") {
  Releasing l;
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  REQUIRE(l.held == 1);
  l.peer->close();
  CHECK(l.peer->defer_held().done());
  CHECK(l.peer->in_flight() == 0);
  CHECK_FALSE(l.peer->answer_held(Result<json>(json(1))));  // dropped, not still held
  CHECK(l.sent.empty());
}

TEST_CASE("rehold while another request's answer is held: refused, the other stays held and answers as its own", "[peer][held][release]") {
  Releasing l;
  l.in(R"({"jsonrpc":"2.0","method":"m","id":1})");
  REQUIRE(l.peer->release_held());
  l.in(R"({"jsonrpc":"2.0","method":"m","id":2})");  // held, as a request received inside a handler
  REQUIRE(l.held == 2);
  CHECK_FALSE(l.peer->rehold(Id::integer(1)));
  CHECK(l.peer->answer_held(Result<json>(json(2))));
  CHECK(l.results == std::vector<std::string>{R"({"jsonrpc":"2.0","result":2,"id":2})"});
  CHECK(l.sent.empty());
}
