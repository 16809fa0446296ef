// Peer::take_result (weft/peer.h): a result for a tagged call settles it as
// receive() of that response would, and hands back the call's tag instead
// of running its completion; whatever receive() would treat otherwise is
// declined (-1) with nothing done, so that receive() decides it, once.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "peer_loop.h"
#include "weft/weft.h"

using namespace weft;

using weft::test::Loop;

namespace {

// A call of `l` with tag `tag` (-1: none); `ran` counts its completions.
Id tagged_call(Loop& l, std::int32_t tag, int& ran, std::optional<Millis> timeout = std::nullopt, Millis now = 0) {
  CallOptions o;
  o.tag = tag;
  o.timeout = timeout;
  auto id = l.peer->call("m", std::nullopt, [&ran](Result<json>) { ++ran; }, std::move(o), now);
  REQUIRE(id.ok());
  return *id;
}

}  // namespace

TEST_CASE("take_result settles a tagged call and returns its tag, without running its completion", "[peer][take_result]") {
  Loop l;
  int ran = 0;
  const Id id = tagged_call(l, 7, ran);
  REQUIRE(l.peer->pending() == 1);
  CHECK(l.peer->take_result(id.as_int()) == 7);
  CHECK(l.peer->pending() == 0);
  CHECK(ran == 0);
  CHECK(l.diags.empty());
  // Settled: its answer again matches nothing, for take_result and receive alike.
  CHECK(l.peer->take_result(id.as_int()) == -1);
  l.in(R"({"jsonrpc":"2.0","result":1,"id":)" + id.to_string() + "}");
  REQUIRE(l.diags.size() == 1);
  CHECK(l.diags[0] == Diagnostic::Kind::UnknownResponse);
  CHECK(ran == 0);
}

TEST_CASE("take_result declines an id that matches no pending call, and reports nothing", "[peer][take_result]") {
  Loop l;
  int ran = 0;
  tagged_call(l, 1, ran);
  CHECK(l.peer->take_result(12345) == -1);
  CHECK(l.peer->pending() == 1);
  CHECK(l.diags.empty());  // receive() reports it, when the host passes the message on
}

TEST_CASE("take_result declines a call made without a tag: its completion settles it", "[peer][take_result]") {
  Loop l;
  int ran = 0;
  const Id id = tagged_call(l, -1, ran);
  CHECK(l.peer->take_result(id.as_int()) == -1);
  CHECK(l.peer->pending() == 1);
  l.in(R"({"jsonrpc":"2.0","result":1,"id":)" + id.to_string() + "}");
  CHECK(ran == 1);
}

TEST_CASE("take_result declines a streamed call: its end goes through the stream's completion", "[peer][take_result]") {
  Loop l;
  int ran = 0;
  StreamOptions so;
  so.on_chunk = [](Chunk&&) {};
  CallOptions o;
  o.tag = 3;
  auto id = l.peer->stream("s", std::nullopt, std::move(so), [&ran](Result<json>) { ++ran; }, std::move(o), 0);
  REQUIRE(id.ok());
  CHECK(l.peer->take_result(id->as_int()) == -1);
  CHECK(l.peer->pending() == 1);
  l.in(R"({"jsonrpc":"2.0","result":null,"id":)" + id->to_string() + "}");
  CHECK(ran == 1);
}

TEST_CASE("take_result declines on a Server, which ignores every response", "[peer][take_result]") {
  Loop l([](PeerOptions& o) { o.role = Role::Server; });
  CallOptions o;
  o.tag = 2;
  CHECK_FALSE(l.peer->call("m", std::nullopt, [](Result<json>) {}, std::move(o), 0).ok());  // a Server calls nothing
  CHECK(l.peer->take_result(1) == -1);
  CHECK(l.diags.empty());
}

TEST_CASE("take_result declines after close(), which settled every call", "[peer][take_result]") {
  Loop l;
  int ran = 0;
  const Id id = tagged_call(l, 4, ran);
  l.peer->close();
  CHECK(ran == 1);  // -32002 through its completion
  CHECK(l.peer->take_result(id.as_int()) == -1);
}

TEST_CASE("a call taken by take_result leaves no deadline behind", "[peer][take_result]") {
  Loop l;
  int ran = 0;
  const Id a = tagged_call(l, 5, ran, 100, 0);
  tagged_call(l, 6, ran, 200, 0);
  REQUIRE(l.peer->next_deadline() == std::optional<Millis>(100));
  CHECK(l.peer->take_result(a.as_int()) == 5);
  // The first call's deadline is gone: the next is the second call's.
  CHECK(l.peer->next_deadline() == std::optional<Millis>(200));
  l.peer->advance(150);
  CHECK(ran == 0);  // nothing timed out at 100
  l.peer->advance(250);
  CHECK(ran == 1);  // the second call, at its own deadline
}
