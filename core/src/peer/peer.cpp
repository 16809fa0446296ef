// The bidirectional endpoint: construction, registration, the way in
// (receive: roles, foreign values, batches) and close. Serving is in
// serving.cpp, calling in calling.cpp.
#include "weft/peer.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "peer/state.h"
#include "rpc/invalid.h"
#include "rpc/params.h"

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

void PeerState::register_method(std::string name, Registered r) {
  if (running > 0) remove_method(name);  // a running handler may be the one replaced
  methods[std::move(name)] = std::move(r);
}

bool PeerState::remove_method(const std::string& name) {
  auto it = methods.find(name);
  if (it == methods.end()) return false;
  last_method = nullptr;
  if (running > 0) retired.push_back(methods.extract(it));
  else methods.erase(it);
  return true;
}

}  // namespace detail

using detail::PeerState;

// ---- Peer -------------------------------------------------------------------

Peer::Peer(PeerOptions options) : s_(std::make_shared<PeerState>(std::move(options))) {
  if (s_->opts.handshake) {
    std::weak_ptr<PeerState> weak = s_;
    method("rpc.handshake", SyncHandler([weak](const json& params) -> Result<json> {
      auto s = weak.lock();
      if (!s) return Error(code::kClosed, "Endpoint closed");
      json p = params;  // a host placeholder becomes the value here (PeerOptions::inspect)
      if (s->opts.inspect) s->opts.inspect(p, nullptr);
      return detail::answer_handshake(*s, p);
    }));
  }
}

Peer::~Peer() { close(); }

namespace {
detail::Registered make_registered(std::optional<ParamSpec> spec, std::string description) {
  detail::Registered r;
  r.spec = std::move(spec);
  r.description = std::move(description);
  return r;
}

// A method whose ParamSpec is unusable (detail::spec_problem) is registered
// refusing: each request is answered -32603 saying what is wrong, rather than
// -32601 or a misleading -32602 (serving.cpp, check()).
WEFT_COLD void refuse_bad_spec(detail::Registered& r, const std::string& name) {
  std::string why = detail::spec_problem(*r.spec);
  if (!why.empty()) r.bad_spec = "Internal error: method \"" + name + "\" has an invalid ParamSpec: " + why;
}
}  // namespace

void Peer::method(std::string name, MethodHandler h, std::optional<ParamSpec> spec,
                  std::string description) {
  auto r = make_registered(std::move(spec), std::move(description));
  r.async = std::move(h);
  if (r.spec) refuse_bad_spec(r, name);
  s_->register_method(std::move(name), std::move(r));
}

void Peer::method(std::string name, SyncHandler h, std::optional<ParamSpec> spec,
                  std::string description) {
  auto r = make_registered(std::move(spec), std::move(description));
  r.sync = std::move(h);
  if (r.spec) refuse_bad_spec(r, name);
  s_->register_method(std::move(name), std::move(r));
}

void Peer::method(std::string name, DeferrableHandler h, std::optional<ParamSpec> spec,
                  std::string description) {
  auto r = make_registered(std::move(spec), std::move(description));
  r.deferrable = std::move(h);
  if (r.spec) refuse_bad_spec(r, name);
  s_->register_method(std::move(name), std::move(r));
}

void Peer::notification(std::string name, NotificationHandler h, std::optional<ParamSpec> spec) {
  auto r = make_registered(std::move(spec), {});
  r.notification = true;
  r.notify = std::move(h);
  if (r.spec) refuse_bad_spec(r, name);
  s_->register_method(std::move(name), std::move(r));
}

bool Peer::remove(const std::string& name) { return s_->remove_method(name); }

