// connection.cpp — a Client's connection: connecting lazily, reconnecting
// with backoff and jitter, and what a closed connection means for the calls
// that were on it or waiting for it (impl.h, docs/protocol.md).
#include <algorithm>

#include <boost/asio/post.hpp>

#include "client/impl.h"
#include "weft/host/server.h"  // now_ms

namespace weft::host {

namespace {

// A connection that carried an answer, or stayed up this long, counts as a
// success: the backoff starts again from the first step when it drops.
constexpr Millis kHealthyAfterMs = 1000;

}  // namespace

void Client::Impl::ensure_connecting() {
  if (state == State::Idle && addr && !for_good) start_connect();
}

void Client::Impl::start_connect() {
  state = State::Connecting;
  ++cycle_attempts;
  detail::LinkHooks h;
  std::weak_ptr<Impl> w = weak_from_this();
  h.setup = [w](Peer& p) {
    if (auto s = w.lock())
      for (auto& r : s->registrations) r(p);
  };
  h.opened = [w] {
    if (auto s = w.lock()) s->opened();
  };
  h.closed = [w](Error why, bool was_open, bool retryable) {
    if (auto s = w.lock()) s->closed(std::move(why), was_open, retryable);
  };
  h.drain = [w](const DrainNotice& n) {
    if (auto s = w.lock()) s->drained(n);
  };
  h.diagnostic = [w, this](const Diagnostic& d) {
    if (auto s = w.lock()) diagnostic(d);
  };
  h.refused = [w, this](const std::string& why) {
    if (auto s = w.lock()) {
      ++unsent_notes;
      log(cfg.address + ": " + why);
    }
  };
  h.log = cfg.log;
  const Address& a = *addr;
  switch (a.kind) {
    case Address::Kind::WebSocket: link = detail::open_ws_link(io, a, cfg, std::move(h)); break;
    case Address::Kind::Http: link = detail::open_http_link(io, a, cfg, std::move(h)); break;
    default: link = detail::open_stream_link(io, a, cfg, std::move(h)); break;
  }
}

void Client::Impl::opened() {
  state = State::Open;
  link_open = true;
  opened_at = now_ms();
  cycle_attempts = 0;
  answered_on_link = false;
  sent_on_link = 0;
  cancelled_on_link.clear();
  ++connections;
  drain_waiting = false;
  auto ids = std::move(queue);
  queue.clear();
  for (CallId id : ids) {
    if (auto n = notes.find(id); n != notes.end()) {
      if (link_open) (void)send_note(std::move(n->second.first), std::move(n->second.second));
      notes.erase(n);
      continue;
    }
    auto it = calls.find(id);
    if (it != calls.end() && it->second.at == At::Queue && link_open) send(id);
  }
  if (link_open) link->flush();
  if (link_open && owner && owner->on_connection) owner->on_connection(true, cfg.address);
  if (link_open && for_good) link->shutdown();  // shutdown() was called while connecting
}

void Client::Impl::diagnostic(const Diagnostic& d) {
  using K = Diagnostic::Kind;
  if (d.kind == K::BadFrame) {
    // What the server sent cannot be matched to calls any more: end the
    // connection (not from inside the framing's callback). The calls on it
    // carry the reason; with none, only the log can tell.
    if (on_wire == 0) log(cfg.address + ": " + d.message);
    boost::asio::post(io, [w = weak_from_this(), l = std::weak_ptr<Link>(link), m = d.message] {
      auto s = w.lock();
      auto lk = l.lock();
      if (s && lk && lk == s->link) {
        s->undecodable = true;
        lk->close(Error(code::kClosed, "undecodable data from the server: " + m));
      }
    });
    return;
  }
  if (d.kind == K::ErrorWithoutId && d.error && on_wire == 1 && sent_on_link == 1) {
    // The server could not read what we sent; when all the link carried is
    // one call, it can only be that one (a one-shot call against the wrong
    // codec). With anything else sent (a notification too large for the
    // server, a cancel) it would be a guess, and a wrong one would settle the
    // call with another message's error (docs/protocol.md): it is logged.
    for (auto& [id, c] : calls)
      if (c.at == At::Wire) {
        c.at = At::Queue;  // the Peer's own entry is failed when the link closes
        --on_wire;
        c.link = nullptr;
        return settle(id, Outcome::Status::RemoteError, {}, *d.error);
      }
  }
  // A request the transport could not deliver fails with that reason: the
  // caller is told, the log need not be. A notification has no caller to
  // tell: counted (unsent_notifications) and logged.
  if (d.kind == K::SendFailed) {
    if (!noting) return;
    ++unsent_notes;
  }
  // Chunks still in flight when a stream was cancelled or failed arrive for
  // no pending call: expected (docs/streams.md), not worth a log line each.
  if (d.kind == K::UnknownResponse && d.message.rfind("$/weft/chunk", 0) == 0) return;
  if (d.kind == K::UnknownResponse && d.id && d.id->kind() == Id::Kind::Int &&
      cancelled_on_link.erase(d.id->as_int()) > 0)
    return;
  log(cfg.address + ": " + d.message);
}

void Client::Impl::closed(Error why, bool was_open, bool retryable) {
  // Notifications sent on it that never reached its socket (the server had
  // closed it, the write failed): no answer would tell, so they are counted
  // (unsent_notifications) and logged, like those too large to send.
  if (link) {
    const std::uint64_t written = link->written();
    const auto lost = std::count_if(note_ends.begin(), note_ends.end(), [&](std::uint64_t e) { return e > written; });
    if (lost > 0) {
      unsent_notes += static_cast<std::size_t>(lost);
      log(cfg.address + ": " + std::to_string(lost) + " notification(s) not written before the connection closed: " +
          why.message);
    }
  }
  note_ends.clear();
  // Release the link after this turn: we may be inside one of its methods.
  boost::asio::post(io, [dead = std::move(link)] {});
  link.reset();
  link_open = false;
  on_wire = 0;
  const auto notice = std::move(drain_notice);
  drain_notice.reset();
  drain_closing = false;
  // Calls made from here (on_connection below included) wait for the
  // reconnection after a drain (drain.cpp).
  drain_waiting = notice && cfg.reconnect && !closing && !for_good;
  last_error = why;
  const bool healthy = was_open && (answered_on_link || now_ms() - opened_at >= kHealthyAfterMs);
  failures = healthy ? 0 : failures + 1;
  // Calls that were on the wire: sent again (retry) or failed, once.
  auto failed = std::move(orphans);
  orphans.clear();
  std::vector<CallId> again;
  for (CallId id : failed) {
    auto it = calls.find(id);
    if (it == calls.end()) continue;
    Call& c = it->second;
    if (!closing && !for_good && !undecodable && c.policy.retry && c.sends < c.policy.max_attempts) {
      c.at = At::Queue;
      again.push_back(id);
    } else if (undecodable) {
      settle(id, Outcome::Status::RemoteError, {}, Error(code::kParseError, why.message));
    } else {
      settle(id, Outcome::Status::ConnectFailed, {}, why);
    }
  }
  undecodable = false;
  queue.insert(queue.begin(), again.begin(), again.end());
  if (was_open && owner && owner->on_connection) owner->on_connection(false, why.message);
  // shutdown() during a drain: what waits goes to the next connection first.
  if (for_good && !closing && reconnect_after_drain(notice)) {
    fail_backoff(why);
    return;
  }
  if (closing || for_good) {
    state = for_good ? State::Closed : State::Idle;
    fail_waiting(why);
    fail_backoff(why);
    auto cbs = std::move(on_shutdown);
    on_shutdown.clear();
    for (auto& f : cbs) f();
    return;
  }
  if (reconnect_after_drain(notice)) return;
  const bool want = !queue.empty() || !notes.empty() || (was_open && cfg.reconnect);
  const bool may = (was_open || retryable) && failures < cfg.connect_attempts;
  if (want && may) {
    state = State::Connecting;
    const Millis delay = backoff_delay(std::max(failures - 1, 0));
    if (cfg.verbose) log(why.message + "; retrying in " + std::to_string(delay) + " ms");
    reconnect_timer.expires_after(std::chrono::milliseconds(delay));
    reconnect_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      if (auto s = w.lock(); s && !ec && s->state == State::Connecting && !s->link) s->start_connect();
    });
    return;
  }
  state = State::Idle;
  if (!was_open && failures > 1)
    why.message += " (" + std::to_string(failures) + " attempts)";
  else if (!was_open)
    why.message += " (1 attempt)";
  failures = 0;
  last_error = why;
  fail_waiting(why);
}

