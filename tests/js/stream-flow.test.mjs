// A stream's flow on the caller's side (docs/streams.md), against fake
// serving peers over a MessageChannel and a JSONRPCServer over npm `ws`:
// credit goes back in steps of highWaterMark/4 and the rest by the end of the
// turn, so a sender given less credit than asked, and a steady consumer
// under a timeout, never stall; a local abort or timeout delivers no chunk
// after it, a remote error every chunk before it; binary chunks over
// webSocketTransport are the JSON codec's binary form, and the sender
// measures a chunk as the receiver will.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { WebSocket, WebSocketServer } from 'ws';
import { Peer, JSONRPCServer, ErrorCode, RPCError, portTransport, webSocketTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };

// A serving peer written by hand: it records the client's $/weft/open,
// grants and cancels, gives at most `maxCredit` per open or grant (its
// max_stream_credit), and lets the test send chunks and answers.
function fakeServer({ maxCredit = Infinity, clock } = {}) {
  const { port1, port2 } = new MessageChannel();
  const client = new Peer(portTransport(port1, { pack: false }), { clock, timeout: 0 });
  const f = { id: null, credit: 0, seq: 0, grants: [], cancels: [], onCall: null, waits: [] };
  f.chunk = (value) => {
    f.credit--;
    port2.postMessage({ jsonrpc: '2.0', method: '$/weft/chunk', params: { id: f.id, seq: f.seq++, value } });
  };
  f.answer = (m) => port2.postMessage({ jsonrpc: '2.0', id: f.id, ...m });
  // Resolves once pred() holds, checked on every message from the client.
  f.until = (pred) => new Promise((resolve) => { f.waits.push([pred, resolve]); f.check(); });
  f.check = () => { f.waits = f.waits.filter(([p, r]) => !(p() && (r(), true))); };
  // Every message the client sent before its answer to this has arrived.
  let pings = 0;
  f.barrier = () => { const id = `ping${++pings}`; port2.postMessage({ jsonrpc: '2.0', id, method: 'ping' }); return f.until(() => f.pong === id); };
  client.method('ping', () => 'pong');
  port2.on('message', (m) => {
    if (m.method === '$/weft/open') { f.id = m.params.id; f.credit = Math.min(m.params.credit, maxCredit); }
    else if (m.method === '$/weft/credit') { f.grants.push(m.params.credit); f.credit += Math.min(m.params.credit, maxCredit); }
    else if (m.method === '$/cancelRequest') f.cancels.push(m.params.id);
    else if (m.result === 'pong') f.pong = m.id;
    else if (m.method) f.onCall?.(m);
    f.onMessage?.(m);
    f.check();
  });
  return { client, f, done: () => { client.destroy(); port2.close(); } };
}

// A simulated clock: time moves only when the test says so.
function simClock() {
  let now = 0;
  const timers = [];
  return {
    now: () => now,
    setTimeout: (fn, ms) => { const t = { at: now + ms, fn }; timers.push(t); return t; },
    clearTimeout: (t) => { const i = timers.indexOf(t); if (i >= 0) timers.splice(i, 1); },
    advance(t) {
      now = t;
      for (const x of timers.filter((x) => x.at <= now)) { timers.splice(timers.indexOf(x), 1); x.fn(); }
    },
  };
}

const settled = (p) => p.then((v) => ({ value: v }), (e) => ({ code: e.code }));

// -- credit ---------------------------------------------------------------------------
test('a sender that clamped the credit below half the highWaterMark (its max_stream_credit) still gets it all back: the stream completes', T, async () => {
  const { client, f, done } = fakeServer({ maxCredit: 4 });
  try {
    const N = 10;
    let sent = 0;
    const pump = () => {
      while (f.credit > 0 && sent < N) f.chunk(sent++);
      if (sent === N) { f.answer({ result: 'done' }); sent++; }
    };
    f.onCall = pump;
    f.onMessage = (m) => { if (m.method === '$/weft/credit') pump(); };
    const s = client.stream('count', {}, { highWaterMark: 16 });
    const got = [];
    for await (const c of s) got.push(c);
    assert.deepEqual(got, Array.from({ length: N }, (_, i) => i));
    assert.equal(await s.result, 'done');
    assert.ok(f.grants.every((g) => g <= 4), `each grant within the sender's clamp: ${f.grants}`);
  } finally { done(); }
});

