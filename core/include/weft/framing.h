// weft/framing.h — streaming frame decoders and encoders.
//
// A byte stream (stdio, a socket) carries messages in frames. Each decoder is a
// state machine fed arbitrary chunks (`feed`): bytes may be split anywhere and
// one chunk may hold several frames. It reports complete frames and errors, in
// stream order, to a FrameHandler. Errors are not sticky: every framing
// resynchronises and keeps going, because a daemon must keep serving after one
// bad frame (docs/framing.md F5 connection remains open).
//
// Framings:
//  Lsp      "Content-Length: N\r\n[Content-Type: ...\r\n]\r\n" + N bytes (docs/framing.md L1-L8)
//  Ndjson   one message per line, '\n' terminated ('\r\n' accepted) (MCP stdio);
//           whitespace between messages (blank lines, leading blanks) is skipped (N1-N4)
//  Len32Be  4-byte big-endian length + payload (ash; P1-P3)
//  Len32Le  4-byte little-endian length + payload (Meridian; P1-P3)
//
// The decoder never owns a clock: `now` is passed in and `deadline()` says when
// the partial frame in progress expires (docs/framing.md F3: 30 s read timeout per frame).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "weft/error.h"
#include "weft/time.h"

namespace weft {

// The byte framings (see the top of this file and docs/framing.md).
enum class Framing { Lsp, Ndjson, Len32Be, Len32Le };

// What a decoder accepts (docs/framing.md F2, F3, L-rules).
struct FramingLimits {
  std::size_t max_frame = 10u * 1000u * 1000u;  // payload bytes (docs/framing.md F2: 10 MB)
  std::size_t max_header = 8192;                // Lsp header block bytes
  Millis read_timeout = 30000;                  // per frame; 0 disables
};

// A frame the decoder rejected or discarded.
struct FrameError {
  // The error: its code and a message saying what was wrong.
  Error error;
  // Stream byte offset where the problem was seen: the byte whose arrival
  // revealed it (Lsp: the '\n' ending the bad header line or header block;
  // Len32: the last length byte; Ndjson: the first byte past max_frame); for
  // finish() and expire(), the number of bytes fed so far.
  std::uint64_t offset = 0;
  // true: the peer should be answered with an error response whose id is null
  // (oversize → -32600, bad Content-Type → -32600, length mismatch → -32700).
  // false: only log it (a read timeout discarding a partial frame).
  bool reply = true;
};

// Receives a decoder's frames and frame errors, in stream order.
class FrameHandler {
 public:
  virtual ~FrameHandler() = default;
  // `payload` is valid only during the call.
  virtual void on_frame(std::string_view payload) = 0;
  // A frame was rejected (or timed out); the decoder has resynchronised.
  virtual void on_frame_error(const FrameError& error) = 0;
};

// A streaming decoder of one framing; make one with make_decoder().
class FrameDecoder {
 public:
  virtual ~FrameDecoder() = default;
  // Which framing it decodes.
  virtual Framing framing() const = 0;

  // Consumes all of `bytes`. Oversized payloads are skipped as they stream
  // past, never buffered. `now` starts the read timer of a new partial frame.
  virtual void feed(std::string_view bytes, Millis now, FrameHandler& h) = 0;

  // End of stream. A partial frame is an error (-32700, "length mismatch:
  // EOF after k of N bytes"); for Ndjson an unterminated last line is a frame.
  virtual void finish(FrameHandler& h) = 0;

  // When the frame in progress times out; nullopt when idle or timeouts are off.
  virtual std::optional<Millis> deadline() const = 0;

  // If `now` >= deadline(): discard the partial frame and report it
  // (reply = false), then continue with the next bytes as a new frame.
  virtual void expire(Millis now, FrameHandler& h) = 0;

  // True when no partial frame is buffered. Also false while an oversized or
  // rejected payload is being skipped or an Lsp header error is being
  // resynchronised past: that frame is still in progress (and can time out).
  virtual bool idle() const = 0;
};

// A decoder of framing `f` that enforces `limits`.
std::unique_ptr<FrameDecoder> make_decoder(Framing f, FramingLimits limits = {});

// Appends one frame holding `payload` to `out`. Lsp writes only Content-Length.
// Ndjson: `payload` must be non-empty and hold no '\n' (weft's JSON encoder
// never writes one); it is not checked.
void encode_frame(Framing f, std::string_view payload, std::string& out);

// The same frame without copying the payload: `buf` holds kFrameHeadroom
// bytes (any value), then the payload. The header is written at the end of
// that room and any trailer after the payload; the result views the frame
// inside `buf` (valid until `buf` changes). For encoders that write the
// payload in place, e.g. a 64 KiB answer that would otherwise be copied once
// more just to put 4 bytes in front of it.
inline constexpr std::size_t kFrameHeadroom = 48;  // "Content-Length: " + 20 digits + "\r\n\r\n" fits
std::string_view frame_in_place(Framing f, std::string& buf);

const char* framing_name(Framing f);  // "lsp", "ndjson", "len32be", "len32le"
// Sets `out` from a name above (ASCII case-insensitive); false if unknown.
bool parse_framing_name(std::string_view name, Framing& out);

}  // namespace weft
