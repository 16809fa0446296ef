// weft against independent peers and contexts: the npm package json-rpc-2.0
// in both directions, worker_threads (selfTransport/workerTransport, terminate),
// windowTransport's origin rules, and hostile messages.
import { test } from 'node:test';
import { plain } from '../support/wire.mjs';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import * as JR from 'json-rpc-2.0';
import {
  Peer, JSONRPCClient, JSONRPCServer, RPCError, ErrorCode, portTransport, workerTransport, windowTransport,
} from '../../js/index.js';

const T = { timeout: 15000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const indexURL = new URL('../../js/index.js', import.meta.url).href;

function jsonRpc2(port) {
  const sc = new JR.JSONRPCServerAndClient(
    new JR.JSONRPCServer(),
    new JR.JSONRPCClient((req) => { port.postMessage(req); }),
  );
  port.addEventListener('message', (ev) => { sc.receiveAndSend(ev.data); });
  port.start();
  return sc;
}

test('interop: weft client → json-rpc-2.0 server', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const other = jsonRpc2(port2);
  other.addMethod('add', ([a, b]) => a + b);
  other.addMethod('boom', () => { throw new JR.JSONRPCErrorException('custom', -32011, { why: 1 }); });
  const client = new JSONRPCClient(portTransport(port1));
  try {
    assert.equal(await client.request('add', [20, 22]), 42);
    await assert.rejects(client.request('boom', {}), (e) => e.code === -32011 && e.message === 'custom' && e.data.why === 1);
    await assert.rejects(client.request('nope', {}), (e) => e.code === ErrorCode.MethodNotFound);
    const [a, b] = client.batch([{ method: 'add', params: [1, 1] }, { method: 'add', params: [2, 2] }]);
    assert.deepEqual([await a, await b], [2, 4]);
  } finally { client.destroy(); port2.close(); }
});

test('interop: json-rpc-2.0 client → weft server', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const other = jsonRpc2(port1);
  const server = new JSONRPCServer(portTransport(port2));
  server.method('mul', ({ a, b }) => a * b);
  server.method('typed', () => { throw new RPCError(-32020, 'typed', [1]); });
  const seen = [];
  server.onNotify('note', (p) => seen.push(p));
  try {
    assert.equal(await other.request('mul', { a: 6, b: 7 }), 42);
    await assert.rejects(other.request('typed', {}), (e) => e.code === -32020 && e.message === 'typed');
    await assert.rejects(other.request('missing', {}), (e) => e.code === -32601);
    other.notify('note', { n: 1 });
    await sleep(20);
    assert.deepEqual(seen, [{ n: 1 }]);
  } finally { server.destroy(); port1.close(); }
});

function spawn(body) {
  return new Worker(`
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(indexURL)}).then((m) => { ${body} });
  `, { eval: true });
}

test('worker_threads: workerTransport ↔ selfTransport, both directions; terminate rejects at once', T, async () => {
  const w = spawn(`
    const peer = new m.Peer(m.selfTransport());
    peer.method('square', ([x]) => x * x);
    peer.method('callBack', async () => 'main says ' + await peer.request('hello', ['worker']));
    peer.method('hang', () => new Promise(() => {}));
  `);
  const peer = new Peer(workerTransport(w));
  peer.method('hello', ([who]) => `hello ${who}`);
  try {
    assert.equal(await peer.request('square', [9]), 81);
    assert.equal(await peer.request('callBack'), 'main says hello worker');
    const hanging = peer.request('hang', {}, { timeout: 10000 });
    await sleep(10);
    const t0 = Date.now();
    w.terminate();
    await assert.rejects(hanging, (e) => e.code === ErrorCode.Closed);
    assert.ok(Date.now() - t0 < 1000);
  } finally { peer.destroy(); await w.terminate(); }
});

