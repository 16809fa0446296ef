// http_link.cpp — the life of a Streamable HTTP link (HttpLink): resolving
// and connecting, the handshake, the session's GET stream (the server's own
// SSE stream, reopened after a pause), ending the session with DELETE on
// shutdown(), closing, and open_http_link.
#include <algorithm>
#include <limits>

#include <boost/asio/post.hpp>

#include "client/http_link.h"

namespace weft::host::detail {

namespace http_link {

HttpLink::HttpLink(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg, LinkHooks hooks)
    : io_(io), a_(a), cfg_(cfg), hooks_(std::move(hooks)), resolver_(io), get_timer_(io),
      codec_(make_codec(CodecKind::Json, cfg.codec_limits)), comp_(cfg.compression) {
  PeerOptions po;
  po.limits = cfg.peer_limits;
  po.send = [this](Outgoing&& o) { post_message(std::move(o)); };
  po.diagnostic = hooks_.diagnostic;
  po.on_drain = hooks_.drain;
  peer_ = std::make_unique<Peer>(std::move(po));
  if (hooks_.setup) hooks_.setup(*peer_);
}

void HttpLink::start() {
  if (cfg_.codec != CodecKind::Json) {
    boost::asio::post(io_, [self = shared_from_this()] {
      self->closing_ = true;
      self->report(Error(code::kClosed, "cannot use " + self->a_.text +
                                            ": the Streamable HTTP transport carries JSON only"), false);
    });
    return;
  }
  resolver_.async_resolve(a_.host, std::to_string(a_.port),
                          [self = shared_from_this()](const beast::error_code& ec, tcp::resolver::results_type rs) {
                            if (self->closing_) return;
                            if (ec) return self->connect_failed(ec);
                            self->endpoints_ = rs;
                            self->probe();
                          });
}

// The "connection" is up once the server accepts a TCP connection; that
// one is kept for the first POST.
void HttpLink::probe() {
  auto ex = std::make_shared<Exchange>(io_);
  ex->stream.async_connect(endpoints_, [self = shared_from_this(), ex](const beast::error_code& ec,
                                                                      const tcp::endpoint&) {
    if (self->closing_) return;
    if (ec) return self->connect_failed(ec);
    self->idle_.push_back(std::move(ex));
    self->open_ = true;
    if (self->cfg_.handshake) return self->offer_handshake();
    if (self->hooks_.opened) self->hooks_.opened();
    self->pump();
  });
}

// ClientConfig::handshake: its POST is the first (it starts the MCP
// session); the link counts as opened once it is answered.
// No compression in it: HTTP negotiates its own (Accept-Encoding).
void HttpLink::offer_handshake() {
  Handshake h = *cfg_.handshake;
  h.capabilities.erase(std::remove(h.capabilities.begin(), h.capabilities.end(), "compression"),
                       h.capabilities.end());
  h.compression_preference.clear();
  offer_handshake_on(
      io_, shared_from_this(),
      [this, h = std::move(h)](HandshakeDone done) { return peer_->handshake(h, std::move(done), {}, now_ms()); },
      hooks_.opened);
}

void HttpLink::connect_failed(const beast::error_code& ec) {
  if (closing_) return;
  closing_ = true;
  peer_->close(Error(code::kClosed, "not connected"));
  report(Error(code::kClosed, "cannot connect to " + a_.text + ": " + ec.message()), retryable_connect_error(ec));
}

std::string HttpLink::host_header() const {
  const std::string h = a_.host.find(':') != std::string::npos ? "[" + a_.host + "]" : a_.host;
  return a_.port == 80 ? h : h + ":" + std::to_string(a_.port);
}

http::request<http::string_body> HttpLink::request(http::verb v) const {
  http::request<http::string_body> r{v, a_.path, 11};
  r.set(http::field::host, host_header());
  r.set(http::field::user_agent, "weft");
  if (session_id_) r.set("Mcp-Session-Id", *session_id_);
  if (protocol_version_) r.set("MCP-Protocol-Version", *protocol_version_);
  r.keep_alive(true);
  return r;
}

void HttpLink::open_get_stream() {
  if (get_open_ || closing_ || shutting_down_ || !session_id_) return;
  get_open_ = true;
  auto ex = std::make_shared<Exchange>(io_);
  ex->is_get = true;
  ex->req = request(http::verb::get);
  ex->req.set(http::field::accept, "text/event-stream");
  if (!last_event_id_.empty()) ex->req.set("Last-Event-ID", last_event_id_);
  active_.insert(ex);
  ex->stream.async_connect(endpoints_, [self = shared_from_this(), ex](const beast::error_code& ec,
                                                                     const tcp::endpoint&) {
    if (self->closing_) return;
    if (ec) return self->done(ex, false);
    http::async_write(ex->stream, ex->req, [self, ex](const beast::error_code& ec2, std::size_t) {
      if (self->closing_) return;
      if (ec2) return self->done(ex, false);
      ex->parser.body_limit(std::numeric_limits<std::uint64_t>::max());
      http::async_read_header(ex->stream, ex->buf, ex->parser,
                              [self, ex](const beast::error_code& ec3, std::size_t) {
                                if (self->closing_) return;
                                if (ec3) return self->done(ex, false);
                                const unsigned st = ex->parser.get().result_int();
                                if (st == 200) return self->read_sse(ex);
                                self->active_.erase(ex);
                                self->get_open_ = false;  // 405 or an error: no server stream
                                self->maybe_finish_shutdown();
                              });
    });
  });
}

void HttpLink::schedule_get() {
  if (closing_ || shutting_down_) return;
  get_timer_.expires_after(std::chrono::milliseconds(kGetRetryMs));
  get_timer_.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
    if (auto self = w.lock(); self && !ec) self->open_get_stream();
  });
}

