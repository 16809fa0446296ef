// http_server.cpp — `listen_http`: the MCP Streamable HTTP transport
// (revision 2025-11-25) on Boost.Beast: one endpoint (WebOptions::http_path)
// taking POST, GET and DELETE, and OPTIONS for browsers' CORS preflight
// (docs/transports.md, "Streamable HTTP").
//
// Checks, in order, each answered with its status and a JSON-RPC error body
// without id where the spec allows one: Origin (403), path (404),
// MCP-Protocol-Version (400), method (405), Accept (406), Content-Type (415),
// Content-Encoding (415 unless zstd with `weft serve --compress zstd`),
// body: one valid JSON-RPC message (400), session (400 missing, 404 unknown).
// Sizes are bounded by Beast's parser before buffering (431 header, 413
// body), a zstd body by the same limit once inflated (413); a request must
// arrive within handshake_timeout (first) or idle_timeout (kept-alive
// connection); every write within write_timeout.
//
// Compression is HTTP's own (RFC 9110 §8.4, §12.5.3; zstd: RFC 8878 §7.2),
// not the handshake's (docs/transports.md, "Compression"): a JSON answer over
// 1 KiB goes zstd-encoded when the request's Accept-Encoding allows zstd and
// that is smaller; SSE streams go as they are.
#include <cctype>
#include <deque>
#include <random>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "net/acceptor_loop.h"
#include "net/hub.h"
#include "net/mcp_session.h"
#include "net/origin.h"
#include "session.h"  // to_time_point
#include "weft/compression.h"

namespace weft::host::detail {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

// MCP-Protocol-Version values this transport speaks (the header exists from
// 2025-06-18; an absent header means 2025-03-26, MCP transports, "Protocol
// Version Header").
constexpr const char* kProtocolVersions[] = {"2025-03-26", "2025-06-18", "2025-11-25"};

std::chrono::milliseconds ms(Millis m) { return std::chrono::milliseconds(m); }
std::string_view sv(beast::string_view v) { return std::string_view(v.data(), v.size()); }

std::optional<std::string> header(const http::request<http::string_body>& req, beast::string_view name) {
  auto it = req.find(name);
  if (it == req.end()) return std::nullopt;
  return std::string(sv(it->value()));
}

// {"jsonrpc":"2.0","id":null,"error":{...}}: the body the spec allows on a
// refused request ("a JSON-RPC error response that has no id").
std::string error_body(int code, const std::string& message) {
  std::string out;
  write_json(Message{Response{Id::null(), Error(code, message)}}, out);
  return out;
}

// 128 random bits as hex: visible ASCII (MCP: 0x21–0x7E), not guessable.
std::string new_session_id() {
  static std::random_device rd;
  std::string s;
  static const char* hex = "0123456789abcdef";
  for (int i = 0; i < 4; ++i) {
    std::uint32_t v = rd();
    for (int j = 0; j < 8; ++j, v >>= 4) s += hex[v & 15];
  }
  return s;
}

class HttpService;

class HttpConn : public Exchange, public std::enable_shared_from_this<HttpConn> {
 public:
  HttpConn(HttpService& svc, tcp::socket socket, std::string name);
  void start(bool over_limit);
  void close_now() { finish(""); }
  void drain();
  bool busy() const { return handling_; }

  void sse_send(std::string text) override;
  void sse_end() override;

 private:
  void do_read();
  void on_read(beast::error_code ec);
  void handle();
  void post();
  void get();
  void del();
  bool decode_content();
  void respond(http::status status, std::string body, const char* type = "application/json",
               std::optional<std::string> session = std::nullopt, const char* accept_encoding = nullptr);
  void preflight();
  template <class Fields> void cors(Fields& res) const;
  void start_sse(std::string first, std::optional<std::string> session, std::shared_ptr<McpSession> s);
  void watch_close();
  void pump();
  void finish(const std::string& why);

