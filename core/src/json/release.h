// Private: freeing a json value without the cost of nlohmann's destructor.
//
// nlohmann's destructor (3.11) moves the children of every object or array
// into a heap-allocated std::vector before freeing them, so that a deeply
// nested value cannot overflow the stack. For the small params of a call that
// is an allocation and a move per member: the profile of `weft serve`
// answering add {"a":1,"b":2} showed it at a tenth of the server's
// instructions. release() empties the first levels itself, leaves first, so
// the destructor only meets empty containers (which allocate nothing); what
// lies deeper is left to the destructor and its stack, so depth stays safe.
#pragma once

#include <nlohmann/json.hpp>

namespace weft::detail {

// Leaves `v` null, its containers freed.
inline void release(nlohmann::json& v, int depth = 0) {
  constexpr int kOwnLevels = 4;  // deeper: the destructor's own stack
  if (depth < kOwnLevels) {
    if (v.is_object()) {
      auto& o = v.get_ref<nlohmann::json::object_t&>();
      // Scalars need nothing: clear() destroys them.
      for (auto& member : o)
        if (member.second.is_structured()) release(member.second, depth + 1);
      o.clear();
    } else if (v.is_array()) {
      auto& a = v.get_ref<nlohmann::json::array_t&>();
      for (auto& element : a)
        if (element.is_structured()) release(element, depth + 1);
      a.clear();
    }
  }
  v = nullptr;
}

}  // namespace weft::detail
