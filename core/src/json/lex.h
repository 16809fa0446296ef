// Private to the JSON parser (parse.cpp, parser.h): its small helpers, a hex
// digit's value, a code point as UTF-8, a number's text as a double, a byte as
// shown in an error message. In a header, not a .cpp of their own: the parser
// calls them per escape and per number, and the native build has no link-time
// optimisation to inline them across translation units. In the anonymous
// namespace (internal linkage): the compiler inlines them as it would any
// function private to one file.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#if !defined(_LIBCPP_VERSION)
#include <charconv>
#define WEFT_FLOAT_FROM_CHARS 1  // libstdc++ has it; libc++ 14 (Emscripten 3.1.6) does not
#else
#include <clocale>
#endif

namespace weft::detail {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A byte for an error message: 'c' when printable ASCII, else \xHH (the
// message travels inside a JSON error object; raw bad bytes must not).
std::string show(unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  return std::string("\\x") + kHex[c >> 4] + kHex[c & 0xf];
}

double to_double(const char* b, const char* e, bool& ok) {
#ifdef WEFT_FLOAT_FROM_CHARS
  double d = 0;
  auto r = std::from_chars(b, e, d);
  if (r.ec == std::errc()) {
    ok = std::isfinite(d);
    return d;
  }
  // Out of range: overflow (refused: RFC 8259 §6 lets us) or underflow, which
  // strtod rounds to zero or a subnormal as every JSON parser does; ask it.
  std::string s(b, e);
  d = std::strtod(s.c_str(), nullptr);
  ok = std::isfinite(d);
  return d;
#else
  // strtod reads the C locale's decimal point; a host may have set another.
  std::string s(b, e);
  const char point = *std::localeconv()->decimal_point;
  if (point != '.')
    for (char& c : s)
      if (c == '.') c = point;
  double d = std::strtod(s.c_str(), nullptr);
  ok = std::isfinite(d);
  return d;
#endif
}

}  // namespace
}  // namespace weft::detail
