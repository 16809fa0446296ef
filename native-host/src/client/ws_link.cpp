// ws_link.cpp — a Client connection over WebSocket (Boost.Beast): one
// JSON-RPC message or batch per text frame (MessagePack: binary frames).
// Frames are whole messages, so there is no byte framing: the codec decodes
// each frame and the Peer receives it. With ClientConfig::compression offered
// and agreed, payloads over 1 KiB go zstd-compressed in binary frames, and
// compressed frames are inflated before decoding (docs/framing.md Z1–Z5).
#include <deque>
#include <optional>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "client/link.h"
#include "weft/codec.h"
#include "weft/compression.h"
#include "weft/host/server.h"

namespace weft::host::detail {

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = boost::asio::ip::tcp;

class WsLink final : public Link, public std::enable_shared_from_this<WsLink> {
 public:
  WsLink(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg, LinkHooks hooks)
      : io_(io), a_(a), cfg_(cfg), hooks_(std::move(hooks)), resolver_(io), ws_(io),
        codec_(make_codec(cfg.codec, cfg.codec_limits)),
        comp_(cfg.handshake ? cfg.compression : std::vector<std::string>{}) {
    PeerOptions po;
    po.limits = cfg.peer_limits;
    po.send = [this](Outgoing&& o) {
      if (closing_) return;
      std::string bytes;
      if (!codec_->encode(o, bytes))  // a NaN or an infinity (codec.h)
        return peer_->undelivered(o, unencodable_error(), unencodable(o));
      if (cfg_.max_request && bytes.size() > cfg_.max_request)  // as over a byte stream (Connection)
        return peer_->undelivered(o, oversize_error(bytes.size(), cfg_.max_request, "max_request"));
      // Z2: once agreed, over 1 KiB and smaller compressed.
      if (std::string z; comp_.agreed(peer_->agreed()) && comp_.compress(bytes, z)) bytes = std::move(z);
      out_.push_back(std::move(bytes));
      ++queued_;
      write_next();
    };
    po.diagnostic = hooks_.diagnostic;
    po.on_drain = hooks_.drain;
    peer_ = std::make_unique<Peer>(std::move(po));
    if (hooks_.setup) hooks_.setup(*peer_);
  }

  void start() {
    resolver_.async_resolve(a_.host, std::to_string(a_.port),
                            [self = shared_from_this()](const beast::error_code& ec, tcp::resolver::results_type rs) {
                              if (ec) return self->connect_failed(ec);
                              self->connect(rs);
                            });
  }

  Peer& peer() override { return *peer_; }
  bool closed() const override { return closing_; }
  std::uint64_t queued() const override { return queued_; }
  std::uint64_t written() const override { return written_; }
  void flush() override { write_next(); }
  void shutdown() override {
    if (!open_ || closing_) return close(Error(code::kClosed, "closed by the client"));
    shutting_down_ = true;
    if (out_.empty() && !writing_) send_close();
  }
  void close(const Error& why) override {
    if (closing_) return;
    own_reason_ = why.message;
    beast::get_lowest_layer(ws_).close();
    finish(why.message, true);
  }

 private:
  void connect(const tcp::resolver::results_type& rs) {
    beast::get_lowest_layer(ws_).async_connect(rs, [self = shared_from_this()](const beast::error_code& ec,
                                                                              const tcp::endpoint&) {
      if (self->closing_) return;
      if (ec) return self->connect_failed(ec);
      beast::get_lowest_layer(self->ws_).socket().set_option(tcp::no_delay(true));
      self->handshake();
    });
  }

  void handshake() {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
    const bool msgpack = cfg_.codec == CodecKind::MessagePack;
    ws_.set_option(websocket::stream_base::decorator([msgpack](websocket::request_type& req) {
      req.set(beast::http::field::user_agent, "weft");
      // MessagePack in binary frames is negotiated as a subprotocol (weft serve --ws).
      if (msgpack) req.set(beast::http::field::sec_websocket_protocol, "weft.msgpack");
    }));
    ws_.read_message_max(cfg_.framing_limits.max_frame);
    ws_.binary(cfg_.codec == CodecKind::MessagePack);
    const std::string host = a_.host.find(':') != std::string::npos ? "[" + a_.host + "]" : a_.host;
    ws_.async_handshake(host + ":" + std::to_string(a_.port), a_.path,
                        [self = shared_from_this()](const beast::error_code& ec) {
                          if (self->closing_) return;
                          if (ec) return self->connect_failed(ec);
                          self->open_ = true;
                          self->read();
                          if (self->cfg_.handshake) return self->offer_handshake();
                          if (self->hooks_.opened) self->hooks_.opened();
                          self->write_next();
                        });
  }

