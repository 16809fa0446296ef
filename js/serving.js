// The serving side of an endpoint: its handlers, and the answers they give
// now, later (a promise) or never (a notification). The core decides what is
// answered and how (PeerOptions, weft/peer.h); this runs the handler and
// hands the answer back. State lives on the endpoint: ep.handlers (fn →
// entry), ep.serving (reply token → ServeContext of an async handler) and
// ep.writers (reply token → ServeContext waiting for stream credit).
import * as A from '../dist/weft_abi.js';
import { ServeContext } from './context.js';
import { RPCError } from './errors.js';
import { X, lastError, put, status } from './heap.js';
import { sendReleased } from './outgoing.js';
import { value } from './wire.js';

/**
 * Declares handler `name` to the core (flags 1: a notification sink).
 * Throws a TypeError for a ParamSpec the core cannot read (the method then
 * answers every request with what is wrong).
 */
export function register(ep, name, handler, flags, spec) {
  const fn = ep.handlers.push({ handler, flags, name }) - 1;
  const nlen = put(String(name));
  let text;
  if (spec != null) {
    try { text = JSON.stringify(spec); } catch { /* a cycle, a BigInt */ }
    text ??= '!';  // not JSON (a function as well): the core says so
  }
  const slen = text === undefined ? 0 : put(text, nlen);
  if (!X._weft_method(ep.h, nlen, fn, flags, slen)) throw new TypeError(lastError().message);
}

// Runs handler `fn`; returns the answer's payload handle, DISPATCH_LATER
// (a promise: answered through reply) or DISPATCH_DONE. `token` is
// TOKEN_NOTIFICATION; TOKEN_HELD (runQueued), answered here through
// weft_reply* (DISPATCH_DONE) unless the answer comes later; or a lazy
// token (TOKEN_LAZY - depth, a handler the core runs inside it). The
// request's token is only taken (ctx.token: weft_defer, weft_defer_held)
// when the answer cannot be given now — a promise, or the context's sink,
// progress or state used — so a handler that returns a value costs the core
// no serving slot. `rid`: the id of a request the core let go
// (RECEIVED_RELEASED): a value goes out from here, any other answer is
// given with `rid`, held again (Peer::rehold); else NaN.
export function dispatch(ep, fn, token, params, rid = NaN) {
  const entry = ep.handlers[fn];
  if (token === A.TOKEN_NOTIFICATION) {  // a notification: never answered (§4.1)
    try {
      const r = entry.handler(params);
      if (r && typeof r.then === 'function') r.then(undefined, (e) => ep._diag('NotificationFailed', String(e?.message ?? e)));
    } catch (e) {
      ep._diag('NotificationFailed', String(e?.message ?? e));
    }
    return A.DISPATCH_DONE;
  }
  const ctx = new ServeContext(ep, entry.name, token, rid);
  let r, then;
  try {
    r = entry.handler(params, ctx);
    // A thenable as `await` takes it: `then` read once; a throw is the handler's.
    if (r !== null && typeof r === 'object') then = r.then;
  } catch (e) {
    const t = token === A.TOKEN_HELD ? ctx._token : ctx.token;
    ctx._done();
    replyError(ep, t, e, rid);
    return A.DISPATCH_DONE;
  }
  if (typeof then === 'function') {
    const t = ctx.token;  // -1 on a closed endpoint: the answer is dropped (mine())
    if (t >= 0) ep.serving[t] = ctx;
    // Cancelled, the token is no longer this request's (requestCancelled): a
    // late answer is dropped, as the core drops one (docs/protocol.md).
    const mine = () => {
      if (ep.serving[t] === ctx) { ctx._done(); return true; }
      if (ep.h) ep._diag('LateReply', 'reply after the request was cancelled or closed; dropped');
    };
    const ok = (v) => { if (mine()) reply(ep, t, v); };
    const fail = (e) => { if (mine()) replyError(ep, t, e); };
    // Any then() but a promise's runs in a promise's executor: a throw
    // rejects (unless it resolved first), and the answer comes later, never
    // under this dispatch.
    if (then !== promiseThen) new Promise((resolve, reject) => then.call(r, resolve, reject)).then(ok, fail);
    else try { then.call(r, ok, fail); } catch (e) { Promise.reject(e).catch(fail); }  // not a promise after all
    return A.DISPATCH_LATER;
  }
  const t = ctx._token;  // TOKEN_HELD still, unless the context took the token
  ctx._done();
  if (token !== A.TOKEN_HELD) return ep.out.hold(r === undefined ? null : r);
  // Nothing goes out after close, as the core would send nothing.
  if (t === A.TOKEN_HELD && rid === rid) { if (ep.h && !ep.closedError) sendReleased(ep, rid, r); }
  else if (ep.h) X._weft_reply(ep.h, t, ep.out.hold(r === undefined ? null : r));
  return A.DISPATCH_DONE;
}

