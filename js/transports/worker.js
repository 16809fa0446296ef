import { packMode } from '../pack.js';
import { makeTransport } from './transport.js';
import { isNodeEmitter, eventListening, emitterListening } from './listen.js';

/**
 * A Worker: browser Worker or Node worker_threads Worker. Terminating it
 * rejects pending calls (-32002), and so does, in a browser, a worker that
 * never started: its script failed to load (or, a module worker, to parse or
 * import), which the browser reports with a plain `error` Event. An uncaught
 * exception inside a running worker is an ErrorEvent: the worker runs on, so
 * it closes nothing. A worker that ends itself (self.close()) tells its
 * Worker object nothing: calls left to it end in their timeout. In Node the
 * worker's `exit` covers all of these.
 */
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
      // A load failure is a plain Event; a running worker's uncaught
      // exception an ErrorEvent (it has a message), which is not a close.
      const failed = (ev) => { if (typeof ev?.message !== 'string') fire(); };
      worker.addEventListener('error', failed);
      const unfail = () => worker.removeEventListener('error', failed);
      // Browsers fire no event when a worker is terminated: watch the call,
      // one patch for all its transports.
      let t = worker.terminate;
      if (typeof t !== 'function') return unfail;
      if (!t.fires) {
        const prev = t;
        t = worker.terminate = function terminate(...args) {
          for (const f of t.fires) f();
          return prev.apply(this, args);
        };
        t.fires = new Set();
      }
      t.fires.add(fire);
      return () => { t.fires.delete(fire); unfail(); };
    },
    mode,
  });
}
