// PeerOptions::send_request: the request of a single call goes to it instead
// of `send`, and nothing else does. What reaches the wire, and in what
// order, must not depend on which one a host sets: each case checks the
// exact messages, in the order they left.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "peer_loop.h"
#include "weft/weft.h"

using namespace weft;

namespace {

// A Peer whose send_request writes JSON text to the Loop's list, marked, so
// that one list shows what left and in what order.
struct Calls : test::Loop {
  bool fail_requests = false;  // send_request's transport "throws"
  std::vector<Result<json>> settled;

  explicit Calls(bool with_request = true)
      : Loop([this, with_request](PeerOptions& o) {
          if (!with_request) return;
          o.send_request = [this](const Id& id, const std::string& method, std::optional<json>& params) {
            Outgoing m;
            m.messages.emplace_back(Request{id, method, std::move(params)});
            if (fail_requests) return peer->undelivered(m, Error(code::kClosed, "port closed"));
            std::string s;
            write_json(m, s);
            sent.push_back("send_request " + s);
          };
        }) {}
  // The Peer goes first: closing, it settles what is still pending through
  // keep(), into `settled`, which must still be there.
  ~Calls() { peer.reset(); }
  CallCallback keep() {
    return [this](Result<json> r) { settled.push_back(std::move(r)); };
  }
};

}  // namespace

TEST_CASE("send_request: a single call's request", "[send_request]") {
  Calls c;
  REQUIRE(c.peer->call("sum", json::array({1, 2}), c.keep(), {}, 0).ok());
  REQUIRE(c.peer->call("ping", std::nullopt, c.keep(), {}, 0).ok());
  CHECK(c.sent == std::vector<std::string>{
                      R"(send_request {"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1})",
                      R"(send_request {"jsonrpc":"2.0","method":"ping","id":2})"});
  c.in(R"({"jsonrpc":"2.0","result":3,"id":1})");
  REQUIRE(c.settled.size() == 1);
  REQUIRE(c.settled[0].ok());
  CHECK(c.settled[0].value() == 3);
}

TEST_CASE("send_request: notifications and batches go to send (§4.1, §6)", "[send_request]") {
  Calls c;
  REQUIRE(c.peer->notify("log", json::array({"x"})).ok());
  std::vector<BatchEntry> entries(2);
  entries[0].method = "a";
  entries[0].done = c.keep();
  entries[1].method = "b";
  REQUIRE(c.peer->batch(std::move(entries), {}, 0).ok());
  CHECK(c.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","method":"log","params":["x"]})",
                      R"([{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b"}])"});
}

TEST_CASE("send_request: a stream's $/weft/open leaves through send before its request",
          "[send_request]") {
  Calls c;
  StreamOptions so;
  so.credit = 4;
  so.on_chunk = [](Chunk&&) {};
  REQUIRE(c.peer->stream("numbers", json::object(), std::move(so), c.keep(), {}, 0).ok());
  CHECK(c.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","method":"$/weft/open","params":{"credit":4,"id":1}})",
                      R"(send_request {"jsonrpc":"2.0","method":"numbers","params":{},"id":1})"});
}

TEST_CASE("send_request: a request its transport could not send fails its call", "[send_request]") {
  Calls c;
  c.fail_requests = true;
  REQUIRE(c.peer->call("sum", json::array({1, 2}), c.keep(), {}, 0).ok());
  CHECK(c.sent.empty());
  REQUIRE(c.settled.size() == 1);
  REQUIRE_FALSE(c.settled[0].ok());
  CHECK(c.settled[0].error().code == code::kClosed);
  CHECK(c.settled[0].error().message == "Transport send failed: port closed");
  CHECK(c.diags == std::vector<Diagnostic::Kind>{Diagnostic::Kind::SendFailed});
  // The call is over: a late answer for it matches nothing.
  c.in(R"({"jsonrpc":"2.0","result":3,"id":1})");
  CHECK(c.settled.size() == 1);
}

TEST_CASE("send_request: the same calls give the same wire with it or without it", "[send_request]") {
  Calls with, without(false);
  for (Calls* c : {&with, &without}) {
    REQUIRE(c->peer->call("a", json::object({{"k", "v"}}), c->keep(), {}, 0).ok());
    REQUIRE(c->peer->notify("n", std::nullopt).ok());
    REQUIRE(c->peer->call("b", json::array(), c->keep(), {}, 0).ok());
  }
  std::vector<std::string> unmarked;
  for (const auto& s : with.sent) unmarked.push_back(s.rfind("send_request ", 0) == 0 ? s.substr(13) : s);
  CHECK(unmarked == without.sent);
  CHECK(with.sent.size() == 3);
  CHECK(with.sent[0].rfind("send_request ", 0) == 0);
  CHECK(with.sent[1].rfind("send_request ", 0) != 0);
}
