// What a caller or the other side hands an endpoint that it cannot use is
// refused saying so, not read as something else: a timeout that is not a
// number of milliseconds >= 0 (it read as "none"), a signal that is not an
// AbortSignal (it threw from addEventListener after the call was sent), a
// binary WebSocket frame (weft.json is text frames only, docs/transports.md),
// and a BigInt id, which JSON-RPC 2.0 §4 does not allow (it was answered as
// the number it converts to).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Peer, JSONRPCClient, JSONRPCServer, ErrorCode, portTransport, webSocketTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };
const timeoutError = (type, got) => (e) => e instanceof type &&
  e.message === `timeout must be a number of milliseconds >= 0 (0 or Infinity: none), got ${got}`;
const signalError = (e) => e instanceof TypeError && e.message === 'signal must be an AbortSignal';

// A Peer on one port of a MessageChannel; a Peer serving `echo` on the other,
// which keeps the params of every request it ran.
function pair() {
  const { port1, port2 } = new MessageChannel();
  const ran = [];
  const server = new Peer(portTransport(port2)).method('echo', (p) => { ran.push(p); return p; });
  const peer = new Peer(portTransport(port1), { timeout: 10000 });
  return { peer, ran, close() { try { peer.destroy(); } finally { server.destroy(); } } };
}

// The messages arriving on `port` (the other end's transport), and a wait for
// the first of them that `pick` accepts.
function inbox(port) {
  const got = [];
  const waiters = [];
  port.onmessage = ({ data }) => {
    got.push(data);
    for (const w of waiters.slice()) w();
  };
  const next = (pick) => new Promise((resolve) => {
    const look = () => {
      const i = got.findIndex(pick);
      if (i < 0) return;
      waiters.splice(waiters.indexOf(look), 1);
      resolve(got.splice(i, 1)[0]);
    };
    waiters.push(look);
    look();
  });
  return { got, next };
}

// -- timeout ----------------------------------------------------------------------
test('an endpoint timeout that is negative or NaN is a RangeError, one that is not a number a TypeError, thrown by the constructor; undefined, 0 and Infinity are taken', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  try {
    for (const Endpoint of [Peer, JSONRPCClient, JSONRPCServer]) {
      const make = (timeout) => () => new Endpoint(portTransport(port1), { timeout }).destroy();
      assert.throws(make(-5), timeoutError(RangeError, -5));
      assert.throws(make(NaN), timeoutError(RangeError, NaN));
      assert.throws(make(-Infinity), timeoutError(RangeError, -Infinity));
      assert.throws(make('100'), timeoutError(TypeError, 'string'));
      assert.throws(make(null), timeoutError(TypeError, 'object'));
    }
    for (const timeout of [undefined, 0, Infinity, 1, 2.5]) new Peer(portTransport(port1), { timeout }).destroy();
  } finally { port1.close(); port2.close(); }
});

test('a per-call timeout that is negative, NaN or not a number: request(), call(), stream() and handshake() reject, batch() throws, nothing is sent; 0 and Infinity mean none', T, async () => {
  await ready;
  const { peer, ran, close } = pair();
  try {
    for (const [timeout, type, got] of [[-5, RangeError, -5], [NaN, RangeError, NaN], ['100', TypeError, 'string']]) {
      await assert.rejects(peer.request('echo', ['bad'], { timeout }), timeoutError(type, got));
      await assert.rejects(peer.call('echo', ['bad'], { timeout, retry: true }), timeoutError(type, got));
      const s = peer.stream('echo', ['bad'], { timeout });
      await assert.rejects(s.result, timeoutError(type, got));
      await assert.rejects(s.next(), timeoutError(type, got));
      await assert.rejects(peer.handshake(undefined, { timeout }), timeoutError(type, got));
      assert.throws(() => peer.batch([{ method: 'echo', params: ['bad'] }], { timeout }), timeoutError(type, got));
    }
    assert.equal(peer.stats().calls, 0);
    // Answered in order on one channel: a bad call sent before it would have run first.
    assert.deepEqual(await peer.request('echo', ['good'], { timeout: 0 }), ['good']);
    assert.deepEqual(await peer.request('echo', ['good'], { timeout: Infinity }), ['good']);
    assert.deepEqual(await Promise.all(peer.batch([{ method: 'echo', params: ['good'] }], { timeout: 0 })), [['good']]);
    assert.deepEqual(ran, [['good'], ['good'], ['good']]);
  } finally { close(); }
});

