// Handlers off the module's stack (wasm/queued.cpp): the handler of a
// message runs once the module's export has returned, so nothing of the
// module is under it; a batch's one member at a time, the core pausing its
// reading after each (Peer::pause), so they run in the batch's order and
// each before the next member is read (§6). Every answer is the one the
// native core gives (tests/js/differential.test.mjs); these cases pin what
// the queue itself must keep: the stack, re-entry, cancellation, params
// the core rebuilt, and an endpoint gone while its handler runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { JSONRPCServer, Peer, RPCError, heapUsed, portTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };
const MODULE_FRAME = /wasm-function|wasm:\/\//;

// A server on port1 (handlers from `setup`); `send` posts to it from port2,
// `next()` resolves with what it posts back next.
function served(setup, options = {}) {
  const { port1, port2 } = new MessageChannel();
  const diags = [];
  const server = new JSONRPCServer(portTransport(port1, { pack: false }), { onDiagnostic: (k, m) => diags.push([k, m]), ...options });
  setup(server);
  const inbox = [];
  let wake = null;
  port2.onmessage = ({ data }) => {
    inbox.push(data);
    wake?.();
  };
  const next = async () => {
    while (!inbox.length) await new Promise((r) => { wake = r; });
    wake = null;
    return inbox.shift();
  };
  return { server, diags, send: (m) => port2.postMessage(m), next, close: () => { server.destroy(); port2.close(); } };
}

// The stack a handler sees, whole.
function stackHere() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = Infinity;
  try { return new Error('here').stack; } finally { Error.stackTraceLimit = limit; }
}

test('a request received alone runs its handler with no frame of the module under it', T, async () => {
  await ready;
  let seen;
  const s = served((srv) => srv.method('where', () => { seen = stackHere(); return 1; }));
  try {
    for (const m of [{ jsonrpc: '2.0', method: 'where', params: [], id: 1 },   // the short way
      { jsonrpc: '2.0', method: 'where', params: [], id: 'two' }]) {           // described
      s.send(m);
      assert.deepEqual(await s.next(), { jsonrpc: '2.0', result: 1, id: m.id });
      assert.doesNotMatch(seen, MODULE_FRAME, `handler stack for id ${m.id}:\n${seen}`);
    }
  } finally { s.close(); }
});

test('a notification received alone runs its handler with no frame of the module under it', T, async () => {
  await ready;
  let seen;
  const s = served((srv) => {
    srv.onNotify('note', () => { seen = stackHere(); });
    srv.method('ping', () => 'pong');
  });
  try {
    s.send({ jsonrpc: '2.0', method: 'note', params: [] });
    s.send({ jsonrpc: '2.0', method: 'ping', id: 1 });
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', result: 'pong', id: 1 });
    assert.doesNotMatch(seen, MODULE_FRAME);
  } finally { s.close(); }
});

test('§6: a batch\'s handlers run in its order, and a cancel later in the batch finds the earlier request answered', T, async () => {
  await ready;
  const order = [];
  const s = served((srv) => {
    srv.method('a', () => { order.push('a'); return 'A'; });
    srv.method('b', () => { order.push('b'); return 'B'; });
  });
  try {
    s.send([{ jsonrpc: '2.0', method: 'a', id: 1 }, { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 1 } },
      { jsonrpc: '2.0', method: 'b', id: 2 }]);
    assert.deepEqual(await s.next(), [{ jsonrpc: '2.0', result: 'A', id: 1 }, { jsonrpc: '2.0', result: 'B', id: 2 }]);
    assert.deepEqual(order, ['a', 'b']);
    assert.deepEqual(s.diags, []);
  } finally { s.close(); }
});

test('§6: a batch\'s handlers run one by one, in its order, with no frame of the module under them', T, async () => {
  await ready;
  const seen = [];
  const s = served((srv) => {
    srv.method('where', ([n]) => { seen.push([n, stackHere()]); return n; });
    srv.onNotify('note', ([n]) => { seen.push([n, stackHere()]); });
  });
  try {
    s.send([{ jsonrpc: '2.0', method: 'where', params: [1], id: 1 }, { jsonrpc: '2.0', method: 'note', params: [2] },
      { jsonrpc: '2.0', method: 'where', params: [3], id: 'three' }]);
    assert.deepEqual(await s.next(), [{ jsonrpc: '2.0', result: 1, id: 1 }, { jsonrpc: '2.0', result: 3, id: 'three' }]);
    assert.deepEqual(seen.map(([n]) => n), [1, 2, 3]);
    for (const [n, stack] of seen) assert.doesNotMatch(stack, MODULE_FRAME, `handler stack for member ${n}:\n${stack}`);
    assert.deepEqual(s.diags, []);
  } finally { s.close(); }
});

