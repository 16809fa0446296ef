// Calling: outgoing requests, notifications and batches, their ids and
// deadlines, correlation of responses (§5), cancellation ($/cancelRequest)
// and what happens when the transport cannot deliver.
#include "weft/peer.h"

#include <algorithm>
#include <utility>

#include "cold.h"
#include "peer/state.h"

namespace weft {
namespace detail {

Id PeerState::track(const std::string& method, CallCallback done, std::optional<Millis> timeout,
                    Millis now, std::int32_t tag) {
  const std::int64_t n = next_id++;
  Pending* p = &pending.add(n);  // a settled call's entry when there is one: no allocation
  p->done = std::move(done);
  p->tag = tag;
  p->method = method;
  p->has_deadline = timeout.has_value();
  p->timeout = timeout ? *timeout : 0;
  p->at = timeout ? later(now, *timeout) : 0;
  if (timeout) {
    deadlines.push_back(Deadline{p->at, n});
    std::push_heap(deadlines.begin(), deadlines.end(), DeadlineLater());
    ++live_deadlines;
  }
  return Id::integer(n);
}

// An entry is stale when its call is gone or its timeout was restarted
// (restart_deadline pushed a later entry and moved Pending::at).
void PeerState::prune_deadlines() {
  auto stale = [this](const Deadline& d) {
    const Pending* p = pending.find(d.id);
    return !p || p->at != d.at;
  };
  while (!deadlines.empty() && stale(deadlines.front())) {
    std::pop_heap(deadlines.begin(), deadlines.end(), DeadlineLater());
    deadlines.pop_back();
  }
  if (deadlines.size() > 2 * live_deadlines + 32) {
    deadlines.erase(std::remove_if(deadlines.begin(), deadlines.end(),
                                   stale),
                    deadlines.end());
    std::make_heap(deadlines.begin(), deadlines.end(), DeadlineLater());
    if (deadlines.capacity() > 4 * deadlines.size() + 64) deadlines.shrink_to_fit();
  }
}

void PeerState::restart_deadline(std::int64_t n, Pending& p) {
  if (!p.has_deadline || !opts.clock) return;
  const Millis at = later(opts.clock(), p.timeout);
  if (at == p.at) return;
  p.at = at;
  deadlines.push_back(Deadline{at, n});
  std::push_heap(deadlines.begin(), deadlines.end(), DeadlineLater());
  prune_deadlines();
}

WEFT_COLD void PeerState::unknown_response(const Id& id) {
  if (!opts.diagnostic) return;
  Diagnostic d{Diagnostic::Kind::UnknownResponse,
               "response for id " + id.to_string() + " matches no pending request; dropped", std::nullopt, id};
  opts.diagnostic(d);
}

void PeerState::settle(const Id& id, Result<json>&& r, const ResponseMetrics* metrics) {
  std::size_t slot = 0;
  Pending* p = id.kind() == Id::Kind::Int ? pending.find(id.as_int(), slot) : nullptr;
  if (!p) {
    if (id.is_null() && !r.ok())
      diag(Diagnostic::Kind::ErrorWithoutId,
           "the other side reported an error with id null: " + std::to_string(r.error().code) + " " +
               r.error().message,
           r.error());
    else
      unknown_response(id);
    return;
  }
  CallCallback done = std::move(p->done);
  std::function<void(const ResponseMetrics&)> on_metrics;
  if (p->on_metrics) on_metrics = std::move(p->on_metrics);  // rare: CallOptions::on_metrics
  const bool had_deadline = p->has_deadline;
  forget(slot, had_deadline);  // nothing above changed the table: `slot` still holds the call
  if (metrics && on_metrics) on_metrics(*metrics);  // before the completion (CallOptions)
  if (done) done(std::move(r));
}

// The entry is kept for the next call; what it held goes now.
void PeerState::forget(std::size_t slot, bool had_deadline) {
  pending.remove_at(slot, [](Pending& q) {
    q.done = nullptr;
    q.on_metrics = nullptr;
    q.stream.reset();
    q.tag = -1;
  });
  if (had_deadline) {
    --live_deadlines;
    prune_deadlines();
  }
}

}  // namespace detail

using detail::PeerState;

namespace {
std::optional<Millis> effective_timeout(const PeerState& s, const CallOptions& o) {
  if (o.no_timeout) return std::nullopt;
  return o.timeout ? o.timeout : s.opts.default_timeout;
}

// A batch goes whole or not at all: one entry whose params are neither array
// nor object refuses it, and every call of it gets this error, which names
// the entry.
WEFT_COLD Error bad_batch_params(std::size_t index, const std::string& method) {
  std::string m = "Invalid params: batch entry ";
  m += std::to_string(index);
  m += " (";
  m += method;
  m += "): params must be an array or an object";
  return Error(code::kInvalidParams, std::move(m));
}
}  // namespace

Result<Id> Peer::call(std::string method, std::optional<json> params, CallCallback done,
                      CallOptions opts, Millis now) {
  return start_call(std::move(method), std::move(params), std::move(done), std::move(opts), now, nullptr);
}

// receive() of that response would settle the call the same way: a Server
// ignores every response (Role), a closed Peer every message, and a
// stream's end or a call without a tag goes through its completion
// (PeerState::settle). Nothing else differs for a result: the role and
// foreign-message policy admit a valid response, and one without metrics
// calls no on_metrics.
std::int32_t Peer::take_result(std::int64_t id) {
  PeerState& s = *s_;
  if (s.closed || s.opts.role == Role::Server) return -1;
  std::size_t slot = 0;
  detail::Pending* p = s.pending.find(id, slot);
  if (!p || p->tag < 0 || p->stream) return -1;
  const std::int32_t tag = p->tag;
  s.forget(slot, p->has_deadline);
  return tag;
}

Result<Id> Peer::start_call(std::string&& method, std::optional<json>&& params, CallCallback&& done,
                            CallOptions&& opts, Millis now, StreamOptions* so) {
  PeerState& s = *s_;
  if (s.closed) return Error(code::kClosed, "Endpoint closed");
  if (params && !params->is_array() && !params->is_object())
    return Error(code::kInvalidParams, "Invalid params: params must be an array or an object");
  if (auto refused = s.refuse_call()) return *refused;
  if (s.pending.size() >= s.opts.limits.max_pending)
    return Error(code::kOverloaded, "Too many pending requests (limit " +
                                        std::to_string(s.opts.limits.max_pending) + ")");
  Id id = s.track(method, std::move(done), effective_timeout(s, opts), now, opts.tag);
  if (opts.on_metrics) s.pending.find(id.as_int())->on_metrics = std::move(opts.on_metrics);
  auto self = s_;
  if (opts.on_progress && !s.allows("progress")) opts.on_progress = nullptr;  // not agreed: no progress
  if (so || opts.on_progress) {
    // docs/streams.md: $/weft/open goes just before its request, so the
    // other side knows what the caller accepts when the request arrives.
    auto in = std::make_unique<detail::StreamIn>();
    json open = json{{"id", id.as_int()}};
    if (so) {
      in->on_chunk = std::move(so->on_chunk);
      in->credit = std::min<std::uint64_t>(so->credit, s.opts.limits.max_stream_credit);
      open["credit"] = in->credit;
    }
    if (opts.on_progress) {
      in->on_progress = std::move(opts.on_progress);
      in->progress_resets = opts.progress_resets_timeout;
      open["progress"] = true;
    }
    s.pending.find(id.as_int())->stream = std::move(in);
    Outgoing first;
    first.messages.emplace_back(Notification{"$/weft/open", std::move(open)});
    s.emit(std::move(first));
    if (!s.pending.contains(id.as_int())) return id;  // settled meanwhile (closed)
  }
  if (s.opts.send_request) {
    s.opts.send_request(id, method, params);  // a loopback transport may settle the call in here
    return id;
  }
  // The vector of the last single message is reused (PeerState::spare_out).
  Outgoing o = std::move(s.spare_out);
  o.messages.clear();
  o.batch = false;
  o.messages.emplace_back(Request{id, std::move(method), std::move(params)});
  s.emit(std::move(o));  // a loopback transport may settle the call in here
  o.messages.clear();  // nothing of the call is kept, only the vector
  s.spare_out = std::move(o);
  return id;
}

Result<void> Peer::notify(std::string method, std::optional<json> params) {
  if (s_->closed) return Error(code::kClosed, "Endpoint closed");
  if (params && !params->is_array() && !params->is_object())
    return Error(code::kInvalidParams, "Invalid params: params must be an array or an object");
  Outgoing o;
  o.messages.emplace_back(Notification{std::move(method), std::move(params)});
  s_->emit(std::move(o));
  return {};
}

Result<std::vector<Id>> Peer::batch(std::vector<BatchEntry> entries, CallOptions opts, Millis now) {
  PeerState& s = *s_;
  if (s.closed) return Error(code::kClosed, "Endpoint closed");
  if (entries.empty()) return Error(code::kInvalidRequest, "Invalid Request: empty batch");
  std::size_t calls = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& e = entries[i];
    if (e.params && !e.params->is_array() && !e.params->is_object()) return bad_batch_params(i, e.method);
    calls += e.done ? 1 : 0;
  }
  // Notifications alone go out as notify()'s do (docs/protocol.md, "Roles").
  if (calls > 0)
    if (auto refused = s.refuse_call()) return *refused;
  // The answers come back as one batch as long, which this side drops whole
  // past twice its own max_batch (check_batch): refused now rather than lost.
  if (batch_past_answering(calls, s.opts.limits.max_batch))
    return Error(code::kInvalidRequest, "Invalid Request: a batch of " + std::to_string(calls) +
                                            " calls exceeds twice this side's max_batch of " +
                                            std::to_string(s.opts.limits.max_batch) +
                                            ", so its answers could not be received");
  if (s.pending.size() + calls > s.opts.limits.max_pending)
    return Error(code::kOverloaded, "Too many pending requests (limit " +
                                        std::to_string(s.opts.limits.max_pending) + ")");
  std::vector<Id> ids;
  Outgoing o;
  o.batch = true;
  const auto t = effective_timeout(s, opts);
  for (auto& e : entries) {
    if (!e.done) {
      o.messages.emplace_back(Notification{std::move(e.method), std::move(e.params)});
      continue;
    }
    Id id = s.track(e.method, std::move(e.done), t, now);
    // Metrics per entry, delivered as for a single call (settle).
    if (e.on_metrics) s.pending.find(id.as_int())->on_metrics = std::move(e.on_metrics);
    else if (opts.on_metrics) s.pending.find(id.as_int())->on_metrics = opts.on_metrics;
    ids.push_back(id);
    o.messages.emplace_back(Request{id, std::move(e.method), std::move(e.params)});
  }
  auto self = s_;
  s.emit(std::move(o));
  return ids;
}

