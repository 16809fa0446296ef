// Payload markers and their pools (payloads.h).
#include "payloads.h"

#include <cstdint>
#include <vector>

#include "abi.h"

namespace weft::wasm {
namespace {

enum MarkerKind : int { kValueMarker, kObjectMarker, kArrayMarker, kNotMarker };
constexpr std::size_t kPoolMax = 256;

// Markers of one kind: slots [0, top) hold markers, the rest the nulls left
// behind. Taking one moves it out and giving one back swaps it in, so that
// neither destroys a json (nlohmann destroys out of line, even a null).
struct Pool {
  std::vector<json> slots;
  std::size_t top = 0;
  bool empty() const { return top == 0; }
  json take() { return std::move(slots[--top]); }
  void give(json& v) {
    if (top == slots.size()) {
      if (top == kPoolMax) return;
      slots.emplace_back();
    }
    slots[top++].swap(v);
  }
};
Pool g_pool[3];

json pooled(MarkerKind k) { return g_pool[k].take(); }

MarkerKind marker_kind(const json& v, double& n) {
  switch (v.type()) {
    case json::value_t::binary: {
      const auto& b = v.get_ref<const json::binary_t&>();
      if (b.empty() && b.has_subtype()) {
        n = static_cast<double>(b.subtype());
        return kValueMarker;
      }
      break;
    }
    case json::value_t::object: {
      const auto& o = v.get_ref<const json::object_t&>();
      if (o.size() != 1) break;
      const auto& [k, u] = *o.begin();
      if (k.size() == 1 && k[0] == '\xFF' && u.is_number_unsigned()) {
        n = static_cast<double>(u.get<std::uint64_t>());
        return kObjectMarker;
      }
      break;
    }
    case json::value_t::array: {
      const auto& a = v.get_ref<const json::array_t&>();
      if (a.size() == 2 && a[0].is_discarded() && a[1].is_number_unsigned()) {
        n = static_cast<double>(a[1].get<std::uint64_t>());
        return kArrayMarker;
      }
      break;
    }
    default: break;
  }
  return kNotMarker;
}

}  // namespace

json value_marker(double n) {
  const auto u = static_cast<std::uint64_t>(n);
  if (g_pool[kValueMarker].empty()) return json::binary(json::binary_t::container_type{}, u);
  json j = pooled(kValueMarker);
  j.get_binary().set_subtype(u);
  return j;
}

json object_marker(double n) {
  const auto u = static_cast<std::uint64_t>(n);
  if (!g_pool[kObjectMarker].empty()) {
    json j = pooled(kObjectMarker);
    j.get_ref<json::object_t&>().begin()->second.get_ref<json::number_unsigned_t&>() = u;
    return j;
  }
  json j(json::value_t::object);
  j.get_ref<json::object_t&>().emplace(std::string(1, '\xFF'), u);
  return j;
}

json array_marker(double n) {
  const auto u = static_cast<std::uint64_t>(n);
  if (!g_pool[kArrayMarker].empty()) {
    json j = pooled(kArrayMarker);
    j.get_ref<json::array_t&>()[1].get_ref<json::number_unsigned_t&>() = u;
    return j;
  }
  json j(json::value_t::array);
  auto& a = j.get_ref<json::array_t&>();
  a.reserve(2);
  a.emplace_back(json::value_t::discarded);
  a.emplace_back(u);
  return j;
}

double marker_of(const json& v) {
  double n = abi::kPAY_TEXT;
  marker_kind(v, n);
  return n;
}

double take_marker(json& v) {
  double n = abi::kPAY_TEXT;
  const MarkerKind k = marker_kind(v, n);
  if (k != kNotMarker) g_pool[k].give(v);
  return n;
}

}  // namespace weft::wasm
