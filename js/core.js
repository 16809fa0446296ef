// The JS side of the WebAssembly core: moves messages, converts values,
// keeps the one timer per endpoint. Every protocol decision — validation,
// error codes, id correlation, batch rules, roles, foreign messages,
// cancellation answers, send failures, timeouts — is made by the C++ core;
// nothing here re-implements one.
//
// The boundary is declared once, in wasm/abi.h; its numbers come from
// dist/weft_abi.js, generated from the module at build time.
//  * Incoming messages are described member by member in descriptor records
//    (D_*); the core rebuilds and judges them (wasm/records.cpp).
//  * Outgoing messages arrive as records (R_*) and are built here.
//  * Payloads (params, result, error.data) never cross: they stay here and
//    the core holds handles (wasm/payloads.h). An outbound handle (a value
//    handed to the core) is released in exactly one place, `_record()`, when
//    the core hands it back — sent or discarded; its generation is checked
//    there. Inbound values (in a message being received) live on a stack
//    for the duration of the receive.
import { loadModule } from './loader.js';
import * as A from '../dist/weft_abi.js';

/** Error codes the core uses (weft/error.h, via wasm/abi.h). */
export const ErrorCode = A.CODES;

export class RPCError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = 'RPCError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

const NO_TIMEOUT = A.TIMEOUT_NONE;  // one call without a deadline (CallOptions::no_timeout)
const LOUD = new Set(['InvalidResponse', 'ErrorWithoutId', 'NotificationFailed']);
// The host's clock (the core has none): monotonic milliseconds and one timer.
// Endpoint option `clock` replaces it, e.g. with a simulated one in tests.
const systemClock = {
  now: typeof performance === 'object' ? () => performance.now() : () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
};

// ---- module state ----------------------------------------------------------
let M = null;      // the Emscripten module
let X = null;      // its raw exports
let loadError = null;
const hosts = [];  // core handle → endpoint
const waiting = new Set();
const inSlots = [];  // inbound payloads (a stack: a receive may re-enter)
let inTop = 0;       // inSlots in use
const INDEX = 2 ** A.PAY_INDEX_BITS;
const GEN_MAX = 2 ** (52 - A.PAY_INDEX_BITS) - 1;  // handles stay below PAY_INBOUND_BASE
const FREE = Symbol('free');  // an outbound slot no handle refers to
const dec = new TextDecoder();
const enc = new TextEncoder();
let inPtr = 0, inCap = 0, statusPtr = 0, descPtr = 0, descCap = 0;

function str(p, n) {
  const heap = M.HEAPU8;
  if (n < 48) {
    let s = '';
    for (let i = p, e = p + n; i < e; i++) {
      const c = heap[i];
      if (c > 127) return dec.decode(heap.subarray(p, p + n));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return dec.decode(heap.subarray(p, p + n));
}

function reserve(bytes) {
  if (bytes > inCap) {
    inCap = Math.max(bytes, inCap * 2, 4096);
    inPtr = X._weft_in(inCap);
  }
}

// Writes `s` as UTF-8 into the input buffer at `at`; returns the byte count.
// (Lone surrogates become U+FFFD, as TextEncoder writes them.)
function put(s, at = 0) {
  reserve(at + s.length * 3 + 1);
  const heap = M.HEAPU8;
  const base = inPtr + at;
  const len = s.length;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c > 127) return i + enc.encodeInto(s.slice(i), heap.subarray(base + i, inPtr + inCap)).written;
    heap[base + i] = c;
  }
  return len;
}

// The descriptor array, room for `n` doubles; its index in HEAPF64.
function desc(n) {
  if (n > descCap) {
    descCap = Math.max(n, descCap * 2, 256);
    descPtr = X._weft_desc(descCap);
  }
  return descPtr >> 3;
}

function status(i) { return M.HEAPF64[(statusPtr >> 3) + i]; }
function lastError() {
  const e = JSON.parse(str(X._weft_error(), status(1)));
  return new RPCError(e.code, e.message, e.data);
}

