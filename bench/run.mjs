#!/usr/bin/env node
// `npm run bench`: weft side by side with the libraries a user would otherwise
// choose, each paired with the raw floor of its transport (same run, same
// repetition, order alternating), medians over repetitions. Writes
// bench/results/latest.md and a dated copy, and every repetition's figures
// (results/<run>.json) with the targets judged from them (lib/targets.mjs).
//
//   node bench/run.mjs [--quick|--smoke] [--only node|browser|native|ws] [--reps N] [--contenders a,b] [--transports k,l] [--devtools] [--no-gc] [--check]
//   --check exits 1 when a target of the postMessage transports is not met in
//   the median of the repetitions (as `node bench/targets.mjs --check` judges
//   the run's results/<run>.json), naming each on stderr.
//   --contenders keeps only those contenders (and the raw floors) on the Node and
//   Chromium rows, e.g. --contenders weft,birpc: a p50 check alternating weft and
//   its best peer, without the rest of the table (no heap or stream rows; like
//   --only, it writes only the dated copy).
//   --transports keeps only those Node and Chromium rows, by key (node-messagechannel,
//   node-worker, chromium-messagechannel, chromium-worker, chromium-iframe,
//   chromium-iframe-cross; an unknown key is an error), e.g. more repetitions
//   of one noisy row; no heap or stream rows, and only the dated copy.
//   --devtools drives Chromium through DevTools (Playwright) instead of
//   starting it without a debugging connection (browser/open.mjs says what
//   that changes); like --only, it writes only the dated copy.
//   --no-gc measures each contender on the heap the one before it left (no
//   gc() first, in Node and in Chromium's page); like --only, it writes only
//   the dated copy.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { runNode, runWeftHeap, NODE_TRANSPORTS } from './node/rows.mjs';
import { runStreams } from './node/streams.mjs';
import { runNative, runWs, NATIVE_TRANSPORTS } from './native/rows.mjs';
import { runNativeStreams } from './native/streams.mjs';
import { runBrowser, BROWSER_TRANSPORTS } from './browser/rows.mjs';
import { median, fmtUs, fmtRate, fmtRatio } from './lib/stats.mjs';
import { checkTargets, targetLines } from './lib/targets.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
// measure.mjs collects the heap before each contender (node --expose-gc, given
// here; Chromium's page likewise, browser/open.mjs), unless --no-gc.
const gcBefore = !args.includes('--no-gc');
if (gcBefore) {
  v8.setFlagsFromString('--expose-gc');
  globalThis.gc ??= vm.runInNewContext('gc');
}
// --smoke (the test command's bench stage, scripts/test.sh): the harness end
// to end, briefly: --quick, one repetition, results in the temp folder, not
// bench/results. Every contender must answer (a wrong answer or a failed call
// ends the run with exit 1); its figures, from a shared CI machine, judge no
// target.
const smoke = args.includes('--smoke');
const quick = smoke || args.includes('--quick');
const onlyIdx = args.indexOf('--only');
const only = onlyIdx >= 0 ? args[onlyIdx + 1] : null;
const repsIdx = args.indexOf('--reps');
const reps = repsIdx >= 0 ? Number(args[repsIdx + 1]) : smoke ? 1 : 3;

const contIdx = args.indexOf('--contenders');
const contenders = contIdx >= 0 ? args[contIdx + 1].split(',').map((c) => c.trim()).filter(Boolean) : null;
const cfg = quick
  ? { reps, small: { inflight: 256, ms: 1000, latencyCalls: 5000 }, large: { inflight: 256, ms: 1000, latencyCalls: 2000 }, heapCalls: 200000, streamBytes: 256 * 2 ** 20 }
  : { reps, small: { inflight: 256, ms: 1500, latencyCalls: 10000 }, large: { inflight: 256, ms: 1500, latencyCalls: 5000 }, heapCalls: 1000000, streamBytes: 2 ** 30 };

