// Loads the WebAssembly core once per realm and routes its calls into
// JavaScript (the EM_JS hooks of wasm/host.cpp) to the endpoint they concern.
import * as A from '../dist/weft_abi.js';
import { ErrorCode, RPCError } from './errors.js';
import { M, X, attach, put, str } from './heap.js';
import { loadModule } from './loader.js';
import { send, sendResult } from './outgoing.js';
import { inboundValue, pushInbound } from './payloads.js';
import { dispatch, requestCancelled, writable } from './serving.js';
import { chunkSize } from './size.js';
import { discard, value } from './wire.js';

let kept = A.PAY_NONE;  // the handle materialize() set aside for js_kept
const [, NULL, , INTEGER, NUMBER, STRING, ARRAY, OBJECT] = A.PARAM_TYPES.map((_, i) => i);

// A member of params for members(): its JSON text when it is JSON exactly,
// else [inbound handle, ParamType] (wasm/host.cpp materialize_members).
function member(v) {
  let t = NULL;
  switch (typeof v) {
    case 'boolean': return v ? 'true' : 'false';
    case 'number':
      if (Number.isFinite(v) && !Object.is(v, -0)) return JSON.stringify(v);
      t = Number.isFinite(v) ? INTEGER : NUMBER;
      break;
    case 'bigint': t = INTEGER; break;
    case 'string':
      if (!/\p{Cs}/u.test(v)) return JSON.stringify(v);
      t = STRING;
      break;
    case 'object':
      if (v === null) return 'null';
      t = Array.isArray(v) ? ARRAY : OBJECT;
      break;
    // undefined, a function, a symbol (in an array): typed as JSON.stringify writes them, null
  }
  return `[${pushInbound(v)},${t}]`;
}

/** core handle → endpoint */
export const hosts = [];
const waiting = new Set();
let loadError = null;

