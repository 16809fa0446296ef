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