// -- limits -----------------------------------------------------------------------
const LIMITS = ['maxInFlight', 'maxPending', 'maxBatch', 'rateLimit', 'rateWindow', 'maxStreamChunk'];
const limitError = (name, got) => (e) => e instanceof RangeError &&
  e.message === `limits.${name} must be an integer >= 0 or Infinity, got ${got}`;

// A transport that records whether an endpoint attached to it.
function watchedTransport() {
  const t = { attached: 0, send() {}, onMessage() { t.attached++; } };
  return t;
}

test('limits: a limit that is negative, NaN, a fraction or not a number is a RangeError naming it and its range, thrown by the constructor before it attaches to the transport', T, async () => {
  await ready;
  for (const Endpoint of [Peer, JSONRPCClient, JSONRPCServer]) {
    for (const name of LIMITS) {
      for (const [v, got] of [[-1, '-1'], [-Infinity, '-Infinity'], [NaN, 'NaN'], [1.5, '1.5'], ['abc', 'abc'], ['5', '5'], [5n, '5'], [true, 'true'], [{}, '[object Object]']]) {
        const t = watchedTransport();
        assert.throws(() => new Endpoint(t, { limits: { [name]: v } }), limitError(name, got), `${name}: ${got}`);
        assert.equal(t.attached, 0, `${name}: ${got} attached nothing`);
      }
    }
  }
});

test('limits: 0, null and omitted keep each default (rateLimit\'s: none), Infinity and 2^32 and up are no limit; the endpoint works with each', T, async () => {
  await ready;
  for (const v of [undefined, null, 0, 1000, 2 ** 32, 2 ** 40 + 0.5, Infinity]) {
    const limits = Object.fromEntries(LIMITS.map((k) => [k, v]));
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2), { limits }).method('echo', (p) => p);
    const client = new Peer(portTransport(port1), { limits, timeout: 10000 });
    try {
      assert.deepEqual(await client.request('echo', ['x'.repeat(2000)]), ['x'.repeat(2000)], String(v));
      assert.deepEqual(await Promise.all(client.batch([{ method: 'echo', params: [1] }, { method: 'echo', params: [2] }])), [[1], [2]]);
    } finally { client.destroy(); server.destroy(); }
  }
  // maxStreamChunk's 0 is its default (1,000,000 bytes), not "none" and not a limit of 0.
  const { port1, port2 } = new MessageChannel();
  const server = new Peer(portTransport(port2), { limits: { maxStreamChunk: 0 } });
  server.method('write', async (n, { sink }) => { try { await sink.write('x'.repeat(n[0])); return 'wrote'; } catch (e) { return e.code; } });
  const client = new Peer(portTransport(port1), { limits: { maxStreamChunk: 0 } });
  try {
    const drain = async (s) => { for await (const c of s) void c; return s.result; };
    assert.equal(await drain(client.stream('write', [10])), 'wrote');
    assert.equal(await drain(client.stream('write', [1000001])), ErrorCode.InvalidRequest);
  } finally { client.destroy(); server.destroy(); }
});

test('limits: a rateWindow of Infinity never refills, so it is no rate limit, as Infinity is for every limit', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new Peer(portTransport(port2), { limits: { rateLimit: 2, rateWindow: Infinity } }).method('echo', (p) => p);
  const client = new Peer(portTransport(port1), { timeout: 10000 });
  try {
    for (let i = 0; i < 5; i++) assert.deepEqual(await client.request('echo', [i]), [i]);
  } finally { client.destroy(); server.destroy(); }
});

test('limits that are not an object are a TypeError, before the transport is attached', T, async () => {
  await ready;
  const t = watchedTransport();
  assert.throws(() => new Peer(t, { limits: 5 }), (e) => e instanceof TypeError && /limits must be an object/.test(e.message));
  assert.equal(t.attached, 0);
});

