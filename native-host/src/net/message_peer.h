// message_peer.h — one weft::Peer over a message transport: each WebSocket
// frame or HTTP body is one whole JSON-RPC message (or batch), so there is no
// byte framing, only a codec (docs/transports.md).
//
// Decode errors are answered as §5 requires (id null, through `send`). The
// Peer's call deadlines are kept by one steady_timer. Owned by a shared_ptr
// (timer callbacks hold a weak one).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "weft/codec.h"
#include "weft/compression.h"
#include "weft/peer.h"

namespace weft::host::detail {

struct Hub;

class MessagePeer : public std::enable_shared_from_this<MessagePeer> {
 public:
  struct Config {
    CodecKind codec = CodecKind::Json;  // what `send` gets, and what receive() decodes
    CodecLimits codec_limits;
    PeerLimits peer_limits;
    std::string name;  // for logs, e.g. "ws#3"
    std::function<void(std::string_view)> log;
    // Serve rpc.handshake (PeerOptions::handshake) and measure "metrics"
    // with this clock (PeerOptions::clock_us).
    std::optional<Handshake> handshake;
    std::function<std::int64_t()> clock_us;
    // Compression offered in that handshake (ConnectionOptions::compression):
    // WebSocket only; HTTP negotiates its own with Content-Encoding
    // (docs/framing.md Z1). Once agreed, payloads over 1 KiB that shrink are
    // sent compressed; compressed ones are accepted from the start, inflated
    // within `max_message`.
    std::vector<std::string> compression;
    std::size_t max_message = 0;
  };
  // One encoded message or batch, with what it is (HTTP routes answers by id).
  using Send = std::function<void(const Outgoing& what, std::string bytes)>;

  MessagePeer(boost::asio::io_context& io, Config cfg, Send send);
  ~MessagePeer();

  Peer& peer() { return peer_; }
  // Compressed messages are accepted (Config::compression left zstd).
  bool compression() const { return comp_.enabled(); }
  const std::string& name() const { return cfg_.name; }

  // Decodes one whole message with the configured codec.
  Result<Document> decode(std::string_view bytes) const;
  // One whole message: decoded and handled; a decode error is answered.
  void receive(std::string_view bytes);
  void deliver(Document&& doc);
  void deliver_error(const Error& e);

  // After using peer() from outside receive(): re-arm the deadline timer.
  void rearm();
  std::size_t in_flight() const { return peer_.in_flight(); }
  // Fails pending calls, cancels requests being served; `send` is not called again.
  void close(std::optional<Error> reason = std::nullopt);
  bool closed() const { return closed_; }

 private:
  void on_timer();

  Config cfg_;
  Send send_;
  std::unique_ptr<Codec> codec_;
  Compressor comp_;
  std::string plain_;  // a compressed message, inflated (reused)
  Peer peer_;
  boost::asio::steady_timer timer_;
  std::optional<Millis> armed_;
  bool closed_ = false;
};

// A MessagePeer's configuration on a listener of the server: its limits,
// log and handshake (ServerOptions::handshake, with `name` as session id).
MessagePeer::Config web_peer_config(const Hub& hub, CodecKind codec, std::string name);

}  // namespace weft::host::detail
