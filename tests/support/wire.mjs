// The announcement a weft postMessage transport posts once before its first
// message (js/pack.js, docs/protocol.md): tests that read the raw wire leave
// it out with `plain()`.
export const ANNOUNCEMENT = { jsonrpc: '2.0', method: '$/weft/pack', params: { tuples: 1 } };
/** The announcement of a transport an endpoint of `role` ('client', 'server', 'peer') sends on. */
export const announcementOf = (role) => ({ jsonrpc: '2.0', method: '$/weft/pack', params: { tuples: 1, role } });
export const isAnnouncement = (m) => m !== null && typeof m === 'object' && m.method === '$/weft/pack' && m.jsonrpc === '2.0' && !('id' in m);
/** Calls fn(data) for every raw message except the announcement. */
export const plain = (fn) => (ev) => { if (!isAnnouncement(ev.data)) fn(ev.data); };

// Tuples, as docs/protocol.md ("Tuples") defines them, written here from the
// document rather than taken from js/tuples.js, so that tests check the
// library against the format.
const same = (keys, want) => keys.length === want.length && want.every((k) => keys.includes(k));
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The tuple that says exactly what message object `m` says, or `m` itself
 * when none does (not "jsonrpc": "2.0", other members, an error that is not
 * an object of code, message and data). A batch: element by element.
 */
export function toTuple(m) {
  if (Array.isArray(m)) return m.map((e) => (Array.isArray(e) ? e : toTuple(e)));
  if (!isObject(m) || m.jsonrpc !== '2.0') return m;
  const k = Object.keys(m);
  if (same(k, ['jsonrpc', 'method', 'id'])) return [0n, m.id, m.method];
  if (same(k, ['jsonrpc', 'method', 'params', 'id'])) return [0n, m.id, m.method, m.params];
  if (same(k, ['jsonrpc', 'method'])) return [1n, m.method];
  if (same(k, ['jsonrpc', 'method', 'params'])) return [1n, m.method, m.params];
  if (same(k, ['jsonrpc', 'result', 'id'])) return [2n, m.id, m.result];
  if (same(k, ['jsonrpc', 'error', 'id']) && isObject(m.error)) {
    const e = m.error;
    const ek = Object.keys(e);
    if (same(ek, ['code', 'message'])) return [3n, m.id, e.code, e.message];
    if (same(ek, ['code', 'message', 'data'])) return [3n, m.id, e.code, e.message, e.data];
  }
  return m;
}

/** Whether `m` is a tuple: an array whose first element is a BigInt. */
export const isTuple = (m) => Array.isArray(m) && typeof m[0] === 'bigint';

/** The message object a tuple stands for; a batch element by element; anything else as it is. */
export function fromTuple(m) {
  if (!Array.isArray(m)) return m;
  if (!isTuple(m)) return m.map((e) => (isTuple(e) ? fromTuple(e) : e));
  switch (m[0]) {
    case 0n: return m.length > 3 ? { jsonrpc: '2.0', method: m[2], params: m[3], id: m[1] } : { jsonrpc: '2.0', method: m[2], id: m[1] };
    case 1n: return m.length > 2 ? { jsonrpc: '2.0', method: m[1], params: m[2] } : { jsonrpc: '2.0', method: m[1] };
    case 2n: return m.length > 2 ? { jsonrpc: '2.0', result: m[2], id: m[1] } : { jsonrpc: '2.0', id: m[1] };
    case 3n: return { jsonrpc: '2.0', error: m.length > 4 ? { code: m[2], message: m[3], data: m[4] } : { code: m[2], message: m[3] }, id: m[1] };
    default: throw new Error(`not a tuple: first element ${m[0]}`);
  }
}
