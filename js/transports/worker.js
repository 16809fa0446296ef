import { packMode } from '../pack.js';
import { makeTransport } from './transport.js';
import { isNodeEmitter, eventListening, emitterListening } from './listen.js';

/** A Worker: browser Worker or Node worker_threads Worker. Terminating it rejects pending calls. */
export function workerTransport(worker, options) {
  const mode = packMode(options, 'workerTransport()');
  const post = (msg, transfer) => worker.postMessage(msg, transfer);
  if (isNodeEmitter(worker)) {
    return makeTransport({
      post,
      ...emitterListening(worker),
      watchClose(fire) {
        worker.on('exit', fire);
        return () => worker.off('exit', fire);
      },
      mode,
    });
  }
  return makeTransport({
    post,
    ...eventListening(worker),
    watchClose(fire) {
      // Browsers fire no event when a worker is terminated: watch the call,
      // one patch for all its transports.
      let t = worker.terminate;
      if (typeof t !== 'function') return () => {};
      if (!t.fires) {
        const prev = t;
        t = worker.terminate = function terminate(...args) {
          for (const f of t.fires) f();
          return prev.apply(this, args);
        };
        t.fires = new Set();
      }
      t.fires.add(fire);
      return () => t.fires.delete(fire);
    },
    mode,
  });
}