// -- options: null ------------------------------------------------------------------
test('options null is options omitted: the endpoint takes every default', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2), null).method('echo', (p) => p);
  const client = new JSONRPCClient(portTransport(port1), null);
  const peer = new Peer(portTransport(new MessageChannel().port1), null);
  try {
    assert.equal(client.timeout, 10000);
    assert.deepEqual(await client.request('echo', [1]), [1]);
  } finally { client.destroy(); server.destroy(); peer.destroy(); }
});

// -- method names and batch entries ---------------------------------------------------
test('a method name that is undefined or null: request() rejects, notify() and batch() throw a TypeError, nothing is sent; other values are still converted with String()', T, async () => {
  await ready;
  const { peer, ran, close } = pair();
  try {
    for (const m of [undefined, null]) {
      const nameError = (e) => e instanceof TypeError && e.message === `method name: expected a string, got ${m}`;
      await assert.rejects(peer.request(m, ['bad']), nameError);
      await assert.rejects(peer.call(m, ['bad'], { retry: true }), nameError);
      await assert.rejects(peer.stream(m, ['bad']).result, nameError);
      assert.throws(() => peer.notify(m, ['bad']), nameError);
      assert.throws(() => peer.batch([{ method: 'echo', params: ['bad'] }, { method: m, params: ['bad'] }]), nameError);
    }
    assert.throws(() => peer.batch([{ method: 'echo', params: ['bad'] }, { params: ['bad'] }]),
      (e) => e instanceof TypeError && e.message === 'method name: expected a string, got undefined');
    assert.equal(peer.stats().calls, 0);
    // Answered in order on one channel: a bad call sent before it would have run first.
    assert.deepEqual(await peer.request('echo', ['good']), ['good']);
    assert.deepEqual(ran, [['good']]);
    // Any other value is a name through String() (index.d.ts): 123 is "123".
    await assert.rejects(peer.request(123), (e) => e.code === ErrorCode.MethodNotFound && e.message === 'Method not found: 123');
  } finally { close(); }
});

test('batch(): an entry that is not an object is a TypeError naming its index; nothing of the batch is sent', T, async () => {
  await ready;
  const { peer, ran, close } = pair();
  try {
    for (const bad of [null, undefined, 5, 'echo', true]) {
      assert.throws(() => peer.batch([{ method: 'echo', params: ['bad'] }, bad]),
        (e) => e instanceof TypeError && e.message === 'batch(): entry 1 is not an object');
    }
    assert.throws(() => peer.batch([null]), (e) => e instanceof TypeError && e.message === 'batch(): entry 0 is not an object');
    assert.equal(peer.stats().calls, 0);
    assert.deepEqual(await Promise.all(peer.batch([{ method: 'echo', params: ['good'] }])), [['good']]);
    assert.deepEqual(ran, [['good']]);
  } finally { close(); }
});

// -- signal -----------------------------------------------------------------------
test('a signal that is not an AbortSignal: request(), call() and stream() reject with a TypeError saying so, batch() throws it, nothing is sent; null and undefined are no signal', T, async () => {
  await ready;
  const { peer, ran, close } = pair();
  try {
    for (const signal of [{}, { aborted: false }, { addEventListener() {} }, 'abort', 1]) {
      await assert.rejects(peer.request('echo', ['bad'], { signal }), signalError);
      await assert.rejects(peer.call('echo', ['bad'], { signal, retry: true }), signalError);
      await assert.rejects(peer.stream('echo', ['bad'], { signal }).result, signalError);
      assert.throws(() => peer.batch([{ method: 'echo', params: ['bad'] }], { signal }), signalError);
    }
    assert.equal(peer.stats().calls, 0);
    for (const signal of [null, undefined]) {
      assert.deepEqual(await peer.request('echo', ['good'], { signal }), ['good']);
      assert.deepEqual(await Promise.all(peer.batch([{ method: 'echo', params: ['good'] }], { signal })), [['good']]);
    }
    assert.deepEqual(ran, [['good'], ['good'], ['good'], ['good']]);
  } finally { close(); }
});

