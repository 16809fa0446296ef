// framing.cpp — framing names, frame encoders, and the Ndjson and Len32
// decoders. The Lsp decoder lives in framing_lsp.cpp.
//
// Shared rules (docs/framing.md F1-F7 apply to every framing, not only Lsp):
//  * A frame that lies wholly inside the chunk given to feed() is delivered as
//    a view into that chunk: no copy, no allocation. Only a frame split across
//    chunks is buffered, in a buffer that is reused from frame to frame.
//  * A payload over max_frame is -32600 (reply=true) and is skipped as it
//    streams past, never buffered (docs/framing.md F2).
//  * Errors are not sticky: after reporting, the decoder resynchronises.
//  * FrameError::offset is the stream offset of the byte whose arrival revealed
//    the problem; for finish() and expire() it is the number of bytes fed.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "framing/detail.h"

namespace weft {
namespace detail {
namespace {

// ---------------------------------------------------------------------------
// Ndjson: one message per '\n'-terminated line (MCP stdio transport).
//
// Whitespace (SP, HTAB, CR, LF) between messages is skipped without starting a
// frame: that is what makes blank lines disappear, and it means leading
// whitespace of a line is not part of the payload (JSON ignores it anyway,
// RFC 8259 §2). A frame starts at the first other byte and ends at '\n'; one
// trailing '\r' is stripped so "\r\n" line ends work.
class NdjsonDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;
  Framing framing() const override { return Framing::Ndjson; }
  bool idle() const override { return state_ == State::Idle; }
  std::size_t memory_footprint() const override { return line_.capacity(); }

  void feed(std::string_view bytes, Millis now, FrameHandler& h) override {
    const char* d = bytes.data();
    const std::size_t n = bytes.size();
    const std::uint64_t base = offset_;
    std::size_t p = 0;
    while (p < n) {
      if (state_ == State::Idle) {
        while (p < n && is_ws(d[p])) ++p;
        if (p == n) break;
        begin_frame(base + p, now);
        state_ = State::Line;
      }
      const void* nl = std::memchr(d + p, '\n', n - p);
      const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - d) : n;
      if (state_ == State::Skip) {  // rest of an oversized line
        if (nl) state_ = State::Idle;
        p = nl ? end + 1 : n;
        continue;
      }
      const std::string_view seg(d + p, end - p);
      const std::size_t bad = oversize_at(seg);
      if (bad != kNone) {
        report(h, code::kInvalidRequest,
               "line longer than max_frame (" + std::to_string(limits_.max_frame) + " bytes)",
               frame_start_ + bad);
        recycle(line_);
        state_ = nl ? State::Idle : State::Skip;
        p = nl ? end + 1 : n;
        continue;
      }
      if (!nl) {  // partial line: keep it for the next chunk
        line_.append(seg);
        p = n;
        break;
      }
      state_ = State::Idle;
      p = end + 1;
      if (line_.empty()) {
        h.on_frame(strip_cr(seg));  // fast path: a view into the chunk
      } else {
        line_.append(seg);
        h.on_frame(strip_cr(line_));
        recycle(line_);
      }
    }
    offset_ = base + n;
  }

  // An unterminated last line is still a message (MCP stdio peers may close
  // without a final newline). A line already reported as oversized is not
  // reported again.
  void finish(FrameHandler& h) override {
    if (state_ == State::Line) {
      std::string last;
      last.swap(line_);
      reset();
      h.on_frame(strip_cr(last));
      return;
    }
    reset();
  }

 protected:
  void reset() override {
    recycle(line_);
    state_ = State::Idle;
  }

 private:
  enum class State { Idle, Line, Skip };
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
  static std::string_view strip_cr(std::string_view s) {
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    return s;
  }

