// framing_detail.h — private pieces shared by the framing decoders
// (framing.cpp, framing_lsp.cpp) and by tests that need to look inside.
//
// Every decoder derives from DecoderBase, which owns what all framings share:
// the stream offset, the read timer of the frame in progress (docs/framing.md
// F3: 30 s per frame) and the error reports. Subclasses own their state machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "weft/framing.h"

namespace weft::detail {

class DecoderBase : public FrameDecoder {
 public:
  explicit DecoderBase(FramingLimits limits) : limits_(limits) {}

  // docs/framing.md F4: EOF inside a payload is -32700 "length mismatch", in
  // one wording for every framing.
  static std::string body_eof(std::size_t got, std::size_t need) {
    return "length mismatch: EOF after " + std::to_string(got) + " of " + std::to_string(need) + " bytes";
  }

  std::optional<Millis> deadline() const final {
    if (idle() || limits_.read_timeout <= 0) return std::nullopt;
    return started_at_ + limits_.read_timeout;
  }

  // docs/framing.md F3: a timed-out partial frame is discarded and logged, and
  // the stream goes on. reply=false because there is no request to answer,
  // only something to log.
  void expire(Millis now, FrameHandler& h) final {
    auto d = deadline();
    if (!d || now < *d) return;
    const std::uint64_t k = offset_ - frame_start_;
    reset();
    report(h, code::kParseError,
           "read timeout: discarded partial frame after " + std::to_string(k) + " bytes",
           offset_, false);
  }

  // Bytes of heap the decoder holds (buffer capacities). Tests use it to
  // prove that oversized payloads stream past without being buffered.
  virtual std::size_t memory_footprint() const = 0;

 protected:
  // Drops the frame in progress (buffers, skip and resync state): idle() is
  // true afterwards. Used by expire() and finish().
  virtual void reset() = 0;

  // The first byte of a new frame is at stream offset `at`: start its timer.
  void begin_frame(std::uint64_t at, Millis now) {
    frame_start_ = at;
    started_at_ = now;
  }

  static void report(FrameHandler& h, int code, std::string message, std::uint64_t at,
                     bool reply = true) {
    // Built in place: assigning an Error would move its optional<json>, which
    // GCC 12 flags with a false -Wmaybe-uninitialized.
    const FrameError e{Error(code, std::move(message)), at, reply};
    h.on_frame_error(e);
  }

  // Keeps a buffer's capacity for reuse, unless one huge frame inflated it: a
  // long-lived daemon should not pin max_frame bytes per connection forever.
  static void recycle(std::string& buf) {
    buf.clear();
    if (buf.capacity() > kKeepCapacity) std::string().swap(buf);
  }
  static constexpr std::size_t kKeepCapacity = 256 * 1024;

  // A payload whose length is known streams through these two, in every
  // framing: Body collects a frame split across chunks, Skip lets an
  // oversized one stream past unread (docs/framing.md F2).
  // Body: takes what the frame still needs from d[p, n); true once complete
  // (the caller leaves its Body state, then calls deliver_body).
  bool take_body(const char* d, std::size_t n, std::size_t& p) {
    const std::size_t take = n - p < need_ - body_.size() ? n - p : need_ - body_.size();
    body_.append(d + p, take);
    p += take;
    return body_.size() == need_;
  }
  void deliver_body(FrameHandler& h) {
    h.on_frame(body_);
    recycle(body_);
  }
  // Skip: discards from [p, n); true once the whole frame has gone by.
  bool take_skip(std::size_t n, std::size_t& p) {
    const auto take = static_cast<std::size_t>(n - p < skip_ ? n - p : skip_);
    skip_ -= take;
    p += take;
    return skip_ == 0;
  }

  FramingLimits limits_;
  std::uint64_t offset_ = 0;       // stream offset of the next byte fed
  std::uint64_t frame_start_ = 0;  // stream offset of the frame in progress
  Millis started_at_ = 0;          // `now` when that frame's first byte came
  std::string body_;               // Body: partial payload carried between chunks (<= max_frame)
  std::size_t need_ = 0;           // Body: its length
  std::uint64_t skip_ = 0;         // Skip: bytes still to discard
};

std::unique_ptr<FrameDecoder> make_lsp_decoder(FramingLimits limits);

// Tests: the decoder's heap footprint (see DecoderBase::memory_footprint).
inline std::size_t decoder_memory(const FrameDecoder& d) {
  return static_cast<const DecoderBase&>(d).memory_footprint();
}

}  // namespace weft::detail
