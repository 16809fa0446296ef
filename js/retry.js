// Opt-in retry of idempotent calls (request(..., { retry: true })). Which
// errors are retryable and how long to wait is the core's one rule
// (weft::retry_delay, docs/protocol.md); this only waits and calls again.
// A call's own timeout (endpoint.js marks it) is final, as natively
// (docs/protocol.md "Retry is opt-in").
import { abortError } from './batch.js';
import { RPCError } from './errors.js';
import { X } from './heap.js';

// setTimeout's longest delay (js/timer.js: a longer one fires at once).
const MAX_DELAY = 2 ** 31 - 1;
export const ownTimeouts = new WeakSet();

export async function requestWithRetry(ep, method, params, options) {
  const signal = options.signal;
  for (let attempt = 1; ; attempt++) {
    try {
      return await ep._request(method, params, options, null);
    } catch (e) {
      if (!(e instanceof RPCError) || signal?.aborted || !X || ownTimeouts.has(e)) throw e;
      const ra = typeof e.data?.retry_after === 'number' ? e.data.retry_after : -1;
      const delay = X._weft_retry_delay(e.code, attempt, ra, Math.random());
      if (delay < 0) throw e;
      if (ep.closedError) throw ep.closedError;
      // The whole delay, however long (docs/protocol.md "Retryable errors"), in
      // steps, unless aborted or closed (-32002 at once: docs/reliability.md).
      const clock = ep.clock;
      const until = clock.now() + delay;
      await new Promise((resolve, reject) => {
        let t;
        const end = (e) => {
          clock.clearTimeout(t);
          signal?.removeEventListener('abort', onAbort);
          ep.waits.delete(end);
          e ? reject(e) : resolve();
        };
        const onAbort = () => end(abortError(signal));
        const wait = (ms) => {
          t = clock.setTimeout(() => {
            const left = until - clock.now();
            if (left > 0 && ms === MAX_DELAY) return wait(Math.min(MAX_DELAY, Math.ceil(left)));
            end();
          }, ms);
        };
        wait(Math.min(MAX_DELAY, delay));
        signal?.addEventListener('abort', onAbort, { once: true });
        (ep.waits ??= new Set()).add(end);
      });
    }
  }
}
