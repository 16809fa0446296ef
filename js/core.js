// The JS side of the WebAssembly core: moves messages, converts values,
// keeps the one timer per endpoint. Every protocol decision — validation,
// error codes, id correlation, batch rules, timeouts, cancellation — is made
// by the C++ core (wasm/weft_wasm.cpp); nothing here re-implements it.
//
// Payload convention (see weft_wasm.cpp): params/result/error.data stay here,
// numbered; the core holds a marker of the right JSON type in their place.
// Incoming messages reach the core as a descriptor of their members (or, for
// unusual shapes, as envelope JSON text with {"":N} / [{"":N}] in place of
// payloads); outgoing ones leave it as numeric records from which the plain
// objects are built here.
import { loadModule } from './loader.js';

/** Error codes the core uses (weft/error.h). */
export const ErrorCode = Object.freeze({
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerError: -32000,
  Timeout: -32001,
  Closed: -32002,
  Overloaded: -32003,
  RequestCancelled: -32800,
});

export class RPCError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = 'RPCError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

const DIAG = ['UnknownResponse', 'InvalidResponse', 'UnhandledNotification', 'NotificationFailed',
  'ErrorWithoutId', 'LateReply', 'BadFrame'];
const LOUD = new Set(['InvalidResponse', 'ErrorWithoutId', 'NotificationFailed']);
const NO_TIMEOUT = -2;  // "no timeout" for one call (CallOptions::no_timeout); -1 is the default
const now = typeof performance === 'object' ? () => performance.now() : () => Date.now();

// ---- module state ----------------------------------------------------------
let M = null;      // the Emscripten module
let X = null;      // its raw exports
let loadError = null;
const hosts = [];  // core handle → endpoint
const waiting = new Set();
const inSlots = [];  // payloads of the message being received (a stack: receive may re-enter)
let inTop = 0;       // inSlots in use
const dec = new TextDecoder();
const enc = new TextEncoder();
let inPtr = 0, inCap = 0, statusPtr = 0, descPtr = 0;
// Lone surrogates make JSON text the core rejects; messages holding them take
// the envelope text path so that they are judged exactly as before.
const wellFormed = typeof String.prototype.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !/[\uD800-\uDFFF]/.test(s);

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
// `strict`: returns -1 instead if `s` has lone surrogates (see wellFormed).
function put(s, at = 0, strict = false) {
  reserve(at + s.length * 3 + 1);
  const heap = M.HEAPU8;
  const base = inPtr + at;
  const len = s.length;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c > 127) {
      if (strict && !wellFormed(s)) return -1;
      return i + enc.encodeInto(s.slice(i), heap.subarray(base + i, inPtr + inCap)).written;
    }
    heap[base + i] = c;
  }
  return len;
}
const putWell = (s, at) => put(s, at, true);

function status(i) { return M.HEAPF64[(statusPtr >> 3) + i]; }
function lastError() {
  const e = JSON.parse(str(X._weft_error(), status(1)));
  return new RPCError(e.code, e.message, e.data);
}

// ---- envelopes: JS message → text for the core ---------------------------
// A value of the same JSON type as `v`, without its content: for fields the
// core only type-checks when they are wrong (jsonrpc, method, id, params).
function typeOnly(v) {
  switch (typeof v) {
    case 'string': return '""';
    case 'number': case 'bigint': return '0';
    case 'boolean': return v ? 'true' : 'false';
    case 'object': return v === null ? 'null' : Array.isArray(v) ? '[]' : '{}';
    default: return 'null';
  }
}
function idText(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'true';  // NaN: not JSON → invalid id
  return v === null ? 'null' : typeOnly(v);
}
function slot(v) { inSlots[inTop] = v; return inTop++; }
// Envelope text path: which members of the message hold payload markers
// (weft_wasm.cpp: kParamsSlot, kResultSlot, kDataSlot).
let envBits = 0;
function slotText(v, bit) { envBits |= bit; return '{"":' + slot(v) + '}'; }
function inline(v) {
  try { const t = JSON.stringify(v); return t === undefined ? 'null' : t; } catch { return typeOnly(v); }
}

