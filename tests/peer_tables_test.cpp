// The Peer's bookkeeping tables under churn: the deadline heap (lazy deletion,
// compaction), reused pending-call nodes and serving slots. Checked against a
// plain model, through the public API only.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "weft/weft.h"
#include "peer_loop.h"

using namespace weft;

using weft::test::Loop;

TEST_CASE("deadlines under churn: the earliest live one, timeouts in (deadline, call) order",
          "[peer][time]") {
  Loop w({}, 500);
  std::mt19937 rng(7);
  std::map<std::pair<Millis, std::int64_t>, bool> model;  // (deadline, id) of calls with one
  std::map<std::int64_t, Millis> at;                      // id → deadline, calls with one
  std::vector<std::int64_t> timed_out, expected_out;
  std::vector<std::int64_t> open;  // calls not settled
  Millis now = 0;
  for (int step = 0; step < 20000; ++step) {
    const int what = static_cast<int>(rng() % 10);
    if (what < 5) {  // a call: default, own timeout, or none
      CallOptions o;
      const int k = static_cast<int>(rng() % 4);
      if (k == 1) o.timeout = static_cast<Millis>(rng() % 50);
      if (k == 2) o.no_timeout = true;
      auto slot = std::make_shared<std::int64_t>(0);
      auto id = w.peer->call("m", std::nullopt,
                             [&, slot](Result<json> r) {
                               if (!r.ok() && r.error().code == code::kTimeout) timed_out.push_back(*slot);
                             },
                             o, now);
      REQUIRE(id.ok());
      *slot = id->as_int();
      open.push_back(*slot);
      if (!o.no_timeout) {
        const Millis d = now + (o.timeout ? *o.timeout : 500);
        model[{d, *slot}] = true;
        at[*slot] = d;
      }
    } else if (what < 8 && !open.empty()) {  // an answer, in any order
      const std::size_t i = rng() % open.size();
      const std::int64_t id = open[i];
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      w.in(R"({"jsonrpc":"2.0","result":1,"id":)" + std::to_string(id) + "}");
      if (auto it = at.find(id); it != at.end()) {
        model.erase({it->second, id});
        at.erase(it);
      }
    } else {  // time passes
      now += static_cast<Millis>(rng() % 40);
      w.peer->advance(now);
      while (!model.empty() && model.begin()->first.first <= now) {
        const std::int64_t id = model.begin()->first.second;
        expected_out.push_back(id);
        at.erase(id);
        open.erase(std::find(open.begin(), open.end(), id));
        model.erase(model.begin());
      }
    }
    const auto d = w.peer->next_deadline();
    if (model.empty()) REQUIRE_FALSE(d);
    else REQUIRE(d == model.begin()->first.first);
    REQUIRE(w.peer->pending() == open.size());
  }
  CHECK(timed_out == expected_out);
  CHECK(!expected_out.empty());
  CHECK(w.diags.empty());
}

TEST_CASE("a million calls answered in turn leave one deadline at a time", "[peer][time]") {
  Loop w({}, 10000);
  for (int i = 0; i < 1000000; ++i) {
    int got = 0;
    auto id = w.peer->call("m", std::nullopt, [&](Result<json> r) { got = r.ok(); }, {}, i);
    REQUIRE(id.ok());
    if (i % 100000 == 0) CHECK(w.peer->next_deadline() == i + 10000);
    w.in(R"({"jsonrpc":"2.0","result":1,"id":)" + std::to_string(id->as_int()) + "}");
    REQUIRE(got == 1);
    w.sent.clear();
  }
  CHECK_FALSE(w.peer->next_deadline());
  CHECK(w.peer->pending() == 0);
}

TEST_CASE("a Reply from before close does not answer a request served after it", "[peer]") {
  Loop w;
  std::vector<Reply> kept;
  w.peer->method("keep", MethodHandler([&](json, Reply r, const CallInfo&) { kept.push_back(std::move(r)); }));
  w.in(R"({"jsonrpc":"2.0","method":"keep","id":1})");
  REQUIRE(kept.size() == 1);
  w.peer->close();
  w.in(R"({"jsonrpc":"2.0","method":"keep","id":2})");  // may reuse the first request's entry
  const std::size_t before = w.sent.size();
  kept[0].ok("late");
  CHECK(w.sent.size() == before);
  REQUIRE(!w.diags.empty());
  CHECK(w.diags.back() == Diagnostic::Kind::LateReply);
  if (kept.size() == 2) {
    CHECK_FALSE(kept[1].cancelled());
    kept[1].ok(2);
    REQUIRE(w.sent.size() == before + 1);
    CHECK(w.sent.back() == R"({"jsonrpc":"2.0","result":2,"id":2})");
  }
}

TEST_CASE("cancellation finds the request by id while entries are reused", "[peer]") {
  Loop w;
  std::vector<Reply> kept;
  int cancels = 0;
  w.peer->method("keep", MethodHandler([&](json, Reply r, const CallInfo&) {
    r.on_cancel([&] { ++cancels; });
    kept.push_back(std::move(r));
  }));
  for (int round = 0; round < 3; ++round) {
    w.in(R"({"jsonrpc":"2.0","method":"keep","id":"a"})");
    w.in(R"({"jsonrpc":"2.0","method":"keep","id":"b"})");
    w.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b"}})");
    CHECK(cancels == round + 1);
    CHECK(kept[kept.size() - 1].cancelled());
    CHECK_FALSE(kept[kept.size() - 2].cancelled());
    for (auto& r : kept) r.ok(round);
    kept.clear();
    CHECK(w.peer->in_flight() == 0);
  }
  w.in(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}})");  // nothing in flight
  CHECK(cancels == 3);
}
