// weft/connection.h — a Peer over a byte stream: framing + codec + endpoint.
//
// What a native host (or any byte transport) drives: bytes read from the wire
// go into `feed`, bytes to write come out through `write`. Frame and decode
// errors are answered on the wire as §5 requires (id null) and the stream
// keeps going. Still sans-I/O: time is a value, nothing blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/codec.h"
#include "weft/compression.h"
#include "weft/framing.h"
#include "weft/peer.h"

namespace weft {

// How a Connection frames, decodes, limits and reports its stream.
struct ConnectionOptions {
  // The framing and codec of the stream; both ends must use the same.
  Framing framing = Framing::Lsp;
  CodecKind codec = CodecKind::Json;
  // Frame size, LSP header size and read timeout (framing.h).
  FramingLimits framing_limits;
  CodecLimits codec_limits;  // max_depth: nesting accepted from the wire (codec.h)
  // Limits of the Peer inside (peer.h).
  PeerLimits peer_limits;
  // Timeout of calls made without their own (PeerOptions::default_timeout).
  std::optional<Millis> default_timeout;
  // §5 says an undecodable request is answered (id null). Two endpoints that
  // disagree on the codec would answer each other's answers forever, so after
  // this many undecodable frames in a row only diagnostics are produced, until
  // a frame decodes again. 0 = no bound.
  std::size_t max_error_replies = 16;
  // The largest encoded message this side sends, in bytes; 0: no limit. A
  // larger one is not written: the Peer is told (Peer::undelivered), so a
  // result is answered -32603 instead and a request's call fails with
  // -32002, each naming the size. The native server sets it to its response
  // limit (100 MB), the native client to its request limit (10 MB).
  std::size_t max_send = 0;
  // The option that sets max_send, as the error names it ("max_response").
  std::string max_send_name = "max_send";
  std::function<void(std::string_view bytes)> write;  // required: framed bytes out
  std::function<void(const Diagnostic&)> diagnostic;  // optional; frame errors too
  // The other side announced a drain (PeerOptions::on_drain): optional.
  std::function<void(const DrainNotice&)> on_drain;

  // -- Handshake, metrics, compression (docs/protocol.md "Handshake") ------
  // Serve rpc.handshake with this (PeerOptions::handshake); its compression
  // members are set from `compression` below.
  std::optional<Handshake> handshake;
  // A monotonic microsecond clock (PeerOptions::clock_us): with it, and
  // "metrics" agreed, answers carry metrics (docs/protocol.md "Metrics").
  std::function<std::int64_t()> clock_us;
  // Compression algorithms this side supports, in preference order; only
  // "zstd" is known, and only on the length-prefixed framings of a build with
  // libzstd (zstd_available()): anything else is dropped. With one left, the
  // served handshake and Connection::handshake offer capability
  // "compression"; once it is agreed, payloads over kCompressOver bytes go
  // out zstd-compressed, and compressed frames are accepted from the start
  // (docs/framing.md, "Compression").
  std::vector<std::string> compression;
};

// A Peer over one byte stream (see the top of this file).
class Connection {
 public:
  // `options.write` is required.
  explicit Connection(ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The endpoint: register methods and make calls on it.
  Peer& peer();

  // Bytes from the wire, split anywhere.
  void feed(std::string_view bytes, Millis now);
  // End of input: a partial frame is answered -32700; pending calls stay
  // pending (the write side may still be open) until close().
  void finish(Millis now);

  // Earliest of the peer's call deadlines and the frame read timeout.
  std::optional<Millis> next_deadline() const;
  // Times out what is due at `now`: the peer's calls and a partial frame.
  void advance(Millis now);

  // Peer::handshake with this Connection's compression offer (see
  // ConnectionOptions::compression): `mine.compression_preference` and the
  // "compression" capability are replaced by what this side can use.
  Result<Id> handshake(Handshake mine, std::function<void(Result<Handshake>)> done, CallOptions opts,
                       Millis now);
  // True when outgoing payloads over kCompressOver bytes are compressed now.
  bool compressing() const;

  // Closes the peer (Peer::close): pending calls fail with `reason`.
  void close(std::optional<Error> reason = std::nullopt);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