// ---- descriptors: JS values → D_* records ----------------------------------
function kindOf(v) {
  switch (typeof v) {
    case 'undefined': return A.VALUE_ABSENT;
    case 'string': return A.VALUE_STRING;
    case 'number': return Number.isFinite(v) ? A.VALUE_NUMBER : A.VALUE_NON_FINITE;
    case 'boolean': return v ? A.VALUE_TRUE : A.VALUE_FALSE;
    case 'bigint': return A.VALUE_NUMBER;
    case 'object': return v === null ? A.VALUE_NULL : Array.isArray(v) ? A.VALUE_ARRAY : A.VALUE_OBJECT;
    default: return A.VALUE_NULL;  // functions, symbols: not JSON; JSON.stringify would drop or null them
  }
}
function slot(v) { inSlots[inTop] = v; return A.PAY_INBOUND_BASE + inTop++; }

// A scalar member at F[d+k] (kind), F[d+k+1], F[d+k+2]; `at` is the next
// free byte of the input buffer, returned updated.
function scalar(F, d, k, v, at) {
  const kind = kindOf(v);
  F[d + k] = kind;
  if (kind === A.VALUE_STRING) { const n = put(v, at); F[d + k + 1] = at; F[d + k + 2] = n; return at + n; }
  if (kind === A.VALUE_NUMBER || kind === A.VALUE_NON_FINITE) F[d + k + 1] = Number(v);
  return at;
}

// Describes `m` (any value) in descriptor record `d`; returns the next free byte.
function describe(F, d, m, at) {
  for (let k = 0; k < A.D_SIZE; k++) F[d + k] = 0;
  const shape = kindOf(m);
  F[d + A.D_SHAPE] = shape;
  if (shape !== A.VALUE_OBJECT) return at;
  at = scalar(F, d, A.D_JSONRPC_KIND, m.jsonrpc, at);
  at = scalar(F, d, A.D_METHOD_KIND, m.method, at);
  const id = m.id;
  at = scalar(F, d, A.D_ID_KIND, id, at);
  if (typeof id === 'number' && Number.isFinite(id) && (!Number.isSafeInteger(id) || Object.is(id, -0))) {
    // The lexeme a JSON codec would have kept (String(-0) is "0": spell it).
    const n = put(Object.is(id, -0) ? '-0.0' : String(id), at);
    F[d + A.D_ID_B] = at; F[d + A.D_ID_C] = n; at += n;
  }
  const p = m.params;
  const pk = kindOf(p);
  if (pk === A.VALUE_OBJECT || pk === A.VALUE_ARRAY) { F[d + A.D_PARAMS_KIND] = pk; F[d + A.D_PARAMS_A] = slot(p); }
  else at = scalar(F, d, A.D_PARAMS_KIND, p, at);
  // A result member that is present counts even when undefined (structured
  // clone keeps it): the caller then gets undefined.
  if ('result' in m) { F[d + A.D_RESULT_KIND] = A.VALUE_PAYLOAD; F[d + A.D_RESULT_A] = slot(m.result); }
  const e = m.error;
  const ek = kindOf(e);
  F[d + A.D_ERROR_KIND] = ek;
  if (ek === A.VALUE_OBJECT) {
    at = scalar(F, d, A.D_CODE_KIND, e.code, at);
    at = scalar(F, d, A.D_MESSAGE_KIND, e.message, at);
    if (e.data !== undefined) { F[d + A.D_DATA_KIND] = A.VALUE_PAYLOAD; F[d + A.D_DATA_A] = slot(e.data); }
  }
  return at;
}

// ---- records: R_* → JS messages ---------------------------------------------
function recId(F, r) {
  switch (F[r + A.R_ID_KIND]) {
    case A.ID_INT: return F[r + A.R_ID_A];
    case A.ID_STRING: return str(F[r + A.R_ID_A], F[r + A.R_ID_B]);
    case A.ID_LEXEME: return Number(str(F[r + A.R_ID_A], F[r + A.R_ID_B]));  // as JSON.parse reads it
    default: return null;
  }
}

