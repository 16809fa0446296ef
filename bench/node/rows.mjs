// Node rows: MessageChannel (client and server in one thread) and
// worker_threads (server in a worker). Per repetition every contender and the
// raw floor are measured, in an order that alternates between repetitions.
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { serve, connect, CONTENDERS } from './contenders.mjs';
import { measureCall } from '../lib/measure.mjs';
import { alternate, selected, selectedTransports } from '../lib/stats.mjs';
import * as weft from '../../js/index.js';

const BIG = 'x'.repeat(64 * 1024);
const WORKER = new URL('./worker-server.mjs', import.meta.url);

async function withMessageChannel(lib, fn) {
  const { port1, port2 } = new MessageChannel();
  const stop = await serve(lib, port2);
  const c = await connect(lib, port1, BIG);
  try { return await fn(c); } finally { c.close(); stop(); port1.close(); port2.close(); }
}

async function withWorker(lib, fn) {
  const w = new Worker(WORKER, { workerData: { lib } });
  const [first] = await once(w, 'message');
  if (first !== '__ready__') throw new Error('worker did not start: ' + first);
  const c = await connect(lib, w, BIG);
  try { return await fn(c); } finally { c.close(); await w.terminate(); }
}

export const NODE_TRANSPORTS = {
  'node-messagechannel': { label: 'Node MessageChannel', open: withMessageChannel },
  'node-worker': { label: 'Node worker_threads', open: withWorker },
};

/** results[transport][lib][call] = [{p50,p99,rate}, ...] one per repetition. */
export async function runNode(cfg, log) {
  const out = {};
  const libs = selected(CONTENDERS, cfg.contenders);
  for (const [key, t] of selectedTransports(NODE_TRANSPORTS, cfg.transports)) {
    out[key] = {};
    for (const lib of libs) out[key][lib] = { small: [], large: [] };
    for (let rep = 0; rep < cfg.reps; rep++) {
      for (const lib of alternate(libs, rep)) {
        await t.open(lib, async (c) => {
          const v = await c.small();  // every contender (the raw floor too) answers add({a:1,b:2}) = 3
          if (v !== 3) throw new Error(`${t.label} ${lib}: add({a:1,b:2}) answered ${JSON.stringify(v)}, not 3`);
          const w = await c.large();  // and the echo gives the 64 KiB string back
          if (w !== BIG) throw new Error(`${t.label} ${lib}: the 64 KiB echo answered ${typeof w === 'string' ? `a string of ${w.length}` : typeof w}, not the string sent`);
          for (const kind of ['small', 'large']) {
            const r = await measureCall(c[kind], kind === 'large' ? cfg.large : cfg.small);
            out[key][lib][kind].push(r);
            log(`${t.label} rep ${rep + 1} ${lib} ${kind}: p50 ${r.p50.toFixed(1)} µs, p99 ${r.p99.toFixed(1)} µs, ${Math.round(r.rate)} calls/s`);
          }
        });
      }
    }
  }
  return out;
}

/** 1,000,000 small calls in a row over a MessageChannel: wasm heap before/after. */
export async function runWeftHeap(cfg, log) {
  await weft.ready;
  return withMessageChannel('weft', async (c) => {
    const chunk = 10000;
    for (let i = 0; i < chunk; i++) await c.small();
    const before = weft.heapUsed();
    let done = 0;
    let mid = before;
    while (done < cfg.heapCalls) {
      if (done === Math.floor(cfg.heapCalls / 512) * 256) mid = weft.heapUsed();
      const ps = [];
      for (let i = 0; i < 256 && done < cfg.heapCalls; i++, done++) ps.push(c.small());
      await Promise.all(ps);
    }
    const after = weft.heapUsed();
    log(`weft wasm heap: ${before} B before, ${mid} B halfway, ${after} B after ${done} calls`);
    return { before, mid, after, calls: done };
  });
}
