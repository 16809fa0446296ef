// Replays tests/vectors/peer/*.txt through the production object path of the
// WebAssembly build — plain objects into a Peer, plain objects out — with
// the same C++ demo methods as the native runner (tests/vectors_test.cpp),
// served by the test-only module (dist-test/, wasm/test_host.cpp). Three
// transports: a direct in-process one, and a MessageChannel with and without
// {pack:true} (packed, messages also cross as tuples). Expected lines are
// compared as values (JSON.parse of both), so a number id written 1.50
// matches the 1.5 a JavaScript object carries.
// Cases about decoding bytes (`# codec:` in the case, or input that is not
// JSON text, as in §7's parse-error examples) are the native runner's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Peer, ready, portTransport } from '../../dist-test/js/index.js';
import { loadModule } from '../../dist-test/js/loader.js';
import { fromTuple, isTuple, toTuple } from '../support/wire.mjs';

const dir = new URL('../vectors/peer/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();

function parse(text) {
  const cases = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('## ')) { cases.push({ name: line.slice(3), steps: [] }); return; }
    if (line.startsWith('# codec:') && cases.length) { cases.at(-1).codec = true; return; }
    if (!line || line[0] === '#' || !cases.length) return;
    const sp = line.indexOf(' ');
    cases.at(-1).steps.push({ op: sp < 0 ? line : line.slice(0, sp), rest: sp < 0 ? '' : line.slice(sp + 1), line: i + 1 });
  });
  return cases;
}

function isJson(text) {
  try { JSON.parse(text); return true; } catch { return false; }
}

// A simulated clock (Endpoint option `clock`): time moves only on `time` steps.
function fakeClock() {
  const c = { t: 0, timers: [], seq: 0 };
  c.now = () => c.t;
  c.setTimeout = (fn, ms) => { const h = { due: c.t + ms, fn, seq: c.seq++ }; c.timers.push(h); return h; };
  c.clearTimeout = (h) => { const i = c.timers.indexOf(h); if (i >= 0) c.timers.splice(i, 1); };
  c.runDue = () => {
    for (;;) {
      c.timers.sort((a, b) => a.due - b.due || a.seq - b.seq);
      if (!c.timers.length || c.timers[0].due > c.t) return;
      c.timers.shift().fn();
    }
  };
  return c;
}

const turn = () => new Promise((r) => setImmediate(r));
// Tuples (or batches of them) the peer sent besides the sentinels' answers,
// and tuples it was sent (mode port-pack): the run shows both ways were used.
const tupleCount = { in: 0, out: 0 };

// The other end of the wire, per transport mode: post(obj), out (received).
function wire(mode) {
  if (mode === 'direct') {
    const w = { out: [], deliver: null };
    w.transport = { send: (m) => w.out.push(structuredClone(m)), onMessage: (h) => { w.deliver = h; }, destroy() {} };
    w.post = (m) => w.deliver(m);
    // Synchronous transport: one task later every answer and every
    // promise continuation of the step has run.
    w.settle = async () => { await turn(); };
    w.close = () => {};
    return w;
  }
  const { port1, port2 } = new MessageChannel();
  const w = { out: [] };
  w.transport = portTransport(port1, { pack: mode === 'port-pack' });
  const other = portTransport(port2, { pack: mode === 'port-pack' });
  // Everything the peer sent for a step has arrived once the answer to a
  // request posted after it has: the port keeps order, and the peer answers
  // in order. That answer (-32601 for an unknown method) is taken out again.
  let sentinels = 0;
  let arrived = null;
  // Packing, both ends are weft transports that read tuples: the peer
  // answers in tuples, and the vectors' messages go as tuples wherever one
  // says exactly what the message says (support/wire.mjs).
  const tuples = mode === 'port-pack';
  other.onMessage((t) => {
    const m = tuples ? fromTuple(t) : t;
    if (m && typeof m.id === 'string' && m.id.startsWith('vectors-sentinel-')) {
      arrived?.(m.id);
    } else {
      if (isTuple(t) || (Array.isArray(t) && t.some(isTuple))) tupleCount.in++;
      w.out.push(m);
    }
  });
  w.post = (m) => {
    const t = tuples ? toTuple(m) : m;
    if (t !== m && !Array.isArray(m)) tupleCount.out++;
    other.send(t);
  };
  const roundTrip = async () => {
    const id = `vectors-sentinel-${++sentinels}`;
    const done = new Promise((resolve) => { arrived = (got) => { if (got === id) resolve(); }; });
    other.send({ jsonrpc: '2.0', method: 'vectors/sentinel', id });
    await done;
  };
  // A handler may send more after an await (a stream writing its next
  // chunk): packed, that can leave in a frame after the sentinel's answer.
  // A second sentinel is answered in a later task, after that frame; round
  // trips in pairs until a pair brings nothing new.
  w.settle = async () => {
    // A closed peer answers nothing, sentinels included: what it might still
    // (wrongly) send is on the port within a few tasks.
    if (w.closed) {
      for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
      return;
    }
    let seen;
    do {
      seen = w.out.length;
      await roundTrip();
      await roundTrip();
    } while (w.out.length !== seen);
  };
  w.close = () => { other.destroy(); port2.close(); };
  return w;
}

