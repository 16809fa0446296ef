// The bench page: window.benchOne(transport, lib, cfg) opens a fresh channel,
// Worker or iframe for `lib`, measures the small and large calls, closes it.
// window.benchBlocks(transport, lib, blocks, size) times sequential small
// calls in blocks, and window.benchBlocksAlternating(transport, libs, reps)
// takes turns at it (bench/browser/blocks.mjs).
// window.benchPaired(transport, libs, kind, rounds, ms) takes turns at short
// throughput bursts (bench/browser/paired.mjs).
// window.benchHeap(calls) checks weft's wasm heap over many calls in a row.
// ?frame=ORIGIN is the second site that serves the cross-site iframe.
import { serve, connect, portLink, workerLink, windowLink } from './contenders.mjs';
import { measureCall, throughput } from '/bench/lib/measure.mjs';
import { ready, heapUsed } from '/js/index.js';

const BIG = 'x'.repeat(64 * 1024);
const crossOrigin = new URL(location.href).searchParams.get('frame');

function readyFrom(target, source, origin) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server did not start')), 15000);
    const l = (ev) => {
      if (ev.data === '__ready__' && (!source || ev.source === source) && (!origin || ev.origin === origin)) {
        clearTimeout(t); target.removeEventListener('message', l); resolve();
      }
    };
    target.addEventListener('message', l);
  });
}

async function openFrame(lib, origin) {
  const f = document.createElement('iframe');
  const src = new URL(`./frame.html?lib=${lib}`, import.meta.url);
  if (origin !== location.origin) {
    const u = new URL(origin);
    src.protocol = u.protocol; src.host = u.host;
    src.searchParams.set('parent', location.origin);
  }
  f.src = src.href;
  document.body.append(f);
  // contentWindow (a WindowProxy) is stable across the frame's navigation: wait for its signal.
  await readyFrom(window, f.contentWindow, origin);
  return { link: windowLink(f.contentWindow, origin), close: () => f.remove() };
}

async function open(transport, lib) {
  if (transport === 'messagechannel') {
    const { port1, port2 } = new MessageChannel();
    const stop = await serve(lib, portLink(port2));
    return { link: portLink(port1), close: () => { stop(); port1.close(); port2.close(); } };
  }
  if (transport === 'worker') {
    const w = new Worker(new URL(`./worker.mjs?lib=${lib}`, import.meta.url), { type: 'module' });
    await readyFrom(w);
    return { link: workerLink(w), close: () => w.terminate() };
  }
  if (transport === 'iframe') return openFrame(lib, location.origin);
  if (transport === 'iframe-cross') {
    if (!crossOrigin) throw new Error('no ?frame= origin for the cross-site iframe');
    return openFrame(lib, crossOrigin);
  }
  throw new Error('unknown transport ' + transport);
}

window.benchOne = async (transport, lib, cfg) => {
  const ch = await open(transport, lib);
  const c = await connect(lib, ch.link, BIG);
  try {
    const v = await c.small();  // the raw floor answers a + b too
    if (v !== 3) throw new Error(`${transport} ${lib}: add({a:1,b:2}) answered ${JSON.stringify(v)}, not 3`);
    const small = await measureCall(c.small, cfg.small);
    const large = await measureCall(c.large, cfg.large);
    return { small, large };
  } finally { c.close(); ch.close(); }
};

/**
 * Sequential small calls in `blocks` blocks of `size` after 3,000 to warm up:
 * the p50 of the blocks' times ÷ `size`, in µs.
 */
window.benchBlocks = async (transport, lib, blocks, size) => {
  const ch = await open(transport, lib);
  const c = await connect(lib, ch.link, BIG);
  try {
    for (let i = 0; i < 3000; i++) await c.small();
    const t = new Float64Array(blocks);
    for (let b = 0; b < blocks; b++) {
      const s = performance.now();
      for (let i = 0; i < size; i++) await c.small();
      t[b] = (performance.now() - s) / size;
    }
    t.sort();
    return t[blocks >> 1] * 1000;
  } finally { c.close(); ch.close(); }
};

