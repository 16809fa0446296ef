// The caller's side of a streamed result (docs/streams.md): an async
// iterator over the chunks, holding at most `highWaterMark` of them. Credit
// is granted as the consumer takes chunks, so the sender never has more in
// flight than the consumer has room for, whatever its speed.
import { X } from './heap.js';
import { cancelled } from './context.js';

export class ChunkStream {
  constructor(ep, highWaterMark) {
    this.ep = ep;
    this.hwm = highWaterMark;
    this.credit = highWaterMark;  // granted and not yet received
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
    this.credit--;
    this.buf.push(v);
    this._wake();
  }
  _end() { this.ended = true; this._wake(); }
  _fail(e) { if (!this.returned) this.error = e; this._end(); }
  _wake() {
    const w = this.wake;
    this.wake = null;
    w?.();
  }
  // Grants what the consumer has room for once half the window is free.
  _refill() {
    const room = this.hwm - this.credit - this.buf.length;
    if (this.ended || room * 2 < this.hwm || !this.ep.h || !this.rec?.id) return;
    if (X._weft_grant(this.ep.h, this.rec.id, room)) this.credit += room;
  }
  /**
   * The next chunk. Calls made before the last one settled are answered in
   * order, one chunk each, as an async generator answers them.
   */
  next() {
    const take = () => this._take();
    const p = this.last === null ? take() : this.last.then(take, take);
    this.last = p;
    return p;
  }
  async _take() {
    for (;;) {
      if (this.buf.length) {
        const value = this.buf.shift();
        this._refill();
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
