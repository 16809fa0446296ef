// The ABI tables (abi.h) as the module exports them: weft_abi() is JSON that
// scripts/gen-abi.mjs turns into dist/weft_abi.js at build time, and
// weft_abi_hash() lets the loader check that both came from one build.
#include <emscripten.h>

#include <cstdint>
#include <string>

#include "abi.h"
#include "weft/weft.h"

namespace {

using namespace weft;

// The enums abi.h names must match the core's, value for value.
#define WEFT_ABI_CHECK_DIAG(name) Diagnostic::Kind::name,
constexpr Diagnostic::Kind kDiagOrder[] = {WEFT_ABI_DIAGNOSTICS(WEFT_ABI_CHECK_DIAG)};
#undef WEFT_ABI_CHECK_DIAG
constexpr bool diag_dense() {
  for (std::size_t i = 0; i < sizeof kDiagOrder / sizeof kDiagOrder[0]; ++i)
    if (static_cast<std::size_t>(kDiagOrder[i]) != i) return false;
  return true;
}
static_assert(diag_dense(), "WEFT_ABI_DIAGNOSTICS lists Diagnostic::Kind in declaration order");
static_assert(sizeof kDiagOrder / sizeof kDiagOrder[0] ==
                  static_cast<std::size_t>(Diagnostic::Kind::SendFailed) + 1,
              "every Diagnostic::Kind is listed");

#define WEFT_ABI_CHECK_PT(name, text) ParamType::name,
constexpr ParamType kParamOrder[] = {WEFT_ABI_PARAM_TYPES(WEFT_ABI_CHECK_PT)};
#undef WEFT_ABI_CHECK_PT
constexpr bool params_dense() {
  for (std::size_t i = 0; i < sizeof kParamOrder / sizeof kParamOrder[0]; ++i)
    if (static_cast<std::size_t>(kParamOrder[i]) != i) return false;
  return true;
}
static_assert(params_dense(), "WEFT_ABI_PARAM_TYPES lists ParamType in declaration order");

static_assert(abi::ROLE_PEER == static_cast<int>(Role::Peer) &&
                  abi::ROLE_CLIENT == static_cast<int>(Role::Client) &&
                  abi::ROLE_SERVER == static_cast<int>(Role::Server),
              "ROLE_* are weft::Role's values");
static_assert(code::kParseError == -32700 && code::kInvalidRequest == -32600 &&
                  code::kMethodNotFound == -32601 && code::kInvalidParams == -32602 &&
                  code::kInternalError == -32603 && code::kServerError == -32000 &&
                  code::kTimeout == -32001 && code::kClosed == -32002 && code::kOverloaded == -32003 &&
                  code::kRateLimited == -32004 && code::kUnavailable == -32005 &&
                  code::kVersionMismatch == -32006 &&
                  code::kRequestCancelled == -32800,
              "WEFT_ABI_CODES are weft::code's values");

std::string build() {
  std::string s = "{\"constants\":{";
  bool first = true;
  auto add = [&](const char* name, double v) {
    if (!first) s += ',';
    first = false;
    s += '"';
    s += name;
    s += "\":";
    const auto i = static_cast<long long>(v);
    s += static_cast<double>(i) == v ? std::to_string(i) : std::to_string(v);
  };
#define WEFT_ABI_ADD(name, value) add(#name, value);
  WEFT_ABI_VALUE_KINDS(WEFT_ABI_ADD)
  WEFT_ABI_DESC(WEFT_ABI_ADD)
  WEFT_ABI_REC(WEFT_ABI_ADD)
  WEFT_ABI_BATCH(WEFT_ABI_ADD)
  WEFT_ABI_MSG_KINDS(WEFT_ABI_ADD)
  WEFT_ABI_ID_KINDS(WEFT_ABI_ADD)
  WEFT_ABI_PAY(WEFT_ABI_ADD)
  WEFT_ABI_DISPATCH(WEFT_ABI_ADD)
  WEFT_ABI_TIMEOUT(WEFT_ABI_ADD)
  WEFT_ABI_ROLES(WEFT_ABI_ADD)
  WEFT_ABI_STATUS(WEFT_ABI_ADD)
  WEFT_ABI_STREAM(WEFT_ABI_ADD)
  WEFT_ABI_METRICS(WEFT_ABI_ADD)
#undef WEFT_ABI_ADD
  s += "},\"codes\":{";
  first = true;
#define WEFT_ABI_ADD(name, value) add(#name, value);
  WEFT_ABI_CODES(WEFT_ABI_ADD)
#undef WEFT_ABI_ADD
  s += "},\"diagnostics\":[";
  first = true;
#define WEFT_ABI_ADD(name) s += first ? "\"" #name "\"" : ",\"" #name "\""; first = false;
  WEFT_ABI_DIAGNOSTICS(WEFT_ABI_ADD)
#undef WEFT_ABI_ADD
  s += "],\"paramTypes\":[";
  first = true;
#define WEFT_ABI_ADD(name, text) s += first ? "\"" text "\"" : ",\"" text "\""; first = false;
  WEFT_ABI_PARAM_TYPES(WEFT_ABI_ADD)
#undef WEFT_ABI_ADD
  s += "]}";
  return s;
}

const std::string& abi_json() {
  static const std::string s = build();
  return s;
}

}  // namespace

extern "C" {
EMSCRIPTEN_KEEPALIVE const char* weft_abi() { return abi_json().c_str(); }
EMSCRIPTEN_KEEPALIVE double weft_abi_length() { return static_cast<double>(abi_json().size()); }
// FNV-1a (32 bits) of weft_abi()'s text: cheap to compute on both sides.
EMSCRIPTEN_KEEPALIVE double weft_abi_hash() {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : abi_json()) h = (h ^ c) * 16777619u;
  return static_cast<double>(h);
}
EMSCRIPTEN_KEEPALIVE const char* weft_version() { return weft::version(); }
}
