// Seeded differential property test: the JS object path (JSONRPCServer from
// js/index.js over a MessageChannel, plain and packed, and inside a
// worker_threads Worker) against the native `weft serve --stdio --framing
// ndjson --demo`, on the same generated traffic (tests/support/diff-gen.mjs)
// with the same handlers (tests/support/diff-methods.mjs ≙ core/demo/demo.cpp
// + the host's `sleep`). Answers must be equal after JSON.parse; batch answers
// are compared as multisets (§6: any order), single answers in order (except
// answers to `sleep`, which complete on timers: compared as a multiset).
//
//   WEFT_DIFF_SEED=N        run seed (default: random, printed); sequence 0
//                           uses the run seed itself, so the seed printed for
//                           a failing sequence replays it with
//                           WEFT_DIFF_SEED=<it> WEFT_DIFF_SEQUENCES=1
//   WEFT_DIFF_SEQUENCES=N   sequences per MessageChannel run (default 20000);
//                           the worker run does a tenth of that
//   WEFT_BIN                native weft (default build/native-host/weft)
//
// Documented difference, not compared: a top-level message the JS endpoint
// does not look at (no jsonrpc "2.0": non-objects, other versions, non-empty
// batches without such an element) — the JS side must stay silent, and those
// messages are not sent to native. Everything else is compared, including
// such values inside a batch that has a JSON-RPC 2.0 element, and `[]`.
// Notification-only sequences must get no answer at all on either side.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { JSONRPCClient, JSONRPCServer, portTransport, ready } from '../../js/index.js';
import { registerDiffMethods } from '../support/diff-methods.mjs';
import { fromTuple } from '../support/wire.mjs';
import { generateSequence, makeSequence, onlyNotifications, sequenceSeed } from '../support/diff-gen.mjs';
import {
  JsPortTarget, JsWorkerTarget, NativeTarget, describeRun, runSequence, sameAnswers, shrink, signature, diffKey, ndjsonLines,
} from '../support/diff-harness.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WEFT_BIN = process.env.WEFT_BIN || path.join(repoRoot, 'build', 'native-host', 'weft');
const RUN_SEED = process.env.WEFT_DIFF_SEED !== undefined && process.env.WEFT_DIFF_SEED !== ''
  ? Number(process.env.WEFT_DIFF_SEED) >>> 0
  : randomInt(0, 2 ** 32 - 1);
const SEQUENCES = Number(process.env.WEFT_DIFF_SEQUENCES || 20000);
const WORKER_SEQUENCES = Math.max(1, Math.floor(SEQUENCES / 10));
const SHOW = 6;           // distinct (shrunk) mismatches shown in a failure message
const KEEP = 300;         // mismatches kept for shrinking (the rest are only counted)
const SHRINK_MS = 15000;  // time spent shrinking, at most (roughly)
const PER_KIND = 8;       // mismatches kept per kind of difference (diffKey)

let native;
const counter = { next: 0 };  // sentinel numbers, unique for the whole file

before(async () => {
  await ready;
  native = new NativeTarget('native', WEFT_BIN);
  await native.start();
});
after(() => native?.close());

function replayHint(seed) {
  return `replay: WEFT_DIFF_SEED=${seed} WEFT_DIFF_SEQUENCES=1 node --test tests/js/differential.test.mjs`;
}