// -- WebSocket frames ---------------------------------------------------------------
test('webSocketTransport: a binary frame holding a JSON answer is not read, whatever its type (Buffer, Uint8Array, ArrayBuffer): answered -32700 and reported; the text frame is read', T, async () => {
  await ready;
  const diags = [];
  const listeners = {};
  const sent = [];
  const ws = {
    readyState: 1,
    send(s) { sent.push(JSON.parse(s)); },
    addEventListener(k, f) { listeners[k] = f; },
    removeEventListener() {},
    close() {},
  };
  const peer = new Peer(webSocketTransport(ws), { timeout: 10000, onDiagnostic: (kind, m) => diags.push(kind) });
  try {
    const call = peer.request('echo', ['x']);
    const { id } = sent.find((m) => m.method === 'echo');
    const bytes = Buffer.from(JSON.stringify({ jsonrpc: '2.0', result: 'from a binary frame', id }));
    for (const data of [bytes, new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)])
      listeners.message({ data });
    assert.deepEqual(diags, Array(3).fill('BadFrame'));
    const refused = sent.filter((m) => m.error);
    assert.equal(refused.length, 3);
    for (const m of refused) {
      assert.equal(m.id, null);
      assert.equal(m.error.code, ErrorCode.ParseError);
      assert.match(m.error.message, /^Parse error: a binary frame/);
    }
    listeners.message({ data: JSON.stringify({ jsonrpc: '2.0', result: 'from a text frame', id }) });
    assert.equal(await call, 'from a text frame');
  } finally { peer.destroy(); }
});

// -- BigInt ids ---------------------------------------------------------------------
test('a request whose id is a BigInt (object or tuple) is answered -32600 with id null, as an object or boolean id is; the handler does not run', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  let ran = 0;
  const server = new JSONRPCServer(portTransport(port1)).method('echo', (p) => { ran++; return p; });
  const { next } = inbox(port2);
  try {
    const answer = async (m) => {
      port2.postMessage(m);
      return next((a) => a.method === undefined);
    };
    const req = (id) => ({ jsonrpc: '2.0', method: 'echo', params: [1], id });
    const object = await answer(req({}));
    assert.deepEqual(object, { jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest,
      message: 'Invalid Request: "id" must be a string, number or null, got an object' }, id: null });
    assert.equal((await answer(req(true))).error.code, ErrorCode.InvalidRequest);
    for (const m of [req(5n), req(2n ** 70n), [0n, 7n, 'echo', [1]]]) {
      const a = await answer(m);
      assert.equal(a.id, null);
      assert.equal(a.error.code, ErrorCode.InvalidRequest);
      assert.equal(a.error.message, 'Invalid Request: "id" must be a string, number or null, got a number JSON cannot hold');
    }
    // The same channel still serves a valid request, and nothing else ran.
    assert.deepEqual(await answer(req(5)), { jsonrpc: '2.0', result: [1], id: 5 });
    assert.equal(ran, 1);
  } finally { server.destroy(); port2.close(); }
});

test('a response whose id is a BigInt (object or tuple) settles no call: it is reported InvalidResponse, and the call takes the answer with its own id', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const diagnostics = [];
  let reported = null;
  const client = new JSONRPCClient(portTransport(port1), { timeout: 10000, onDiagnostic: (kind, message) => {
    diagnostics.push([kind, message]);
    if (kind === 'InvalidResponse' && diagnostics.filter(([k]) => k === kind).length === 2) reported();
  } });
  const { next } = inbox(port2);
  try {
    const call = client.request('x');
    const { id } = await next((m) => m.method === 'x');
    const both = new Promise((r) => { reported = r; });
    call.then(reported, reported);  // settled by a BigInt-id answer: stop waiting, and fail below
    port2.postMessage({ jsonrpc: '2.0', result: 'bigint', id: BigInt(id) });
    port2.postMessage([2n, BigInt(id), 'bigint']);
    await both;
    assert.deepEqual(diagnostics.filter(([k]) => k === 'InvalidResponse').map(([, m]) => m),
      Array(2).fill('Invalid Request: response has no usable "id"'));
    assert.equal(client.stats().calls, 1);
    port2.postMessage({ jsonrpc: '2.0', result: 'number', id });
    assert.equal(await call, 'number');
  } finally { client.destroy(); port2.close(); }
});
