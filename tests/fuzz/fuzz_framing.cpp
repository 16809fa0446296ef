// fuzz_framing.cpp — libFuzzer target for the frame decoders (weft/framing.h).
//
// Input layout: byte 0 picks the framing (bits 0-1), max_frame (bits 2-4) and
// max_header (bits 5-7) from small values so the limit paths are reached
// often. The rest is a sequence of [n][n stream bytes]: each n (1..128) is the
// size of the next chunk, so the fuzzer controls where the stream is split.
//
// Oracles beyond "no crash / no sanitizer report":
//  * chunking must not change the events: the same stream fed in one piece
//    must produce exactly the same frames and errors (codes, offsets);
//  * no frame is longer than max_frame;
//  * after finish() the decoder is idle;
//  * a third pass with timeouts (expire between chunks) must not crash;
//  * zstd (docs/framing.md "Compression", when built with libzstd): every
//    frame, behind the zstd magic number, is decompressed with max_frame as
//    the bound: it fails with -32600/-32700 and a message, or yields at most
//    max_frame bytes (Z4, Z5); and a frame compressed by us decompresses back
//    to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "framing/zstd.h"
#include "weft/framing.h"

namespace {

// The decompression oracles above, on one frame.
void check_zstd(std::string_view p, std::size_t max_frame) {
  static weft::detail::Zstd z;  // contexts are reused across frames, as a Connection does
  if (!weft::detail::zstd_built()) return;
  std::string framed = "\x28\xB5\x2F\xFD", out;
  framed.append(p);
  if (auto r = z.decompress(framed, max_frame, out); r.ok()) {
    if (out.size() > max_frame) std::abort();
  } else if ((r.error().code != weft::code::kParseError && r.error().code != weft::code::kInvalidRequest) ||
             r.error().message.empty() || !out.empty()) {
    std::abort();
  }
  std::string packed;
  if (!z.compress(p, packed) || !weft::detail::is_zstd_frame(packed)) std::abort();
  if (!z.decompress(packed, p.size(), out).ok() || out != p) std::abort();
}

struct Recorder : weft::FrameHandler {
  std::size_t max_frame = 0;
  std::string log;  // a flat transcript of the events
  bool zstd = false;  // run check_zstd on each frame
  void on_frame(std::string_view p) override {
    if (p.size() > max_frame) std::abort();
    log += "F" + std::to_string(p.size()) + ":";
    log.append(p);
    if (zstd) check_zstd(p, max_frame);
  }
  void on_frame_error(const weft::FrameError& e) override {
    if (e.error.message.empty()) std::abort();
    log += "E" + std::to_string(e.error.code) + "@" + std::to_string(e.offset) +
           (e.reply ? "r" : "-");
  }
};

constexpr std::size_t kFrames[8] = {0, 1, 2, 4, 7, 16, 64, 1000};
constexpr std::size_t kHeaders[8] = {0, 1, 8, 19, 21, 32, 64, 8192};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t sel = data[0];
  const weft::Framing f = static_cast<weft::Framing>(sel & 3);
  weft::FramingLimits limits;
  limits.max_frame = kFrames[(sel >> 2) & 7];
  limits.max_header = kHeaders[(sel >> 5) & 7];
  limits.read_timeout = 10;

  // Split the rest into chunks; the stream is the chunks' bytes.
  std::vector<std::string_view> chunks;
  std::string stream;
  for (std::size_t i = 1; i < size;) {
    const std::size_t n = 1 + data[i++] % 128;
    const std::size_t take = n < size - i ? n : size - i;
    chunks.emplace_back(reinterpret_cast<const char*>(data + i), take);
    stream.append(chunks.back());
    i += take;
  }

  Recorder chunked, whole, timed;
  chunked.max_frame = whole.max_frame = timed.max_frame = limits.max_frame;
  chunked.zstd = true;

  auto a = weft::make_decoder(f, limits);
  for (auto c : chunks) a->feed(c, 0, chunked);
  a->finish(chunked);
  if (!a->idle()) std::abort();

  auto b = weft::make_decoder(f, limits);
  b->feed(stream, 0, whole);
  b->finish(whole);
  if (chunked.log != whole.log) std::abort();

  // Timeouts: the clock advances 4 ms per chunk, so frames spanning 3+ chunks expire.
  auto c = weft::make_decoder(f, limits);
  weft::Millis now = 0;
  for (auto ch : chunks) {
    c->feed(ch, now, timed);
    now += 4;
    if (auto d = c->deadline(); d && *d <= now) {
      c->expire(now, timed);
      if (!c->idle() || c->deadline()) std::abort();
    }
  }
  c->finish(timed);
  if (!c->idle()) std::abort();

  // Encoding any payload must produce something the decoder reads back.
  if (f != weft::Framing::Ndjson && stream.size() <= limits.max_frame) {
    std::string wire;
    weft::encode_frame(f, stream, wire);
    Recorder back;
    back.max_frame = limits.max_frame;
    limits.max_header = 8192;
    auto d = weft::make_decoder(f, limits);
    d->feed(wire, 0, back);
    d->finish(back);
    if (back.log != "F" + std::to_string(stream.size()) + ":" + stream) std::abort();
  }
  return 0;
}
