// A method's ParamSpec as JavaScript declares it (js/index.d.ts ParamSpec),
// read strictly: a spec that cannot be read is an error naming what is
// wrong, never a spec that checks less than was meant (a misspelt type
// would otherwise accept anything).
#include <initializer_list>
#include <string>
#include <string_view>

#include "abi.h"
#include "calls.h"

namespace weft::wasm {
namespace {

const char* const kTypeNames[] = {
#define WEFT_ABI_NAME(e, name) name,
    WEFT_ABI_PARAM_TYPES(WEFT_ABI_NAME)
#undef WEFT_ABI_NAME
};

// One function builds every message: operator+ chains, inlined at each
// return, cost kilobytes of the module (as get_ref's throwing paths do:
// get_ptr after the type check instead).
[[gnu::noinline]] std::string join(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s += p;
  return s;
}

// Parameter `p` into `q`; else what is wrong with it (`at` names it).
std::string read_param(const json& p, std::string_view at, Param& q) {
  if (p.is_string()) {
    q.name = *p.get_ptr<const std::string*>();
    return {};
  }
  if (!p.is_object()) return join({at, " must be a name or {name, type, required}"});
  bool named = false;
  for (const auto& [key, v] : *p.get_ptr<const json::object_t*>()) {
    if (key == "name") {
      if (!v.is_string()) return join({at, ".name must be a string"});
      q.name = *v.get_ptr<const std::string*>();
      named = true;
    } else if (key == "type") {
      const std::string* t = v.get_ptr<const std::string*>();
      std::size_t i = 0;
      while (i < std::size(kTypeNames) && !(t && *t == kTypeNames[i])) ++i;
      if (i == std::size(kTypeNames)) {
        std::string names;
        for (const char* n : kTypeNames) names = join({names, names.empty() ? "" : ", ", n});
        return t ? join({at, ".type \"", *t, "\" is not one of ", names})
                 : join({at, ".type (a ", v.type_name(), ") is not one of ", names});
      }
      q.type = static_cast<ParamType>(i);
    } else if (key == "required") {
      if (!v.is_boolean()) return join({at, ".required must be a boolean"});
      q.required = *v.get_ptr<const bool*>();
    } else {
      return join({at, " has an unknown member \"", key, "\""});
    }
  }
  return named ? std::string() : join({at, " has no name"});
}

std::string read(const json& j, ParamSpec& s) {
  if (!j.is_object()) return "must be an object";
  for (const auto& [key, v] : *j.get_ptr<const json::object_t*>()) {
    if (key == "params") {
      if (!v.is_array()) return "params must be an array";
      std::size_t i = 0;
      for (const json& e : *v.get_ptr<const json::array_t*>()) {
        Param q;
        std::string why = read_param(e, join({"params[", std::to_string(i++), "]"}), q);
        if (!why.empty()) return why;
        s.params.push_back(std::move(q));
      }
    } else if (key == "byPosition" || key == "byName" || key == "allowExtra") {
      if (!v.is_boolean()) return join({key, " must be a boolean"});
      (key == "byPosition" ? s.by_position : key == "byName" ? s.by_name : s.allow_extra) = *v.get_ptr<const bool*>();
    } else {
      return join({"unknown member \"", key, "\""});
    }
  }
  return {};
}

}  // namespace

Result<ParamSpec> read_spec(const json& j) {
  ParamSpec s;
  std::string why = read(j, s);
  // The core would register it refusing every call: said now, so that
  // method() throws.
  if (why.empty()) why = weft::detail::spec_problem(s);
  if (!why.empty()) return Error(code::kInvalidParams, join({"ParamSpec: ", why}));
  return s;
}

}  // namespace weft::wasm