std::vector<MethodInfo> Peer::methods() const {
  std::vector<MethodInfo> out;
  out.reserve(s_->methods.size());
  for (const auto& [name, r] : s_->methods) out.push_back({name, r.notification, r.spec, r.description});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

void Peer::receive(const Document& doc) {
  Document copy = doc;
  receive(std::move(copy));
}

void Peer::receive(Document&& doc) { receive(classify(std::move(doc), s_->opts.limits.max_batch)); }

namespace {

// Whether `bad` is a malformed answer to a call this side made: no "method"
// and its id is a pending call's. A message with neither "method" nor
// "result"/"error" is one too when its id is pending (a server that left out
// a result it could not encode); so is one without "jsonrpc":"2.0" (a 1.0
// server), unless such values are foreign traffic to ignore (ignore_foreign:
// another library's message on a shared window may carry the same id).
bool answers_own_call(const PeerState& s, const Invalid& bad) {
  return !bad.call && !(bad.foreign && s.opts.ignore_foreign) && bad.id.kind() == Id::Kind::Int &&
         s.pending.contains(bad.id.as_int());
}

// A batch that is not all foreign keeps its foreign elements: the array as a
// whole is JSON-RPC, and each element gets its -32600 (§6).
bool ignored(const PeerState& s, const Item& item, bool batch) {
  if (const auto* bad = std::get_if<Invalid>(&item)) {
    if (bad->foreign && s.opts.ignore_foreign && !batch) return true;
    if (answers_own_call(s, *bad)) return false;
    // A client answers nothing: neither a call nor a message it cannot read.
    if (s.opts.role == Role::Client) return bad->call || bad->reply;
    if (s.opts.role == Role::Server) return !bad->reply;
    return false;
  }
  if (s.opts.role == Role::Client) {
    // A client still takes what concerns its own calls: chunks, progress,
    // and the other side's drain.
    const auto* n = std::get_if<Notification>(&item);
    return !std::holds_alternative<Response>(item) &&
           !(n && (n->method == "$/weft/chunk" || n->method == "$/progress" || n->method == "$/weft/drain"));
  }
  if (s.opts.role == Role::Server) return std::holds_alternative<Response>(item);
  return false;
}

WEFT_COLD void report_ignored(PeerState& s, std::size_t n) {
  s.diag(Diagnostic::Kind::IgnoredMessage, std::to_string(n) + " message(s) not for this endpoint; ignored");
}

// Whether the role and foreign-message policy (PeerOptions) can drop anything.
bool filters(const PeerState& s) { return s.opts.role != Role::Peer || s.opts.ignore_foreign; }

// The role and foreign-message policy, then §6's rules for the array itself.
// False: nothing is left to process.
bool admit(PeerState& s, Incoming& in) {
  // An empty array is one Invalid (§6), which the filters judge like any.
  if (in.batch && in.items.empty()) check_batch(in, 0, s.opts.limits.max_batch);
  if (filters(s)) {
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
    if (in.items.size() != before) report_ignored(s, before - in.items.size());
    if (in.items.empty() && before > 0) return false;
  }
  // A decoder may have applied §6's batch rules with this peer's limit
  // already (check_batch: it alone saw the whole array); otherwise here.
  const std::size_t max = s.opts.limits.max_batch;
  if (in.batch && in.checked != max) check_batch(in, in.items.size(), max);
  return true;
}

// LSP's $/cancelRequest: params {id}; cancelling something already
// answered is a no-op. Not inlined: one kind of notification's work, kept
// out of the loop every message goes through (cold.h says why that matters).
[[gnu::noinline]] void cancel_request(PeerState& s, std::optional<json>& params) {
  if (params && s.opts.inspect) s.opts.inspect(*params, nullptr);
  if (params && params->is_object())
    if (auto idv = params->find("id"); idv != params->end())
      if (auto id = Id::from_json(*idv)) s.cancel_serving(*id);
}

// An invalid message: answered (§5) unless it was a response, which is
// reported instead (classify_response). Out of the way (cold.h).
WEFT_COLD void answer_invalid(PeerState& s, Invalid& bad, std::uint64_t batch, std::size_t index) {
  if (!bad.reply) return s.diag(Diagnostic::Kind::InvalidResponse, bad.error.message);
  s.answer(batch, index, Response{std::move(bad.id), std::move(bad.error)});
}

// A malformed answer to a pending call: reported, never answered (§5), and
// the call fails now with what was wrong rather than at its timeout, though
// its answer came.
WEFT_COLD void fail_own_call(PeerState& s, Invalid& bad) {
  s.diag(Diagnostic::Kind::InvalidResponse, bad.error.message);
  s.settle(bad.id, Error(code::kInternalError, "Invalid response: " + std::string(detail::rule_of(bad))));
}

// A closed Peer serves nothing and answers nothing (close()).
WEFT_COLD void received_after_close(PeerState& s) {
  s.diag(Diagnostic::Kind::IgnoredMessage, "a message arrived after close(); ignored");
}

// One message, or one element of batch `batch` (0: none) at `index`.
void process(PeerState& s, Item& item, std::uint64_t batch, std::size_t index) {
  // Every element that will be answered holds the batch open (release_batch).
  auto count = [&] {
    if (batch) ++s.batches[batch].remaining;
  };
  if (auto* rq = std::get_if<Request>(&item)) {
    count();
    detail::dispatch(s, rq->method, rq->params, &rq->id, batch, index);
  } else if (auto* n = std::get_if<Notification>(&item)) {
    if (s.stream_control(n->method, n->params)) return;
    if (n->method == "$/weft/drain") return s.remote_drain(n->params);
    if (n->method == "$/cancelRequest") return cancel_request(s, n->params);
    detail::dispatch(s, n->method, n->params, nullptr, batch, index);
  } else if (auto* r = std::get_if<Response>(&item)) {
    Result<json> res = r->is_error() ? Result<json>(std::get<Error>(std::move(r->outcome)))
                                     : Result<json>(std::get<json>(std::move(r->outcome)));
    s.settle(r->id, std::move(res), r->metrics ? &*r->metrics : nullptr);
  } else {
    auto& bad = std::get<Invalid>(item);
    if (answers_own_call(s, bad)) return fail_own_call(s, bad);
    if (!s.openings.empty()) s.openings.erase(bad.id);  // its request will not come
    if (bad.reply) count();
    answer_invalid(s, bad, batch, index);
  }
}

// Reads batch `batch`'s members `items` from `from` on, in order (§6 leaves
// the order to the server; each handler runs before the next member is
// read, so a $/cancelRequest later in the batch finds the requests before
// it answered, or in flight if they answer later). The outermost batch
// being read may pause after a member whose handler the host runs once the
// receive has returned (Peer::pause): its other members go to
// PeerState::paused, for Peer::resume, which reads on from there. Out of
// line: receive and resume share one copy.
[[gnu::noinline]] void read_batch(PeerState& s, std::vector<Item>& items, std::uint64_t batch, std::size_t from) {
  const bool outermost = s.reading == 0 && s.running == 0 && s.paused.batch == 0;
  if (outermost) s.reading = batch;
  // A handler may close the Peer: what is left of the batch is not served.
  for (std::size_t i = from; i < items.size() && !s.closed; ++i) {
    process(s, items[i], batch, i);
    if (!s.pause_asked) continue;
    s.pause_asked = false;
    if (s.closed) break;
    // Paused after the last member too: the guard stays until its handler
    // has run, so the answers leave after it (or not at all, if it closes
    // the Peer), as they do natively, and resume() can answer a held
    // answer the host never gave.
    s.reading = 0;
    s.paused.batch = batch;
    s.paused.next = i + 1;
    std::swap(s.paused.items, items);  // the vectors trade places: no copy, no allocation
    return;
  }
  if (outermost) s.reading = 0;
  // Release the guard; if every answer is already in, the batch leaves now.
  s.release_batch(batch);
}

// A held answer the host did not give (Peer::resume).
WEFT_COLD void answer_dropped(Peer& p) {
  p.answer_held(Error(code::kInternalError, "Internal error: request dropped without a reply"));
}

}  // namespace

void Peer::receive(Incoming&& in) {
  auto self = s_;  // a handler may destroy the Peer; keep the state alive
  PeerState& s = *self;
  if (s.closed) return received_after_close(s);
  if (!admit(s, in)) return;
  if (!in.batch) {
    for (Item& item : in.items) process(s, item, 0, 0);
    return;
  }
  const std::uint64_t batch = s.next_batch++;
  auto& acc = s.batches[batch];
  acc.slots.resize(in.items.size());
  acc.remaining = 1;  // guard: nothing leaves before every element is dispatched
  read_batch(s, in.items, batch, 0);
}

bool Peer::pause() {
  PeerState& s = *s_;
  return s.dispatching == 0 || s.pause_reading(s.dispatching);
}

bool Peer::paused() const { return s_->paused.batch != 0; }

bool Peer::resume() {
  auto self = s_;  // a handler may destroy the Peer; keep the state alive
  PeerState& s = *self;
  const std::uint64_t batch = s.paused.batch;
  if (batch == 0) return false;
  s.paused.batch = 0;
  // The member before held its answer and the host did not give it: it is
  // answered as a DeferrableHandler that gave none is (serving.cpp), rather
  // than holding the batch open for ever.
  if (s.held.active && s.held.batch == batch) answer_dropped(*this);
  std::vector<Item> items;
  std::swap(items, s.paused.items);
  read_batch(s, items, batch, s.paused.next);
  items.clear();
  if (s.paused.batch == 0) std::swap(items, s.paused.items);  // its capacity serves the next pause
  return s.paused.batch != 0;
}

void Peer::receive(Item&& item) {
  auto self = s_;  // a handler may destroy the Peer; keep the state alive
  PeerState& s = *self;
  if (s.closed) return received_after_close(s);
  // admit() for one message that is not in a batch.
  if (filters(s) && ignored(s, item, false)) return report_ignored(s, 1);
  process(s, item, 0, 0);
}

void Peer::receive_error(const Error& e) {
  // §5: "If there was an error in detecting the id in the Request object
  // (e.g. Parse error/Invalid Request), it MUST be Null."
  if (s_->closed) return received_after_close(*s_);
  if (s_->opts.role == Role::Client) return;  // a Client answers nothing (Role)
  s_->answer(0, 0, Response{Id(), e});
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
    if (sv.slot != 0) {
      if (sv.out) s.drop_chunks(*sv.out, sv.id);
      s.free_serving_entry(sv);
    }
  s.openings.clear();
  s.serving_ids.clear();
  s.paused.batch = 0;  // what a paused batch had left is not read (resume)
  s.paused.items.clear();
  auto batches = std::move(s.batches);
  s.batches.clear();
  for (auto& [n, acc] : batches)
    for (auto& r : acc.slots)
      if (r) s.drop(std::move(*r));
  s.answering = 0;
  for (auto& f : cancels) f();
  // Every pending call fails with the reason, in id order for determinism.
  std::vector<std::int64_t> ids = s.pending.ids();
  std::sort(ids.begin(), ids.end());
  for (auto id : ids) s.settle(Id::integer(id), Error(why));
}

bool Peer::closed() const { return s_->closed; }
std::size_t Peer::pending() const { return s_->pending.size(); }
std::size_t Peer::in_flight() const { return s_->answering; }
const PeerLimits& Peer::limits() const { return s_->opts.limits; }

}  // namespace weft
