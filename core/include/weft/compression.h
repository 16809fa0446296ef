// weft/compression.h — zstd compression of whole message payloads, by the
// rules of docs/framing.md "Compression" (Z2–Z5), for every transport that
// carries them: Connection uses it on the length-prefixed framings, and the
// native host on WebSocket frames and HTTP bodies. One code path, so the
// 1 KiB threshold, the zip-bomb bound and the error messages are the same
// everywhere.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/error.h"
#include "weft/peer.h"

namespace weft {

namespace detail {
class Zstd;
}

// Payloads larger than this are compressed once compression is agreed
// (docs/framing.md Z2: frames over 1 KiB).
inline constexpr std::size_t kCompressOver = 1024;

// Whether this build can compress with `algorithm` ("zstd": libzstd found).
bool compression_available(std::string_view algorithm);

// One side's compression: the algorithms it can use, and the zstd contexts
// reused payload after payload. Not thread-safe (one per connection).
class Compressor {
 public:
  // `algorithms` in preference order; what this build cannot use
  // (compression_available) and repeats are dropped.
  explicit Compressor(const std::vector<std::string>& algorithms = {});
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // The algorithms left, in preference order; empty: no compression.
  const std::vector<std::string>& algorithms() const { return algorithms_; }
  // True when zstd is one of them: compressed payloads are accepted (Z3).
  bool enabled() const { return zstd_; }
  // `h` with this side's offer (docs/protocol.md "Compression"): the
  // "compression" capability and `compression_preference` when an algorithm
  // is left, neither otherwise; `compression_used` cleared.
  Handshake offer(Handshake h) const;
  // True when `agreed` (Peer::agreed) settled on zstd and this side has it.
  bool agreed(const std::optional<Handshake>& agreed) const;

  // Z3: the payload begins with the zstd frame magic number 28 B5 2F FD.
  static bool is_compressed(std::string_view payload);
  // Z2: when `payload` is over kCompressOver bytes and its zstd frame (level
  // 1, content checksum) is smaller, appends that frame to `out` and returns
  // true; otherwise returns false and leaves `out` as it was.
  bool compress(std::string_view payload, std::string& out);
  // Z4, Z5: replaces `out` with the content of the one zstd frame `payload`,
  // at most `max` bytes. Errors: -32600 "Invalid Request: decompressed frame
  // exceeds M bytes (max_frame)" (or needs too large a window), -32700
  // "Parse error: compressed frame: WHAT".
  Result<void> decompress(std::string_view payload, std::size_t max, std::string& out);

 private:
  std::vector<std::string> algorithms_;
  bool zstd_ = false;
  std::unique_ptr<detail::Zstd> z_;
};

}  // namespace weft