function envelope(m, ep) {
  envBits = 0;
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return typeOnly(m);
  let s = '{';
  let sep = '';
  const j = m.jsonrpc;
  if (j !== undefined) { s += '"jsonrpc":' + (j === '2.0' ? '"2.0"' : typeof j === 'string' ? JSON.stringify(j) : typeOnly(j)); sep = ','; }
  const method = m.method;
  if (method !== undefined) { s += sep + '"method":' + (typeof method === 'string' ? JSON.stringify(method) : typeOnly(method)); sep = ','; }
  const p = m.params;
  if (p !== undefined) {
    s += sep + '"params":';
    if (p === null || typeof p !== 'object') s += typeOnly(p);
    else if (typeof method === 'string' && (ep.inspect.has(method) || method.startsWith('$/'))) s += inline(p);
    else s += Array.isArray(p) ? '[' + slotText(p, 1) + ']' : slotText(p, 1);
    sep = ',';
  }
  if ('result' in m) { s += sep + '"result":' + slotText(m.result, 2); sep = ','; }
  const e = m.error;
  if (e !== undefined) {
    s += sep + '"error":';
    if (e === null || typeof e !== 'object' || Array.isArray(e)) s += typeOnly(e);
    else {
      const c = e.code, msg = e.message;
      s += '{"code":' + (typeof c === 'number' && Number.isFinite(c) ? String(c) : typeOnly(c)) +
        ',"message":' + (typeof msg === 'string' ? JSON.stringify(msg) : typeOnly(msg));
      if (e.data !== undefined) s += ',"data":' + slotText(e.data, 4);
      s += '}';
    }
    sep = ',';
  }
  if (m.id !== undefined) s += sep + '"id":' + idText(m.id);
  return s + '}';
}

// ---- descriptors: JS message → weft_receive_obj ----------------------------
// Fills the descriptor (layout: weft_receive_obj in weft_wasm.cpp) for a
// single message whose members have the usual types; false (nothing written,
// no payload taken) when it needs the envelope text path instead.
function describe(m, ep) {
  if (m.jsonrpc !== '2.0') return false;
  const method = m.method;
  const p = m.params;
  let at = 0, mlen = -1;
  if (method !== undefined) {
    if (typeof method !== 'string') return false;
    if (p !== undefined && p !== null && typeof p === 'object' && (ep.inspect.has(method) || method.startsWith('$/'))) return false;  // inline params
    mlen = putWell(method, 0);
    if (mlen < 0) return false;
    at = mlen;
  }
  if (p !== undefined && (p === null || typeof p !== 'object')) return false;
  const e = m.error;
  let elen = -1, eat = 0, code = 0, data;
  if (e !== undefined) {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return false;
    code = e.code;
    const msg = e.message;
    if (!Number.isSafeInteger(code) || typeof msg !== 'string') return false;
    elen = putWell(msg, at);
    if (elen < 0) return false;
    eat = at;
    at += elen;
    data = e.data;
  }
  const id = m.id;
  let ik = 0, iv = 0, ilen = 0, iat = 0;
  if (id !== undefined) {
    if (id === null) ik = 1;
    else if (typeof id === 'string') {
      ik = 3;
      ilen = putWell(id, at);
      if (ilen < 0) return false;
      iat = at;
      iv = ilen;
    } else if (typeof id === 'number') {
      if (Number.isSafeInteger(id)) { ik = 2; iv = id; }
      else if (Number.isFinite(id)) { ik = 4; iv = id; iat = at; ilen = put(String(id), at); }
      else return false;  // NaN, ±Infinity: not JSON
    } else return false;
  }
  const F = M.HEAPF64;
  const d = descPtr >> 3;
  F[d] = mlen; F[d + 1] = 0;
  if (p === undefined) F[d + 2] = 0;
  else { F[d + 2] = Array.isArray(p) ? 2 : 1; F[d + 3] = slot(p); }
  F[d + 5] = 'result' in m ? slot(m.result) : -1;
  F[d + 6] = elen;
  if (elen >= 0) { F[d + 7] = code; F[d + 8] = eat; F[d + 9] = data === undefined ? -1 : slot(data); }
  F[d + 10] = ik;
  if (ik === 3) { F[d + 11] = ilen; F[d + 12] = iat; }
  else if (ik === 4) { F[d + 11] = iv; F[d + 12] = ilen; F[d + 13] = iat; }
  else F[d + 11] = iv;
  return true;
}

