// Error helpers and the version string.
#include "weft/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
    case code::kRateLimited: return "Rate limit exceeded";
    case code::kUnavailable: return "Service unavailable";
    case code::kVersionMismatch: return "Unsupported protocol version";
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

bool retryable(const Error& e) {
  return e.code == code::kTimeout || e.code == code::kOverloaded || e.code == code::kRateLimited ||
         e.code == code::kUnavailable;
}

std::optional<std::int64_t> retry_delay(const Error& e, int attempt, double jitter) {
  if (!retryable(e) || attempt < 1 || attempt >= kMaxAttempts) return std::nullopt;
  const std::int64_t base = std::int64_t{100} << (attempt - 1);
  std::int64_t d = base + (attempt > 1 ? static_cast<std::int64_t>(jitter * static_cast<double>(base / 4)) : 0);
  if (e.data && e.data->is_object())
    if (auto ra = e.data->find("retry_after"); ra != e.data->end() && ra->is_number() && ra->get<double>() > 0) {
      // Past what an int64 holds (1e19, a MessagePack infinity) it is the
      // longest wait there is, not an out-of-range cast (undefined).
      const double want = std::ceil(ra->get<double>());
      d = want >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : std::max(d, static_cast<std::int64_t>(want));
    }
  return d;
}

const char* version() { return WEFT_VERSION; }

}  // namespace weft
