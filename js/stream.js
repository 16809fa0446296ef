// The caller's side of a streamed result (docs/streams.md): an async
// iterator over the chunks, holding at most `highWaterMark` of them. Credit
// is granted as the consumer takes chunks, so the sender never has more in
// flight than the consumer has room for, whatever its speed: in steps of
// max(1, hwm/4), the rest at the end of the turn, never left owed (as the
// native client's). An abort or timeout (always local) drops the buffer.
import { X } from './heap.js';
import { cancelled } from './context.js';
import { ErrorCode } from './errors.js';

export class ChunkStream {
  constructor(ep, highWaterMark) {
    this.ep = ep;
    this.hwm = highWaterMark;
    this.owed = 0;                // taken, not granted back yet
    this.posted = false;          // a grant is due at the end of the turn
    this.buf = [];
    this.rec = null;              // the call record (endpoint.js)
    this.ended = false;
    this.error = null;
    this.wake = null;
    this.last = null;             // the last next()'s promise: the next one waits for it
    this.returned = false;        // return() was called: done from then on
    /** The handler's final answer (rejects as the iteration does). */
    this.result = null;
    /** The final answer's metrics, once it arrived with them (docs/protocol.md "Metrics"). */
    this.metrics = undefined;
  }
  _chunk(v) {
    if (this.returned) return;
    this.buf.push(v);
    this._wake();
  }
  _end() { this.ended = true; this._wake(); }
  _fail(e) {
    if (this.rec?.signal?.aborted || e?.code === ErrorCode.Timeout) this.buf.length = 0;
    if (!this.returned) this.error = e;
    this._end();
  }
  _wake() {
    const w = this.wake;
    this.wake = null;
    w?.();
  }
  _took() {
    if (++this.owed >= (this.hwm >> 2 || 1)) this._grant();
    else if (!this.posted) {
      this.posted = true;
      setTimeout(() => { this.posted = false; this._grant(); });
    }
  }
  _grant() {
    const { ep, rec, owed } = this;
    if (owed && !this.ended && ep.h && rec?.id && X._weft_grant(ep.h, rec.id, owed)) this.owed = 0;
  }
  /**
   * The next chunk. Calls made before the last one settled are answered in
   * order, one chunk each, as an async generator answers them.
   */
  next() {
    const take = () => this._take();
    // Never at once: an abort already settled is seen first.
    const p = (this.last ?? Promise.resolve()).then(take, take);
    this.last = p;
    return p;
  }
  async _take() {
    for (;;) {
      if (this.buf.length) {
        const value = this.buf.shift();
        this._took();
        return { value, done: false };
      }
      if (this.error) {
        const e = this.error;
        this.error = null;
        throw e;
      }
      if (this.ended) return { value: undefined, done: true };
      await new Promise((resolve) => { this.wake = resolve; });
    }
  }
  /** Stops early (a `break` out of for await): cancels the call, or drops it if not sent yet. */
  async return() {
    const rec = this.rec;
    if (!this.ended && rec && !rec.done) {
      if (rec.id) {
        if (this.ep.h) X._weft_cancel(this.ep.h, rec.id);
      } else {  // still queued: never sent
        rec.done = true;
        if (rec.onAbort) rec.signal.removeEventListener('abort', rec.onAbort);
        rec.reject(cancelled());
      }
    }
    this.returned = true;
    this.ended = true;
    this.buf.length = 0;
    this.error = null;
    this._wake();
    return { value: undefined, done: true };
  }
  [Symbol.asyncIterator]() { return this; }
}
