// weft/params.h — declared parameters of a method (§4.2), so that the core
// answers -32602 (§5.1) before a handler sees bad params. Peer::method takes
// a ParamSpec (weft/peer.h).
#pragma once

#include <string>
#include <vector>

namespace weft {

// The JSON type a declared parameter must have (Integer: a number with
// no fraction; Any: any type).
enum class ParamType { Any, Null, Boolean, Integer, Number, String, Array, Object };

// One declared parameter.
struct Param {
  // Its name (params by name), its type, and whether it may be left out.
  std::string name;
  ParamType type = ParamType::Any;
  bool required = true;
};

// A method's parameters, accepted by position (array) or by name (object),
// §4.2. When a spec is declared the handler always receives params as an
// object keyed by name (positional arguments are mapped onto the names), so
// one handler serves both forms. Errors (-32602, message names the param):
// missing required, wrong type, too many positional, unknown name when
// `allow_extra` is false, params given when the list is empty.
struct ParamSpec {
  // The parameters, in positional order.
  std::vector<Param> params;
  // Which forms are accepted (array, object), and whether unknown names are.
  bool by_position = true;
  bool by_name = true;
  bool allow_extra = false;
};

namespace detail {
// What makes `spec` unusable, or empty: a parameter name declared twice (by
// name, a member could not say which one it is). Peer::method registers such
// a method refusing every call -32603; the JS binding refuses it at once.
std::string spec_problem(const ParamSpec& spec);
}  // namespace detail

}  // namespace weft
