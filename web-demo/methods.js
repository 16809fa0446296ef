// The methods every demo boundary serves (iframe, worker, MessageChannel).
// The same handlers run in each realm; `where` names the realm in replies.
import { RPCError } from '/js/index.js';

/** Registers the demo methods on `peer`; returns the live counters. */
export function serveDemo(peer, where, extraStats = () => ({})) {
  const stats = { handled: 0, notes: 0, aborted: 0 };
  peer.method('echo', (params) => { stats.handled++; return params; });
  peer.method('add', (params) => {
    stats.handled++;
    const [a, b] = Array.isArray(params) ? params : [params?.a, params?.b];
    if (typeof a !== 'number' || typeof b !== 'number') throw new RPCError(-32602, 'Invalid params: add takes two numbers');
    return a + b;
  });
  // The latency burst: kept cheap and not counted as a "handled" demo call.
  peer.method('ping', (params) => params ?? null);
  peer.method('slow', (params, { signal }) => {
    stats.handled++;
    const ms = Math.min(Math.max(Number(params?.ms) || 5000, 0), 60000);
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve({ where, slept: ms }), ms);
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        stats.aborted++;
        // Tell the caller that the handler itself saw the abort.
        peer.notify('slow.aborted', { where, afterMs: Math.round(performance.now() - started), reason: String(signal.reason?.message ?? signal.reason) });
        reject(signal.reason);
      }, { once: true });
    });
  });
  peer.method('fail', () => {
    stats.handled++;
    throw new RPCError(4000, 'Deliberate failure', { where, hint: 'handlers throw RPCError to choose code, message and data' });
  });
  peer.onNotify('note', (params) => {
    stats.notes++;
    peer.notify('note.ack', { where, count: stats.notes, text: params?.text ?? null });
  });
  peer.method('stats', () => ({ where, ...stats, ...extraStats() }));
  return stats;
}