cfg.contenders = contenders;
const trIdx = args.indexOf('--transports');
cfg.transports = trIdx >= 0 ? args[trIdx + 1].split(',').map((c) => c.trim()).filter(Boolean) : null;
for (const k of cfg.transports ?? []) {
  if (!(k in NODE_TRANSPORTS) && !(k in BROWSER_TRANSPORTS)) {
    console.error(`--transports: no row ${k} (Node and Chromium rows: ${[...Object.keys(NODE_TRANSPORTS), ...Object.keys(BROWSER_TRANSPORTS)].join(', ')})`);
    process.exit(2);
  }
}
cfg.devtools = args.includes('--devtools');
cfg.gc = gcBefore;
const t0 = Date.now();
const log = (s) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${s}`);

const results = {};
let heap = null;
let streamLines = [];
if (!only || only === 'node') {
  Object.assign(results, await runNode(cfg, log));
  if (!contenders && !cfg.transports) {  // a --contenders or --transports run is a latency/throughput check only
    heap = await runWeftHeap(cfg, log);
    streamLines = await runStreams(cfg, log);
  }
}
let nativeNotes = [];
let browserHeap = null;
const memoryNotes = [];
if (!only || only === 'browser') {
  const b = await runBrowser(cfg, log);
  Object.assign(results, b.results);
  nativeNotes.push(...b.notes);
  browserHeap = b.heap;
}
if (only === 'ws') {
  const w = await runWs(cfg, log);
  Object.assign(results, w.results);
  nativeNotes.push(...w.notes);
}
if ((!only || only === 'native') && !cfg.transports) {  // --transports names Node and Chromium rows only
  const n = await runNative(cfg, log);
  Object.assign(results, n.results);
  nativeNotes.push(...n.notes);
  memoryNotes.push(...n.memory);
  streamLines.push(...await runNativeStreams(cfg, log));
}

// ---- table ----
const LABELS = { ...Object.fromEntries(Object.entries(NODE_TRANSPORTS).map(([k, v]) => [k, v.label])),
  ...Object.fromEntries(Object.entries(BROWSER_TRANSPORTS).map(([k, v]) => [k, v.label])),
  ...Object.fromEntries(Object.entries(NATIVE_TRANSPORTS).map(([k, v]) => [k, v.label])) };

function summarize(reps, floorReps) {
  // Ratios are taken per repetition (contender vs the floor measured next to it), then the median.
  const n = Math.min(reps.length, floorReps.length);
  const p50r = [], rater = [];
  for (let i = 0; i < n; i++) {
    p50r.push(reps[i].p50 / floorReps[i].p50);
    rater.push(reps[i].rate / floorReps[i].rate);
  }
  return {
    p50: median(reps.map((r) => r.p50)), p99: median(reps.map((r) => r.p99)), rate: median(reps.map((r) => r.rate)),
    p50r: median(p50r), rater: median(rater),
  };
}

const lines = [];
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
lines.push(`# weft bench results`);
lines.push('');
lines.push(`- date: ${new Date().toISOString()}`);
lines.push(`- machine: ${cpu}, ${os.cpus().length} logical CPUs (os.availableParallelism ${os.availableParallelism?.() ?? '?'}), ${os.platform()} ${os.release()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`);
lines.push(`- node ${process.version}; mode ${quick ? 'quick' : 'full'}; ${cfg.reps} repetitions, medians reported${gcBefore ? '; heap collected before each contender' : '; no gc() before a contender (--no-gc)'}`);
lines.push(`- latency: sequential round trips (${cfg.small.latencyCalls} small / ${cfg.large.latencyCalls} large per repetition); throughput: ${cfg.small.inflight} calls in flight for ${cfg.small.ms} ms`);
lines.push(`- ratios: contender ÷ raw floor of the same transport, per repetition, then median (p50: lower is better; calls/s: higher is better)`);
lines.push('');
for (const kind of ['small', 'large']) {
  lines.push(kind === 'small' ? '## small call: add({a:1,b:2}) → 3 (every row; on the wire `{"method":"add","params":{"a":1,"b":2}}`)' : '## large call: echo of a 64 KiB string (`echo [s]` → `[s]` on the native rows)');
  lines.push('');
  lines.push('| transport | contender | p50 µs | p99 µs | calls/s | p50 ÷ floor | calls/s ÷ floor | calls/s ÷ best peer |');
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [tk, libs] of Object.entries(results)) {
    const floorKey = Object.keys(libs).find((l) => l.startsWith('raw') || l.startsWith('C echo'));
    const floor = libs[floorKey][kind];
    const sums = Object.fromEntries(Object.entries(libs).map(([l, v]) => [l, v[kind].length ? summarize(v[kind], floor) : null]));
    const peers = Object.entries(sums).filter(([l, s]) => s && !l.startsWith('raw') && !l.startsWith('C echo') && !l.includes('weft'));
    const bestPeer = peers.reduce((b, [, s]) => Math.max(b, s.rate), 0);
    for (const [l, s] of Object.entries(sums)) {
      if (!s) { lines.push(`| ${LABELS[tk]} | ${l} | — | — | — | — | — | — |`); continue; }
      const vsPeer = l === floorKey || !bestPeer ? '' : fmtRatio(s.rate / bestPeer);
      const floorCells = l === floorKey ? '(floor) | (floor)' : `${fmtRatio(s.p50r)} | ${fmtRatio(s.rater)}`;
      lines.push(`| ${LABELS[tk]} | ${l} | ${fmtUs(s.p50)} | ${fmtUs(s.p99)} | ${fmtRate(s.rate)} | ${floorCells} | ${vsPeer} |`);
    }
  }
  lines.push('');
}
lines.push(...targetLines(results, LABELS));
lines.push(...streamLines);
const heapLine = (where, h) => `- weft wasm heap, ${where} (MessageChannel, ${h.calls.toLocaleString('en-US')} small calls in a row, 256 in flight, heapUsed() after a 10,000-call warm-up): ${h.before} B before, ${h.mid} B halfway, ${h.after} B after (second half: ${h.after === h.mid ? 'flat' : 'delta ' + (h.after - h.mid) + ' B'})`;
if (heap || browserHeap || memoryNotes.length) {
  lines.push('## memory');
  lines.push('');
  if (heap) lines.push(heapLine('Node', heap));
  if (browserHeap) lines.push(heapLine('Chromium page', browserHeap));
  for (const n of memoryNotes) lines.push(`- ${n}`);
  lines.push('');
}
for (const n of nativeNotes) lines.push(`- ${n}`);
if (nativeNotes.length) lines.push('');
lines.push(`Total bench time: ${((Date.now() - t0) / 1000).toFixed(0)} s.`);
lines.push('');

