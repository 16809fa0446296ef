// What the core sends, handed to the transport: the records of wasm/records.h
// turned into wire values (wire.js), for the EM_JS hooks js_send, js_request
// and js_result of wasm/host.cpp. What a transport cannot send — its send()
// throws, or a packing transport reports it later (onSendError) — goes back
// to the core from a microtask, never under the core's own call: the core
// decides what follows (Peer::undelivered), and the call whose request
// failed gets the transport's error as its rejection's cause.
import * as A from '../dist/weft_abi.js';
import { M, X, desc, put } from './heap.js';
import { inboundMark, unwindInbound } from './payloads.js';
import { isTuple, plainOf } from './tuples.js';
import { describe, describeTuple, message, request, result } from './wire.js';

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
  // (a chunk is never a tuple).
  const pv = !batch && !Array.isArray(o) && o.params !== null && typeof o.params === 'object' ? o.params.value : undefined;
  const buf = pv !== null && typeof pv === 'object' ? ep.transfers.get(pv) : undefined;
  if (buf) ep.transfers.delete(pv);
  try {
    ep.transport.send(o, false, buf ? [buf] : undefined);
  } catch (e) {
    sendFailed(ep, o, e);
  }
}

/** The one request record at `recs` (PeerOptions::send_request). */
export function sendRequest(ep, recs, text) {
  const o = request(ep.out, recs >> 3, text, ep.transport.tuples === true);
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
  const o = result(ep.out, recs >> 3, text, ep.transport.tuples === true);
  try {
    ep.transport.send(o, false, undefined);
  } catch (e) {
    sendFailed(ep, o, e);
  }
}

/**
 * Message or batch `o` (as given to transport.send) could not be sent (`e`):
 * from send()'s catch, and the transport's onSendError, which may call it
 * under the core's own call (a packing transport posting at once).
 */
export function sendFailed(ep, o, e) { queueMicrotask(() => undelivered(ep, o, e)); }

// A request that could not be sent: its call's rejection gets `e` as cause.
function noteSendError(ep, m, e) {
  if (m === null || typeof m !== 'object' || typeof m.method !== 'string' || typeof m.id !== 'number') return;
  const rec = ep.calls.find((r) => r !== undefined && !r.done && r.id === m.id);
  if (rec) rec.sendError = e;
}

// Whether message `m` alone could be sent: the transport's own check, or
// structured clone's (the postMessage transports'). Asked only after a
// batch failed, to tell the element that failed from the rest.
function sendable(transport, m) {
  if (typeof transport.sendable === 'function') return transport.sendable(m);
  if (typeof structuredClone !== 'function') return true;
  try {
    structuredClone(m);
    return true;
  } catch {
    return false;
  }
}

// `o` is described to the core as incoming messages are, each with whether
// it could be sent on its own (a batch's; a single message could not), and
// the core decides what follows (Peer::undelivered).
function undelivered(ep, o, e) {
  if (!ep.h) return;
  const list = Array.isArray(o) && !isTuple(o) ? o : [o];
  const n = list.length;
  if (n === 0) return;
  const mark = inboundMark();
  try {
    // Which could not be sent alone; none of a batch: the transport failed.
    const failed = n === 1 ? [true] : list.map((m) => !sendable(ep.transport, m));
    const blamed = failed.includes(true);
    for (let i = 0; i < n; i++) if (failed[i] || !blamed) noteSendError(ep, plainOf(list[i]), e);
    const mlen = put(String(e?.message ?? e));
    const base = desc(n * (A.D_SIZE + 1));
    let at = mlen;
    for (let i = 0; i < n; i++) {
      const m = list[i];
      at = isTuple(m) ? describeTuple(base + i * A.D_SIZE, m, at) : describe(base + i * A.D_SIZE, m, at);
    }
    const flags = base + n * A.D_SIZE;
    for (let i = 0; i < n; i++) M.HEAPF64[flags + i] = failed[i] ? 1 : 0;
    X._weft_undelivered(ep.h, n, list === o ? 1 : 0, mlen);
  } catch (err) {
    // From a microtask nothing may escape (a throwing sendable(), an error
    // whose message throws): what is lost is said, not thrown.
    ep._diag('SendFailed', 'a message could not be sent, nor reported to the core: ' + String(err?.message ?? err));
  } finally {
    unwindInbound(mark);
  }
}
