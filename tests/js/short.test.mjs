// The short ways into the core (js/short.js): a request, a notification, a
// result or an error, as a tuple or as a plain JSON-RPC object, reaches the core
// without a descriptor. A short way must never decide differently from the
// description it skips: every message here is run twice through each role,
// once as it comes and once with every short way declining (the glue then
// describes the message, and the core judges the description), and the
// answers, diagnostics, what the handlers were given, calls' outcomes and
// bookkeeping must be the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONRPCClient, JSONRPCServer, Peer, RPCError, portTransport, ready } from '../../js/index.js';
import { X } from '../../js/heap.js';
import { isAnnouncement } from '../support/wire.mjs';

const T = { timeout: 30000 };
const V = { jsonrpc: '2.0' };
const CALLS = 12;  // calls the endpoint makes first (ids 1..12), for the results below to answer

// Requests as a foreign client sends them, at the edges of weft_request:
// ids, params, "jsonrpc", method, and members a request does not have.
const requests = [
  { ...V, method: 'echo', params: [1], id: 101 }, { ...V, method: 'echo', params: { a: 1 }, id: 102 },
  { ...V, method: 'echo', id: 103 }, { ...V, method: 'echo', params: undefined, id: 104 },
  { ...V, method: 'echo', params: [], id: 0 }, { ...V, method: 'echo', params: {}, id: -7 },
  { ...V, method: 'echo', params: null, id: 105 }, { ...V, method: 'echo', params: 5, id: 106 },
  { ...V, method: 'echo', params: 'x', id: 107 }, { ...V, method: 'echo', params: [[]], id: 2 ** 53 - 1 },
  { ...V, method: 'echo', params: [2], id: 2 ** 53 }, { ...V, method: 'echo', params: [3], id: -0 },
  { ...V, method: 'echo', params: [4], id: 1.5 }, { ...V, method: 'echo', params: [5], id: NaN },
  { ...V, method: 'echo', params: [6], id: Infinity }, { ...V, method: 'echo', params: [7], id: 's' },
  { ...V, method: 'echo', params: [8], id: null }, { ...V, method: 'echo', params: [9], id: 10n },
  { method: 'echo', params: [10], id: 108 }, { jsonrpc: '1.0', method: 'echo', params: [11], id: 109 },
  { jsonrpc: 2, method: 'echo', params: [12], id: 110 }, { jsonrpc: '2.0 ', method: 'echo', id: 111 },
  { ...V, method: 7, id: 112 }, { ...V, method: null, id: 113 }, { ...V, method: '', id: 114 },
  { ...V, method: 'rpc.echo', id: 115 }, { ...V, method: 'nope', params: [1], id: 116 },
  { ...V, method: 'fail', params: { code: 7, message: 'seven', data: [7] }, id: 117 },
  { ...V, method: 'none', id: 118 },
  // A request the core lets go (RECEIVED_RELEASED) answered other than by a
  // value: later, by a rejection, after the context took its token.
  { ...V, method: 'later', params: [21], id: 123 }, { ...V, method: 'laterFail', params: [22], id: 124 },
  { ...V, method: 'context', id: 125 }, [0n, 133, 'later', [23]], [0n, 134, 'context'],
  { ...V, method: 'echo', params: [13], result: 1, id: 119 },
  { ...V, method: 'echo', params: [14], error: { code: 1, message: 'x' }, id: 120 },
  { ...V, method: 'echo', params: [15], metrics: { processing_time_us: 1 }, id: 121 },
  { ...V, method: 'echo', params: [16], id: 122, extra: true },
  { ...V, method: 'echo', params: [17] }, { ...V, method: 'note', params: [18] },
  [0n, 130, 'echo', [19]], [0n, 131, 'echo'], [0n, 132, 'echo', undefined], [0n, -0, 'echo', [20]],
];

