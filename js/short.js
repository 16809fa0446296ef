// The short ways into the core: the messages an endpoint receives most
// reach it in one call of the module, without a descriptor (wire.js).
//   request  (weft_request)  [0n, id, method, params?] or {"jsonrpc": "2.0",
//            "method": m, "params": p, "id": n}: a number id, a string
//            method, array, object or no params. judge() (core/src/rpc/
//            validate.cpp) makes every such message a Request, whatever
//            else it holds; Peer::receive applies the role policy, serves it.
//            Its result is sent from JS when the core lets it go
//            (RECEIVED_RELEASED, Peer::release_held): one call of the module.
//   result   (weft_result)   [2n, id, value] or {"jsonrpc": "2.0", "result":
//            v, "id": n} without method, error or metrics (judge(): a
//            Result). The core settles the call by its id and returns its
//            token; the caller gets the value, which never crosses.
//   notification (weft_notification)  [1n, method, params?] or {"jsonrpc":
//            "2.0", "method": m, "params": p} without an id: a string
//            method, array, object or no params (judge(): a Notification).
//   error    (weft_failure)  [3n, id, code, message, data?] or {"jsonrpc":
//            "2.0", "error": {"code": c, "message": s, "data"?: d}, "id": n}
//            without method, result or metrics: a number code, a string
//            message. The core takes it when judge() would find it a
//            Failure (a 32-bit integer code) and settles the call.
// Any other message, or one the core declines (an id that is not a safe
// integer or is -0; a result to none of its calls, a stream's end, or on a
// Server; an error code that is not a 32-bit integer), is described: each
// rule is decided once, in the core. A member that is undefined is absent,
// as describe() reads it.
import * as A from '../dist/weft_abi.js';
import { X, put } from './heap.js';
import { pushInbound } from './payloads.js';
import { runQueued } from './serving.js';
import { T_ERROR, T_NOTIFICATION, T_REQUEST, T_RESULT } from './tuples.js';

const { PAY_NONE, RECEIVED_NOT, RECEIVED_RELEASED, VALUE_ABSENT, VALUE_ARRAY, VALUE_OBJECT } = A;

/**
 * Whether endpoint `ep`'s core took `data` (any value from the wire) by a
 * short way; false: describe it.
 */
export function takeShort(ep, data) {
  if (typeof data !== 'object' || data === null) return false;
  if (Array.isArray(data)) return takeTuple(ep, data);
  if (data.jsonrpc !== '2.0') return false;
  const id = data.id;
  const method = data.method;
  if (id === undefined) return typeof method === 'string' && serve(ep, undefined, method, data.params);
  if (typeof id !== 'number') return false;
  if (method === undefined) {
    if (data.metrics !== undefined) return false;
    const e = data.error;
    if ('result' in data) return e === undefined && settle(ep, id, data.result);
    // An error object as describe() reads one: not null, an array or a function.
    return typeof e === 'object' && e !== null && !Array.isArray(e) && fail(ep, id, e.code, e.message, e.data);
  }
  return typeof method === 'string' && serve(ep, id, method, data.params);
}

function takeTuple(ep, t) {
  const n = t.length;
  const k = t[0];  // each BigInt comparison is a call: the common kinds first
  if (n === 3 && k === T_RESULT) return settle(ep, typeof t[1] === 'number' ? t[1] : NaN, t[2]);
  if (k === T_REQUEST) {
    if (typeof t[1] !== 'number' || typeof t[2] !== 'string') return false;
    if (n === 3) return serve(ep, t[1], t[2], undefined);
    // [0n, id, method, undefined] is described: its params member is there.
    return n === 4 && t[3] !== undefined && serve(ep, t[1], t[2], t[3]);
  }
  if (k === T_NOTIFICATION) {
    if (typeof t[1] !== 'string') return false;
    if (n === 2) return serve(ep, undefined, t[1], undefined);
    // [1n, method, undefined] is described, as a request's tuple is.
    return n === 3 && t[2] !== undefined && serve(ep, undefined, t[1], t[2]);
  }
  return k === T_ERROR && (n === 4 || n === 5) && fail(ep, typeof t[1] === 'number' ? t[1] : NaN, t[2], t[3], t[4]);
}

function settle(ep, id, v) {
  const token = X._weft_result(ep.h, id);
  if (token < 0) return false;
  ep._settle(token, v);
  return true;
}

// An error answer to call `id`: `code` must be a number and `message` a
// string (the core judges the code), `data` undefined when there is none.
function fail(ep, id, code, message, data) {
  if (typeof code !== 'number' || typeof message !== 'string') return false;
  const m = put(message);
  return X._weft_failure(ep.h, id, code, m, data === undefined ? PAY_NONE : pushInbound(data)) === 1;
}

// A request (`id` a number) or a notification (`id` undefined) whose params
// `p` are undefined (none), an array or an object; any other params are
// described (and refused by the core: -32600 for a request, §4.2).
function serve(ep, id, method, p) {
  let kind = VALUE_ABSENT;
  let a = 0;
  if (p !== undefined) {
    if (typeof p !== 'object' || p === null) return false;
    kind = Array.isArray(p) ? VALUE_ARRAY : VALUE_OBJECT;
    a = pushInbound(p);
  }
  const m = put(method);
  if (id === undefined) {
    if (X._weft_notification(ep.h, m, kind, a) !== 1) return false;
    runQueued(ep);
    return true;
  }
  const r = X._weft_request(ep.h, id, m, kind, a);
  if (r === RECEIVED_NOT) return false;
  runQueued(ep, r === RECEIVED_RELEASED ? id : NaN);
  return true;
}
