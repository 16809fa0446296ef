// The module's exports: what js/ calls. Each one reads its arguments (numbers,
// the input buffer, the descriptor array: abi.h), calls the core, and leaves
// results in the status array. Nothing here decides protocol questions.
#include <emscripten.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <variant>
#include <vector>

#include "abi.h"
#include "calls.h"
#include "host.h"
#include "payloads.h"
#include "records.h"

using namespace weft;
using namespace weft::wasm;

namespace {
std::string g_err;  // the last failed call's error, as JSON
}  // namespace

namespace weft::wasm {

double g_status[abi::STATUS_SIZE];

Millis to_ms(double now) { return static_cast<Millis>(std::floor(now)); }

bool exact_int_id(double id) {
  return std::trunc(id) == id && std::fabs(id) <= 9007199254740991.0 && !(id == 0 && std::signbit(id));
}

// Holds again the request weft_request let go (RECEIVED_RELEASED), `rid`
// its id (NaN: none), so that it is answered as a held one (Peer::rehold).
// False when it could not be (a closed Peer, or another request's answer
// held): the caller then answers nothing, rather than the other request.
bool rehold(Host& x, double rid) {
  if (rid != rid) return true;  // NaN: the request was never let go
  return exact_int_id(rid) && x.peer->rehold(Id::integer(static_cast<std::int64_t>(rid)));
}

double note_deadline(Host* x) {
  const std::optional<Millis> d = x->peer->next_deadline();
  g_status[abi::STATUS_DEADLINE] = d ? static_cast<double>(*d) : -1;
  return g_status[abi::STATUS_DEADLINE];
}

// Milliseconds from JavaScript: a fraction rounds up (0.5 must not mean
// "already due"), a huge value stays a huge value.
Millis ms_of(double t) { return static_cast<Millis>(std::min(std::ceil(t), 9.0e15)); }

CallOptions call_options(double t) {
  CallOptions o;
  if (t == static_cast<double>(abi::TIMEOUT_NONE)) o.no_timeout = true;
  else if (t >= 0) o.timeout = ms_of(t);
  return o;
}

std::string in_string(double at, double n) {
  return std::string(input().data() + static_cast<std::size_t>(at), static_cast<std::size_t>(n));
}

// Call or notification params: OBJECT/ARRAY payload handles; a scalar kind
// is passed on as such so that the core refuses it (-32602).
std::optional<json> params_of(double kind, double a) {
  switch (static_cast<int>(kind)) {
    case abi::VALUE_ABSENT: return std::nullopt;
    case abi::VALUE_OBJECT: return object_marker(a);
    case abi::VALUE_ARRAY: return array_marker(a);
    case abi::VALUE_NUMBER: return json(a);
    case abi::VALUE_STRING: return json("");
    case abi::VALUE_FALSE: return json(false);
    case abi::VALUE_TRUE: return json(true);
    default: return json(nullptr);
  }
}

// A refused call: its params never reach the transport, so their handle goes
// back to JS the way every outbound handle does (js_discard).
void give_back(int h, std::optional<json>& params) {
  if (!params || marker_of(*params) < 0) return;
  Outgoing o;
  o.messages.emplace_back(Notification{std::string(), std::move(params)});
  js_discard_records(h, o);
}

// Error paths only: one copy, not one inlined into each caller.
[[gnu::noinline]] void set_error(const Error& e) {
  g_err = e.to_json().dump(-1, ' ', false, json::error_handler_t::replace);
  g_status[abi::STATUS_ERROR_LENGTH] = static_cast<double>(g_err.size());
}

}  // namespace weft::wasm