  HttpService& svc_;
  const WebOptions& web_;
  std::string name_;
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> req_;
  std::shared_ptr<McpSession> session_;  // while streaming (or stateless)
  std::optional<std::string> cors_origin_;  // an allowed Origin of the current request
  bool first_ = true;
  bool handling_ = false;
  bool draining_ = false;
  bool finished_ = false;
  // SSE
  bool sse_ = false;
  bool sse_over_ = false;
  bool writing_ = false;
  std::deque<std::string> out_;
  std::optional<http::response<http::empty_body>> sse_res_;
  std::optional<http::response_serializer<http::empty_body>> sse_sr_;
  char probe_ = 0;
};

class HttpService final : public AcceptorLoop<HttpService, HttpConn> {
 public:
  explicit HttpService(Hub hub) : AcceptorLoop(std::move(hub), "http", "http-conn#") {}

  std::size_t connections() const override { return sessions_.size(); }
  std::size_t in_flight() const override {
    std::size_t n = 0;
    for (auto& [id, s] : sessions_) n += s->peer().in_flight();
    return n;
  }

  void drain(Millis deadline, const DrainNotice& notice) override {
    stop_accepting();
    // Each session's peer announces it (docs/protocol.md, "Drain"): the
    // notice goes on the GET stream (kept for a resuming client if none is
    // open), and a request POSTed into the session from now on is answered
    // -32005 by the core.
    for (auto& [id, s] : sessions_) {
      s->peer().peer().drain(notice);
      s->peer().rearm();
    }
    notice_ = notice;
    // Sessions end when the grace period is over; connections close once
    // their current request is answered.
    grace_.emplace(hub().io);
    grace_->expires_at(to_time_point(deadline));
    grace_->async_wait([this](beast::error_code e) {
      if (!e) close_all();
    });
    // GET streams would hold the server for the whole grace period.
    auto sessions = sessions_;
    for (auto& [id, s] : sessions) s->end_get_connection();
    for (auto& c : snapshot()) c->drain();
    notify_idle();
  }

  // Draining: some request is still being answered. Until none is, kept-alive
  // connections stay open, so that a request sent on one is answered -32005
  // rather than met by a closed connection.
  bool working() const {
    for (auto& [id, s] : sessions_)
      if (s->peer().in_flight() > 0) return true;
    for (auto& c : snapshot())
      if (c->busy()) return true;
    return false;
  }
  // After a request's answer went out: once nothing is in flight, the
  // connections kept open for it close.
  void drain_step() {
    if (!notice_ || working()) return;
    for (auto& c : snapshot()) c->drain();
  }
  void close_all() override {
    stop_accepting();
    auto sessions = sessions_;
    for (auto& [id, s] : sessions) s->end("server stopped");
    for (auto& c : snapshot()) c->close_now();
    notify_idle();
  }

  std::shared_ptr<McpSession> find(const std::string& id) {
    auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : it->second;
  }
  // nullptr when max_sessions are live.
  std::shared_ptr<McpSession> create(bool stateful) {
    if (stateful && sessions_.size() >= hub().opts.web.max_sessions) return nullptr;
    auto s = std::make_shared<McpSession>(hub(), stateful ? new_session_id() : std::string(), next_session_++);
    if (stateful) {
      sessions_.emplace(s->id(), s);
      s->on_end = [this](McpSession& gone) { sessions_.erase(gone.id()); };
    }
    return s;
  }

  // What drain() announced; nullopt before (or after close_all() alone).
  const std::optional<DrainNotice>& notice() const { return notice_; }

  const Codec& codec() {
    if (!codec_) codec_ = make_codec(CodecKind::Json, hub().opts.codec_limits);
    return *codec_;
  }

  // ServerOptions::compression: zstd bodies are taken and given (one set of
  // contexts for the listener: every connection runs on the one io thread).
  Compressor& compressor() { return comp_; }