test('§6: an RPCError with data thrown by a batch\'s member answers that member; the next member answers its own result', T, async () => {
  await ready;
  let stack;
  const s = served((srv) => {
    srv.method('fail', (p) => {
      const e = new RPCError(p.code, p.message, p.data);
      stack = e.stack;
      throw e;
    });
    srv.method('sum', ([a, b]) => a + b);
  });
  try {
    s.send([{ jsonrpc: '2.0', method: 'fail', params: { code: 7, message: 'seven', data: [7] }, id: 'f' },
      { jsonrpc: '2.0', method: 'sum', params: [1, 2], id: 'ok' }]);
    assert.deepEqual(await s.next(), [{ jsonrpc: '2.0', error: { code: 7, message: 'seven', data: [7] }, id: 'f' },
      { jsonrpc: '2.0', result: 3, id: 'ok' }]);
    assert.doesNotMatch(stack, MODULE_FRAME);
  } finally { s.close(); }
});

test('§6: a cancel later in the batch reaches an earlier member still in flight: its signal aborts, it answers -32800', T, async () => {
  await ready;
  let aborted = false;
  const s = served((srv) => {
    srv.method('slow', (_p, ctx) => {
      ctx.signal.addEventListener('abort', () => { aborted = true; });
      return new Promise(() => {});
    });
    srv.method('ping', () => 'pong');
  });
  try {
    s.send([{ jsonrpc: '2.0', method: 'slow', id: 1 }, { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 1 } },
      { jsonrpc: '2.0', method: 'ping', id: 2 }]);
    const [cancelled, pong] = await s.next();
    assert.equal(cancelled.id, 1);
    assert.equal(cancelled.error.code, -32800);
    assert.deepEqual(pong, { jsonrpc: '2.0', result: 'pong', id: 2 });
    assert.equal(aborted, true);
  } finally { s.close(); }
});

test('§6: a batch\'s answers leave after its last member\'s handler has run, a notification\'s too', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const peer = new Peer(portTransport(port1, { pack: false }));
  peer.onNotify('note', () => peer.notify('seen', [1]));
  const got = [];
  const two = new Promise((resolve) => {
    port2.onmessage = ({ data }) => { got.push(data); if (got.length === 2) resolve(); };
  });
  try {
    port2.postMessage([{ jsonrpc: '2.0', method: 'nope', id: 1 }, { jsonrpc: '2.0', method: 'note' }]);
    await two;
    assert.deepEqual(got[0], { jsonrpc: '2.0', method: 'seen', params: [1] });
    assert.equal(got[1][0].error.code, -32601);
  } finally { peer.destroy(); port2.close(); }
});

test('a batch\'s member that destroys its endpoint: the rest of the batch is not read, and nothing is sent', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const posted = [];
  const post = port1.postMessage.bind(port1);
  port1.postMessage = (m) => { posted.push(m); post(m); };
  const server = new JSONRPCServer(portTransport(port1, { pack: false }));
  const ran = [];
  let done;
  const quit = new Promise((r) => { done = r; });
  server.method('quit', () => { ran.push('quit'); server.destroy(); done(); return 'bye'; });
  server.method('after', () => { ran.push('after'); return 1; });
  port2.postMessage([{ jsonrpc: '2.0', method: 'quit', id: 1 }, { jsonrpc: '2.0', method: 'after', id: 2 }]);
  await quit;
  await new Promise((r) => setImmediate(r));
  port2.close();
  assert.deepEqual(ran, ['quit']);
  assert.deepEqual(posted, []);
});

test('a batch received inside a batch member\'s handler is answered whole, and then the outer batch', T, async () => {
  await ready;
  const [pa, pb] = syncPorts();
  const a = new Peer(portTransport(pa, { pack: false }));
  const b = new Peer(portTransport(pb, { pack: false }));
  try {
    const inner = [];
    // a's batch member pokes b, which sends a a batch of its own before the member returns.
    a.method('outer', ([n]) => { a.notify('poke', [n]); return `outer ${n}`; });
    a.method('inner', ([n]) => `inner ${n}`);
    b.onNotify('poke', ([n]) => {
      for (const p of b.batch([{ method: 'inner', params: [n] }, { method: 'inner', params: [n + 10] }])) p.then((v) => inner.push(v));
    });
    const outer = await Promise.all(b.batch([{ method: 'outer', params: [1] }, { method: 'outer', params: [2] }]));
    assert.deepEqual(outer, ['outer 1', 'outer 2']);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(inner, ['inner 1', 'inner 11', 'inner 2', 'inner 12']);
    assert.equal(a.stats().pending + b.stats().pending, 0);
  } finally { a.destroy(); b.destroy(); }
});

test('a queued handler that throws an RPCError answers with its code, message and data, and its stack is the handler\'s own', T, async () => {
  await ready;
  let stack;
  const s = served((srv) => srv.method('fail', () => {
    const e = new RPCError(7, 'seven', [7]);
    stack = e.stack;
    throw e;
  }));
  try {
    s.send({ jsonrpc: '2.0', method: 'fail', id: 1 });
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', error: { code: 7, message: 'seven', data: [7] }, id: 1 });
    assert.match(stack, /^RPCError: seven\n\s+at /, 'user code keeps its stack');
    assert.doesNotMatch(stack, MODULE_FRAME);
  } finally { s.close(); }
});

