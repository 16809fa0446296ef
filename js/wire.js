// Messages across the boundary, in the layouts of wasm/abi.h:
//  * incoming: any value → descriptor records (D_*), members by kind, with
//    payloads as inbound handles; the core rebuilds and judges them. A
//    tuple (tuples.js) is described member for member as the object it
//    stands for;
//  * outgoing: records (R_*) → plain JSON-RPC objects, or tuples where the
//    other end announced it reads them, releasing outbound payload handles
//    (payloads.js).
// Nothing here decides what is valid: a wrong type is described as what it
// is, and the core answers it.
import * as A from '../dist/weft_abi.js';
import { M, put, str } from './heap.js';
import { IdText, bigId, idOf } from './ids.js';
import { pushInbound, inboundValue } from './payloads.js';
import { utf8Length } from './size.js';
import { T_ERROR, T_NOTIFICATION, T_REQUEST, T_RESULT } from './tuples.js';

// The ABI's constants as module constants: a namespace member is looked
// up on every use, and these are read for every message.
const {
  D_CODE_KIND, D_DATA_A, D_DATA_KIND, D_ERROR_KIND, D_ID_A, D_ID_B, D_ID_C, D_ID_KIND,
  D_JSONRPC_KIND, D_MESSAGE_KIND, D_METHOD_KIND, D_METRICS_KIND, D_METRICS_SIZE, D_METRICS_TIME,
  D_PARAMS_A, D_PARAMS_KIND, D_RESULT_A, D_RESULT_KIND, D_SHAPE, ID_BIG, ID_INT, ID_LEXEME,
  ID_STRING, METRICS_NONE, MSG_NOTIFICATION, MSG_REQUEST, MSG_RESULT, PAY_INBOUND_BASE, PAY_NONE,
  PAY_TEXT, R_CODE, R_ID_A, R_ID_B, R_ID_KIND, R_KIND, R_METRICS, R_PAY, R_STR_N, R_STR_P,
  R_TEXT_N, R_TEXT_P, R_VALUE, VALUE_ABSENT, VALUE_ARRAY, VALUE_FALSE, VALUE_NON_FINITE,
  VALUE_NULL, VALUE_NUMBER, VALUE_OBJECT, VALUE_PAYLOAD, VALUE_STRING, VALUE_TRUE, VALUE_VERSION,
} = A;

/** The ABI kind of a JavaScript value. */
export function kindOf(v) {
  switch (typeof v) {
    case 'undefined': return VALUE_ABSENT;
    case 'string': return VALUE_STRING;
    case 'number': return Number.isFinite(v) ? VALUE_NUMBER : VALUE_NON_FINITE;
    case 'boolean': return v ? VALUE_TRUE : VALUE_FALSE;
    case 'bigint': return VALUE_NUMBER;
    case 'object': return v === null ? VALUE_NULL : Array.isArray(v) ? VALUE_ARRAY : VALUE_OBJECT;
    default: return VALUE_NULL;  // functions, symbols: JSON.stringify would give null or nothing
  }
}

// A string member at slots s (kind), s+1 (byte offset), s+2 (byte length);
// `at` is the next free byte of the input buffer, returned updated.
function putString(s, v, at) {
  const n = put(v, at);
  const F = M.HEAPF64;  // put() may grow the memory: the view is read after it
  F[s] = VALUE_STRING; F[s + 1] = at; F[s + 2] = n;
  return at + n;
}

// Any other member read as a scalar at slots s, s+1, s+2.
function scalar(s, v, at) {
  if (typeof v === 'string') return putString(s, v, at);
  const F = M.HEAPF64;
  if (typeof v === 'number') {
    F[s] = Number.isFinite(v) ? VALUE_NUMBER : VALUE_NON_FINITE; F[s + 1] = v;
  } else {
    F[s] = kindOf(v);
    if (typeof v === 'bigint') F[s + 1] = Number(v);
  }
  return at;
}