test('credit goes back in steps of highWaterMark/4 as buffered chunks are taken, not one grant per chunk', T, async () => {
  const { client, f, done } = fakeServer();
  try {
    f.onCall = () => { for (let i = 0; i < 16; i++) f.chunk(i); };
    const s = client.stream('count', {}, { highWaterMark: 16 });
    await f.until(() => f.seq === 16);
    await f.barrier();  // all 16 buffered at the client
    for (let i = 0; i < 8; i++) assert.deepEqual(await s.next(), { value: i, done: false });
    await f.barrier();
    assert.deepEqual(f.grants, [4, 4]);
    f.answer({ result: 'done' });
    for await (const _c of s) { /* the rest */ }
  } finally { done(); }
});

test('credit for fewer chunks than a step goes back by the end of the turn: none is left owed', T, async () => {
  const { client, f, done } = fakeServer();
  try {
    f.onCall = () => { for (let i = 0; i < 16; i++) f.chunk(i); };
    const s = client.stream('count', {}, { highWaterMark: 16 });
    assert.deepEqual(await s.next(), { value: 0, done: false });
    await f.until(() => f.grants.length === 1);
    assert.deepEqual(f.grants, [1]);
    for (let i = 1; i < 6; i++) await s.next();  // 5 more: one step of 4 at once, then 1
    await f.until(() => f.grants.length === 3);
    assert.deepEqual(f.grants, [1, 4, 1]);
    f.answer({ result: 'done' });
    for await (const _c of s) { /* the rest */ }
  } finally { done(); }
});

test('a consumer taking one chunk per quarter of the timeout never times out: each grant restarts it', T, async () => {
  const clock = simClock();
  const { client, f, done } = fakeServer({ clock });
  try {
    // 16 chunks at once, then nothing more until the answer: only the
    // consumer's grants show the call is alive.
    f.onCall = () => { for (let i = 0; i < 16; i++) f.chunk(i); };
    const s = client.stream('rows', {}, { highWaterMark: 16, timeout: 1000 });
    const result = settled(s.result);
    await f.until(() => f.seq === 16);
    await f.barrier();
    for (let i = 0; i < 16; i++) {
      assert.deepEqual(await s.next(), { value: i, done: false });
      await f.until(() => f.grants.reduce((a, b) => a + b, 0) === i + 1);
      clock.advance((i + 1) * 250);
    }
    f.answer({ result: 'done' });
    assert.deepEqual(await s.next(), { value: undefined, done: true });
    assert.deepEqual(await result, { value: 'done' });
  } finally { done(); }
});

// -- what a failure leaves to deliver ----------------------------------------------
test('after an AbortSignal abort no buffered chunk is delivered: the next next() rejects -32800 at once', T, async () => {
  const { client, f, done } = fakeServer();
  try {
    f.onCall = () => { for (let i = 0; i < 8; i++) f.chunk(i); };
    const ac = new AbortController();
    const s = client.stream('count', {}, { highWaterMark: 8, signal: ac.signal });
    assert.deepEqual(await s.next(), { value: 0, done: false });
    await f.barrier();  // 7 more buffered
    ac.abort();
    await assert.rejects(s.next(), (e) => e instanceof RPCError && e.code === ErrorCode.RequestCancelled);
    assert.deepEqual(await s.next(), { value: undefined, done: true });
    await f.until(() => f.cancels.length === 1);
  } finally { done(); }
});

test('after the timeout passes no buffered chunk is delivered: the next next() rejects -32001', T, async () => {
  const clock = simClock();
  const { client, f, done } = fakeServer({ clock });
  try {
    f.onCall = () => { for (let i = 0; i < 8; i++) f.chunk(i); };
    const s = client.stream('count', {}, { highWaterMark: 8, timeout: 1000 });
    const result = settled(s.result);
    await f.until(() => f.seq === 8);
    await f.barrier();
    clock.advance(1000);
    assert.deepEqual(await result, { code: ErrorCode.Timeout });
    await assert.rejects(s.next(), (e) => e.code === ErrorCode.Timeout);
    await f.until(() => f.cancels.length === 1);
  } finally { done(); }
});

test('a remote error after chunks: every chunk that arrived before it is delivered, then the iteration rejects with it', T, async () => {
  const { client, f, done } = fakeServer();
  try {
    f.onCall = () => {
      for (let i = 0; i < 3; i++) f.chunk(i);
      f.answer({ error: { code: -32000, message: 'the handler threw' } });
    };
    const s = client.stream('count', {}, { highWaterMark: 8 });
    assert.deepEqual(await settled(s.result), { code: -32000 });
    const got = [];
    await assert.rejects((async () => { for await (const c of s) got.push(c); })(),
      (e) => e.code === -32000 && e.message === 'the handler threw');
    assert.deepEqual(got, [0, 1, 2]);
  } finally { done(); }
});