async function runCase(M, mode, file, c) {
  const clock = fakeClock();
  const w = wire(mode);
  const diags = [];
  // The case's `options` step (README): the peer is built with them.
  const o = c.steps[0]?.op === 'options' ? JSON.parse(c.steps[0].rest) : {};
  const peer = new Peer(w.transport, {
    timeout: 0, ignoreForeign: false, clock, onDiagnostic: (k) => diags.push(k),
    handshake: o.handshake ? { capabilities: o.handshake } : undefined,
    limits: {
      maxStreamChunk: o.max_stream_chunk === undefined ? undefined : o.max_stream_chunk || Infinity,
      maxBatch: o.max_batch,
    },
  });
  assert.equal(M._weft_test_register_demo(peer.h), 1);
  const sleeps = [];
  let order = 0;
  peer.method('sleep', (p, ctx) => new Promise((resolve, reject) => {
    const s = { due: clock.t + p.ms, order: order++, ms: p.ms, resolve };
    sleeps.push(s);
    ctx.signal.addEventListener('abort', () => { sleeps.splice(sleeps.indexOf(s), 1); reject(ctx.signal.reason); });
  }), { params: [{ name: 'ms', type: 'integer' }] });
  peer.method('count', async ({ n }, ctx) => {
    for (let i = 0; i < n; i++) await ctx.sink.write(i, { final: i === n - 1, total: n });
    return { chunks: n };
  }, { params: [{ name: 'n', type: 'integer' }] });
  const calls = [];  // by id - 1: { outcome, ac, metrics }
  const where = (s) => `${mode} ${file}:${s.line}: ${s.op} ${s.rest}`;
  let last = 0;
  const drained = () => assert.deepEqual(w.out, [], `${mode} ${file}:${last} — unexpected output after this step`);
  try {
    for (const s of c.steps) {
      if (s.op === '<--') {
        assert.ok(w.out.length > 0, `${where(s)}: nothing was sent`);
        assert.deepEqual(w.out.shift(), JSON.parse(s.rest), where(s));
        continue;
      }
      drained();
      last = s.line;
      switch (s.op) {
        case '-->': w.post(JSON.parse(s.rest)); break;
        case 'call': {
          let rest = s.rest;
          let timeout;
          const p = rest.lastIndexOf(' timeout=');
          if (p >= 0) { timeout = Number(rest.slice(p + 9)); rest = rest.slice(0, p); }
          const sp = rest.indexOf(' ');
          const method = sp < 0 ? rest : rest.slice(0, sp);
          const ptext = sp < 0 ? '-' : rest.slice(sp + 1);
          const ac = new AbortController();
          const call = { outcome: null, ac, metrics: null };
          calls.push(call);
          const onMetrics = (m) => { call.metrics = m; };
          peer.request(method, ptext === '-' ? undefined : JSON.parse(ptext), { timeout, signal: ac.signal, onMetrics }).then(
            (result) => { call.outcome = { result }; },
            (e) => { call.outcome = { error: e.data === undefined ? { code: e.code, message: e.message } : { code: e.code, message: e.message, data: e.data } }; });
          break;
        }
        case 'stream': {
          const c = s.rest.lastIndexOf(' credit=');
          const credit = Number(s.rest.slice(c + 8));
          const rest = s.rest.slice(0, c);
          const sp = rest.indexOf(' ');
          const ptext = sp < 0 ? '-' : rest.slice(sp + 1);
          const call = { outcome: null, ac: new AbortController(), stream: null, metrics: null };
          calls.push(call);
          call.stream = peer.stream(sp < 0 ? rest : rest.slice(0, sp), ptext === '-' ? undefined : JSON.parse(ptext),
            { highWaterMark: credit, signal: call.ac.signal, onMetrics: (m) => { call.metrics = m; } });
          call.stream.result.then(
            (result) => { call.outcome = { result }; },
            (e) => { call.outcome = { error: e.data === undefined ? { code: e.code, message: e.message } : { code: e.code, message: e.message, data: e.data } }; });
          break;
        }
        case 'chunks': {  // received so far, not taken by the consumer
          const sp = s.rest.indexOf(' ');
          const call = calls[Number(s.rest.slice(0, sp)) - 1];
          assert.deepEqual(call.stream.buf, JSON.parse(s.rest.slice(sp + 1)), where(s));
          break;
        }
        case 'notify': {
          const sp = s.rest.indexOf(' ');
          const ptext = sp < 0 ? '-' : s.rest.slice(sp + 1);
          peer.notify(sp < 0 ? s.rest : s.rest.slice(0, sp), ptext === '-' ? undefined : JSON.parse(ptext));
          break;
        }
        case 'cancel': {
          const call = calls[Number(s.rest) - 1];
          assert.ok(call && call.outcome === null, `${where(s)}: no such pending call`);
          call.ac.abort();
          break;
        }
        case 'time': {
          clock.t = Number(s.rest);
          sleeps.sort((a, b) => a.due - b.due || a.order - b.order);
          while (sleeps.length && sleeps[0].due <= clock.t) { const z = sleeps.shift(); z.resolve(z.ms); await turn(); }
          clock.runDue();
          break;
        }
        case 'close': peer._close(-32002, 'Endpoint closed'); w.closed = true; break;
        case 'settled': {
          await w.settle();
          const sp = s.rest.indexOf(' ');
          const call = calls[Number(s.rest.slice(0, sp)) - 1];
          assert.ok(call && call.outcome, `${where(s)}: the call has not settled`);
          assert.deepEqual(call.outcome, JSON.parse(s.rest.slice(sp + 1)), where(s));
          break;
        }
        case 'options': assert.equal(s, c.steps[0], `${where(s)}: options must come first`); break;
        case 'metrics': {  // what onMetrics received (null: nothing)
          await w.settle();
          const sp = s.rest.indexOf(' ');
          const call = calls[Number(s.rest.slice(0, sp)) - 1];
          assert.deepEqual(call.metrics, JSON.parse(s.rest.slice(sp + 1)), where(s));
          break;
        }
        case 'pending': assert.equal(peer.stats().pending, Number(s.rest), where(s)); break;
        case 'inflight': assert.equal(peer.stats().inFlight, Number(s.rest), where(s)); break;
        case 'diag': assert.ok(diags.includes(s.rest), `${where(s)}: diagnostics were ${JSON.stringify(diags)}`); break;
        default: assert.fail(`${where(s)}: unknown step`);
      }
      await w.settle();
    }
    drained();
    assert.equal(peer.stats().payloads, 0, `${mode} ${file}: every payload handle came back`);
  } finally {
    peer.destroy();
    w.close();
  }
}

for (const mode of ['direct', 'port', 'port-pack']) {
  test(`vectors replay on the WebAssembly object path (${mode})`, { timeout: 60000 }, async (t) => {
    await ready;
    const M = await loadModule();
    assert.ok(files.length >= 3, 'vector files found');
    let cases = 0, textOnly = 0;
    for (const f of files) {
      for (const c of parse(readFileSync(new URL(f, dir), 'utf8'))) {
        if (c.codec || c.steps.some((s) => s.op === '-->' && !isJson(s.rest))) { textOnly++; continue; }
        cases++;
        await t.test(`${f}: ${c.name}`, () => runCase(M, mode, f, c));
      }
    }
    t.diagnostic(`${cases} cases replayed; ${textOnly} codec cases left to the native runner`);
    assert.ok(cases > 40);
    if (mode === 'port-pack') {
      t.diagnostic(`tuples: ${tupleCount.out} sent to the peer, ${tupleCount.in} answered`);
      assert.ok(tupleCount.out > 50 && tupleCount.in > 50, 'the packed mode exchanged tuples both ways');
    }
  });
}
