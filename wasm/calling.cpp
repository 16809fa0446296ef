// The exports of the calling side: what js/ calls to make calls, batches
// and notifications, to cancel a call, and to hand over the answer that
// settles one (weft_result, weft_failure). As in exports.cpp, each reads
// its arguments (abi.h), calls the core and leaves results in the status
// array; nothing here decides protocol questions.
#include <emscripten.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "abi.h"
#include "calls.h"
#include "host.h"
#include "payloads.h"

using namespace weft;
using namespace weft::wasm;

namespace {
std::vector<double> g_ids;  // ids of the last batch
}  // namespace

extern "C" {

// An outgoing request: method = input buffer [0, mlen), params (kind, a) per
// params_of; progress: PROGRESS_* (docs/streams.md); credit >= 0: a streamed
// call with that initial credit (chunks to js_chunk); metrics: METRICS_ASK
// or METRICS_SKIP (js_metrics, see wants_metrics). Returns the id (> 0), or
// 0 with the error at weft_error(). The core does not send the request
// itself: STATUS_POST_REQUEST says whether the caller posts it now, with
// that id and the method and params it gave (PeerOptions::send_request in
// host.cpp); a stream's $/weft/open, if any, has gone out before it. So
// params of kind OBJECT or ARRAY come as PAY_CALLER, not as a handle: the
// core reads only their kind.
EMSCRIPTEN_KEEPALIVE double weft_call(int h, int token, std::size_t mlen, double pkind, double pa,
                                      double timeout, double now, int progress, double credit,
                                      int metrics) {
  Host* x = host(h);
  if (!x) return 0;
  std::optional<json> params = params_of(pkind, pa);
  std::string method(input().data(), mlen);
  CallOptions opts = call_options(timeout);
  opts.tag = token;  // weft_result names the call by it
  if (progress != abi::PROGRESS_NONE) {
    opts.on_progress = progress_to(h, token);
    opts.progress_resets_timeout = progress == abi::PROGRESS_RESETS;
  }
  if (wants_metrics(*x, metrics)) opts.on_metrics = metrics_to(h, token);
  Result<Id> r = Error();
  const bool outer = x->calling;  // a call made inside another's (host.cpp)
  x->calling = true;
  x->post_request = false;
  if (credit >= 0) {
    StreamOptions so;
    so.credit = static_cast<std::uint32_t>(std::min(credit, 4294967295.0));
    so.on_chunk = chunks_to(h, token);
    r = x->peer->stream(std::move(method), std::move(params), std::move(so), settle_to(h, token),
                        std::move(opts), to_ms(now));
  } else {
    r = x->peer->call(std::move(method), std::move(params), settle_to(h, token), std::move(opts),
                      to_ms(now));
  }
  if (!r.ok()) {  // no handle to give back: PAY_CALLER
    if ((x = host(h))) x->calling = outer;
    set_error(r.error());
    return 0;
  }
  // Not set when the call settled before its request went (closed while
  // its stream's $/weft/open was sent): nothing to post then.
  x = host(h);
  g_status[abi::STATUS_POST_REQUEST] = x && x->post_request ? 1 : 0;
  if (x) {
    x->calling = outer;
    x->post_request = false;
    note_deadline(x);
  }
  return r->kind() == Id::Kind::Int ? static_cast<double>(r->as_int()) : 0;
}

// A notification; 1 on success, else 0 with the error at weft_error().
EMSCRIPTEN_KEEPALIVE int weft_notify(int h, std::size_t mlen, double pkind, double pa) {
  Host* x = host(h);
  if (!x) return 0;
  Result<void> r = x->peer->notify(std::string(input().data(), mlen), params_of(pkind, pa));
  if (r.ok()) return 1;
  std::optional<json> params = params_of(pkind, pa);
  give_back(h, params);
  set_error(r.error());
  return 0;
}

// A batch of `count` entries in the descriptor array (abi B_* layout);
// metrics as weft_call's, for every call of the batch. Returns the number
// of ids written at weft_ids(), or -1 with the error at weft_error().
EMSCRIPTEN_KEEPALIVE int weft_batch(int h, int count, double timeout, double now, int metrics) {
  Host* x = host(h);
  if (!x) return -1;
  const bool measured = wants_metrics(*x, metrics);
  const double* d = descriptors(static_cast<std::size_t>(count) * abi::B_SIZE);
  std::vector<BatchEntry> entries;
  entries.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i, d += abi::B_SIZE) {
    BatchEntry b;
    b.method = in_string(d[abi::B_METHOD_AT], d[abi::B_METHOD_LEN]);
    b.params = params_of(d[abi::B_PARAMS_KIND], d[abi::B_PARAMS_A]);
    if (d[abi::B_TOKEN] >= 0) {
      b.done = settle_to(h, static_cast<int>(d[abi::B_TOKEN]));
      if (measured) b.on_metrics = metrics_to(h, static_cast<int>(d[abi::B_TOKEN]));
    }
    entries.push_back(std::move(b));
  }
  auto r = x->peer->batch(std::move(entries), call_options(timeout), to_ms(now));
  if (!r.ok()) {
    d = descriptors(0);
    for (int i = 0; i < count; ++i, d += abi::B_SIZE) {
      std::optional<json> p = params_of(d[abi::B_PARAMS_KIND], d[abi::B_PARAMS_A]);
      give_back(h, p);
    }
    set_error(r.error());
    return -1;
  }
  if ((x = host(h))) note_deadline(x);
  g_ids.clear();
  for (const Id& id : *r) g_ids.push_back(id.kind() == Id::Kind::Int ? static_cast<double>(id.as_int()) : 0);
  return static_cast<int>(g_ids.size());
}
EMSCRIPTEN_KEEPALIVE const double* weft_ids() { return g_ids.data(); }