// Notifications at the edges of weft_notification: an id member that is
// undefined, params, "jsonrpc", method, members a notification does not
// have, the core's own "$/" methods, methods with no sink or a throwing one.
const notifications = [
  { ...V, method: 'note', params: [1] }, { ...V, method: 'note', params: { a: 1 } }, { ...V, method: 'note' },
  { ...V, method: 'note', params: undefined }, { ...V, method: 'note', params: [2], id: undefined },
  { ...V, method: 'note', params: [] }, { ...V, method: 'note', params: {} },
  { ...V, method: 'note', params: null }, { ...V, method: 'note', params: 5 }, { ...V, method: 'note', params: 'x' },
  { ...V, method: 'note', params: true },
  { method: 'note', params: [3] }, { jsonrpc: '1.0', method: 'note' }, { jsonrpc: 2, method: 'note' },
  { ...V, method: 7 }, { ...V, method: null }, { ...V, method: '' }, { ...V, method: 'rpc.note' },
  { ...V, method: 'nobody', params: [4] }, { ...V, method: 'throws', params: [5] },
  { ...V, method: 'note', params: [6], result: 1 }, { ...V, method: 'note', params: [7], error: { code: 1, message: 'x' } },
  { ...V, method: 'note', params: [8], metrics: { processing_time_us: 1 } }, { ...V, method: 'note', params: [9], extra: true },
  { ...V, method: 'echo', params: [10] }, { ...V, method: 'none' },
  { ...V, method: '$/cancelRequest', params: { id: 999 } }, { ...V, method: '$/cancelRequest', params: { id: 'x' } },
  { ...V, method: '$/cancelRequest', params: [1] }, { ...V, method: '$/cancelRequest' },
  { ...V, method: '$/progress', params: { token: 1, value: 2 } }, { ...V, method: '$/unknown', params: [1] },
  [1n, 'note', [11]], [1n, 'note', { b: 2 }], [1n, 'note'], [1n, 'note', undefined], [1n, 5, [12]],
  [1n, 'note', [13], 'extra'], [1n, 'note', null], [1n, 'nobody'], [1n, 'throws', []],
];

// Results and errors for the endpoint's calls 1..12, at the edges of
// weft_result: ids, "jsonrpc", and members a result does not have.
const results = [
  { ...V, result: 5, id: 1 }, { ...V, result: undefined, id: 2 }, { ...V, id: 3 },
  { ...V, result: 1, error: undefined, id: 3 }, { ...V, result: 1, error: null, id: 4 },
  { ...V, result: { a: [1] }, method: undefined, id: 4 }, { ...V, result: 1, metrics: { processing_time_us: 3 }, id: 5 },
  { ...V, result: 2, id: 1 }, { ...V, result: 1, id: '6' }, { ...V, result: 1, id: -0 }, { ...V, result: 1, id: 6.5 },
  { jsonrpc: '1.0', result: 1, id: 6 }, { result: 1, id: 6 }, { ...V, result: 1, id: 6n },
  { ...V, error: { code: 1, message: 'x', data: [1] }, id: 7 }, { ...V, result: 2, error: { code: 1, message: 'x' }, id: 8 },
  { ...V, result: 3, params: [1], id: 9 }, { ...V, result: [9], id: 99 }, { ...V, result: 1, id: 2 ** 53 + 2 },
  [2n, 10, 'ten'], [2n, 10, 'again'], [2n, -0, 1], [2n, 11], { ...V, result: null, id: 11, extra: 1 },
];

