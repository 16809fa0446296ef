// drain.cpp — what a Client does when its server drains (docs/protocol.md,
// "Drain"; the rules are at the top of weft/host/client.h): stop sending on
// that connection, let the calls on it complete, close it, wait the notice's
// reconnect_after, connect again and send what waited, each call once.
//
// One mechanism per call: a call held here (made during the drain, or
// answered -32005 by the draining server) waits in the queue for the next
// connection and is not also scheduled by the retry backoff (calls.cpp).
#include <boost/asio/post.hpp>

#include "client/impl.h"

namespace weft::host {

namespace {

// At most this share of reconnect_after is added at random, so that the
// clients of one server do not all reconnect in the same millisecond.
constexpr double kReconnectJitter = 0.1;

}  // namespace

void Client::Impl::drained(const DrainNotice& n) {
  if (!link_open || drain_notice) return;
  drain_notice = n;
  if (cfg.verbose)
    log(cfg.address + ": server draining (" + n.reason + "); reconnecting " + std::to_string(n.reconnect_after) +
        " ms after its calls complete");
  if (cfg.on_drain) cfg.on_drain(n);
  drain_check();
}

// Made while the link drains (with reconnect on) or before the reconnection
// after it: wait for the next connection, bounded like calls on one
// connection (PeerLimits::max_pending).
bool Client::Impl::hold_for_drain(CallId id) {
  const bool draining = link_open && drain_notice && cfg.reconnect;
  if (!draining && !drain_waiting) return false;
  const std::size_t waiting = queue.size() - notes.size();
  if (waiting >= cfg.peer_limits.max_pending) {
    // Completions never run inside call(): post it.
    boost::asio::post(io, [w = weak_from_this(), id, max = cfg.peer_limits.max_pending] {
      if (auto s = w.lock())
        s->settle(id, Outcome::Status::RemoteError, {},
                  Error(code::kOverloaded, "Too many calls waiting for the reconnection after a drain (limit " +
                                               std::to_string(max) + ")"));
    });
    return true;
  }
  calls.at(id).at = At::Queue;
  queue.push_back(id);
  if (!link_open) ensure_connecting();  // already Connecting: reconnect_after's timer runs
  return true;
}

// -32005 from a server that announced its drain on this link: the request
// reached it after the notice left, and was refused without being run
// (Peer::drain). A call with retry waits for the next connection like a call
// made now (instead of the backoff, which would also send it). One without
// retry fails with that answer: its params went out with it (calls.cpp keeps
// them only for calls that may be sent again), and -32005 tells the caller
// it was not run.
bool Client::Impl::requeue_refused(CallId id, Link* l, const Error& e) {
  if (e.code != code::kUnavailable || !link || l != link.get() || !calls.at(id).policy.retry) return false;
  if (cfg.verbose) log(calls.at(id).method + ": refused by the draining server; sending it after the reconnection");
  return hold_for_drain(id);
}

// shutdown() while calls or notifications made during a drain wait for the
// next connection: they are written there, as shutdown() writes what is
// queued, rather than dropped (the connection that drained is told to stop
// sending, not that nothing more may be sent).
bool Client::Impl::flush_after_drain() const {
  return cfg.reconnect && (drain_waiting || (link_open && drain_notice)) && !(queue.empty() && notes.empty());
}

// Nothing of ours is on the drained link any more: close it (after this
// turn: we may be inside its Peer's callbacks).
void Client::Impl::drain_check() {
  if (!drain_notice || drain_closing || !link_open || on_wire > 0) return;
  drain_closing = true;
  boost::asio::post(io, [w = weak_from_this(), l = std::weak_ptr<Link>(link)] {
    auto s = w.lock();
    auto lk = l.lock();
    if (s && lk && lk == s->link) lk->shutdown();
  });
}

// The drained link has closed: connect again after reconnect_after (not the
// failure backoff: a drain is not a failure). False when the client is
// closing or reconnect is off (then the ordinary rules apply).
// After shutdown(), only to write what waited for the reconnection.
bool Client::Impl::reconnect_after_drain(const std::optional<DrainNotice>& n) {
  if (!n || closing) return false;
  if (!cfg.reconnect) {
    if (cfg.verbose && !for_good) log(cfg.address + ": drained connection closed; the next call connects again");
    return false;
  }
  if (for_good && queue.empty() && notes.empty()) return false;
  failures = 0;
  state = State::Connecting;
  drain_waiting = true;
  std::uniform_real_distribution<double> jitter(0.0, static_cast<double>(n->reconnect_after) * kReconnectJitter);
  const Millis delay = n->reconnect_after + static_cast<Millis>(jitter(rng));
  if (cfg.verbose) log(cfg.address + ": drained (" + n->reason + "); reconnecting in " + std::to_string(delay) + " ms");
  reconnect_timer.expires_after(std::chrono::milliseconds(delay));
  reconnect_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
    if (auto s = w.lock(); s && !ec && s->state == State::Connecting && !s->link) s->start_connect();
  });
  return true;
}

}  // namespace weft::host