test('a queued handler may call, notify and be called again before it answers; each answer is its own request\'s', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const a = new Peer(portTransport(port1));
  const b = new Peer(portTransport(port2));
  try {
    a.method('outer', async ([n]) => {
      a.notify('seen', [n]);
      const inner = await a.request('inner', [n]);
      return inner + 1;
    });
    const seen = [];
    b.onNotify('seen', ([n]) => seen.push(n));
    b.method('inner', ([n]) => n * 10);
    const answers = await Promise.all([1, 2, 3].map((n) => b.request('outer', [n])));
    assert.deepEqual(answers, [11, 21, 31]);
    assert.deepEqual(seen, [1, 2, 3]);
    assert.equal(a.stats().pending, 0);
  } finally { a.destroy(); b.destroy(); }
});

test('$/cancelRequest for a queued handler\'s pending promise aborts its signal and answers -32800', T, async () => {
  await ready;
  let aborted = null;
  let release;
  const s = served((srv) => srv.method('slow', (_p, ctx) => {
    ctx.signal.addEventListener('abort', () => { aborted = true; });
    return new Promise((r) => { release = r; });
  }));
  try {
    s.send({ jsonrpc: '2.0', method: 'slow', id: 1 });
    while (!release) await new Promise((r) => setTimeout(r, 1));
    s.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 1 } });
    const answer = await s.next();
    assert.equal(answer.id, 1);
    assert.equal(answer.error.code, -32800);
    assert.equal(aborted, true);
    release(5);  // too late: dropped, and said so
    s.send({ jsonrpc: '2.0', method: 'slow', id: 2 });
    s.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 2 } });
    assert.equal((await s.next()).id, 2, 'the late answer to 1 was not sent');
    assert.ok(s.diags.some(([k]) => k === 'LateReply'));
  } finally { s.close(); }
});

test('params the core rebuilt for a ParamSpec reach a queued handler whole', T, async () => {
  await ready;
  const s = served((srv) => srv.method('add', ({ a, b }) => a + b, { params: [{ name: 'a', type: 'number' }, { name: 'b', type: 'number' }] }));
  try {
    s.send({ jsonrpc: '2.0', method: 'add', params: [2, 3], id: 1 });
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', result: 5, id: 1 });
    s.send({ jsonrpc: '2.0', method: 'add', params: { a: 'x', b: 3 }, id: 2 });
    assert.equal((await s.next()).error.code, -32602);
  } finally { s.close(); }
});

// The server posts nothing after its handler destroyed it; returns what it posted.
async function destroyedByItsHandler() {
  const { port1, port2 } = new MessageChannel();
  const posted = [];
  const post = port1.postMessage.bind(port1);
  port1.postMessage = (m) => { posted.push(m); post(m); };
  const server = new JSONRPCServer(portTransport(port1, { pack: false }));
  let ran;
  const quit = new Promise((r) => { ran = r; });
  server.method('quit', () => { server.destroy(); ran(); return 'bye'; });
  port2.postMessage({ jsonrpc: '2.0', method: 'quit', id: 1 });
  await quit;
  await new Promise((r) => setImmediate(r));  // the task that ran it is over
  port2.close();
  return posted;
}

test('an endpoint destroyed by its own queued handler sends nothing more and keeps nothing', T, async () => {
  await ready;
  assert.deepEqual(await destroyedByItsHandler(), []);  // and the module has made what it reuses
  const before = heapUsed();
  assert.deepEqual(await destroyedByItsHandler(), []);
  assert.equal(heapUsed(), before);
});

// Two ports that deliver at once, inside postMessage: a receive nested in
// the handler that posted.
function syncPorts() {
  const make = () => ({ listener: null, other: null,
    postMessage(m) { this.other.listener?.({ data: structuredClone(m) }); },
    addEventListener(type, l) { if (type === 'message') this.listener = l; },
    removeEventListener() { this.listener = null; }, start() {}, close() {} });
  const a = make(), b = make();
  a.other = b;
  b.other = a;
  return [a, b];
}

test('a request received while a queued handler\'s answer is held is answered at once, and each answer is its own', T, async () => {
  await ready;
  const [pa, pb] = syncPorts();
  const a = new Peer(portTransport(pa, { pack: false }));
  const b = new Peer(portTransport(pb, { pack: false }));
  try {
    const got = [];
    // a's handler pokes b, whose handler calls back into a before a's handler returns.
    a.method('outer', ([n]) => { a.notify('poke', [n]); return `outer ${n}`; });
    a.method('inner', ([n]) => `inner ${n}`);
    b.onNotify('poke', ([n]) => { b.request('inner', [n]).then((v) => got.push(v)); });
    assert.equal(await b.request('outer', [1]), 'outer 1');
    assert.equal(await b.request('outer', [2]), 'outer 2');
    assert.deepEqual(got, ['inner 1', 'inner 2']);
    assert.equal(a.stats().pending + b.stats().pending, 0);
  } finally { a.destroy(); b.destroy(); }
});