/** Describes the id `id` in descriptor `d` (D_ID_*); returns the next free byte. */
function describeId(d, id, at) {
  // A BigInt is a number JSON cannot express: no id (JSON-RPC 2.0 §4).
  if (typeof id === 'bigint') { M.HEAPF64[d + D_ID_KIND] = VALUE_NON_FINITE; return at; }
  if (typeof id === 'number' && Number.isFinite(id) && (!Number.isSafeInteger(id) || Object.is(id, -0))) {
    // The lexeme a JSON codec would have kept (String(-0) is "0": spell it).
    const n = put(Object.is(id, -0) ? '-0.0' : String(id), at);
    const F = M.HEAPF64;
    F[d + D_ID_KIND] = VALUE_NUMBER; F[d + D_ID_A] = id; F[d + D_ID_B] = at; F[d + D_ID_C] = n;
    return at + n;
  }
  if (typeof id === 'object' && id instanceof IdText) {  // a number id as its text (ids.js): the lexeme itself
    const n = put(id.text, at);
    const F = M.HEAPF64;
    F[d + D_ID_KIND] = VALUE_NUMBER; F[d + D_ID_A] = Number(id.text); F[d + D_ID_B] = at; F[d + D_ID_C] = n;
    return at + n;
  }
  return scalar(d + D_ID_KIND, id, at);
}

function describeParams(d, p, at) {
  if (typeof p === 'object' && p !== null) {
    const F = M.HEAPF64;
    F[d + D_PARAMS_KIND] = Array.isArray(p) ? VALUE_ARRAY : VALUE_OBJECT; F[d + D_PARAMS_A] = pushInbound(p);
    return at;
  }
  return scalar(d + D_PARAMS_KIND, p, at);
}

function describeResult(d, v) {
  const F = M.HEAPF64;
  F[d + D_RESULT_KIND] = VALUE_PAYLOAD; F[d + D_RESULT_A] = pushInbound(v);
}

// An error object's members (ERROR_KIND is OBJECT).
function describeError(d, code, message, data, at) {
  at = scalar(d + D_CODE_KIND, code, at);
  at = scalar(d + D_MESSAGE_KIND, message, at);
  if (data !== undefined) {
    const F = M.HEAPF64;
    F[d + D_DATA_KIND] = VALUE_PAYLOAD; F[d + D_DATA_A] = pushInbound(data);
  }
  return at;
}

// The start of a message object's descriptor. The core reads slots only
// after their kind (abi.h): clear the kinds not always written, and ID_C (a
// fill() of D_SIZE is a runtime call).
function begin(d) {
  const F = M.HEAPF64;
  F[d + D_SHAPE] = VALUE_OBJECT;
  F[d + D_ID_C] = F[d + D_RESULT_KIND] = F[d + D_DATA_KIND] = F[d + D_METRICS_KIND] = 0;
}

/** Describes `m` (any value) in descriptor `d`; returns the next free byte. */
export function describe(d, m, at) {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    M.HEAPF64[d + D_SHAPE] = kindOf(m);
    return at;
  }
  begin(d);
  at = scalar(d + D_JSONRPC_KIND, m.jsonrpc, at);
  at = scalar(d + D_METHOD_KIND, m.method, at);
  at = describeId(d, m.id, at);
  at = describeParams(d, m.params, at);
  // A result member that is present counts even when undefined (structured
  // clone keeps it): the caller then gets undefined.
  if ('result' in m) describeResult(d, m.result);
  const e = m.error;
  const ek = kindOf(e);
  M.HEAPF64[d + D_ERROR_KIND] = ek;
  if (ek === VALUE_OBJECT) at = describeError(d, e.code, e.message, e.data, at);
  // A response's metrics (docs/protocol.md "Metrics"): the core judges them.
  const mt = m.metrics;
  if (mt !== undefined) {
    const mk = kindOf(mt);
    const F = M.HEAPF64;
    F[d + D_METRICS_KIND] = mk;
    if (mk === VALUE_OBJECT) {
      F[d + D_METRICS_TIME] = numberOrNaN(mt.processing_time_us);
      F[d + D_METRICS_SIZE] = numberOrNaN(mt.response_size);
    }
  }
  return at;
}

/**
 * Describes tuple `t` (tuples.js) in descriptor `d` as the message object it
 * stands for; returns the next free byte. A tuple with an unknown first
 * element is described as the array it is: not a message.
 */
