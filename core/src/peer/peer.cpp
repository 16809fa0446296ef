// The bidirectional endpoint: dispatch of incoming requests (§4, §6),
// correlation of responses (§5), timeouts and cancellation ($/cancelRequest).
#include "weft/peer.h"

#include <algorithm>
#include <utility>

#include "rpc/params.h"
#include "peer/state.h"

namespace weft {
namespace detail {

void PeerState::emit(Outgoing&& o) {
  if (opts.send) opts.send(std::move(o));
}

void PeerState::diag(Diagnostic::Kind k, std::string msg, std::optional<Error> e) {
  if (opts.diagnostic) opts.diagnostic(Diagnostic{k, std::move(msg), std::move(e)});
}

void PeerState::drop(Response&& r) {
  if (!opts.discard) return;
  Outgoing o;
  o.messages.emplace_back(std::move(r));
  opts.discard(std::move(o));
}

void PeerState::answer(std::uint64_t batch, std::size_t index, Response&& r) {
  if (batch == 0) {
    Outgoing o;
    o.messages.emplace_back(std::move(r));
    emit(std::move(o));
    return;
  }
  auto it = batches.find(batch);
  if (it == batches.end()) return drop(std::move(r));  // closed meanwhile
  it->second.slots[index] = std::move(r);
  release_batch(batch);
}

void PeerState::release_batch(std::uint64_t batch) {
  auto it = batches.find(batch);
  if (it == batches.end() || --it->second.remaining > 0) return;
  // §6: the batch's answers leave together as one array; a batch that held
  // only notifications gets nothing at all ("the Server MUST NOT return an
  // empty Array and should return nothing at all").
  Outgoing o;
  o.batch = true;
  for (auto& s : it->second.slots)
    if (s) o.messages.emplace_back(std::move(*s));
  batches.erase(it);
  if (!o.messages.empty()) emit(std::move(o));
}

Serving& PeerState::add_serving() {
  std::uint32_t i;
  if (!free_serving.empty()) {
    i = free_serving.back();
    free_serving.pop_back();
  } else {
    i = static_cast<std::uint32_t>(serving.size());
    serving.emplace_back();
  }
  Serving& s = serving[i];
  s.slot = (static_cast<std::uint64_t>(++serving_gen) << 32) | (static_cast<std::uint64_t>(i) + 1);
  return s;
}

void PeerState::free_serving_entry(Serving& s) {
  const auto i = static_cast<std::uint32_t>((s.slot & 0xffffffffu) - 1);
  s.slot = 0;
  s.on_cancel = nullptr;
  free_serving.push_back(i);
}

void PeerState::complete(std::uint64_t slot, Result<json>&& r) {
  Serving* e = find_serving(slot);
  if (!e) {
    diag(Diagnostic::Kind::LateReply, "reply after the request was cancelled or closed; dropped");
    Response late{Id(), {}};
    if (r.ok()) late.outcome = std::move(r.value());
    else late.outcome = r.error();
    return drop(std::move(late));
  }
  Serving s = std::move(*e);
  free_serving_entry(*e);
  if (!s.discard) {
    auto range = serving_ids.equal_range(s.id);
    for (auto i = range.first; i != range.second; ++i)
      if (i->second == slot) {
        auto node = serving_ids.extract(i);
        if (spare_serving_ids.size() < 64) spare_serving_ids.push_back(std::move(node));
        break;
      }
  }
  if (s.discard) {
    Response unsent{Id(), {}};
    if (r.ok()) {
      unsent.outcome = std::move(r.value());
    } else {
      diag(Diagnostic::Kind::NotificationFailed,
           "notification handler failed: " + std::to_string(r.error().code) + " " + r.error().message,
           r.error());
      unsent.outcome = r.error();
    }
    return drop(std::move(unsent));  // §4.1: a notification is never answered
  }
  --answering;
  Response resp{std::move(s.id), {}};
  if (r.ok()) resp.outcome = std::move(r.value());
  else resp.outcome = r.error();
  answer(s.batch, s.index, std::move(resp));
}

void PeerState::cancel_serving(const Id& id) {
  auto range = serving_ids.equal_range(id);
  std::vector<std::uint64_t> slots;
  for (auto i = range.first; i != range.second; ++i) slots.push_back(i->second);
  for (auto slot : slots) {
    Serving* e = find_serving(slot);
    if (!e || e->cancelled) continue;
    e->cancelled = true;
    if (auto f = std::move(e->on_cancel)) f();  // may re-enter and reply
    // LSP: "a request that got cancelled still needs to return from the
    // server and send a response back"; the handler's own answer, if it
    // comes later, finds no slot and is dropped.
    if (find_serving(slot)) complete(slot, Error(code::kRequestCancelled, "Request cancelled"));
  }
}

Id PeerState::track(const std::string& method, CallCallback done, std::optional<Millis> timeout,
                    Millis now) {
  const std::int64_t n = next_id++;
  Pending* p;
  if (!spare_pending.empty()) {  // a node of a settled call: no allocation
    auto node = std::move(spare_pending.back());
    spare_pending.pop_back();
    node.key() = n;
    p = &pending.insert(std::move(node)).position->second;
  } else {
    p = &pending.emplace(n, Pending()).first->second;
  }
  p->done = std::move(done);
  p->method = method;
  p->has_deadline = timeout.has_value();
  p->timeout = timeout ? *timeout : 0;
  if (timeout) {
    deadlines.push_back(Deadline{now + *timeout, n});
    std::push_heap(deadlines.begin(), deadlines.end(), DeadlineLater());
    ++live_deadlines;
  }
  return Id::integer(n);
}

void PeerState::prune_deadlines() {
  while (!deadlines.empty() && pending.find(deadlines.front().id) == pending.end()) {
    std::pop_heap(deadlines.begin(), deadlines.end(), DeadlineLater());
    deadlines.pop_back();
  }
  if (deadlines.size() > 2 * live_deadlines + 32) {
    deadlines.erase(std::remove_if(deadlines.begin(), deadlines.end(),
                                   [this](const Deadline& d) { return pending.find(d.id) == pending.end(); }),
                    deadlines.end());
    std::make_heap(deadlines.begin(), deadlines.end(), DeadlineLater());
    if (deadlines.capacity() > 4 * deadlines.size() + 64) deadlines.shrink_to_fit();
  }
}

void PeerState::settle(const Id& id, Result<json>&& r) {
  auto it = id.kind() == Id::Kind::Int ? pending.find(id.as_int()) : pending.end();
  if (it == pending.end()) {
    if (id.is_null() && !r.ok())
      diag(Diagnostic::Kind::ErrorWithoutId,
           "the other side reported an error with id null: " + std::to_string(r.error().code) + " " +
               r.error().message,
           r.error());
    else
      diag(Diagnostic::Kind::UnknownResponse,
           "response for id " + id.to_string() + " matches no pending request; dropped");
    return;
  }
  CallCallback done = std::move(it->second.done);
  const bool had_deadline = it->second.has_deadline;
  auto node = pending.extract(it);
  if (spare_pending.size() < 64) spare_pending.push_back(std::move(node));
  if (had_deadline) {
    --live_deadlines;
    prune_deadlines();
  }
  if (done) done(std::move(r));
}

}  // namespace detail

using detail::PeerState;

// ---- Reply ------------------------------------------------------------------

Reply::Reply(Reply&& o) noexcept : state_(std::move(o.state_)), slot_(std::exchange(o.slot_, 0)) {}

Reply& Reply::operator=(Reply&& o) noexcept {
  if (this != &o) {
    release();
    state_ = std::move(o.state_);
    slot_ = std::exchange(o.slot_, 0);
  }
  return *this;
}

// A request must never be left hanging: an unanswered Reply answers -32603.
Reply::~Reply() { release(); }

void Reply::release() {
  if (slot_ == 0) return;
  respond(Error(code::kInternalError, "Internal error: request dropped without a reply"));
}

void Reply::ok(json result) { respond(std::move(result)); }
void Reply::error(Error e) { respond(std::move(e)); }

void Reply::respond(Result<json> r) {
  const std::uint64_t slot = std::exchange(slot_, 0);
  if (slot == 0) return;
  if (auto s = state_.lock()) s->complete(slot, std::move(r));
}

bool Reply::cancelled() const {
  auto s = state_.lock();
  if (!s) return true;
  const detail::Serving* e = s->find_serving(slot_);
  return !e || e->cancelled;
}

void Reply::on_cancel(std::function<void()> f) {
  auto s = state_.lock();
  if (!s || !f || slot_ == 0) return;
  detail::Serving* e = s->find_serving(slot_);
  // No entry while this Reply is unanswered: the core answered for it
  // (cancellation, close), so the request is cancelled.
  if (!e || e->cancelled) f();
  else e->on_cancel = std::move(f);
}

// ---- Peer -------------------------------------------------------------------

Peer::Peer(PeerOptions options) : s_(std::make_shared<PeerState>(std::move(options))) {}

Peer::~Peer() { close(); }

namespace {
detail::Registered make_registered(std::optional<ParamSpec> spec, std::string description) {
  detail::Registered r;
  r.spec = std::move(spec);
  r.description = std::move(description);
  return r;
}
}  // namespace

void Peer::method(std::string name, MethodHandler h, std::optional<ParamSpec> spec,
                  std::string description) {
  auto r = make_registered(std::move(spec), std::move(description));
  r.async = std::move(h);
  s_->methods[std::move(name)] = std::move(r);
}

void Peer::method(std::string name, SyncHandler h, std::optional<ParamSpec> spec,
                  std::string description) {
  auto r = make_registered(std::move(spec), std::move(description));
  r.sync = std::move(h);
  s_->methods[std::move(name)] = std::move(r);
}

void Peer::notification(std::string name, NotificationHandler h, std::optional<ParamSpec> spec) {
  auto r = make_registered(std::move(spec), {});
  r.notification = true;
  r.notify = std::move(h);
  s_->methods[std::move(name)] = std::move(r);
}

bool Peer::remove(const std::string& name) { return s_->methods.erase(name) > 0; }

std::vector<MethodInfo> Peer::methods() const {
  std::vector<MethodInfo> out;
  out.reserve(s_->methods.size());
  for (const auto& [name, r] : s_->methods) out.push_back({name, r.notification, r.spec, r.description});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

namespace {

// Handlers are user code. Natively a throwing handler becomes -32603 instead
// of unwinding through the peer; under Emscripten (no exception catching)
// these compile away and a throw aborts, as it would anywhere in that build.
#if defined(__cpp_exceptions)
#define WEFT_GUARDED(body, on_error)                                                \
  try {                                                                             \
    body;                                                                           \
  } catch (const std::exception& ex) {                                              \
    on_error(Error(code::kInternalError, std::string("Internal error: ") + ex.what())); \
  } catch (...) {                                                                   \
    on_error(Error(code::kInternalError, "Internal error: handler threw"));         \
  }
#else
#define WEFT_GUARDED(body, on_error) body;
#endif

// Dispatches one valid request or notification. `batch`/`index` place its
// answer; `reply` is false for notifications (§4.1: never answered).
void dispatch(PeerState& s, std::string& method, std::optional<json>& params, const Id* id,
              std::uint64_t batch, std::size_t index) {
  const bool answer = id != nullptr;
  auto fail = [&](Error e) {
    if (answer) s.answer(batch, index, Response{*id, std::move(e)});
    else s.diag(Diagnostic::Kind::NotificationFailed,
                "notification \"" + method + "\" failed: " + e.message, e);
  };

  auto it = s.methods.find(method);
  if (it == s.methods.end() || (answer && it->second.notification)) {
    if (!answer) {
      // LSP: "$/" notifications may be ignored by servers that do not know them.
      s.diag(Diagnostic::Kind::UnhandledNotification, "no handler for notification \"" + method + "\"");
      return;
    }
    return fail(Error(code::kMethodNotFound, "Method not found: " + method));
  }
  if (answer && s.answering >= s.opts.limits.max_in_flight)
    return fail(Error(code::kOverloaded, "Too many requests in flight (limit " +
                                             std::to_string(s.opts.limits.max_in_flight) + ")"));
  const detail::Registered& r = it->second;

  json p;
  if (r.spec) {
    if (params && s.opts.inspect) s.opts.inspect(*params);
    auto checked = detail::check_params(*r.spec, params);
    if (!checked) return fail(checked.error());
    p = std::move(checked.value());
  } else if (params) {
    p = std::move(*params);
  }

  if (r.notification) {
    auto h = r.notify;  // copy: the handler may re-register itself
    WEFT_GUARDED(h(p), fail)
    return;
  }
  if (r.sync) {
    auto h = r.sync;
    Result<json> out = Error(code::kInternalError, "Internal error");
    auto set = [&](Error e) { out = std::move(e); };
    WEFT_GUARDED(out = h(p), set)
    Response resp{answer ? *id : Id(), {}};
    if (out.ok()) resp.outcome = std::move(out.value());
    else resp.outcome = out.error();
    if (answer) return s.answer(batch, index, std::move(resp));
    if (!out.ok()) fail(out.error());
    s.drop(std::move(resp));  // §4.1: a notification is never answered
    return;
  }
  detail::Serving& sv = s.add_serving();
  const std::uint64_t slot = sv.slot;
  sv.id = answer ? *id : Id();
  sv.batch = batch;
  sv.index = index;
  sv.discard = !answer;
  sv.cancelled = false;
  if (answer) {
    ++s.answering;
    if (!s.spare_serving_ids.empty()) {
      auto node = std::move(s.spare_serving_ids.back());
      s.spare_serving_ids.pop_back();
      node.key() = *id;
      node.mapped() = slot;
      s.serving_ids.insert(std::move(node));
    } else {
      s.serving_ids.emplace(*id, slot);
    }
  }
  auto h = r.async;
  const CallInfo info{method, id};
  Reply reply = s.make_reply(slot);
  // If the handler throws, its Reply is destroyed while unwinding and answers
  // -32603 itself; nothing more to do here.
  auto ignore = [](Error) {};
  WEFT_GUARDED(h(std::move(p), std::move(reply), info), ignore)
}

}  // namespace

void Peer::receive(const Document& doc) {
  Document copy = doc;
  receive(std::move(copy));
}

void Peer::receive(Document&& doc) { receive(classify(std::move(doc), s_->opts.limits.max_batch)); }

namespace {

// A batch that is not all foreign keeps its foreign elements: the array as a
// whole is JSON-RPC, and each element gets its -32600 (§6).
bool ignored(const PeerState& s, const Item& item, bool batch) {
  if (const auto* bad = std::get_if<Invalid>(&item)) {
    if (bad->foreign && s.opts.ignore_foreign && !batch) return true;
    if (s.opts.role == Role::Client) return bad->call;
    if (s.opts.role == Role::Server) return !bad->reply;
    return false;
  }
  if (s.opts.role == Role::Client) return !std::holds_alternative<Response>(item);
  if (s.opts.role == Role::Server) return std::holds_alternative<Response>(item);
  return false;
}

// The role and foreign-message policy (PeerOptions), then §6's rules for the
// array itself. False: nothing is left to process.
bool admit(PeerState& s, Incoming& in) {
  const bool filter = s.opts.role != Role::Peer || s.opts.ignore_foreign;
  if (filter) {
    if (in.batch && s.opts.ignore_foreign && !in.items.empty() &&
        std::all_of(in.items.begin(), in.items.end(), [](const Item& i) {
          const auto* bad = std::get_if<Invalid>(&i);
          return bad && bad->foreign;
        })) {
      s.diag(Diagnostic::Kind::IgnoredMessage, "an array of values that are not JSON-RPC 2.0; ignored");
      return false;
    }
    const std::size_t before = in.items.size();
    in.items.erase(std::remove_if(in.items.begin(), in.items.end(),
                                  [&s, &in](const Item& i) { return ignored(s, i, in.batch); }),
                   in.items.end());
    if (in.items.size() != before)
      s.diag(Diagnostic::Kind::IgnoredMessage,
             std::to_string(before - in.items.size()) + " message(s) not for this endpoint; ignored");
    if (in.items.empty() && before > 0) return false;
  }
  if (in.batch) {
    if (auto bad = batch_violation(in.items.size(), s.opts.limits.max_batch)) {
      in.batch = false;
      in.items.clear();
      in.items.emplace_back(std::move(*bad));
    }
  }
  return true;
}

}  // namespace

void Peer::receive(Incoming&& in) {
  auto self = s_;  // a handler may destroy the Peer; keep the state alive
  PeerState& s = *self;
  if (!admit(s, in)) return;

  std::uint64_t batch = 0;
  if (in.batch) {
    batch = s.next_batch++;
    auto& acc = s.batches[batch];
    acc.slots.resize(in.items.size());
    acc.remaining = 1;  // guard: nothing leaves before every element is dispatched
  }
  auto count = [&] {
    if (batch) ++s.batches[batch].remaining;
  };

  for (std::size_t i = 0; i < in.items.size(); ++i) {
    Item& item = in.items[i];
    if (auto* rq = std::get_if<Request>(&item)) {
      count();
      dispatch(s, rq->method, rq->params, &rq->id, batch, i);
    } else if (auto* n = std::get_if<Notification>(&item)) {
      if (n->method == "$/cancelRequest") {
        // LSP: params {id}; cancelling something already answered is a no-op.
        if (n->params && s.opts.inspect) s.opts.inspect(*n->params);
        if (n->params && n->params->is_object())
          if (auto idv = n->params->find("id"); idv != n->params->end())
            if (auto id = Id::from_json(*idv)) s.cancel_serving(*id);
        continue;
      }
      dispatch(s, n->method, n->params, nullptr, batch, i);
    } else if (auto* r = std::get_if<Response>(&item)) {
      Result<json> res = r->is_error() ? Result<json>(std::get<Error>(std::move(r->outcome)))
                                       : Result<json>(std::get<json>(std::move(r->outcome)));
      s.settle(r->id, std::move(res));
    } else {
      auto& bad = std::get<Invalid>(item);
      if (!bad.reply) {
        s.diag(Diagnostic::Kind::InvalidResponse, bad.error.message);
        continue;
      }
      count();
      s.answer(batch, i, Response{std::move(bad.id), std::move(bad.error)});
    }
  }
  // Release the guard; if every answer is already in, the batch leaves now.
  if (batch) s.release_batch(batch);
}

void Peer::receive_error(const Error& e) {
  // §5: "If there was an error in detecting the id in the Request object
  // (e.g. Parse error/Invalid Request), it MUST be Null."
  s_->answer(0, 0, Response{Id(), e});
}

namespace {
std::optional<Millis> effective_timeout(const PeerState& s, const CallOptions& o) {
  if (o.no_timeout) return std::nullopt;
  return o.timeout ? o.timeout : s.opts.default_timeout;
}
}  // namespace

Result<Id> Peer::call(std::string method, std::optional<json> params, CallCallback done,
                      CallOptions opts, Millis now) {
  PeerState& s = *s_;
  if (s.closed) return Error(code::kClosed, "Endpoint closed");
  if (method.empty()) return Error(code::kInvalidRequest, "Invalid Request: empty method name");
  if (params && !params->is_array() && !params->is_object())
    return Error(code::kInvalidParams, "Invalid params: params must be an array or an object");
  if (s.pending.size() >= s.opts.limits.max_pending)
    return Error(code::kOverloaded, "Too many pending requests (limit " +
                                        std::to_string(s.opts.limits.max_pending) + ")");
  Id id = s.track(method, std::move(done), effective_timeout(s, opts), now);
  Outgoing o;
  o.messages.emplace_back(Request{id, std::move(method), std::move(params)});
  auto self = s_;
  s.emit(std::move(o));  // a loopback transport may settle the call in here
  return id;
}

Result<void> Peer::notify(std::string method, std::optional<json> params) {
  if (s_->closed) return Error(code::kClosed, "Endpoint closed");
  if (method.empty()) return Error(code::kInvalidRequest, "Invalid Request: empty method name");
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
  for (const auto& e : entries) {
    if (e.method.empty()) return Error(code::kInvalidRequest, "Invalid Request: empty method name");
    if (e.params && !e.params->is_array() && !e.params->is_object())
      return Error(code::kInvalidParams, "Invalid params: params must be an array or an object");
    calls += e.done ? 1 : 0;
  }
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
  if (id.kind() != Id::Kind::Int || s.pending.find(id.as_int()) == s.pending.end()) return false;
  // LSP $/cancelRequest: the other side may stop work; its answer, if any,
  // will then find no pending call and be dropped with a diagnostic.
  Outgoing o;
  o.messages.emplace_back(Notification{"$/cancelRequest", json{{"id", id.to_json()}}});
  s.emit(std::move(o));
  s.settle(id, Error(code::kRequestCancelled, "Request cancelled"));
  return true;
}

void Peer::undelivered(const Outgoing& o, const Error& why) {
  auto self = s_;
  PeerState& s = *self;
  s.diag(Diagnostic::Kind::SendFailed, "the transport could not deliver a message: " + why.message, why);
  Outgoing again;
  again.batch = o.batch;
  for (const Message& m : o.messages) {
    if (const auto* q = std::get_if<Request>(&m)) {
      s.settle(q->id, Error(code::kClosed, "Transport send failed: " + why.message));
    } else if (const auto* r = std::get_if<Response>(&m); r && !r->is_error()) {
      again.messages.emplace_back(Response{
          r->id, Error(code::kInternalError, "Internal error: the result could not be sent: " + why.message)});
    }
  }
  // Only the replacement errors go out again; an error response that could
  // not be sent is not retried (it would fail the same way, or loop).
  if (!again.messages.empty()) s.emit(std::move(again));
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
    auto it = s.pending.find(n);
    if (it == s.pending.end()) {  // not expected (the top is kept live); drop it
      std::pop_heap(s.deadlines.begin(), s.deadlines.end(), detail::DeadlineLater());
      s.deadlines.pop_back();
      continue;
    }
    std::string msg = "Request timed out after " + std::to_string(it->second.timeout) + " ms: " +
                      it->second.method;
    s.settle(Id::integer(n), Error(code::kTimeout, std::move(msg)));
  }
}

void Peer::close(std::optional<Error> reason) {
  auto self = s_;
  PeerState& s = *self;
  if (s.closed) return;
  s.closed = true;
  Error why = reason ? *reason : Error(code::kClosed, "Endpoint closed");
  // Requests being served: forget them first, then tell their handlers, so
  // an answer given from on_cancel finds no slot and is dropped with a
  // LateReply diagnostic instead of being sent on a closed endpoint.
  std::vector<std::function<void()>> cancels;
  for (auto& sv : s.serving)
    if (sv.slot != 0 && sv.on_cancel) cancels.push_back(std::move(sv.on_cancel));
  for (auto& sv : s.serving)
    if (sv.slot != 0) s.free_serving_entry(sv);
  s.serving_ids.clear();
  auto batches = std::move(s.batches);
  s.batches.clear();
  for (auto& [n, acc] : batches)
    for (auto& r : acc.slots)
      if (r) s.drop(std::move(*r));
  s.answering = 0;
  for (auto& f : cancels) f();
  // Every pending call fails with the reason, in id order for determinism.
  std::vector<std::int64_t> ids;
  for (const auto& [id, p] : s.pending) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (auto id : ids) s.settle(Id::integer(id), Error(why));
}

bool Peer::closed() const { return s_->closed; }
std::size_t Peer::pending() const { return s_->pending.size(); }
std::size_t Peer::in_flight() const { return s_->answering; }

}  // namespace weft
