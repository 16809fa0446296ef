// Private: the heap blocks of small json objects, kept between messages.
//
// A by-name params object ({"a":1,"b":2}) is a std::map behind nlohmann's
// json: one allocation for the map and one node per member, all freed once
// the handler has run. The profile of `weft serve` answering small calls
// showed those allocations and frees (glibc: ~240 instructions a pair) as
// the largest cost left after parsing. The parser takes maps and nodes from
// this pool and the serving side gives them back after a sync handler, so a
// steady stream of calls allocates nothing for its params.
//
// What is kept is bounded (kMaxNodes, kMaxObjects), and a node is only kept
// while its key's buffer is small: a message with a huge member name does not
// pin that memory. One pool per thread: a Connection is used from one thread
// at a time, and the WebAssembly module has one thread.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "json/release.h"

namespace weft::detail {

class ObjectPool {
 public:
  using json = nlohmann::json;
  using Node = json::object_t::node_type;

  // `slot` becomes an empty object (a kept map when there is one).
  void make_object(json& slot) {
    if (objects_.empty()) {
      slot = json::object();
      return;
    }
    slot = std::move(objects_.back());  // moving a json moves its map pointer
    objects_.pop_back();
  }

  // The value of member `name` of `obj`, inserted as null (a kept node when
  // there is one). A repeated name resets the earlier value: last wins
  // (RFC 8259 §4 leaves repeats to the reader; see parse.h).
  json& member(json::object_t& obj, std::string_view name) {
    if (nodes_.empty()) {
      auto [it, fresh] = obj.try_emplace(std::string(name));
      if (!fresh) it->second = json();
      return it->second;
    }
    Node node = std::move(nodes_.back());
    nodes_.pop_back();
    node.key().assign(name.data(), name.size());
    auto r = obj.insert(std::move(node));
    if (!r.inserted) {
      r.position->second = json();
      keep(std::move(r.node));
    }
    return r.position->second;
  }

  // Frees `v` (leaves it null), keeping its map and member nodes when it is
  // an object: what the serving side calls on params it owns after the handler.
  void recycle(json& v) {
    if (v.is_null()) return;  // a handler that took its params leaves null
    if (!v.is_object()) return release(v);
    auto& obj = v.get_ref<json::object_t&>();
    while (!obj.empty()) {
      Node node = obj.extract(std::prev(obj.end()));  // the last node: the cheapest to unlink
      release(node.mapped());
      keep(std::move(node));
    }
    if (objects_.size() < kMaxObjects) objects_.push_back(std::move(v));
    v = nullptr;
  }

 private:
#ifdef __EMSCRIPTEN__
  // The module keeps nothing: its calls arrive as objects, not JSON text, so
  // a pool would only hold memory that the endpoint promises to give back
  // (the wasm heap returns to its baseline: tests/js/boundary-fuzz.test.mjs).
  static constexpr std::size_t kMaxNodes = 0;
  static constexpr std::size_t kMaxObjects = 0;
#else
  static constexpr std::size_t kMaxNodes = 256;
  static constexpr std::size_t kMaxObjects = 64;
#endif
  static constexpr std::size_t kMaxKeyCapacity = 64;

  // `node`'s value is null.
  void keep(Node&& node) {
    if (nodes_.size() < kMaxNodes && node.key().capacity() <= kMaxKeyCapacity) nodes_.push_back(std::move(node));
  }

  std::vector<Node> nodes_;
  std::vector<json> objects_;  // empty objects
};

// This thread's pool.
inline ObjectPool& object_pool() {
  static thread_local ObjectPool pool;
  return pool;
}

}  // namespace weft::detail