// A result, as a tuple [2n, id, value] (docs/protocol.md, "Tuples") or an
// object {"jsonrpc": "2.0", "result", "id"} without method, error or
// metrics (js/short.js), its value kept by JS: the token of the call it
// settled (Peer::take_result), which JS resolves with the value; or -1,
// nothing done: JS then describes the message to weft_receive, as any. An id that is not a safe integer, or is
// -0, is not an integer id as JSON would give it (wire.js describes it by its
// lexeme), so it is never one of this side's calls: weft_receive judges it.
EMSCRIPTEN_KEEPALIVE int weft_result(int h, double id) {
  Host* x = host(h);
  if (!x || !exact_int_id(id)) return -1;
  const int token = x->peer->take_result(static_cast<std::int64_t>(id));
  if (token >= 0) x->undecodable_run = 0;  // a message read, as weft_receive counts
  return token;
}

// An error answer, as a tuple [3n, id, code, message, data?] (docs/
// protocol.md, "Tuples") or an object {"jsonrpc": "2.0", "error": {"code",
// "message", "data"?}, "id"} without method, result or metrics (js/
// short.js): `code` any JS number, the message in the input buffer [0,
// mlen), data the inbound handle `pa` (PAY_NONE: none). judge() finds such
// a message a Failure when its code is a 32-bit integer (error_code_from,
// weft/error.h), so it is received as that Response: the core settles the
// call, or reports an answer to none. 1 when received; 0, nothing done, for
// an id that is not a safe integer or is -0 (wire.js describes it by its
// lexeme) or a code the rule refuses: JS describes the message, as any.
EMSCRIPTEN_KEEPALIVE int weft_failure(int h, double id, double code, std::size_t mlen, double pa) {
  Host* x = host(h);
  const std::optional<int> c = error_code_from(code);
  if (!x || !exact_int_id(id) || !c) return 0;
  x->undecodable_run = 0;
  Error e(*c, std::string(input().data(), mlen));
  if (pa >= 0) e.data = value_marker(pa);
  x->peer->receive(Item(Response{Id::integer(static_cast<std::int64_t>(id)), std::move(e)}));
  return 1;
}

// Gives up on outgoing call `id`: it settles now with -32800 and the other
// side is sent $/cancelRequest. 1 if the call was pending.
EMSCRIPTEN_KEEPALIVE int weft_cancel(int h, double id) {
  Host* x = host(h);
  return x && x->peer->cancel(Id::integer(static_cast<std::int64_t>(id))) ? 1 : 0;
}

}  // extern "C"
