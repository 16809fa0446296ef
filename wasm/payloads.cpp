// Payload markers and their pools (payloads.h).
#include "payloads.h"

#include <cstdint>
#include <optional>
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
  void take_into(json& slot) { slot.swap(slots[--top]); }
  void give(json& v) {
    if (top == slots.size()) {
      if (top == kPoolMax) return;
      slots.emplace_back();
    }
    slots[top++].swap(v);
  }
};
Pool g_pool[3];

MarkerKind marker_kind(const json& v, double& n) {
  switch (v.type()) {
    case json::value_t::binary: {
      const auto& b = *v.get_ptr<const json::binary_t*>();
      if (b.size() <= 1 && b.has_subtype()) {  // one byte: a typed marker
        n = static_cast<double>(b.subtype());
        return kValueMarker;
      }
      break;
    }
    case json::value_t::object: {
      const auto& o = *v.get_ptr<const json::object_t*>();
      if (o.size() != 1) break;
      const auto& [k, u] = *o.begin();
      const auto* h = u.get_ptr<const json::number_unsigned_t*>();
      if (h && k.size() == 1 && k[0] == '\xFF') {
        n = static_cast<double>(*h);
        return kObjectMarker;
      }
      break;
    }
    case json::value_t::array: {
      const auto& a = *v.get_ptr<const json::array_t*>();
      if (a.size() != 2 || !a[0].is_discarded()) break;
      if (const auto* h = a[1].get_ptr<const json::number_unsigned_t*>()) {
        n = static_cast<double>(*h);
        return kArrayMarker;
      }
      break;
    }
    default: break;
  }
  return kNotMarker;
}

// A marker of kind `k` for handle `n`, made in `slot` (null): a pooled one
// swapped in and given its handle, else a new one.
void make_marker(MarkerKind k, json& slot, double n) {
  const auto u = static_cast<std::uint64_t>(n);
  Pool& pool = g_pool[k];
  if (!pool.empty()) {
    pool.take_into(slot);
    switch (k) {
      // Pooled markers have their shape: the handle's place is known.
      case kValueMarker: slot.get_ptr<json::binary_t*>()->set_subtype(u); break;
      case kObjectMarker: *slot.get_ptr<json::object_t*>()->begin()->second.get_ptr<json::number_unsigned_t*>() = u; break;
      default: *(*slot.get_ptr<json::array_t*>())[1].get_ptr<json::number_unsigned_t*>() = u; break;
    }
    return;
  }
  switch (k) {
    case kValueMarker: slot = json::binary(json::binary_t::container_type{}, u); break;
    case kObjectMarker:
      slot = json(json::value_t::object);
      slot.get_ref<json::object_t&>().emplace(std::string(1, '\xFF'), u);
      break;
    default: {
      slot = json(json::value_t::array);
      auto& a = slot.get_ref<json::array_t&>();
      a.reserve(2);
      a.emplace_back(json::value_t::discarded);
      a.emplace_back(u);
      break;
    }
  }
}

json marker(MarkerKind k, double n) {
  json j;
  make_marker(k, j, n);
  return j;
}

}  // namespace

json value_marker(double n) { return marker(kValueMarker, n); }
json object_marker(double n) { return marker(kObjectMarker, n); }
json array_marker(double n) { return marker(kArrayMarker, n); }
void value_marker_in(std::optional<json>& slot, double n) { make_marker(kValueMarker, slot.emplace(), n); }
void object_marker_in(std::optional<json>& slot, double n) { make_marker(kObjectMarker, slot.emplace(), n); }
void array_marker_in(std::optional<json>& slot, double n) { make_marker(kArrayMarker, slot.emplace(), n); }

double marker_of(const json& v) {
  double n = abi::kPAY_TEXT;
  marker_kind(v, n);
  return n;
}

double take_marker(json& v) {
  double n = abi::kPAY_TEXT;
  const MarkerKind k = marker_kind(v, n);
  if (k == kValueMarker) v.get_ptr<json::binary_t*>()->clear();  // pooled untyped
  if (k != kNotMarker) g_pool[k].give(v);
  return n;
}

json typed_marker(double n, ParamType t) {
  switch (t) {
    case ParamType::Object: return object_marker(n);
    case ParamType::Array: return array_marker(n);
    default:
      return json::binary(json::binary_t::container_type{static_cast<std::uint8_t>(t)}, static_cast<std::uint64_t>(n));
  }
}

std::optional<ParamType> placeholder_type(const json& v) {
  const auto* b = v.get_ptr<const json::binary_t*>();
  if (!b || b->size() != 1 || !b->has_subtype()) return std::nullopt;
  return static_cast<ParamType>((*b)[0]);
}

}  // namespace weft::wasm
