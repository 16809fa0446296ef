// Rate limits, graceful drain and the retry rule (docs/protocol.md): each
// answers with its documented code and data.
#include <catch2/catch.hpp>

#include <limits>

#include "peer_loop.h"
#include "weft/weft.h"

using namespace weft;

namespace {
// A Loop whose peer has a clock the test moves.
struct Clocked {
  Millis now = 0;
  std::vector<std::string> sent;
  std::vector<DrainNotice> drains;
  std::unique_ptr<Peer> peer;
  explicit Clocked(PeerLimits limits = {}) {
    PeerOptions o;
    o.limits = limits;
    o.clock = [this] { return now; };
    o.send = [this](Outgoing&& m) { write_json(m, sent.emplace_back()); };
    o.on_drain = [this](const DrainNotice& n) { drains.push_back(n); };
    peer = std::make_unique<Peer>(std::move(o));
    peer->method("ping", SyncHandler([](const json&) -> Result<json> { return json("pong"); }));
  }
  void in(const std::string& text) {
    Document d;
    d.value = json::parse(text);
    peer->receive(std::move(d));
  }
};
}  // namespace

TEST_CASE("the rate limit answers -32004 with limit, window and retry_after", "[limits]") {
  PeerLimits l;
  l.rate_limit = 2;
  l.rate_window = 1000;
  Clocked c(l);
  c.in(R"({"jsonrpc":"2.0","method":"ping","id":1})");
  c.in(R"({"jsonrpc":"2.0","method":"ping","id":2})");
  c.in(R"({"jsonrpc":"2.0","method":"ping","id":3})");
  REQUIRE(c.sent.size() == 3);
  CHECK(c.sent[2] ==
        R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"Rate limit exceeded: 2 requests per 1000 ms","data":{"limit":2,"retry_after":500,"window":1000}},"id":3})");
  c.now = 500;  // one token back
  c.in(R"({"jsonrpc":"2.0","method":"ping","id":4})");
  CHECK(c.sent[3] == R"({"jsonrpc":"2.0","result":"pong","id":4})");
}

TEST_CASE("notifications are not rate limited and never answered", "[limits]") {
  PeerLimits l;
  l.rate_limit = 1;
  Clocked c(l);
  c.peer->notification("n", NotificationHandler([](const json&) {}));
  for (int i = 0; i < 5; ++i) c.in(R"({"jsonrpc":"2.0","method":"n"})");
  CHECK(c.sent.empty());
}

TEST_CASE("a draining peer announces it, refuses new requests -32005, finishes those in flight", "[drain]") {
  Clocked c;
  Reply held;
  c.peer->method("hold", MethodHandler([&](json, Reply r, const CallInfo&) { held = std::move(r); }));
  c.in(R"({"jsonrpc":"2.0","method":"hold","id":1})");
  c.peer->drain(DrainNotice{"reload", 2000, 500});
  CHECK(c.peer->draining());
  REQUIRE(c.sent.size() == 1);
  CHECK(c.sent[0] ==
        R"({"jsonrpc":"2.0","method":"$/weft/drain","params":{"downtime":2000,"reason":"reload","reconnect_after":500}})");
  c.in(R"({"jsonrpc":"2.0","method":"ping","id":2})");
  CHECK(c.sent[1] ==
        R"x({"jsonrpc":"2.0","error":{"code":-32005,"message":"Service unavailable: draining (reload)","data":{"reason":"reload","retry_after":500}},"id":2})x");
  CHECK(c.peer->in_flight() == 1);
  held.ok("done");
  CHECK(c.sent[2] == R"({"jsonrpc":"2.0","result":"done","id":1})");
  CHECK(c.peer->in_flight() == 0);
  c.peer->drain(DrainNotice{"again", 0, 0});  // idempotent
  CHECK(c.sent.size() == 3);
}

