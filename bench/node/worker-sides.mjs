// Where the time of a worker_threads round trip goes, side by side per
// contender (bench/README.md, "worker_threads: each side's share"): the small
// call's round-trip p50, and the median time each side spends between a
// message arriving and its own next postMessage — the worker's (request in,
// answer out) and the main thread's (answer in, next request out). What is
// left of the round trip is the two thread wake-ups and the copies.
// Every contender has its own worker, all started at once, and the calls go
// in blocks that take turns: each contender is measured in the same stretch
// of time as the others, so a machine that drifts (the wake-up time alone
// moves by tens of percent between runs) shifts them all alike.
//   node bench/node/worker-sides.mjs                 weft, json-rpc-2.0, birpc and the raw floor
//   node bench/node/worker-sides.mjs --busy          the same, the workers never idle (a
//                                                    setImmediate loop): no wake-up, warm caches
//   node bench/node/worker-sides.mjs --contenders weft,raw --blocks 40 --calls 250
//                                                    (blocks per contender, calls per block)
// The sides are timed by a 'message' listener added before the contender's
// own and by wrapping the port's postMessage; both cost the same for every
// contender (tens of ns).
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { once } from 'node:events';
import { serve, connect } from './contenders.mjs';
import { median, percentile } from '../lib/stats.mjs';

const { performance } = globalThis;

// Times from each 'message' event on `ep` to the next ep.postMessage, in µs.
function sideTimer(ep) {
  let t0 = 0;
  const spans = [];
  ep.on('message', () => { t0 = performance.now(); });
  const post = ep.postMessage.bind(ep);
  ep.postMessage = (m, transfer) => {
    if (t0) { spans.push((performance.now() - t0) * 1000); t0 = 0; }
    return post(m, transfer);
  };
  return { post, spans, cut() { t0 = 0; }, reset() { spans.length = 0; t0 = 0; } };
}

if (!isMainThread) {
  // The server: times its side; on 'side?' answers the median so far.
  const timer = sideTimer(parentPort);
  parentPort.on('message', (d) => {
    if (d === 'side?') { timer.post({ side: median(timer.spans) }); timer.reset(); }
  });
  await serve(workerData.lib, parentPort, true);
  if (workerData.busy) { const spin = () => setImmediate(spin); spin(); }
  timer.post('ready');
} else {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
  const busy = args.includes('--busy');
  const libs = opt('--contenders', 'raw,weft,json-rpc-2.0,birpc').split(',');
  const blocks = Number(opt('--blocks', 40));
  const calls = Number(opt('--calls', 250));
  const ends = {};
  for (const lib of libs) {
    const w = new Worker(new URL(import.meta.url), { workerData: { lib, busy } });
    const [first] = await once(w, 'message');
    if (first !== 'ready') throw new Error(`worker for ${lib} did not start: ${first}`);
    const timer = sideTimer(w);
    const c = await connect(lib, w, 'x');
    if (await c.small() !== 3) throw new Error(`${lib}: add({a:1,b:2}) did not answer 3`);
    ends[lib] = { w, timer, c, rt: new Float64Array(blocks * calls) };
  }
  for (const lib of libs) for (let i = 0; i < 3000; i++) await ends[lib].c.small();  // warm-up
  for (const lib of libs) ends[lib].timer.reset();
  for (let b = 0; b < blocks; b++) {
    // Each block in another order, so that no contender always follows the same one.
    const order = libs.map((l, i) => libs[(i + b) % libs.length]);
    if (b & 1) order.reverse();
    for (const lib of order) {
      const { c, timer, rt } = ends[lib];
      timer.cut();
      for (let i = b * calls, e = i + calls; i < e; i++) {
        const t0 = performance.now();
        await c.small();
        rt[i] = (performance.now() - t0) * 1000;
      }
    }
  }
  console.log(`worker_threads, small call, ${busy ? 'workers kept busy' : 'workers idle between messages'}; ${blocks} blocks of ${calls} calls per contender, taking turns (µs)`);
  console.log('| contender | round trip p10 | p50 | p90 | worker: request in → answer out | main: answer in → next request out | both sides |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const lib of libs) {
    const { w, timer, c, rt } = ends[lib];
    const client = median(timer.spans);
    c.close();
    timer.post('side?');
    const [answer] = await once(w, 'message');
    await w.terminate();
    const s = answer.side;
    rt.sort();
    const q = (p) => percentile(rt, p).toFixed(1);
    console.log(`| ${lib} | ${q(10)} | ${q(50)} | ${q(90)} | ${s.toFixed(2)} | ${client.toFixed(2)} | ${(s + client).toFixed(2)} |`);
  }
}
