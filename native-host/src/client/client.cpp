// client.cpp — the persistent Client: calls and their lifetimes (queued,
// on the wire, waiting to retry), deadlines, cancellation, reconnection with
// backoff. Matching answers to calls is the core Peer's job; this file only
// decides what happens to a call when its connection goes away.
#include <algorithm>
#include <cmath>
#include <deque>
#include <random>
#include <set>
#include <unordered_map>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "address.h"
#include "client/link.h"
#include "session.h"  // to_time_point
#include "util.h"
#include "weft/host/client.h"
#include "weft/host/server.h"  // now_ms

namespace weft::host {

using detail::Address;
using detail::Link;

namespace {

// A connection that carried an answer, or stayed up this long, counts as a
// success: the backoff starts again from the first step when it drops.
constexpr Millis kHealthyAfterMs = 1000;
constexpr Millis kMaxBackoffMs = 30000;

// Errors a retrying call is sent again for (CallPolicy::retry): the server
// said it is overloaded, or told us when to come back.
bool retryable_answer(const Error& e) {
  if (e.code == code::kOverloaded) return true;
  return e.data && e.data->is_object() && e.data->contains("retry_after");
}

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

struct Client::Impl : std::enable_shared_from_this<Impl> {
  enum class At { Queue, Wire, Backoff, Orphan };
  struct Call {
    std::string method;
    std::optional<json> params;
    CallPolicy policy;
    Completion done;
    std::optional<Millis> deadline;
    Millis timeout = 0;
    std::optional<Millis> retry_at;
    int sends = 0;
    At at = At::Queue;
    Link* link = nullptr;
    Id wire_id;
    bool cancelling = false;
    bool timing_out = false;
  };

  Impl(boost::asio::io_context& io, ClientConfig c)
      : io(io), cfg(std::move(c)), addr(detail::parse_address(cfg.address)), timer(io),
        reconnect_timer(io), rng(std::random_device{}()) {
    if (!cfg.log) cfg.log = detail::default_log();
    if (cfg.connect_attempts < 1) cfg.connect_attempts = 1;
  }

  boost::asio::io_context& io;
  ClientConfig cfg;
  Result<Address> addr;
  Client* owner = nullptr;
  std::vector<std::function<void(Peer&)>> registrations;
  std::unordered_map<CallId, Call> calls;
  // Calls and notifications waiting for a connection, in the order made (a
  // notification sent after a call must not overtake it: MCP's initialize).
  std::deque<CallId> queue;
  std::unordered_map<CallId, std::pair<std::string, std::optional<json>>> notes;  // ids in `queue`
  std::vector<CallId> orphans;  // failed by a closing link; settled when it says why
  std::set<std::pair<Millis, CallId>> wakeups;  // deadlines and retry times
  boost::asio::steady_timer timer;
  std::optional<Millis> armed;
  boost::asio::steady_timer reconnect_timer;
  std::shared_ptr<Link> link;
  bool link_open = false;
  Millis opened_at = 0;
  bool answered_on_link = false;
  // The link is being closed because the server sent what we cannot decode:
  // its calls fail as a -32700 answer (exit 1), not as a lost connection.
  bool undecodable = false;
  std::size_t on_wire = 0;
  State state = State::Idle;
  int failures = 0;  // consecutive failed connection attempts
  int cycle_attempts = 0;  // attempts since the last connection opened
  bool closing = false;   // inside close(): every call fails, none is retried
  bool for_good = false;
  std::vector<std::function<void()>> on_shutdown;
  CallId next_id = 1;
  std::uint64_t connections = 0;
  std::optional<Error> last_error;
  std::mt19937 rng;

  void log(const std::string& line) { cfg.log(line); }

