// calls.cpp — a Client's calls: issued, sent, answered, retried after a
// retryable answer, timed out, cancelled; each settled exactly once (impl.h).
#include <algorithm>
#include <cmath>

#include <boost/asio/post.hpp>

#include "client/impl.h"
#include "session.h"  // to_time_point
#include "weft/host/server.h"  // now_ms

namespace weft::host {

namespace {

constexpr Millis kMaxBackoffMs = 30000;

}  // namespace

int Outcome::exit_code() const {
  switch (status) {
    case Status::Ok: return 0;
    case Status::RemoteError: return 1;
    case Status::Cancelled: return 1;
    case Status::ConnectFailed: return 3;
    case Status::Timeout: return 4;
  }
  return 1;
}

CallId Client::Impl::call(std::string method, std::optional<json> params, CallPolicy policy, Completion done,
                          std::unique_ptr<Stream> stream) {
  const CallId id = next_id++;
  Call c;
  c.method = std::move(method);
  c.params = std::move(params);
  c.policy = policy;
  // Chunks already delivered cannot be taken back: a stream is sent once.
  if (stream) c.policy.retry = false;
  c.stream = std::move(stream);
  if (c.policy.max_attempts < 1) c.policy.max_attempts = 1;
  c.done = std::move(done);
  if (auto t = policy.timeout ? policy.timeout : cfg.default_timeout) {
    c.timeout = *t;
    c.deadline = weft::detail::later(now_ms(), *t);
    wakeups.insert({*c.deadline, id});
  }
  calls.emplace(id, std::move(c));
  std::optional<Error> refused;
  if (!addr) refused = addr.error();
  else if (for_good) refused = Error(code::kClosed, "the client is closed");
  if (refused) {
    // Completions never run inside call(): the caller may still be setting up.
    boost::asio::post(io, [w = weak_from_this(), id, e = *refused] {
      if (auto s = w.lock()) s->settle(id, Outcome::Status::ConnectFailed, {}, e);
    });
    return id;
  }
  rearm();
  if (hold_for_drain(id)) return id;
  if (link_open) send(id);
  else {
    queue.push_back(id);
    ensure_connecting();
  }
  return id;
}

void Client::Impl::send(CallId id) {
  Call& c = calls.at(id);
  ++c.sends;
  c.at = At::Wire;
  c.link = link.get();
  ++on_wire;
  ++sent_on_link;  // a stream's $/weft/open too: it is part of the call
  std::optional<json> p = c.policy.retry ? c.params : std::move(c.params);
  weft::CallOptions o;
  o.no_timeout = true;  // deadlines are the client's: they span reconnects
  if (cfg.handshake)  // metrics come only when a handshake agreed on them
    o.on_metrics = [w = weak_from_this(), id](const ResponseMetrics& m) {
      if (auto s = w.lock())
        if (auto it = s->calls.find(id); it != s->calls.end()) it->second.metrics = m;
    };
  calling = true;
  auto r = c.stream ? send_stream(id, c, std::move(p), o)
                    : link->peer().call(
                          c.method, std::move(p),
                          [w = weak_from_this(), id, l = link.get()](Result<json> res) {
                            if (auto s = w.lock()) {
                              s->answered(id, l, std::move(res));
                              s->drain_check();  // the last call on a drained link closes it
                            }
                          },
                          o, now_ms());
  calling = false;
  if (r) {
    // The call may have settled from inside: a message the transport
    // refused (over max_request) fails its call before call() returns.
    if (auto it = calls.find(id); it != calls.end()) it->second.wire_id = *r;
    return;
  }
  --on_wire;
  c.at = At::Queue;
  // Refused locally (too many pending: -32003, closed: -32002, bad method or params).
  if (c.policy.retry && c.sends < c.policy.max_attempts && backoff(id, r.error())) return;
  settle(id, r.error().code == code::kClosed ? Outcome::Status::ConnectFailed : Outcome::Status::RemoteError,
         {}, r.error());
}

void Client::Impl::answered(CallId id, Link* l, Result<json> r) {
  auto it = calls.find(id);
  if (it == calls.end()) return;
  Call& c = it->second;
  if (c.at != At::Wire || c.link != l) return;
  --on_wire;
  c.at = At::Queue;
  if (r) {
    answered_on_link = true;
    return settle(id, Outcome::Status::Ok, std::move(*r), {});
  }
  if (c.timing_out) return settle_timeout(id);
  if (c.cancelling) return settle(id, Outcome::Status::Cancelled, {}, r.error());
  if (l->closed()) {
    // Why the connection ended is known once the link reports it (for an
    // exec child: after its exit status and stderr are in).
    c.at = At::Orphan;
    orphans.push_back(id);
    return;
  }
  answered_on_link = true;
  if (requeue_refused(id, l, r.error())) return;
  if (c.policy.retry && c.sends < c.policy.max_attempts && backoff(id, r.error())) return;
  // A -32002 of this side's: the link could not deliver the call (over
  // max_request) or lost its answer (an HTTP error status, an event stream
  // cut before it), a connection failure as on every other transport. The
  // same code answered by the server is the server's error.
  const bool lost = (calling || l->undelivering()) && r.error().code == code::kClosed;
  settle(id, lost ? Outcome::Status::ConnectFailed : Outcome::Status::RemoteError, {}, r.error());
}

Millis Client::Impl::backoff_delay(int k) {
  const double base = static_cast<double>(cfg.backoff_ms) * std::ldexp(1.0, std::min(k, 20));
  const double capped = std::min(base, static_cast<double>(kMaxBackoffMs));
  // 100, 200 + rand(50), 400 + rand(100), …: the first step has no jitter.
  std::uniform_real_distribution<double> jitter(0.0, k == 0 ? 0.0 : capped / 4);
  return static_cast<Millis>(capped + jitter(rng));
}

// A retryable answer (-32001, -32003, -32004, -32005: the core's one rule,
// weft::retryable / weft::retry_delay, docs/protocol.md "Retryable errors"):
// send again after the backoff, or the server's data.retry_after when longer.
// False when the rule says not to.
bool Client::Impl::backoff(CallId id, const Error& e) {
  Call& c = calls.at(id);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto delay = weft::retry_delay(e, c.sends, unit(rng));
  if (!delay) return false;
  if (cfg.verbose) log(c.method + ": " + e.message + "; sending again in " + std::to_string(*delay) + " ms");
  c.at = At::Backoff;
  c.retry_at = weft::detail::later(now_ms(), *delay);
  wakeups.insert({*c.retry_at, id});
  rearm();
  return true;
}

void Client::Impl::settle_timeout(CallId id) {
  const Call& c = calls.at(id);
  std::string ctx = link ? link->context() : std::string();
  settle(id, Outcome::Status::Timeout, {},
         Error(code::kTimeout, "timed out after " + std::to_string(c.timeout) + " ms" + ctx));
}

// The one place a completion runs: the call is forgotten first, so that the
// completion may call into the client, and it can never run twice.
void Client::Impl::settle(CallId id, Outcome::Status st, json result, std::optional<Error> e) {
  auto it = calls.find(id);
  if (it == calls.end()) return;
  Call c = std::move(it->second);
  calls.erase(it);
  if (c.at == At::Wire) --on_wire;
  if (c.deadline) wakeups.erase({*c.deadline, id});
  if (c.retry_at) wakeups.erase({*c.retry_at, id});
  if (wakeups.empty() && armed) {
    // Nothing left to time: an idle client keeps no timer pending (its
    // io_context's run() may return).
    timer.cancel();
    armed.reset();
  }
  drain_check();  // a timed-out or cancelled call may have been the last on a drained link
  Outcome o;
  o.status = st;
  o.result = std::move(result);
  if (e) o.error = std::move(*e);
  o.attempts = c.sends ? c.sends : cycle_attempts;
  o.metrics = c.metrics;
  if (c.done) c.done(std::move(o));
}

bool Client::Impl::cancel(CallId id) {
  auto it = calls.find(id);
  if (it == calls.end()) return false;
  Call& c = it->second;
  if (c.at == At::Wire && link && c.link == link.get()) {
    c.cancelling = true;
    // $/cancelRequest goes out; the Peer settles the call with -32800 now.
    // Peer::cancel settles the call (erasing `c`): its id is copied first.
    if (const Id wire = c.wire_id; link->peer().cancel(wire)) {
      sent_cancel(wire);
      link->flush();
      return true;
    }
  }
  settle(id, Outcome::Status::Cancelled, {}, Error(code::kRequestCancelled, "Request cancelled"));
  return true;
}

Result<void> Client::Impl::notify(std::string method, std::optional<json> params) {
  if (!addr) return addr.error();
  if (for_good) return Error(code::kClosed, "the client is closed");
  // Checked now, as Peer::notify checks on an open link: refused once queued,
  // no caller would be left to tell.
  if (params && !params->is_array() && !params->is_object())
    return Error(code::kInvalidParams, "Invalid params: params must be an array or an object");
  if (link_open && !(drain_notice && cfg.reconnect)) {
    auto r = send_note(std::move(method), std::move(params));
    link->flush();
    return r;
  }
  const CallId id = next_id++;
  notes.emplace(id, std::make_pair(std::move(method), std::move(params)));
  queue.push_back(id);
  ensure_connecting();
  return {};
}

void Client::Impl::sent_cancel(const Id& wire) {
  ++sent_on_link;
  if (wire.kind() == Id::Kind::Int) cancelled_on_link.insert(wire.as_int());
}

Result<void> Client::Impl::send_note(std::string method, std::optional<json> params) {
  ++sent_on_link;
  noting = true;
  auto r = link->peer().notify(std::move(method), std::move(params));
  noting = false;
  if (r) {
    const std::uint64_t written = link->written();
    while (!note_ends.empty() && note_ends.front() <= written) note_ends.pop_front();
    note_ends.push_back(link->queued());
  }
  return r;
}

void Client::Impl::rearm() {
  if (wakeups.empty()) return;
  const Millis at = wakeups.begin()->first;
  if (armed && *armed <= at) return;
  armed = at;
  timer.expires_at(detail::to_time_point(at));
  timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
    if (auto s = w.lock(); s && !ec) s->wake();
  });
}

void Client::Impl::wake() {
  armed.reset();
  const Millis now = now_ms();
  std::vector<CallId> due;
  for (auto it = wakeups.begin(); it != wakeups.end() && it->first <= now; ++it) due.push_back(it->second);
  for (CallId id : due) {
    auto it = calls.find(id);
    if (it == calls.end()) continue;
    Call& c = it->second;
    if (c.deadline && *c.deadline <= now) {
      c.timing_out = true;
      // Peer::cancel settles the call (erasing `c`): its id is copied first.
      if (const Id wire = c.wire_id; c.at == At::Wire && link && c.link == link.get() && link->peer().cancel(wire)) {
        sent_cancel(wire);
        link->flush();  // the server may stop the work ($/cancelRequest)
        continue;       // answered() settled it as a timeout
      }
      settle_timeout(id);
    } else if (c.retry_at && *c.retry_at <= now) {
      wakeups.erase({*c.retry_at, id});
      c.retry_at.reset();
      c.at = At::Queue;
      if (hold_for_drain(id)) continue;
      if (link_open) send(id);
      else {
        queue.push_back(id);
        ensure_connecting();
      }
    }
  }
  rearm();
}

}  // namespace weft::host
