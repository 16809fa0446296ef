// http_conn.cpp — one connection of the Streamable HTTP listener (HttpConn):
// reading a request within its limits and timeouts, the checks every request
// passes before its method (Origin, path, MCP-Protocol-Version, method), the
// CORS preflight, plain answers (zstd-encoded when allowed), and closing.
#include "net/http_server.h"
#include "net/origin.h"

namespace weft::host::detail {

namespace {

// MCP-Protocol-Version values this transport speaks (the header exists from
// 2025-06-18; an absent header means 2025-03-26, MCP transports, "Protocol
// Version Header").
constexpr const char* kProtocolVersions[] = {"2025-03-26", "2025-06-18", "2025-11-25"};

}  // namespace

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

}  // namespace weft::host::detail