extern "C" {

// The input buffer, at least `n` bytes; valid until the next call asking for more.
EMSCRIPTEN_KEEPALIVE char* weft_in(std::size_t n) {
  auto& in = input();
  if (in.size() < n + 1) in.resize(n + 1 + n / 2);
  return in.data();
}
EMSCRIPTEN_KEEPALIVE double* weft_status() { return g_status; }
// Room for `n` doubles of descriptors; valid until the next call asking for more.
EMSCRIPTEN_KEEPALIVE double* weft_desc(std::size_t n) { return descriptors(n); }

// A new endpoint: role (abi ROLE_*), whether foreign values are ignored, the
// default timeout (< 0: none) and limits (0: the core's default; the rate
// limit's 0: none; max_stream_chunk < 0: the default, 0: none), the length of
// a handshake offer in the input buffer, and the first call's id (below 1,
// or not an integer JavaScript holds exactly: 1).
EMSCRIPTEN_KEEPALIVE int weft_create(int role, int ignore_foreign, double default_timeout,
                                     double max_in_flight, double max_pending, double max_batch,
                                     double rate_limit, double rate_window, double max_stream_chunk,
                                     std::size_t hlen, double first_id) {
  PeerOptions o;
  o.role = static_cast<Role>(role);
  const Role kept = o.role;
  o.ignore_foreign = ignore_foreign != 0;
  // Ids travel as JavaScript numbers: exact only up to 2^53.
  if (first_id >= 1 && first_id <= 9007199254740991.0 && first_id == std::floor(first_id))
    o.first_id = static_cast<std::int64_t>(first_id);
  if (default_timeout >= 0) o.default_timeout = ms_of(default_timeout);
  // size_t is 32 bits here: a count from JavaScript (Infinity, 2^32 and up
  // included) is clamped, never wrapped, and a fraction rounds up.
  auto count = [](double v) {
    return static_cast<std::size_t>(std::min(std::ceil(v), 4294967295.0));
  };
  if (max_in_flight > 0) o.limits.max_in_flight = count(max_in_flight);
  if (max_pending > 0) o.limits.max_pending = count(max_pending);
  if (max_batch > 0) o.limits.max_batch = count(max_batch);
  // An endless window never refills: no rate limit, as Infinity is for
  // every other limit.
  if (rate_limit > 0 && !std::isinf(rate_window)) o.limits.rate_limit = count(rate_limit);
  if (rate_window > 0 && !std::isinf(rate_window)) o.limits.rate_window = ms_of(rate_window);
  if (max_stream_chunk >= 0) o.limits.max_stream_chunk = count(max_stream_chunk);
  if (hlen > 0) {  // serve rpc.handshake: the offer as JSON in the input buffer
    json j = json::parse(input().data(), input().data() + hlen, nullptr, false);
    auto h = parse_handshake(j);
    if (!h) {
      set_error(h.error());
      return 0;
    }
    o.handshake = std::move(*h);
  }
  const int h = create_host(std::move(o));
  host(h)->role = kept;
  return h;
}

// Fails pending calls (kClosed, or `code` with the message in the input
// buffer), cancels requests being served; the host stays until destroy.
EMSCRIPTEN_KEEPALIVE void weft_close(int h, int code, std::size_t mlen) {
  Host* x = host(h);
  if (!x) return;
  std::optional<Error> why;
  if (code != 0) why = Error(code, std::string(input().data(), mlen));
  x->peer->close(why);
}

EMSCRIPTEN_KEEPALIVE void weft_destroy(int h) { destroy_host(h); }

// Registers JS function `fn` for the name in the input buffer [0, nlen); flags
// bit 0: a notification handler. A ParamSpec as JSON may follow (slen bytes).
EMSCRIPTEN_KEEPALIVE int weft_method(int h, std::size_t nlen, int fn, int flags, std::size_t slen) {
  Host* x = host(h);
  if (!x) return 0;
  auto& in = input();
  std::string name(in.data(), nlen);
  std::optional<ParamSpec> spec;
  if (slen) {
    json j = json::parse(in.data() + nlen, in.data() + nlen + slen, nullptr, false);
    Result<ParamSpec> r = j.is_discarded() ? Result<ParamSpec>(Error(code::kInvalidParams, "ParamSpec: not JSON"))
                                           : read_spec(j);
    if (!r.ok()) {
      // Registered anyway, refusing: a request is answered with what is
      // wrong rather than "Method not found" (JS throws when it can).
      const Error refused(code::kInternalError,
                          "Internal error: method \"" + name + "\" has an invalid " + r.error().message);
      if (!(flags & 1))
        x->peer->method(name, DeferrableHandler([refused](json&, Deferral&, const CallInfo&) {
          return std::optional<Result<json>>(std::in_place, refused);
        }));
      set_error(Error(r.error().code, "method \"" + name + "\": " + r.error().message));
      return 0;
    }
    spec = std::move(*r);
  }
  if (flags & 1) {
    x->peer->notification(
        std::move(name),
        [h, fn](const json& params) {
          Host* x = host(h);
          if (!x) return;
          const double slot = params.is_null() ? abi::kPAY_NONE : x->payload(params);
          if (!queue_dispatch(*x, fn, slot, nullptr)) js_dispatch_call(h, fn, abi::TOKEN_NOTIFICATION, slot, x->tmp);
        },
        std::move(spec));
    return 1;
  }
  // The handler runs once the export has returned (queued.cpp), a batch's
  // one member at a time. When it cannot (a message received inside
  // another's handler, say) it runs now, answered now when it returns a
  // value; its Reply is taken only when JS asks for the token
  // (weft_defer): a promise, a throw, the context's sink, progress or
  // state.
  x->peer->method(
      std::move(name),
      DeferrableHandler([h, fn](json& params, Deferral& later, const CallInfo&) -> std::optional<Result<json>> {
        Host* x = host(h);
        if (!x) return std::nullopt;
        const double slot = params.is_null() ? abi::kPAY_NONE : x->take_payload(params);
        if (queue_dispatch(*x, fn, slot, &later)) return std::nullopt;
        const std::size_t depth = x->later.size();
        x->later.emplace_back(&later, -1);
        // >= 0: answered now with that payload handle; LATER: by token; DONE.
        const double r = js_dispatch_call(h, fn, abi::TOKEN_LAZY - static_cast<int>(depth), slot, x->tmp);
        if (!(x = host(h))) return std::nullopt;
        const int token = depth < x->later.size() ? x->later[depth].second : -1;
        x->later.resize(std::min(depth, x->later.size()));
        if (!later.taken()) {
          if (r >= 0) return std::optional<Result<json>>(std::in_place, value_marker(r));
          return std::nullopt;
        }
        if (!x->has(token)) {
          std::optional<json> v;
          if (r >= 0) v = value_marker(r);
          give_back(h, v);
          return std::nullopt;
        }
        if (r >= 0) x->take(token).ok(value_marker(r));
        else if (r == static_cast<double>(abi::DISPATCH_LATER)) watch_cancel(h, token);
        return std::nullopt;
      }),
      std::move(spec));
  return 1;
}

// The token of the request whose answer the core holds for a queued
// handler (TOKEN_HELD), which answers later (a promise) or needs it (its
// context's sink, progress or state): taken from the core's hold
// (Peer::defer_held), a cancel then told to JS as for any request served
// later. -1 when none is held. `rid`: the id of the request weft_request
// let go (RECEIVED_RELEASED), held again first (Peer::rehold); NaN: none.
EMSCRIPTEN_KEEPALIVE int weft_defer_held(int h, double rid) {
  Host* x = host(h);
  if (!x || !rehold(*x, rid)) return -1;
  Reply r = x->peer->defer_held();
  if (r.done()) return -1;
  const int token = x->store(std::move(r));
  watch_cancel(h, token);
  return token;
}

// The token of the request whose handler runs at dispatch depth `depth`
// (js_dispatch gave it TOKEN_LAZY - depth): its Reply is taken the first
// time. -1 once that dispatch has returned.
EMSCRIPTEN_KEEPALIVE int weft_defer(int h, int depth) {
  Host* x = host(h);
  if (!x || depth < 0 || static_cast<std::size_t>(depth) >= x->later.size()) return -1;
  auto& [later, token] = x->later[static_cast<std::size_t>(depth)];
  if (token < 0 && !later->taken()) token = x->store(later->reply());
  return token;
}

EMSCRIPTEN_KEEPALIVE int weft_remove(int h, std::size_t nlen) {
  Host* x = host(h);
  return x && x->peer->remove(std::string(input().data(), nlen)) ? 1 : 0;
}

// Answers request `token` (TOKEN_HELD: the one whose answer the core holds
// for a queued handler, Peer::answer_held) with payload `handle`. 0 when
// the token is no longer answerable: the handle stays JS's.
EMSCRIPTEN_KEEPALIVE int weft_reply(int h, int token, double handle) {
  Host* x = host(h);
  if (!x) return 0;
  if (token == abi::TOKEN_HELD) {
    Result<json> answer(value_marker(handle));
    if (x->peer->answer_held(std::move(answer))) return 1;
    std::optional<json> v(std::move(answer.value()));
    give_back(h, v);
    return 0;
  }
  if (!x->has(token)) {
    std::optional<json> v = value_marker(handle);
    give_back(h, v);
    return 0;
  }
  x->take(token).ok(value_marker(handle));
  return 1;
}

// Answers request `token` with an error: `code` as JS had it (error_code_from
// decides), the message in the input buffer [0, mlen), data the payload
// `handle` (PAY_NONE: none). 0 as weft_reply. `rid` as weft_defer_held's,
// for TOKEN_HELD.
EMSCRIPTEN_KEEPALIVE int weft_reply_error(int h, int token, double code, std::size_t mlen, double handle, double rid) {
  Host* x = host(h);
  if (!x) return 0;
  const bool held = token == abi::TOKEN_HELD;
  if ((held && !rehold(*x, rid)) || (!held && !x->has(token))) {
    if (handle >= 0) {
      std::optional<json> v = value_marker(handle);
      give_back(h, v);
    }
    return 0;
  }
  std::string message(input().data(), mlen);
  const std::optional<int> c = error_code_from(code);
  Error e(c.value_or(code::kInternalError), c || !message.empty() ? std::move(message) : "Internal error");
  if (handle >= 0) e.data = value_marker(handle);
  if (held) {
    Result<json> answer(std::move(e));
    if (x->peer->answer_held(std::move(answer))) return 1;
    std::optional<json> d = answer.error().data;  // not sent: its handle goes back
    give_back(h, d);
    return 0;
  }
  x->take(token).error(std::move(e));
  return 1;
}

// A request whose id is a number and method a string, as a tuple [0n, id,
// method, params?] (docs/protocol.md, "Tuples") or an object {"jsonrpc":
// "2.0", "method", "params"?, "id"} (js/short.js): the method in the input
// buffer [0, mlen), params of kind `pkind` (ABSENT, OBJECT or ARRAY) with
// inbound handle `pa`. judge() finds every such message a Request (a
// version, a string method, a number id, structured or absent params;
// result and error are not read), so it is received as that Request without
// a descriptor. 1 when received; 0 when the id is not a safe integer, or is
// -0 (an id read by its lexeme, which wire.js describes): nothing done, JS
// describes the message to weft_receive, as any. RECEIVED_RELEASED: received,
// and the queued handler's request let go (end_receive): JS sends its result.
EMSCRIPTEN_KEEPALIVE int weft_request(int h, double id, std::size_t mlen, double pkind, double pa) {
  Host* x = host(h);
  if (!x || !exact_int_id(id)) return 0;
  x->undecodable_run = 0;
  const bool queues = begin_receive(*x);
  x->peer->receive(Item(std::in_place_type<Request>,
                        Request{Id::integer(static_cast<std::int64_t>(id)), std::string(input().data(), mlen),
                                params_of(pkind, pa)}));
  return end_receive(h, queues, true) ? abi::RECEIVED_RELEASED : abi::RECEIVED;
}

// A notification whose method is a string, as a tuple [1n, method, params?]
// (docs/protocol.md, "Tuples") or an object {"jsonrpc": "2.0", "method",
// "params"?} without an id (js/short.js): the method in the input buffer
// [0, mlen), params as weft_request takes them. judge() finds every such
// message a Notification (result and error are not read), so it is
// received as that Notification without a descriptor. Always 1: received.
EMSCRIPTEN_KEEPALIVE int weft_notification(int h, std::size_t mlen, double pkind, double pa) {
  Host* x = host(h);
  if (!x) return 0;
  x->undecodable_run = 0;
  const bool queues = begin_receive(*x);
  x->peer->receive(Item(std::in_place_type<Notification>,
                        Notification{std::string(input().data(), mlen), params_of(pkind, pa)}));
  end_receive(h, queues);
  return 1;
}

// `count` incoming messages described in the descriptor array (a batch when
// `batch`, §6). Returns the next deadline (-1: none).
EMSCRIPTEN_KEEPALIVE double weft_receive(int h, int count, int batch) {
  Host* x = host(h);
  g_status[abi::STATUS_QUEUED_FN] = -1;
  g_status[abi::STATUS_PAUSED] = 0;
  if (!x) return -1;
  x->undecodable_run = 0;
  if (count == 1 && !batch) {  // one message: no vector of items at all
    const bool queues = begin_receive(*x);
    x->peer->receive(read_descriptor(descriptors(abi::D_SIZE), input().data()));
    end_receive(h, queues);
    if (!(x = host(h))) return -1;
    return note_deadline(x);
  }
  // A batch's items go in a vector made once (an allocation less per
  // message, and a constant heap); a batch larger than it, or a receive
  // nested in a handler's, gets its own.
  static Incoming kept = [] {
    Incoming i;
    i.items.reserve(4);
    return i;
  }();
  static bool busy = false;
  Incoming fresh;
  const bool reuse = !busy && static_cast<std::size_t>(count) <= kept.items.capacity();
  Incoming& in = reuse ? kept : fresh;
  busy = busy || reuse;
  in.batch = batch != 0;
  in.checked.reset();
  in.items.reserve(static_cast<std::size_t>(count));
  const double* d = descriptors(static_cast<std::size_t>(count) * abi::D_SIZE);
  for (int i = 0; i < count; ++i) append_described(in.items, d + i * abi::D_SIZE, input().data());
  // Paused by this receive, not before it (a receive nested in the handler
  // of a paused batch's member): JS resumes the batch it paused.
  const bool was_paused = x->peer->paused();
  const bool queues = begin_receive(*x);
  x->peer->receive(std::move(in));
  if (reuse) {
    // A pause trades vectors with the core's (Peer::resume keeps that one's
    // capacity): from the second pause on, kept gets back one with room.
    kept.items.clear();
    if (kept.items.capacity() < 4) kept.items.reserve(4);
    busy = false;
  }
  end_receive(h, queues);
  if (!(x = host(h))) return -1;
  g_status[abi::STATUS_PAUSED] = !was_paused && x->peer->paused() ? 1 : 0;
  return note_deadline(x);
}

// Reads on in the batch whose reading paused (STATUS_PAUSED) once JS has
// run the handler queued for it: Peer::resume. The next member's handler is
// queued as weft_receive queues it (STATUS_QUEUED_*). Returns 1 when the
// batch paused again, after that member. No deadline is reported: reading
// moves them only later (a call settled, a timeout restarted by a
// $/progress), which the timer finds when it fires (weft_advance), and a
// call a handler makes reports its own (weft_call).
EMSCRIPTEN_KEEPALIVE int weft_resume(int h) {
  Host* x = host(h);
  g_status[abi::STATUS_QUEUED_FN] = -1;
  if (!x) return 0;
  const bool queues = begin_receive(*x);
  const bool paused = x->peer->resume();
  end_receive(h, queues);
  return paused && host(h) ? 1 : 0;
}

EMSCRIPTEN_KEEPALIVE const char* weft_error() { return g_err.c_str(); }

// What the transport could not send (js/outgoing.js), for the core to
// decide what follows (Peer::undelivered): `count` messages, a batch if
// `batch`, described in the descriptor array as incoming ones are, then
// `count` doubles, 1 for each message that could not be encoded on its own;
// the transport's message in the input buffer [0, mlen). The payload handles
// are inbound: what goes again is sent within this call.
EMSCRIPTEN_KEEPALIVE void weft_undelivered(int h, int count, int batch, std::size_t mlen) {
  Host* x = host(h);
  if (!x || count <= 0) return;
  const std::string why(input().data(), mlen);
  const std::size_t n = static_cast<std::size_t>(count);
  const double* d = descriptors(n * abi::D_SIZE + n);
  Outgoing o;
  o.batch = batch != 0;
  std::vector<bool> failed;
  for (std::size_t i = 0; i < n; ++i) {
    Item item = read_descriptor(d + i * abi::D_SIZE, input().data());
    // JS describes what it built from the core's records: never Invalid.
    if (std::holds_alternative<Invalid>(item)) continue;
    std::visit([&o](auto&& m) {
      if constexpr (!std::is_same_v<std::decay_t<decltype(m)>, Invalid>) o.messages.emplace_back(std::move(m));
    }, std::move(item));
    failed.push_back(d[n * abi::D_SIZE + i] != 0);
  }
  x->peer->undelivered(o, Error(code::kClosed, why), failed);
}

// A frame the transport could not read as a message (a WebSocket text frame
// that is not JSON, a binary one), the reason in the input buffer [0, mlen).
// A Client cannot tell which call the server failed to answer: as the native
// client does, its connection ends. Returns 1 with the error at weft_error()
// (-32700, "undecodable data from the server"): JS closes the endpoint with
// it (weft_close fails every pending call) and its transport. Otherwise §5
// answers it -32700 with id null; as a native Connection does, only the
// first 16 in a row are answered (then one diagnostic): two endpoints that
// cannot read each other would otherwise answer each other for ever.
EMSCRIPTEN_KEEPALIVE int weft_undecodable(int h, std::size_t mlen) {
  Host* x = host(h);
  if (!x) return 0;
  constexpr int kMaxErrorReplies = 16;
  const bool client = x->role == Role::Client;
  std::string why(input().data(), mlen);
  if (client) why.insert(0, "undecodable data from the server: ");
  const Error e(code::kParseError, "Parse error: " + why);
  js_report(h, Diagnostic::Kind::BadFrame, e.message);
  if (client) {
    set_error(e);
    return 1;
  }
  const int run = ++x->undecodable_run;
  if (run <= kMaxErrorReplies) x->peer->receive_error(e);
  else if (run == kMaxErrorReplies + 1)
    js_report(h, Diagnostic::Kind::BadFrame, "too many undecodable frames in a row; no longer answering them");
  return 0;
}

// Fails calls whose deadline has passed; returns the next deadline (-1: none).
EMSCRIPTEN_KEEPALIVE double weft_advance(int h, double now) {
  Host* x = host(h);
  if (!x) return -1;
  x->peer->advance(to_ms(now));
  if (!(x = host(h))) return -1;
  return note_deadline(x);
}

EMSCRIPTEN_KEEPALIVE double weft_pending(int h) {
  Host* x = host(h);
  return x ? static_cast<double>(x->peer->pending()) : 0;
}
EMSCRIPTEN_KEEPALIVE double weft_in_flight(int h) {
  Host* x = host(h);
  return x ? static_cast<double>(x->peer->in_flight()) : 0;
}
// Bytes malloc has handed out and not taken back: the leak check's measure.
EMSCRIPTEN_KEEPALIVE double weft_heap_used() { return static_cast<double>(mallinfo().uordblks); }

}  // extern "C"