/**
 * benchBlocks for each of `libs` in turn, `reps` times (the order reversed
 * every other time), 20,000 calls a run (2,000 on the cross-site iframe):
 * { lib: [µs, ...] }. bench/browser/blocks.mjs calls it.
 */
window.benchBlocksAlternating = async (transport, libs, reps) => {
  const n = transport === 'iframe-cross' ? 2000 : 20000;
  const got = Object.fromEntries(libs.map((l) => [l, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const lib of rep % 2 ? [...libs].reverse() : libs) got[lib].push(await window.benchBlocks(transport, lib, n / 10, 10));
  }
  return got;
};

/**
 * Paired throughput: every one of `libs` opened at once and checked, then
 * `rounds` rounds in which each in turn (the order reversed every other
 * round) keeps 256 `kind` calls ('small' or 'large') in flight for `ms`, on
 * a collected heap: { lib: [calls/s, ...] }, round by round. A slow spell of
 * the machine falls on both bursts of a round, where benchOne's repetitions,
 * a minute apart, each meet their own.
 */
window.benchPaired = async (transport, libs, kind, rounds, ms) => {
  const opened = [];
  try {
    for (const lib of libs) {
      const ch = await open(transport, lib);
      opened.push(ch);
      ch.c = await connect(lib, ch.link, BIG);
      const v = await ch.c.small();
      if (v !== 3) throw new Error(`${transport} ${lib}: add({a:1,b:2}) answered ${JSON.stringify(v)}, not 3`);
      const e = await ch.c.large();
      if (e !== BIG) throw new Error(`${transport} ${lib}: the 64 KiB echo came back different`);
      await throughput(ch.c[kind], 256, 200);  // warm up
    }
    const got = Object.fromEntries(libs.map((l) => [l, []]));
    for (let r = 0; r < rounds; r++) {
      for (const i of r % 2 ? libs.map((_, j) => libs.length - 1 - j) : libs.map((_, j) => j)) {
        globalThis.gc?.();
        got[libs[i]].push((await throughput(opened[i].c[kind], 256, ms)).rate);
      }
    }
    return got;
  } finally {
    for (const ch of opened) { ch.c?.close(); ch.close(); }
  }
};

/** `calls` small weft calls in a row over a MessageChannel, 256 in flight: heapUsed()
 *  after a 10,000-call warm-up, halfway and at the end (as bench/node/rows.mjs does in Node). */
window.benchHeap = async (calls) => {
  await ready;
  const ch = await open('messagechannel', 'weft');
  const c = await connect('weft', ch.link, BIG);
  try {
    for (let i = 0; i < 10000; i++) await c.small();
    const before = heapUsed();
    const t0 = performance.now();
    let done = 0;
    let mid = before;
    while (done < calls) {
      if (done === Math.floor(calls / 512) * 256) mid = heapUsed();
      const ps = [];
      for (let i = 0; i < 256 && done < calls; i++, done++) ps.push(c.small());
      await Promise.all(ps);
    }
    const after = heapUsed();
    return { before, mid, after, calls: done, seconds: (performance.now() - t0) / 1000 };
  } finally { c.close(); ch.close(); }
};
window.benchCrossOrigin = crossOrigin;
window.benchIsolated = globalThis.crossOriginIsolated === true;
window.benchInfo = () => ({ isolated: window.benchIsolated });
window.benchReady = true;

// ?driver=http: calls come from the bench server (server.mjs, /ctl/), for a
// Chromium started without a debugging connection (open.mjs).
if (new URL(location.href).searchParams.get('driver') === 'http') {
  for (;;) {
    const c = await (await fetch('/ctl/next')).json();
    let m;
    try { m = { id: c.id, value: await window[c.name](...c.args) }; } catch (e) { m = { id: c.id, error: String(e?.stack ?? e) }; }
    await fetch('/ctl/done', { method: 'POST', body: JSON.stringify(m) });
  }
}
