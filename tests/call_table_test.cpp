// The pending-call table (core/src/peer/pending.h): an open-addressing hash
// of call ids with backward-shift deletion. Checked against std::map under
// seeded random churn, and for the contracts its header states.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "peer/pending.h"

using weft::detail::CallTable;

namespace {
struct Entry {
  std::int64_t id = -1;  // what add() was given, to check find() returns the right one
  bool reset = false;
};
void reset(Entry& e) { e.reset = true; }
}  // namespace

TEST_CASE("the call table finds what was added and not removed, under random churn", "[peer][table]") {
  for (const std::uint32_t seed : {1u, 2u, 3u, 42u}) {
    std::mt19937_64 rng(seed);
    CallTable<Entry> t;
    std::map<std::int64_t, Entry*> model;
    std::int64_t next = static_cast<std::int64_t>(rng() >> 1);  // a random first id, as Peer's
    std::vector<std::int64_t> ids;
    for (int step = 0; step < 50000; ++step) {
      const int what = static_cast<int>(rng() % 10);
      if (what < 4 || model.empty()) {
        // Mostly consecutive ids (as a Peer makes them), sometimes any.
        const std::int64_t id = what == 0 ? static_cast<std::int64_t>(rng()) : next++;
        if (model.count(id)) continue;
        Entry& e = t.add(id);
        e.id = id;
        e.reset = false;
        model[id] = &e;
      } else if (what < 8) {
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        Entry* e = it->second;
        bool was = false;  // its own value was reset (it may be freed after, when none is left)
        if (what < 6) {
          t.remove(it->first, [&](Entry& x) { was = &x == e; });
        } else {
          // As a settled call goes: found once, removed where it was found.
          std::size_t slot = 0;
          REQUIRE(t.find(it->first, slot) == e);
          t.remove_at(slot, [&](Entry& x) { was = &x == e; });
        }
        CHECK(was);
        model.erase(it);
      } else {
        // A lookup of an id never added, or of one present.
        const std::int64_t id = what == 8 ? static_cast<std::int64_t>(rng()) : model.begin()->first;
        auto m = model.find(id);
        Entry* e = t.find(id);
        std::size_t slot = 0;
        CHECK(t.find(id, slot) == e);
        if (m == model.end()) {
          CHECK(e == nullptr);
        } else {
          REQUIRE(e == m->second);
          CHECK(e->id == id);
        }
      }
      REQUIRE(t.size() == model.size());
    }
    for (const auto& [id, e] : model) REQUIRE(t.find(id) == e);
    auto all = t.ids();
    CHECK(all.size() == model.size());
    for (auto id : all) CHECK(model.count(id) == 1);
  }
}

TEST_CASE("a call's entry stays at its address while others are added and removed", "[peer][table]") {
  CallTable<Entry> t;
  Entry* first = &t.add(7);
  first->id = 7;
  for (std::int64_t id = 100; id < 5100; ++id) t.add(id).id = id;  // the table grows many times
  for (std::int64_t id = 100; id < 5100; ++id) t.remove(id, reset);
  CHECK(t.find(7) == first);
  CHECK(first->id == 7);
  CHECK(t.size() == 1);
}

TEST_CASE("removing an id that is not in the table changes nothing", "[peer][table]") {
  CallTable<Entry> t;
  t.remove(5, reset);  // empty
  t.add(1).id = 1;
  t.add(2).id = 2;
  t.remove(3, reset);
  t.remove(1, reset);
  t.remove(1, reset);  // again
  CHECK(t.size() == 1);
  CHECK(t.find(1) == nullptr);
  REQUIRE(t.find(2) != nullptr);
  CHECK(t.find(2)->id == 2);
}

TEST_CASE("memory follows the calls pending: a burst's entries are given back once none is", "[peer][table]") {
  CallTable<Entry> t;
  for (std::int64_t id = 1; id <= 10000; ++id) t.add(id);
  CHECK(t.held() == 10000);
  for (std::int64_t id = 1; id < 10000; ++id) t.remove(id, reset);
  CHECK(t.held() == 10000);  // one still pending: entries stay where they are
  t.remove(10000, reset);
  CHECK(t.held() <= 64);
  // And the table works on after it shrank.
  for (std::int64_t id = 1; id <= 100; ++id) t.add(id).id = id;
  for (std::int64_t id = 1; id <= 100; ++id) REQUIRE(t.find(id)->id == id);
}