TEST_CASE("a caller told of a drain stops sending; pending calls still get answers", "[drain]") {
  Clocked c;
  std::optional<Result<json>> first, second;
  REQUIRE(c.peer->call("slow", std::nullopt, [&](Result<json> r) { first = std::move(r); }, {}, 0).ok());
  c.in(R"({"jsonrpc":"2.0","method":"$/weft/drain","params":{"reason":"shutdown","downtime":0,"reconnect_after":250}})");
  REQUIRE(c.drains.size() == 1);
  CHECK(c.drains[0].reason == "shutdown");
  CHECK(c.drains[0].reconnect_after == 250);
  auto r = c.peer->call("ping", std::nullopt, [&](Result<json> x) { second = std::move(x); }, {}, 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kUnavailable);
  CHECK(r.error().data == json{{"reason", "shutdown"}, {"retry_after", 250}});
  CHECK(c.sent.size() == 1);  // only the first call went out
  c.in(R"({"jsonrpc":"2.0","result":1,"id":1})");
  REQUIRE(first);
  CHECK(first->value() == 1);
}

TEST_CASE("retry_delay: exponential backoff with jitter, at most 5 attempts, retry_after honoured", "[retry]") {
  const Error timeout(code::kTimeout, "t");
  CHECK(retry_delay(timeout, 1, 0.99) == std::optional<std::int64_t>(100));
  CHECK(retry_delay(timeout, 2, 0.0) == std::optional<std::int64_t>(200));
  CHECK(retry_delay(timeout, 2, 0.999) == std::optional<std::int64_t>(249));
  CHECK(retry_delay(timeout, 3, 0.5) == std::optional<std::int64_t>(450));
  CHECK(retry_delay(timeout, 4, 0.0) == std::optional<std::int64_t>(800));
  CHECK_FALSE(retry_delay(timeout, 5, 0.0));  // five attempts made
  CHECK_FALSE(retry_delay(Error(code::kInvalidParams, "p"), 1, 0.0));
  CHECK_FALSE(retry_delay(Error(code::kClosed, "c"), 1, 0.0));
  const Error limited(code::kRateLimited, "r", json{{"retry_after", 700}});
  CHECK(retry_delay(limited, 1, 0.0) == std::optional<std::int64_t>(700));
  // Past what an int64 holds: the longest wait, not an out-of-range cast.
  const Error forever(code::kRateLimited, "r", json{{"retry_after", 1e19}});
  CHECK(retry_delay(forever, 1, 0.0) == std::optional<std::int64_t>(std::numeric_limits<std::int64_t>::max()));
  CHECK(retryable(Error(code::kOverloaded, "o")));
  CHECK(retryable(Error(code::kUnavailable, "u")));
}

TEST_CASE("a batch of more calls than twice this side's max_batch is refused before anything is sent", "[limits]") {
  PeerLimits l;
  l.max_batch = 2;
  Clocked c(l);
  auto calls = [](int n) {
    std::vector<BatchEntry> v;
    for (int i = 0; i < n; ++i) v.push_back(BatchEntry{"ping", std::nullopt, [](Result<json>) {}, {}});
    return v;
  };
  auto r = c.peer->batch(calls(5), {}, 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kInvalidRequest);
  CHECK(r.error().message ==
        "Invalid Request: a batch of 5 calls exceeds twice this side's max_batch of 2, so its answers could not be received");
  CHECK(c.sent.empty());
  CHECK(c.peer->pending() == 0);
  // Up to twice the limit the answers are taken (check_batch keeps responses).
  CHECK(c.peer->batch(calls(4), {}, 0).ok());
  CHECK(c.peer->pending() == 4);
}

TEST_CASE("responses in a batch longer than max_batch still settle their calls; its calls are refused", "[limits]") {
  PeerLimits l;
  l.max_batch = 2;
  Clocked c(l);
  std::vector<Result<json>> got;
  for (int i = 0; i < 3; ++i)
    REQUIRE(c.peer->call("up", std::nullopt, [&](Result<json> r) { got.push_back(std::move(r)); }, {}, 0).ok());
  c.sent.clear();
  c.in(R"([{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","result":2,"id":2},)"
       R"({"jsonrpc":"2.0","method":"ping","id":"p"},{"jsonrpc":"2.0","result":3,"id":3}])");
  REQUIRE(got.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(got[i].value() == i + 1);
  CHECK(c.sent == std::vector<std::string>{
                      R"([{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch of 4 messages exceeds the limit of 2"},"id":"p"}])"});
}