// Error answers for the calls 1..12, at the edges of weft_failure: codes
// (32-bit or not, integral or not, other types), messages, error members
// that are not objects, ids, "jsonrpc", and members an error does not have.
const E = (code, message, more) => ({ code, message, ...more });
const errors = [
  { ...V, error: E(-32000, 'a', { data: { d: 1 } }), id: 1 }, { ...V, error: E(5, 'b'), id: 2 },
  { ...V, error: E(5, 'b', { data: undefined }), id: 3 }, { ...V, error: E(5, 'b', { data: null }), id: 4 },
  { ...V, error: E(2 ** 31, 'too big'), id: 5 }, { ...V, error: E(-(2 ** 31), 'least'), id: 5 },
  { ...V, error: E(1.5, 'fraction'), id: 6 }, { ...V, error: E(NaN, 'nan'), id: 6 },
  { ...V, error: E(Infinity, 'inf'), id: 6 }, { ...V, error: E('5', 'string code'), id: 6 },
  { ...V, error: E(5n, 'bigint code'), id: 6 }, { ...V, error: E(5, 7), id: 6 }, { ...V, error: { code: 5 }, id: 6 },
  { ...V, error: { message: 'm' }, id: 6 }, { ...V, error: null, id: 6 }, { ...V, error: [5, 'm'], id: 6 },
  { ...V, error: 'e', id: 6 }, { ...V, error: E(5, ''), id: 6 },
  { ...V, error: E(5, 'm'), id: -0 }, { ...V, error: E(5, 'm'), id: 7.5 }, { ...V, error: E(5, 'm'), id: '7' },
  { ...V, error: E(5, 'm'), id: null }, { ...V, error: E(5, 'm') }, { ...V, error: E(5, 'm'), id: 99 },
  { ...V, error: E(5, 'twice'), id: 1 }, { jsonrpc: '1.0', error: E(5, 'm'), id: 7 }, { error: E(5, 'm'), id: 7 },
  { ...V, error: E(5, 'm'), metrics: { processing_time_us: 1 }, id: 7 },
  { ...V, error: E(5, 'm', { extra: 1 }), params: [1], id: 8 }, { ...V, error: E(-0, 'zero'), id: 9 },
  { ...V, error: E(5, 'm'), result: undefined, id: 9 }, { ...V, error: E(5, 'm'), method: 'x', id: 9 },
  [3n, 10, 7, 'seven'], [3n, 11, 7, 'seven', [7]], [3n, 12, 7, 'seven', undefined], [3n, 10, 7, 'again'],
  [3n, 12.5, 7, 'x'], [3n, -0, 7, 'x'], [3n, 11, 1.5, 'x'], [3n, 11, 7], [3n, 11, 7, 'x', 1, 2], [3n, '11', 7, 'x'],
];

// The short exports, as the module has them (its raw exports: Emscripten's
// Module._weft_* are stubs that replace themselves on their first call);
// `declining` stands in for both, taking nothing: the glue then describes
// every message.
await ready;
const real = {
  _weft_request: X.asm.weft_request, _weft_result: X.asm.weft_result,
  _weft_notification: X.asm.weft_notification, _weft_failure: X.asm.weft_failure,
};
const declining = { _weft_request: () => 0, _weft_result: () => -1, _weft_notification: () => 0, _weft_failure: () => 0 };

// What endpoint `Kind` makes of `messages` from a raw foreign peer: its
// answers, diagnostics, what its handlers were given, its calls' outcomes,
// its bookkeeping; and how many messages the short ways took.
async function outcome(Kind, messages, short) {
  const taken = { request: 0, result: 0, notification: 0, failure: 0, released: 0 };
  Object.assign(X, short ? {
    _weft_request: (...a) => { const r = real._weft_request(...a); taken.request += r >= 1; taken.released += r === 2; return r; },
    _weft_result: (...a) => { const r = real._weft_result(...a); taken.result += r >= 0; return r; },
    _weft_notification: (...a) => { const r = real._weft_notification(...a); taken.notification += r === 1; return r; },
    _weft_failure: (...a) => { const r = real._weft_failure(...a); taken.failure += r === 1; return r; },
  } : declining);
  const { port1, port2 } = new MessageChannel();
  const diags = [];
  const got = [];
  const seen = new Set();  // the ids of the endpoint's requests
  let check = () => {};
  const given = [];  // [method, params] for every handler run
  const ep = new Kind(portTransport(port2), { onDiagnostic: (k, m) => { diags.push([k, m]); check(); } });
  const serving = Kind !== JSONRPCClient;
  if (serving) {
    ep.method('echo', (p) => { given.push(['echo', p]); return p; });
    ep.method('fail', (p) => { throw new RPCError(p.code, p.message, p.data); });
    ep.method('none', () => { given.push(['none']); });
    ep.method('later', async (p) => { given.push(['later', p]); await null; return p; });
    ep.method('laterFail', async () => { await null; throw new RPCError(9, 'nine', { n: 9 }); });
    ep.method('context', (p, ctx) => [ctx.signal.aborted, ctx.wantsProgress, ctx.sink.streaming]);
    ep.onNotify('note', (p) => { given.push(['note', p]); });
    ep.onNotify('throws', (p) => { given.push(['throws', p]); throw new Error('thrown by a sink'); });
  }
  port1.addEventListener('message', (ev) => {
    const m = ev.data;
    if (isAnnouncement(m)) return;
    if (m?.method !== undefined && m.id !== undefined) seen.add(m.id);
    else got.push(m);
    check();
  });
  port1.start();
  const until = (cond) => new Promise((resolve) => { check = () => { if (cond()) resolve(); }; check(); });
  try {
    const calls = [];
    if (Kind !== JSONRPCServer) {
      for (let i = 0; i < CALLS; i++) calls.push(ep.request('m', [i], { timeout: 0 }).then((v) => ['ok', v], (e) => ['err', e.code, e.message, e.data]));
      await until(() => seen.size === CALLS);
    }
    for (const m of messages) port1.postMessage(m);
    // A last message every role handles visibly: all before it was handled.
    if (serving) {
      port1.postMessage({ ...V, method: 'echo', params: ['last'], id: 'last' });
      await until(() => got.some((m) => m?.id === 'last'));
    } else {
      port1.postMessage({ ...V, result: 0, id: 'last' });
      await until(() => diags.some(([, m]) => m.includes('"last"')));
    }
    const { pending, inFlight, calls: live, payloads } = ep.stats();
    ep.destroy();
    return { outcome: [got, diags, given, await Promise.all(calls), { pending, inFlight, live, payloads }], taken };
  } finally {
    Object.assign(X, real);
    ep.destroy();
    port1.close();
  }
}