// -- binary and sizes over webSocketTransport ---------------------------------------
let wss, url;
before(async () => {
  await ready;
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  url = `ws://127.0.0.1:${wss.address().port}`;
  wss.on('connection', (ws) => {
    const server = new JSONRPCServer(webSocketTransport(ws), { onDiagnostic: () => {} });
    // Writes each value of `which` as a chunk; answers what each write did.
    server.method('write', async ({ which }, ctx) => {
      const out = [];
      for (const v of VALUES[which]()) out.push(await ctx.sink.write(v).then(() => 'ok', (e) => e.code ?? e.name));
      return out;
    });
    ws.on('close', () => server.destroy());
  });
});
after(() => new Promise((r) => wss.close(r)));

const big = () => 'y'.repeat(400_000);
const VALUES = {
  binary: () => [new Uint8Array([1, 2, 3]).buffer, new Uint8Array(new Uint8Array([9, 1, 2, 3, 9]).buffer, 1, 3),
    new DataView(new Uint8Array([1, 2, 3]).buffer), new Uint16Array([0x0201]), Buffer.from([1, 2, 3]), { nested: [new Uint8Array([4])] }],
  notJSON: () => [new Map([[1, 2]]), new Set([1]), new Blob(['abc'])],
  large: () => [new Uint8Array(200_000).fill(7)],
  shared: () => { const s = [big()]; return [[s, s, s], [s, s]]; },
};

async function overWebSocket(which) {
  const peer = new Peer(webSocketTransport(new WebSocket(url)), { onDiagnostic: () => {} });
  try {
    const s = peer.stream('write', { which });
    const got = [];
    let error = null;
    try { for await (const c of s) got.push(c); } catch (e) { error = { code: e.code, message: e.message }; }
    return { got, error, result: await settled(s.result) };
  } finally { peer.destroy(); }
}

test('webSocketTransport writes an ArrayBuffer, a typed array, a DataView or a Buffer as the JSON codec\'s binary form, {"bytes":[…],"subtype":null}', T, async () => {
  const { got, error, result } = await overWebSocket('binary');
  const form = (...bytes) => ({ bytes, subtype: null });
  assert.equal(error, null);
  assert.deepEqual(got, [form(1, 2, 3), form(1, 2, 3), form(1, 2, 3), form(1, 2), form(1, 2, 3), { nested: [form(4)] }]);
  assert.deepEqual(result, { value: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok'] });
});

test('webSocketTransport refuses with a TypeError what JSON would write as {} (a Map, a Set, a Blob): the stream fails -32603, not a chunk short', T, async () => {
  const { got, error } = await overWebSocket('notJSON');
  assert.deepEqual(got, []);
  assert.equal(error.code, ErrorCode.InternalError);
  assert.match(error.message, /^Internal error: a stream chunk could not be sent: a Map is not JSON$/);
  const ws = { readyState: 1, send() {}, addEventListener() {}, removeEventListener() {}, close() {} };
  const t = webSocketTransport(ws);
  for (const [v, name] of [[new Set(), 'Set'], [new Blob([]), 'Blob'], [new Error('x'), 'Error'], [/x/, 'RegExp']])
    assert.throws(() => t.send({ jsonrpc: '2.0', method: 'm', params: [v] }), (e) => e instanceof TypeError && e.message === `a ${name} is not JSON`);
  t.send({ jsonrpc: '2.0', method: 'm', params: [Object.create(null), new Date(0), Object(1), Object('s')] });  // plain, toJSON, boxed: as JSON writes them
});

test('a 200,000-byte Uint8Array chunk over webSocketTransport is within max_stream_chunk on both ends', T, async () => {
  const { got, error, result } = await overWebSocket('large');
  assert.equal(error, null);
  assert.equal(got[0].bytes.length, 200_000);
  assert.deepEqual(result, { value: ['ok'] });
});

test('a value reached twice counts twice, as JSON sends it: the sender refuses (-32600, nothing sent) what the receiver would', T, async () => {
  const { got, error, result } = await overWebSocket('shared');
  assert.equal(error, null);
  assert.deepEqual(got.map((c) => c.length), [2]);
  assert.deepEqual(result, { value: [ErrorCode.InvalidRequest, 'ok'] });
});
