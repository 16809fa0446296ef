// What the core sends, handed to the transport: the records of wasm/records.h
// turned into wire values (wire.js), for the EM_JS hooks js_send and
// js_result of wasm/host.cpp, and a single call's request, which its caller
// posts (weft_call). What a transport cannot send goes back to
// the core from a microtask, never under the core's own call (undelivered()).
import * as A from '../dist/weft_abi.js';
import { M, X, desc, put } from './heap.js';
import { snapshot } from './pack.js';
import { inboundMark, unwindInbound } from './payloads.js';
import { isTuple, plainOf } from './tuples.js';
import { describe, describeTuple, message, requestMessage, result, resultMessage } from './wire.js';

/**
 * `count` records at `recs`: every message but a single call's request and
 * a plain result (sendRequest, sendResult).
 */
export function send(ep, recs, count, batch, text) {
  const r = recs >> 3;
  const tuples = ep.transport.tuples === true;
  let o;
  if (batch) {
    o = new Array(count);
    for (let i = 0; i < count; i++) o[i] = message(ep.out, r + i * A.R_SIZE, text, tuples);
  } else {
    o = message(ep.out, r, text, tuples);
  }
  // A chunk whose buffer its writer gave up (context.js) is transferred
  // (a chunk is never a tuple). Not one already gone (empty: the writer
  // wrote the same buffer twice): Node drops a message whose transfer list
  // holds a detached buffer without a word, where copying it throws
  // DataCloneError, which fails the stream as Chromium's post does.
  const pv = !batch && !Array.isArray(o) && o.params !== null && typeof o.params === 'object' ? o.params.value : undefined;
  const buf = pv !== null && typeof pv === 'object' ? ep.transfers.get(pv) : undefined;
  if (buf) ep.transfers.delete(pv);
  try {
    ep.transport.send(o, false, buf?.byteLength ? [buf] : undefined);
  } catch (e) {
    sendFailed(ep, o, e);
  }
}

/** A single call's request (weft_call's STATUS_POST_REQUEST): `id` the core's, the rest the caller's. */
export function postRequest(ep, id, method, p) {
  const o = requestMessage(id, method, p, ep.transport.tuples === true);
  try {
    // A request while no other call is pending (calls made one after
    // another): nothing else will follow it this turn, so a packing
    // transport need not hold it for the flush (js/pack.js).
    ep.transport.send(o, ep.live <= 1, undefined);
  } catch (e) {
    sendFailed(ep, o, e);
  }
}

/** The one result record at `recs` (PeerOptions::send_result). */
export function sendResult(ep, recs, text) {
  post(ep, result(ep.out, recs >> 3, text, ep.transport.tuples === true));
}

/** Result `v` of request `id` the core let go (RECEIVED_RELEASED), as sendResult sends one. */
export function sendReleased(ep, id, v) { post(ep, resultMessage(id, v, ep.transport.tuples === true)); }

function post(ep, o) {
  try {
    ep.transport.send(o, false, undefined);
  } catch (e) {
    sendFailed(ep, o, e);
  }
}

/**
 * Message or batch `o` (as given to transport.send) could not be sent (`e`):
 * from send()'s catch, and the transport's onSendError (a packing transport
 * posting at once: under the core's own call).
 */
export function sendFailed(ep, o, e) { queueMicrotask(() => undelivered(ep, o, e)); }

// A request that could not be sent: its call's rejection gets `e` as cause.
function noteSendError(ep, m, e) {
  if (m === null || typeof m !== 'object' || typeof m.method !== 'string' || typeof m.id !== 'number') return;
  const rec = ep.calls.find((r) => r !== undefined && !r.done && r.id === m.id);
  if (rec) rec.sendError = e;
}

const text = (x) => String(x?.message ?? x);

// Why `m` alone cannot be sent, if it cannot: the transport's sendable()
// (false, or throwing why), else structured clone's error on its snapshot
// (what posting it alone sends: pack.js).
function whyNot(t, m, e) {
  try {
    if (typeof t.sendable === 'function') return t.sendable(m) ? undefined : e;
    const clone = globalThis.structuredClone;
    if (clone) clone(snapshot(m, clone));
  } catch (x) {
    return x;
  }
}

// `o` is described to the core as incoming messages are, each with whether it
// failed alone (none of a batch: the transport failed, all of it), and the core
// decides what follows (Peer::undelivered). It takes one reason: those failing
// with the first go now, the rest again.
function undelivered(ep, o, e) {
  if (!ep.h) return;
  const list = Array.isArray(o) && !isTuple(o) ? o : [o];
  const n = list.length;
  if (n === 0) return;
  const mark = inboundMark();
  try {
    const why = n > 1 ? list.map((m) => whyNot(ep.transport, m, e)) : [e];
    const k = why.findIndex((x) => x !== undefined);
    const r = text(k < 0 ? e : why[k]);
    const mlen = put(r);
    const base = desc(n * (A.D_SIZE + 1));
    let at = mlen;
    for (let i = 0; i < n; i++) {
      const m = list[i];
      at = isTuple(m) ? describeTuple(base + i * A.D_SIZE, m, at) : describe(base + i * A.D_SIZE, m, at);
    }
    const flags = base + n * A.D_SIZE;
    for (let i = 0; i < n; i++) {
      const f = k < 0 || why[i] !== undefined && text(why[i]) === r;
      M.HEAPF64[flags + i] = f ? 1 : 0;
      if (f) noteSendError(ep, plainOf(list[i]), why[i] ?? e);
    }
    X._weft_undelivered(ep.h, n, list === o ? 1 : 0, mlen);
  } catch (err) {
    // Nothing may escape a microtask: what is lost is said.
    ep._diag('SendFailed', 'a message could not be sent, nor reported to the core: ' + text(err));
  } finally {
    unwindInbound(mark);
  }
}