// A payload the core hands to JS (a call's result, a handler's params).
function value(ep, sl, p, n) {
  if (sl >= A.PAY_INBOUND_BASE) return inSlots[sl - A.PAY_INBOUND_BASE];
  if (sl >= 0) return ep._peek(sl);
  if (sl === A.PAY_TEXT) return JSON.parse(str(p, n));
  return undefined;
}

// ---- hooks the core calls (wasm/host.cpp) -----------------------------------
const hooks = {
  send(h, recs, count, batch, text) {
    const ep = hosts[h];
    return ep ? ep._send(recs, count, batch, text) : -1;
  },
  discard(h, recs, count) {
    const ep = hosts[h];
    if (!ep) return;
    const F = M.HEAPF64;
    for (let i = 0; i < count; i++) ep._record(F, (recs >> 3) + i * A.R_SIZE, 0);
  },
  settle(h, token, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._settle(token, value(ep, sl, p, n));
  },
  fail(h, token, code, mp, mn, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._settleError(token, code, str(mp, mn), value(ep, sl, p, n));
  },
  dispatch(h, fn, token, sl, p, n) {
    const ep = hosts[h];
    return ep ? ep._dispatch(fn, token, value(ep, sl, p, n)) : A.DISPATCH_DONE;
  },
  cancelled(h, token) {
    const ep = hosts[h];
    if (ep) ep._cancelled(token);
  },
  diag(h, kind, p, n) {
    const ep = hosts[h];
    if (ep) ep._diag(A.DIAGNOSTICS[kind] ?? String(kind), str(p, n));
  },
  materialize(h, sl) {
    const ep = hosts[h];
    let t;
    try { t = JSON.stringify(ep ? value(ep, sl) : undefined); } catch { return -1; }
    return t === undefined ? -1 : put(t);
  },
};

export const ready = loadModule(hooks).then(
  (m) => {
    M = m;
    X = m;  // m._weft_* become the raw exports after their first call
    if (X._weft_abi_hash() !== A.ABI_HASH)
      throw new Error('dist/weft_abi.js does not match dist/weft.wasm (rebuild: npm run build:wasm)');
    statusPtr = X._weft_status();
    inCap = 4096;
    inPtr = X._weft_in(inCap);
    desc(256);
    for (const ep of waiting) ep._init();
    waiting.clear();
  },
).catch((err) => {
  loadError = new RPCError(ErrorCode.Closed, 'weft: the WebAssembly core failed to load: ' + (err?.message ?? err));
  for (const ep of waiting) ep._fail(loadError);
  waiting.clear();
  throw loadError;
});
ready.catch(() => {});

/** Heap bytes in use inside the WebAssembly module (for leak checks). */
export function heapUsed() { return X ? X._weft_heap_used() : 0; }
export function coreVersion() { return X ? str(X._weft_version(), 32).replace(/\0.*$/s, '') : undefined; }

