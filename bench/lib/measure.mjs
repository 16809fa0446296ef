// Latency (sequential round trips) and throughput (N calls in flight) of an
// async call function. Both loops are bounded (count or deadline).
const { performance } = globalThis;  // Node and browsers alike
import { steppedPercentile, timerStep } from './stats.mjs';

/**
 * Sequential round trips: p50/p99 in microseconds over `n` calls (after a
 * warm-up). On a coarsened clock (a browser's 5 or 100 µs) each is
 * interpolated within the clock's step (stats.mjs steppedPercentile); `step`
 * says which step, 0 for none.
 */
export async function latency(call, n) {
  const warm = Math.max(50, n >> 3);
  for (let i = 0; i < warm; i++) await call();
  const t = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    t[i] = (performance.now() - t0) * 1000;
  }
  t.sort();
  const step = timerStep(t);
  return { p50: steppedPercentile(t, 50, step), p99: steppedPercentile(t, 99, step), n, step };
}

/** Keep `inflight` calls outstanding for `ms`; returns completed calls per second. */
export function throughput(call, inflight, ms) {
  return new Promise((resolve, reject) => {
    let done = 0;
    let active = 0;
    let failed = null;
    const start = performance.now();
    const deadline = start + ms;
    const finish = () => {
      const s = (performance.now() - start) / 1000;
      if (failed) reject(failed);
      else resolve({ rate: done / s, calls: done, seconds: s });
    };
    const launch = () => {
      active++;
      call().then(() => {
        done++;
        active--;
        if (!failed && performance.now() < deadline) launch();
        else if (active === 0) finish();
      }, (e) => {
        failed = failed || e;
        active--;
        if (active === 0) finish();
      });
    };
    for (let i = 0; i < inflight; i++) launch();
  });
}

/**
 * Warm-up + throughput; a short warm-up keeps JIT and allocation effects out.
 * Each contender starts on a collected heap (gc(), where run.mjs and the
 * page's --expose-gc give it), not on the garbage of the one measured before:
 * a 64 KiB echo's calls/s moves with the heap it starts on.
 */
export async function measureCall(call, cfg) {
  globalThis.gc?.();
  await throughput(call, cfg.inflight, Math.min(200, cfg.ms / 4));
  const lat = await latency(call, cfg.latencyCalls);
  const thr = await throughput(call, cfg.inflight, cfg.ms);
  return { p50: lat.p50, p99: lat.p99, rate: thr.rate };
}
