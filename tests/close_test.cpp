// What close() ends and what comes after it (peer.h, Peer::close), and
// callbacks that re-enter: a closed Peer sends nothing more (answers go to
// PeerOptions::discard), serves nothing, and every call settles once with
// the close's reason; a cancelled request is answered -32800 however its
// Reply is kept; a Connection's write may send again.
#include <catch2/catch.hpp>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "policy_loop.h"
#include "weft/weft.h"

using namespace weft;
using weft::test::PolicyLoop;

TEST_CASE("a handler that closes the Peer inside a batch: the rest of the batch is not served, nothing is sent",
          "[close]") {
  PolicyLoop l;
  int ok = 0;
  l.peer->notification("exit", [&](const json&) { l.peer->close(); });
  l.peer->method("ok", SyncHandler([&](const json&) -> Result<json> { ++ok; return json(2); }));
  l.in(R"([{"jsonrpc":"2.0","method":"ok","id":1},{"jsonrpc":"2.0","method":"exit"},{"jsonrpc":"2.0","method":"ok","id":2}])");
  CHECK(ok == 1);
  CHECK(l.sent.empty());
  CHECK(l.discarded == std::vector<std::string>{R"({"jsonrpc":"2.0","result":2,"id":1})"});
}

TEST_CASE("a sync handler that closes the Peer: its answer goes to discard, not out", "[close]") {
  PolicyLoop l;
  l.peer->method("shutdown", SyncHandler([&](const json&) -> Result<json> {
                   l.peer->close();
                   return json("bye");
                 }));
  l.in(R"({"jsonrpc":"2.0","method":"shutdown","id":1})");
  CHECK(l.sent.empty());
  CHECK(l.discarded == std::vector<std::string>{R"({"jsonrpc":"2.0","result":"bye","id":1})"});
}

TEST_CASE("a message received after close() is neither served nor answered", "[close]") {
  PolicyLoop l;
  int runs = 0;
  weft::test::add_echo(*l.peer, runs);
  l.peer->close();
  l.in(R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":1})");
  l.in(R"([{"jsonrpc":"2.0","method":"echo","params":[1],"id":2}])");
  l.peer->receive_error(Error(code::kParseError, "Parse error"));
  CHECK(runs == 0);
  CHECK(l.sent.empty());
  CHECK(l.count(Diagnostic::Kind::IgnoredMessage) == 3);
}

TEST_CASE("cancel() from a completion that close() runs sends nothing; the other call settles with the close's reason",
          "[close]") {
  PolicyLoop l;
  Id second;
  std::optional<Error> b;
  REQUIRE(l.peer->call("a", std::nullopt, [&](Result<json>) { CHECK_FALSE(l.peer->cancel(second)); }, {}, 0).ok());
  second = *l.peer->call("b", std::nullopt, [&](Result<json> r) { b = r.error(); }, {}, 0);
  REQUIRE(l.sent.size() == 2);
  l.peer->close();
  REQUIRE(b);
  CHECK(b->code == code::kClosed);
  CHECK(l.sent.size() == 2);  // no $/cancelRequest after close
}

TEST_CASE("a cancelled request whose Reply its own on_cancel keeps is answered -32800, once", "[close]") {
  PolicyLoop l;
  l.peer->method("work", MethodHandler([](json, Reply r, const CallInfo&) {
                   auto kept = std::make_shared<Reply>(std::move(r));
                   kept->on_cancel([kept] {});  // the last owner of the Reply: released with the callback
                 }));
  l.in(R"({"jsonrpc":"2.0","method":"work","id":7})");
  l.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}})");
  CHECK(l.sent == std::vector<std::string>{
                      R"({"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":7})"});
}

TEST_CASE("a timeout far past any clock (INT64_MAX) is no deadline, not an overflow into the past", "[close]") {
  PolicyLoop l;
  std::optional<Result<json>> got;
  CallOptions o;
  o.timeout = std::numeric_limits<Millis>::max();
  REQUIRE(l.peer->call("slow", std::nullopt, [&](Result<json> r) { got = std::move(r); }, o, 1000).ok());
  REQUIRE(l.peer->next_deadline());
  CHECK(*l.peer->next_deadline() == std::numeric_limits<Millis>::max());
  l.peer->advance(1001);
  CHECK_FALSE(got);
  CHECK(l.peer->pending() == 1);
}

TEST_CASE("a Connection's write may send again: each write gets its own bytes intact", "[close]") {
  Connection* conn = nullptr;
  int depth = 0;
  std::vector<std::string> writes;
  ConnectionOptions co;
  co.framing = Framing::Lsp;
  co.write = [&](std::string_view bytes) {
    if (depth++ == 0) conn->peer().notify("log", json::array({std::string(5000, 'x')}));  // re-enters send
    writes.emplace_back(bytes);  // read after the nested send
    --depth;
  };
  Connection c(co);
  conn = &c;
  REQUIRE(c.peer().notify("hello", json::array({1})).ok());
  REQUIRE(writes.size() == 2);
  CHECK(writes[1] == "Content-Length: 47\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"hello\",\"params\":[1]}");
  CHECK(writes[0].size() > 5000);
  CHECK(writes[0].find("\"method\":\"log\"") != std::string::npos);
}

TEST_CASE("a Connection's write may destroy the Connection: nothing of it is touched after", "[close]") {
  std::unique_ptr<Connection> conn;
  int writes = 0;
  ConnectionOptions co;
  co.framing = Framing::Ndjson;
  co.write = [&](std::string_view) {
    ++writes;
    conn.reset();  // a host tearing down on a write error
  };
  conn = std::make_unique<Connection>(co);
  REQUIRE(conn->peer().notify("bye", std::nullopt).ok());
  CHECK(writes == 1);
  CHECK_FALSE(conn);
}
