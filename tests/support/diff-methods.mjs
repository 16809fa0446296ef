// JS handlers that behave exactly like the native `weft serve --demo` methods
// (core/demo/demo.cpp, native-host/src/builtins.cpp `sleep`), for the
// differential test. Same ParamSpecs, same results, same error codes and
// messages. Targets the fixed native demo: `fail` takes any 32-bit code
// (positive too), and update/notify_hello/notify_sum answer requests with null.
import { RPCError } from '../../js/index.js';

const INVALID_PARAMS = -32602;
const REQUEST_CANCELLED = -32800;
const MAX_SLEEP_MS = 24 * 3600 * 1000;
const INT64_MAX = 2n ** 63n - 1n;

// nlohmann's json::type_name() of a value.
function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'number': return 'number';
    case 'string': return 'string';
    case 'boolean': return 'boolean';
    default: return 'object';
  }
}

export const specs = {
  subtract: { params: [{ name: 'minuend', type: 'number' }, { name: 'subtrahend', type: 'number' }] },
  add: { params: [{ name: 'a', type: 'number' }, { name: 'b', type: 'number' }] },
  get_data: { params: [] },
  fail: { params: [{ name: 'code', type: 'integer' }, { name: 'message', type: 'string' }, { name: 'data', type: 'any', required: false }] },
  sleep: { params: [{ name: 'ms', type: 'integer', required: true }] },
};

export function sleepHandler(params, ctx) {
  const v = params !== null && typeof params === 'object' && !Array.isArray(params) && 'ms' in params ? params.ms : params;
  if (!Number.isInteger(v) || v < 0 || v > MAX_SLEEP_MS)
    throw new RPCError(INVALID_PARAMS, 'Invalid params: ms must be an integer from 0 to 86400000');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(v), v);
    const signal = ctx?.signal;  // no context for a notification
    if (signal) {
      const onAbort = () => { clearTimeout(timer); reject(new RPCError(REQUEST_CANCELLED, 'Request cancelled')); };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
  });
}

/** Registers the demo methods and `sleep` on a weft endpoint. */
export function registerDiffMethods(ep) {
  ep.method('subtract', (p) => p.minuend - p.subtrahend, specs.subtract);
  ep.method('add', (p) => p.a + p.b, specs.add);
  ep.method('sum', (p) => {
    if (!Array.isArray(p)) throw new RPCError(INVALID_PARAMS, 'Invalid params: sum takes an array of numbers');
    // As native: an exact int64 sum while every element is an integer and it
    // does not overflow, else the double sum in order.
    let dsum = 0;
    let isum = 0n;
    let integral = true;
    for (const v of p) {
      if (typeof v !== 'number')
        throw new RPCError(INVALID_PARAMS, 'Invalid params: sum takes an array of numbers, got ' + typeName(v));
      dsum += v;
      if (integral && Number.isInteger(v) && Math.abs(v) < 2 ** 63) {
        isum += BigInt(v);
        if (isum > INT64_MAX || isum < -INT64_MAX - 1n) integral = false;
      } else {
        integral = false;
      }
    }
    return integral ? Number(isum) : dsum;
  });
  for (const sink of ['update', 'notify_hello', 'notify_sum']) ep.method(sink, () => null);
  ep.method('get_data', () => ['hello', 5], specs.get_data);
  ep.method('echo', (p) => (p === undefined ? null : p));
  ep.method('fail', (p) => {
    const c = p.code;
    if (c < -2147483648 || c > 2147483647)
      throw new RPCError(INVALID_PARAMS, 'Invalid params: "code" must be an integer from -2147483648 to 2147483647');
    throw new RPCError(c, p.message, p.data);
  }, specs.fail);
  ep.method('sleep', sleepHandler, specs.sleep);
  return ep;
}
