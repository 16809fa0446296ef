// What the shape of a message costs by itself: sequential round trips over a
// Node MessageChannel carrying a small call's request and answer in each
// wire shape, no library (bench/README.md, "Tuples").
//   node bench/node/wire-shapes.mjs            p50 µs per shape, median of 5 alternating runs
//   node bench/node/wire-shapes.mjs SHAPE N    N round trips of one shape (for an
//                                              instruction counter, as round-trips.mjs)
import { MessageChannel } from 'node:worker_threads';

export const SHAPES = {
  // {a:1,b:2} out, 3 back: the raw floor of bench/node/rows.mjs.
  raw: [() => ({ a: 1, b: 2 }), () => 3],
  'JSON-RPC objects': [(id) => ({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id }), (q) => ({ jsonrpc: '2.0', result: 3, id: q.id })],
  // birpc's request and answer (a 21-character random id).
  'birpc objects': [() => ({ t: 'q', i: 'V1StGXR8_Z5jdHi6B-myT', m: 'add', a: [{ a: 1, b: 2 }] }), (q) => ({ t: 's', i: q.i, r: 3 })],
  // weft's tuples (docs/protocol.md, "Tuples").
  tuples: [(id) => [0n, id, 'add', { a: 1, b: 2 }], (q) => [2n, q[1], 3]],
};

async function pingPong(shape, n, timed) {
  const [make, answer] = SHAPES[shape];
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (q) => port1.postMessage(answer(q)));
  let resolve = null;
  port2.on('message', () => resolve());
  const call = (i) => new Promise((r) => { resolve = r; port2.postMessage(make(i)); });
  const t = timed ? new Float64Array(n) : null;
  for (let i = 0; i < n; i++) {
    const t0 = timed ? performance.now() : 0;
    await call(i);
    if (timed) t[i] = (performance.now() - t0) * 1000;
  }
  port1.close();
  port2.close();
  if (!timed) return 0;
  t.sort();
  return t[n >> 1];
}

const [only, count] = process.argv.slice(2);
if (only) {
  if (!SHAPES[only]) throw new Error(`unknown shape ${only}; one of: ${Object.keys(SHAPES).join(', ')}`);
  await pingPong(only, Number(count ?? 2000), false);
} else {
  const runs = Object.fromEntries(Object.keys(SHAPES).map((s) => [s, []]));
  for (let rep = 0; rep < 5; rep++) {
    const order = Object.keys(SHAPES);
    if (rep % 2) order.reverse();
    for (const s of order) {
      await pingPong(s, 2000, false);  // warm-up
      runs[s].push(await pingPong(s, 20000, true));
    }
  }
  for (const [s, v] of Object.entries(runs)) {
    v.sort((a, b) => a - b);
    console.log(`${s.padEnd(18)} p50 ${v[2].toFixed(2)} µs (runs: ${v.map((x) => x.toFixed(2)).join(' ')})`);
  }
}
