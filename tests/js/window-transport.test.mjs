// windowTransport (js/transports/window.js) and the pack announcement
// (js/pack.js) on windows shared by several endpoints, with fake windows that
// deliver as browsers do: a post reaches the target only when its
// targetOrigin is the target's current document's origin, and reading
// another window's `origin` throws unless it is same-origin.
//   - one endpoint heeds only the announcement of an endpoint it can be
//     talking to (a server ignores a server's, a client a client's);
//   - with a list of allowed origins, calls keep working after the target
//     navigates to another allowed origin, and nothing is posted to an
//     origin not in the list;
//   - the default origin is the window's real origin (self.origin), so an
//     opaque-origin window must pass one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONRPCClient, JSONRPCServer, ready, windowTransport } from '../../js/index.js';
import { createPacker } from '../../js/pack.js';
import { until } from '../support/until.mjs';
import { isTuple } from '../support/wire.mjs';

const T = { timeout: 15000 };
const KEY = 'weft/pack';

/**
 * A window showing a document of origin `doc`. `sender` is the window whose
 * posts it receives (the other one of a pair); `readableBy` the origin of the
 * window allowed to read its `origin` (same-origin access), if any.
 */
class FakeWindow extends EventTarget {
  constructor(doc) {
    super();
    this.doc = doc;
    this.location = { origin: doc };
    this.posted = [];
    this.sender = null;
    this.readable = false;
  }
  get origin() {
    if (!this.readable) throw Object.assign(new Error('Blocked a frame from accessing a cross-origin frame.'), { name: 'SecurityError' });
    return this.doc;
  }
  navigate(doc) { this.doc = doc; this.location = { origin: doc }; }
  postMessage(data, targetOrigin) {
    this.posted.push(targetOrigin);
    if (targetOrigin !== '*' && targetOrigin !== this.doc) return;  // dropped unread, as a browser does
    const from = this.sender;
    const copy = structuredClone(data);
    setTimeout(() => this.dispatchEvent(Object.assign(new Event('message'), { data: copy, source: from, origin: from.doc })), 0);
  }
}
function pair(parentOrigin, frameOrigin) {
  const parent = new FakeWindow(parentOrigin);
  const frame = new FakeWindow(frameOrigin);
  parent.sender = frame;
  frame.sender = parent;
  return { parent, frame };
}

test('announcement: a server ignores a server\'s, so a non-weft client sharing the window still gets plain JSON-RPC', T, async () => {
  await ready;
  const A = 'https://app.example', B = 'https://frame.example';
  const { parent, frame } = pair(A, B);
  // The parent: a weft client (to the frame's weft server) and a weft server
  // (serving the frame's non-weft client), both on the same two windows.
  const client = new JSONRPCClient(windowTransport(frame, parent, B), { timeout: 5000 });
  const server = new JSONRPCServer(windowTransport(frame, parent, B));
  server.method('add', async ([a, b]) => a + b);
  // The frame: a weft server, and a plain JSON-RPC client that reads objects only.
  const frameServer = new JSONRPCServer(windowTransport(parent, frame, A));
  frameServer.method('ping', async () => 'pong');
  // Everything that carries the plain client's ids ("L…"), in whatever form.
  const got = [];
  const mine = (m) => typeof (isTuple(m) ? m[1] : m?.id) === 'string';
  frame.addEventListener('message', (ev) => {
    const d = ev.data;
    if (mine(d) || (d && typeof d === 'object' && Array.isArray(d[KEY]) && d[KEY].some(mine))) got.push(d);
  });
  const legacy = (id, params) => parent.postMessage({ jsonrpc: '2.0', id, method: 'add', params }, A);
  try {
    // Several exchanges: the frame's server announces, then answers in packs.
    assert.deepEqual(await Promise.all([client.request('ping'), client.request('ping'), client.request('ping')]), ['pong', 'pong', 'pong']);
    assert.equal(client.transport.tuples, true, 'the client heeded the frame server\'s announcement');
    assert.equal(server.transport.tuples, false, 'the server did not');
    // Two calls in one turn: their answers leave in the same turn.
    legacy('L1', [2, 3]);
    legacy('L2', [4, 5]);
    await until(() => got.length >= 2);
    assert.deepEqual(got, [{ jsonrpc: '2.0', result: 5, id: 'L1' }, { jsonrpc: '2.0', result: 9, id: 'L2' }]);
  } finally { client.destroy(); server.destroy(); frameServer.destroy(); }
});

