// weft/error.h — the one error value used everywhere in weft.
//
// weft never lets an exception escape its public API (Emscripten builds have
// catching disabled by default), so every fallible call returns either a value
// or an `Error` (see `Result<T>` below). An `Error` is exactly the JSON-RPC 2.0
// error object (spec §5.1): an integer code, a short message, optional data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

namespace weft {

// The JSON value type of every payload (nlohmann::json).
using json = nlohmann::json;

// Error codes. The first five are reserved by JSON-RPC 2.0 §5.1; -32800 is the
// LSP "RequestCancelled" code; the rest are weft's own, inside the spec's
// "-32000 to -32099 Server error" band so that peers treat them as
// implementation-defined server errors.
namespace code {
inline constexpr int kParseError = -32700;      // invalid JSON / undecodable bytes
inline constexpr int kInvalidRequest = -32600;  // not a valid Request object
inline constexpr int kMethodNotFound = -32601;  // no such method
inline constexpr int kInvalidParams = -32602;   // params do not match the method
inline constexpr int kInternalError = -32603;   // the handler failed
// The §5.1 band reserved for implementation-defined server errors.
inline constexpr int kServerErrorFirst = -32099;
inline constexpr int kServerErrorLast = -32000;
inline constexpr int kServerError = -32000;     // generic application failure
inline constexpr int kTimeout = -32001;         // outgoing request timed out
inline constexpr int kClosed = -32002;          // endpoint/transport closed
inline constexpr int kOverloaded = -32003;      // in-flight limit reached
inline constexpr int kRateLimited = -32004;     // rate limit: data {limit, window, retry_after}
inline constexpr int kUnavailable = -32005;     // draining or shutting down: data {retry_after, reason}
inline constexpr int kVersionMismatch = -32006; // rpc.handshake: no common protocol version
inline constexpr int kRequestCancelled = -32800;// LSP: request cancelled
}  // namespace code

// A JSON-RPC error object (§5.1), the error side of every Result.
struct Error {
  // The error code (see weft::code) and a short description of what went wrong.
  int code = code::kInternalError;
  std::string message;
  std::optional<json> data;  // absent → no "data" member on the wire

  Error() = default;
  // An error with code `c`, message `m` and, optionally, data `d`.
  Error(int c, std::string m) : code(c), message(std::move(m)) {}
  Error(int c, std::string m, json d)
      : code(c), message(std::move(m)), data(std::move(d)) {}

  // Equal when code, message and data are.
  friend bool operator==(const Error&, const Error&) = default;

  // The error object as it appears on the wire (§5.1).
  json to_json() const;
};

// The default message for a standard code ("Parse error", "Invalid Request", …).
const char* default_message(int code);

// An error code from a host whose numbers are doubles (JavaScript). §5.1: the
// code "MUST be an integer"; weft's codes are 32-bit, as on the wire of every
// common peer. nullopt when `v` is not an integer in [-2^31, 2^31 - 1]; the
// host then answers kInternalError instead.
std::optional<int> error_code_from(double v);
// The same rule for a decoded JSON value (an incoming error object, a
// handler's params): an integer in [-2^31, 2^31 - 1], else nullopt.
std::optional<int> error_code_from(const json& v);

// -- Retries (docs/protocol.md, "Retryable errors") ---------------------------
// Timeouts, overload, rate limits and unavailability are retryable: the
// same call may succeed later. Automatic retry is opt-in, per call, for
// idempotent calls; hosts ask this one rule when to try again.
bool retryable(const Error& e);
inline constexpr int kMaxAttempts = 5;
// The delay before attempt `attempt` + 1 after attempt `attempt` (1-based)
// failed with `e`, or nullopt when the call should not be retried (not
// retryable, or kMaxAttempts reached). Exponential backoff with jitter:
// 100 ms, 200 + rand(50), 400 + rand(100), 800 + rand(200) (`jitter` in
// [0, 1) supplies rand), or the error's data.retry_after (ms) when longer.
std::optional<std::int64_t> retry_delay(const Error& e, int attempt, double jitter);

// Minimal expected<T, Error>: C++20 has no std::expected and weft must not throw.
template <class T>
class Result {
 public:
  // A result holding `value`, or failed with `error`.
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  // True when it holds a value (so `if (auto r = f())` tests success).
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // The value; only when ok().
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  // The error; only when !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success carries nothing.
template <>
class Result<void> {
 public:
  Result() = default;
  // Failed with `error` (the default constructor is success).
  Result(Error error) : e_(std::move(error)) {}
  // True on success (so `if (auto r = f())` tests it).
  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  // The error; only when !ok().
  const Error& error() const { return *e_; }

 private:
  std::optional<Error> e_;
};

}  // namespace weft