// Minimal window pair: postMessage(data, targetOrigin) delivers a MessageEvent
// with source/origin the way browsers do (and drops on origin mismatch).
function fakeWindow(origin) {
  const w = new EventTarget();
  w.location = { origin };
  w.posted = [];
  w.postMessage = (data, targetOrigin) => {
    w.posted.push(targetOrigin);
    if (targetOrigin !== '*' && targetOrigin !== w.location.origin) return;
    const from = w.sender ?? fakeWindow.current;  // who posts to w (packed posts come from a microtask)
    setTimeout(() => w.dispatchEvent(Object.assign(new Event('message'), { data: structuredClone(data), source: from, origin: from.location.origin })), 0);
  };
  return w;
}
function bind(win, fn) {  // run fn with `win` as the posting window
  return (...a) => { const prev = fakeWindow.current; fakeWindow.current = win; try { return fn(...a); } finally { fakeWindow.current = prev; } };
}

test('windowTransport: explicit targetOrigin, source and origin checks', T, async () => {
  const parent = fakeWindow('https://app.example');
  const frame = fakeWindow('https://app.example');
  const evil = fakeWindow('https://evil.example');
  frame.sender = parent;
  parent.sender = frame;
  const pt = windowTransport(frame, parent, 'https://app.example');
  const ft = windowTransport(parent, frame, 'https://app.example');
  const sendP = pt.send, sendF = ft.send;
  pt.send = bind(parent, sendP);
  ft.send = bind(frame, sendF);
  const client = new JSONRPCClient(pt);
  const server = new JSONRPCServer(ft);
  let calls = 0;
  server.method('ping', () => { calls++; return 'pong'; });
  try {
    assert.equal(await client.request('ping'), 'pong');
    assert.ok(frame.posted.every((o) => o === 'https://app.example'));
    assert.ok(parent.posted.every((o) => o === 'https://app.example'));
    // Right window, wrong origin; right origin, wrong window: both ignored.
    bind(evil, () => frame.dispatchEvent(Object.assign(new Event('message'), { data: { jsonrpc: '2.0', method: 'ping', id: 9 }, source: parent, origin: 'https://evil.example' })))();
    bind(evil, () => frame.dispatchEvent(Object.assign(new Event('message'), { data: { jsonrpc: '2.0', method: 'ping', id: 9 }, source: evil, origin: 'https://app.example' })))();
    await sleep(20);
    assert.equal(calls, 1);
    const warned = [];
    const warn = console.warn;
    console.warn = (...a) => warned.push(a.join(' '));
    try { windowTransport(frame, parent, '*').destroy(); } finally { console.warn = warn; }
    assert.equal(warned.length, 1);
  } finally { client.destroy(); server.destroy(); }
});

test('windowTransport with a list of origins reaches a frame on any of them, before it has spoken', T, async () => {
  const parent = fakeWindow('https://app.example');
  const frame = fakeWindow('https://b.example');
  frame.sender = parent;
  parent.sender = frame;
  const pt = windowTransport(frame, parent, ['https://a.example', 'https://b.example']);
  const ft = windowTransport(parent, frame, 'https://app.example');
  const client = new JSONRPCClient(pt);
  const server = new JSONRPCServer(ft);
  server.method('hi', () => 'hello');
  try {
    assert.equal(await client.request('hi'), 'hello');
    assert.equal(await client.request('hi'), 'hello');
    // Each allowed origin in turn, every message: the frame's origin cannot be
    // read from here, and it may navigate to the other one at any time
    // (tests/js/window-transport.test.mjs).
    assert.deepEqual(frame.posted.slice(0, 2), ['https://a.example', 'https://b.example']);
    assert.equal(frame.posted.length % 2, 0);
    assert.ok(frame.posted.every((o, i) => o === (i % 2 ? 'https://b.example' : 'https://a.example')));
  } finally { client.destroy(); server.destroy(); }
});

test('windowTransport origins are read as origins: one spelling each, and what is not one is refused', () => {
  const frame = fakeWindow('https://b.example');
  const parent = fakeWindow('https://app.example');
  frame.sender = parent;
  const t = windowTransport(frame, parent, ['https://b.example/', 'https://b.example', 'https://c.example:443'], { pack: false });
  try {
    t.send({ jsonrpc: '2.0', method: 'n' });
    assert.deepEqual(frame.posted, ['https://b.example', 'https://c.example']);
  } finally { t.destroy(); }
  for (const bad of ['b.example', 'null', 'file:///x'])
    assert.throws(() => windowTransport(frame, frame, bad), (e) => e instanceof TypeError && /is not an origin/.test(e.message));
});

