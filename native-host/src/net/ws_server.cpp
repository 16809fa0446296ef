// ws_server.cpp — `listen_ws`: JSON-RPC over WebSocket (Boost.Beast), one
// message or batch per frame (docs/transports.md, "WebSocket").
//
// Each connection: read the upgrade request (header limit, handshake
// timeout), check Origin (403) and the connection limit (503), pick the codec
// from the subprotocol, accept, then one MessagePeer with what install() puts
// on every peer. A message is read a chunk at a time, so one larger than
// max_message is refused (close 1009) from its frame length, or once more
// than max_message of it has arrived, never buffered whole; the rest of it
// is read and thrown away during the close. Writes go out one frame at a
// time; a write the client does not take within write_timeout closes the
// connection, and reading pauses while max_queued_output is queued. With
// `weft serve --compress zstd` the handshake may agree on zstd: payloads
// over 1 KiB that shrink then go compressed in binary frames, and compressed
// binary frames are taken on a JSON connection too (docs/framing.md Z1–Z5;
// MessagePeer does the work).
#include <algorithm>
#include <deque>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "net/acceptor_loop.h"
#include "net/hub.h"
#include "net/message_peer.h"
#include "net/origin.h"
#include "session.h"

namespace weft::host::detail {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = boost::asio::ip::tcp;

constexpr const char* kMsgpackProtocol = "weft.msgpack";
constexpr const char* kJsonProtocol = "weft.json";

class WsService;

class WsConn : public std::enable_shared_from_this<WsConn> {
 public:
  WsConn(WsService& svc, tcp::socket socket, std::string name);
  void start(bool over_limit);
  void drain(Millis deadline, const DrainNotice& notice);
  void close_now();
  bool finished() const { return finished_; }
  std::size_t in_flight() const { return peer_ ? peer_->in_flight() : 0; }

 private:
  void on_request(beast::error_code ec);
  void refuse(http::status status, std::string why);
  void on_accept(beast::error_code ec);
  void do_read();
  void on_read(beast::error_code ec);
  void refuse_too_big();
  void queue(std::string bytes);
  void do_write();
  void on_write(beast::error_code ec);
  void check_drain();
  void finish(const std::string& why);

  WsService& svc_;
  const WebOptions& web_;
  std::string name_;
  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  std::shared_ptr<MessagePeer> peer_;
  CodecKind codec_ = CodecKind::Json;
  std::deque<std::string> out_;
  std::size_t queued_ = 0;
  boost::asio::steady_timer write_timer_;
  boost::asio::steady_timer drain_timer_;
  bool open_ = false;  // upgraded
  bool reading_ = false;
  bool writing_ = false;
  bool draining_ = false;
  bool closing_ = false;
  bool finished_ = false;
};

class WsService final : public AcceptorLoop<WsService, WsConn> {
 public:
  explicit WsService(Hub hub) : AcceptorLoop(std::move(hub), "ws", "ws#") {}

  std::size_t connections() const override { return open_connections(); }
  std::size_t in_flight() const override {
    std::size_t n = 0;
    for (auto& c : snapshot()) n += c->in_flight();
    return n;
  }

