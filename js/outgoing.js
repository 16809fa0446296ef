// What the core sends, handed to the transport: the records of wasm/records.h
// turned into wire values (wire.js). A transport's error is given back to
// the core, which decides what follows (Peer::undelivered); the call whose
// request failed gets the error as its rejection's cause.
//
// send, sendRequest and sendResult answer the EM_JS hooks of wasm/host.cpp:
// -1, or the byte length of the transport's error message in the input
// buffer.
import * as A from '../dist/weft_abi.js';
import { M, X, desc, put } from './heap.js';
import { plainOf } from './tuples.js';
import { describeId, message, request, result } from './wire.js';

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
    return -1;
  } catch (e) {
    for (const m of batch ? o : [o]) noteSendError(ep, plainOf(m), e);
    return put(String(e?.message ?? e));
  }
}

/** The one request record at `recs` (PeerOptions::send_request). */
export function sendRequest(ep, recs, text) {
  const r = recs >> 3;
  // The call weft_call is making learns its id here, before weft_call
  // returns it, so that a send error finds the call.
  const c = ep.calling;
  if (c !== null && c.id === 0 && M.HEAPF64[r + A.R_ID_KIND] === A.ID_INT) c.id = M.HEAPF64[r + A.R_ID_A];
  const o = request(ep.out, r, text, ep.transport.tuples === true);
  try {
    // A request while no other call is pending (calls made one after
    // another): nothing else will follow it this turn, so a packing
    // transport need not hold it for the flush (js/pack.js).
    ep.transport.send(o, ep.live <= 1, undefined);
    return -1;
  } catch (e) {
    noteSendError(ep, plainOf(o), e);
    return put(String(e?.message ?? e));
  }
}

/** The one result record at `recs` (PeerOptions::send_result). */
export function sendResult(ep, recs, text) {
  const o = result(ep.out, recs >> 3, text, ep.transport.tuples === true);
  try {
    ep.transport.send(o, false, undefined);
    return -1;
  } catch (e) {
    return put(String(e?.message ?? e));
  }
}

// A request that could not be sent: its call's rejection gets `e` as cause.
function noteSendError(ep, m, e) {
  if (m === null || typeof m !== 'object' || typeof m.method !== 'string' || typeof m.id !== 'number') return;
  const rec = ep.calls.find((r) => r !== undefined && !r.done && r.id === m.id);
  if (rec) rec.sendError = e;
}

/**
 * transport.onSendError: a message the transport accepted could not be
 * posted after all. The core decides what follows (Peer::undelivered).
 */
export function sendFailedLater(ep, o, e) {
  o = plainOf(o);
  if (!ep.h || o === null || typeof o !== 'object' || Array.isArray(o)) return;
  noteSendError(ep, o, e);
  const kind = typeof o.method === 'string' ? (o.id === undefined ? A.MSG_NOTIFICATION : A.MSG_REQUEST)
    : o.error !== undefined ? A.MSG_ERROR : A.MSG_RESULT;
  const d = desc(A.D_SIZE);
  M.HEAPF64.fill(0, d, d + A.D_SIZE);
  const mlen = put(String(e?.message ?? e));
  describeId(d, o.id, mlen);
  X._weft_undelivered(ep.h, kind, mlen);
}