// Shrinks kept mismatches until SHOW distinct classes (signature()) are
// found, within a time budget; the failure text ('' when there is none).
async function report(label, mismatches, counts, sequences, targetsByName) {
  if (mismatches.length === 0) return '';
  const parts = [];
  const seen = new Map();
  const t0 = performance.now();
  // Round-robin over the kinds of difference, so rare ones get shrunk too.
  const groups = new Map();
  for (const m of mismatches) {
    const k = diffKey(m.jsRun, m.nativeRun);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(m);
  }
  const order = [];
  for (let i = 0; order.length < mismatches.length; i++)
    for (const g of groups.values()) if (i < g.length) order.push(g[i]);
  for (const m of order) {
    if (parts.length >= SHOW || performance.now() - t0 > SHRINK_MS) break;
    const small = await shrink(m.seq, targetsByName[m.js], native, counter);
    const sig = small ? signature(small.seq, small.js, small.native) : 'did not reproduce';
    if (seen.has(sig)) { seen.set(sig, seen.get(sig) + 1); continue; }
    seen.set(sig, 1);
    let text = `--- ${m.js} vs native: run seed ${RUN_SEED}, sequence #${m.index}, sequence seed ${m.seq.seed}\n` +
      `  ${replayHint(m.seq.seed)}\n` + describeRun(m.seq, m.js, m.jsRun, m.nativeRun);
    if (small) text += `\n  shrunk (${sig}):\n` + describeRun(small.seq, m.js, small.js, small.native);
    else text += '\n  (did not reproduce when replayed: timing?)';
    parts.push(text);
  }
  return `${label}: ${counts.total} of ${sequences} sequences answered differently ` +
    `(run seed ${RUN_SEED}; per variant ${JSON.stringify(counts.byVariant)}). ` +
    `${parts.length} distinct shrunk mismatch(es):\n\n` + parts.join('\n\n');
}

async function differential(t, label, jsTargets, count) {
  t.diagnostic(`run seed ${RUN_SEED} (WEFT_DIFF_SEED), ${count} sequences`);
  for (const js of jsTargets) await js.start();
  const byName = Object.fromEntries(jsTargets.map((j) => [j.name, j]));
  const mismatches = [];
  const kinds = new Map();
  const answered = [];
  const counts = { total: 0, byVariant: Object.fromEntries(jsTargets.map((j) => [j.name, 0])) };
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const seq = generateSequence(sequenceSeed(RUN_SEED, i));
    const n = counter.next++;
    const runs = await Promise.all([native, ...jsTargets].map((tg) => runSequence(tg, seq, n)));
    const nativeRun = runs[0];
    let bad = false;
    for (let k = 0; k < jsTargets.length; k++) {
      if (sameAnswers(runs[k + 1], nativeRun, seq)) continue;
      bad = true;
      counts.byVariant[jsTargets[k].name]++;
      if (mismatches.length < KEEP) {
        // At most PER_KIND of one kind of difference, so rare kinds are kept.
        const key = diffKey(runs[k + 1], nativeRun);
        const c = (kinds.get(key) ?? 0) + 1;
        kinds.set(key, c);
        if (c <= PER_KIND) mismatches.push({ index: i, seq, js: jsTargets[k].name, jsRun: runs[k + 1], nativeRun });
      }
    }
    if (bad) counts.total++;
    // Not only the same: nothing at all for notifications (§4.1, §6).
    if (onlyNotifications(seq)) {
      for (let k = 0; k < runs.length; k++) {
        if (runs[k].frames.length === 0) continue;
        const name = k === 0 ? 'native' : jsTargets[k - 1].name;
        if (answered.length < SHOW) answered.push(`--- ${name} answered notifications: sequence seed ${seq.seed}\n  ${replayHint(seq.seed)}\n` +
          seq.messages.map((m) => `    --> ${JSON.stringify(m.msg)}`).join('\n') + '\n' +
          runs[k].frames.map((f) => `    <-- ${JSON.stringify(f)}`).join('\n'));
      }
    }
  }
  t.diagnostic(`${count} sequences in ${Math.round(performance.now() - t0)} ms, ${counts.total} differed`);
  try {
    let failure = await report(label, mismatches, counts, count, byName);
    if (answered.length)
      failure = `${label}: notifications were answered (run seed ${RUN_SEED}):\n\n` + answered.join('\n\n') + (failure ? '\n\n' + failure : '');
    if (failure) assert.fail(failure);
  } finally {
    for (const js of jsTargets) await js.close();
  }
}

// The longer mode (WEFT_DIFF_SEQUENCES) gets time in proportion: ~30 ms a
// sequence on a loaded machine, never less than the default run's 600 s.
const LONG = { timeout: Math.max(600000, SEQUENCES * 30) };

