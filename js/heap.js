// The module's memory as JS sees it: the raw exports, the shared input
// buffer (strings going in), the descriptor array (numbers going in), the
// status array, and strings coming out. Views are read from the module on
// every use: memory growth replaces them.
import * as A from '../dist/weft_abi.js';
import { RPCError } from './errors.js';

export let M = null;  // the Emscripten module
export let X = null;  // its raw exports (M._weft_*)

// ignoreBOM: a string may begin with U+FEFF; it is data, not a byte order mark.
const dec = new TextDecoder('utf-8', { ignoreBOM: true });
const enc = new TextEncoder();
let inPtr = 0, inCap = 0, statusPtr = 0, descPtr = 0, descCap = 0;

export function attach(m) {
  M = m;
  X = m;
  statusPtr = X._weft_status();
  inCap = 4096;
  inPtr = X._weft_in(inCap);
  desc(256);
}

/** The UTF-8 string at `p`, `n` bytes. */
export function str(p, n) {
  const heap = M.HEAPU8;
  if (n < 48) {  // short ASCII (method names, ids) without TextDecoder's setup
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

/**
 * Writes `s` as UTF-8 into the input buffer at byte `at`; returns the byte
 * count. Lone surrogates become U+FFFD, as TextEncoder writes them.
 */
export function put(s, at = 0) {
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

/** The descriptor array with room for `n` doubles: its index in HEAPF64. */
export function desc(n) {
  if (n > descCap) {
    descCap = Math.max(n, descCap * 2, 256);
    descPtr = X._weft_desc(descCap);
  }
  return descPtr >> 3;
}

/** Slot `i` of the status array (abi.h WEFT_ABI_STATUS). */
export function status(i) { return M.HEAPF64[(statusPtr >> 3) + i]; }

/** The error of the export that just failed (weft_error()). */
export function lastError() {
  const e = JSON.parse(str(X._weft_error(), status(A.STATUS_ERROR_LENGTH)));
  return new RPCError(e.code, e.message, e.data);
}
