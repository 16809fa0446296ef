// Compressor: the rules of docs/framing.md "Compression" (Z2–Z5) over the
// libzstd contexts of framing/zstd.h (weft/compression.h).
#include "weft/compression.h"

#include <algorithm>

#include "framing/zstd.h"

namespace weft {

bool compression_available(std::string_view algorithm) { return algorithm == "zstd" && detail::zstd_built(); }

Compressor::Compressor(const std::vector<std::string>& algorithms) : z_(std::make_unique<detail::Zstd>()) {
  for (const auto& a : algorithms)
    if (compression_available(a) && std::find(algorithms_.begin(), algorithms_.end(), a) == algorithms_.end())
      algorithms_.push_back(a);
  zstd_ = std::find(algorithms_.begin(), algorithms_.end(), "zstd") != algorithms_.end();
}

Compressor::~Compressor() = default;

Handshake Compressor::offer(Handshake h) const {
  auto& caps = h.capabilities;
  caps.erase(std::remove(caps.begin(), caps.end(), "compression"), caps.end());
  if (!algorithms_.empty()) caps.push_back("compression");
  h.compression_preference = algorithms_;
  h.compression_used.clear();
  return h;
}

bool Compressor::agreed(const std::optional<Handshake>& agreed) const {
  return zstd_ && agreed && agreed->compression_used == "zstd";
}

bool Compressor::is_compressed(std::string_view payload) { return detail::is_zstd_frame(payload); }

bool Compressor::compress(std::string_view payload, std::string& out) {
  // Z2: over 1 KiB, and only when that is smaller (the receiver tells the
  // two apart by the magic number either way, Z3).
  if (!zstd_ || payload.size() <= kCompressOver) return false;
  const std::size_t at = out.size();
  if (!z_->compress(payload, out)) return false;
  if (out.size() - at < payload.size()) return true;
  out.resize(at);
  return false;
}

Result<void> Compressor::decompress(std::string_view payload, std::size_t max, std::string& out) {
  return z_->decompress(payload, max, out);
}

}  // namespace weft
