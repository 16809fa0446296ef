// Endpoint: one core Peer behind a transport. It moves messages, converts
// values, keeps promise bookkeeping, AbortSignal glue and the one timer.
// Every protocol decision — validation, error codes, id correlation, batch
// rules, roles, foreign messages, cancellation answers, send failures,
// timeouts — is made by the C++ core; nothing here re-implements one.
//
// Lifetime of a payload (payloads.js, wasm/payloads.h): a transport message
// is described to the core with its payloads as inbound handles, valid until
// _receive returns; a value JS hands to the core (call params, a handler's
// answer) becomes an outbound handle owned by the core until it comes back
// in a record — sent (_send) or discarded — where it is released.
import * as A from '../dist/weft_abi.js';
import { batch, sendBatch } from './batch.js';
import { ServeContext, cancelled } from './context.js';
import { ErrorCode, RPCError } from './errors.js';
import { M, X, desc, lastError, put, status } from './heap.js';
import { forget, hosts, ready, whenLoaded } from './module.js';
import { Outbound, inboundMark, unwindInbound } from './payloads.js';
import { requestWithRetry } from './retry.js';
import { ChunkStream } from './stream.js';
import { DeadlineTimer, callClock, systemClock } from './timer.js';
import { isTuple, plainOf } from './tuples.js';
import { describe, describeId, describeTuple, message, params, request, result } from './wire.js';

// Reported on the console when no onDiagnostic option is given.
const LOUD = new Set(['InvalidResponse', 'ErrorWithoutId', 'NotificationFailed']);

// A handshake offer as the core reads it (docs/protocol.md, "Handshake").
function handshakeOffer(o) {
  const h = { version: o?.version ?? '1.0', capabilities: o?.capabilities ?? ['streams', 'progress', 'drain'] };
  if (o?.limits) h.limits = o.limits;
  if (o?.session) h.session = o.session;
  return h;
}

export class Endpoint {
  constructor(transport, role, options = {}) {
    this.transport = transport;
    this.role = role;
    this.h = 0;
    this.timeout = options.timeout === undefined ? 10000 : options.timeout;
    this.limits = options.limits ?? {};
    this.onDiagnostic = options.onDiagnostic;
    this.onDrain = options.onDrain;
    this.handshakeOffer = options.handshake ? handshakeOffer(options.handshake) : null;
    this.clock = options.clock ?? systemClock;
    this.callNow = callClock(this.clock);  // a call's deadline counts from here
    this.ignoreForeign = options.ignoreForeign ?? true;  // postMessage channels carry other traffic
    this.handlers = [];
    this.calls = [];            // token → call record
    this.freeCalls = [];
    this.live = 0;
    this.calling = null;        // the call record while weft_call runs
    this.serving = [];          // reply token → ServeContext of an async handler
    this.writers = [];          // reply token → ServeContext waiting for stream credit
    this.transfers = new WeakMap();  // chunk value → the buffer to transfer with it
    this.out = new Outbound();
    this.timer = new DeadlineTimer(this.clock, (t) => {
      if (!this.h) return;
      const d = X._weft_advance(this.h, t);
      if (this.live > 0) this._arm(d, t);
    });
    this.closedError = null;
    this.destroyed = false;
    this.queue = [];            // operations made before the core loaded
    if (transport) {
      transport.onMessage((data) => this._onMessage(data));
      if (typeof transport.onClose === 'function')
        transport.onClose(() => this._close(ErrorCode.Closed, 'Transport closed'));
      if (typeof transport.onSendError === 'function')
        transport.onSendError((m, e) => this._sendFailedLater(m, e));
    }
    whenLoaded(this);
  }

