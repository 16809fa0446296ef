import { packMode } from '../pack.js';
import { makeTransport } from './transport.js';
import { eventListening, emitterListening } from './listen.js';

/** Inside a worker: the browser worker's global scope, or Node's parentPort. */
export function selfTransport(options) {
  const mode = packMode(options, 'selfTransport()');
  // A Node worker has no global postMessage; its parentPort is reached
  // synchronously (no import) through getBuiltinModule (Node 20.16, 22.3).
  const p = globalThis.process, node = p?.versions?.node;
  const wt = node && p.getBuiltinModule?.('node:worker_threads');
  if (wt && !wt.isMainThread && wt.parentPort) {
    const port = wt.parentPort;
    return makeTransport({
      post: (msg, transfer) => port.postMessage(msg, transfer),
      ...emitterListening(port),
      watchClose: null,
      mode,
    });
  }
  const scope = globalThis;
  if (typeof scope.postMessage !== 'function' || typeof scope.addEventListener !== 'function')
    throw new TypeError(`selfTransport(): not inside a worker${node && !p.getBuiltinModule ? ' (Node: needs process.getBuiltinModule, 20.16+ or 22.3+)' : ''}`);
  return makeTransport({
    post: (msg, transfer) => scope.postMessage(msg, transfer),
    ...eventListening(scope),
    watchClose: null,
    mode,
  });
}
