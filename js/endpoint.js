// Endpoint: one core Peer behind a transport. It moves messages, converts
// values, keeps promise bookkeeping, AbortSignal glue and the one timer.
// Every protocol decision — validation, error codes, id correlation, batch
// rules, roles, foreign messages, cancellation answers, send failures,
// timeouts — is made by the C++ core; nothing here re-implements one.
//
// Lifetime of a payload (payloads.js, wasm/payloads.h): a transport message
// is described to the core with its payloads as inbound handles, valid until
// _receive returns; a value JS hands to the core (notification or batch
// params, a handler's answer) becomes an outbound handle owned by the core
// until it comes back in a record — sent (outgoing.js) or discarded — where
// it is released. A single call's params stay here (PAY_CALLER).
// The serving side (handlers and their answers) is serving.js.
import * as A from '../dist/weft_abi.js';
import { abortError, batch, methodName, queuedParams, sendBatch } from './batch.js';
import { ErrorCode, RPCError, answerError } from './errors.js';
import { X, desc, lastError, put, status } from './heap.js';
import { forget, hosts, ready, whenLoaded } from './module.js';
import { postRequest, sendFailed } from './outgoing.js';
import { Outbound, inboundMark, unwindInbound } from './payloads.js';
import { ownTimeouts, requestWithRetry } from './retry.js';
import { register, runBatch, runQueued } from './serving.js';
import { ChunkStream } from './stream.js';
import { DeadlineTimer, callClock, systemClock } from './timer.js';
import { takeShort } from './short.js';
import { isTuple } from './tuples.js';
import { describe, describeTuple, kindOf, params } from './wire.js';

// Reported on the console when no onDiagnostic option is given.
const LOUD = new Set(['InvalidResponse', 'ErrorWithoutId', 'NotificationFailed', 'BadParamSpec']);

// A handshake offer as the core reads it (docs/protocol.md, "Handshake").
function handshakeOffer(o) {
  const h = { version: o?.version ?? '1.0', capabilities: o?.capabilities ?? ['streams', 'progress', 'drain'] };
  if (o?.limits) h.limits = o.limits;
  if (o?.session) h.session = o.session;
  return h;
}

export class Endpoint {
  constructor(transport, role, options) {
    options ??= {};  // null as omitted
    this.transport = transport;
    this.role = role;
    this.h = 0;
    this.timeout = this._timeoutArg(options.timeout) === A.TIMEOUT_DEFAULT ? 10000 : options.timeout;
    // As _weft_create takes them (index.d.ts EndpointLimits); a bad one throws, as a
    // bad timeout does. maxStreamChunk's 0 is the default (-1), Infinity none (0).
    if (options.limits != null && typeof options.limits !== 'object') throw new TypeError('limits must be an object');
    this.limits = ['maxInFlight', 'maxPending', 'maxBatch', 'rateLimit', 'rateWindow', 'maxStreamChunk'].map((k, i) => {
      const v = options.limits?.[k] ?? 0;
      if (!(typeof v == 'number' && v >= 0 && (v % 1 == 0 || v >= 2 ** 32)))
        throw new RangeError(`limits.${k} must be an integer >= 0 or Infinity, got ${String(v)}`);
      return i < 5 ? v : v === Infinity ? 0 : v || -1;
    });
    this.onDiagnostic = options.onDiagnostic;
    this.onDrain = options.onDrain;
    this.handshakeOffer = options.handshake ? handshakeOffer(options.handshake) : null;
    this.clock = options.clock ?? systemClock;
    this.callNow = callClock(this.clock);  // a call's deadline counts from here
    // postMessage channels carry other traffic; a WebSocket carries only JSON-RPC.
    this.ignoreForeign = options.ignoreForeign ?? !transport?.dedicated;
    this.handlers = [];
    this.calls = [];            // token → call record
    this.freeCalls = [];
    this.live = 0;
    this.serving = [];          // reply token → ServeContext of an async handler (serving.js)
    this.writers = [];          // reply token → ServeContext waiting for stream credit
    this.transfers = new WeakMap();  // chunk value → the buffer to transfer with it
    this.out = new Outbound();
    this.timer = new DeadlineTimer(this.clock, (t) => {
      if (!this.h) return;
      this.due = 1;  // its timeouts are final (retry.js)
      const d = X._weft_advance(this.h, t);
      this.due = 0;
      if (this.live > 0) this._arm(d, t);
    });
    this.closedError = null;
    this.destroyed = false;
    this.queue = [];            // operations made before the core loaded
    if (typeof transport?.send !== 'function' || typeof transport.onMessage !== 'function')
      throw new TypeError('expected a transport: { send, onMessage } (docs/transports.md)');
    // The role goes with it: a postMessage transport names it in its pack
    // announcement, and heeds only what an endpoint it can talk to announced.
    transport.onMessage((data) => this._onMessage(data),
      role === A.ROLE_CLIENT ? 'client' : role === A.ROLE_SERVER ? 'server' : 'peer');
    if (typeof transport.onClose === 'function')
      transport.onClose(() => this._close(ErrorCode.Closed, 'Transport closed'));
    if (typeof transport.onSendError === 'function')
      transport.onSendError((m, e) => sendFailed(this, m, e));
    if (typeof transport.onUndecodable === 'function') transport.onUndecodable((why) => this._undecodable(why));
    whenLoaded(this);
  }

