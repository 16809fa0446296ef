// Seeded differential test against an implementation weft did not write: the
// npm package json-rpc-2.0. The same generated traffic goes to a weft
// JSONRPCServer and to a json-rpc-2.0 server with the same handlers, and the
// same calls are made by a weft JSONRPCClient and by json-rpc-2.0's client,
// each against either server; every answer and every outcome must be equal.
//
//   WEFT_PEER_DIFF_SEED=N       run seed (default: random, printed); sequence 0
//                               uses it, so a failing sequence's seed replays it
//                               with WEFT_PEER_DIFF_SEQUENCES=1
//   WEFT_PEER_DIFF_SEQUENCES=N  sequences per test (default 2000)
//
// Compared: well-formed traffic, where JSON-RPC 2.0 decides the answer —
// requests and notifications (string, number and null ids; array, object and
// absent params; any JSON value inside), batches, handlers that return,
// return later or throw an error with a code, a message and `data` of every
// JSON type, and unknown methods. Not compared, because json-rpc-2.0 does not
// follow the specification there (weft's answers to them are checked against
// the native build in differential.test.mjs): malformed requests, params that
// are not structured (§4.2), the empty batch (§6: one -32600 error). Three
// normalisations, all for json-rpc-2.0's sake: its server answers a batch
// with one response as that bare response (§6: "an Array containing the
// corresponding Response objects"), which its transport wraps here; its
// errors leave out a `data` that is null (§5.1: data is "a Primitive or
// Structured value", so weft keeps null), so a null data counts as none; and
// the message of -32601 is the library's own text (§5.1 lets it be any
// string), so only its code is compared (the handlers never throw -32601
// themselves: failParams() avoids it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import * as JR from 'json-rpc-2.0';

import { JSONRPCClient, JSONRPCServer, RPCError, portTransport, ready } from '../../js/index.js';
import {
  canonical, METHOD_NOT_FOUND, normalError, normalResponse, randData, randId, randInt, randJson, randString, Rng, sequenceSeed,
} from '../support/diff-gen.mjs';

const RUN_SEED = process.env.WEFT_PEER_DIFF_SEED ? Number(process.env.WEFT_PEER_DIFF_SEED) >>> 0 : randomInt(0, 2 ** 32 - 1);
const SEQUENCES = Number(process.env.WEFT_PEER_DIFF_SEQUENCES || 2000);
const T = { timeout: 600000 };
const replay = (seed, file) => `replay: WEFT_PEER_DIFF_SEED=${seed} WEFT_PEER_DIFF_SEQUENCES=1 node --test tests/js/${file}`;
const FILE = 'peer-differential.test.mjs';

// ---- the handlers, written once for each library ---------------------------
// echo: its params (null when absent); later: the same from a later microtask;
// fail: throws the error its params describe; note: a notification sink.
function weftServer(port, notes) {
  const s = new JSONRPCServer(portTransport(port), { onDiagnostic: () => {} });
  s.method('echo', (p) => p ?? null);
  s.method('later', async (p) => { await null; return p ?? null; });
  s.method('fail', (p) => { throw new RPCError(p.code, p.message, p.data); });
  s.onNotify('note', (p) => { notes.push(p ?? null); });
  return { close: () => { s.destroy(); port.close(); } };
}

function jrServer(port, notes) {
  const s = new JR.JSONRPCServer({ errorListener: () => {} });
  s.addMethod('echo', (p) => p ?? null);
  s.addMethod('later', async (p) => { await null; return p ?? null; });
  s.addMethod('fail', (p) => { throw new JR.JSONRPCErrorException(p.message, p.code, p.data); });
  s.addMethod('note', (p) => { notes.push(p ?? null); });
  port.on('message', async (m) => {
    let a = await s.receive(m);
    if (a === null) return;
    if (Array.isArray(m) && !Array.isArray(a)) a = [a];  // §6 (see the header)
    port.postMessage(a);
  });
  return { close: () => port.close() };
}