test('differential: JSONRPCServer over a MessageChannel (plain and {pack:true}) answers like native weft serve', LONG, async (t) => {
  await differential(t, 'MessageChannel', [new JsPortTarget('js-port'), new JsPortTarget('js-port-pack', { pack: true })], SEQUENCES);
});

test('differential: JSONRPCServer in a worker_threads Worker (selfTransport, plain and packed) answers like native', LONG, async (t) => {
  await differential(t, 'worker_threads', [new JsWorkerTarget('js-worker'), new JsWorkerTarget('js-worker-pack', { pack: true })], WORKER_SEQUENCES);
});

// Hand-written cancellation scenarios (the generator also mixes some in).
test('differential: $/cancelRequest after a sleep request, every placement', { timeout: 120000 }, async (t) => {
  const sleep = (id, ms = 30) => ({ jsonrpc: '2.0', method: 'sleep', params: { ms }, id });
  const cancel = (id) => ({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } });
  const scenarios = {
    'cancel right after (int id)': [sleep(900001), cancel(900001)],
    'cancel right after (string id)': [sleep('zz1'), cancel('zz1')],
    'cancel right after (negative id)': [sleep(-900001), cancel(-900001)],
    'cancel after other traffic': [sleep('zz1'), { jsonrpc: '2.0', method: 'sum', params: [1, 2], id: 1 }, cancel('zz1')],
    'cancel with the id as another type': [sleep(900001), cancel('900001')],
    'cancel of an unknown id': [sleep('zz1', 5), cancel('zz2')],
    'cancel twice': [sleep('zz1'), cancel('zz1'), cancel('zz1')],
    'sleep and cancel in one batch': [[sleep('zz1'), cancel('zz1')]],
    'sleep in a batch, cancel after': [[sleep('zz1'), { jsonrpc: '2.0', method: 'echo', params: [1], id: 2 }], cancel('zz1')],
    'cancel in a batch after': [sleep('zz1'), [cancel('zz1'), { jsonrpc: '2.0', method: 'echo', params: [1], id: 2 }]],
    'cancel sent as a request': [sleep('zz1'), { ...cancel('zz1'), id: 5 }],
    'cancel without params': [sleep('zz1', 5), { jsonrpc: '2.0', method: '$/cancelRequest' }],
    'cancel of a 0 ms sleep': [sleep('zz1', 0), { jsonrpc: '2.0', method: 'echo', params: [1], id: 3 }, cancel('zz1')],
    'cancel of a sleep notification': [{ jsonrpc: '2.0', method: 'sleep', params: { ms: 5 } }, cancel(null)],
  };
  const targets = [new JsPortTarget('js-port'), new JsPortTarget('js-port-pack', { pack: true })];
  for (const js of targets) await js.start();
  const problems = [];
  try {
    for (const [name, msgs] of Object.entries(scenarios)) {
      const seq = makeSequence(msgs);
      const n = counter.next++;
      const [nat, ...jss] = await Promise.all([native, ...targets].map((tg) => runSequence(tg, seq, n)));
      t.diagnostic(`${name}: native ${JSON.stringify(nat.frames)} | js ${JSON.stringify(jss[0].frames)}`);
      for (let k = 0; k < targets.length; k++)
        if (!sameAnswers(jss[k], nat, seq)) problems.push(`--- ${name} (${targets[k].name} vs native)\n` + describeRun(seq, targets[k].name, jss[k], nat));
    }
  } finally {
    for (const js of targets) js.close();
  }
  if (problems.length) assert.fail(`${problems.length} cancellation scenario(s) answered differently:\n\n` + problems.join('\n\n'));
});

