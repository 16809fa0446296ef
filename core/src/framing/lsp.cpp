// framing_lsp.cpp — the LSP base-protocol decoder (docs/framing.md L1-L8):
//
//   Content-Length: N\r\n [Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n]
//   [other headers\r\n] \r\n  then exactly N body bytes.
//
// Rules and the error each broken rule gives (reply=true unless noted):
//  * Header lines are RFC 7230 §3.2 fields: a token name, ':' (no space before
//    it), optional whitespace, a value without control characters. A line that
//    is not → -32700, then resync (below). Names are case-insensitive.
//  * Lines end with CRLF (docs/framing.md L2). A bare LF is NOT accepted as a
//    line end: the LSP spec says "\r\n", vscode-jsonrpc and jsonrpc.el send
//    it, and a decoder that also splits on LF could frame the same bytes
//    differently from the peer (a header value containing a lone LF would end
//    early). Strictness is the safer choice: such a line is malformed → -32700
//    + resync.
//  * Content-Length: required; 1+ decimal digits, no sign, no overflow; repeats
//    must agree (RFC 7230 §3.3.2). Otherwise -32700 (invalid/conflicting: at
//    the line, then resync; missing: at the end of the header block).
//  * Content-Type: optional; media type application/vscode-jsonrpc, charset
//    (if present) utf-8 or utf8, all case-insensitive, parameters in any order,
//    quoted values allowed. Anything else → -32600 and the body is skipped.
//  * Content-Length > max_frame → -32600 "Content-Length N exceeds max_frame M"
//    and the body is skipped by counting it down, never buffered.
//  * Header block (all bytes up to and including the empty line) longer than
//    max_header → -32700 + resync.
//  * Resync after a malformed header (L8): discard bytes up to and including
//    the next "\r\n\r\n" (counting the CRLF that ended the bad line): the
//    rest of the bad block. Its body's length is unknown, and a peer writes
//    the next frame right after a body, so then discard up to the next
//    "Content-Length:" (any case) and start a new frame there.
//  * Unknown headers are ignored.
#include <algorithm>
#include <cstring>

#include "framing/detail.h"

