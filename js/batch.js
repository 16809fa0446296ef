// Outgoing batches (§6): one array on the wire, one promise per call.
import * as A from '../dist/weft_abi.js';
import { ErrorCode, RPCError } from './errors.js';
import { M, X, desc, lastError, put, status } from './heap.js';
import { snapshot } from './pack.js';
import { params } from './wire.js';

const cancelled = () => new RPCError(ErrorCode.RequestCancelled, 'Request cancelled');

/** -32800, its cause the signal's reason (index.d.ts RPCError.cause). */
export function abortError(signal) {
  const e = cancelled();
  e.cause = signal.reason;
  return e;
}

/** Method name `m` as a string; a TypeError, before anything is held or sent, if none or String() throws. */
export function methodName(m) {
  if (typeof m === 'string') return m;
  if (m == null) throw new TypeError(`method name: expected a string, got ${m}`);
  try { return String(m); } catch (e) { throw new TypeError(`method name: String() threw: ${e?.message ?? e}`, { cause: e }); }
}

// Params of a call made before the core loaded, as they are now: the core
// reads them once loaded. Arrays and plain objects are copied (pack.js
// snapshot()); any other value is kept, for the transport to send as it
// sends any (JSON text, structured clone, the object itself).
export const queuedParams = (p) => snapshot(p, (v) => v);

/**
 * ep.batch(entries, {timeout, signal, onMetrics}): entries are {method,
 * params, notification?, onMetrics?}. Returns one promise per entry (a
 * notification's resolves to undefined once handed to the transport). Each
 * call's metrics go to its own onMetrics, else to the batch's (Peer::batch,
 * BatchEntry::on_metrics). Bad entries or options throw, sending nothing.
 */
export function batch(ep, entries, options) {
  if (!Array.isArray(entries)) throw new TypeError('batch(): expected an array of entries');
  const opts = options ?? {};
  const signal = ep._signal(opts.signal);
  const t = ep._timeoutArg(opts.timeout);
  const items = entries.map((e, i) => {
    if (Object(e) !== e) throw new TypeError(`batch(): entry ${i} is not an object`);
    // A notification's rec only settles its promise.
    const item = { method: methodName(e.method), params: e.params, rec: null, p: null, call: !e.notification };
    item.p = new Promise((resolve, reject) => {
      const own = typeof e.onMetrics === 'function' ? e.onMetrics : null;
      item.rec = { resolve, reject, id: 0, done: false, signal, onAbort: null, group: null, sendError: null,
        onMetrics: own ?? (typeof opts.onMetrics === 'function' ? opts.onMetrics : null), metrics: null };
    });
    return item;
  });
  // As request(): an aborted signal sends nothing and rejects every call.
  if (signal?.aborted) for (const it of items) it.rec.reject(abortError(signal));
  else if (ep.closedError && (ep.queue || !ep.h)) for (const it of items) it.rec.reject(ep.closedError);
  else if (ep.queue) {
    for (const it of items) it.params = queuedParams(it.params);
    ep.queue.push(['b', items, t, ep.callNow()]);
    // Aborted before the load: rejected at once, as request(); sendBatch() sends nothing.
    if (signal) {
      items.onAbort = () => { for (const it of items) it.rec.reject(abortError(signal)); };
      signal.addEventListener('abort', items.onAbort, { once: true });
    }
  } else sendBatch(ep, items, t, ep.callNow());
  return items.map((it) => it.p);
}

/** Hands a batch to the core (also for one queued before the core loaded). */
export function sendBatch(ep, items, timeout, t) {
  const calls = items.filter((it) => it.call);
  if (!ep.h) {
    for (const it of items) it.rec.reject(ep.closedError ?? new RPCError(ErrorCode.Closed, 'Endpoint destroyed'));
    return;
  }
  const signal = items[0]?.rec.signal;
  if (items.onAbort) signal.removeEventListener('abort', items.onAbort);
  if (signal?.aborted) { for (const it of items) it.rec.reject(abortError(signal)); return; }
  const base = desc(items.length * A.B_SIZE);
  let at = 0;
  items.forEach((it, i) => {
    const p = it.params;
    const [kind, arg] = p === undefined ? [A.VALUE_ABSENT, 0] : params(ep.out, p);
    const n = put(it.method, at);
    it.token = it.call ? ep._token(it.rec) : -1;
    const F = M.HEAPF64;
    const d = base + i * A.B_SIZE;
    F[d + A.B_METHOD_AT] = at; F[d + A.B_METHOD_LEN] = n;
    F[d + A.B_PARAMS_KIND] = kind; F[d + A.B_PARAMS_A] = arg; F[d + A.B_TOKEN] = it.token;
    at += n;
  });
  const metrics = calls.some((it) => it.rec.onMetrics) ? A.METRICS_ASK : A.METRICS_SKIP;
  if (X._weft_batch(ep.h, items.length, timeout, t, metrics) < 0) {
    const err = lastError();
    for (const it of items) {
      if (it.call) ep._untoken(it.token);
      it.rec.reject(err);
    }
    return;
  }
  for (const it of items) if (!it.call) it.rec.resolve();
  ep._arm(status(A.STATUS_DEADLINE), t);
  const ids = X._weft_ids() >> 3;
  calls.forEach((it, k) => { it.rec.id = M.HEAPF64[ids + k]; });
  const open = calls.filter((it) => !it.rec.done);
  if (signal && open.length) {
    // One listener for the batch, removed when its last call settles.
    const group = { signal, left: open.length, onAbort: null };
    group.onAbort = () => { for (const it of open) if (!it.rec.done && ep.h) X._weft_cancel(ep.h, it.rec.id); };
    for (const it of open) it.rec.group = group;
    signal.addEventListener('abort', group.onAbort, { once: true });
  }
}
