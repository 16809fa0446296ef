// zstd compression of frame payloads (zstd.h; docs/framing.md, "Compression").
#include "framing/zstd.h"

#include <algorithm>
#include <cstdint>

#if defined(WEFT_HAVE_ZSTD)
#include <zstd.h>
#include <zstd_errors.h>
#endif

namespace weft::detail {

namespace {
Error corrupt(const std::string& what) { return Error(code::kParseError, "Parse error: compressed frame: " + what); }
}  // namespace

#if defined(WEFT_HAVE_ZSTD)

namespace {
Error too_big(std::size_t max) {
  return Error(code::kInvalidRequest,
               "Invalid Request: decompressed frame exceeds " + std::to_string(max) + " bytes (max_frame)");
}
}  // namespace

struct Zstd::Contexts {
  ZSTD_CCtx* c = nullptr;
  ZSTD_DCtx* d = nullptr;
  ~Contexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};

bool zstd_built() { return true; }

Zstd::Zstd() : z_(std::make_unique<Contexts>()) {}
Zstd::~Zstd() = default;

bool Zstd::compress(std::string_view in, std::string& out) {
  if (!z_->c) {
    if (!(z_->c = ZSTD_createCCtx())) return false;
    // Level 1: frames are compressed on the connection's one thread, so
    // speed matters more than the last percent. The content checksum (4
    // bytes) lets the receiver tell a damaged frame from a valid one (Z5).
    ZSTD_CCtx_setParameter(z_->c, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(z_->c, ZSTD_c_checksumFlag, 1);
  }
  const std::size_t at = out.size();
  out.resize(at + ZSTD_compressBound(in.size()));
  const std::size_t n = ZSTD_compress2(z_->c, out.data() + at, out.size() - at, in.data(), in.size());
  if (ZSTD_isError(n)) {
    out.resize(at);
    return false;
  }
  out.resize(at + n);
  return true;
}

Result<void> Zstd::decompress(std::string_view in, std::size_t max, std::string& out) {
  out.clear();
  const unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) return corrupt("not a valid zstd frame header");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > max) return too_big(max);
  if (!z_->d && !(z_->d = ZSTD_createDCtx())) return corrupt("out of memory");
  ZSTD_DCtx_reset(z_->d, ZSTD_reset_session_and_parameters);
  // The window is the memory a frame makes the decoder hold. Capped at the
  // larger of max_frame and 8 MiB: zstd's levels 1 to 19 never ask for more
  // (a streaming compressor, e.g. the zstd tool reading a pipe, asks for
  // the level's full window whatever the content), only --ultra and --long.
  int window_log = 23;
  while (window_log < 31 && (std::size_t{1} << window_log) < max) ++window_log;
  ZSTD_DCtx_setParameter(z_->d, ZSTD_d_windowLogMax, window_log);

  ZSTD_inBuffer src{in.data(), in.size(), 0};
  // Grow the output in steps; max + 1 bytes of room tells "exactly max" from "more".
  const std::size_t cap = max < SIZE_MAX / 2 ? max + 1 : SIZE_MAX / 2;
  std::size_t room = declared != ZSTD_CONTENTSIZE_UNKNOWN ? static_cast<std::size_t>(declared) + 1
                                                          : std::min<std::size_t>(cap, 64 * 1024);
  std::size_t produced = 0;
  for (;;) {
    out.resize(room);
    ZSTD_outBuffer dst{out.data(), out.size(), produced};
    const std::size_t r = ZSTD_decompressStream(z_->d, &dst, &src);
    produced = dst.pos;
    if (ZSTD_isError(r)) {
      out.clear();
      if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
        return Error(code::kInvalidRequest, "Invalid Request: compressed frame needs a window over " +
                                                std::to_string(std::size_t{1} << window_log) +
                                                " bytes (the larger of max_frame and 8 MiB)");
      return corrupt(ZSTD_getErrorName(r));
    }
    if (produced > max) {
      out.clear();
      return too_big(max);
    }
    if (r == 0) {  // the frame is complete
      out.resize(produced);
      if (src.pos != src.size) {
        out.clear();
        return corrupt("bytes after the end of the zstd frame");
      }
      return {};
    }
    if (dst.pos < dst.size && src.pos == src.size) {
      out.clear();
      return corrupt("truncated zstd frame");
    }
    if (dst.pos == dst.size) {
      if (room == cap) {  // only when max is near SIZE_MAX: no more room to give
        out.clear();
        return too_big(max);
      }
      room = std::min<std::size_t>(cap, room * 2);
    }
  }
}

#else  // no libzstd in this build (WebAssembly)

struct Zstd::Contexts {};
bool zstd_built() { return false; }
Zstd::Zstd() = default;
Zstd::~Zstd() = default;
bool Zstd::compress(std::string_view, std::string&) { return false; }
Result<void> Zstd::decompress(std::string_view, std::size_t, std::string& out) {
  out.clear();
  return corrupt("zstd is not available in this build");
}

#endif

}  // namespace weft::detail