  // An upgraded connection is sent $/weft/drain, answers new requests
  // -32005 and what is in flight normally, then closes with 1001 (going
  // away), or is closed at `deadline`; one not yet upgraded is closed at once
  // (docs/transports.md, "WebSocket"; docs/protocol.md, "Drain").
  void drain(Millis deadline, const DrainNotice& notice) override {
    stop_accepting();
    for (auto& c : snapshot()) c->drain(deadline, notice);
    notify_idle();
  }
  void close_all() override {
    stop_accepting();
    for (auto& c : snapshot()) c->close_now();
    notify_idle();
  }
};

std::chrono::milliseconds ms(Millis m) { return std::chrono::milliseconds(m); }
std::string_view sv(beast::string_view v) { return std::string_view(v.data(), v.size()); }

WsConn::WsConn(WsService& svc, tcp::socket socket, std::string name)
    : svc_(svc), web_(svc.hub().opts.web), name_(std::move(name)), ws_(std::move(socket)),
      write_timer_(svc.hub().io), drain_timer_(svc.hub().io) {}

void WsConn::start(bool over_limit) {
  if (over_limit) {
    svc_.log(name_ + ": connection limit (" + std::to_string(web_.max_connections) + ") reached, refusing");
    refuse(http::status::service_unavailable, "too many connections");
    return;
  }
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(web_.max_header));
  beast::get_lowest_layer(ws_).expires_after(ms(web_.handshake_timeout));
  http::async_read(beast::get_lowest_layer(ws_), buf_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void WsConn::refuse(http::status status, std::string why) {
  auto res = std::make_shared<http::response<http::string_body>>(status, 11);
  res->set(http::field::server, "weft");
  res->set(http::field::content_type, "text/plain; charset=utf-8");
  res->set(http::field::connection, "close");
  if (status == http::status::upgrade_required) res->set(http::field::upgrade, "websocket");
  res->body() = why + "\n";
  res->prepare_payload();
  auto& stream = beast::get_lowest_layer(ws_);
  stream.expires_after(ms(web_.write_timeout));
  http::async_write(stream, *res, [self = shared_from_this(), res, why](beast::error_code, std::size_t) {
    beast::error_code ignored;
    beast::get_lowest_layer(self->ws_).socket().shutdown(tcp::socket::shutdown_send, ignored);
    self->finish(why);
  });
}

void WsConn::on_request(beast::error_code ec) {
  if (ec) {
    if (ec == http::error::header_limit) return refuse(http::status::request_header_fields_too_large, "request header too large");
    // A request with a body (a POST meant for --http) is no upgrade request.
    if (ec == http::error::unexpected_body) return refuse(http::status::upgrade_required, "this is a WebSocket endpoint");
    finish(ec == beast::error::timeout ? "no upgrade request within the handshake timeout" : "");
    return;
  }
  auto& req = parser_->get();
  auto origin = req.find(http::field::origin);
  const bool has_origin = origin != req.end();
  if (!origin_allowed(web_.allow_origins, has_origin, has_origin ? sv(origin->value()) : std::string_view{})) {
    return refuse(http::status::forbidden,
                  "origin " + std::string(sv(origin->value())) + " is not allowed (weft serve --allow-origin)");
  }
  if (!websocket::is_upgrade(req)) return refuse(http::status::upgrade_required, "this is a WebSocket endpoint");
  std::string chosen;
  if (auto p = req.find(http::field::sec_websocket_protocol); p != req.end()) {
    for (const auto& t : header_tokens(sv(p->value()))) {
      if (t == kMsgpackProtocol || t == kJsonProtocol) {
        chosen = t;
        break;
      }
    }
  }
  codec_ = chosen == kMsgpackProtocol ? CodecKind::MessagePack : CodecKind::Json;
  beast::get_lowest_layer(ws_).expires_never();  // the websocket stream times itself from here
  websocket::stream_base::timeout t{};
  t.handshake_timeout = ms(web_.handshake_timeout);
  t.idle_timeout = web_.idle_timeout ? ms(web_.idle_timeout) : websocket::stream_base::none();
  t.keep_alive_pings = web_.idle_timeout != 0;
  ws_.set_option(t);
  ws_.set_option(websocket::stream_base::decorator([chosen](websocket::response_type& res) {
    res.set(http::field::server, "weft");
    if (!chosen.empty()) res.set(http::field::sec_websocket_protocol, chosen);
  }));
  // Beast's own limit fails the connection with 1009 but then closes the
  // socket with the rest of the message unread: the kernel answers what
  // still arrives with a reset, and the client sees that instead of the
  // close frame. So Beast's limit is off and on_read enforces max_message.
  ws_.read_message_max(0);  // 0: no limit
  ws_.auto_fragment(false);
  ws_.async_accept(req, [self = shared_from_this()](beast::error_code e) { self->on_accept(e); });
}

void WsConn::on_accept(beast::error_code ec) {
  if (ec) return finish("handshake: " + ec.message());
  open_ = true;
  parser_.reset();
  auto& hub = svc_.hub();
  std::weak_ptr<WsConn> weak = weak_from_this();
  auto cfg = web_peer_config(hub, codec_, name_);
  cfg.compression = hub.opts.compression;
  peer_ = std::make_shared<MessagePeer>(hub.io, std::move(cfg), [weak](const Outgoing&, std::string bytes) {
    if (auto self = weak.lock()) self->queue(std::move(bytes));
  });
  hub.install(peer_->peer());
  do_read();
}

void WsConn::do_read() {
  if (reading_ || closing_ || finished_) return;
  if (queued_ > web_.max_queued_output) return;  // resumed by on_write
  reading_ = true;
  // At most one byte past max_message is ever held (on_read refuses then).
  constexpr std::size_t kChunk = 64 * 1024;
  const std::size_t room = svc_.max_message() - std::min(svc_.max_message(), buf_.size());
  const std::size_t limit = room < kChunk ? room + 1 : kChunk;
  ws_.async_read_some(buf_, limit,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void WsConn::on_read(beast::error_code ec) {
  reading_ = false;
  if (finished_) return;
  if (ec) {
    if (ec == websocket::error::closed) return finish("");
    return finish(ec == beast::error::timeout ? "idle timeout" : "read: " + ec.message());
  }
  const std::size_t max = svc_.max_message();
  if (buf_.size() > max) return refuse_too_big();
  if (!ws_.is_message_done()) {
    // Mid-message, read_size_hint(1) is what is left of the current frame
    // (so for uncompressed frames; permessage-deflate is never agreed here),
    // so a frame that declares more than fits is refused from its header.
    // 1 may also mean "nothing left": the size check above covers that.
    const std::size_t frame_left = ws_.read_size_hint(1);
    if (frame_left > 1 && frame_left > max - buf_.size()) return refuse_too_big();
    return do_read();
  }
  auto data = buf_.cdata();
  const std::string_view bytes(static_cast<const char*>(data.data()), data.size());
  const bool binary = !ws_.got_text();
  // Z3: a compressed payload travels in a binary frame whatever the codec.
  const bool want_binary =
      codec_ == CodecKind::MessagePack || (peer_->compression() && Compressor::is_compressed(bytes));
  if (binary != want_binary) {
    // RFC 6455 §7.4.1, 1003: "a type of data it cannot accept".
    closing_ = true;
    const char* why = want_binary ? "text frame on a weft.msgpack connection"
                                  : "binary frame without the weft.msgpack subprotocol";
    svc_.log(name_ + ": " + why + ", closing (1003)");
    ws_.async_close(websocket::close_reason(websocket::close_code::unknown_data, why),
                    [self = shared_from_this()](beast::error_code) { self->finish(""); });
    return;
  }
  peer_->receive(bytes);
  buf_.consume(buf_.size());
  check_drain();
  do_read();
}

// RFC 6455 §7.4.1, 1009: "a message that is too big for it to process".
// async_close reads and discards the rest of the message until the client's
// close frame, so the client gets the 1009 rather than a reset; the
// handshake timeout bounds how long that may take.
void WsConn::refuse_too_big() {
  closing_ = true;
  buf_.consume(buf_.size());
  svc_.log(name_ + ": message larger than " + std::to_string(svc_.max_message()) + " bytes refused (close 1009)");
  ws_.async_close(websocket::close_reason(websocket::close_code::too_big),
                  [self = shared_from_this()](beast::error_code) { self->finish(""); });
}

void WsConn::queue(std::string bytes) {
  if (closing_ || finished_) return;
  queued_ += bytes.size();
  out_.push_back(std::move(bytes));
  do_write();
}

void WsConn::do_write() {
  if (writing_ || out_.empty() || finished_) return;
  writing_ = true;
  ws_.text(codec_ == CodecKind::Json && !Compressor::is_compressed(out_.front()));
  write_timer_.expires_after(ms(web_.write_timeout));
  write_timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || !self->writing_) return;
    self->svc_.log(self->name_ + ": slow client (a frame not taken within " +
                   std::to_string(self->web_.write_timeout) + " ms), closing");
    self->close_now();
  });
  ws_.async_write(boost::asio::buffer(out_.front()),
                  [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
}

void WsConn::on_write(beast::error_code ec) {
  writing_ = false;
  write_timer_.cancel();
  if (finished_) return;
  if (ec) return finish("write: " + ec.message());
  queued_ -= out_.front().size();
  out_.pop_front();
  do_write();
  check_drain();
  do_read();
}

void WsConn::drain(Millis deadline, const DrainNotice& notice) {
  if (finished_) return;
  if (!open_) return close_now();
  draining_ = true;
  if (!closing_) {
    peer_->peer().drain(notice);  // queued first: check_drain waits for it to be written
    peer_->rearm();
  }
  drain_timer_.expires_at(to_time_point(deadline));
  drain_timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    if (auto self = weak.lock(); self && !ec) {
      self->svc_.log(self->name_ + ": grace period over, closing");
      self->close_now();
    }
  });
  check_drain();
}

void WsConn::check_drain() {
  if (!draining_ || closing_ || finished_ || writing_ || !out_.empty() || peer_->in_flight() > 0) return;
  closing_ = true;
  ws_.async_close(websocket::close_reason(websocket::close_code::going_away, "server shutting down"),
                  [self = shared_from_this()](beast::error_code) { self->finish(""); });
}

void WsConn::close_now() {
  if (finished_) return;
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
  finish("");
}

void WsConn::finish(const std::string& why) {
  if (finished_) return;
  finished_ = true;
  auto self = shared_from_this();
  if (!why.empty()) svc_.log(name_ + ": " + why);
  write_timer_.cancel();
  drain_timer_.cancel();
  if (peer_) peer_->close(Error(code::kClosed, "WebSocket closed"));
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
  svc_.remove(this);
}

}  // namespace

Result<std::unique_ptr<WebService>> make_ws_service(Hub hub, const std::string& host, std::uint16_t port) {
  return WsService::make(std::move(hub), host, port);
}

}  // namespace weft::host::detail