  // The line so far is line_ + seg (seg never holds '\n'). Returns the index,
  // from the frame start, of the byte that proves the payload (line without
  // its trailing '\r') is longer than max_frame, or kNone if not proven yet.
  // A byte at index max_frame that is '\r' is undecided until the next byte.
  std::size_t oversize_at(std::string_view seg) const {
    const std::size_t m = limits_.max_frame;
    const std::size_t have = line_.size();
    if (have + seg.size() <= m) return kNone;
    const char c = m < have ? line_[m] : seg[m - have];
    if (c != '\r') return m;
    return have + seg.size() > m + 1 ? m + 1 : kNone;
  }

  State state_ = State::Idle;
  std::string line_;  // partial line carried between chunks
};

// ---------------------------------------------------------------------------
// Len32Be / Len32Le: a 4-byte unsigned length, then that many payload bytes.
class Len32Decoder final : public DecoderBase {
 public:
  Len32Decoder(FramingLimits limits, bool big_endian)
      : DecoderBase(limits), big_endian_(big_endian) {}
  Framing framing() const override { return big_endian_ ? Framing::Len32Be : Framing::Len32Le; }
  bool idle() const override { return state_ == State::Head && head_n_ == 0; }
  std::size_t memory_footprint() const override { return body_.capacity(); }

  void feed(std::string_view bytes, Millis now, FrameHandler& h) override {
    const char* d = bytes.data();
    const std::size_t n = bytes.size();
    const std::uint64_t base = offset_;
    std::size_t p = 0;
    while (p < n) {
      switch (state_) {
        case State::Head: {
          if (head_n_ == 0) begin_frame(base + p, now);
          if (head_n_ == 0 && n - p >= 4) {  // fast path: whole prefix here
            std::memcpy(head_, d + p, 4);
            head_n_ = 4;
            p += 4;
          } else {
            while (p < n && head_n_ < 4) head_[head_n_++] = d[p++];
            if (head_n_ < 4) break;
          }
          start_body(decode(), base + p - 1, d + p, n - p, h, p);
          break;
        }
        case State::Body:
          if (take_body(d, n, p)) {
            state_ = State::Head;
            head_n_ = 0;
            deliver_body(h);
          }
          break;
        case State::Skip:
          if (take_skip(n, p)) {
            state_ = State::Head;
            head_n_ = 0;
          }
          break;
      }
    }
    offset_ = base + n;
  }

  void finish(FrameHandler& h) override {
    std::string msg;
    if (state_ == State::Head && head_n_ > 0) {
      msg = "length mismatch: EOF after " + std::to_string(head_n_) + " of 4 length-prefix bytes";
    } else if (state_ == State::Body) {
      msg = body_eof(body_.size(), need_);
    }
    // State::Skip: the oversized frame was already answered with -32600; a
    // second error for the same frame would make the host answer twice.
    reset();
    if (!msg.empty()) report(h, code::kParseError, std::move(msg), offset_);
  }

 protected:
  void reset() override {
    recycle(body_);
    state_ = State::Head;
    head_n_ = 0;
    skip_ = 0;
  }

 private:
  enum class State { Head, Body, Skip };

  std::uint32_t decode() const {
    const auto b = [this](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(head_[i])); };
    return big_endian_ ? (b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3))
                       : (b(3) << 24 | b(2) << 16 | b(1) << 8 | b(0));
  }

  // The prefix is complete (its last byte at stream offset `at`); `rest`/`left`
  // is what remains of the chunk. Advances `p` past a frame delivered in place.
  void start_body(std::uint32_t len, std::uint64_t at, const char* rest, std::size_t left,
                  FrameHandler& h, std::size_t& p) {
    if (len > limits_.max_frame) {
      report(h, code::kInvalidRequest,
             "frame length " + std::to_string(len) + " exceeds max_frame " +
                 std::to_string(limits_.max_frame),
             at);
      state_ = State::Skip;
      skip_ = len;
      return;
    }
    if (left >= len) {  // fast path (also the empty frame): a view into the chunk
      head_n_ = 0;
      p += len;
      h.on_frame(std::string_view(rest, len));
      return;
    }
    state_ = State::Body;
    need_ = len;
  }

  const bool big_endian_;
  State state_ = State::Head;
  char head_[4] = {};
  int head_n_ = 0;
};

}  // namespace
}  // namespace detail

