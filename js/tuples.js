// Tuples: the compact form of a JSON-RPC message on postMessage, sent to a
// weft end that announced it reads them (js/pack.js; docs/protocol.md,
// "Tuples"). A tuple is an array whose first element, a BigInt, says which
// message it is; the other elements are that message's members, in a fixed
// order, with the same values:
//
//   request       [0n, id, method]  or  [0n, id, method, params]
//   notification  [1n, method]      or  [1n, method, params]
//   result        [2n, id, result]
//   error         [3n, id, code, message]  or  [3n, id, code, message, data]
//
// "jsonrpc": "2.0" is implied. A batch is an array of messages, tuples or
// objects. No JSON value holds a BigInt, so no JSON-RPC message or batch is
// ever taken for a tuple. Structured clone copies a short array faster than
// an object with named members (bench/README.md, "Tuples"). Nothing here
// judges a message: wire.js describes a tuple's members to the core exactly
// as it describes an object's.

export const T_REQUEST = 0n;
export const T_NOTIFICATION = 1n;
export const T_RESULT = 2n;
export const T_ERROR = 3n;

/** Whether `m` is a tuple (not an object, nor a batch). */
export function isTuple(m) {
  return Array.isArray(m) && typeof m[0] === 'bigint';
}

/** A tuple's params, result or error data (undefined: none). */
export function tuplePayload(t) {
  switch (t[0]) {
    case T_REQUEST: return t[3];
    case T_NOTIFICATION: return t[2];
    case T_RESULT: return t[2];
    case T_ERROR: return t[4];
    default: return undefined;
  }
}

/**
 * What a value from the wire says as JSON-RPC: a tuple becomes the message
 * object it stands for, a batch element by element; anything else is
 * returned as it is (for logs, and error reports naming a method and id).
 */
export function asMessage(x) {
  if (!Array.isArray(x) || isTuple(x)) return plainOf(x);
  return x.some(isTuple) ? x.map(plainOf) : x;
}

/**
 * The message object a tuple stands for; anything else is returned as it is.
 */
export function plainOf(m) {
  if (!isTuple(m)) return m;
  switch (m[0]) {
    case T_REQUEST: return m.length > 3 ? { jsonrpc: '2.0', method: m[2], params: m[3], id: m[1] }
      : { jsonrpc: '2.0', method: m[2], id: m[1] };
    case T_NOTIFICATION: return m.length > 2 ? { jsonrpc: '2.0', method: m[1], params: m[2] }
      : { jsonrpc: '2.0', method: m[1] };
    // Without a third element there is no result member (wire.js reads it so).
    case T_RESULT: return m.length > 2 ? { jsonrpc: '2.0', result: m[2], id: m[1] } : { jsonrpc: '2.0', id: m[1] };
    case T_ERROR: {
      const error = m.length > 4 ? { code: m[2], message: m[3], data: m[4] } : { code: m[2], message: m[3] };
      return { jsonrpc: '2.0', error, id: m[1] };
    }
    default: return m;
  }
}
