// The MessagePack decoder's guard against msgpack-cxx's one throw: finding an
// ext32 header that announces 0xffffffff bytes before the parser sees it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "codec/msgpack_detail.h"

namespace weft::detail {
namespace {

// Whether the bytes c9 ff ff ff ff occur in p[0, len). memchr finds each c9;
// in a run of c9 bytes only the last can start the pattern, so the run is
// skipped in a tight loop (string_view::find called memchr once per byte of
// such a run: a 64 KiB `bin` of 0xc9 cost 2.9 M instructions to scan).
bool has_ext32_max_header(const unsigned char* p, std::size_t len) {
  const unsigned char* const e = p + len;
  const unsigned char* q = p;
  while (e - q >= 5) {
    q = static_cast<const unsigned char*>(std::memchr(q, 0xc9, static_cast<std::size_t>(e - q) - 4));
    if (!q) return false;
    while (e - q >= 6 && q[1] == 0xc9) ++q;
    if (e - q >= 5 && q[1] == 0xff && q[2] == 0xff && q[3] == 0xff && q[4] == 0xff) return true;
    ++q;
  }
  return false;
}

}  // namespace

// See msgpack_detail.h.
std::size_t ext32_overflow_at(const unsigned char* p, std::size_t len) {
  if (!has_ext32_max_header(p, len)) return std::string_view::npos;

  auto be = [&](std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v = (v << 8) | p[at + k];
    return v;
  };
  constexpr std::uint64_t kCap = std::uint64_t{1} << 62;  // "more than can exist"
  std::uint64_t pending = 1;  // values still to be read
  std::size_t i = 0;
  while (pending > 0 && i < len) {
    const unsigned char b = p[i];
    --pending;
    std::size_t head = 1;        // header bytes, including b
    int len_bytes = 0;           // size of the length field after b
    std::uint64_t payload = 0;   // bytes after the header
    std::uint64_t children = 0;  // nested values that follow
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
    } else if (b >= 0xa0 && b <= 0xbf) {
      payload = b & 0x1f;
    } else if (b >= 0x90 && b <= 0x9f) {
      children = b & 0x0f;
    } else if (b >= 0x80 && b <= 0x8f) {
      children = 2u * (b & 0x0f);
    } else {
      switch (b) {
        case 0xc4: case 0xd9: len_bytes = 1; break;  // bin8, str8
        case 0xc5: case 0xda: len_bytes = 2; break;  // bin16, str16
        case 0xc6: case 0xdb: len_bytes = 4; break;  // bin32, str32
        case 0xc7: len_bytes = 1; payload = 1; break;  // ext8: + type byte
        case 0xc8: len_bytes = 2; payload = 1; break;  // ext16
        case 0xc9: len_bytes = 4; payload = 1; break;  // ext32
        case 0xca: case 0xce: case 0xd2: payload = 4; break;
        case 0xcb: case 0xcf: case 0xd3: payload = 8; break;
        case 0xcc: case 0xd0: payload = 1; break;
        case 0xcd: case 0xd1: payload = 2; break;
        case 0xd4: payload = 2; break;   // fixext 1
        case 0xd5: payload = 3; break;   // fixext 2
        case 0xd6: payload = 5; break;   // fixext 4
        case 0xd7: payload = 9; break;   // fixext 8
        case 0xd8: payload = 17; break;  // fixext 16
        case 0xdc: case 0xde: len_bytes = 2; break;  // array16, map16
        case 0xdd: case 0xdf: len_bytes = 4; break;  // array32, map32
        default: return std::string_view::npos;      // 0xc1: the parser reports it
      }
    }
    head += static_cast<std::size_t>(len_bytes);
    if (len - i < head) return std::string_view::npos;  // truncated: parser reports it
    if (len_bytes > 0) {
      const std::uint64_t n = be(i + 1, len_bytes);
      if (b == 0xc9 && n == 0xffffffffu) return i;
      if (b == 0xdc || b == 0xdd) children = n;
      else if (b == 0xde || b == 0xdf) children = 2 * n;
      else payload += n;
    }
    if (payload > len - i - head) return std::string_view::npos;
    i += head + static_cast<std::size_t>(payload);
    pending = pending + children > kCap ? kCap : pending + children;
  }
  return std::string_view::npos;
}

}  // namespace weft::detail
