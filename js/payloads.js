// Payloads — params, result, error.data — stay JavaScript values; the core
// holds handles (wasm/payloads.h has the contract; abi.h the numbers).
//
// Outbound (values handed to the core): a table per endpoint. A handle is
// generation × 2^PAY_INDEX_BITS + index. Ownership passes to the core with
// the handle and comes back exactly once, when the core hands the handle
// back in an outgoing record — sent or discarded — and `release()`, called
// only from there (wire.js `message()`), frees the entry. A handle whose
// generation does not match its entry is refused, never resolved to
// another value.
//
// Inbound (values in a message being received): a stack, pushed while the
// message is described and unwound when the receive returns; handlers and
// call completions see the values synchronously, inside it.
import * as A from '../dist/weft_abi.js';

const INDEX = 2 ** A.PAY_INDEX_BITS;
const GEN_MAX = 2 ** (52 - A.PAY_INDEX_BITS) - 1;  // handles stay below PAY_INBOUND_BASE
const FREE = Symbol('free');

export class Outbound {
  constructor() {
    this.values = [];  // index → value, or FREE
    this.gens = [];    // index → generation of the last handle given out
    this.free = [];
    this.count = 0;    // live handles
  }
  /** A handle for `v`; the core owns it until it comes back. */
  hold(v) {
    let n;
    if (this.free.length) {
      n = this.free.pop();
    } else {
      n = this.values.length;
      this.gens.push(0);
    }
    this.values[n] = v;
    // Handles exceed 2^31, where % would be a floating-point remainder (a
    // runtime call): generations wrap by comparison, indexes come out by
    // exact power-of-two division.
    const g = this.gens[n] === GEN_MAX ? 1 : this.gens[n] + 1;
    this.gens[n] = g;
    this.count++;
    return g * INDEX + n;
  }
  // The entry of a live handle; a stale one is refused.
  index(handle) {
    const g = Math.floor(handle / INDEX);
    const n = handle - g * INDEX;
    if (this.gens[n] !== g || this.values[n] === FREE)
      throw new Error(`weft: stale payload handle ${handle}`);
    return n;
  }
  /** The value of a live handle (the core passed it back without releasing it). */
  peek(handle) { return this.values[this.index(handle)]; }
  /** Frees `handle` and returns its value: the one place a handle ends. */
  release(handle) {
    const n = this.index(handle);
    const v = this.values[n];
    this.values[n] = FREE;
    this.free.push(n);
    this.count--;
    return v;
  }
  clear() {
    this.values.length = 0;
    this.gens.length = 0;
    this.free.length = 0;
    this.count = 0;
  }
}

const inbound = [];
let top = 0;

/** The inbound handle of `v` for the message being described. */
export function pushInbound(v) {
  inbound[top] = v;
  return A.PAY_INBOUND_BASE + top++;
}
export function inboundMark() { return top; }
export function unwindInbound(mark) {
  for (let i = mark; i < top; i++) inbound[i] = undefined;
  top = mark;
}
export function inboundValue(handle) { return inbound[handle - A.PAY_INBOUND_BASE]; }
