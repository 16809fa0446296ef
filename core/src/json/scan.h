// Private: finding the end of a plain run inside a JSON string, many bytes
// at a time. Both the parser (parse.cpp) and the writer (write.h) spend
// their time on long strings here, so it is the one place that is fast.
//
// A byte is *special* when a JSON string cannot hold it as is, or when it
// starts something to look at: '"', '\\', a control byte (< 0x20, which
// RFC 8259 §7 says must be escaped) or a byte >= 0x80 (the start or the
// inside of a UTF-8 sequence, to be checked by utf8.h). Every other byte is
// printable ASCII and is copied unchanged by both directions.
//
// find_special() scans 64 bytes per step with AVX2 (long strings, CPUs that
// have it), 64 and 16 with SSE2 (every x86-64), 8 bytes per step with a
// portable word trick (what WebAssembly gets: the module is built without
// SIMD), and one byte per step for the last few.
// Each stage is callable on its own so the tests can hold every one of them
// to the byte-by-byte answer (json_parse_test.cpp), whatever the build uses.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace weft::detail {

inline bool is_special(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

// The reference: the first special byte in [p, e), or e.
inline const char* find_special_bytes(const char* p, const char* e) {
  while (p < e && !is_special(static_cast<unsigned char>(*p))) ++p;
  return p;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WEFT_SCAN_SWAR 1
// Eight bytes at a time, as one little-endian word: the classic "has a byte
// less than n" and "has a zero byte" (after xor) tests set the top bit of a
// flagged byte, and a set top bit is itself a byte >= 0x80. A borrow can also
// flag bytes *above* a true hit, never below one, so the lowest flagged byte
// is exactly the first special byte. Returns where it stopped: a special
// byte, or fewer than 8 bytes before e.
inline const char* find_special_swar(const char* p, const char* e) {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  while (e - p >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    const std::uint64_t q = w ^ (ones * '"');
    const std::uint64_t b = w ^ (ones * '\\');
    const std::uint64_t hit = (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) | w) & highs;
    if (hit != 0) return p + (__builtin_ctzll(hit) >> 3);
    p += 8;
  }
  return p;
}
#endif

#if defined(__SSE2__)
#define WEFT_SCAN_SSE2 1
// 16 bytes at a time, 64 while nothing is found. Returns where it stopped: a
// special byte, or fewer than 16 bytes before e.
inline const char* find_special_sse2(const char* p, const char* e) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  // Signed compare: bytes >= 0x80 are negative, so "< 0x20" catches them too.
  auto hits = [&](const char* at) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    return _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                        _mm_cmplt_epi8(v, space));
  };
  while (e - p >= 64) {
    const __m128i a = hits(p), b = hits(p + 16), c = hits(p + 32), d = hits(p + 48);
    if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) != 0) break;
    p += 64;
  }
  while (e - p >= 16) {
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hits(p)));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
  return p;
}
#endif

#if defined(WEFT_SCAN_SSE2) && defined(__x86_64__) && !defined(__AVX2__) && (defined(__GNUC__) || defined(__clang__))
#define WEFT_SCAN_AVX2 1
// 64 bytes per step with AVX2, for the long strings (a 64 KiB echo) on CPUs
// that have it: the build targets plain x86-64, so this one function is
// compiled for AVX2 and chosen at run time. Returns where it stopped: a
// special byte, or fewer than 64 bytes before e.
__attribute__((target("avx2"))) inline __m256i special_bytes_avx2(const char* at) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  return _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')),
                                         _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))),
                         _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v));  // signed: bytes >= 0x80 too
}

__attribute__((target("avx2"))) inline const char* find_special_avx2(const char* p, const char* e) {
  while (e - p >= 64) {
    const __m256i a = special_bytes_avx2(p), b = special_bytes_avx2(p + 32);
    if (_mm256_movemask_epi8(_mm256_or_si256(a, b)) != 0) {
      const unsigned ma = static_cast<unsigned>(_mm256_movemask_epi8(a));
      if (ma != 0) return p + __builtin_ctz(ma);
      return p + 32 + __builtin_ctz(static_cast<unsigned>(_mm256_movemask_epi8(b)));
    }
    p += 64;
  }
  return p;
}

inline bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

// The first special byte in [p, e), or e.
inline const char* find_special(const char* p, const char* e) {
#ifdef WEFT_SCAN_SSE2
  // Most strings are short (member names, methods): look at 16 bytes first.
  if (e - p >= 16) {
    const char* q = find_special_sse2(p, p + 16);
    if (q != p + 16) return q;
    p += 16;
  }
#ifdef WEFT_SCAN_AVX2
  if (e - p >= 128 && cpu_has_avx2()) p = find_special_avx2(p, e);
#endif
  p = find_special_sse2(p, e);
  if (e - p >= 16) return p;
#endif
#ifdef WEFT_SCAN_SWAR
  p = find_special_swar(p, e);
  if (e - p >= 8) return p;
#endif
  return find_special_bytes(p, e);
}

}  // namespace weft::detail
