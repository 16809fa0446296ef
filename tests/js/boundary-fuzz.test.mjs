// A property test of the JavaScript boundary (docs/reliability.md): random
// values and random byte frames posted into a weft-rpc endpoint, or handed to
// it directly (values no structured clone could carry: throwing getters and
// proxies, cycles, functions), never throw into the caller, never corrupt the
// calls that follow, and leave the wasm heap and the endpoint's tables at
// their baseline. Seeded: WEFT_FUZZ_SEED=<n> replays a run; every failure
// names its seed.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Peer, heapUsed, portTransport, ready } from '../../js/index.js';
import { until } from '../support/until.mjs';

const SEED = Number(process.env.WEFT_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ROUNDS = Number(process.env.WEFT_FUZZ_ROUNDS ?? 300);
const PER_ROUND = 30;

// mulberry32: small, fast, good enough to pick shapes.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(r) {
  const int = (n) => Math.floor(r() * n);
  const pick = (xs) => xs[int(xs.length)];
  const bytes = (n) => Uint8Array.from({ length: n }, () => int(256));
  const str = () => {
    const k = int(4);
    if (k === 0) return pick(['', 'jsonrpc', '2.0', '1.0', 'add', 'echo', 'rpc.discover', '$/cancelRequest', 'weft/pack', '__proto__']);
    if (k === 1) return String.fromCharCode(...Array.from({ length: int(12) }, () => int(0x10000))); // lone surrogates too
    if (k === 2) return Buffer.from(bytes(int(40))).toString('latin1'); // a "frame" as text
    return 'x'.repeat(int(8) ? int(20) : 70000);
  };
  const num = () => pick([0, -0, 1, -1, 2 ** 53, 2 ** 64, 1.5, NaN, Infinity, -Infinity, int(1e9), -int(1e9), 1e308]);
  const id = () => pick([num(), str(), null, undefined, true, {}, [], int(100)]);
  const value = (depth) => {
    const k = depth > 2 ? int(5) : int(11);
    switch (k) {
      case 0: return num();
      case 1: return str();
      case 2: return pick([null, undefined, true, false]);
      case 3: return bytes(int(64)); // a byte frame
      case 4: return pick([10n ** 30n, new Date(int(1e12)), bytes(8).buffer, new DataView(bytes(4).buffer)]);
      case 5: return Array.from({ length: int(6) }, () => value(depth + 1));
      case 6: return Object.fromEntries(Array.from({ length: int(5) }, () => [str(), value(depth + 1)]));
      case 7: return new Map([[str(), value(depth + 1)]]);
      case 8: return message(depth + 1);
      case 9: return nested(int(3) ? int(50) : 2000);
      default: // a batch; now and then one over the core's max_batch
        return depth === 0 && !int(8)
          ? Array.from({ length: 5000 }, (_, i) => ({ jsonrpc: '2.0', method: 'add', params: [i, 1], id: i }))
          : Array.from({ length: int(4) }, () => message(depth + 1));
    }
  };
  const nested = (n) => {
    let v = [];
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  // Something shaped like JSON-RPC, each member maybe wrong.
  const message = (depth) => {
    const m = {};
    if (int(8)) m.jsonrpc = int(6) ? '2.0' : value(depth + 1);
    const kind = int(4);
    if (kind < 2) m.method = int(4) ? pick(['add', 'echo', 'nope', 'rpc.x', '$/cancelRequest', 'notify']) : value(depth + 1);
    if (kind !== 1 && int(4)) m.id = id();
    if (int(2)) m.params = int(3) ? pick([[1, 2], { a: 1 }, [str(), num()]]) : value(depth + 1);
    if (kind === 2) m.result = value(depth + 1);
    if (kind === 3) m.error = int(2) ? { code: num(), message: str(), data: value(depth + 1) } : value(depth + 1);
    if (typeof m.id === 'string' && m.id.startsWith('check')) m.id = 'x' + m.id;
    return m;
  };
  // Values only a direct call can deliver: no structured clone carries these.
  const hostile = () => {
    const k = int(7);
    if (k === 0) return { jsonrpc: '2.0', get method() { throw new Error('getter'); }, id: 1 };
    if (k === 1) return new Proxy({}, { get() { throw new Error('proxy get'); }, ownKeys() { throw new Error('proxy keys'); } });
    if (k === 2) { const o = { jsonrpc: '2.0', method: 'echo', id: 'cyc' }; o.params = [o]; return o; }
    if (k === 3) return { jsonrpc: '2.0', method: 'echo', id: 'fn', params: [() => 1, Symbol('s')] };
    if (k === 4) return [{ jsonrpc: '2.0', method: 'echo', id: 'f', params: { toJSON() { throw new Error('toJSON'); } } }];
    if (k === 5) return Object.create(null, { jsonrpc: { value: '2.0', enumerable: true }, method: { value: 'add', enumerable: true } });
    return { jsonrpc: '2.0', method: 'echo', id: 'big', params: [10n] };
  };
  return { value, message, hostile, int };
}

test(`random values and byte frames never throw, corrupt later calls or leak (seed ${SEED})`, { timeout: 120000 }, async (t) => {
  t.diagnostic(`seed ${SEED} (replay: WEFT_FUZZ_SEED=${SEED})`);
  await ready;
  const { port1, port2 } = new MessageChannel();
  const diagnostics = [];
  const victim = new Peer(portTransport(port2), { timeout: 0, onDiagnostic: (k) => diagnostics.push(k) });
  victim.method('add', ([a, b]) => a + b);
  victim.method('echo', (p) => p);
  victim.method('slow', async (p, { signal }) => new Promise((res) => { const tm = setTimeout(() => res(p), 5); signal.addEventListener('abort', () => clearTimeout(tm)); }));
  victim.onNotify('notify', () => {});
  // Closed however the test ends: an open port would keep the test process
  // alive after a failed assertion, and the run would hang instead of failing.
  t.after(() => { victim.destroy(); port1.close(); });

  // The raw side: whatever the victim posts arrives here (maybe packed).
  const waiting = new Map();
  const seenIds = new Map();
  port1.onmessage = (ev) => {
    const data = ev.data;
    const list = data && Array.isArray(data['weft/pack']) ? data['weft/pack'] : [data];
    for (const m of list.flatMap((x) => (Array.isArray(x) ? x : [x]))) {
      if (m && typeof m.id === 'string' && m.id.startsWith('check')) {
        seenIds.set(m.id, (seenIds.get(m.id) ?? 0) + 1);
        waiting.get(m.id)?.(m);
      }
      if (m && m.method === 'whoami' && m.id !== undefined) port1.postMessage({ jsonrpc: '2.0', id: m.id, result: 'raw side' });
    }
  };
  const rawCall = (id, method, params) =>
    new Promise((resolve, reject) => {
      const tm = setTimeout(() => reject(new Error(`seed ${SEED}: no answer to ${id}`)), 5000);
      waiting.set(id, (m) => { clearTimeout(tm); waiting.delete(id); resolve(m); });
      port1.postMessage({ jsonrpc: '2.0', id, method, params });
    });

  let checks = 0;
  const check = async (round) => {
    const id = `check-${++checks}`;
    const r = await rawCall(id, 'add', [round, 1]);
    assert.deepEqual(r, { jsonrpc: '2.0', id, result: round + 1 }, `seed ${SEED}, round ${round}: a later call was corrupted`);
    assert.equal(await victim.request('whoami', undefined, { timeout: 5000 }), 'raw side', `seed ${SEED}, round ${round}: outgoing call`);
  };

  // Three passes over the same values. The first brings every table and
  // buffer to the largest size these values need (a 5000-element batch, a
  // 70 kB string). Buffers that trade places (a queued text and the host's
  // scratch string, wasm/queued.cpp) end a pass in either order, so the
  // heap after a pass may differ by their capacities' difference from one
  // pass to the next (seed 1196294318: 8 bytes, alternating, five passes
  // long). A leak instead grows every pass: the heap after the third pass
  // must not exceed the larger of the first two.
  const pass = async (label) => {
    const g = generator(rng(SEED));
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < PER_ROUND; i++) {
        const direct = g.int(4) === 0;
        const v = direct ? g.hostile() : g.int(2) ? g.message(0) : g.value(0);
        if (direct) {
          assert.doesNotThrow(() => victim._onMessage(v), `seed ${SEED}, ${label} round ${round}: threw into the caller`);
        } else {
          try {
            port1.postMessage(v);
          } catch (e) {
            assert.equal(e.name, 'DataCloneError', `seed ${SEED}: ${e}`); // the channel's refusal, not weft's
          }
        }
      }
      await check(round);
      if (process.env.WEFT_FUZZ_TRACE) console.log(label, round, heapUsed(), JSON.stringify(victim.stats()));
    }
    await until(() => victim.stats().inFlight === 0, `seed ${SEED}: slow handlers finish`);
    await check(ROUNDS);
  };
  // Cancelled and slow handlers settle after each pass; then it is measured.
  const settled = async (label) => {
    await until(() => { const s = victim.stats(); return s.inFlight === 0 && s.payloads === 0; },
      `seed ${SEED}: cancelled and slow handlers settle after the ${label} pass`);
    await check(ROUNDS);
    return heapUsed();
  };
  await pass('first');
  const first = await settled('first');
  await pass('second');
  const base = Math.max(first, await settled('second'));
  await pass('third');
  const third = await settled('third');
  const s = victim.stats();
  assert.deepEqual({ pending: s.pending, inFlight: s.inFlight, calls: s.calls, payloads: s.payloads },
    { pending: 0, inFlight: 0, calls: 0, payloads: 0 }, `seed ${SEED}: tables not empty`);
  assert.ok(third <= base, `seed ${SEED}: wasm heap after the third pass ${third} > ${base}, the larger after the first two`);
  for (const [id, n] of seenIds) assert.equal(n, 1, `seed ${SEED}: ${id} answered ${n} times`);
  t.diagnostic(`${3 * ROUNDS * PER_ROUND} values (three passes), ${checks} checked calls; diagnostics: ${diagnostics.length}`);
});
