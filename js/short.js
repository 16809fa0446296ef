// The short ways into the core: the two messages an endpoint receives
// most reach it in one call of the module, without a descriptor (wire.js).
//   request  (weft_request)  [0n, id, method, params?] or {"jsonrpc": "2.0",
//            "method": m, "params": p, "id": n}: a number id, a string
//            method, array, object or no params. judge() (core/src/rpc/
//            validate.cpp) makes every such message a Request, whatever
//            else it holds; Peer::receive applies the role policy, serves it.
//   result   (weft_result)   [2n, id, value] or {"jsonrpc": "2.0", "result":
//            v, "id": n} without method, error or metrics (judge(): a
//            Result). The core settles the call by its id and returns its
//            token; the caller gets the value, which never crosses.
// Any other message, or one the core declines (an id that is not a safe
// integer or is -0, none of its calls', a stream's end, on a Server), is
// described: each rule is decided once, in the core. A member that is
// undefined is absent, as describe() reads it.
import * as A from '../dist/weft_abi.js';
import { X, put } from './heap.js';
import { pushInbound } from './payloads.js';
import { T_REQUEST, T_RESULT } from './tuples.js';

const { VALUE_ABSENT, VALUE_ARRAY, VALUE_OBJECT } = A;

/**
 * Whether endpoint `ep`'s core took `data` (any value from the wire) by a
 * short way; false: describe it.
 */
export function takeShort(ep, data) {
  if (typeof data !== 'object' || data === null) return false;
  if (Array.isArray(data)) return takeTuple(ep, data);
  const id = data.id;
  if (typeof id !== 'number' || data.jsonrpc !== '2.0') return false;
  const method = data.method;
  if (method === undefined) {
    if (!('result' in data) || data.error !== undefined || data.metrics !== undefined) return false;
    return settle(ep, id, data.result);
  }
  return typeof method === 'string' && request(ep, id, method, data.params);
}

function takeTuple(ep, t) {
  const n = t.length;
  const k = t[0];
  if (n === 3 && k === T_RESULT) return settle(ep, typeof t[1] === 'number' ? t[1] : NaN, t[2]);
  if (k !== T_REQUEST || typeof t[1] !== 'number' || typeof t[2] !== 'string') return false;
  if (n === 3) return request(ep, t[1], t[2], undefined);
  // [0n, id, method, undefined] is described: its params member is there.
  return n === 4 && t[3] !== undefined && request(ep, t[1], t[2], t[3]);
}

function settle(ep, id, v) {
  const token = X._weft_result(ep.h, id);
  if (token < 0) return false;
  ep._settle(token, v);
  return true;
}

// A request whose params `p` are undefined (none), an array or an object;
// anything else is described (and answered -32600 by the core).
function request(ep, id, method, p) {
  if (p === undefined) return X._weft_request(ep.h, id, put(method), VALUE_ABSENT, 0) === 1;
  if (typeof p !== 'object' || p === null) return false;
  return X._weft_request(ep.h, id, put(method), Array.isArray(p) ? VALUE_ARRAY : VALUE_OBJECT, pushInbound(p)) === 1;
}