// ---- records: weft_wasm.cpp send_records → JS messages ---------------------
const REC = 10;  // doubles per record (kRec)
function recId(F, r) {
  switch (F[r + 1]) {
    case 1: return F[r + 2];
    case 2: return str(F[r + 2], F[r + 3]);
    case 3: return Number(str(F[r + 2], F[r + 3]));  // the lexeme, as JSON.parse reads it
    default: return null;
  }
}

// ---- hooks the core calls ---------------------------------------------------
const hooks = {
  emit(h, p, n) {  // text path
    const ep = hosts[h];
    if (ep) ep._emit(str(p, n));
  },
  send(h, recs, count, batch, text) {
    const ep = hosts[h];
    if (ep) ep._send(recs, count, batch, text);
  },
  settle(h, token, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._settle(token, sl, sl === -1 ? undefined : sl >= 0 ? inSlots[sl] : str(p, n));
  },
  fail(h, token, code, mp, mn, sl, p, n) {
    const ep = hosts[h];
    if (ep) ep._settleError(token, code, str(mp, mn), sl >= 0 ? inSlots[sl] : sl === -2 ? JSON.parse(str(p, n)) : undefined);
  },
  dispatch(h, fn, token, sl, p, n) {
    const ep = hosts[h];
    if (!ep) return -2;
    let params;
    if (sl >= 0) params = ep.text ? sl : inSlots[sl];
    else if (sl === -2) params = ep.text ? str(p, n) : JSON.parse(str(p, n));
    return ep._dispatch(fn, token, params);
  },
  cancelled(h, token) {
    const ep = hosts[h];
    if (ep) ep._cancelled(token);
  },
  diag(h, kind, p, n) {
    const ep = hosts[h];
    if (ep) ep._diag(DIAG[kind] ?? String(kind), str(p, n));
  },
};

export const ready = loadModule(hooks).then(
  (m) => {
    M = m;
    X = m;  // m._weft_* become the raw exports after their first call
    statusPtr = X._weft_status();
    descPtr = X._weft_desc();
    inCap = 4096;
    inPtr = X._weft_in(inCap);
    for (const ep of waiting) ep._init();
    waiting.clear();
  },
  (err) => {
    loadError = new RPCError(ErrorCode.Closed, 'weft: the WebAssembly core failed to load: ' + (err?.message ?? err));
    for (const ep of waiting) ep._fail(loadError);
    waiting.clear();
    throw loadError;
  },
);
ready.catch(() => {});

/** Heap bytes in use inside the WebAssembly module (for leak checks). */
export function heapUsed() { return X ? X._weft_heap_used() : 0; }
export function coreVersion() { return M ? M.version() : undefined; }

// ---- the endpoint -----------------------------------------------------------
const ROLE_PEER = 0, ROLE_CLIENT = 1, ROLE_SERVER = 2;