 private:
  std::optional<boost::asio::steady_timer> grace_;
  std::optional<DrainNotice> notice_;
  std::unordered_map<std::string, std::shared_ptr<McpSession>> sessions_;
  std::unique_ptr<Codec> codec_;
  Compressor comp_{hub().opts.compression};
  std::uint64_t next_session_ = 1;
};

HttpConn::HttpConn(HttpService& svc, tcp::socket socket, std::string name)
    : svc_(svc), web_(svc.hub().opts.web), name_(std::move(name)), stream_(std::move(socket)) {}

void HttpConn::start(bool over_limit) {
  if (over_limit) {
    svc_.log(name_ + ": connection limit (" + std::to_string(web_.max_connections) + ") reached, refusing");
    req_.keep_alive(false);
    respond(http::status::service_unavailable, error_body(code::kServerError, "too many connections"));
    return;
  }
  do_read();
}

void HttpConn::do_read() {
  if (finished_) return;
  if (draining_ && !svc_.working()) return finish("");
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(web_.max_header));
  parser_->body_limit(svc_.max_message());
  const Millis t = first_ ? web_.handshake_timeout : web_.idle_timeout;
  if (t) stream_.expires_after(ms(t));
  else stream_.expires_never();
  http::async_read(stream_, buf_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void HttpConn::on_read(beast::error_code ec) {
  if (finished_) return;
  first_ = false;
  if (ec) {
    req_ = {};
    req_.keep_alive(false);
    if (ec == http::error::body_limit)
      return respond(http::status::payload_too_large,
                     error_body(code::kInvalidRequest, "Invalid Request: body larger than " +
                                                           std::to_string(svc_.max_message()) + " bytes"));
    if (ec == http::error::header_limit)
      return respond(http::status::request_header_fields_too_large,
                     error_body(code::kInvalidRequest, "Invalid Request: header block larger than " +
                                                           std::to_string(web_.max_header) + " bytes"));
    if (ec == http::error::end_of_stream || ec == boost::asio::error::eof) return finish("");
    if (ec == beast::error::timeout) return finish("");  // idle, or a request too slow to arrive
    return respond(http::status::bad_request, error_body(code::kParseError, "Parse error: bad HTTP request: " + ec.message()));
  }
  req_ = parser_->release();
  handling_ = true;
  handle();
}

void HttpConn::handle() {
  auto origin = header(req_, "Origin");
  cors_origin_.reset();
  if (!origin_allowed(web_.allow_origins, origin.has_value(), origin ? *origin : std::string()))
    return respond(http::status::forbidden,
                   error_body(code::kServerError, "origin " + *origin + " is not allowed (weft serve --allow-origin)"));
  cors_origin_ = origin;
  std::string_view target = sv(req_.target());
  target = target.substr(0, target.find('?'));
  if (target != web_.http_path)
    return respond(http::status::not_found,
                   error_body(code::kServerError, "no MCP endpoint at " + std::string(target) + " (it is " + web_.http_path + ")"));
  if (auto v = header(req_, "MCP-Protocol-Version")) {
    bool known = false;
    for (const char* p : kProtocolVersions) known = known || *v == p;
    if (!known)
      return respond(http::status::bad_request,
                     error_body(code::kInvalidRequest, "unsupported MCP-Protocol-Version '" + *v +
                                                           "' (2025-03-26, 2025-06-18, 2025-11-25)"));
  }
  switch (req_.method()) {
    case http::verb::options: return preflight();
    case http::verb::post: return post();
    case http::verb::get: return get();
    case http::verb::delete_: return del();
    default: break;
  }
  respond(http::status::method_not_allowed,
          error_body(code::kServerError, "method " + std::string(sv(req_.method_string())) + " not allowed (POST, GET, DELETE)"));
}

void HttpConn::post() {
  const std::string accept = header(req_, "Accept").value_or("");
  if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream"))
    return respond(http::status::not_acceptable,
                   error_body(code::kServerError, "Accept must list application/json and text/event-stream"));
  const std::string type = header(req_, "Content-Type").value_or("");
  if (type.substr(0, type.find(';')) != "application/json")
    return respond(http::status::unsupported_media_type,
                   error_body(code::kInvalidRequest, "Content-Type must be application/json"));
  if (!decode_content()) return;
  auto doc = svc_.codec().decode(req_.body());
  if (!doc) return respond(http::status::bad_request, error_body(doc.error().code, doc.error().message));
  Incoming in = classify(doc.value(), 1);
  if (in.batch)
    return respond(http::status::bad_request,
                   error_body(code::kInvalidRequest, "Invalid Request: a POST carries one JSON-RPC message, not a batch"));
  if (auto* bad = std::get_if<Invalid>(&in.items[0]))
    return respond(http::status::bad_request, error_body(bad->error.code, bad->error.message));
  const Request* request = std::get_if<Request>(&in.items[0]);
  const bool stateful = web_.http_sessions;

  std::shared_ptr<McpSession> s;
  std::optional<std::string> new_id;
  auto sid = header(req_, "Mcp-Session-Id");
  if (stateful && sid) {
    s = svc_.find(*sid);
    if (!s) return respond(http::status::not_found, error_body(code::kServerError, "no session " + *sid + " (unknown or ended)"));
  } else if (stateful && !request) {
    return respond(http::status::bad_request,
                   error_body(code::kInvalidRequest, "Mcp-Session-Id header required (the session starts with a request)"));
  } else {
    // Stateful: the first request without a session id starts a session
    // (the initialization; MCP's is `initialize`). Stateless: every POST.
    if (svc_.draining()) {
      // No new session while draining. A request is answered by a drained
      // one-off peer: -32005 from the core with data {retry_after, reason},
      // as on every other connection (docs/protocol.md, "Drain").
      if (!request || !svc_.notice())
        return respond(http::status::service_unavailable, error_body(code::kUnavailable, "server shutting down"));
      s = svc_.create(false);
      s->peer().peer().drain(*svc_.notice());
    } else {
      s = svc_.create(stateful);
      if (!s) return respond(http::status::service_unavailable, error_body(code::kServerError, "too many sessions"));
      if (stateful) new_id = s->id();
    }
  }
  if (!request) {
    s->deliver(std::move(doc.value()));
    return respond(http::status::accepted, "", nullptr);
  }
  if (s->waiting(request->id))
    return respond(http::status::conflict,
                   error_body(code::kInvalidRequest, "a request with id " + request->id.to_string() + " is already in flight in this session"));
  const Id id = request->id;
  s->begin_request(id);
  s->deliver(std::move(doc.value()));
  std::string priming;
  if (auto body = s->settle(id, shared_from_this(), priming)) return respond(http::status::ok, std::move(*body), "application/json", new_id);
  start_sse(std::move(priming), new_id, s);
}

// RFC 9110 §8.4: the body is decoded as Content-Encoding says. zstd (with
// compression on) is inflated within max_message, by the rules of
// docs/framing.md Z4 (413) and Z5 (400); any other coding is 415, naming
// what is accepted in Accept-Encoding (§15.5.16). False: answered already.
bool HttpConn::decode_content() {
  auto ce = header(req_, "Content-Encoding");
  if (!ce) return true;
  auto& comp = svc_.compressor();
  std::vector<std::string> codings;
  for (auto& c : header_tokens(*ce)) {
    for (auto& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (c != "identity") codings.push_back(std::move(c));
  }
  if (codings.empty()) return true;
  if (codings.size() != 1 || codings[0] != "zstd" || !comp.enabled()) {
    respond(http::status::unsupported_media_type,
            error_body(code::kInvalidRequest,
                       "Content-Encoding '" + *ce + "' is not supported (" +
                           (comp.enabled() ? "zstd" : "none: weft serve --compress zstd takes zstd") + ")"),
            "application/json", std::nullopt, comp.enabled() ? "zstd" : "identity");
    return false;
  }
  std::string plain;
  if (auto r = comp.decompress(req_.body(), svc_.max_message(), plain); !r) {
    respond(r.error().code == code::kInvalidRequest ? http::status::payload_too_large : http::status::bad_request,
            error_body(r.error().code, r.error().message));
    return false;
  }
  req_.body() = std::move(plain);
  return true;
}

void HttpConn::get() {
  if (!web_.http_sessions)
    return respond(http::status::method_not_allowed, error_body(code::kServerError, "stateless server: no GET stream"));
  if (!accepts(header(req_, "Accept").value_or(""), "text/event-stream"))
    return respond(http::status::not_acceptable, error_body(code::kServerError, "Accept must list text/event-stream"));
  auto sid = header(req_, "Mcp-Session-Id");
  if (!sid) return respond(http::status::bad_request, error_body(code::kInvalidRequest, "Mcp-Session-Id header required"));
  auto s = svc_.find(*sid);
  if (!s) return respond(http::status::not_found, error_body(code::kServerError, "no session " + *sid + " (unknown or ended)"));
  // A stream opened now would hold the draining server for its whole grace period.
  if (svc_.draining())
    return respond(http::status::service_unavailable, error_body(code::kUnavailable, "server draining: no new streams"));
  auto opened = s->open_stream(shared_from_this(), header(req_, "Last-Event-ID"));
  if (opened.status != 200)
    return respond(static_cast<http::status>(opened.status), error_body(code::kInvalidRequest, opened.error));
  start_sse(std::move(opened.text), std::nullopt, s);
  if (opened.ended) sse_end();
}

void HttpConn::del() {
  if (!web_.http_sessions)
    return respond(http::status::method_not_allowed, error_body(code::kServerError, "stateless server: no sessions to end"));
  auto sid = header(req_, "Mcp-Session-Id");
  if (!sid) return respond(http::status::bad_request, error_body(code::kInvalidRequest, "Mcp-Session-Id header required"));
  auto s = svc_.find(*sid);
  if (!s) return respond(http::status::not_found, error_body(code::kServerError, "no session " + *sid + " (unknown or ended)"));
  s->end("");
  respond(http::status::no_content, "", nullptr);
}

// A page on an allowed origin calls the endpoint with fetch(): its POST (JSON
// body, custom headers) is preflighted, and it must be allowed to read
// Mcp-Session-Id (Fetch standard, CORS protocol).
void HttpConn::preflight() {
  auto res = std::make_shared<http::response<http::empty_body>>(http::status::no_content, req_.version());
  res->set(http::field::server, "weft");
  cors(*res);
  res->set(http::field::access_control_allow_methods, "GET, POST, DELETE");
  res->set(http::field::access_control_allow_headers,
           "Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID");
  res->set(http::field::access_control_max_age, "600");
  res->keep_alive(req_.keep_alive() && !draining_);
  stream_.expires_after(ms(web_.write_timeout));
  http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
    self->handling_ = false;
    if (ec || !res->keep_alive()) return self->finish("");
    self->do_read();
  });
}

template <class Fields>
void HttpConn::cors(Fields& res) const {
  if (!cors_origin_) return;
  res.set(http::field::access_control_allow_origin, *cors_origin_);
  res.set(http::field::access_control_expose_headers, "Mcp-Session-Id");
  res.set(http::field::vary, "Origin");
}

void HttpConn::respond(http::status status, std::string body, const char* type, std::optional<std::string> session,
                       const char* accept_encoding) {
  auto res = std::make_shared<http::response<http::string_body>>(status, req_.version() ? req_.version() : 11);
  res->set(http::field::server, "weft");
  if (type && !body.empty()) res->set(http::field::content_type, type);
  if (status == http::status::method_not_allowed) res->set(http::field::allow, web_.http_sessions ? "GET, POST, DELETE" : "POST");
  if (session) res->set("Mcp-Session-Id", *session);
  if (accept_encoding) res->set(http::field::accept_encoding, accept_encoding);
  cors(*res);
  if (auto& comp = svc_.compressor(); comp.enabled() && status == http::status::ok && type &&
                                      std::string_view(type) == "application/json") {
    // An answer's encoding depends on the request's Accept-Encoding
    // (RFC 9110 §12.5.5), so caches are told, whatever was picked.
    auto vary = res->find(http::field::vary);
    res->set(http::field::vary, vary == res->end() ? std::string("Accept-Encoding")
                                                   : std::string(sv(vary->value())) + ", Accept-Encoding");
    std::string z;
    if (accepts_coding(header(req_, "Accept-Encoding").value_or(""), "zstd") && comp.compress(body, z)) {
      body = std::move(z);
      res->set(http::field::content_encoding, "zstd");
    }
  }
  res->keep_alive(req_.keep_alive() && !draining_);
  res->body() = std::move(body);
  if (status != http::status::no_content) res->prepare_payload();  // RFC 9110 §8.6: no Content-Length on 204
  stream_.expires_after(ms(web_.write_timeout));
  http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
    self->handling_ = false;
    if (ec) return self->finish(ec == beast::error::timeout ? "slow client: response not taken in time" : "");
    if (!res->keep_alive()) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return self->finish("");
    }
    self->do_read();
  });
}