  // ---- calls ---------------------------------------------------------------
  CallId call(std::string method, std::optional<json> params, CallPolicy policy, Completion done) {
    const CallId id = next_id++;
    Call c;
    c.method = std::move(method);
    c.params = std::move(params);
    c.policy = policy;
    if (c.policy.max_attempts < 1) c.policy.max_attempts = 1;
    c.done = std::move(done);
    if (auto t = policy.timeout ? policy.timeout : cfg.default_timeout) {
      c.timeout = *t;
      c.deadline = now_ms() + *t;
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
    if (link_open) send(id);
    else {
      queue.push_back(id);
      ensure_connecting();
    }
    return id;
  }

  void send(CallId id) {
    Call& c = calls.at(id);
    ++c.sends;
    c.at = At::Wire;
    c.link = link.get();
    ++on_wire;
    std::optional<json> p = c.policy.retry ? c.params : std::move(c.params);
    weft::CallOptions o;
    o.no_timeout = true;  // deadlines are the client's: they span reconnects
    auto r = link->peer().call(
        c.method, std::move(p),
        [w = weak_from_this(), id, l = link.get()](Result<json> res) {
          if (auto s = w.lock()) s->answered(id, l, std::move(res));
        },
        o, now_ms());
    if (r) {
      c.wire_id = *r;
      return;
    }
    --on_wire;
    c.at = At::Queue;
    // Refused locally (too many pending: -32003, closed: -32002, bad method or params).
    if (c.policy.retry && retryable_answer(r.error()) && c.sends < c.policy.max_attempts)
      return backoff(id, r.error());
    settle(id, r.error().code == code::kClosed ? Outcome::Status::ConnectFailed : Outcome::Status::RemoteError,
           {}, r.error());
  }

  void answered(CallId id, Link* l, Result<json> r) {
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
    if (c.policy.retry && retryable_answer(r.error()) && c.sends < c.policy.max_attempts)
      return backoff(id, r.error());
    settle(id, Outcome::Status::RemoteError, {}, r.error());
  }

  Millis backoff_delay(int k) {
    const double base = static_cast<double>(cfg.backoff_ms) * std::ldexp(1.0, std::min(k, 20));
    const double capped = std::min(base, static_cast<double>(kMaxBackoffMs));
    // 100, 200 + rand(50), 400 + rand(100), …: the first step has no jitter.
    std::uniform_real_distribution<double> jitter(0.0, k == 0 ? 0.0 : capped / 4);
    return static_cast<Millis>(capped + jitter(rng));
  }

  // A retryable answer: send again after the backoff (or the server's retry_after).
  void backoff(CallId id, const Error& e) {
    Call& c = calls.at(id);
    Millis delay = backoff_delay(c.sends - 1);
    if (e.data && e.data->is_object()) {
      const json& ra = (*e.data)["retry_after"];
      if (ra.is_number() && ra.get<double>() >= 0) delay = std::max<Millis>(delay, ra.get<Millis>());
    }
    if (cfg.verbose) log(c.method + ": " + e.message + "; sending again in " + std::to_string(delay) + " ms");
    c.at = At::Backoff;
    c.retry_at = now_ms() + delay;
    wakeups.insert({*c.retry_at, id});
    rearm();
  }

  void settle_timeout(CallId id) {
    const Call& c = calls.at(id);
    std::string ctx = link ? link->context() : std::string();
    settle(id, Outcome::Status::Timeout, {},
           Error(code::kTimeout, "timed out after " + std::to_string(c.timeout) + " ms" + ctx));
  }

  // The one place a completion runs: the call is forgotten first, so that the
  // completion may call into the client, and it can never run twice.
  void settle(CallId id, Outcome::Status st, json result, std::optional<Error> e) {
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
    Outcome o;
    o.status = st;
    o.result = std::move(result);
    if (e) o.error = std::move(*e);
    o.attempts = c.sends ? c.sends : cycle_attempts;
    if (c.done) c.done(std::move(o));
  }

  bool cancel(CallId id) {
    auto it = calls.find(id);
    if (it == calls.end()) return false;
    Call& c = it->second;
    if (c.at == At::Wire && link && c.link == link.get()) {
      c.cancelling = true;
      // $/cancelRequest goes out; the Peer settles the call with -32800 now.
      if (link->peer().cancel(c.wire_id)) {
        link->flush();
        return true;
      }
    }
    settle(id, Outcome::Status::Cancelled, {}, Error(code::kRequestCancelled, "Request cancelled"));
    return true;
  }

  Result<void> notify(std::string method, std::optional<json> params) {
    if (!addr) return addr.error();
    if (for_good) return Error(code::kClosed, "the client is closed");
    if (link_open) {
      auto r = link->peer().notify(std::move(method), std::move(params));
      link->flush();
      return r;
    }
    const CallId id = next_id++;
    notes.emplace(id, std::make_pair(std::move(method), std::move(params)));
    queue.push_back(id);
    ensure_connecting();
    return {};
  }

  // ---- time ------------------------------------------------------------------
  void rearm() {
    if (wakeups.empty()) return;
    const Millis at = wakeups.begin()->first;
    if (armed && *armed <= at) return;
    armed = at;
    timer.expires_at(detail::to_time_point(at));
    timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      if (auto s = w.lock(); s && !ec) s->wake();
    });
  }

