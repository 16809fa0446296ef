// Error helpers and the version string.
#include "weft/error.h"
#include "weft/weft.h"

namespace weft {

json Error::to_json() const {
  json j = json::object();
  j["code"] = code;
  j["message"] = message;
  if (data) j["data"] = *data;
  return j;
}

const char* default_message(int c) {
  switch (c) {
    case code::kParseError: return "Parse error";
    case code::kInvalidRequest: return "Invalid Request";
    case code::kMethodNotFound: return "Method not found";
    case code::kInvalidParams: return "Invalid params";
    case code::kInternalError: return "Internal error";
    case code::kTimeout: return "Request timed out";
    case code::kClosed: return "Endpoint closed";
    case code::kOverloaded: return "Too many requests in flight";
    case code::kRequestCancelled: return "Request cancelled";
    default:
      return (c >= code::kServerErrorFirst && c <= code::kServerErrorLast) ? "Server error"
                                                                           : "Error";
  }
}

std::optional<int> error_code_from(double v) {
  if (!(v >= -2147483648.0 && v <= 2147483647.0) || v != static_cast<double>(static_cast<long long>(v)))
    return std::nullopt;
  return static_cast<int>(v);
}

std::optional<int> error_code_from(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<json::number_unsigned_t>();
    if (u <= 2147483647u) return static_cast<int>(u);
    return std::nullopt;
  }
  if (!v.is_number_integer()) return std::nullopt;
  const auto i = v.get<json::number_integer_t>();
  if (i < -2147483648LL || i > 2147483647LL) return std::nullopt;
  return static_cast<int>(i);
}

const char* version() { return WEFT_VERSION; }

}  // namespace weft