// ---- a weft JSONRPCClient against both servers -------------------------------------
// A transport with the shape of js/transports/ over a child's stdio (NDJSON).
function childNdjsonTransport(child) {
  let handler = null;
  let closeHandlers = [];
  ndjsonLines(child.stdout, (line) => { if (handler) handler(JSON.parse(line)); });
  child.once('exit', () => { for (const h of closeHandlers) h(); closeHandlers = []; });
  return {
    send(msg) { child.stdin.write(JSON.stringify(msg) + '\n'); },
    onMessage(h) { handler = h; },
    onClose(h) { closeHandlers.push(h); },
    destroy() { handler = null; child.stdin.end(); },
  };
}

// Records what goes out and what comes back through a transport (tuples as
// the message objects they stand for).
function tap(transport, log) {
  return {
    get tuples() { return transport.tuples; },
    send(msg, ...rest) { log.entries.push(['out', fromTuple(msg)]); transport.send(msg, ...rest); },
    onMessage(h) {
      transport.onMessage((m) => {
        log.entries.push(['in', fromTuple(m)]);
        for (const w of log.waiters.splice(0)) w();
        h(m);
      });
    },
    onClose(h) { transport.onClose?.(h); },
    destroy() { transport.destroy?.(); },
  };
}
const newLog = () => ({ entries: [], waiters: [] });

// The first incoming message satisfying pred, or undefined after ms.
async function waitIn(log, pred, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const hit = log.entries.find(([dir, m]) => dir === 'in' && pred(m));
    if (hit) return hit[1];
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, left);
      log.waiters.push(() => { clearTimeout(timer); resolve(); });
    });
  }
}

test('differential: a weft JSONRPCClient calling sleep with {timeout} or an aborted signal rejects the same way against both servers', { timeout: 60000 }, async (t) => {
  const child = spawn(WEFT_BIN, ['serve', '--stdio', '--framing', 'ndjson', '--demo'], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  const { port1, port2 } = new MessageChannel();
  const jsServer = registerDiffMethods(new JSONRPCServer(portTransport(port2), { onDiagnostic: () => {} }));
  const logs = { js: newLog(), native: newLog() };
  const clients = {
    js: new JSONRPCClient(tap(portTransport(port1), logs.js)),
    native: new JSONRPCClient(tap(childNdjsonTransport(child), logs.native)),
  };
  const outcome = async (p) => p.then((v) => ({ result: v }), (e) => ({ code: e.code, message: e.message, data: e.data }));
  try {
    const res = {};
    for (const side of ['js', 'native']) {
      const c = clients[side];
      // Sanity: the link works.
      assert.equal(await c.request('add', [1, 2], { timeout: 5000 }), 3, side);
      const timedOut = await outcome(c.request('sleep', { ms: 400 }, { timeout: 40 }));
      const ac = new AbortController();
      const p = c.request('sleep', { ms: 400 }, { timeout: 5000 });
      // The request leaves inside request(); aborting right after sends its
      // $/cancelRequest behind it, while the server sleeps.
      const abortedCall = c.request('sleep', { ms: 400 }, { signal: ac.signal, timeout: 5000 });
      ac.abort();
      const aborted = await outcome(abortedCall);
      const finished = await outcome(p);
      // What the server sent back for the abandoned calls (ids 2 and 4): both
      // servers answer them (the sleep's end, the -32800); the bound only
      // turns a missing answer into a failure instead of a hang.
      const late2 = await waitIn(logs[side], (m) => m && m.id === 2, 15000);
      const late4 = await waitIn(logs[side], (m) => m && m.id === 4, 15000);
      res[side] = { timedOut, aborted, finished, serverAnswerAfterTimeout: late2 ?? '(none)', serverAnswerAfterAbort: late4 ?? '(none)',
        sent: logs[side].entries.filter(([d]) => d === 'out').map(([, m]) => m) };
    }
    t.diagnostic(JSON.stringify(res));
    assert.equal(res.js.timedOut.code, -32001, JSON.stringify(res));
    assert.deepEqual(res.js, res.native, 'client outcomes and server answers differ:\n' + JSON.stringify(res, null, 1));
  } finally {
    clients.js.destroy();
    clients.native.destroy();
    jsServer.destroy();
    child.kill('SIGKILL');
  }
});