// ---- generated traffic -----------------------------------------------------
function params(r) {
  switch (r.int(0, 5)) {
    case 0: return undefined;
    case 1: case 2: { const a = []; for (let i = r.int(0, 4); i > 0; i--) a.push(randJson(r)); return a; }
    default: { const o = {}; for (let i = r.int(0, 4); i > 0; i--) o[randString(r, 6)] = randJson(r); return o; }
  }
}
function failParams(r) {
  const code = r.chance(0.2) ? r.pick([-32000, -32099, -32603, -1, 0, 1, 2147483647, -2147483648]) : randInt(r);
  const clamped = Math.max(-2147483648, Math.min(2147483647, code));
  const p = { code: clamped === METHOD_NOT_FOUND ? -32602 : clamped, message: randString(r) };
  const data = randData(r);
  if (data !== undefined) p.data = data;
  return p;
}
// One call: { method, params }; the method decides what the handler does.
function call(r) {
  const method = r.weighted([[4, 'echo'], [2, 'later'], [3, 'fail'], [1, 'missing'], [1, randString(r, 6) || 'x']]);
  if (method === 'fail') return { method, params: failParams(r) };
  return { method: method === 'echo' || method === 'later' || method === 'missing' ? method : `no.${method}`, params: params(r) };
}
function wire(c, id) {
  const m = { jsonrpc: '2.0', method: c.method };
  if (c.params !== undefined) m.params = c.params;
  if (id !== undefined) m.id = id;
  return m;
}

// Raw messages for the servers: requests, notifications (to `note`, or to a
// method nobody serves), batches of those (never empty).
function rawSequence(seed) {
  const r = new Rng(seed);
  const one = () => (r.chance(0.7) ? wire(call(r), randId(r)) : wire({ method: r.chance(0.8) ? 'note' : 'nobody', params: params(r) }));
  const msgs = [];
  for (let n = r.int(1, 6); n > 0; n--) {
    if (r.chance(0.3)) { const b = []; for (let k = r.int(1, 6); k > 0; k--) b.push(one()); msgs.push(b); } else msgs.push(one());
  }
  return msgs;
}

// Calls for the clients: single calls, notifications and batches of calls.
function callSequence(seed) {
  const r = new Rng(seed);
  const ops = [];
  for (let n = r.int(1, 6); n > 0; n--) {
    const k = r.int(0, 9);
    if (k < 6) ops.push({ kind: 'call', ...call(r) });
    else if (k < 7) ops.push({ kind: 'notify', method: 'note', params: params(r) });
    else { const items = []; for (let i = r.int(1, 5); i > 0; i--) items.push(call(r)); ops.push({ kind: 'batch', items }); }
  }
  return ops;
}

// ---- comparing ---------------------------------------------------------------
// An answer: a response, or a batch's responses in any order (§6).
function normalAnswer(a) {
  if (!Array.isArray(a)) return JSON.stringify(normalResponse(a));
  return JSON.stringify(a.map(normalResponse).sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1)));
}

// Sends `msgs` through `port`, then a request marking the end; resolves with
// every answer that came before the marker's, as normalised text, sorted.
function collect(port, msgs, mark) {
  return new Promise((resolve, reject) => {
    const got = [];
    const timer = setTimeout(() => reject(new Error(`no answer to the end marker; got ${JSON.stringify(got)}`)), 10000);
    const on = (a) => {
      if (a?.method !== undefined) return;  // weft's $/weft/pack announcement, not an answer
      if (a?.id === mark) {
        clearTimeout(timer);
        port.off('message', on);
        resolve(got.map(normalAnswer).sort());
      } else got.push(a);
    };
    port.on('message', on);
    for (const m of msgs) port.postMessage(m);
    port.postMessage({ jsonrpc: '2.0', method: 'echo', id: mark });
  });
}

test('servers: weft and json-rpc-2.0 give the same answers to the same seeded traffic', T, async (t) => {
  await ready;
  t.diagnostic(`run seed ${RUN_SEED} (WEFT_PEER_DIFF_SEED), ${SEQUENCES} sequences`);
  const weftNotes = [];
  const jrNotes = [];
  const a = new MessageChannel();
  const b = new MessageChannel();
  const weft = weftServer(a.port2, weftNotes);
  const jr = jrServer(b.port2, jrNotes);
  try {
    for (let i = 0; i < SEQUENCES; i++) {
      const seed = sequenceSeed(RUN_SEED, i);
      const msgs = rawSequence(seed);
      const mark = `end-${i}`;
      weftNotes.length = 0;
      jrNotes.length = 0;
      const [w, j] = await Promise.all([collect(a.port1, msgs, mark), collect(b.port1, msgs, mark)]);
      const why = `sequence ${i}, seed ${seed} (${replay(seed, FILE)})\nsent: ${JSON.stringify(msgs)}`;
      assert.deepEqual(w, j, `answers differ: weft (actual) vs json-rpc-2.0 (expected); ${why}`);
      assert.deepEqual(canonical(weftNotes), canonical(jrNotes), `notifications handled differ; ${why}`);
    }
  } finally { weft.close(); jr.close(); }
});