bool Peer::cancel(const Id& id) {
  auto self = s_;
  PeerState& s = *self;
  // Closed: every call is settled by close() (nothing more goes out).
  if (s.closed || id.kind() != Id::Kind::Int || !s.pending.contains(id.as_int())) return false;
  // LSP $/cancelRequest: the other side may stop work; its answer, if any,
  // will then find no pending call and be dropped with a diagnostic.
  Outgoing o;
  o.messages.emplace_back(Notification{"$/cancelRequest", json{{"id", id.to_json()}}});
  s.emit(std::move(o));
  s.settle(id, Error(code::kRequestCancelled, "Request cancelled"));
  return true;
}

namespace {
constexpr const char* kNotSent = "the answer could not be sent";
}  // namespace

void Peer::undelivered(const Outgoing& o, const Error& why, const std::vector<bool>& failed) {
  auto self = s_;
  PeerState& s = *self;
  s.diag(Diagnostic::Kind::SendFailed, "the transport could not deliver a message: " + why.message, why);
  if (s.closed) return;  // closed meanwhile (a report may come later than the send): nothing goes out
  const bool known = std::find(failed.begin(), failed.end(), true) != failed.end();
  Outgoing again;
  again.batch = o.batch;
  // Failed after the loop: failing one sends its answer, and `o` may be the
  // host's own record of what it sent (a send must not touch it meanwhile).
  std::vector<Id> broken_streams;
  for (std::size_t i = 0; i < o.messages.size(); ++i) {
    const Message& m = o.messages[i];
    const auto* q = std::get_if<Request>(&m);
    if (known && !(i < failed.size() && failed[i])) {
      // Sendable, but its batch did not leave: again, unless its call ended
      // meanwhile (a host may report a failure later than the send).
      if (!q || (q->id.kind() == Id::Kind::Int && s.pending.contains(q->id.as_int()))) again.messages.push_back(m);
      continue;
    }
    if (q) {
      if (q->id.kind() == Id::Kind::Int && s.pending.contains(q->id.as_int()))  // not ended meanwhile
        s.settle(q->id, Error(code::kClosed, "Transport send failed: " + why.message));
    } else if (const auto* n = std::get_if<Notification>(&m)) {
      if (auto id = s.chunk_of(*n)) broken_streams.push_back(std::move(*id));
    } else if (const auto* r = std::get_if<Response>(&m)) {
      if (!r->is_error()) {
        again.messages.emplace_back(Response{
            r->id, Error(code::kInternalError, "Internal error: the result could not be sent: " + why.message)});
      } else if (const Error& e = std::get<Error>(r->outcome); e.data) {
        again.messages.emplace_back(Response{r->id, Error(e.code, e.message)});
      } else if (e.message != kNotSent) {
        // Its message may be what is too large (a small max_response): the
        // code goes out with a short one. That failing too ends it, as it
        // would fail the same way, or loop.
        again.messages.emplace_back(Response{r->id, Error(e.code, kNotSent)});
      }
    }
  }
  if (s.closed) {  // a completion above closed the Peer: nothing more goes out
    for (Message& m : again.messages)
      if (auto* r = std::get_if<Response>(&m)) s.drop(std::move(*r));
    return;
  }
  if (!again.messages.empty()) s.emit(std::move(again));
  for (const Id& id : broken_streams) s.chunk_undelivered(id, why);
}

