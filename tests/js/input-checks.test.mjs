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
test('webSocketTransport: a binary frame holding a JSON answer is dropped with a console warning, whatever its type (Buffer, Uint8Array, ArrayBuffer); the text frame is read', T, async (t) => {
  await ready;
  const warnings = [];
  t.mock.method(console, 'warn', (m) => warnings.push(m));
  const listeners = {};
  const sent = [];
  const ws = {
    readyState: 1,
    send(s) { sent.push(JSON.parse(s)); },
    addEventListener(k, f) { listeners[k] = f; },
    removeEventListener() {},
    close() {},
  };
  const peer = new Peer(webSocketTransport(ws), { timeout: 10000 });
  try {
    const call = peer.request('echo', ['x']);
    const { id } = sent.find((m) => m.method === 'echo');
    const bytes = Buffer.from(JSON.stringify({ jsonrpc: '2.0', result: 'from a binary frame', id }));
    for (const data of [bytes, new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)])
      listeners.message({ data });
    assert.deepEqual(warnings, Array(3).fill('webSocketTransport: dropped a frame that is not JSON text'));
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
