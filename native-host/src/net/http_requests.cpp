// http_requests.cpp — what the Streamable HTTP endpoint does with each method
// (HttpConn): POST (one JSON-RPC message, its Content-Type and
// Content-Encoding, the session it starts or belongs to, its answer as JSON
// or SSE), GET (the session's own SSE stream, resumable) and DELETE (ending a
// session).
#include <cctype>
#include <vector>

#include "net/http_server.h"
#include "net/origin.h"

namespace weft::host::detail {

void HttpConn::post() {
  const std::string accept = header(req_, "Accept").value_or("");
  if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream"))
    return respond(http::status::not_acceptable,
                   error_body(code::kServerError, "Accept must list application/json and text/event-stream"));
  const std::string type = header(req_, "Content-Type").value_or("");
  if (!media_type_is(type, "application/json"))
    return respond(http::status::unsupported_media_type,
                   error_body(code::kInvalidRequest, "Content-Type must be application/json"));
  if (!decode_content()) return;
  auto doc = svc_.codec().decode(req_.body());
  if (!doc) return respond(http::status::bad_request, error_body(doc.error().code, doc.error().message));
  if (doc.value().value.is_array())
    return respond(http::status::bad_request,
                   error_body(code::kInvalidRequest, "Invalid Request: a POST carries one JSON-RPC message, not a batch"));
  Incoming in = classify(doc.value());
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

}  // namespace weft::host::detail