void HttpConn::start_sse(std::string first, std::optional<std::string> session, std::shared_ptr<McpSession> s) {
  sse_ = true;
  session_ = std::move(s);
  sse_res_.emplace(http::status::ok, req_.version());
  sse_res_->set(http::field::server, "weft");
  sse_res_->set(http::field::content_type, "text/event-stream");
  sse_res_->set(http::field::cache_control, "no-cache");
  if (session) sse_res_->set("Mcp-Session-Id", *session);
  cors(*sse_res_);
  sse_res_->keep_alive(false);  // the connection closes with the stream
  sse_res_->chunked(true);
  sse_sr_.emplace(*sse_res_);
  writing_ = true;
  stream_.expires_after(ms(web_.write_timeout));
  http::async_write_header(stream_, *sse_sr_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->finish("SSE header: " + ec.message());
    self->watch_close();
    self->pump();
  });
  // First: events of this stream may be queued already (McpSession::settle).
  if (!first.empty()) out_.push_front(std::move(first));
}

// While streaming nothing should arrive: a read that completes means the
// client closed (or broke the protocol); the stream is detached for resumption.
void HttpConn::watch_close() {
  stream_.socket().async_read_some(boost::asio::buffer(&probe_, 1),
                                   [self = shared_from_this()](beast::error_code, std::size_t) {
                                     if (!self->finished_) self->finish("");
                                   });
}