// ---- the endpoint -----------------------------------------------------------
class ServeContext {
  constructor(method) { this.method = method; this._ac = null; this._cancelled = false; }
  get signal() {
    if (!this._ac) {
      this._ac = new AbortController();
      if (this._cancelled) this._ac.abort(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
    }
    return this._ac.signal;
  }
  _cancel() {
    this._cancelled = true;
    if (this._ac) this._ac.abort(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
  }
}

export class Endpoint {
  constructor(transport, role, options = {}) {
    this.transport = transport;
    this.role = role;
    this.text = false;
    this.h = 0;
    this.timeout = options.timeout === undefined ? 10000 : options.timeout;
    this.limits = options.limits ?? {};
    this.onDiagnostic = options.onDiagnostic;
    this.clock = options.clock ?? systemClock;
    this.handlers = [];
    this.calls = [];            // token → call record
    this.freeCalls = [];
    this.live = 0;
    this.serving = [];          // reply token → ServeContext of an async handler
    this.outs = [];             // outbound payload index → value until the core hands it back
    this.outGen = [];           // index → generation of the handle that holds it (0: free)
    this.outFree = [];
    this.outCount = 0;
    this.timer = null;
    this.armedAt = -1;
    this.idle = false;          // timer left running with nothing pending (unref'd)
    this.closedError = null;
    this.destroyed = false;
    this.queue = [];
    this.ignoreForeign = options.ignoreForeign ?? true;  // postMessage channels carry other traffic
    if (transport) {
      transport.onMessage((data) => this._onMessage(data));
      if (typeof transport.onClose === 'function')
        transport.onClose(() => this._close(ErrorCode.Closed, 'Transport closed'));
      if (typeof transport.onSendError === 'function')
        transport.onSendError((m, e) => this._sendFailedLater(m, e));
    }
    if (X) this._init();
    else if (loadError) this._fail(loadError);
    else waiting.add(this);
  }

  _create() {
    const t = this.timeout;
    const l = this.limits;
    return X._weft_create(this.role, this.ignoreForeign ? 1 : 0, t > 0 && t !== Infinity ? t : -1,
      l.maxInFlight ?? 0, l.maxPending ?? 0, l.maxBatch ?? 0);
  }

  _init() {
    if (this.destroyed) return;
    this.h = this._create();
    hosts[this.h] = this;
    const q = this.queue;
    this.queue = null;
    for (const op of q) {
      switch (op[0]) {
        case 'm': this._register(op[1], op[2], op[3], op[4]); break;
        case 'c': if (!op[1].done) this._call(op[1], op[2], op[3], op[4], op[5]); break;
        case 'n': this.notify(op[1], op[2]); break;
        case 'b': this._batch(op[1], op[2], op[3]); break;
        case 'r': this._receive(op[1], op[2]); break;
        case 'x': this._close(op[1], op[2]); break;
      }
    }
  }

  _fail(err) {
    this.closedError = err;
    const q = this.queue ?? [];
    this.queue = [];
    for (const op of q) {
      if (op[0] === 'c') op[1].reject(err);
      if (op[0] === 'b') for (const r of op[1]) if (r.rec) r.rec.reject(err);
    }
  }

  get ready() { return ready; }

  // -- incoming -----------------------------------------------------------
  _onMessage(data) {
    if (this.destroyed) return;
    if (this.queue) this.queue.push(['r', data]);
    else this._receive(data);
  }

  // Any value: the core decides what it is (and what to ignore: PeerOptions
  // role and ignore_foreign).
  _receive(data) {
    if (!this.h) return;
    const base = inTop;
    try {
      const batch = Array.isArray(data);
      const n = batch ? data.length : 1;
      let d = desc(n * A.D_SIZE);
      const F = M.HEAPF64;
      let at = 0;
      if (batch) for (let i = 0; i < n; i++, d += A.D_SIZE) at = describe(F, d, data[i], at);
      else describe(F, d, data, at);
      X._weft_receive(this.h, n, batch ? 1 : 0);
    } catch (e) {
      this._diag('BadMessage', 'message dropped: ' + (e?.message ?? e));
    } finally {
      for (let i = base; i < inTop; i++) inSlots[i] = undefined;
      inTop = base;
    }
    if (this.live === 0) this._idle();
  }

  // -- payloads handed to the core ------------------------------------------
  // A handle for `v`: generation × 2^INDEX_BITS + index. The value is the
  // core's until the handle comes back in a record (_record).
  _out(v) {
    const n = this.outFree.length ? this.outFree.pop() : this.outs.length;
    this.outs[n] = v;
    const g = (this.outGen[n] = ((this.outGen[n] ?? 0) % GEN_MAX) + 1);
    this.outCount++;
    return g * INDEX + n;
  }
  _peek(handle) {
    const n = handle % INDEX;
    if (this.outGen[n] !== Math.floor(handle / INDEX) || this.outs[n] === FREE)
      throw new Error(`weft: stale payload handle ${handle}`);
    return this.outs[n];
  }
  // The one place an outbound payload is released (sent or dropped).
  _release(handle) {
    const v = this._peek(handle);
    const n = handle % INDEX;
    this.outs[n] = FREE;
    this.outFree.push(n);
    this.outCount--;
    return v;
  }
  // Call/notify params: [kind, handle] (objects and arrays are payloads; any
  // other value goes as its kind, for the core to refuse).
  _params(p) {
    const k = kindOf(p);
    if (k === A.VALUE_OBJECT || k === A.VALUE_ARRAY) return [k, this._out(p)];
    return [k, k === A.VALUE_NUMBER ? Number(p) : 0];
  }

  // -- outgoing: R_* records → messages ---------------------------------------
  // Messages from the core: `count` records at `recs`. Returns -1, or the
  // byte length of the transport's error in the input buffer.
  _send(recs, count, batch, text) {
    const F = M.HEAPF64;
    let o;
    if (batch) {
      o = new Array(count);
      for (let i = 0; i < count; i++) o[i] = this._record(F, (recs >> 3) + i * A.R_SIZE, text);
    } else {
      o = this._record(F, recs >> 3, text);
    }
    try {
      this.transport.send(o);
      return -1;
    } catch (e) {
      // The core decides what follows (Peer::undelivered) and reports it.
      for (const m of Array.isArray(o) ? o : [o]) this._noteSendError(m, e);
      return put(String(e?.message ?? e));
    }
  }
  // Builds the message of record `r`, releasing its payload handle.
  _record(F, r, text) {
    const kind = F[r + A.R_KIND];
    const pay = F[r + A.R_PAY];
    let v;
    if (pay >= A.PAY_INBOUND_BASE) v = inSlots[pay - A.PAY_INBOUND_BASE];
    else if (pay >= 0) v = this._release(pay);
    else if (pay === A.PAY_TEXT && text) v = JSON.parse(str(text + F[r + A.R_TEXT_P], F[r + A.R_TEXT_N]));
    if (kind === A.MSG_RESULT) return { jsonrpc: '2.0', result: v === undefined ? null : v, id: recId(F, r) };
    if (kind === A.MSG_REQUEST || kind === A.MSG_NOTIFICATION) {
      const m = { jsonrpc: '2.0', method: str(F[r + A.R_STR_P], F[r + A.R_STR_N]) };
      if (pay !== A.PAY_NONE) m.params = v;
      if (kind === A.MSG_REQUEST) m.id = recId(F, r);
      return m;
    }
    const code = F[r + A.R_CODE], message = str(F[r + A.R_STR_P], F[r + A.R_STR_N]);
    const error = v === undefined ? { code, message } : { code, message, data: v };
    return { jsonrpc: '2.0', error, id: recId(F, r) };
  }
  // A request that could not be sent: its call's rejection gets `e` as cause.
  _noteSendError(m, e) {
    if (m === null || typeof m !== 'object' || typeof m.method !== 'string' || typeof m.id !== 'number') return;
    const rec = this.calls.find((r) => r !== undefined && !r.done && r.id === m.id);
    if (rec) rec.sendError = e;
  }
  // transport.onSendError: a message the transport accepted could not be
  // posted after all. The core decides what follows (Peer::undelivered).
  _sendFailedLater(o, e) {
    if (!this.h || o === null || typeof o !== 'object' || Array.isArray(o)) return;
    this._noteSendError(o, e);
    const kind = typeof o.method === 'string' ? (o.id === undefined ? A.MSG_NOTIFICATION : A.MSG_REQUEST)
      : o.error !== undefined ? A.MSG_ERROR : A.MSG_RESULT;
    const d = desc(A.D_SIZE);
    const F = M.HEAPF64;
    for (let k = 0; k < A.D_SIZE; k++) F[d + k] = 0;
    const mlen = put(String(e?.message ?? e));
    scalar(F, d, A.D_ID_KIND, o.id, mlen);
    X._weft_undelivered(this.h, kind, mlen);
  }

  request(method, params, options) {
    const signal = options?.signal;
    const timeout = options?.timeout;
    return new Promise((resolve, reject) => {
      const rec = { resolve, reject, id: 0, done: false, signal, onAbort: null, group: null };
      if (this.closedError && (this.queue || !this.h)) return reject(this.closedError);
      if (signal?.aborted) return reject(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
      const t = timeout === undefined ? -1 : timeout > 0 && timeout !== Infinity ? timeout : NO_TIMEOUT;
      if (this.queue) {
        this.queue.push(['c', rec, method, params, t, this.clock.now()]);
        if (signal) {
          rec.onAbort = () => {
            rec.done = true;
            reject(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
          };
          signal.addEventListener('abort', rec.onAbort, { once: true });
        }
        return;
      }
      this._call(rec, method, params, t, this.clock.now());
    });
  }

  _token(rec) {
    const t = this.freeCalls.length ? this.freeCalls.pop() : this.calls.length;
    this.calls[t] = rec;
    this.live++;
    return t;
  }

  _call(rec, method, params, timeout, t) {
    if (rec.onAbort) { rec.signal.removeEventListener('abort', rec.onAbort); rec.onAbort = null; }
    if (!this.h) return rec.reject(this.closedError ?? new RPCError(ErrorCode.Closed, 'Endpoint destroyed'));
    const token = this._token(rec);
    const [kind, arg] = params === undefined ? [A.VALUE_ABSENT, 0] : this._params(params);
    const mlen = put(typeof method === 'string' ? method : String(method));
    const id = X._weft_call(this.h, token, mlen, kind, arg, timeout, t);
    if (id === 0) {
      this.calls[token] = undefined;
      this.freeCalls.push(token);
      this.live--;
      rec.reject(lastError());
      return;
    }
    rec.id = id;
    this._arm(status(0), t);
    if (!rec.done && rec.signal) {
      rec.onAbort = () => { if (this.h && !rec.done) X._weft_cancel(this.h, rec.id); };
      rec.signal.addEventListener('abort', rec.onAbort, { once: true });
    }
  }

  _finish(token) {
    const rec = this.calls[token];
    if (!rec) return undefined;
    this.calls[token] = undefined;
    this.freeCalls.push(token);
    rec.done = true;
    if (--this.live === 0) this._idle();
    if (rec.onAbort) rec.signal.removeEventListener('abort', rec.onAbort);
    if (rec.group && --rec.group.left === 0) rec.group.signal.removeEventListener('abort', rec.group.onAbort);
    return rec;
  }

  _settle(token, v) {
    const rec = this._finish(token);
    if (rec) rec.resolve(v);
  }

  _settleError(token, code, message, data) {
    const rec = this._finish(token);
    if (!rec) return;
    const err = new RPCError(code, message, data);
    if (rec.signal?.aborted && code === ErrorCode.RequestCancelled) err.cause = rec.signal.reason;
    else if (rec.sendError && code === ErrorCode.Closed) err.cause = rec.sendError;
    rec.reject(err);
  }

  notify(method, params) {
    if (this.destroyed) return;
    if (this.queue) { this.queue.push(['n', method, params]); return; }
    if (!this.h) return;
    const [kind, arg] = params === undefined ? [A.VALUE_ABSENT, 0] : this._params(params);
    const mlen = put(typeof method === 'string' ? method : String(method));
    if (!X._weft_notify(this.h, mlen, kind, arg)) this._diag('NotifyFailed', lastError().message);
  }

  batch(entries, options) {
    const opts = options ?? {};
    const signal = opts.signal;
    const t = opts.timeout === undefined ? -1 : opts.timeout > 0 && opts.timeout !== Infinity ? opts.timeout : NO_TIMEOUT;
    const items = entries.map((e) => {
      if (e.notification) return { e, rec: null, p: Promise.resolve(undefined) };
      const item = { e, rec: null, p: null };
      item.p = new Promise((resolve, reject) => { item.rec = { resolve, reject, id: 0, done: false, signal, onAbort: null, group: null }; });
      return item;
    });
    // As request(): an aborted signal sends nothing and rejects every call.
    if (signal?.aborted) for (const it of items) it.rec?.reject(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
    else if (this.closedError && (this.queue || !this.h)) for (const it of items) it.rec?.reject(this.closedError);
    else if (this.queue) this.queue.push(['b', items, t, this.clock.now()]);
    else this._batch(items, t, this.clock.now());
    return items.map((it) => it.p);
  }

  _batch(items, timeout, t) {
    if (!this.h) { for (const it of items) it.rec?.reject(this.closedError ?? new RPCError(ErrorCode.Closed, 'Endpoint destroyed')); return; }
    const calls = items.filter((it) => it.rec);
    const signal = calls[0]?.rec.signal;
    if (signal?.aborted) { for (const it of calls) it.rec.reject(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled')); return; }
    let d = desc(items.length * A.B_SIZE);
    const F = M.HEAPF64;
    let at = 0;
    for (const it of items) {
      const p = it.e.params;
      const [kind, arg] = p === undefined ? [A.VALUE_ABSENT, 0] : this._params(p);
      const method = String(it.e.method);
      const n = put(method, at);
      it.token = it.rec ? this._token(it.rec) : -1;
      F[d + A.B_METHOD_AT] = at; F[d + A.B_METHOD_LEN] = n;
      F[d + A.B_PARAMS_KIND] = kind; F[d + A.B_PARAMS_A] = arg; F[d + A.B_TOKEN] = it.token;
      at += n;
      d += A.B_SIZE;
    }
    const n = X._weft_batch(this.h, items.length, timeout, t);
    if (n < 0) {
      const err = lastError();
      for (const it of calls) {
        this.calls[it.token] = undefined;
        this.freeCalls.push(it.token);
        this.live--;
        it.rec.reject(err);
      }
      return;
    }
    this._arm(status(0), t);
    const ids = X._weft_ids() >> 3;
    calls.forEach((it, k) => { it.rec.id = M.HEAPF64[ids + k]; });
    const open = calls.filter((it) => !it.rec.done);
    if (signal && open.length) {
      // One listener for the batch, removed when its last call settles (_finish).
      const group = { signal, left: open.length, onAbort: null };
      group.onAbort = () => { for (const it of open) if (!it.rec.done && this.h) X._weft_cancel(this.h, it.rec.id); };
      for (const it of open) it.rec.group = group;
      signal.addEventListener('abort', group.onAbort, { once: true });
    }
  }

  // -- serving ----------------------------------------------------------------
  method(name, handler, spec) { this._register(name, handler, 0, spec); return this; }
  onNotify(name, handler) { this._register(name, handler, 1, undefined); return this; }

  _register(name, handler, flags, spec) {
    if (typeof handler !== 'function') throw new TypeError('handler must be a function');
    if (this.queue) { this.queue.push(['m', name, handler, flags, spec]); return; }
    if (!this.h) return;
    const fn = this.handlers.push({ handler, flags, name }) - 1;
    const nlen = put(String(name));
    const slen = spec ? put(JSON.stringify(spec), nlen) : 0;
    X._weft_method(this.h, nlen, fn, flags, slen);
  }

  _dispatch(fn, token, params) {
    const entry = this.handlers[fn];
    if (token < 0) {  // a notification: never answered
      try {
        const r = entry.handler(params);
        if (r && typeof r.then === 'function') r.then(undefined, (e) => this._diag('NotificationFailed', String(e?.message ?? e)));
      } catch (e) {
        this._diag('NotificationFailed', String(e?.message ?? e));
      }
      return A.DISPATCH_DONE;
    }
    const ctx = new ServeContext(entry.name);
    let r;
    try {
      r = entry.handler(params, ctx);
    } catch (e) {
      this._replyError(token, e);
      return A.DISPATCH_DONE;
    }
    if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
      this.serving[token] = ctx;
      r.then((v) => { if (this.serving[token] === ctx) this._reply(token, v); },
        (e) => { if (this.serving[token] === ctx) this._replyError(token, e); });
      return A.DISPATCH_LATER;
    }
    return this._out(r === undefined ? null : r);
  }

  // The answer's payload handle goes to the core, which sends or discards it.
  _reply(token, v) {
    this.serving[token] = undefined;
    if (this.h) X._weft_reply(this.h, token, this._out(v === undefined ? null : v));
  }

  // An RPCError's code, message and data; for anything else the core
  // answers -32603 with the error's message (error_code_from, weft/error.h).
  _replyError(token, e) {
    this.serving[token] = undefined;
    if (!this.h) return;
    const rpc = e instanceof RPCError;
    const code = rpc && typeof e.code === 'number' ? e.code : NaN;
    const message = rpc ? String(e.message) : typeof e?.message === 'string' ? e.message : '';
    const handle = rpc && e.data !== undefined ? this._out(e.data) : A.PAY_NONE;
    X._weft_reply_error(this.h, token, code, put(message), handle);
  }

  // The request was cancelled ($/cancelRequest, or close) and the core
  // answers it -32800: the handler's signal aborts, and whatever it answers
  // later still goes to the core, which discards it and frees the token.
  _cancelled(token) {
    this.serving[token]?._cancel();
  }

  _diag(kind, message) {
    if (this.onDiagnostic) {
      try { this.onDiagnostic(kind, message); } catch { /* a diagnostic sink must not break the endpoint */ }
    } else if (LOUD.has(kind)) {
      console.warn(`[weft] ${kind}: ${message}`);
    }
  }

  // -- time ---------------------------------------------------------------------
  // One timer per endpoint, for the core's next deadline. A timer that fires
  // no later than the deadline is kept rather than replaced (the core's
  // advance() decides what is due and the timer is re-armed from its answer),
  // and one left over when nothing is pending is unref'd (Node) instead of
  // cleared: calls that come and go would otherwise set and clear a timer each.
  _arm(deadline, t) {
    if (deadline < 0) return this._disarm();
    if (this.timer !== null) {
      if (this.armedAt <= deadline) {
        if (this.idle) { this.idle = false; this.timer.ref?.(); }
        return;
      }
      this.clock.clearTimeout(this.timer);
    }
    this.idle = false;
    this.armedAt = deadline;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.armedAt = -1;
      this.idle = false;
      if (!this.h) return;
      const t = this.clock.now();
      const d = X._weft_advance(this.h, t);
      if (this.live > 0) this._arm(d, t);
    }, Math.max(0, Math.ceil(deadline - (t ?? this.clock.now()))));
  }
  _idle() {
    if (this.timer === null || this.idle) return;
    if (typeof this.timer.unref !== 'function') return this._disarm();
    this.idle = true;
    this.timer.unref();
  }
  _disarm() {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.armedAt = -1;
    this.idle = false;
  }

  // -- lifetime -----------------------------------------------------------------
  _close(code, message) {
    if (this.queue) {
      const err = new RPCError(code, message);
      this.closedError = err;
      this._fail(err);
      this.queue = [];
      return;
    }
    if (!this.h || this.closedError) return;
    this.closedError = new RPCError(code, message);
    X._weft_close(this.h, code, put(message));
    this._disarm();
  }

  destroy() {
    if (this.destroyed) return;
    this._close(ErrorCode.Closed, 'Endpoint destroyed');
    this.destroyed = true;
    waiting.delete(this);
    this._disarm();
    try { this.transport?.destroy?.(); } catch { /* ignore */ }
    const h = this.h;
    if (h) {
      // Never free the core under its own call stack: destroy() may be called
      // from a handler or a settle callback.
      queueMicrotask(() => {
        X._weft_destroy(h);
        hosts[h] = undefined;
        this.outs.length = 0;
        this.outGen.length = 0;
        this.outFree.length = 0;
        this.outCount = 0;
        this.serving.length = 0;
      });
      this.h = 0;
    }
  }

  /** Bookkeeping, for tests and leak checks. */
  stats() {
    return {
      pending: this.h ? X._weft_pending(this.h) : 0,
      inFlight: this.h ? X._weft_in_flight(this.h) : 0,
      calls: this.live,
      payloads: this.outCount,
      heap: heapUsed(),
    };
  }
}

export const Role = { Peer: A.ROLE_PEER, Client: A.ROLE_CLIENT, Server: A.ROLE_SERVER };