  void wake() {
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
        if (c.at == At::Wire && link && c.link == link.get() && link->peer().cancel(c.wire_id)) {
          link->flush();  // the server may stop the work ($/cancelRequest)
          continue;       // answered() settled it as a timeout
        }
        settle_timeout(id);
      } else if (c.retry_at && *c.retry_at <= now) {
        wakeups.erase({*c.retry_at, id});
        c.retry_at.reset();
        c.at = At::Queue;
        if (link_open) send(id);
        else {
          queue.push_back(id);
          ensure_connecting();
        }
      }
    }
    rearm();
  }

  // ---- connection --------------------------------------------------------
  void ensure_connecting() {
    if (state == State::Idle && addr && !for_good) start_connect();
  }

  void start_connect() {
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
    h.diagnostic = [w, this](const Diagnostic& d) {
      if (auto s = w.lock()) diagnostic(d);
    };
    h.log = cfg.log;
    const Address& a = *addr;
    switch (a.kind) {
      case Address::Kind::WebSocket: link = detail::open_ws_link(io, a, cfg, std::move(h)); break;
      case Address::Kind::Http: link = detail::open_http_link(io, a, cfg, std::move(h)); break;
      default: link = detail::open_stream_link(io, a, cfg, std::move(h)); break;
    }
  }

  void opened() {
    state = State::Open;
    link_open = true;
    opened_at = now_ms();
    cycle_attempts = 0;
    answered_on_link = false;
    ++connections;
    auto ids = std::move(queue);
    queue.clear();
    for (CallId id : ids) {
      if (auto n = notes.find(id); n != notes.end()) {
        if (link_open) (void)link->peer().notify(std::move(n->second.first), std::move(n->second.second));
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

  void diagnostic(const Diagnostic& d) {
    using K = Diagnostic::Kind;
    if (d.kind == K::BadFrame) {
      // What the server sent cannot be matched to calls any more: end the
      // connection (not from inside the framing's callback).
      log(cfg.address + ": " + d.message);
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
    if (d.kind == K::ErrorWithoutId && d.error && on_wire == 1) {
      // The server could not read a request; with one call on the wire it
      // can only be that one (a one-shot call against the wrong codec).
      for (auto& [id, c] : calls)
        if (c.at == At::Wire) {
          c.at = At::Queue;  // the Peer's own entry is failed when the link closes
          --on_wire;
          c.link = nullptr;
          return settle(id, Outcome::Status::RemoteError, {}, *d.error);
        }
    }
    // A request the transport could not deliver fails with that reason: the
    // caller is told, the log need not be.
    if (d.kind == K::SendFailed) return;
    log(cfg.address + ": " + d.message);
  }

  void closed(Error why, bool was_open, bool retryable) {
    // Release the link after this turn: we may be inside one of its methods.
    boost::asio::post(io, [dead = std::move(link)] {});
    link.reset();
    link_open = false;
    on_wire = 0;
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
    if (closing || for_good) {
      state = for_good ? State::Closed : State::Idle;
      fail_waiting(why);
      auto cbs = std::move(on_shutdown);
      on_shutdown.clear();
      for (auto& f : cbs) f();
      return;
    }
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

  // Calls and notifications that never reached a connection.
  void fail_waiting(const Error& why) {
    notes.clear();
    auto ids = std::move(queue);
    queue.clear();
    for (CallId id : ids) {
      auto it = calls.find(id);
      if (it != calls.end() && it->second.at == At::Queue) settle(id, Outcome::Status::ConnectFailed, {}, why);
    }
  }

  void close(bool good, const Error& why) {
    for_good = for_good || good;
    closing = true;
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
};

// ---- Client --------------------------------------------------------------

Client::Client(boost::asio::io_context& io, ClientConfig config)
    : impl_(std::make_shared<Impl>(io, std::move(config))) {
  impl_->owner = this;
  detail::ignore_sigpipe();
}

Client::~Client() {
  impl_->owner = nullptr;
  impl_->close(true, Error(code::kClosed, "the client was destroyed"));
  // Calls still waiting (to be sent again) fail too: nothing is left hanging.
  std::vector<CallId> rest;
  for (auto& [id, c] : impl_->calls) rest.push_back(id);
  for (CallId id : rest)
    impl_->settle(id, Outcome::Status::ConnectFailed, {}, Error(code::kClosed, "the client was destroyed"));
}

void Client::method(std::string name, MethodHandler h, std::optional<ParamSpec> spec) {
  impl_->registrations.push_back([name, h, spec](Peer& p) { p.method(name, h, spec); });
}
void Client::method(std::string name, SyncHandler h, std::optional<ParamSpec> spec) {
  impl_->registrations.push_back([name, h, spec](Peer& p) { p.method(name, h, spec); });
}
void Client::notification(std::string name, NotificationHandler h) {
  impl_->registrations.push_back([name, h](Peer& p) { p.notification(name, h); });
}

void Client::connect() { impl_->ensure_connecting(); }

CallId Client::call(std::string method, std::optional<json> params, CallPolicy policy, Completion done) {
  return impl_->call(std::move(method), std::move(params), policy, std::move(done));
}

Result<void> Client::notify(std::string method, std::optional<json> params) {
  return impl_->notify(std::move(method), std::move(params));
}

bool Client::cancel(CallId id) { return impl_->cancel(id); }

void Client::shutdown(std::function<void()> done) {
  Impl& s = *impl_;
  s.for_good = true;
  s.reconnect_timer.cancel();
  if (s.link) {
    if (done) s.on_shutdown.push_back(std::move(done));
    // Still connecting: what is queued goes out once it opens (opened()).
    if (s.link_open) s.link->shutdown();
    return;
  }
  s.close(true, Error(code::kClosed, "the client is closed"));
  if (done) boost::asio::post(s.io, std::move(done));
}

void Client::close(bool for_good) { impl_->close(for_good, Error(code::kClosed, "closed by the client")); }

Client::State Client::state() const { return impl_->state; }
std::size_t Client::pending() const { return impl_->calls.size(); }
std::uint64_t Client::connections() const { return impl_->connections; }
const std::optional<Error>& Client::last_error() const { return impl_->last_error; }
boost::asio::io_context& Client::context() { return impl_->io; }

}  // namespace weft::host
