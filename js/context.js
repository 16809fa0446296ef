// What a method handler gets besides params (docs/streams.md): the method
// name, an AbortSignal that aborts when the request is cancelled, and — when
// the caller opened a stream or asked for progress — a sink for chunks and
// progress(). The core keeps the credit and the queue; `await sink.write()`
// only waits for the core to say the caller has room.
import * as A from '../dist/weft_abi.js';
import { ErrorCode, RPCError } from './errors.js';
import { X, lastError } from './heap.js';

export const cancelled = () => new RPCError(ErrorCode.RequestCancelled, 'Request cancelled');

// A whole ArrayBuffer, or a view of all of one, can be transferred instead
// of copied; a view of part of a buffer is copied (transferring would take
// the rest of the buffer from the writer too).
function transferable(v) {
  if (v instanceof ArrayBuffer) return v;
  if (ArrayBuffer.isView(v) && v.buffer instanceof ArrayBuffer && v.byteOffset === 0 &&
      v.byteLength === v.buffer.byteLength) return v.buffer;
  return null;
}

class Sink {
  constructor(ctx) { this.ctx = ctx; }
  /** True when the caller opened a stream (client.stream()): chunks may be written. */
  get streaming() { return this.ctx._state() & A.REPLY_STREAMING ? true : false; }
  /**
   * Sends `value` as the next chunk; resolves when the caller has room for
   * more. options: final (this is the last chunk), total (the chunk count),
   * transfer (default true: an ArrayBuffer or whole-buffer view is
   * transferred, not copied, over postMessage; the writer gives it up).
   */
  write(value, options) {
    const { ctx } = this;
    const ep = ctx.ep;
    // After the answer the token may serve another request: never write there.
    if (ctx.done || !ep.h) return Promise.reject(new RPCError(ErrorCode.Closed, 'stream: the request is answered'));
    const buf = options?.transfer === false ? null : transferable(value);
    if (buf) ep.transfers.set(value, buf);
    const total = options?.total;
    const r = X._weft_reply_write(ep.h, ctx.token, ep.out.hold(value), options?.final ? 1 : 0,
      typeof total === 'number' && total >= 0 ? total : A.TOTAL_NONE);
    if (r === A.WRITE_MORE) return Promise.resolve();
    if (r === A.WRITE_REFUSED) {
      if (buf) ep.transfers.delete(value);
      return Promise.reject(lastError());
    }
    if (!ctx.room) {
      ctx.room = new Promise((resolve, reject) => { ctx.onRoom = resolve; ctx.onGone = reject; });
      ep.writers[ctx.token] = ctx;
      X._weft_reply_on_writable(ep.h, ctx.token);
    }
    return ctx.room;
  }
}

export class ServeContext {
  constructor(ep, method, token, rid) {
    this.ep = ep;
    this.method = method;
    this._token = token;  // TOKEN_HELD, or lazy (TOKEN_LAZY - the dispatch's depth): see token
    this._rid = rid;  // a request the core let go (serving.js dispatch), else NaN
    this._ac = null;
    this._cancelled = false;
    this._sink = null;
    this.room = null;  // the promise writers wait on (Sink.write)
    this.onRoom = null;
    this.onGone = null;
    this.done = false;  // answered: the token is no longer this request's
  }
  get signal() {
    if (!this._ac) {
      this._ac = new AbortController();
      if (this._cancelled) this._ac.abort(cancelled());
    }
    return this._ac.signal;
  }
  // The request's token: taken from the core on first use (weft_defer, or
  // weft_defer_held for a queued handler's, held again first if the core
  // let it go), so that a handler answering
  // with a plain value never needs one (serving.js dispatch). -1 once the
  // handler has answered without taking it.
  get token() {
    const t = this._token;
    if (t >= 0 || t === -1) return t;
    if (t === A.TOKEN_HELD) return (this._token = X._weft_defer_held(this.ep.h, this._rid));
    return (this._token = X._weft_defer(this.ep.h, A.TOKEN_LAZY - t));
  }
  get sink() { return (this._sink ??= new Sink(this)); }
  /** True when the caller asked for progress (request(..., { onProgress })). */
  get wantsProgress() { return this._state() & A.REPLY_PROGRESS ? true : false; }
  /** Sends a $/progress value to the caller if it asked for progress; else does nothing. */
  progress(value) {
    const ep = this.ep;
    if (ep.h && !this.done) X._weft_reply_progress(ep.h, this.token, ep.out.hold(value));
  }
  _state() { return this.ep.h && !this.done ? X._weft_reply_state(this.ep.h, this.token) : 0; }
  // The handler answered: a write still waiting for room is let go (its
  // chunks are queued in the core, ahead of the answer).
  _done() {
    this.done = true;
    // A token not taken is no longer this request's to take: the core's
    // hold or dispatch depth may be another request's by now.
    if (this._token < -1) this._token = -1;
    if (this._token >= 0 && this.ep.writers[this._token] === this) {
      this.ep.writers[this.token] = undefined;
      this._writable();
    }
  }
  _writable() {
    const f = this.onRoom;
    this.room = this.onRoom = this.onGone = null;
    f?.();
  }
  _cancel() {
    this._cancelled = true;
    if (this._ac) this._ac.abort(cancelled());
    const f = this.onGone;
    this.room = this.onRoom = this.onGone = null;
    f?.(cancelled());
  }
}