function isResponse(m) {
  return m !== null && typeof m === 'object' && !('method' in m) && ('result' in m || 'error' in m);
}

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
    this.handlers = [];
    this.inspect = new Set();   // methods whose params the core checks (declared ParamSpec)
    this.calls = [];            // token → call record
    this.freeCalls = [];
    this.live = 0;
    this.serving = [];          // reply token → ServeContext of an async handler
    this.outs = [];             // payload number → value until its message leaves (undefined: free)
    this.outGen = [];           // payload number → times it was handed out (see _defer)
    this.outFree = [];
    this.outCount = 0;
    this.deferred = [];         // [number, generation] pairs
    this.timer = null;
    this.armedAt = -1;
    this.idle = false;          // timer left running with nothing pending (unref'd)
    this.closedError = null;
    this.destroyed = false;
    this.queue = [];
    this.sendError = null;
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
    return X._weft_create(0, t > 0 && t !== Infinity ? t : -1, l.maxInFlight ?? 0, l.maxPending ?? 0, l.maxBatch ?? 0);
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
    if (Array.isArray(data)) {
      if (!data.some((e) => e !== null && typeof e === 'object' && e.jsonrpc === '2.0')) return;
      if (this.role === ROLE_CLIENT) data = data.filter((e) => !(e !== null && typeof e === 'object' && 'method' in e));
      else if (this.role === ROLE_SERVER) data = data.filter((e) => !isResponse(e));
      if (data.length === 0) return;
    } else {
      if (data === null || typeof data !== 'object' || data.jsonrpc !== '2.0') return;
      if (this.role === ROLE_CLIENT && 'method' in data) return;
      if (this.role === ROLE_SERVER && isResponse(data)) return;
    }
    // The object path's receive does not look at the time (only outgoing
    // calls have deadlines, and they are taken at call time): no clock read.
    const t = this.text ? now() : 0;
    if (this.queue) this.queue.push(['r', data, t]);
    else this._receive(data, t);
  }

  _receive(data, t) {
    if (!this.h) return;
    const base = inTop;
    try {
      if (Array.isArray(data)) this._receiveText(data, t);
      else if (data !== null && typeof data === 'object' && describe(data, this)) X._weft_receive_obj(this.h, t);
      else this._receiveText(data, t);
    } catch (e) {
      this._diag('BadMessage', 'message dropped: ' + (e?.message ?? e));
    } finally {
      for (let i = base; i < inTop; i++) inSlots[i] = undefined;
      inTop = base;
    }
    if (this.live === 0) this._idle();
  }

  // Envelope JSON text, then one mask byte per message (weft_receive).
  _receiveText(data, t) {
    let text;
    const bits = [];
    if (Array.isArray(data)) {
      text = '[';
      for (let i = 0; i < data.length; i++) {
        text += (i ? ',' : '') + envelope(data[i], this);
        bits.push(envBits);
      }
      text += ']';
    } else {
      text = envelope(data, this);
      bits.push(envBits);
    }
    const n = put(text);
    reserve(n + 1 + bits.length);
    M.HEAPU8.set(bits, inPtr + n + 1);
    X._weft_receive(this.h, n, t, n + 1, bits.length);
  }

  // -- outgoing -------------------------------------------------------------
  _out(v) {
    const n = this.outFree.length ? this.outFree.pop() : this.outs.length;
    this.outs[n] = v;
    this.outGen[n] = (this.outGen[n] ?? 0) + 1;
    this.outCount++;
    return n;
  }
  _take(n) {
    const v = this.outs[n];
    if (v !== undefined) {
      this.outs[n] = undefined;
      this.outFree.push(n);
      this.outCount--;
    }
    return v;
  }

  // Messages from the core: `count` records at `recs` (send_records).
  _send(recs, count, batch, text) {
    const F = M.HEAPF64;
    let o;
    if (batch) {
      o = new Array(count);
      for (let i = 0; i < count; i++) o[i] = this._message(F, (recs >> 3) + i * REC, text);
    } else {
      o = this._message(F, recs >> 3, text);
    }
    try {
      this.transport.send(o);
    } catch (e) {
      this._sendFailed(o, e);
    }
  }
  _message(F, r, text) {
    const kind = F[r];
    const pay = F[r + 7];
    let v;
    if (pay >= 0) v = this._take(pay);
    else if (pay === -2) v = JSON.parse(str(text + F[r + 8], F[r + 9]));
    if (kind === 2) return { jsonrpc: '2.0', result: v === undefined ? null : v, id: recId(F, r) };
    if (kind === 0) {
      const method = str(F[r + 4], F[r + 5]);
      const id = recId(F, r);
      return pay === -1 ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params: v, id };
    }
    if (kind === 1) {
      const method = str(F[r + 4], F[r + 5]);
      return pay === -1 ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params: v };
    }
    const code = F[r + 6], message = str(F[r + 4], F[r + 5]);
    const error = v === undefined ? { code, message } : { code, message, data: v };
    return { jsonrpc: '2.0', error, id: recId(F, r) };
  }
  _sendFailed(o, e) {
    this._diag('SendFailed', 'transport.send failed: ' + (e?.message ?? e));
    if (Array.isArray(o) || o === null || typeof o !== 'object') return;
    if ('method' in o && o.id !== undefined) {
      this.sendError = e;  // the call in progress: _call cancels it
    } else if (!('method' in o) && o.id !== undefined && !o.error) {
      this._resultFailed(o, e);
    }
  }
  // A result that could not be sent (e.g. not cloneable): tell the caller.
  _resultFailed(o, e) {
    try {
      this.transport.send({ jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'Internal error: the result could not be sent: ' + (e?.message ?? e) }, id: o.id });
    } catch { /* nothing more to do */ }
  }
  // transport.onSendError: a message the transport accepted could not be
  // posted after all. As _sendFailed, after the fact: a request's call is
  // cancelled locally (it rejects with the send error), a result is replaced
  // by -32603.
  _sendFailedLater(o, e) {
    this._diag('SendFailed', 'transport.send failed: ' + (e?.message ?? e));
    if (Array.isArray(o) || o === null || typeof o !== 'object') return;
    if ('method' in o && o.id !== undefined) {
      if (!this.h) return;
      const rec = this.calls.find((r) => r !== undefined && !r.done && r.id === o.id);
      if (!rec) return;
      rec.sendError = e;
      X._weft_cancel(this.h, rec.id);
    } else if (!('method' in o) && o.id !== undefined && !o.error) {
      this._resultFailed(o, e);
    }
  }

  request(method, params, options) {
    const signal = options?.signal;
    const timeout = options?.timeout;
    return new Promise((resolve, reject) => {
      const rec = { resolve, reject, id: 0, done: false, signal, onAbort: null, sendError: null };
      if (this.closedError && (this.queue || !this.h)) return reject(this.closedError);
      if (signal?.aborted) return reject(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
      const t = timeout === undefined ? -1 : timeout > 0 && timeout !== Infinity ? timeout : NO_TIMEOUT;
      if (this.queue) {
        this.queue.push(['c', rec, method, params, t, now()]);
        if (signal) {
          rec.onAbort = () => {
            rec.done = true;
            reject(new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
          };
          signal.addEventListener('abort', rec.onAbort, { once: true });
        }
        return;
      }
      this._call(rec, method, params, t, now());
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
    const mlen = put(typeof method === 'string' ? method : String(method));
    let kind = 0, arg = 0;  // params: 0 none, 1 object payload, 2 array payload, 3 JSON text after the method
    if (params !== undefined) {
      if (params !== null && typeof params === 'object') { kind = Array.isArray(params) ? 2 : 1; arg = this._out(params); }
      else { kind = 3; arg = put(inline(params), mlen); }
    }
    this.sendError = null;
    const id = X._weft_call(this.h, token, mlen, kind, arg, timeout, t);
    if (id === 0) {
      this.calls[token] = undefined;
      this.freeCalls.push(token);
      this.live--;
      if (kind === 1 || kind === 2) this._take(arg);
      rec.reject(lastError());
      return;
    }
    rec.id = id;
    this._arm(status(0), t);
    if (this.sendError) {
      rec.sendError = this.sendError;
      this.sendError = null;
      X._weft_cancel(this.h, id);
      return;
    }
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
    return rec;
  }

  _settle(token, sl, v) {
    const rec = this._finish(token);
    if (rec) rec.resolve(sl === -2 ? JSON.parse(v) : v);
  }

  _settleError(token, code, message, data) {
    const rec = this._finish(token);
    if (!rec) return;
    if (rec.sendError) return rec.reject(Object.assign(new RPCError(ErrorCode.Closed, 'Transport send failed: ' + (rec.sendError?.message ?? rec.sendError)), { cause: rec.sendError }));
    const err = new RPCError(code, message, data);
    if (rec.signal?.aborted && code === ErrorCode.RequestCancelled) err.cause = rec.signal.reason;
    rec.reject(err);
  }

  notify(method, params) {
    if (this.destroyed) return;
    if (this.queue) { this.queue.push(['n', method, params]); return; }
    if (!this.h) return;
    const mlen = put(typeof method === 'string' ? method : String(method));
    let kind = 0, arg = 0;
    if (params !== undefined) {
      if (params !== null && typeof params === 'object') { kind = Array.isArray(params) ? 2 : 1; arg = this._out(params); }
      else { kind = 3; arg = put(inline(params), mlen); }
    }
    if (!X._weft_notify(this.h, mlen, kind, arg)) {
      if (kind === 1 || kind === 2) this._take(arg);
      const e = lastError();
      this._diag('NotifyFailed', e.message);
    }
  }

  batch(entries, options) {
    const opts = options ?? {};
    const t = opts.timeout === undefined ? -1 : opts.timeout > 0 && opts.timeout !== Infinity ? opts.timeout : NO_TIMEOUT;
    const items = entries.map((e) => {
      if (e.notification) return { e, rec: null, p: Promise.resolve(undefined) };
      const item = { e, rec: null, p: null };
      item.p = new Promise((resolve, reject) => { item.rec = { resolve, reject, id: 0, done: false, signal: opts.signal, onAbort: null }; });
      return item;
    });
    if (this.closedError && (this.queue || !this.h)) for (const it of items) it.rec?.reject(this.closedError);
    else if (this.queue) this.queue.push(['b', items, t, now()]);
    else this._batch(items, t, now());
    return items.map((it) => it.p);
  }

  _batch(items, timeout, t) {
    if (!this.h) { for (const it of items) it.rec?.reject(this.closedError ?? new RPCError(ErrorCode.Closed, 'Endpoint destroyed')); return; }
    const desc = [];
    const outs = [];
    for (const it of items) {
      const p = it.e.params;
      let kind = 0, arg = 0;
      if (p !== undefined) {
        if (p !== null && typeof p === 'object') { kind = Array.isArray(p) ? 2 : 1; arg = this._out(p); outs.push(arg); }
        else { kind = 3; arg = p; }
      }
      const token = it.rec ? this._token(it.rec) : -1;
      it.token = token;
      desc.push([String(it.e.method), kind, arg, token]);
    }
    const n = X._weft_batch(this.h, put(JSON.stringify(desc)), timeout, t);
    if (n < 0) {
      const err = lastError();
      for (const o of outs) this._take(o);
      for (const it of items) {
        if (!it.rec) continue;
        this.calls[it.token] = undefined;
        this.freeCalls.push(it.token);
        this.live--;
        it.rec.reject(err);
      }
      return;
    }
    this._arm(status(0), t);
    const ids = X._weft_ids() >> 3;
    let k = 0;
    for (const it of items) {
      if (!it.rec) continue;
      it.rec.id = M.HEAPF64[ids + k++];
    }
    if (opts_signal(items)) {
      const signal = items.find((it) => it.rec)?.rec.signal;
      const onAbort = () => { for (const it of items) if (it.rec && !it.rec.done && this.h) X._weft_cancel(this.h, it.rec.id); };
      signal.addEventListener('abort', onAbort, { once: true });
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
    let slen = 0;
    if (spec) {
      slen = put(JSON.stringify(spec), nlen);
      this.inspect.add(String(name));
    } else {
      this.inspect.delete(String(name));
    }
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
      return 0;
    }
    const ctx = new ServeContext(entry.name);
    let r;
    try {
      r = entry.handler(params, ctx);
    } catch (e) {
      this._replyError(token, e);
      return -2;
    }
    if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
      this.serving[token] = ctx;
      r.then((v) => { if (this.serving[token] === ctx) this._reply(token, v); },
        (e) => { if (this.serving[token] === ctx) this._replyError(token, e); });
      return -1;
    }
    return this._out(r === undefined ? null : r);
  }

  _reply(token, v) {
    this.serving[token] = undefined;
    if (!this.h) return;
    const n = this._out(v === undefined ? null : v);
    const g = this.outGen[n];
    X._weft_reply(this.h, token, 0, n);
    if (this.outGen[n] === g && this.outs[n] !== undefined) this._defer(n, g);
  }

  _replyError(token, e) {
    this.serving[token] = undefined;
    if (!this.h) return;
    let code = ErrorCode.InternalError, message, data;
    if (e instanceof RPCError && Number.isInteger(e.code) && e.code >= -2147483648 && e.code <= 2147483647) {
      code = e.code;
      message = String(e.message);
      data = e.data;
    } else {
      message = typeof e?.message === 'string' && e.message ? e.message : 'Internal error';
    }
    const mlen = put(message);
    const n = data === undefined ? -1 : this._out(data);
    const g = this.outGen[n];
    X._weft_reply_error(this.h, token, code, mlen, n);
    if (n >= 0 && this.outGen[n] === g && this.outs[n] !== undefined) this._defer(n, g);
  }

  // A payload whose answer is held (a batch still being answered) or dropped
  // (answered after cancellation/close): freed once nothing is in flight —
  // unless its number was taken and handed out again meanwhile (generation).
  _defer(n, g) {
    this.deferred.push(n, g);
    if (X._weft_in_flight(this.h) === 0) {
      const d = this.deferred;
      for (let i = 0; i < d.length; i += 2) if (this.outGen[d[i]] === d[i + 1]) this._take(d[i]);
      d.length = 0;
    }
  }

  _cancelled(token) {
    const ctx = this.serving[token];
    if (!ctx) return;
    ctx._cancel();
    // LSP: a cancelled request is answered with -32800 right away.
    if (!this.destroyed) this._replyError(token, new RPCError(ErrorCode.RequestCancelled, 'Request cancelled'));
    else this.serving[token] = undefined;
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
      clearTimeout(this.timer);
    }
    this.idle = false;
    this.armedAt = deadline;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedAt = -1;
      this.idle = false;
      if (!this.h) return;
      const t = now();
      const d = X._weft_advance(this.h, t);
      if (this.live > 0) this._arm(d, t);
    }, Math.max(0, Math.ceil(deadline - (t ?? now()))));
  }
  _idle() {
    if (this.timer === null || this.idle) return;
    if (typeof this.timer.unref !== 'function') return this._disarm();
    this.idle = true;
    this.timer.unref();
  }
  _disarm() {
    if (this.timer !== null) clearTimeout(this.timer);
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
        this.deferred.length = 0;
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

function opts_signal(items) {
  const it = items.find((x) => x.rec);
  return !!(it && it.rec.signal);
}

export const Role = { Peer: ROLE_PEER, Client: ROLE_CLIENT, Server: ROLE_SERVER };

/**
 * The text path (NDJSON framing + JSON codec + the demo methods), as the
 * native vector runner drives it. For tests: `frames` collects what the core
 * sends, `settled` the outcome of calls by id.
 */
export class TextEndpoint extends Endpoint {
  constructor() {
    super(null, ROLE_PEER, { timeout: 0 });
    this.text = true;
    this.frames = [];
    this.diags = [];
    this.settled = new Map();
  }
  _create() { return X._weft_create(1, -1, 0, 0, 0); }
  _emit(text) { this.frames.push(text); }
  _diag(kind) { this.diags.push(kind); }
  _dispatch(fn, token, params) { return this.handlers[fn].handler(params, token); }
  feed(text, t) { X._weft_receive(this.h, put(text), t); }
  call(method, paramsText, timeout, t) {
    const rec = { resolve: (v) => this.settled.set(rec.id, { result: v }), reject: (e) => this.settled.set(rec.id, { error: e }), id: 0 };
    const token = this._token(rec);
    const mlen = put(method);
    const kind = paramsText == null ? 0 : 3;
    const arg = kind ? put(paramsText, mlen) : 0;
    rec.id = X._weft_call(this.h, token, mlen, kind, arg, timeout ?? -1, t);
    return rec.id;
  }
  _settle(token, sl, v) {
    const rec = this.calls[token];
    this.calls[token] = undefined;
    this.freeCalls.push(token);
    this.live--;
    if (sl === -2) rec.resolve(JSON.parse(v));
    else if (sl === -3) rec.reject(JSON.parse(v));
    else rec.resolve(sl);
  }
  notifyText(method, paramsText) {
    const mlen = put(method);
    const kind = paramsText == null ? 0 : 3;
    return X._weft_notify(this.h, mlen, kind, kind ? put(paramsText, mlen) : 0);
  }
  cancel(id) { return X._weft_cancel(this.h, id) === 1; }
  advance(t) { X._weft_advance(this.h, t); }
  close() { X._weft_close(this.h, 0, 0); }
  pending() { return X._weft_pending(this.h); }
  inFlight() { return X._weft_in_flight(this.h); }
  replyText(token, text) { X._weft_reply(this.h, token, 1, put(text)); }
  replyErrorText(token, text) { X._weft_reply(this.h, token, 2, put(text)); }
  _cancelled(token) { this.onCancel?.(token); }
}
