// http_link.cpp — a Client "connection" over the MCP Streamable HTTP
// transport (Boost.Beast). Every message the Peer sends is one POST to the
// endpoint with `Accept: application/json, text/event-stream`:
//   202 / 204           accepted (a notification or a response of ours)
//   200 application/json one message or batch: the answers
//   200 text/event-stream SSE events, each one message (the server's requests
//                        and notifications, then the answer), until the stream ends
//   404 with a session  the session is gone: the link closes (the client
//                        reconnects; a new session starts with a new initialize)
//   other               the requests of that POST fail with -32002 naming the status
// `Mcp-Session-Id` from a response is sent on every later request, and so is
// `MCP-Protocol-Version` once an `initialize` result names it. With a session,
// a GET opens the server's own SSE stream (405: the server has none), resumed
// with Last-Event-ID. shutdown() ends the session with DELETE. With
// ClientConfig::compression holding zstd, POSTs say `Accept-Encoding: zstd`
// and a zstd-encoded answer is inflated within max_frame (RFC 9110 §8.4;
// docs/transports.md, "Compression").
// POSTs run on up to kMaxParallel keep-alive connections; more wait in order.
#include <algorithm>
#include <cctype>
#include <deque>
#include <limits>
#include <set>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "client/link.h"
#include "client/sse.h"
#include "weft/codec.h"
#include "weft/compression.h"
#include "weft/host/server.h"

namespace weft::host::detail {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

constexpr int kMaxParallel = 16;
constexpr std::size_t kMaxIdle = 8;
constexpr Millis kGetRetryMs = 1000;

class HttpLink;

// One HTTP exchange on one TCP connection.
struct Exchange {
  explicit Exchange(boost::asio::io_context& io) : stream(io) {}
  beast::tcp_stream stream;
  http::request<http::string_body> req;
  http::response_parser<http::string_body> parser;
  beast::flat_buffer buf;
  std::vector<std::int64_t> request_ids;  // requests this POST carried
  std::string initialize_id;              // id of an "initialize" request in it
  bool is_get = false;
  bool fresh = true;  // a new connection (not reused from the idle pool)
  bool notification = false;  // it carries a notification (ordering: HttpLink::may_send)
  bool written = false;       // its request went out
  bool heard = false;         // the response's header arrived: the server has taken the message
};

class HttpLink final : public Link, public std::enable_shared_from_this<HttpLink> {
 public:
  HttpLink(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg, LinkHooks hooks)
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