const hooks = {
  send(h, recs, count, batch, text) {
    const ep = hosts[h];
    if (ep) send(ep, recs, count, batch, text);
  },
  result(h, rec, text) {
    const ep = hosts[h];
    if (ep) sendResult(ep, rec, text);
  },
  discard(h, recs, count) {
    const ep = hosts[h];
    if (ep) for (let i = 0; i < count; i++) discard(ep.out, (recs >> 3) + i * A.R_SIZE);
  },
  settle(h, token, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._settle(token, value(ep.out, sl, p, n));
  },
  fail(h, token, code, mp, mn, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._settleError(token, code, str(mp, mn), value(ep.out, sl, p, n));
  },
  dispatch(h, fn, token, sl, p, n) {
    const ep = hosts[h];
    return ep ? dispatch(ep, fn, token, value(ep.out, sl, p, n)) : A.DISPATCH_DONE;
  },
  cancelled(h, token) {
    const ep = hosts[h];
    if (ep) requestCancelled(ep, token);
  },
  diag(h, kind, p, n) {
    hosts[h]?._diag(A.DIAGNOSTICS[kind] ?? String(kind), str(p, n));
  },
  // PeerOptions::inspect: the core needs to look inside params. Member
  // `keep` (kp, kn: a name, or kn 0) stays a JS value: left out of the
  // text, handed over as an inbound handle through kept().
  materialize(h, sl, kp, kn) {
    const ep = hosts[h];
    let v = ep ? value(ep.out, sl) : undefined;
    kept = A.PAY_NONE;
    if (kn > 0 && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const name = str(kp, kn);
      if (Object.hasOwn(v, name)) {
        kept = pushInbound(v[name]);
        // Not delete: a dictionary copy costs µs per chunk.
        v = { ...v };
        v[name] = undefined;
      }
    }
    let t;
    try { t = JSON.stringify(v); } catch { return -1; }
    return t === undefined ? -1 : put(t);
  },
  kept() { return kept; },
  // PeerOptions::inspect_members: a ParamSpec check needs each member's
  // type only, so a member that is not exactly JSON (a Uint8Array, a Date,
  // -0, a BigInt) stays a JS value and reaches the handler unchanged. A
  // member the object's JSON text would leave out (undefined, a function)
  // is left out; a member name with a lone surrogate cannot be described (-1).
  // Nothing may throw into the core: params whose walk throws (a getter, a
  // length past what a string holds) cannot be described (-2).
  members(h, sl) {
    try {
      const ep = hosts[h];
      const v = ep ? value(ep.out, sl) : undefined;
      if (Array.isArray(v)) return put(`[${Array.from(v, member).join()}]`);  // holes too
      let t = '';
      for (const k of Object.keys(v)) {
        const m = v[k];
        if (m === undefined || typeof m === 'function' || typeof m === 'symbol') continue;
        if (/\p{Cs}/u.test(k)) return -1;
        t += `${t ? ',' : '{'}${JSON.stringify(k)}:${member(m)}`;
      }
      return put(t ? `${t}}` : '{}');
    } catch { return -2; }
  },
  // The params a ParamSpec check made, members that stayed JS values put
  // back in their place (wasm/host.cpp assemble), as an inbound value.
  assemble(p, n) {
    const [o, ...list] = JSON.parse(str(p, n));
    for (let i = 0; i < list.length; i += 2) o[list[i]] = inboundValue(list[i + 1]);
    return pushInbound(o);
  },
  now(h) { return hosts[h]?.clock.now() ?? 0; },
  // Streams and progress (docs/streams.md).
  chunk(h, token, seq, final, total, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._chunk(token, value(ep.out, sl, p, n), seq, final !== 0, total < 0 ? undefined : total);
  },
  progress(h, token, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._progress(token, value(ep.out, sl, p, n));
  },
  writable(h, token) {
    const ep = hosts[h];
    if (ep) writable(ep, token);
  },
  // PeerOptions::chunk_size: the value behind a chunk's handle, measured
  // (size.js); the core compares it with max_stream_chunk.
  chunkSize(h, handle, stop) {
    const ep = hosts[h];
    if (!ep) return 0;
    // Nothing may throw into the core. A value whose walk throws (a getter)
    // cannot be cloned either: the transport's send fails and says so.
    try {
      return chunkSize(handle >= A.PAY_INBOUND_BASE ? inboundValue(handle) : ep.out.peek(handle), stop);
    } catch { return 0; }
  },
  // CallOptions::on_metrics of call `token` (docs/protocol.md "Metrics").
  metrics(h, token, us, size) { hosts[h]?._metrics(token, us, size); },
  drain(h, p, n, downtime, reconnectAfter) {
    hosts[h]?._drained({ reason: str(p, n), downtime, reconnectAfter });
  },
};

/** Resolves once the core is loaded; rejects with an RPCError if it cannot be. */
export const ready = loadModule(hooks).then((m) => {
  if (m._weft_abi_hash() !== A.ABI_HASH)
    throw new Error('dist/weft_abi.js does not match dist/weft.wasm (rebuild: npm run build:wasm)');
  attach(m);
  for (const ep of waiting) ep._init();
  waiting.clear();
}).catch((err) => {
  loadError = new RPCError(ErrorCode.Closed, 'weft: the WebAssembly core failed to load: ' + (err?.message ?? err));
  for (const ep of waiting) ep._fail(loadError);
  waiting.clear();
  throw loadError;
});
ready.catch(() => {});

/** Calls ep._init() once the core is loaded (now, if it is), or ep._fail(). */
export function whenLoaded(ep) {
  if (X) ep._init();
  else if (loadError) ep._fail(loadError);
  else waiting.add(ep);
}
export function forget(ep) { waiting.delete(ep); }

/** Heap bytes in use inside the WebAssembly module (for leak checks). */
export function heapUsed() { return X ? X._weft_heap_used() : 0; }
/** The core's version, e.g. "0.1.0" (once loaded). */
export function coreVersion() {
  if (!X) return undefined;
  const p = X._weft_version();
  let n = 0;
  while (n < 64 && M.HEAPU8[p + n] !== 0) n++;
  return str(p, n);
}