  _init() {
    if (this.destroyed) return;
    const t = this.timeout;
    const l = this.limits;
    const hs = this.handshakeOffer ? put(JSON.stringify(this.handshakeOffer)) : 0;
    // maxStreamChunk: omitted or 0 the core's default (-1), Infinity none (0).
    const chunk = l.maxStreamChunk === Infinity ? 0 : l.maxStreamChunk > 0 ? l.maxStreamChunk : -1;
    this.h = X._weft_create(this.role, this.ignoreForeign ? 1 : 0, t > 0 && t !== Infinity ? t : -1,
      l.maxInFlight ?? 0, l.maxPending ?? 0, l.maxBatch ?? 0, l.rateLimit ?? 0, l.rateWindow ?? 0, chunk, hs);
    if (!this.h) return this._fail(lastError());
    hosts[this.h] = this;
    const q = this.queue;
    this.queue = null;
    for (const op of q) {
      switch (op[0]) {
        case 'm': this._register(op[1], op[2], op[3], op[4]); break;
        case 'c': if (!op[1].done) this._call(op[1], op[2], op[3], op[4], op[5]); break;
        case 'n': this.notify(op[1], op[2]); break;
        case 'b': sendBatch(this, op[1], op[2], op[3]); break;
        case 'r': this._receive(op[1]); break;
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

  // -- incoming -----------------------------------------------------------------
  _onMessage(data) {
    if (this.destroyed) return;
    if (this.queue) this.queue.push(['r', data]);
    else this._receive(data);
  }

  // Any value: the core decides what it is, and what to ignore (role, foreign).
  // A tuple (js/tuples.js) is described as the message object it stands for.
  _receive(data) {
    if (!this.h) return;
    const mark = inboundMark();
    try {
      const single = !Array.isArray(data) || isTuple(data);
      const n = single ? 1 : data.length;
      const base = desc(n * A.D_SIZE);
      if (!single) {
        let at = 0;
        for (let i = 0; i < n; i++) {
          const m = data[i];
          at = isTuple(m) ? describeTuple(base + i * A.D_SIZE, m, at) : describe(base + i * A.D_SIZE, m, at);
        }
      } else if (Array.isArray(data)) {
        describeTuple(base, data, 0);
      } else {
        describe(base, data, 0);
      }
      X._weft_receive(this.h, n, single ? 0 : 1);
    } catch (e) {
      this._diag('BadMessage', 'message dropped: ' + (e?.message ?? e));
    } finally {
      unwindInbound(mark);
    }
    if (this.live === 0) this.timer.rest();
  }

  // -- outgoing -----------------------------------------------------------------
  // `count` records at `recs` from the core: every message but a single
  // call's request and a plain result (_sendRequest, _sendResult). Returns
  // -1, or the byte length of the transport's error message in the input
  // buffer.
  _send(recs, count, batch, text) {
    const r = recs >> 3;
    const tuples = this.transport.tuples === true;
    let o;
    if (batch) {
      o = new Array(count);
      for (let i = 0; i < count; i++) o[i] = message(this.out, r + i * A.R_SIZE, text, tuples);
    } else {
      o = message(this.out, r, text, tuples);
    }
    // A chunk whose buffer its writer gave up (context.js) is transferred
    // (a chunk is never a tuple).
    const pv = !batch && !Array.isArray(o) && o.params !== null && typeof o.params === 'object' ? o.params.value : undefined;
    const buf = pv !== null && typeof pv === 'object' ? this.transfers.get(pv) : undefined;
    if (buf) this.transfers.delete(pv);
    try {
      this.transport.send(o, false, buf ? [buf] : undefined);
      return -1;
    } catch (e) {
      // The core decides what follows (Peer::undelivered) and reports it.
      for (const m of batch ? o : [o]) this._noteSendError(plainOf(m), e);
      return put(String(e?.message ?? e));
    }
  }

  // The request of the call weft_call is making is record `r`: its id is
  // known from here, before weft_call returns it, so that a send error
  // finds the call.
  _calling(r) {
    const c = this.calling;
    if (c !== null && c.id === 0 && M.HEAPF64[r + A.R_ID_KIND] === A.ID_INT) c.id = M.HEAPF64[r + A.R_ID_A];
  }

  // The one request record at `recs` (PeerOptions::send_request): what
  // _send does for it, with nothing to look for but the request.
  _sendRequest(recs, text) {
    const r = recs >> 3;
    this._calling(r);
    const o = request(this.out, r, text, this.transport.tuples === true);
    try {
      // A request while no other call is pending (calls made one after
      // another): nothing else will follow it this turn, so a packing
      // transport need not hold it for the flush (js/pack.js).
      this.transport.send(o, this.live <= 1, undefined);
      return -1;
    } catch (e) {
      this._noteSendError(plainOf(o), e);
      return put(String(e?.message ?? e));
    }
  }

  // The one result record at `recs` (PeerOptions::send_result): what
  // _send does for it, with nothing to look for but the result.
  _sendResult(recs, text) {
    const o = result(this.out, recs >> 3, text, this.transport.tuples === true);
    try {
      this.transport.send(o, false, undefined);
      return -1;
    } catch (e) {
      return put(String(e?.message ?? e));
    }
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
    o = plainOf(o);
    if (!this.h || o === null || typeof o !== 'object' || Array.isArray(o)) return;
    this._noteSendError(o, e);
    const kind = typeof o.method === 'string' ? (o.id === undefined ? A.MSG_NOTIFICATION : A.MSG_REQUEST)
      : o.error !== undefined ? A.MSG_ERROR : A.MSG_RESULT;
    const d = desc(A.D_SIZE);
    M.HEAPF64.fill(0, d, d + A.D_SIZE);
    const mlen = put(String(e?.message ?? e));
    describeId(d, o.id, mlen);
    X._weft_undelivered(this.h, kind, mlen);
  }

  // A per-call timeout as the core takes it: ms, TIMEOUT_DEFAULT or TIMEOUT_NONE.
  _timeoutArg(timeout) {
    if (timeout === undefined) return A.TIMEOUT_DEFAULT;
    return timeout > 0 && timeout !== Infinity ? timeout : A.TIMEOUT_NONE;
  }

  request(method, params, options) {
    return options?.retry ? requestWithRetry(this, method, params, options) : this._request(method, params, options, null);
  }

  /**
   * Sends rpc.handshake (docs/protocol.md, "Handshake"); resolves with what
   * both sides agreed on: { version, capabilities, limits, session }.
   */
  async handshake(offer, options) {
    await ready;
    return new Promise((resolve, reject) => {
      if (!this.h) return reject(this.closedError ?? new RPCError(ErrorCode.Closed, 'Endpoint destroyed'));
      const rec = { resolve, reject, id: 0, done: false, signal: null, onAbort: null, group: null, sendError: null };
      const token = this._token(rec);
      const id = X._weft_handshake(this.h, token, put(JSON.stringify(handshakeOffer(offer))),
        this._timeoutArg(options?.timeout), this.clock.now());
      if (id === 0) { this._untoken(token); return reject(lastError()); }
      rec.id = id;
      this._arm(status(0), this.clock.now());
    });
  }

  /** Starts a graceful drain (docs/protocol.md): announced, new requests answered -32005. */
  drain(notice) {
    if (!this.h) return;
    const mlen = put(String(notice?.reason ?? 'shutdown'));
    X._weft_drain(this.h, mlen, Number(notice?.downtime ?? 0), Number(notice?.reconnectAfter ?? 0));
  }
  _drained(notice) {
    if (!this.onDrain) return;
    try { this.onDrain(notice); } catch (e) { this._diag('DrainHandlerFailed', String(e?.message ?? e)); }
  }

  /**
   * A streamed call: an async iterator over the chunks the handler writes
   * (docs/streams.md); `.result` is the handler's final answer.
   * options: as request(), plus highWaterMark (chunks held at most, 16).
   */
  stream(method, params, options) {
    const hwm = options?.highWaterMark ?? 16;
    if (!Number.isInteger(hwm) || hwm < 1 || hwm > 1024)
      throw new RangeError('stream(): highWaterMark must be an integer from 1 to 1024');
    const s = new ChunkStream(this, hwm);
    s.result = this._request(method, params, options, s);
    s.result.then(() => s._end(), (e) => s._fail(e));
    return s;
  }

  _request(method, params, options, stream) {
    const signal = options?.signal;
    return new Promise((resolve, reject) => {
      const onProgress = typeof options?.onProgress === 'function' ? options.onProgress : null;
      const onMetrics = typeof options?.onMetrics === 'function' ? options.onMetrics : null;
      const rec = { resolve, reject, id: 0, done: false, signal, onAbort: null, group: null, sendError: null,
        stream, onProgress, progress: !onProgress ? A.PROGRESS_NONE
          : options.progressResetsTimeout ? A.PROGRESS_RESETS : A.PROGRESS_ASK, onMetrics, metrics: null };
      if (stream) stream.rec = rec;
      if (this.closedError && (this.queue || !this.h)) return reject(this.closedError);
      if (signal?.aborted) return reject(cancelled());
      const t = this._timeoutArg(options?.timeout);
      if (this.queue) {
        this.queue.push(['c', rec, method, params, t, this.callNow()]);
        if (signal) {
          rec.onAbort = () => { rec.done = true; reject(cancelled()); };
          signal.addEventListener('abort', rec.onAbort, { once: true });
        }
        return;
      }
      this._call(rec, method, params, t, this.callNow());
    });
  }

  _token(rec) {
    const t = this.freeCalls.length ? this.freeCalls.pop() : this.calls.length;
    this.calls[t] = rec;
    this.live++;
    return t;
  }
  _untoken(token) {
    this.calls[token] = undefined;
    this.freeCalls.push(token);
    this.live--;
  }

  _call(rec, method, p, timeout, t) {
    if (rec.onAbort) { rec.signal.removeEventListener('abort', rec.onAbort); rec.onAbort = null; }
    if (!this.h) return rec.reject(this.closedError ?? new RPCError(ErrorCode.Closed, 'Endpoint destroyed'));
    const token = this._token(rec);
    const [kind, arg] = p === undefined ? [A.VALUE_ABSENT, 0] : params(this.out, p);
    const mlen = put(typeof method === 'string' ? method : String(method));
    this.calling = rec;
    let id;
    try {
      id = X._weft_call(this.h, token, mlen, kind, arg, timeout, t, rec.progress ?? A.PROGRESS_NONE,
        rec.stream ? rec.stream.hwm : -1, rec.onMetrics ? A.METRICS_ASK : A.METRICS_SKIP);
    } finally {
      this.calling = null;
    }
    if (id === 0) {
      this._untoken(token);
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
    this._untoken(token);
    rec.done = true;
    if (this.live === 0) this.timer.rest();
    if (rec.onAbort) rec.signal.removeEventListener('abort', rec.onAbort);
    if (rec.group && --rec.group.left === 0) rec.group.signal.removeEventListener('abort', rec.group.onAbort);
    return rec;
  }

  // Chunks and progress of outgoing call `token` (streams.cpp's hooks).
  _chunk(token, v) { this.calls[token]?.stream?._chunk(v); }
  _progress(token, v) {
    const f = this.calls[token]?.onProgress;
    if (!f) return;
    try { f(v); } catch (e) { this._diag('ProgressFailed', String(e?.message ?? e)); }
  }

  // The answer of call `token` carried metrics (docs/protocol.md "Metrics"),
  // as the core read them; its completion follows at once.
  _metrics(token, us, size) {
    const rec = this.calls[token];
    if (!rec) return;
    const m = { processing_time_us: us, response_size: size };
    rec.metrics = m;
    if (rec.stream) rec.stream.metrics = m;
    if (!rec.onMetrics) return;
    try { rec.onMetrics(m); } catch (e) { this._diag('MetricsHandlerFailed', String(e?.message ?? e)); }
  }

  _settle(token, v) {
    this._finish(token)?.resolve(v);
  }

  _settleError(token, code, message, data) {
    const rec = this._finish(token);
    if (!rec) return;
    const err = new RPCError(code, message, data);
    if (rec.metrics) err.metrics = rec.metrics;  // an error answer's own metrics
    if (rec.signal?.aborted && code === ErrorCode.RequestCancelled) err.cause = rec.signal.reason;
    else if (rec.sendError && code === ErrorCode.Closed) err.cause = rec.sendError;
    rec.reject(err);
  }

  notify(method, p) {
    if (this.destroyed) return;
    if (this.queue) { this.queue.push(['n', method, p]); return; }
    if (!this.h) return;
    const [kind, arg] = p === undefined ? [A.VALUE_ABSENT, 0] : params(this.out, p);
    const mlen = put(typeof method === 'string' ? method : String(method));
    if (!X._weft_notify(this.h, mlen, kind, arg)) this._diag('NotifyFailed', lastError().message);
  }

  batch(entries, options) { return batch(this, entries, options); }

  // -- serving --------------------------------------------------------------------
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

  // Runs handler `fn`; returns the answer's payload handle, DISPATCH_LATER
  // (a promise: answered through _reply) or DISPATCH_DONE. `token` is
  // TOKEN_NOTIFICATION, or a lazy token (TOKEN_LAZY - depth): the request's
  // token is only taken (ctx.token, weft_defer) when the answer cannot be
  // given now — a promise, a throw, or the context's sink, progress or state
  // used — so a handler that returns a value costs the core no serving slot.
  _dispatch(fn, token, params) {
    const entry = this.handlers[fn];
    if (token === A.TOKEN_NOTIFICATION) {  // a notification: never answered (§4.1)
      try {
        const r = entry.handler(params);
        if (r && typeof r.then === 'function') r.then(undefined, (e) => this._diag('NotificationFailed', String(e?.message ?? e)));
      } catch (e) {
        this._diag('NotificationFailed', String(e?.message ?? e));
      }
      return A.DISPATCH_DONE;
    }
    const ctx = new ServeContext(this, entry.name, token);
    let r;
    try {
      r = entry.handler(params, ctx);
    } catch (e) {
      const t = ctx.token;
      ctx._done();
      this._replyError(t, e);
      return A.DISPATCH_DONE;
    }
    if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
      const t = ctx.token;
      this.serving[t] = ctx;
      r.then((v) => { if (this.serving[t] === ctx) { ctx._done(); this._reply(t, v); } },
        (e) => { if (this.serving[t] === ctx) { ctx._done(); this._replyError(t, e); } });
      return A.DISPATCH_LATER;
    }
    ctx._done();
    return this.out.hold(r === undefined ? null : r);
  }

  // The answer's payload handle goes to the core, which sends or discards it.
  _reply(token, v) {
    this.serving[token] = undefined;
    if (this.h) X._weft_reply(this.h, token, this.out.hold(v === undefined ? null : v));
  }

  // An RPCError's code, message and data; for anything else the core
  // answers -32603 with the error's message (error_code_from, weft/error.h).
  _replyError(token, e) {
    this.serving[token] = undefined;
    if (!this.h) return;
    const rpc = e instanceof RPCError;
    const code = rpc && typeof e.code === 'number' ? e.code : NaN;
    const message = rpc ? String(e.message) : typeof e?.message === 'string' ? e.message : '';
    const handle = rpc && e.data !== undefined ? this.out.hold(e.data) : A.PAY_NONE;
    X._weft_reply_error(this.h, token, code, put(message), handle);
  }

  // The request was cancelled ($/cancelRequest, or close) and the core
  // answers it -32800: the handler's signal aborts, and whatever it answers
  // later still goes to the core, which discards it and frees the token.
  _cancelled(token) {
    this.serving[token]?._cancel();
    this.writers[token]?._cancel();
    this.writers[token] = undefined;
  }

  // The caller of request `token` has room for more chunks again.
  _writable(token) {
    const ctx = this.writers[token];
    this.writers[token] = undefined;
    ctx?._writable();
  }

  _diag(kind, message) {
    if (this.onDiagnostic) {
      try { this.onDiagnostic(kind, message); } catch { /* a diagnostic sink must not break the endpoint */ }
    } else if (LOUD.has(kind)) {
      console.warn(`[weft] ${kind}: ${message}`);
    }
  }

  _arm(deadline, t) { this.timer.arm(deadline, t); }

  // -- lifetime -------------------------------------------------------------------
  _close(code, message) {
    if (this.queue) {
      this.closedError = new RPCError(code, message);
      this._fail(this.closedError);
      this.queue = [];
      return;
    }
    if (!this.h || this.closedError) return;
    this.closedError = new RPCError(code, message);
    X._weft_close(this.h, code, put(message));
    this.timer.disarm();
  }

  destroy() {
    if (this.destroyed) return;
    this._close(ErrorCode.Closed, 'Endpoint destroyed');
    this.destroyed = true;
    forget(this);
    this.timer.disarm();
    try { this.transport?.destroy?.(); } catch { /* ignore */ }
    const h = this.h;
    if (h) {
      // Never free the core under its own call stack: destroy() may be called
      // from a handler or a settle callback.
      queueMicrotask(() => {
        X._weft_destroy(h);
        hosts[h] = undefined;
        this.out.clear();
        this.serving.length = 0;
        this.writers.length = 0;
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
      payloads: this.out.count,
      heap: X ? X._weft_heap_used() : 0,
    };
  }
}

export const Role = { Peer: A.ROLE_PEER, Client: A.ROLE_CLIENT, Server: A.ROLE_SERVER };
