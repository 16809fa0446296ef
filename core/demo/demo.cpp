// The example methods of JSON-RPC 2.0 §7, served identically by every weft
// build so the shared vectors and the demos agree byte for byte.
#include "demo.h"

#include <cstdint>
#include <string>

namespace weft {
namespace {

// nlohmann parses non-negative integers as unsigned; both kinds count as
// integers as long as they fit int64.
bool as_int64(const json& v, std::int64_t& out) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
    out = static_cast<std::int64_t>(u);
    return true;
  }
  if (!v.is_number_integer()) return false;
  out = v.get<std::int64_t>();
  return true;
}

// Integers stay integers (§7 shows 19, not 19.0); anything else is a double.
json subtract(const json& a, const json& b) {
  std::int64_t x, y;
  if (as_int64(a, x) && as_int64(b, y)) {
    std::int64_t r;
    if (!__builtin_sub_overflow(x, y, &r)) return r;
  }
  return a.get<double>() - b.get<double>();
}

json add(const json& a, const json& b) {
  std::int64_t x, y;
  if (as_int64(a, x) && as_int64(b, y)) {
    std::int64_t r;
    if (!__builtin_add_overflow(x, y, &r)) return r;
  }
  return a.get<double>() + b.get<double>();
}

}  // namespace

void register_demo_methods(Peer& peer) {
  ParamSpec two_numbers;
  two_numbers.params = {{"minuend", ParamType::Number}, {"subtrahend", ParamType::Number}};
  peer.method(
      "subtract",
      SyncHandler([](const json& p) -> Result<json> { return subtract(p["minuend"], p["subtrahend"]); }),
      two_numbers, "minuend - subtrahend, by position or by name");

  ParamSpec a_b;
  a_b.params = {{"a", ParamType::Number}, {"b", ParamType::Number}};
  peer.method(
      "add", SyncHandler([](const json& p) -> Result<json> { return add(p["a"], p["b"]); }), a_b,
      "a + b, by position [a, b] or by name {\"a\", \"b\"}");

  peer.method(
      "sum",
      SyncHandler([](const json& p) -> Result<json> {
        if (!p.is_array())
          return Error(code::kInvalidParams, "Invalid params: sum takes an array of numbers");
        std::int64_t isum = 0;
        double dsum = 0;
        bool integral = true;
        for (const auto& v : p) {
          if (!v.is_number())
            return Error(code::kInvalidParams, "Invalid params: sum takes an array of numbers, got " +
                                                   std::string(v.type_name()));
          dsum += v.get<double>();
          std::int64_t i;
          if (integral && as_int64(v, i)) {
            if (__builtin_add_overflow(isum, i, &isum)) integral = false;
          } else {
            integral = false;
          }
        }
        if (integral) return json(isum);
        return json(dsum);
      }),
      std::nullopt, "the sum of an array of numbers");

  // Methods, not notification handlers: §7 notifies them, but a request to a
  // method that exists must be answered (here with null), never -32601; a
  // notification to a method is still not answered (§4.1).
  for (const char* sink : {"update", "notify_hello", "notify_sum"})
    peer.method(
        sink, SyncHandler([](const json&) -> Result<json> { return json(nullptr); }), std::nullopt,
        "accepts any params; a request is answered with null");

  ParamSpec none;
  peer.method(
      "get_data", SyncHandler([](const json&) -> Result<json> { return json::array({"hello", 5}); }),
      none, "returns [\"hello\", 5]");

  peer.method(
      "echo", SyncHandler([](const json& p) -> Result<json> { return p; }), std::nullopt,
      "returns its params unchanged");

  ParamSpec fail_spec;
  fail_spec.params = {{"code", ParamType::Integer},
                      {"message", ParamType::String},
                      {"data", ParamType::Any, false}};
  peer.method(
      "fail",
      SyncHandler([](const json& p) -> Result<json> {
        // §5.1 puts no sign on a code, so every 32-bit integer is accepted
        // (4242 as well as -32010): weft's one rule, error_code_from().
        const std::optional<int> c = error_code_from(p["code"]);
        if (!c)
          return Error(code::kInvalidParams,
                       "Invalid params: \"code\" must be an integer from -2147483648 to 2147483647");
        Error e(*c, p["message"].get<std::string>());
        if (auto d = p.find("data"); d != p.end()) e.data = *d;
        return e;
      }),
      fail_spec, "answers with exactly the error it is given");
}

}  // namespace weft
