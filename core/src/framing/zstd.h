// Private: zstd compression of whole frame payloads, for Connection
// (docs/framing.md, "Compression"). Built with libzstd when CMake found it
// (WEFT_HAVE_ZSTD); otherwise every function reports that zstd is missing, so
// the WebAssembly build compiles the same Connection without it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "weft/error.h"

namespace weft::detail {

// True when this build has libzstd.
bool zstd_built();

// A zstd frame begins with the magic number 0xFD2FB528, little-endian:
// 28 B5 2F FD (RFC 8878 §3.1.1). No JSON text begins with 0x28 '(' and no
// MessagePack message does either (0x28 is a positive fixint, never a
// map or array), so the first four bytes tell a compressed payload apart.
inline bool is_zstd_frame(std::string_view p) {
  return p.size() >= 4 && static_cast<unsigned char>(p[0]) == 0x28 && static_cast<unsigned char>(p[1]) == 0xB5 &&
         static_cast<unsigned char>(p[2]) == 0x2F && static_cast<unsigned char>(p[3]) == 0xFD;
}

// One compression and one decompression context, reused frame after frame
// (allocating them costs more than compressing a small payload).
class Zstd {
 public:
  Zstd();
  ~Zstd();
  Zstd(const Zstd&) = delete;
  Zstd& operator=(const Zstd&) = delete;

  // Appends one zstd frame holding `in` (content size recorded) to `out`.
  // False when zstd is not built or failed; `out` is then unchanged.
  bool compress(std::string_view in, std::string& out);

  // Replaces `out` with the content of the one zstd frame `in`, which must
  // decompress to at most `max` bytes. Memory stays bounded by `max` whatever
  // the frame claims: a declared content size over `max` is refused before
  // any work, an undeclared one is decompressed in steps and refused as soon
  // as it passes `max`, and the window is capped at max(`max`, 8 MiB). Errors:
  //  -32600 "Invalid Request: decompressed frame exceeds M bytes (max_frame)",
  //         or "... compressed frame needs a window over W bytes (the larger
  //         of max_frame and 8 MiB)"
  //  -32700 "Parse error: compressed frame: <what>" (corrupt, truncated,
  //         bytes after the frame, or zstd missing from this build)
  Result<void> decompress(std::string_view in, std::size_t max, std::string& out);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> z_;
};

}  // namespace weft::detail