const sets = [
  ['requests', requests], ['notifications', notifications], ['results', results], ['errors', errors],
  ['all', [...results, ...errors, ...notifications, ...requests]],
];
for (const [name, messages] of sets) {
  test(`short ways: ${name} from a foreign peer are answered as their descriptions are, by every role`, T, async () => {
    await ready;
    for (const Kind of [JSONRPCServer, Peer, JSONRPCClient]) {
      const short = await outcome(Kind, messages, true);
      const described = await outcome(Kind, messages, false);
      assert.deepEqual(short.outcome, described.outcome, Kind.name);
      assert.deepEqual(described.taken, { request: 0, result: 0, notification: 0, failure: 0, released: 0 });
      // The test means something only if the short ways are taken.
      const has = (set) => name === set || name === 'all';
      if (Kind !== JSONRPCClient && has('requests')) {
        assert.ok(short.taken.request >= 10, `${Kind.name}: ${short.taken.request} requests taken`);
        // Peer::release_held lets go of each one received alone whose method exists.
        assert.ok(short.taken.released >= 10, `${Kind.name}: ${short.taken.released} requests let go`);
      }
      if (has('notifications')) assert.ok(short.taken.notification >= 15, `${Kind.name}: ${short.taken.notification} notifications taken`);
      if (Kind !== JSONRPCServer && has('results')) assert.ok(short.taken.result >= 4, `${Kind.name}: ${short.taken.result} results taken`);
      if (has('errors')) assert.ok(short.taken.failure >= 12, `${Kind.name}: ${short.taken.failure} errors taken`);
    }
  });
}

test('short ways: a json-rpc-2.0-shaped request and its result, as objects, take the short way', T, async () => {
  await ready;
  const server = await outcome(JSONRPCServer, [{ ...V, method: 'echo', params: { a: 1 }, id: 1 }], true);
  assert.deepEqual(server.taken, { request: 1, result: 0, notification: 0, failure: 0, released: 1 }, 'the request (the last one\'s id is a string)');
  assert.deepEqual(server.outcome[0], [{ ...V, result: { a: 1 }, id: 1 }, { ...V, result: ['last'], id: 'last' }]);
  const client = await outcome(JSONRPCClient, Array.from({ length: CALLS }, (_, i) => ({ ...V, result: i, id: i + 1 })), true);
  assert.deepEqual(client.taken, { request: 0, result: CALLS, notification: 0, failure: 0, released: 0 });
  assert.deepEqual(client.outcome[3], Array.from({ length: CALLS }, (_, i) => ['ok', i]));
  assert.deepEqual(client.outcome[4], { pending: 0, inFlight: 0, live: 0, payloads: 0 });
});