export function describeTuple(d, t, at) {
  switch (t[0]) {  // one comparison per kind: BigInt equality is a call
    case T_REQUEST:
      head(d, VALUE_ABSENT);
      at = scalar(d + D_METHOD_KIND, t[2], at);
      at = describeId(d, t[1], at);
      return describeParams(d, t[3], at);
    case T_RESULT:
      head(d, VALUE_ABSENT);
      noCall(d);
      at = describeId(d, t[1], at);
      if (t.length > 2) describeResult(d, t[2]);
      return at;
    case T_NOTIFICATION:
      head(d, VALUE_ABSENT);
      M.HEAPF64[d + D_ID_KIND] = VALUE_ABSENT;
      at = scalar(d + D_METHOD_KIND, t[1], at);
      return describeParams(d, t[2], at);
    case T_ERROR:
      head(d, VALUE_OBJECT);
      noCall(d);
      at = describeId(d, t[1], at);
      return describeError(d, t[2], t[3], t[4], at);
    default:
      M.HEAPF64[d + D_SHAPE] = VALUE_ARRAY;
      return at;
  }
}

// A tuple's implied members: an object, "jsonrpc": "2.0" (VALUE_VERSION:
// nothing to spell), the error's kind.
function head(d, errorKind) {
  begin(d);
  const F = M.HEAPF64;
  F[d + D_JSONRPC_KIND] = VALUE_VERSION;
  F[d + D_ERROR_KIND] = errorKind;
}

// A response tuple has no method and no params.
function noCall(d) {
  const F = M.HEAPF64;
  F[d + D_METHOD_KIND] = F[d + D_PARAMS_KIND] = VALUE_ABSENT;
}

function numberOrNaN(v) {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : NaN;
}

// A response the core measured (R_METRICS) gets its metrics member after
// "id"; response_size is the bytes of its JSON text without that member, as
// a JSON encoder counts them (JSON.stringify; 0 for a value it refuses).
function withMetrics(o, us) {
  let size = 0;
  try { size = utf8Length(JSON.stringify(o)); } catch { /* a BigInt, a cycle: not JSON */ }
  o.metrics = { processing_time_us: us, response_size: size };
  return o;
}

function recId(F, r) {
  switch (F[r + R_ID_KIND]) {
    case ID_INT: return F[r + R_ID_A];
    case ID_STRING: return str(F[r + R_ID_A], F[r + R_ID_B]);
    case ID_LEXEME: return idOf(str(F[r + R_ID_A], F[r + R_ID_B]));  // a number, or its text if a double loses it
    case ID_BIG: return bigId(F[r + R_ID_A], F[r + R_ID_B]);
    default: return null;
  }
}

/**
 * The message of record `r` (an index in HEAPF64), releasing its outbound
 * payload handle from `out`; `text` points at the JSON of values the core
 * made itself (0: none). `tuples`: as a tuple (tuples.js), unless it
 * carries metrics or params built around a payload (a chunk, progress).
 */
export function message(out, r, text, tuples = false) {
  const F = M.HEAPF64;
  const kind = F[r + R_KIND];
  const pay = F[r + R_PAY];
  const v = payload(out, F, r, pay, text);
  const us = F[r + R_METRICS];
  if (tuples && us === METRICS_NONE && F[r + R_VALUE] === PAY_NONE) return tuple(F, r, kind, pay, v);
  if (kind === MSG_RESULT) {
    const o = resultObject(recId(F, r), v);
    return us === METRICS_NONE ? o : withMetrics(o, us);
  }
  if (kind === MSG_REQUEST || kind === MSG_NOTIFICATION) {
    const m = callObject(F, r, kind, pay, v);
    // Params the core built around a payload ($/weft/chunk, $/progress).
    const pv = F[r + R_VALUE];
    if (pv !== PAY_NONE) {
      const x = pv >= PAY_INBOUND_BASE ? inboundValue(pv) : out.release(pv);
      if (m.params !== null && typeof m.params === 'object') m.params.value = x;
    }
    return m;
  }
  const code = F[r + R_CODE], msg = str(F[r + R_STR_P], F[r + R_STR_N]);
  const error = v === undefined ? { code, message: msg } : { code, message: msg, data: v };
  const o = { jsonrpc: '2.0', error, id: recId(F, r) };
  return us === METRICS_NONE ? o : withMetrics(o, us);
}