const md = lines.join('\n');
const dir = smoke ? fs.mkdtempSync(path.join(os.tmpdir(), 'weft-bench-smoke-')) : path.join(here, 'results');
fs.mkdirSync(dir, { recursive: true });
// latest.md (quoted by the README) is only replaced by a run of every row.
const partial = only || contenders || cfg.transports || cfg.devtools || !gcBefore || smoke;
if (!partial) fs.writeFileSync(path.join(dir, 'latest.md'), md);
const stamp = new Date().toISOString().replace(/[:]/g, '').replace(/\..*/, 'Z');
const name = `${stamp}${quick ? '-quick' : ''}${only ? '-only-' + only : ''}${contenders || cfg.transports ? '-some' : ''}${cfg.devtools ? '-devtools' : ''}${gcBefore ? '' : '-nogc'}`;
fs.writeFileSync(path.join(dir, `${name}.md`), md);
// Every repetition's figures, for judging again (node bench/targets.mjs results/<name>.json).
fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify({ labels: LABELS, results }) + '\n');
console.log(md);
log(`wrote ${path.join(dir, name + '.md')}${partial ? ' only (--only/--contenders/--transports/--devtools/--no-gc/--smoke)' : ' and latest.md'}`);
if (args.includes('--check')) {
  const { ok, lines: why } = checkTargets(results, LABELS);
  for (const l of why) log(`targets: ${l}`);
  process.exitCode = ok ? 0 : 1;
}