void HttpLink::maybe_finish_shutdown() {
  if (!shutting_down_ || closing_ || deleting_) return;
  for (const auto& ex : active_)
    if (!ex->is_get) return;
  if (!waiting_.empty()) return;
  if (!session_id_ || !open_) return finish("closed by the client");
  // MCP: a client that no longer needs the session ends it with DELETE.
  deleting_ = true;
  auto ex = std::make_shared<Exchange>(io_);
  ex->req = request(http::verb::delete_);
  ex->stream.expires_after(std::chrono::seconds(5));
  ex->stream.async_connect(endpoints_, [self = shared_from_this(), ex](const beast::error_code& ec,
                                                                     const tcp::endpoint&) {
    if (ec) return self->finish("closed by the client");
    http::async_write(ex->stream, ex->req, [self, ex](const beast::error_code& ec2, std::size_t) {
      if (ec2) return self->finish("closed by the client");
      http::async_read(ex->stream, ex->buf, ex->parser, [self, ex](const beast::error_code&, std::size_t) {
        self->finish("closed by the client");
      });
    });
  });
}

void HttpLink::finish(const std::string& why) {
  if (closing_ && reported_) return;
  closing_ = true;
  Error e(code::kClosed, "connection to " + a_.text + " closed: " + why);
  get_timer_.cancel();
  // Notifications whose POST the server had not answered (a clean shutdown
  // leaves none): lost with the link, as far as the client can tell.
  if (hooks_.refused) {
    for (const auto& ex : active_)
      if (ex->notification && !ex->heard) hooks_.refused("a notification was not delivered: " + e.message);
    for (const auto& ex : waiting_)
      if (ex->notification) hooks_.refused("a notification was not delivered: " + e.message);
  }
  beast::error_code ignored;
  for (auto& ex : active_) ex->stream.socket().close(ignored);
  for (auto& ex : idle_) ex->stream.socket().close(ignored);
  active_.clear();
  idle_.clear();
  waiting_.clear();
  peer_->close(e);
  report(std::move(e), true);
}

void HttpLink::report(Error e, bool retryable) {
  if (reported_) return;
  reported_ = true;
  if (hooks_.closed) hooks_.closed(std::move(e), open_, retryable);
}

}  // namespace http_link

std::shared_ptr<Link> open_http_link(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg,
                                     LinkHooks hooks) {
  auto l = std::make_shared<http_link::HttpLink>(io, a, cfg, std::move(hooks));
  l->start();
  return l;
}

}  // namespace weft::host::detail
