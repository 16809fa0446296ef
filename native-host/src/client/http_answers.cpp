// http_answers.cpp — what comes back to a Streamable HTTP link (HttpLink) on
// an exchange: the response's header (session id, status), a JSON body
// (inflated when zstd-encoded) or an SSE stream read event by event, each
// message handed to the Peer, the requests left unanswered failed, and the
// connection kept for reuse or the GET stream scheduled again.
#include <cctype>
#include <limits>

#include "client/http_link.h"
#include "net/origin.h"

namespace weft::host::detail::http_link {

void HttpLink::on_header(const std::shared_ptr<Exchange>& ex, const beast::error_code& ec) {
  if (closing_) return;
  if (ec) return transport_error(ex, "read: " + ec.message());
  ex->heard = true;
  auto& res = ex->parser.get();
  if (auto sid = res.find("Mcp-Session-Id"); sid != res.end() && !session_id_) {
    session_id_ = std::string(sid->value());
    for (auto& w : waiting_) w->req.set("Mcp-Session-Id", *session_id_);  // built before it was known
  } else if (!session_id_ && !ex->request_ids.empty()) {
    sessionless_ = true;
  }
  pump();  // what waited for this one (may_send), with the session's id
  if (closing_) return;
  const unsigned status = res.result_int();
  const std::string type(res[http::field::content_type]);
  if (status == 404 && session_id_) {
    // Heard, so finish() does not count it among those lost with the link:
    // a notification refused with the session is told of here.
    if (ex->notification && hooks_.refused)
      hooks_.refused("the server refused a notification: it ended session " + *session_id_ + " (404)");
    return finish("the server ended session " + *session_id_ + " (404)");
  }
  if (ex->is_get && status == 405) return done(ex, false);  // no server stream: fine
  if (status >= 200 && status < 300 && media_type_is(type, "text/event-stream")) {
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
      self->reject(ex, decoded.error().message, code::kParseError);
    } else if (status == 200 && media_type_is(type, "application/json")) {
      self->deliver(ex, body);
    } else if (status != 202 && status != 204 && !(status == 200 && body.empty())) {
      self->reject(ex, "HTTP " + std::to_string(status) + " " +
                           std::string(ex->parser.get().reason()) + (body.empty() ? "" : ": " + body.substr(0, 200)));
    }
    self->done(ex, ex->parser.get().keep_alive());
  });
}

void HttpLink::read_sse(const std::shared_ptr<Exchange>& ex) {
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

void HttpLink::read_sse_more(const std::shared_ptr<Exchange>& ex, std::shared_ptr<SseParser> sse) {
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
Result<void> HttpLink::decode_content(const http::response<http::string_body>& res, std::string& body) {
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
void HttpLink::deliver(const std::shared_ptr<Exchange>& ex, std::string_view text) {
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
void HttpLink::reject(const std::shared_ptr<Exchange>& ex, const std::string& why, int code) {
  if (ex->notification && hooks_.refused) hooks_.refused("the server refused a notification: " + why);
  if (ex->request_ids.empty()) return;
  Outgoing o;
  for (std::int64_t id : ex->request_ids) o.messages.emplace_back(Request{Id::integer(id), "", std::nullopt});
  ex->request_ids.clear();
  undelivering_ = code == code::kClosed;
  peer_->undelivered(o, Error(code, why));
  undelivering_ = false;
}

void HttpLink::done(const std::shared_ptr<Exchange>& ex, bool reusable) {
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

}  // namespace weft::host::detail::http_link
