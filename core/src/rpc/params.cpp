// ParamSpec validation: the core, not each handler, produces -32602 (§5.1
// "Invalid params: Invalid method parameter(s)").
#include "rpc/params.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace weft::detail {
namespace {

const char* type_word(ParamType t) {
  switch (t) {
    case ParamType::Any: return "any value";
    case ParamType::Null: return "null";
    case ParamType::Boolean: return "a boolean";
    case ParamType::Integer: return "an integer";
    case ParamType::Number: return "a number";
    case ParamType::String: return "a string";
    case ParamType::Array: return "an array";
    case ParamType::Object: return "an object";
  }
  return "a value";
}

// The type `v` has, or stands for when it is a host's placeholder; Any for
// binary data (MessagePack bin and ext), which only ParamType::Any accepts.
ParamType type_of(const json& v, PlaceholderType placeholder) {
  if (placeholder)
    if (auto t = placeholder(v)) return *t;
  switch (v.type()) {
    case json::value_t::null: return ParamType::Null;
    case json::value_t::boolean: return ParamType::Boolean;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return ParamType::Integer;
    case json::value_t::number_float: return ParamType::Number;
    case json::value_t::string: return ParamType::String;
    case json::value_t::array: return ParamType::Array;
    case json::value_t::object: return ParamType::Object;
    default: return ParamType::Any;
  }
}

Error invalid(std::string what) { return Error(code::kInvalidParams, "Invalid params: " + what); }

Error wrong_type(const Param& p, ParamType got) {
  return invalid("\"" + p.name + "\" must be " + type_word(p.type) + ", got " +
                 (got == ParamType::Any ? "binary data" : type_word(got)));
}

// Whether `v` may be parameter `p` (every value may be an Any, every
// integer a Number); `got` is the type it has, when that was needed.
bool fits(const Param& p, const json& v, PlaceholderType placeholder, ParamType& got) {
  if (p.type == ParamType::Any) return true;
  got = type_of(v, placeholder);
  return got == p.type || (p.type == ParamType::Number && got == ParamType::Integer);
}

Error missing(const Param& p) { return invalid("missing required parameter \"" + p.name + "\""); }

}  // namespace

std::string spec_problem(const ParamSpec& spec) {
  for (std::size_t i = 0; i < spec.params.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (spec.params[k].name == spec.params[i].name)
        return "parameter \"" + spec.params[i].name + "\" is declared twice";
  return {};
}

Result<json> check_params(const ParamSpec& spec, std::optional<json>& params, PlaceholderType placeholder) {
  if (!params || params->is_null()) {
    for (const auto& p : spec.params)
      if (p.required) return missing(p);
    return json::object();
  }
  if (params->is_array()) {
    if (!spec.by_position) return invalid("parameters must be given by name (an object)");
    auto& arr = *params;
    if (arr.size() > spec.params.size() && !spec.allow_extra)
      return invalid("too many parameters: got " + std::to_string(arr.size()) + ", expected at most " +
                     std::to_string(spec.params.size()));
    json out = json::object();
    for (std::size_t i = 0; i < spec.params.size(); ++i) {
      const Param& p = spec.params[i];
      if (i >= arr.size()) {
        if (p.required) return missing(p);
        continue;
      }
      if (ParamType t; !fits(p, arr[i], placeholder, t)) return wrong_type(p, t);
      out[p.name] = std::move(arr[i]);
    }
    return out;
  }
  if (!spec.by_name) return invalid("parameters must be given by position (an array)");
  // One pass over the members, each matched against the (few) declared names,
  // rather than a map lookup per name plus a pass for unknown names: string
  // compares on the std::map were most of this check's cost in the profile of
  // small calls. The errors are the same and come in the same order: by
  // declared parameter first, then the first unknown name in member order.
  auto& obj = params->get_ref<json::object_t&>();  // classify() guarantees array or object
  const std::size_t n = spec.params.size();
  const json* local[16];
  std::vector<const json*> more;
  const json** found = local;
  if (n > std::size(local)) {
    more.resize(n);
    found = more.data();
  }
  std::fill(found, found + n, nullptr);
  const std::string* unknown = nullptr;
  for (const auto& [key, value] : obj) {
    bool known = false;
    for (std::size_t i = 0; i < n; ++i)
      if (spec.params[i].name == key) {
        found[i] = &value;
        known = true;
      }
    if (!known && !unknown) unknown = &key;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Param& p = spec.params[i];
    if (!found[i]) {
      if (p.required) return missing(p);
      continue;
    }
    if (ParamType t; !fits(p, *found[i], placeholder, t)) return wrong_type(p, t);
  }
  if (unknown && !spec.allow_extra) return invalid("unknown parameter \"" + *unknown + "\"");
  return std::move(*params);  // valid as given: handed over, not copied
}

}  // namespace weft::detail