  // ClientConfig::handshake: the link counts as opened (the client sends
  // its calls) once the server has answered.
  // It offers this side's compression (Compressor::offer).
  void offer_handshake() {
    offer_handshake_on(
        io_, shared_from_this(),
        [this](HandshakeDone done) {
          return peer_->handshake(comp_.offer(*cfg_.handshake), std::move(done), {}, now_ms());
        },
        hooks_.opened);
  }

  void connect_failed(const beast::error_code& ec) {
    if (closing_) return;
    closing_ = true;
    peer_->close(Error(code::kClosed, "not connected"));
    report(Error(code::kClosed, "cannot connect to " + a_.text + ": " + ec.message()), retryable_connect_error(ec));
  }

  // The server's close frame, once one arrived: it says why (1009: a message
  // over its limit), whatever error the socket's teardown then gives
  // (error::closed, or "not connected" when the server shut the socket first).
  std::optional<std::string> server_closed() const {
    const auto& r = ws_.reason();
    if (r.code == websocket::close_code::none) return std::nullopt;
    return "the server closed the WebSocket (" + std::to_string(r.code) +
           (r.reason.empty() ? "" : " " + std::string(r.reason.data(), r.reason.size())) + ")";
  }

  void read() {
    ws_.async_read(in_, [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
      if (self->closing_) return;
      if (ec) return self->finish(self->server_closed().value_or(ec.message()), false);
      const auto data = self->in_.cdata();
      std::string_view bytes(static_cast<const char*>(data.data()), data.size());
      auto doc = self->decode(bytes);
      self->in_.consume(self->in_.size());
      if (!doc) {
        if (self->hooks_.diagnostic)
          self->hooks_.diagnostic(Diagnostic{Diagnostic::Kind::BadFrame, doc.error().message, doc.error()});
      } else {
        self->peer_->receive(std::move(*doc));
      }
      if (!self->closing_) self->read();
    });
  }

  // Z3: a compressed payload is told by its magic number; Z4, Z5: it is
  // inflated within max_frame, or reported like a frame that does not decode.
  Result<Document> decode(std::string_view bytes) {
    if (!comp_.enabled() || !Compressor::is_compressed(bytes)) return codec_->decode(bytes);
    if (auto r = comp_.decompress(bytes, cfg_.framing_limits.max_frame, plain_); !r) return r.error();
    return codec_->decode(plain_);
  }

  void write_next() {
    if (!open_ || writing_ || closing_) return;
    if (out_.empty()) {
      if (shutting_down_) send_close();
      return;
    }
    writing_ = true;
    // Text frames carry JSON; MessagePack and compressed payloads (Z3) binary ones.
    ws_.binary(cfg_.codec == CodecKind::MessagePack || Compressor::is_compressed(out_.front()));
    ws_.async_write(boost::asio::buffer(out_.front()), [self = shared_from_this()](const beast::error_code& ec,
                                                                                  std::size_t) {
      self->writing_ = false;
      if (self->closing_) return;
      if (ec) return self->finish(self->server_closed().value_or("write: " + ec.message()), false);
      self->out_.pop_front();
      ++self->written_;
      self->write_next();
    });
  }

  void send_close() {
    if (close_sent_) return;
    close_sent_ = true;
    ws_.async_close(websocket::close_code::normal, [self = shared_from_this()](const beast::error_code&) {
      self->own_reason_ = "closed by the client";
      self->finish(self->own_reason_, true);
    });
  }

  void finish(const std::string& why, bool ours) {
    if (closing_ && reported_) return;
    closing_ = true;
    out_.clear();
    Error e(code::kClosed, "connection to " + a_.text + " closed: " + (ours && !own_reason_.empty() ? own_reason_ : why));
    peer_->close(e);  // pending calls fail; the client settles them with `e`
    boost::system::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    report(std::move(e), true);
  }

  void report(Error e, bool retryable) {
    if (reported_) return;
    reported_ = true;
    if (hooks_.closed) hooks_.closed(std::move(e), open_, retryable);
  }

  boost::asio::io_context& io_;
  Address a_;
  ClientConfig cfg_;
  LinkHooks hooks_;
  tcp::resolver resolver_;
  websocket::stream<beast::tcp_stream> ws_;
  std::unique_ptr<Codec> codec_;
  Compressor comp_;
  std::string plain_;  // a compressed frame's payload, inflated (reused)
  std::unique_ptr<Peer> peer_;
  beast::flat_buffer in_;
  std::deque<std::string> out_;
  std::uint64_t queued_ = 0, written_ = 0;  // frames: queued(), written()
  std::string own_reason_;
  bool open_ = false;
  bool writing_ = false;
  bool closing_ = false;
  bool reported_ = false;
  bool shutting_down_ = false;
  bool close_sent_ = false;
};

}  // namespace

std::shared_ptr<Link> open_ws_link(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg,
                                   LinkHooks hooks) {
  auto l = std::make_shared<WsLink>(io, a, cfg, std::move(hooks));
  l->start();
  return l;
}

}  // namespace weft::host::detail