std::optional<Millis> Peer::next_deadline() const {
  // The top entry is always a pending call's (see prune_deadlines).
  if (s_->deadlines.empty()) return std::nullopt;
  return s_->deadlines.front().at;
}

void Peer::advance(Millis now) {
  auto self = s_;
  PeerState& s = *self;
  // One at a time: a callback may add or settle other calls.
  while (!s.deadlines.empty() && s.deadlines.front().at <= now) {
    const std::int64_t n = s.deadlines.front().id;
    const detail::Pending* p = s.pending.find(n);
    if (!p || p->at != s.deadlines.front().at) {  // stale; drop it
      std::pop_heap(s.deadlines.begin(), s.deadlines.end(), detail::DeadlineLater());
      s.deadlines.pop_back();
      continue;
    }
    std::string msg = "Request timed out after " + std::to_string(p->timeout) + " ms: " + p->method;
    // Settled first: an answer to the cancel (a synchronous transport may
    // deliver one inside emit) must not become the call's outcome.
    s.settle(Id::integer(n), Error(code::kTimeout, std::move(msg)));
    // The caller gave up: the other side may stop the work and free what it
    // holds for the call (a stream's queue, a maxInFlight slot), as on
    // cancel() (docs/protocol.md, "$/cancelRequest").
    if (s.closed) continue;  // the completion closed the peer: nothing goes out
    Outgoing o;
    o.messages.emplace_back(Notification{"$/cancelRequest", json{{"id", n}}});
    s.emit(std::move(o));
  }
}

}  // namespace weft
