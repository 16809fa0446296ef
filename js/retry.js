// Opt-in retry of idempotent calls (request(..., { retry: true })). Which
// errors are retryable and how long to wait is the core's one rule
// (weft::retry_delay, docs/protocol.md); this only waits and calls again.
import { RPCError } from './errors.js';
import { X } from './heap.js';
import { cancelled } from './context.js';

export async function requestWithRetry(ep, method, params, options) {
  const signal = options.signal;
  for (let attempt = 1; ; attempt++) {
    try {
      return await ep._request(method, params, options, null);
    } catch (e) {
      if (!(e instanceof RPCError) || signal?.aborted || !X) throw e;
      const ra = typeof e.data?.retry_after === 'number' ? e.data.retry_after : -1;
      const delay = X._weft_retry_delay(e.code, attempt, ra, Math.random());
      if (delay < 0) throw e;
      await new Promise((resolve, reject) => {
        const onAbort = () => { ep.clock.clearTimeout(t); reject(cancelled()); };
        const t = ep.clock.setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, delay);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }
}