test('announcement: the sender\'s role decides who heeds it; one without a role is heeded as before', () => {
  const announce = (role) => ({ jsonrpc: '2.0', method: '$/weft/pack', params: role ? { tuples: 1, role } : { tuples: 1 } });
  const cases = [
    // [this end, sender, heeded]
    ['server', 'server', false], ['server', 'client', true], ['server', 'peer', true],
    ['client', 'client', false], ['client', 'server', true], ['client', 'peer', true],
    ['peer', 'client', true], ['peer', 'server', true], ['peer', 'peer', true],
    ['server', null, true], ['client', null, true], [null, 'server', true], [null, 'client', true],
  ];
  for (const [me, from, heeded] of cases) {
    let tuples = false;
    const p = createPacker(() => {}, 'auto', () => { tuples = true; });
    if (me) p.setRole(me);
    const delivered = [];
    p.unpack(announce(from), (m) => delivered.push(m));
    assert.deepEqual(delivered, [], 'an announcement is never delivered');
    assert.equal(tuples, heeded, `${me} hearing ${from}`);
  }
});

test('announcement: it names the role of the endpoint on the transport', async () => {
  await ready;
  const { parent, frame } = pair('https://a.example', 'https://b.example');
  const seen = [];
  frame.addEventListener('message', (ev) => seen.push(ev.data));
  const c = new JSONRPCClient(windowTransport(frame, parent, 'https://b.example'));
  try {
    c.notify('n');
    await until(() => seen.length === 2);
    assert.deepEqual(seen[0], { jsonrpc: '2.0', method: '$/weft/pack', params: { tuples: 1, role: 'client' } });
  } finally { c.destroy(); }
});