std::unique_ptr<FrameDecoder> make_decoder(Framing f, FramingLimits limits) {
  switch (f) {
    case Framing::Lsp: return detail::make_lsp_decoder(limits);
    case Framing::Ndjson: return std::make_unique<detail::NdjsonDecoder>(limits);
    case Framing::Len32Be: return std::make_unique<detail::Len32Decoder>(limits, true);
    case Framing::Len32Le: return std::make_unique<detail::Len32Decoder>(limits, false);
  }
  return nullptr;
}

namespace {

// The header of a frame holding `n` payload bytes, written at `out` (room for
// kFrameHeadroom bytes); returns its length.
std::size_t frame_header(Framing f, std::size_t n, char* out) {
  switch (f) {
    case Framing::Lsp: {
      // to_chars, not snprintf: snprintf's format parsing costs about 5% of a
      // stdio server's time.
      std::memcpy(out, "Content-Length: ", 16);
      char* end = std::to_chars(out + 16, out + kFrameHeadroom, n).ptr;
      std::memcpy(end, "\r\n\r\n", 4);
      return static_cast<std::size_t>(end + 4 - out);
    }
    case Framing::Ndjson: return 0;
    case Framing::Len32Be:
    case Framing::Len32Le: {
      const auto v = static_cast<std::uint32_t>(n);
      for (int i = 0; i < 4; ++i) {
        const int shift = f == Framing::Len32Be ? 8 * (3 - i) : 8 * i;
        out[i] = static_cast<char>((v >> shift) & 0xff);
      }
      return 4;
    }
  }
  return 0;
}

}  // namespace

// Lsp: only Content-Length (docs/framing.md L5: Content-Type is optional and
// defaults to application/vscode-jsonrpc; charset=utf-8). Ndjson: the payload
// must not contain '\n'; JSON text from weft's encoder never does (it escapes
// control characters and writes no pretty-print newlines), so no check is made
// here.
// Len32: the payload must fit in 32 bits, as every frame under max_frame does.
void encode_frame(Framing f, std::string_view payload, std::string& out) {
  char head[kFrameHeadroom];
  const std::size_t h = frame_header(f, payload.size(), head);
  const bool newline = f == Framing::Ndjson;
  out.reserve(out.size() + h + payload.size() + (newline ? 1 : 0));
  out.append(head, h);
  out.append(payload);
  if (newline) out.push_back('\n');
}

std::string_view frame_in_place(Framing f, std::string& buf) {
  char head[kFrameHeadroom];
  const std::size_t n = buf.size() - kFrameHeadroom;
  const std::size_t h = frame_header(f, n, head);
  std::memcpy(&buf[kFrameHeadroom - h], head, h);
  if (f == Framing::Ndjson) buf.push_back('\n');
  return std::string_view(buf.data() + kFrameHeadroom - h, h + n + (f == Framing::Ndjson ? 1 : 0));
}

const char* framing_name(Framing f) {
  switch (f) {
    case Framing::Lsp: return "lsp";
    case Framing::Ndjson: return "ndjson";
    case Framing::Len32Be: return "len32be";
    case Framing::Len32Le: return "len32le";
  }
  return "unknown";
}

// Names are matched ASCII case-insensitively, so a CLI flag "--framing=LSP" works.
bool parse_framing_name(std::string_view name, Framing& out) {
  for (Framing f : {Framing::Lsp, Framing::Ndjson, Framing::Len32Be, Framing::Len32Le}) {
    const std::string_view want = framing_name(f);
    if (name.size() != want.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < want.size() && same; ++i) {
      char c = name[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      same = c == want[i];
    }
    if (same) {
      out = f;
      return true;
    }
  }
  return false;
}

}  // namespace weft