  void start() {
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

  Peer& peer() override { return *peer_; }
  bool closed() const override { return closing_; }
  void flush() override { pump(); }
  void shutdown() override {
    shutting_down_ = true;
    maybe_finish_shutdown();
  }
  void close(const Error& why) override { finish(why.message); }

 private:
  // The "connection" is up once the server accepts a TCP connection; that
  // one is kept for the first POST.
  void probe() {
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
  void offer_handshake() {
    Handshake h = *cfg_.handshake;
    h.capabilities.erase(std::remove(h.capabilities.begin(), h.capabilities.end(), "compression"),
                         h.capabilities.end());
    h.compression_preference.clear();
    offer_handshake_on(
        io_, shared_from_this(),
        [this, h = std::move(h)](HandshakeDone done) { return peer_->handshake(h, std::move(done), {}, now_ms()); },
        hooks_.opened);
  }

  void connect_failed(const beast::error_code& ec) {
    if (closing_) return;
    closing_ = true;
    peer_->close(Error(code::kClosed, "not connected"));
    report(Error(code::kClosed, "cannot connect to " + a_.text + ": " + ec.message()), retryable_connect_error(ec));
  }

  std::string host_header() const {
    const std::string h = a_.host.find(':') != std::string::npos ? "[" + a_.host + "]" : a_.host;
    return a_.port == 80 ? h : h + ":" + std::to_string(a_.port);
  }

  http::request<http::string_body> request(http::verb v) const {
    http::request<http::string_body> r{v, a_.path, 11};
    r.set(http::field::host, host_header());
    r.set(http::field::user_agent, "weft");
    if (session_id_) r.set("Mcp-Session-Id", *session_id_);
    if (protocol_version_) r.set("MCP-Protocol-Version", *protocol_version_);
    r.keep_alive(true);
    return r;
  }

  void post_message(Outgoing&& o) {
    if (closing_) return;
    auto ex = std::make_shared<Exchange>(io_);
    for (const Message& m : o.messages)
      if (std::holds_alternative<Notification>(m)) {
        ex->notification = true;
      } else if (const auto* q = std::get_if<Request>(&m); q && q->id.kind() == Id::Kind::Int) {
        ex->request_ids.push_back(q->id.as_int());
        if (q->method == "initialize") ex->initialize_id = q->id.to_string();
      }
    ex->req = request(http::verb::post);
    ex->req.set(http::field::content_type, "application/json");
    ex->req.set(http::field::accept, "application/json, text/event-stream");
    if (comp_.enabled()) ex->req.set(http::field::accept_encoding, "zstd");
    codec_->encode(o, ex->req.body());
    ex->req.prepare_payload();
    waiting_.push_back(std::move(ex));
    pump();
  }

  void pump() {
    if (!open_ || closing_) return;
    // MCP lifecycle: nothing else is sent while `initialize` is unanswered
    // (its answer brings the session id the later requests must carry).
    while (!initializing_ && active_.size() < kMaxParallel && !waiting_.empty() && may_send(*waiting_.front())) {
      auto ex = std::move(waiting_.front());
      waiting_.pop_front();
      if (!ex->initialize_id.empty()) {
        initializing_ = ex;
        // Requests queued behind it are sent with the session's headers.
      }
      begin(std::move(ex));
    }
  }

  // Order. POSTs run on parallel connections, so the server could take a
  // notification before a request posted earlier, or after one posted later
  // ($/weft/open must precede its request, $/cancelRequest follow it:
  // docs/streams.md). So a request or notification is posted only once the
  // server has taken (answered the header of) every earlier notification,
  // and a notification only once every earlier request has been written.
  // Not once answered: a server may hold a request's header until its answer,
  // which may wait for that very notification (a cancel, a grant). Our
  // responses to the server's requests wait for nothing (the server may be
  // waiting on them), and requests among themselves run in parallel.
  bool may_send(const Exchange& next) const {
    if (next.notification || !next.request_ids.empty()) {
      for (const auto& a : active_) {
        if (a->is_get) continue;
        if (a->notification && !a->heard) return false;
        if (next.notification && !a->request_ids.empty() && !a->written) return false;
      }
    }
    return true;
  }

  void initialized(const std::shared_ptr<Exchange>& ex) {
    if (initializing_ != ex) return;
    initializing_.reset();
    open_get_stream();
    // Headers of the POSTs that waited behind it.
    for (auto& w : waiting_) {
      if (session_id_) w->req.set("Mcp-Session-Id", *session_id_);
      if (protocol_version_) w->req.set("MCP-Protocol-Version", *protocol_version_);
    }
    pump();
  }

  void begin(std::shared_ptr<Exchange> ex) {
    active_.insert(ex);
    if (!idle_.empty()) {
      // Reuse a kept-alive connection (its socket moves into this exchange).
      auto kept = std::move(idle_.back());
      idle_.pop_back();
      ex->stream.socket() = std::move(kept->stream.socket());
      ex->fresh = false;
      return send(std::move(ex));
    }
    ex->stream.async_connect(endpoints_, [self = shared_from_this(), ex](const beast::error_code& ec,
                                                                       const tcp::endpoint&) {
      if (self->closing_) return;
      if (ec) return self->finish("cannot connect: " + ec.message());
      self->send(ex);
    });
  }

  void send(std::shared_ptr<Exchange> ex) {
    http::async_write(ex->stream, ex->req, [self = shared_from_this(), ex](const beast::error_code& ec, std::size_t) {
      if (self->closing_) return;
      if (ec) return self->transport_error(ex, "write: " + ec.message());
      ex->written = true;
      self->pump();  // what waited for this one (may_send)
      if (self->closing_) return;
      // One JSON answer is bounded like a frame. (Not boost::none: Beast 1.74
      // then refuses every body with a Content-Length.)
      ex->parser.body_limit(self->cfg_.framing_limits.max_frame);
      http::async_read_header(ex->stream, ex->buf, ex->parser,
                              [self, ex](const beast::error_code& ec2, std::size_t) { self->on_header(ex, ec2); });
    });
  }

  // A kept-alive connection the server had closed fails at once: that is not
  // the server going away, so the exchange is tried again on a new connection.
  void transport_error(const std::shared_ptr<Exchange>& ex, const std::string& why) {
    if (!ex->fresh && !ex->is_get) {
      active_.erase(ex);
      auto again = std::make_shared<Exchange>(io_);
      again->req = ex->req;
      again->request_ids = ex->request_ids;
      again->initialize_id = ex->initialize_id;
      again->notification = ex->notification;
      if (initializing_ == ex) initializing_ = again;
      active_.insert(again);
      again->stream.async_connect(endpoints_, [self = shared_from_this(), again](const beast::error_code& ec,
                                                                                const tcp::endpoint&) {
        if (self->closing_) return;
        if (ec) return self->finish("cannot connect: " + ec.message());
        self->send(again);
      });
      return;
    }
    finish(why);
  }

  void on_header(const std::shared_ptr<Exchange>& ex, const beast::error_code& ec) {
    if (closing_) return;
    if (ec) return transport_error(ex, "read: " + ec.message());
    ex->heard = true;
    pump();  // what waited for this one (may_send)
    if (closing_) return;
    auto& res = ex->parser.get();
    if (auto sid = res.find("Mcp-Session-Id"); sid != res.end() && !session_id_) {
      session_id_ = std::string(sid->value());
    }
    const unsigned status = res.result_int();
    const std::string type(res[http::field::content_type]);
    if (status == 404 && session_id_) {
      return finish("the server ended session " + *session_id_ + " (404)");
    }
    if (ex->is_get && status == 405) return done(ex, false);  // no server stream: fine
    if (status >= 200 && status < 300 && type.rfind("text/event-stream", 0) == 0) {
      // A stream is as long as the server keeps it open; each event is
      // bounded by the SSE parser instead.
      ex->parser.body_limit(std::numeric_limits<std::uint64_t>::max());
      return read_sse(ex);
    }
    http::async_read(ex->stream, ex->buf, ex->parser, [self = shared_from_this(), ex, status, type](
                                                          const beast::error_code& ec2, std::size_t) {
      if (self->closing_) return;
      if (ec2) return self->transport_error(ex, "read: " + ec2.message());
      std::string body = std::move(ex->parser.get().body());
      if (auto decoded = self->decode_content(ex->parser.get(), body); !decoded) {
        self->reject(ex, decoded.error().message);
      } else if (status == 200 && type.rfind("application/json", 0) == 0) {
        self->deliver(ex, body);
      } else if (status != 202 && status != 204 && !(status == 200 && body.empty())) {
        self->reject(ex, "HTTP " + std::to_string(status) + " " +
                             std::string(ex->parser.get().reason()) + (body.empty() ? "" : ": " + body.substr(0, 200)));
      }
      self->done(ex, ex->parser.get().keep_alive());
    });
  }

  void read_sse(const std::shared_ptr<Exchange>& ex) {
    auto sse = std::make_shared<SseParser>(
        cfg_.framing_limits.max_frame,
        [self = shared_from_this(), ex](SseEvent&& e) {
          if (e.type == "message" && !e.data.empty()) self->deliver(ex, e.data);
          if (ex->is_get) self->last_event_id_ = e.id;
        },
        [self = shared_from_this()](const std::string& why) {
          if (self->hooks_.log) self->hooks_.log(self->a_.text + ": " + why + " skipped");
        });
    read_sse_more(ex, std::move(sse));
  }

  void read_sse_more(const std::shared_ptr<Exchange>& ex, std::shared_ptr<SseParser> sse) {
    http::async_read_some(ex->stream, ex->buf, ex->parser, [self = shared_from_this(), ex, sse](
                                                               const beast::error_code& ec, std::size_t) {
      if (self->closing_) return;
      // Each read appends to the body; what was fed is removed, so that a
      // long-lived stream holds at most one read's worth.
      auto& body = ex->parser.get().body();
      if (!body.empty()) {
        sse->feed(body);
        body.clear();
      }
      if (self->closing_) return;
      if (ec || ex->parser.is_done()) {
        const bool ended_cleanly = !ec || ec == http::error::end_of_stream;
        if (!ended_cleanly && ex->is_get) return self->done(ex, false);
        if (!ended_cleanly) return self->finish("event stream: " + ec.message());
        self->reject(ex, "the event stream ended before the answer");
        return self->done(ex, !ec && ex->parser.get().keep_alive());
      }
      self->read_sse_more(ex, sse);
    });
  }

  // RFC 9110 §8.4: a body in a content coding is decoded first; only zstd
  // is asked for, and it is inflated within max_frame (docs/framing.md Z4, Z5).
  Result<void> decode_content(const http::response<http::string_body>& res, std::string& body) {
    auto ce = res.find(http::field::content_encoding);
    if (ce == res.end()) return {};
    std::string coding(ce->value());
    for (auto& ch : coding) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (coding == "identity") return {};
    if (coding != "zstd" || !comp_.enabled())
      return Error(code::kClosed, "answer in Content-Encoding '" + std::string(ce->value()) + "', which was not asked for");
    std::string plain;
    if (auto r = comp_.decompress(body, cfg_.framing_limits.max_frame, plain); !r)
      return Error(code::kClosed, "zstd answer: " + r.error().message);
    body = std::move(plain);
    return {};
  }

  // Messages from the server for `ex`: the Peer gets each document.
  void deliver(const std::shared_ptr<Exchange>& ex, std::string_view text) {
    auto doc = codec_->decode(text);
    if (!doc) {
      if (hooks_.diagnostic)
        hooks_.diagnostic(Diagnostic{Diagnostic::Kind::BadFrame, doc.error().message, doc.error()});
      return;
    }
    bool answered_initialize = false;
    auto answered = [&](const json& m) {
      if (!m.is_object() || !m.contains("id") || !(m.contains("result") || m.contains("error"))) return;
      const json& id = m["id"];
      if (id.is_number_integer()) std::erase(ex->request_ids, id.get<std::int64_t>());
      if (!ex->initialize_id.empty() && id.dump() == ex->initialize_id && m.contains("result") &&
          m["result"].is_object() && m["result"].contains("protocolVersion") &&
          m["result"]["protocolVersion"].is_string())
        protocol_version_ = m["result"]["protocolVersion"].get<std::string>();
      if (!ex->initialize_id.empty() && id.dump() == ex->initialize_id) answered_initialize = true;
    };
    if (doc->value.is_array())
      for (const json& m : doc->value) answered(m);
    else
      answered(doc->value);
    // Later POSTs carry the session before our Peer even sees the answer
    // (its completion may send the next request at once).
    if (answered_initialize) initialized(ex);
    peer_->receive(std::move(*doc));
  }

  // The requests of `ex` that got no answer fail now (-32002 naming why).
  void reject(const std::shared_ptr<Exchange>& ex, const std::string& why) {
    if (ex->request_ids.empty()) return;
    Outgoing o;
    for (std::int64_t id : ex->request_ids) o.messages.emplace_back(Request{Id::integer(id), "", std::nullopt});
    ex->request_ids.clear();
    peer_->undelivered(o, Error(code::kClosed, why));
  }

  void done(const std::shared_ptr<Exchange>& ex, bool reusable) {
    active_.erase(ex);
    initialized(ex);  // an initialize without an answer must not block the rest
    if (ex->is_get) {
      get_open_ = false;
      if (reusable || ex->parser.get().result_int() != 405) schedule_get();
    } else if (reusable && idle_.size() < kMaxIdle && !closing_) {
      idle_.push_back(ex);
    }
    pump();
    maybe_finish_shutdown();
  }

  void open_get_stream() {
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

  void schedule_get() {
    if (closing_ || shutting_down_) return;
    get_timer_.expires_after(std::chrono::milliseconds(kGetRetryMs));
    get_timer_.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      if (auto self = w.lock(); self && !ec) self->open_get_stream();
    });
  }

  void maybe_finish_shutdown() {
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

  void finish(const std::string& why) {
    if (closing_ && reported_) return;
    closing_ = true;
    Error e(code::kClosed, "connection to " + a_.text + " closed: " + why);
    get_timer_.cancel();
    beast::error_code ignored;
    for (auto& ex : active_) ex->stream.socket().close(ignored);
    for (auto& ex : idle_) ex->stream.socket().close(ignored);
    active_.clear();
    idle_.clear();
    waiting_.clear();
    peer_->close(e);
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
  tcp::resolver::results_type endpoints_;
  boost::asio::steady_timer get_timer_;
  std::unique_ptr<Codec> codec_;
  Compressor comp_;  // ClientConfig::compression: zstd answers are asked for and inflated
  std::unique_ptr<Peer> peer_;
  std::deque<std::shared_ptr<Exchange>> waiting_;
  std::set<std::shared_ptr<Exchange>> active_;
  std::vector<std::shared_ptr<Exchange>> idle_;
  std::shared_ptr<Exchange> initializing_;
  std::optional<std::string> session_id_;
  std::optional<std::string> protocol_version_;
  std::string last_event_id_;
  bool open_ = false;
  bool closing_ = false;
  bool reported_ = false;
  bool shutting_down_ = false;
  bool deleting_ = false;
  bool get_open_ = false;
};

}  // namespace

std::shared_ptr<Link> open_http_link(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg,
                                     LinkHooks hooks) {
  auto l = std::make_shared<HttpLink>(io, a, cfg, std::move(hooks));
  l->start();
  return l;
}

}  // namespace weft::host::detail