  _init() {
    if (this.destroyed) return;
    const t = this.timeout;
    const hs = this.handshakeOffer ? put(JSON.stringify(this.handshakeOffer)) : 0;
    this.h = X._weft_create(this.role, this.ignoreForeign ? 1 : 0, t > 0 && t !== Infinity ? t : -1, ...this.limits, hs,
      // A channel other endpoints hear too (a window): ids from a random
      // start up to 2^40, far below 2^53 where a number stops being exact.
      this.transport.shared ? 1 + Math.floor(Math.random() * 2 ** 40) : 1);
    if (!this.h) return this._fail(lastError());
    hosts[this.h] = this;
    const q = this.queue;
    this.queue = null;
    for (const op of q) {
      switch (op[0]) {
        case 'm':
          // method() before the core loaded: too late to throw to its caller.
          try { this._register(op[1], op[2], op[3], op[4]); } catch (e) { this._diag('BadParamSpec', e.message); }
          break;
        case 'c': if (!op[1].done) this._call(op[1], op[2], op[3], op[4], op[5]); break;
        case 'n': this.notify(op[1], op[2]); break;
        case 'b': sendBatch(this, op[1], op[2], op[3]); break;
        case 'r': this._receive(op[1]); break;
        case 'u': this._undecodable(op[1]); break;
        // The transport closed before the core loaded (_close).
        case 'x': X._weft_close(this.h, op[1], put(op[2])); break;
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
  // A frame the transport could not read: the core answers it (-32700), or
  // ends a client's connection with the error it gives (weft_undecodable).
  _undecodable(why) {
    if (this.destroyed) return;
    if (this.queue) this.queue.push(['u', why]);
    else if (this.h && X._weft_undecodable(this.h, put(String(why)))) {
      const e = lastError();
      this._close(e.code, e.message);
      try { this.transport.destroy?.(); } catch { /* ignore */ }
    }
  }

  // Any value: the core decides what it is, and what to ignore (role, foreign).
  // A tuple (js/tuples.js) is described as the message object it stands
  // for. A request or a result the core takes short (short.js) is not
  // described at all.
  _receive(data) {
    if (!this.h) return;
    const mark = inboundMark();
    try {
      if (!takeShort(this, data)) {
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
        if (single) runQueued(this);
        else runBatch(this, status(A.STATUS_PAUSED));
      }
    } catch (e) {
      this._diag('BadMessage', 'message dropped: ' + (e?.message ?? e));
    } finally {
      unwindInbound(mark);
    }
    if (this.live === 0) this.timer.rest();
  }

  // A timeout as the core takes it: ms, TIMEOUT_DEFAULT or TIMEOUT_NONE (0,
  // Infinity). Any other value throws: -5 or NaN must not mean none.
  _timeoutArg(t) {
    const n = typeof t == 'number';
    if (t === undefined) return A.TIMEOUT_DEFAULT;
    if (!(n && t >= 0))
      throw new (n ? RangeError : TypeError)(`timeout must be a number of milliseconds >= 0 (0 or Infinity: none), got ${n ? t : typeof t}`);
    return t > 0 && t !== Infinity ? t : A.TIMEOUT_NONE;
  }

  // A call's signal: none or an AbortSignal.
  _signal(s) {
    if (s != null && !(typeof s.addEventListener == 'function' && 'aborted' in s)) throw new TypeError('signal must be an AbortSignal');
    return s;
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
      const t = this._timeoutArg(options?.timeout);
      if (!this.h) return reject(this.closedError ?? new RPCError(ErrorCode.Closed, 'Endpoint destroyed'));
      const rec = { resolve, reject, id: 0, done: false, signal: null, onAbort: null, group: null, sendError: null };
      const token = this._token(rec);
      const id = X._weft_handshake(this.h, token, put(JSON.stringify(handshakeOffer(offer))), t, this.clock.now());
      if (id === 0) { this._untoken(token); return reject(lastError()); }
      rec.id = id;
      this._arm(status(A.STATUS_DEADLINE), this.clock.now());
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
      this._signal(signal);  // a bad option rejects, nothing sent
      const t = this._timeoutArg(options?.timeout);
      method = methodName(method);
      const onProgress = typeof options?.onProgress === 'function' ? options.onProgress : null;
      const onMetrics = typeof options?.onMetrics === 'function' ? options.onMetrics : null;
      const rec = { resolve, reject, id: 0, done: false, signal, onAbort: null, group: null, sendError: null,
        stream, onProgress, progress: !onProgress ? A.PROGRESS_NONE
          : options.progressResetsTimeout ? A.PROGRESS_RESETS : A.PROGRESS_ASK, onMetrics, metrics: null };
      if (stream) stream.rec = rec;
      if (this.closedError && (this.queue || !this.h)) return reject(this.closedError);
      if (signal?.aborted) return reject(abortError(signal));
      if (this.queue) {
        this.queue.push(['c', rec, method, queuedParams(params), t, this.callNow()]);
        if (signal) {
          rec.onAbort = () => { rec.done = true; reject(abortError(signal)); };
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
    const mlen = put(method);  // a string (_request)
    // The params stay here (PAY_CALLER): the core reads their kind only.
    const id = X._weft_call(this.h, token, mlen, kindOf(p), A.PAY_CALLER, timeout, t, rec.progress ?? A.PROGRESS_NONE,
      rec.stream ? rec.stream.hwm : -1, rec.onMetrics ? A.METRICS_ASK : A.METRICS_SKIP);
    if (id === 0) {
      this._untoken(token);
      rec.reject(lastError());
      return;
    }
    rec.id = id;
    // Armed first: an answer that comes inside the post rests the timer.
    this._arm(status(A.STATUS_DEADLINE), t);
    if (status(A.STATUS_POST_REQUEST)) postRequest(this, id, method, p);  // as given (weft_call)
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
    const err = answerError(code, message, data);
    if (this.due) ownTimeouts.add(err);
    if (rec.metrics) err.metrics = rec.metrics;  // an error answer's own metrics
    if (rec.signal?.aborted && code === ErrorCode.RequestCancelled) err.cause = rec.signal.reason;
    else if (rec.sendError && code === ErrorCode.Closed) err.cause = rec.sendError;
    rec.reject(err);
  }

  notify(method, p) {
    if (this.destroyed) return;
    const name = methodName(method);  // before anything is held
    if (this.queue) { this.queue.push(['n', name, queuedParams(p)]); return; }
    if (!this.h) return;
    const [kind, arg] = p === undefined ? [A.VALUE_ABSENT, 0] : params(this.out, p);
    const mlen = put(name);
    if (!X._weft_notify(this.h, mlen, kind, arg)) this._diag('NotifyFailed', lastError().message);
  }

  batch(entries, options) { return batch(this, entries, options); }

  // -- serving --------------------------------------------------------------------
  method(name, handler, spec) { this._register(name, handler, 0, spec); return this; }
  onNotify(name, handler) { this._register(name, handler, 1, undefined); return this; }

  _register(name, handler, flags, spec) {
    if (typeof handler !== 'function') throw new TypeError('handler must be a function');
    if (this.queue) { this.queue.push(['m', name, handler, flags, spec]); return; }
    if (this.h) register(this, name, handler, flags, spec);
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
      // Before the load: what is queued fails now, and _init closes the core,
      // so that later calls fail at once too.
      if (this.closedError) return;
      this._fail(new RPCError(code, message));
      this.queue.push(['x', code, message]);
      return;
    }
    if (!this.h || this.closedError) return;
    this.closedError = new RPCError(code, message);
    X._weft_close(this.h, code, put(message));
    this.timer.disarm();
    this.waits?.forEach((end) => end(this.closedError));  // retry.js
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