test('short ways: a json-rpc-2.0-shaped error answer, as an object or a tuple, takes the short way and rejects its call with it', T, async () => {
  await ready;
  const answers = Array.from({ length: CALLS }, (_, i) => (i % 2
    ? [3n, i + 1, -32000 - i, `m${i}`, { i }]
    : { ...V, error: i % 4 ? { code: -32000 - i, message: `m${i}` } : { code: -32000 - i, message: `m${i}`, data: [i] }, id: i + 1 }));
  const client = await outcome(JSONRPCClient, answers, true);
  assert.deepEqual(client.taken, { request: 0, result: 0, notification: 0, failure: CALLS, released: 0 });
  assert.deepEqual(client.outcome[3], Array.from({ length: CALLS }, (_, i) =>
    ['err', -32000 - i, `m${i}`, i % 2 ? { i } : i % 4 ? undefined : [i]]));
  assert.deepEqual(client.outcome[4], { pending: 0, inFlight: 0, live: 0, payloads: 0 });
});

test('short ways: a json-rpc-2.0-shaped notification, as an object, takes the short way to its sink', T, async () => {
  await ready;
  const server = await outcome(JSONRPCServer, [{ ...V, method: 'note', params: { a: 1 } }, { ...V, method: 'note' }], true);
  assert.deepEqual(server.taken, { request: 0, result: 0, notification: 2, failure: 0, released: 0 });
  assert.deepEqual(server.outcome[2], [['note', { a: 1 }], ['note', undefined], ['echo', ['last']]]);
  assert.deepEqual(server.outcome[0], [{ ...V, result: ['last'], id: 'last' }], 'a notification is never answered (§4.1)');
});

test('§4.1: what a method() handler returns to a notification is never sent, and is let go', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const diags = [];
  const got = [];
  const server = new JSONRPCServer(portTransport(port2), { onDiagnostic: (k, m) => diags.push([k, m]) });
  const answers = {
    object: () => ({ big: 'x'.repeat(1000) }), array: () => [1, [2]], string: () => 's', number: () => 3,
    none: () => undefined, later: async () => ({ a: 1 }), refused: async () => { throw new RPCError(5, 'five', [5]); },
    thrown: () => { throw new Error('thrown'); },
  };
  const ran = [];
  const promised = [];
  for (const [name, f] of Object.entries(answers)) {
    server.method(name, (p, ctx) => {
      ran.push([name, p, typeof ctx]);
      const r = f();
      if (r instanceof Promise) promised.push(r);
      return r;
    });
  }
  let check = () => {};
  port1.addEventListener('message', (ev) => {
    if (isAnnouncement(ev.data)) return;
    got.push(ev.data);
    check();
  });
  port1.start();
  const answered = (id) => new Promise((resolve) => { check = () => { if (got.some((m) => m.id === id)) resolve(); }; check(); });
  try {
    for (const name of Object.keys(answers)) {
      port1.postMessage({ ...V, method: name, params: [name] });
      port1.postMessage([1n, name, { tuple: name }]);
    }
    // A request after them: once it is answered, every handler has run.
    port1.postMessage({ ...V, method: 'number', id: 'after' });
    await answered('after');
    await Promise.allSettled(promised);  // settled after the glue's own reactions
    port1.postMessage({ ...V, method: 'number', id: 'last' });
    await answered('last');
    assert.deepEqual(got, [{ ...V, result: 3, id: 'after' }, { ...V, result: 3, id: 'last' }]);
    assert.equal(ran.length, 2 * Object.keys(answers).length + 2);
    assert.ok(ran.every(([, , ctx]) => ctx === 'object'), 'a method() handler gets its context for a notification too');
    assert.deepEqual(diags.map(([k]) => k), Array(4).fill('NotificationFailed'), 'refused and thrown, twice each');
    assert.equal(server.stats().payloads, 0, 'every answer\'s handle released');
  } finally { server.destroy(); port1.close(); }
});

