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

const char* json_word(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "binary data";
  }
}

bool matches(ParamType t, const json& v) {
  switch (t) {
    case ParamType::Any: return true;
    case ParamType::Null: return v.is_null();
    case ParamType::Boolean: return v.is_boolean();
    case ParamType::Integer: return v.is_number_integer();
    case ParamType::Number: return v.is_number();
    case ParamType::String: return v.is_string();
    case ParamType::Array: return v.is_array();
    case ParamType::Object: return v.is_object();
  }
  return false;
}

Error invalid(std::string what) { return Error(code::kInvalidParams, "Invalid params: " + what); }

Error wrong_type(const Param& p, const json& v) {
  return invalid("\"" + p.name + "\" must be " + type_word(p.type) + ", got " + json_word(v));
}

Error missing(const Param& p) { return invalid("missing required parameter \"" + p.name + "\""); }

}  // namespace

Result<json> check_params(const ParamSpec& spec, std::optional<json>& params) {
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
      if (!matches(p.type, arr[i])) return wrong_type(p, arr[i]);
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
    if (!matches(p.type, *found[i])) return wrong_type(p, *found[i]);
  }
  if (unknown && !spec.allow_extra) return invalid("unknown parameter \"" + *unknown + "\"");
  return std::move(*params);  // valid as given: handed over, not copied
}

}  // namespace weft::detail
