// Serving: dispatch of incoming requests and notifications (§4, §4.1), their
// answers (one by one, or gathered for a batch, §6), a held answer, and
// incoming $/cancelRequest (LSP). Reply, a handler's way to answer later, is
// reply.cpp.
#include "weft/peer.h"

#include <algorithm>
#include <clocale>
#include <cstdlib>
#include <optional>
#include <utility>

#include "json/pool.h"
#include "peer/state.h"
#include "rpc/params.h"

namespace weft {
namespace detail {

void PeerState::answer(std::uint64_t batch, std::size_t index, Response&& r, std::int64_t started_us) {
  answer_made(batch, index, [&r]() -> Response { return std::move(r); }, started_us);
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
  s.out.reset();
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
  if (e->out && e->out->head < e->out->queue.size()) {
    // Chunks are still queued for credit: the answer follows them (pump).
    // The handler is done: a cancel now drops what is queued without
    // telling it (its hook may name a reply slot a later request now holds).
    e->out->answer = std::move(r);
    e->on_cancel = nullptr;
    return;
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
  if (answer_result(s.batch, s.id, r, s.started_us)) return;
  Response resp{std::move(s.id), {}};
  if (r.ok()) resp.outcome = std::move(r.value());
  else resp.outcome = r.error();
  answer(s.batch, s.index, std::move(resp), s.started_us);
}

namespace {
// A number id's value (a string or null id: none).
std::optional<double> value_of(const Id& id) {
  switch (id.kind()) {
    case Id::Kind::Int: return static_cast<double>(id.as_int());
    case Id::Kind::Uint: return static_cast<double>(id.as_uint());
    case Id::Kind::Number: {  // a JSON number's text; strtod reads the host locale's decimal point
      std::string t = id.text();
      std::replace(t.begin(), t.end(), '.', *std::localeconv()->decimal_point);
      return std::strtod(t.c_str(), nullptr);
    }
    default: return std::nullopt;
  }
}
}  // namespace

void PeerState::cancel_serving(const Id& id) {
  auto range = serving_ids.equal_range(id);
  if (range.first == range.second) {
    // $/cancelRequest's params went through a JSON parse, which keeps a
    // number's value, not its text ("1.50" arrives as 1.5, "1E3" as 1000.0,
    // a 30-digit integer as a double): the request meant is the one in
    // flight whose id has that value, if only one has.
    const auto v = value_of(id);
    if (!v) return;
    const Id* meant = nullptr;
    for (const auto& [k, slot] : serving_ids)
      if (value_of(k) == v) {
        if (meant && !(*meant == k)) return;  // two ids of one value: neither is meant
        meant = &k;
      }
    if (!meant) return;
    range = serving_ids.equal_range(*meant);
  }
  std::vector<std::uint64_t> slots;
  for (auto i = range.first; i != range.second; ++i) slots.push_back(i->second);
  for (auto slot : slots) {
    Serving* e = find_serving(slot);
    if (!e || e->cancelled) continue;
    e->cancelled = true;
    if (e->out) {  // queued chunks are never sent now
      const Id id = e->id;
      drop_chunks(*e->out, id);
      if (!(e = find_serving(slot))) continue;
    }
    // Kept until the -32800 has gone: it may hold the request's last Reply
    // (let go quietly, Reply::release).
    auto f = std::move(e->on_cancel);
    if (f) f();  // may re-enter and reply
    // LSP: "a request that got cancelled still needs to return from the
    // server and send a response back"; the handler's own answer, if it
    // comes later, finds no slot and is dropped.
    if (find_serving(slot)) complete(slot, Error(code::kRequestCancelled, "Request cancelled"));
  }
}


std::uint64_t PeerState::serve(const Id* id, std::uint64_t batch, std::size_t index,
                               std::unique_ptr<StreamOut> out, std::int64_t started_us) {
  const bool answer = id != nullptr;
  Serving& sv = add_serving();
  const std::uint64_t slot = sv.slot;
  sv.id = answer ? *id : Id();
  sv.batch = batch;
  sv.index = index;
  sv.discard = !answer;
  sv.cancelled = false;
  sv.out = std::move(out);
  sv.started_us = started_us;
  if (answer) {
    ++answering;
    if (!spare_serving_ids.empty()) {
      auto node = std::move(spare_serving_ids.back());
      spare_serving_ids.pop_back();
      node.key() = *id;
      node.mapped() = slot;
      serving_ids.insert(std::move(node));
    } else {
      serving_ids.emplace(*id, slot);
    }
  }
  return slot;
}

namespace {

// A DeferrableHandler's way to answer later: the serving entry and Reply are
// made only when it asks (PeerState::serve).
class Later final : public Deferral {
 public:
  Later(PeerState& s, const std::string& method, const Id* id, std::uint64_t batch, std::size_t index,
        std::unique_ptr<StreamOut> out, std::int64_t started_us)
      : s_(s), method_(method), id_(id), batch_(batch), index_(index), out_(std::move(out)), started_us_(started_us) {}
  Reply reply() override {
    if (taken_) return Reply();
    taken_ = true;
    return s_.make_reply(s_.serve(id_, batch_, index_, std::move(out_), started_us_));
  }
  bool taken() const override { return taken_; }
  bool hold() override {
    // A batch's member only when the batch's reading pauses after it, so
    // that the next member is read once this one is answered (Peer::resume).
    if (taken_ || s_.held.active || (batch_ != 0 && !s_.pause_reading(batch_))) return false;
    taken_ = true;
    PeerState::Held& h = s_.held;
    h.active = true;
    h.request = id_ != nullptr;
    if (id_) h.id = *id_;
    else h.method = method_;
    h.out = std::move(out_);
    h.started_us = started_us_;
    h.batch = batch_;
    h.index = index_;
    return true;
  }

 private:
  PeerState& s_;
  const std::string& method_;
  const Id* id_;
  std::uint64_t batch_;
  std::size_t index_;
  std::unique_ptr<StreamOut> out_;
  std::int64_t started_us_;
  bool taken_ = false;
};

// Handlers are user code. Natively a throwing handler becomes -32603 instead
// of unwinding through the peer; under Emscripten (no exception catching)
// these compile away and a throw aborts, as it would anywhere in that build.
#if defined(__cpp_exceptions)
Error handler_threw(const std::exception& ex) {
  return Error(code::kInternalError, std::string("Internal error: ") + ex.what());
}
Error handler_threw() { return Error(code::kInternalError, "Internal error: handler threw"); }

#define WEFT_GUARDED(body, on_error)   \
  try {                                \
    body;                              \
  } catch (const std::exception& ex) { \
    on_error(handler_threw(ex));       \
  } catch (...) {                      \
    on_error(handler_threw());         \
  }
#else
#define WEFT_GUARDED(body, on_error) body;
#endif

// The answer handler call `f` gives at once, or the error it threw. Returned,
// not assigned: the optional is made once, where the caller declares it.
template <class F>
std::optional<Result<json>> answer_of(F&& f) {
#if defined(__cpp_exceptions)
  try {
    return f();
  } catch (const std::exception& ex) {
    return Result<json>(handler_threw(ex));
  } catch (...) {
    return Result<json>(handler_threw());
  }
#else
  return f();
#endif
}

// dispatch()'s refusals, out of its way (cold.h): a request's is its
// answer, a notification's a diagnostic (§4.1: never answered).
WEFT_COLD void refuse(PeerState& s, const std::string& method, const Id* id, std::uint64_t batch,
                      std::size_t index, std::int64_t started_us, Error e) {
  if (id) s.answer(batch, index, Response{*id, std::move(e)}, started_us);
  else s.diag(Diagnostic::Kind::NotificationFailed, "notification \"" + method + "\" failed: " + e.message, e);
}
WEFT_COLD Error not_found(const std::string& method) {
  return Error(code::kMethodNotFound, "Method not found: " + method);
}
WEFT_COLD Error overloaded(std::size_t limit) {
  return Error(code::kOverloaded, "Too many requests in flight (limit " + std::to_string(limit) + ")");
}
WEFT_COLD Error malformed_open() {
  return Error(code::kInvalidRequest, "Invalid Request: its $/weft/open's credit is not a non-negative number");
}
// LSP: "$/" notifications may be ignored by servers that do not know them.
WEFT_COLD void unhandled(PeerState& s, const std::string& method) {
  s.diag(Diagnostic::Kind::UnhandledNotification, "no handler for notification \"" + method + "\"");
}

// One call on its way to its handler, and where its answer goes.
struct Call {
  PeerState& s;
  const std::string& method;
  const Id* id;  // nullptr: a notification (§4.1: never answered)
  std::uint64_t batch;
  std::size_t index;
  std::int64_t started_us;
  void fail(Error e) const { refuse(s, method, id, batch, index, started_us, std::move(e)); }
};

// The registration of `method`: the one the last dispatch found (calls tend
// to repeat a method), else looked up.
PeerState::Methods::value_type* look_up(PeerState& s, const std::string& method) {
  auto it = s.methods.find(method);
  if (it == s.methods.end()) return nullptr;
  s.last_method = &*it;
  return s.last_method;
}
PeerState::Methods::value_type* find_method(PeerState& s, const std::string& method) {
  PeerState::Methods::value_type* m = s.last_method;
  return m && m->first == method ? m : look_up(s, method);
}

// What check_params makes of `params` for a method with a ParamSpec, in
// `into`; false when the call was refused instead.
bool check(const Call& c, const detail::Registered& r, std::optional<json>& params, std::optional<json>& into) {
  if (!r.bad_spec.empty()) {
    c.fail(Error(code::kInternalError, r.bad_spec));
    return false;
  }
  const ParamSpec& spec = *r.spec;
  const PeerOptions& o = c.s.opts;
  if (params && o.inspect_members) {
    if (auto refused = o.inspect_members(*params)) {
      c.fail(std::move(*refused));
      return false;
    }
  } else if (params && o.inspect) {
    o.inspect(*params, nullptr);
  }
  auto checked = detail::check_params(spec, params, o.placeholder_type);
  if (!checked) {
    c.fail(checked.error());
    return false;
  }
  into.emplace(std::move(checked.value()));
  return true;
}

// An answer a handler gave at once that send_result did not take: sent, or
// for a notification dropped, a failure reported.
void answer_otherwise(const Call& c, Result<json>& out) {
  auto make = [&] {
    return out.ok() ? Response{c.id ? *c.id : Id(), std::move(out.value())}
                    : Response{c.id ? *c.id : Id(), out.error()};
  };
  if (c.id) return c.s.answer_made(c.batch, c.index, make, c.started_us);
  if (!out.ok()) c.fail(out.error());
  c.s.drop(make());  // §4.1: a notification is never answered
}
// An answer a handler gave at once (sync, or deferrable without taking its
// Reply).
void answer_now(const Call& c, Result<json>& out) {
  if (c.id && c.s.answer_result(c.batch, *c.id, out, c.started_us)) return;
  answer_otherwise(c, out);
}

// The four kinds of handler (Registered), each called its own way.
void notify(const Call& c, const Registered& r, json& p) {
  WEFT_GUARDED(r.notify(p), c.fail)
  object_pool().recycle(p);  // its map and nodes serve the next message
}

void run_sync(const Call& c, const Registered& r, json& p) {
  std::optional<Result<json>> out = answer_of([&] { return std::optional<Result<json>>(r.sync(p)); });
  object_pool().recycle(p);  // its map and nodes serve the next message
  answer_now(c, *out);
}

void run_deferrable(const Call& c, const Registered& r, json& p, std::unique_ptr<StreamOut> out) {
  // Answered now unless the handler takes its Reply (DeferrableHandler).
  const CallInfo info{c.method, c.id};
  Later later(c.s, c.method, c.id, c.batch, c.index, std::move(out), c.started_us);
  std::optional<Result<json>> now = answer_of([&] { return r.deferrable(p, later, info); });
  object_pool().recycle(p);  // its map and nodes serve the next message
  if (later.taken()) {
    // The Reply (or Peer::answer_held) answers; a value returned anyway is never sent.
    if (now && now->ok()) c.s.drop(Response{Id(), std::move(now->value())});
    return;
  }
  if (!now) now.emplace(Error(code::kInternalError, "Internal error: request dropped without a reply"));
  answer_now(c, *now);
}

void run_async(const Call& c, const Registered& r, json& p, std::unique_ptr<StreamOut> out) {
  const std::uint64_t slot = c.s.serve(c.id, c.batch, c.index, std::move(out), c.started_us);
  const CallInfo info{c.method, c.id};
  Reply reply = c.s.make_reply(slot);
  // If the handler throws, its Reply is destroyed while unwinding and answers
  // -32603 itself; nothing more to do here.
  auto ignore = [](Error) {};
  WEFT_GUARDED(r.async(std::move(p), std::move(reply), info), ignore)
}

}  // namespace

// Dispatches one valid request or notification. `batch`/`index` place its
// answer; `id` is null for notifications (§4.1: never answered).
void dispatch(PeerState& s, std::string& method, std::optional<json>& params, const Id* id,
              std::uint64_t batch, std::size_t index) {
  const bool answer = id != nullptr;
  const Call c{s, method, id, batch, index, answer ? s.start_clock() : -1};
  std::unique_ptr<StreamOut> out;
  if (answer && !s.openings.empty()) out = take_opening(s, *id);

  // Rate limit and drain come first: a flood of unknown methods is a flood.
  if (answer)
    if (auto refused = s.refuse_request()) return c.fail(std::move(*refused));
  PeerState::Methods::value_type* m = find_method(s, method);
  if (!m || (answer && m->second.notification)) {
    if (!answer) return unhandled(s, method);
    return c.fail(not_found(method));
  }
  if (answer && s.answering >= s.opts.limits.max_in_flight) return c.fail(overloaded(s.opts.limits.max_in_flight));
  // Its stream would wait for credit that was never granted: refused instead.
  if (out && out->malformed) return c.fail(malformed_open());
  const detail::Registered& r = m->second;

  // The handler gets the params where they are: the message's own member
  // (absent: made null there), or what check_params made of them.
  std::optional<json> checked_p;
  if (r.spec && !check(c, r, params, checked_p)) return;
  json& p = checked_p ? *checked_p : params ? *params : params.emplace();

  // The handler is called in place: one that re-registers or removes its
  // own method meanwhile leaves the old registration in PeerState::retired.
  const PeerState::Running running(s, batch);
  if (r.notification) return notify(c, r, p);
  if (r.sync) return run_sync(c, r, p);
  if (r.deferrable) return run_deferrable(c, r, p, std::move(out));
  run_async(c, r, p, std::move(out));
}

}  // namespace detail

// ---- A held answer (Deferral::hold) ---------------------------------------

namespace {

// Takes the held record out of the state, leaving none held: the answer may
// re-enter the peer (a send delivered at once), and a message received then
// may hold its own.
bool take_held(detail::PeerState& s, detail::PeerState::Held& h) {
  if (!s.held.active) return false;
  h = std::move(s.held);
  s.held.active = false;
  return true;
}

}  // namespace

bool Peer::answer_held(Result<json>&& answer) {
  detail::PeerState& s = *s_;
  detail::PeerState::Held h;
  if (!take_held(s, h)) return false;
  // Answered as run_deferrable answers what a handler returns at once.
  const detail::Call c{s, h.method, h.request ? &h.id : nullptr, h.batch, h.index, h.started_us};
  detail::answer_now(c, answer);
  return true;
}

bool Peer::release_held() {
  detail::PeerState& s = *s_;
  detail::PeerState::Held& h = s.held;
  // PeerState::answer_result's conditions, less the answer's own (a result).
  if (!h.active || !h.request || h.batch != 0 || h.started_us >= 0 || h.out || !s.opts.send_result || s.closed)
    return false;
  h.active = false;
  return true;
}

bool Peer::rehold(const Id& id) {
  detail::PeerState& s = *s_;
  if (s.closed || s.held.active) return false;
  detail::PeerState::Held& h = s.held;
  h.active = true;
  h.request = true;
  h.id = id;
  h.method.clear();
  h.out.reset();
  h.started_us = -1;
  h.batch = 0;
  h.index = 0;
  return true;
}

Reply Peer::defer_held() {
  detail::PeerState& s = *s_;
  detail::PeerState::Held h;
  // Closed: nothing is sent any more, so nothing is served either (it would
  // count in flight on a Peer that will never answer it).
  if (!take_held(s, h) || s.closed) return Reply();
  return s.make_reply(s.serve(h.request ? &h.id : nullptr, h.batch, h.index, std::move(h.out), h.started_us));
}

}  // namespace weft