/**
 * Record `r`, discarded (PeerOptions::discard): its outbound handles are
 * released, as message() releases them, and nothing is made of it.
 */
export function discard(out, r) {
  const F = M.HEAPF64;
  const pay = F[r + R_PAY];
  if (pay >= 0 && pay < PAY_INBOUND_BASE) out.release(pay);
  const kind = F[r + R_KIND];
  const pv = F[r + R_VALUE];
  if ((kind === MSG_REQUEST || kind === MSG_NOTIFICATION) && pv >= 0 && pv < PAY_INBOUND_BASE) out.release(pv);
}

/**
 * The message of a result record without metrics (PeerOptions::send_result:
 * the one answer a request gets at once), as message() makes it: the
 * common answer's own, shorter way.
 */
export function result(out, r, text, tuples) {
  const F = M.HEAPF64;
  const v = payload(out, F, r, F[r + R_PAY], text);
  return resultMessage(recId(F, r), v, tuples);
}

/** Request `id`'s result `v` as result() makes it from its record. */
export function resultMessage(id, v, tuples) {
  return tuples ? [T_RESULT, id, v === undefined ? null : v] : resultObject(id, v);
}

/**
 * A request as message() makes one from its record: `p` its params
 * (undefined: none).
 */
export function requestMessage(id, method, p, tuples) {
  if (tuples) return p === undefined ? [T_REQUEST, id, method] : [T_REQUEST, id, method, p];
  return p === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params: p, id };
}

// A request's (as a caller's own: requestMessage) or notification's record
// as an object; `v` the params' value (none when `pay` is PAY_NONE).
function callObject(F, r, kind, pay, v) {
  if (kind === MSG_REQUEST) return requestRecord(F, r, pay, v, false);
  const m = { jsonrpc: '2.0', method: str(F[r + R_STR_P], F[r + R_STR_N]) };
  if (pay !== PAY_NONE) m.params = v;
  return m;
}

function requestRecord(F, r, pay, v, tuples) {
  return requestMessage(recId(F, r), str(F[r + R_STR_P], F[r + R_STR_N]), pay === PAY_NONE ? undefined : v, tuples);
}

function resultObject(id, v) { return { jsonrpc: '2.0', result: v === undefined ? null : v, id }; }

// The value of record `r`'s payload `pay`, its outbound handle released.
function payload(out, F, r, pay, text) {
  if (pay >= PAY_INBOUND_BASE) return inboundValue(pay);
  if (pay >= 0) return out.release(pay);
  if (pay === PAY_TEXT && text) return JSON.parse(str(text + F[r + R_TEXT_P], F[r + R_TEXT_N]));
  return undefined;
}

// Record `r` as a tuple; `v` its payload's value, `pay` its slot.
function tuple(F, r, kind, pay, v) {
  switch (kind) {
    case MSG_RESULT: return [T_RESULT, recId(F, r), v === undefined ? null : v];
    case MSG_REQUEST: return requestRecord(F, r, pay, v, true);
    case MSG_NOTIFICATION: {
      const method = str(F[r + R_STR_P], F[r + R_STR_N]);
      return pay === PAY_NONE ? [T_NOTIFICATION, method] : [T_NOTIFICATION, method, v];
    }
    default: {
      const msg = str(F[r + R_STR_P], F[r + R_STR_N]);
      return v === undefined ? [T_ERROR, recId(F, r), F[r + R_CODE], msg]
        : [T_ERROR, recId(F, r), F[r + R_CODE], msg, v];
    }
  }
}

/** A payload the core hands to JS without giving it up (params, a result). */
export function value(out, sl, p, n) {
  if (sl >= PAY_INBOUND_BASE) return inboundValue(sl);
  if (sl >= 0) return out.peek(sl);
  if (sl === PAY_TEXT) return JSON.parse(str(p, n));
  return undefined;
}

/** Call/notify params as [kind, handle-or-number] (payloads held in `out`). */
export function params(out, p) {
  const k = kindOf(p);
  if (k === VALUE_OBJECT || k === VALUE_ARRAY) return [k, out.hold(p)];
  return [k, k === VALUE_NUMBER ? Number(p) : 0];
}