const promiseThen = Promise.prototype.then;

/**
 * Runs the handler the core left for endpoint `ep` when the export that
 * received a message (or read a batch's member) returned (STATUS_QUEUED_*, wasm/queued.cpp), if
 * it left one: here no frame of the module is under the handler. A
 * method's answer is the one the core holds (TOKEN_HELD), given through
 * weft_reply*; `rid` as dispatch() takes it.
 */
export function runQueued(ep, rid = NaN) {
  const fn = status(A.STATUS_QUEUED_FN);
  if (fn < 0) return;
  const slot = status(A.STATUS_QUEUED_SLOT);
  const params = slot === A.PAY_TEXT ? value(ep.out, slot, status(A.STATUS_QUEUED_TEXT_P), status(A.STATUS_QUEUED_TEXT_N)) : value(ep.out, slot);
  dispatch(ep, fn, status(A.STATUS_QUEUED_TOKEN), params, rid);
}

// A batch's handlers, one per member as the core reads them (queued.cpp):
// while the core pauses after a member (`paused`: STATUS_PAUSED, read before
// the handler runs, as its own receives rewrite it), weft_resume reads the
// next. Whatever runQueued does, the batch is not left paused.
export function runBatch(ep, paused) {
  let failed;
  for (;;) {
    try {
      runQueued(ep);
    } catch (e) {
      failed ??= [e];  // weft_resume answers a held request left unanswered (Peer::resume)
    }
    if (!paused || !ep.h) break;
    paused = X._weft_resume(ep.h);
  }
  if (failed) throw failed[0];
}

// The answer's payload handle goes to the core, which sends or discards it.
function reply(ep, token, v) {
  ep.serving[token] = undefined;  // a token >= 0: a promise's answer
  if (ep.h) X._weft_reply(ep.h, token, ep.out.hold(v === undefined ? null : v));
}

// An RPCError's code, message and data; for anything else the core
// answers -32603 with the error's message (error_code_from, weft/error.h).
// `rid` as dispatch() takes it, for TOKEN_HELD.
function replyError(ep, token, e, rid = NaN) {
  if (token >= 0) ep.serving[token] = undefined;
  if (!ep.h) return;
  const rpc = e instanceof RPCError;
  const code = rpc && typeof e.code === 'number' ? e.code : NaN;
  const message = rpc ? String(e.message) : typeof e?.message === 'string' ? e.message : '';
  const handle = rpc && e.data !== undefined ? ep.out.hold(e.data) : A.PAY_NONE;
  X._weft_reply_error(ep.h, token, code, put(message), handle, rid);
}

// The request was cancelled ($/cancelRequest, or close): the core answers it
// and frees its token, settled handler or not (docs/protocol.md). The signal
// aborts; the context is done: its sink and progress go nowhere.
export function requestCancelled(ep, token) {
  const ctx = ep.serving[token];
  ep.serving[token] = ep.writers[token] = undefined;
  if (ctx) {
    ctx.done = true;
    ctx._cancel();
  }
}

// The caller of request `token` has room for more chunks again.
export function writable(ep, token) {
  const ctx = ep.writers[token];
  ep.writers[token] = undefined;
  ctx?._writable();
}
