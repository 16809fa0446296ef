// Errors: the JSON-RPC 2.0 error object (§5.1) as a JavaScript Error.
import { CODES } from '../dist/weft_abi.js';

/** Error codes the core uses (weft/error.h, via wasm/abi.h). */
export const ErrorCode = CODES;

/** A JSON-RPC error: `code`, `message` and optional `data`, as on the wire. */
export class RPCError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = 'RPCError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

// Whether Error.stackTraceLimit can be set (V8's; frozen under a lockdown).
const limitable = (() => {
  const d = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  return d !== undefined && d.writable === true && typeof d.value === 'number';
})();

/**
 * The RPCError a call rejects with when the core fails it: the other side's
 * error answer, or a local failure (timeout, cancel, close). It is made
 * without stack frames: they would be weft's own receive or timer path
 * under the module's frames, never the caller's, and V8 takes ~10 µs to
 * capture them there (bench/README.md, "Error answers, the short way").
 */
export function answerError(code, message, data) {
  if (!limitable) return new RPCError(code, message, data);
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RPCError(code, message, data);
  } finally {
    Error.stackTraceLimit = limit;
  }
}
