// http_posts.cpp — how a Streamable HTTP link (HttpLink) sends: each message
// of the Peer as one POST, queued, held back while `initialize` is unanswered
// and while an earlier one must reach the server first, then sent on a
// kept-alive connection or a new one (at most kMaxParallel at once), and tried
// again once on a new connection when a kept-alive one turns out closed
// before the POST was written.
#include "client/http_link.h"

#include <sys/socket.h>

#include <cerrno>

namespace weft::host::detail::http_link {

void HttpLink::post_message(Outgoing&& o) {
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
  if (!codec_->encode(o, ex->req.body()))  // a NaN or an infinity (codec.h)
    return peer_->undelivered(o, unencodable_error(), unencodable(o));
  if (const std::size_t n = ex->req.body().size(); cfg_.max_request && n > cfg_.max_request)
    return peer_->undelivered(o, oversize_error(n, cfg_.max_request, "max_request"));  // as Connection does
  ex->req.prepare_payload();
  waiting_.push_back(std::move(ex));
  pump();
}

void HttpLink::pump() {
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
// Sessions: a server with sessions starts one with the first request, and
// refuses a notification without its id (400): until a request's header
// has been heard (bringing the id, or none from a server without sessions),
// a notification also waits for the requests before it to be heard.
bool HttpLink::may_send(const Exchange& next) const {
  if (next.notification || !next.request_ids.empty()) {
    for (const auto& a : active_) {
      if (a->is_get) continue;
      if (a->notification && !a->heard) return false;
      if (next.notification && !a->request_ids.empty() && !a->written) return false;
      if (next.notification && !a->request_ids.empty() && !a->heard && !session_id_ && !sessionless_) return false;
    }
  }
  return true;
}

void HttpLink::initialized(const std::shared_ptr<Exchange>& ex) {
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

namespace {
// Whether an idle connection is no longer one to send on: the server closed
// it (a read would end at once) or sent something unasked. Checked before
// reuse, because a POST written to a connection the server closes meanwhile
// is not sent again (transport_error).
bool dropped(tcp::socket& s) {
  char c;
  const ssize_t n = ::recv(s.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
}
}  // namespace

void HttpLink::begin(std::shared_ptr<Exchange> ex) {
  active_.insert(ex);
  while (!idle_.empty()) {
    // Reuse a kept-alive connection (its socket moves into this exchange).
    auto kept = std::move(idle_.back());
    idle_.pop_back();
    if (dropped(kept->stream.socket())) continue;  // closed with `kept`
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

void HttpLink::send(std::shared_ptr<Exchange> ex) {
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

// A kept-alive connection the server had closed fails the write: that is
// not the server going away, and the server cannot have taken the message
// whole, so it is tried again on a new connection. Once written it may have
// been run: a POST is not sent again (RFC 9112 §9.3.1; docs/protocol.md:
// retry is the caller's choice, CallPolicy::retry). Its calls fail -32002,
// and the link goes on: the next POST finds out whether the server is there.
void HttpLink::transport_error(const std::shared_ptr<Exchange>& ex, const std::string& why) {
  if (!ex->is_get && ex->written) {
    reject(ex, "connection to " + a_.text + " lost after the POST was sent: " + why);
    return done(ex, false);
  }
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

}  // namespace weft::host::detail::http_link
