// Private: the outgoing calls awaiting their response, by id (§5: a
// response is matched to its request by id). Every id this side makes is
// an integer, so the table is a small open-addressing hash of integer keys
// instead of a node-based map: finding, adding and removing a call runs a
// few dozen instructions of straight-line code, which matters for a call
// made cold (bench/README.md, "Where a cold message's time goes").
//
// Contracts:
// - A Pending stays at its address from add() until remove(): callbacks
//   run while a caller holds a reference (a chunk's handler may make new
//   calls), as a node-based map allowed. The table itself moves only
//   (id, index) pairs.
// - Memory follows the calls pending: once none is, what a burst grew
//   beyond kKept is given back.
// - Lookups of ids this side never made (a response from a confused or
//   hostile peer) cost a short probe: keys are scattered by a multiplicative
//   hash, and the table is kept at most half full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace weft::detail {

template <class Value>
class CallTable {
 public:
  // The call `id`, or nullptr.
  Value* find(std::int64_t id) {
    const std::uint32_t at = index_of(id);
    return at ? values_[at - 1].get() : nullptr;
  }
  const Value* find(std::int64_t id) const {
    const std::uint32_t at = index_of(id);
    return at ? values_[at - 1].get() : nullptr;
  }
  bool contains(std::int64_t id) const { return index_of(id) != 0; }

  // The call `id`, or nullptr; `slot` says where it sits, for remove_at(),
  // and stays valid only until the table next changes. A call settled
  // takes one probe this way instead of two (find, then remove).
  [[gnu::noinline]] Value* find(std::int64_t id, std::size_t& slot) {
    if (size_ == 0) return nullptr;
    for (std::size_t i = home(id);; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.at == 0) return nullptr;
      if (s.id == id) {
        slot = i;
        return values_[s.at - 1].get();
      }
    }
  }

  // A fresh entry for `id`, which must not be in the table. Its value is
  // one a removed call left (reset by remove()) or a new one.
  [[gnu::noinline]] Value& add(std::int64_t id) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::uint32_t at;
    if (!free_.empty()) {
      at = free_.back();
      free_.pop_back();
    } else {
      values_.push_back(std::make_unique<Value>());
      at = static_cast<std::uint32_t>(values_.size());
    }
    std::size_t i = home(id);
    while (slots_[i].at != 0) i = (i + 1) & mask();
    slots_[i] = Slot{id, at};
    ++size_;
    return *values_[at - 1];
  }

  // Removes call `id`, if in the table; `reset` is applied to its value,
  // kept for a later add().
  template <class Reset>
  void remove(std::int64_t id, Reset&& reset) {
    std::size_t slot;
    if (find(id, slot)) remove_at(slot, reset);
  }

  // Removes the call at `slot`, as find(id, slot) gave it with no change to
  // the table since; `reset` is applied to its value, kept for a later add().
  template <class Reset>
  [[gnu::noinline]] void remove_at(std::size_t slot, Reset&& reset) {
    std::size_t i = slot;
    const std::uint32_t at = slots_[i].at;
    // Backward-shift deletion (linear probing without tombstones): entries
    // after the hole that may sit in it move back, so every entry stays
    // reachable from its home slot by a run of occupied slots.
    for (std::size_t j = (i + 1) & mask(); slots_[j].at != 0; j = (j + 1) & mask()) {
      const std::size_t h = home(slots_[j].id);
      // j's entry may fill the hole at i unless its home lies in (i, j].
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{};
    reset(*values_[at - 1]);
    free_.push_back(at);
    if (--size_ == 0 && values_.size() > kKept) shrink();
  }

  std::size_t size() const { return size_; }
  // Values allocated, in use or kept for reuse (memory follows the calls).
  std::size_t held() const { return values_.size(); }

  // The ids in the table, in no particular order.
  std::vector<std::int64_t> ids() const {
    std::vector<std::int64_t> out;
    out.reserve(size_);
    for (const Slot& s : slots_)
      if (s.at != 0) out.push_back(s.id);
    return out;
  }

 private:
  struct Slot {
    std::int64_t id = 0;
    std::uint32_t at = 0;  // index into values_ + 1; 0: empty
  };
  static constexpr std::size_t kKept = 64;  // values kept after a burst
  static constexpr std::size_t kMinSlots = 16;

  std::size_t mask() const { return slots_.size() - 1; }
  // Slot::at of call `id`, or 0. Not inlined: one copy of the probe serves
  // every caller, in the instruction cache once.
  [[gnu::noinline]] std::uint32_t index_of(std::int64_t id) const {
    if (size_ == 0) return 0;
    for (std::size_t i = home(id);; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.at == 0 || s.id == id) return s.at;
    }
  }
  // Fibonacci hashing: consecutive ids spread over the table.
  std::size_t home(std::int64_t id) const {
    const std::uint64_t h = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> (64 - bits_));
  }

  void rehash(std::size_t n, int bits) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    bits_ = bits;
    for (const Slot& s : old) {
      if (s.at == 0) continue;
      std::size_t i = home(s.id);
      while (slots_[i].at != 0) i = (i + 1) & mask();
      slots_[i] = s;
    }
  }
  void grow() {
    if (slots_.empty()) return rehash(kMinSlots, 4);
    rehash(slots_.size() * 2, bits_ + 1);
  }
  // No call pending: every value is free.
  void shrink() {
    values_.resize(kKept);
    values_.shrink_to_fit();
    free_.clear();
    for (std::size_t k = kKept; k > 0; --k) free_.push_back(static_cast<std::uint32_t>(k));
    free_.shrink_to_fit();
    slots_.assign(kMinSlots, Slot{});
    slots_.shrink_to_fit();
    bits_ = 4;
  }

  std::vector<Slot> slots_;  // a power of two long, at most half full
  int bits_ = 0;             // log2(slots_.size())
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::uint32_t> free_;  // indexes (+ 1) of values_ not in use
  std::size_t size_ = 0;
};

}  // namespace weft::detail