// A request the core let go (RECEIVED_RELEASED) is answered from JS; the
// core answers nothing once closed (PeerState::answer_made), and neither
// does JS: a handler that closes its endpoint, or its transport, before it
// returns a value gets no answer sent. The same with the short ways
// declining (the request then described, its answer held in the core).
for (const how of ['destroy', 'transport close']) {
  test(`a request let go whose handler closes its endpoint (${how}) is not answered`, T, async () => {
    await ready;
    for (const short of [true, false]) {
      Object.assign(X, short ? real : declining);
      const sent = [];
      let deliver, closed;
      const t = {
        send: (m) => sent.push(m),
        onMessage: (f) => { deliver = f; },
        onClose: (f) => { closed = f; },
      };
      const server = new JSONRPCServer(t);
      let ran = 0;
      server.method('bye', () => {
        ran++;
        if (how === 'destroy') server.destroy();
        else closed();
        return 'never sent';
      });
      server.method('echo', (p) => p);
      try {
        await new Promise((resolve) => setImmediate(resolve));  // the core loaded, the endpoint made
        deliver({ ...V, method: 'echo', params: [1], id: 1 });
        assert.deepEqual(sent, [{ ...V, result: [1], id: 1 }], 'open, it answers');
        deliver({ ...V, method: 'bye', id: 2 });
        assert.equal(ran, 1);
        assert.deepEqual(sent, [{ ...V, result: [1], id: 1 }], `short ways ${short ? 'taken' : 'declining'}: nothing after close`);
      } finally {
        Object.assign(X, real);
        server.destroy();
      }
    }
  });
}

// A request let go (RECEIVED_RELEASED) is served as a held one is, in every
// way a user can see: each case runs with the short ways taken and with them
// declining (the answer then held in the core), over a transport that
// delivers at once and clones what it sends, as postMessage does.
function directServer(options) {
  const sent = [];
  let deliver, closed;
  const t = {
    send: (m) => sent.push(structuredClone(m)),
    onMessage: (f) => { deliver = f; },
    onClose: (f) => { closed = f; },
  };
  const server = new JSONRPCServer(t, options);
  return { server, sent, deliver: (m) => deliver(m), close: () => closed() };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

async function bothWays(body) {
  await ready;
  for (const short of [true, false]) {
    Object.assign(X, short ? real : declining);
    try { await body(short ? 'short ways taken' : 'short ways declining'); } finally { Object.assign(X, real); }
  }
}

test('a request let go whose result cannot be sent is answered -32603, saying why', T, () => bothWays(async (way) => {
  const { server, sent, deliver } = directServer();
  server.method('fn', () => ({ f() {} }));
  try {
    await settle();
    deliver({ ...V, method: 'fn', id: 1 });
    await settle();  // a send failure is reported after the send (js/pack.js)
    assert.equal(sent.length, 1, way);
    assert.equal(sent[0].id, 1, way);
    assert.equal(sent[0].error?.code, -32603, `${way}: ${JSON.stringify(sent[0])}`);
    assert.match(sent[0].error.message, /could not be sent/, way);
  } finally { server.destroy(); }
}));

test('a request let go is in flight while its handler runs: stats().inFlight, and maxInFlight refuses the next with -32003', T, () => bothWays(async (way) => {
  const { server, sent, deliver } = directServer({ limits: { maxInFlight: 1 } });
  let finish;
  server.method('slow', () => new Promise((resolve) => { finish = resolve; }));
  try {
    await settle();
    deliver({ ...V, method: 'slow', id: 1 });
    assert.equal(server.stats().inFlight, 1, way);
    deliver({ ...V, method: 'slow', id: 2 });
    assert.equal(sent.length, 1, way);
    assert.deepEqual([sent[0].id, sent[0].error?.code], [2, -32003], way);
    finish('done');
    await settle();
    assert.deepEqual(sent[1], { ...V, result: 'done', id: 1 }, way);
    assert.equal(server.stats().inFlight, 0, way);
  } finally { server.destroy(); }
}));

for (const how of ['destroy', 'transport close']) {
  test(`a request whose handler closes its endpoint (${how}) and answers later is not answered, and not left in flight`, T, () => bothWays(async (way) => {
    const diags = [];
    const d = directServer({ onDiagnostic: (k) => diags.push(k) });
    let finish;
    d.server.method('bye', () => {
      if (how === 'destroy') d.server.destroy();
      else d.close();
      return new Promise((resolve) => { finish = resolve; });
    });
    try {
      await settle();
      assert.doesNotThrow(() => d.deliver({ ...V, method: 'bye', id: 1 }), way);
      if (how !== 'destroy') assert.equal(d.server.stats().inFlight, 0, way);
      finish('never sent');
      await settle();
      assert.deepEqual(d.sent, [], way);
    } finally { d.server.destroy(); }
  }));
}
