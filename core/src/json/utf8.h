// Private: the one UTF-8 well-formedness rule of the core (RFC 3629 §4,
// Unicode table 3-7): no overlong forms, no surrogates (U+D800..U+DFFF),
// nothing above U+10FFFF. The JSON parser, the JSON writer and the MessagePack
// decoder all judge strings by it.
#pragma once

#include <cstddef>

namespace weft::detail {

// Length (2-4) of the well-formed multi-byte sequence starting at p (< e), or
// 0; then `bad` is the offset from p of the first byte that makes it
// ill-formed (0: the lead byte itself; an offset reaching e: truncated).
inline std::size_t utf8_sequence(const unsigned char* p, const unsigned char* e, std::size_t& bad) {
  const unsigned c = p[0];
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  std::size_t n;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    bad = 0;
    return 0;
  }
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned b = p + k < e ? p[k] : 0;
    if (p + k >= e || b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) {
      bad = k;
      return 0;
    }
  }
  return n;
}

}  // namespace weft::detail