test('announcement: a pack frame switches packing on only for an end that reads what it holds', () => {
  const result = (id) => ({ jsonrpc: '2.0', result: id, id });
  const request = (id) => ({ jsonrpc: '2.0', method: 'm', id });
  const note = (n) => ({ jsonrpc: '2.0', method: 'n', params: [n] });
  const cases = [
    // [this end, frame, packs after]
    ['server', [result(1), result(2)], false], ['server', [[2n, 1, 1], [3n, 2, -1, 'x']], false],
    ['server', [request(1), request(2)], true], ['server', [[0n, 1, 'm'], [1n, 'n']], true], ['server', [[request(1), request(2)]], true],
    ['client', [request(1), request(2)], false], ['client', [note(1), note(2)], false],
    ['client', [result(1), note(2)], true], ['client', [[2n, 1, 1]], true],
    ['peer', [result(1), result(2)], true], [null, [result(1), result(2)], true],
  ];
  for (const [me, frame, packs] of cases) {
    const posted = [];
    const p = createPacker((m) => posted.push(m), 'auto', () => {});
    if (me) p.setRole(me);
    p.unpack({ [KEY]: frame }, () => true);
    posted.length = 0;
    p.send(note(1));
    p.send(note(2));
    p.close();  // flushes what is queued
    assert.equal(posted.some((m) => m && !Array.isArray(m) && KEY in m), packs, `${me} after ${JSON.stringify(frame, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
  }
});

test('origins: with a list, a client keeps working after the target navigates to another allowed origin (the new server never speaks first)', T, async () => {
  await ready;
  const A = 'https://app.example', B = 'https://b.example', C = 'https://c.example';
  const { parent, frame } = pair(A, B);
  const client = new JSONRPCClient(windowTransport(frame, parent, [B, C]), { timeout: 5000 });
  let server = new JSONRPCServer(windowTransport(parent, frame, A));
  server.method('where', () => frame.doc);
  try {
    assert.equal(await client.request('where'), B);
    assert.equal(await client.request('where'), B);
    // The frame navigates to C: a new document, a new server that has said nothing.
    server.destroy();
    frame.navigate(C);
    server = new JSONRPCServer(windowTransport(parent, frame, A));
    server.method('where', () => frame.doc);
    assert.equal(await client.request('where'), C);
    assert.equal(await client.request('where'), C);
    // Never posted to an origin not in the list.
    assert.ok(frame.posted.every((o) => o === B || o === C), JSON.stringify(frame.posted));
  } finally { client.destroy(); server.destroy(); }
});

test('origins: with a list and a target this window can read, each message goes to its current origin only', T, async () => {
  await ready;
  const A = 'https://app.example', C = 'https://c.example';
  const { parent, frame } = pair(A, A);
  frame.readable = true;  // same origin: its origin can be read
  const client = new JSONRPCClient(windowTransport(frame, parent, [A, C]), { timeout: 5000 });
  let server = new JSONRPCServer(windowTransport(parent, frame, A));
  server.method('where', () => frame.doc);
  try {
    assert.equal(await client.request('where'), A);
    assert.ok(frame.posted.length > 0 && frame.posted.every((o) => o === A), JSON.stringify(frame.posted));
    // Navigated cross-origin (to C): no longer readable, so posted to each allowed origin.
    server.destroy();
    frame.navigate(C);
    frame.readable = false;
    server = new JSONRPCServer(windowTransport(parent, frame, A));
    server.method('where', () => frame.doc);
    frame.posted.length = 0;
    assert.equal(await client.request('where'), C);
    assert.deepEqual([...new Set(frame.posted)].sort(), [A, C]);
  } finally { client.destroy(); server.destroy(); }
});

test('origins: a list never posts to a readable target whose origin is not in it', () => {
  const { parent, frame } = pair('https://app.example', 'https://evil.example');
  frame.readable = true;
  const t = windowTransport(frame, parent, ['https://b.example', 'https://c.example'], { pack: false });
  try {
    t.send({ jsonrpc: '2.0', method: 'n' });
    assert.deepEqual(frame.posted, ['https://b.example', 'https://c.example']);
  } finally { t.destroy(); }
});

test('origins: the default origin is the window\'s own (self.origin): an opaque-origin window must pass one', async () => {
  await ready;
  // A sandboxed frame: its URL's origin is a real one, its document's is "null".
  const sandboxed = new FakeWindow('https://app.example');
  Object.defineProperty(sandboxed, 'origin', { value: 'null' });
  const parent = new FakeWindow('https://app.example');
  assert.throws(() => windowTransport(parent, sandboxed), (e) => e instanceof TypeError && /no usable origin/.test(e.message));
  // A window with a real origin: that one is allowed.
  const plainFrame = new FakeWindow('https://app.example');
  Object.defineProperty(plainFrame, 'origin', { value: 'https://app.example' });
  parent.sender = plainFrame;
  const t = windowTransport(parent, plainFrame, undefined, { pack: false });
  try {
    t.send({ jsonrpc: '2.0', method: 'n' });
    assert.deepEqual(parent.posted, ['https://app.example']);
  } finally { t.destroy(); }
});

test('ids: two clients on one window never take each other\'s answers (each numbers its calls from a random id)', T, async () => {
  await ready;
  const A = 'https://app.example', B = 'https://frame.example';
  const { parent, frame } = pair(A, B);
  const c1 = new JSONRPCClient(windowTransport(frame, parent, B), { timeout: 5000 });
  const c2 = new JSONRPCClient(windowTransport(frame, parent, B), { timeout: 5000 });
  const server = new JSONRPCServer(windowTransport(parent, frame, A));
  server.method('who', async ([name, ms]) => {
    await new Promise((r) => setTimeout(r, ms));
    return `answer for ${name}`;
  });
  try {
    // c1's call is slower: with both numbering from 1, c1 took c2's answer.
    const [a, b] = await Promise.all([c1.request('who', ['c1', 30]), c2.request('who', ['c2', 0])]);
    assert.equal(a, 'answer for c1');
    assert.equal(b, 'answer for c2');
  } finally {
    c1.destroy();
    c2.destroy();
    server.destroy();
  }
});
