// Handlers run off the module's stack. When an export receives a message
// (weft_request, weft_notification, weft_receive), the handler the core
// dispatches for it is not called from inside the core: a request's answer
// is held (Deferral::hold), the handler is left in Host::queued, and JS runs
// it once the export has returned (STATUS_QUEUED_*, js/serving.js
// runQueued), answering through weft_reply* with TOKEN_HELD
// (Peer::answer_held), or taking a token for later (weft_defer_held). A
// handler thus runs with none of the module's frames under it: V8 captures
// an Error made there (an RPCError thrown, most often) without walking them
// (bench/README.md, "Handlers off the module's stack"). A request that
// weft_request received has its answer let go instead when the core would
// give a result to send_result as it is (Peer::release_held): JS then sends
// a value the handler returns itself, and the request costs one call of
// the module (RECEIVED_RELEASED; "One call of the module per request").
//
// A batch is read one handler at a time: the core pauses its reading after
// the member whose handler is queued (Peer::pause, STATUS_PAUSED), and JS
// runs the handler, then calls weft_resume, which reads on to the next. So
// each handler still runs before the next member is read (§6), and a cancel
// later in the batch finds the earlier requests answered, as it does
// natively; the batch's answers leave on the last weft_resume, after its
// last handler. One handler is queued per Host at a time: a message
// received while another's answer is held or its handler not yet published
// (a receive nested in a hook, or in a handler the core runs), or a batch
// read inside a handler the core runs, has its handlers run inside the
// core, as natively.
#include <cstdint>
#include <utility>

#include "abi.h"
#include "calls.h"
#include "host.h"

namespace weft::wasm {

bool begin_receive(Host& x) {
  x.off_stack = x.queued.fn < 0;
  return x.off_stack;
}

bool end_receive(int h, bool mine, bool release) {
  Host* x = host(h);
  if (!x || !mine || x->queued.fn < 0) {
    g_status[abi::STATUS_QUEUED_FN] = -1;
    if (x && mine) x->off_stack = false;
    return false;
  }
  Host::Queued& q = x->queued;
  x->off_stack = false;
  g_status[abi::STATUS_QUEUED_FN] = q.fn;
  g_status[abi::STATUS_QUEUED_TOKEN] = q.token;
  g_status[abi::STATUS_QUEUED_SLOT] = q.slot;
  g_status[abi::STATUS_QUEUED_TEXT_P] = static_cast<double>(reinterpret_cast<std::uintptr_t>(q.text.data()));
  g_status[abi::STATUS_QUEUED_TEXT_N] = q.slot == abi::kPAY_TEXT ? static_cast<double>(q.text.size()) : 0;
  q.fn = -1;
  return release && q.token == abi::TOKEN_HELD && x->peer->release_held();
}

bool queue_dispatch(Host& x, int fn, double slot, Deferral* later) {
  // hold() pauses a batch's reading as pause() does (weft/peer.h).
  if (!x.off_stack || !(later ? later->hold() : x.peer->pause())) return false;
  x.off_stack = false;  // one per export: the message's own dispatch
  Host::Queued& q = x.queued;
  q.fn = fn;
  q.token = later ? abi::TOKEN_HELD : abi::TOKEN_NOTIFICATION;
  q.slot = slot;
  if (slot == abi::kPAY_TEXT) std::swap(q.text, x.tmp);
  return true;
}

void watch_cancel(int h, int token) {
  Host* x = host(h);
  if (!x || !x->has(token)) return;
  x->replies[static_cast<std::size_t>(token)].on_cancel([h, token] {
    js_cancelled_call(h, token);
    // The core answers the request (-32800) and keeps nothing of it: its
    // token is freed for the next request now, not when (if ever) the
    // handler settles; JS has let go of it (serving.js requestCancelled),
    // and the Reply goes quietly (Reply::release).
    if (Host* x = host(h); x && x->has(token)) x->take(token);
  });
}

}  // namespace weft::wasm