namespace weft::detail {
namespace {

bool is_tchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_tchar(static_cast<unsigned char>(c))) return false;
  return true;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view lower_b) {
  if (a.size() != lower_b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower_b[i]) return false;
  return true;
}

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// Plain decimal, no sign, no overflow of 64 bits.
bool parse_length(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

// RFC 7231 §3.1.1.1: media-type = type "/" subtype *( OWS ";" OWS parameter ),
// parameter = token "=" ( token / quoted-string ). Empty parameters (a stray
// ';') are tolerated. Only charset is checked; other parameters are ignored.
bool content_type_ok(std::string_view v) {
  const std::size_t semi = v.find(';');
  if (!iequals(trim_ows(v.substr(0, semi)), "application/vscode-jsonrpc")) return false;
  if (semi == std::string_view::npos) return true;
  std::size_t i = semi + 1;
  while (true) {
    while (i < v.size() && (is_ows(v[i]) || v[i] == ';')) ++i;
    if (i == v.size()) return true;
    const std::size_t name_at = i;
    while (i < v.size() && is_tchar(static_cast<unsigned char>(v[i]))) ++i;
    const std::string_view name = v.substr(name_at, i - name_at);
    if (name.empty() || i == v.size() || v[i] != '=') return false;
    ++i;
    // The value, unquoted into a small buffer: a charset we accept is 5 bytes.
    char val[8];
    std::size_t len = 0;
    auto put = [&](char c) {
      if (len < sizeof val) val[len] = c;
      ++len;
    };
    if (i < v.size() && v[i] == '"') {
      for (++i;; ++i) {
        if (i == v.size()) return false;  // unterminated quoted-string
        if (v[i] == '"') break;
        if (v[i] == '\\' && ++i == v.size()) return false;
        put(v[i]);
      }
      ++i;
    } else {
      while (i < v.size() && is_tchar(static_cast<unsigned char>(v[i]))) put(v[i++]);
      if (len == 0) return false;
    }
    if (iequals(name, "charset")) {
      const std::string_view cs(val, std::min(len, sizeof val));
      if (len > sizeof val || !(iequals(cs, "utf-8") || iequals(cs, "utf8"))) return false;
    }
    while (i < v.size() && is_ows(v[i])) ++i;
    if (i < v.size() && v[i] != ';') return false;
  }
}

// What a resync seeks (L8), lower case; matched in any case.
constexpr std::string_view kLength = "content-length:";

// Progress through kLength after byte `c`: how many of its bytes now match.
// Its one 'c' is its first byte, so a mismatch restarts at 0, or at 1 on a 'c'.
std::size_t seek_step(std::size_t m, char c) {
  c = lower(c);
  if (c == kLength[m]) return m + 1;
  return c == kLength[0] ? 1 : 0;
}

// Progress through "\r\n\r\n": 0 nothing, 1 "\r", 2 "\r\n", 3 "\r\n\r", 4 found.
int crlf_step(int m, char c) {
  if (c == '\r') return m == 2 ? 3 : 1;
  if (c == '\n') return m == 1 ? 2 : m == 3 ? 4 : 0;
  return 0;
}

class LspDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;
  Framing framing() const override { return Framing::Lsp; }
  // Seeking the next frame after a resync is between frames: not timed.
  bool idle() const override { return state_ == State::Idle || state_ == State::Seek; }
  std::size_t memory_footprint() const override { return line_.capacity() + body_.capacity(); }

  void feed(std::string_view bytes, Millis now, FrameHandler& h) override {
    const char* d = bytes.data();
    const std::size_t n = bytes.size();
    const std::uint64_t base = offset_;
    std::size_t p = 0;
    while (p < n) {
      switch (state_) {
        case State::Idle:
          begin_frame(base + p, now);
          start_block();
          state_ = State::Head;
          [[fallthrough]];
        case State::Head: {
          const std::size_t room = limits_.max_header - head_bytes_;
          const std::size_t scan = std::min(n - p, room);
          const void* nl = std::memchr(d + p, '\n', scan);
          if (nl) {
            const auto q = static_cast<std::size_t>(static_cast<const char*>(nl) - d);
            head_bytes_ += q + 1 - p;
            std::string_view line(d + p, q - p);
            if (!line_.empty()) {  // the line began in an earlier chunk
              line_.append(line);
              line = line_;
            }
            p = q + 1;
            on_line(line, base + q, d, n, p, h);
            line_.clear();
          } else if (n - p > room) {
            header_overflow(d + p, room, base + p + room, h);
            p += room + 1;
          } else {
            line_.append(d + p, n - p);
            head_bytes_ += n - p;
            p = n;
          }
          break;
        }
        case State::Body:
          if (take_body(d, n, p)) {
            state_ = State::Idle;
            deliver_body(h);
          }
          break;
        case State::Skip:
          if (take_skip(n, p)) state_ = State::Idle;
          break;
        case State::Resync:
          while (p < n && match_ != 4) match_ = crlf_step(match_, d[p++]);
          if (match_ == 4) {
            state_ = State::Seek;
            seek_ = 0;
          }
          break;
        case State::Seek:
          while (p < n && seek_ < kLength.size()) seek_ = seek_step(seek_, d[p++]);
          if (seek_ == kLength.size()) {
            begin_frame(base + p - kLength.size(), now);
            start_block();
            line_.assign(kLength);
            head_bytes_ = kLength.size();
            state_ = State::Head;
          }
          break;
      }
    }
    offset_ = base + n;
  }

  void finish(FrameHandler& h) override {
    std::string msg;
    if (state_ == State::Head) {
      msg = "length mismatch: EOF after " + std::to_string(head_bytes_) +
            " bytes of an unfinished header block";
    } else if (state_ == State::Body) {
      msg = body_eof(body_.size(), need_);
    }
    // Skip / Resync / Seek: this frame was already reported; one error per frame.
    reset();
    if (!msg.empty()) report(h, code::kParseError, std::move(msg), offset_);
  }

 protected:
  void reset() override {
    start_block();
    recycle(line_);
    recycle(body_);
    skip_ = 0;
    state_ = State::Idle;
  }

 private:
  enum class State { Idle, Head, Body, Skip, Resync, Seek };

  void start_block() {
    head_bytes_ = 0;
    had_line_ = false;
    has_length_ = false;
    length_ = 0;
    bad_type_ = false;
    line_.clear();
  }

  void malformed(std::string msg, std::uint64_t at, int match, FrameHandler& h) {
    state_ = State::Resync;
    match_ = match;
    report(h, code::kParseError, std::move(msg), at);
  }

  // One complete header line, '\n' excluded; `at` is the offset of its '\n'.
  // `d`/`n`/`p` locate the rest of the chunk so a body can be delivered in place.
  void on_line(std::string_view line, std::uint64_t at, const char* d, std::size_t n,
               std::size_t& p, FrameHandler& h) {
    if (line.empty() || line.back() != '\r')
      return malformed("header line not terminated by CRLF", at, 0, h);
    line.remove_suffix(1);
    if (line.empty()) return end_of_block(at, d, n, p, h);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return malformed("header line without ':'", at, 2, h);
    const std::string_view name = line.substr(0, colon);
    if (!is_token(name)) return malformed("header name is not a token", at, 2, h);
    const std::string_view value = trim_ows(line.substr(colon + 1));
    for (char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f)
        return malformed("control character in header value", at, 2, h);
    }
    had_line_ = true;
    if (iequals(name, "content-length")) {
      std::uint64_t v = 0;
      if (!parse_length(value, v))
        return malformed("Content-Length is not a plain decimal number", at, 2, h);
      if (has_length_ && v != length_)
        return malformed("conflicting Content-Length headers", at, 2, h);
      has_length_ = true;
      length_ = v;
    } else if (iequals(name, "content-type")) {
      if (!content_type_ok(value)) bad_type_ = true;
    }
  }

  void end_of_block(std::uint64_t at, const char* d, std::size_t n, std::size_t& p,
                    FrameHandler& h) {
    state_ = State::Idle;
    if (!has_length_) {
      report(h, code::kParseError, "missing Content-Length header", at);
      return;
    }
    std::string msg;
    if (length_ > limits_.max_frame) {
      msg = "Content-Length " + std::to_string(length_) + " exceeds max_frame " +
            std::to_string(limits_.max_frame);
    } else if (bad_type_) {
      msg = "unsupported Content-Type (want application/vscode-jsonrpc; charset=utf-8)";
    }
    if (!msg.empty()) {  // docs/framing.md F2, L5: -32600, discard the body unread
      report(h, code::kInvalidRequest, std::move(msg), at);
      skip_ = length_;
      if (skip_ > 0) state_ = State::Skip;
      return;
    }
    if (n - p >= length_) {  // fast path: a view into the chunk
      const auto len = static_cast<std::size_t>(length_);
      const std::string_view body(d + p, len);
      p += len;
      h.on_frame(body);
      return;
    }
    state_ = State::Body;
    need_ = static_cast<std::size_t>(length_);
  }

  // The header block reached max_header + 1 bytes at `at` with no line end in
  // the `room + 1` bytes at `s`. Resync from there, continuing the "\r\n\r\n"
  // match over the partial line (the previous line, if any, ended in CRLF).
  void header_overflow(const char* s, std::size_t room, std::uint64_t at, FrameHandler& h) {
    int m = had_line_ ? 2 : 0;
    for (char c : line_) m = crlf_step(m, c);
    for (std::size_t i = 0; i <= room; ++i) m = crlf_step(m, s[i]);
    line_.clear();
    malformed("header block exceeds max_header (" + std::to_string(limits_.max_header) +
                  " bytes)",
              at, m, h);
    if (m == 4) {
      state_ = State::Seek;
      seek_ = 0;
    }
  }

  State state_ = State::Idle;
  // Header block in progress.
  std::size_t head_bytes_ = 0;
  bool had_line_ = false;
  bool has_length_ = false;
  std::uint64_t length_ = 0;
  bool bad_type_ = false;
  std::string line_;  // partial header line carried between chunks (<= max_header)
  // Resync: progress of the "\r\n\r\n" match; Seek: of kLength (body and
  // skip are DecoderBase's).
  int match_ = 0;
  std::size_t seek_ = 0;
};

}  // namespace

std::unique_ptr<FrameDecoder> make_lsp_decoder(FramingLimits limits) {
  return std::make_unique<LspDecoder>(limits);
}

}  // namespace weft::detail