void HttpConn::sse_send(std::string text) {
  if (finished_ || sse_over_) return;
  out_.push_back(std::move(text));
  pump();
}

void HttpConn::sse_end() {
  if (finished_ || sse_over_) return;
  sse_over_ = true;
  pump();
}

void HttpConn::pump() {
  if (finished_ || writing_ || !sse_sr_ || !sse_sr_->is_header_done()) return;
  if (out_.empty()) {
    if (!sse_over_) return;
    writing_ = true;
    stream_.expires_after(ms(web_.write_timeout));
    boost::asio::async_write(stream_, http::make_chunk_last(), [self = shared_from_this()](beast::error_code, std::size_t) {
      self->writing_ = false;
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      self->finish("");
    });
    return;
  }
  writing_ = true;
  auto chunk = std::make_shared<std::string>(std::move(out_.front()));
  out_.pop_front();
  stream_.expires_after(ms(web_.write_timeout));
  boost::asio::async_write(stream_, http::make_chunk(boost::asio::buffer(*chunk)),
                           [self = shared_from_this(), chunk](beast::error_code ec, std::size_t) {
                             self->writing_ = false;
                             if (ec) return self->finish(ec == beast::error::timeout ? "slow client: SSE event not taken in time" : "");
                             self->pump();
                           });
}

void HttpConn::drain() {
  draining_ = true;
  if (!handling_ && !sse_ && !svc_.working()) close_now();  // idle between requests
}

void HttpConn::finish(const std::string& why) {
  if (finished_) return;
  finished_ = true;
  auto self = shared_from_this();
  if (!why.empty()) svc_.log(name_ + ": " + why);
  beast::error_code ignored;
  stream_.socket().close(ignored);
  if (session_) {
    session_->detach(this);
    session_.reset();
  }
  svc_.remove(this);
  if (svc_.draining()) svc_.drain_step();
}

}  // namespace

Result<std::unique_ptr<WebService>> make_http_service(Hub hub, const std::string& host, std::uint16_t port) {
  return HttpService::make(std::move(hub), host, port);
}

}  // namespace weft::host::detail