// Calls and notifications that never reached a connection. The calls fail;
// the notifications have no caller left to tell: counted
// (unsent_notifications) and logged.
void Client::Impl::fail_waiting(const Error& why) {
  if (!notes.empty()) {
    unsent_notes += notes.size();
    log(cfg.address + ": " + std::to_string(notes.size()) + " notification(s) not sent: " + why.message);
  }
  notes.clear();
  auto ids = std::move(queue);
  queue.clear();
  for (CallId id : ids) {
    auto it = calls.find(id);
    if (it != calls.end() && it->second.at == At::Queue) settle(id, Outcome::Status::ConnectFailed, {}, why);
  }
}

// Calls waiting out a retry delay (backoff()): a close ends them as it ends
// the queue ("pending calls fail with -32002"), rather than leaving them to
// be sent again on a new connection, or never.
void Client::Impl::fail_backoff(const Error& why) {
  std::vector<CallId> ids;
  for (const auto& [id, c] : calls)
    if (c.at == At::Backoff) ids.push_back(id);
  for (CallId id : ids) settle(id, Outcome::Status::ConnectFailed, {}, why);
}

void Client::Impl::close(bool good, const Error& why) {
  for_good = for_good || good;
  closing = true;
  drain_waiting = false;
  reconnect_timer.cancel();
  if (link) link->close(why);  // → closed(): every call on it fails
  else {
    fail_waiting(why);
    // Calls waiting to be sent again, too.
    std::vector<CallId> rest;
    for (auto& [id, c] : calls) rest.push_back(id);
    for (CallId id : rest) settle(id, Outcome::Status::ConnectFailed, {}, why);
    state = for_good ? State::Closed : State::Idle;
  }
  closing = false;
}

}  // namespace weft::host