test('hostile messages: answered with the right error or dropped; never thrown, state intact', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const diags = [];
  const server = new Peer(portTransport(port2), { onDiagnostic: (k, m) => diags.push(k) });
  server.method('echo', (p) => p);
  const got = [];
  port1.addEventListener('message', plain((d) => got.push(d)));
  port1.start();
  const cyclic = {}; cyclic.self = cyclic;
  let deep = []; for (let i = 0; i < 2000; i++) deep = [deep];
  const send = (m) => port1.postMessage(m);
  send({ jsonrpc: '1.0', method: 'echo', id: 1 });                      // not 2.0: ignored
  send('hello'); send(42); send(null);                                  // not JSON-RPC: ignored
  send({ jsonrpc: '2.0', method: 'echo', id: { a: 1 } });               // bad id type → id null
  send({ jsonrpc: '2.0', method: 7, id: 2 });                           // bad method type
  send({ jsonrpc: '2.0', method: 'echo', params: 'str', id: 3 });       // bad params type
  send({ jsonrpc: '2.0', method: 'echo', params: [deep], id: 4 });      // deep nesting: payload untouched
  send({ jsonrpc: '2.0', method: 'echo', params: ['x'.repeat(5e6)], id: 5 }); // giant string
  send({ jsonrpc: '2.0', method: 'echo', params: [1], id: 'i'.repeat(100000) }); // huge id
  send({ jsonrpc: '2.0', method: 'echo', params: cyclic, id: 6 });      // cyclic params
  send({ jsonrpc: '2.0', method: 'echo', id: NaN });                    // NaN id: not JSON
  send({ jsonrpc: '2.0', method: 'echo', id: 2 ** 80 });                // big number id echoed
  send([{ jsonrpc: '2.0', method: 'echo', params: [1], id: 7 }, 1, 'x', null]); // batch with junk
  send({ jsonrpc: '2.0', result: 1, id: 99999 });                       // unknown response
  send({ jsonrpc: '2.0', error: 'nope', id: 3 });                       // invalid response
  await sleep(300);
  const byId = (id) => got.find((m) => !Array.isArray(m) && m.id === id);
  assert.equal(got.filter((m) => m.id === 1).length, 0);
  const nullIds = got.filter((m) => !Array.isArray(m) && m.id === null);
  assert.ok(nullIds.some((m) => m.error.code === ErrorCode.InvalidRequest && /"id"/.test(m.error.message)));
  assert.ok(nullIds.some((m) => m.error.code === ErrorCode.InvalidRequest));  // NaN id
  assert.equal(byId(2).error.code, ErrorCode.InvalidRequest);
  assert.equal(byId(3).error.code, ErrorCode.InvalidRequest);
  // Deep payloads pass through untouched; one too deep to post back is answered -32603.
  assert.ok(byId(4).result?.length === 1 || byId(4).error.code === ErrorCode.InternalError);
  assert.equal(byId(5).result[0].length, 5e6);
  assert.equal(byId('i'.repeat(100000)).result[0], 1);
  assert.equal(byId(6).result, byId(6).result.self);
  assert.deepEqual(byId(2 ** 80).result, null);
  const batch = got.find(Array.isArray);
  assert.equal(batch.length, 4);
  assert.deepEqual(batch[0], { jsonrpc: '2.0', result: [1], id: 7 });
  assert.ok(batch.slice(1).every((m) => m.error.code === ErrorCode.InvalidRequest && m.id === null));
  assert.ok(diags.includes('UnknownResponse'));
  // Still healthy.
  const client = new JSONRPCClient(portTransport(port1));
  try {
    assert.deepEqual(await client.request('echo', { ok: true }), { ok: true });
  } finally { client.destroy(); server.destroy(); }
});