// ---- clients ------------------------------------------------------------------
// What a call came to: { ok } or { error: { code, message, data } }.
const settled = (p) => p.then((ok) => ({ ok: canonical(ok ?? null) }),
  (e) => ({ error: normalError(e) }));

function weftClient(port) {
  const c = new JSONRPCClient(portTransport(port));
  return {
    call: (m, p) => settled(c.request(m, p)),
    notify: (m, p) => c.notify(m, p),
    batch: (items) => Promise.all(c.batch(items.map((x) => ({ method: x.method, params: x.params }))).map(settled)),
    close: () => { c.destroy(); port.close(); },
  };
}

function jrClient(port) {
  const c = new JR.JSONRPCClient((req) => { port.postMessage(req); });
  port.on('message', (m) => { for (const a of Array.isArray(m) ? m : [m]) if (a?.method === undefined) c.receive(a); });
  let next = 1;
  return {
    call: (m, p) => settled(c.request(m, p)),
    notify: (m, p) => c.notify(m, p),
    // requestAdvanced with a batch: one response per call, matched by id here.
    batch: async (items) => {
      const reqs = items.map((x) => JR.createJSONRPCRequest(`b${next++}`, x.method, x.params));
      const got = await c.requestAdvanced(reqs);
      const byId = new Map(got.map((a) => [a.id, a]));
      return reqs.map((q) => {
        const a = byId.get(q.id);
        return a.error ? settled(Promise.reject(a.error)) : settled(Promise.resolve(a.result));
      });
    },
    close: () => port.close(),
  };
}

async function runCalls(client, ops) {
  const out = [];
  for (const op of ops) {
    if (op.kind === 'call') out.push(client.call(op.method, op.params));
    else if (op.kind === 'notify') client.notify(op.method, op.params);
    else out.push(client.batch(op.items).then((x) => Promise.all(x)));
  }
  return Promise.all(out);
}

test('clients: a weft client and a json-rpc-2.0 client, against either server, see the same outcomes', T, async (t) => {
  await ready;
  t.diagnostic(`run seed ${RUN_SEED} (WEFT_PEER_DIFF_SEED), ${SEQUENCES} sequences`);
  // [client, server]: weft ↔ weft (default options: packed tuples after the
  // first exchange), weft → json-rpc-2.0, json-rpc-2.0 → weft, and json-rpc-2.0
  // ↔ json-rpc-2.0, the reference.
  const pairs = [['weft', weftServer, weftClient], ['weft → json-rpc-2.0', jrServer, weftClient],
    ['json-rpc-2.0 → weft', weftServer, jrClient], ['json-rpc-2.0', jrServer, jrClient]].map(([name, server, client]) => {
    const ch = new MessageChannel();
    const notes = [];
    return { name, notes, server: server(ch.port2, notes), client: client(ch.port1) };
  });
  try {
    for (let i = 0; i < SEQUENCES; i++) {
      const seed = sequenceSeed(RUN_SEED, i);
      const ops = callSequence(seed);
      for (const p of pairs) p.notes.length = 0;
      const outcomes = await Promise.all(pairs.map((p) => runCalls(p.client, ops)));
      // A notification's handler has run once a later call was answered; the
      // last op may be one: a call to echo after it settles that.
      await Promise.all(pairs.map((p) => p.client.call('echo', [i])));
      const reference = pairs.length - 1;
      const why = `sequence ${i}, seed ${seed} (${replay(seed, FILE)})\ncalls: ${JSON.stringify(ops)}`;
      for (let k = 0; k < reference; k++) {
        assert.deepEqual(outcomes[k], outcomes[reference], `${pairs[k].name} (actual) vs json-rpc-2.0 (expected); ${why}`);
        assert.deepEqual(canonical(pairs[k].notes), canonical(pairs[reference].notes), `${pairs[k].name}: notifications handled differ; ${why}`);
      }
    }
  } finally { for (const p of pairs) { p.client.close(); p.server.close(); } }
});
