// Tuples (docs/protocol.md, "Tuples"): the compact form two weft postMessage
// ends use once each has announced that it reads them. One case per rule;
// the wire is read raw on the ports, and tuples are checked against the
// format as support/wire.mjs writes it from the document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONRPCClient, JSONRPCServer, Peer, RPCError, ErrorCode, asMessage, portTransport, ready } from '../../js/index.js';
import { X } from '../../js/heap.js';
import { ANNOUNCEMENT, announcementOf, fromTuple, isAnnouncement, isTuple, toTuple } from '../support/wire.mjs';

const T = { timeout: 15000 };

// Resolves once cond() holds, checked on every message event of `port`.
function when(port, cond) {
  return new Promise((resolve) => {
    const check = () => {
      if (!cond()) return;
      port.removeEventListener('message', check);
      resolve();
    };
    port.addEventListener('message', check);
    check();
  });
}

// A JSONRPCServer on port2 (transport options `opts`, endpoint options
// `eopts`); the test is the other end, raw, on port1: post() sends, `got`
// holds what arrived.
function rawPeer(opts, eopts) {
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2, opts), eopts);
  server.method('echo', (p) => p);
  server.method('fail', (p) => { throw new RPCError(p.code, p.message, p.data); });
  server.method('none', () => undefined);
  const got = [];
  port1.addEventListener('message', (ev) => { if (!isAnnouncement(ev.data)) got.push(ev.data); });
  port1.start();
  return {
    server, got, post: (m) => port1.postMessage(m),
    arrived: (n) => when(port1, () => got.length >= n),
    waitFor: (cond) => when(port1, cond),
    done: () => { server.destroy(); port1.close(); },
  };
}

const req = (id, method, params) => (params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id });

test('tuples: two weft ends with default options send tuples once each has read the other\'s announcement', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const toServer = [];
  const toClient = [];
  port2.addEventListener('message', (ev) => toServer.push(ev.data));
  port1.addEventListener('message', (ev) => toClient.push(ev.data));
  const server = new JSONRPCServer(portTransport(port2));
  server.method('add', ({ a, b }) => a + b);
  const client = new JSONRPCClient(portTransport(port1));
  try {
    assert.equal(await client.request('add', { a: 1, b: 2 }), 3);
    assert.equal(await client.request('add', { a: 2, b: 3 }), 5);
    // The first request leaves before the server's announcement arrives.
    assert.deepEqual(toServer, [announcementOf('client'), req(1, 'add', { a: 1, b: 2 }), [0n, 2, 'add', { a: 2, b: 3 }]]);
    // The server read the client's announcement first: it answers in tuples.
    assert.deepEqual(toClient, [announcementOf('server'), [2n, 1, 3], [2n, 2, 5]]);
    assert.equal(client.stats().payloads, 0);
    assert.equal(server.stats().payloads, 0);
  } finally { client.destroy(); server.destroy(); }
});

test('tuples: a request and a result tuple between two weft ends take their short way into the core', T, async () => {
  await ready;
  const taken = { request: 0, result: 0 };
  const { _weft_request: request, _weft_result: result } = X;
  X._weft_request = (...a) => { const r = request(...a); taken.request += r >= 1; return r; };
  X._weft_result = (...a) => { const r = result(...a); taken.result += r >= 0; return r; };
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2));
  server.method('add', ({ a, b }) => a + b);
  const client = new JSONRPCClient(portTransport(port1));
  try {
    for (let i = 0; i < 5; i++) assert.equal(await client.request('add', { a: i, b: 1 }), i + 1);
    // The first request goes before the server's announcement, as an
    // object: a json-rpc-2.0-shaped one takes the short way too (short.js).
    assert.deepEqual(taken, { request: 5, result: 5 });
    assert.equal(client.stats().pending, 0);
    assert.equal(server.stats().inFlight, 0);
  } finally {
    Object.assign(X, { _weft_request: request, _weft_result: result });
    client.destroy(); server.destroy();
  }
});

test('tuples: every kind of message says over tuples what it says as an object', T, async () => {
  await ready;
  const values = [null, true, false, 0, -1.5, '', 'é ✓ 😀', [], [1, [2]], {}, { a: { b: null } }];
  const wire = [];  // what crossed, both ways, in the 'auto' run
  const run = async (pack) => {
    const { port1, port2 } = new MessageChannel();
    if (pack === 'auto') for (const p of [port1, port2]) p.addEventListener('message', (ev) => wire.push(ev.data));
    const server = new JSONRPCServer(portTransport(port2, { pack }));
    const notes = [];
    server.method('echo', (p) => p);
    server.method('none', () => undefined);
    server.method('fail', (p) => { throw new RPCError(p.code, p.message, p.data); });
    server.onNotify('note', (p) => { notes.push(p); });
    const client = new JSONRPCClient(portTransport(port1, { pack }));
    const out = [];
    const settle = (p) => p.then((v) => ['ok', v], (e) => ['err', e.code, e.message, e.data]);
    try {
      out.push(await settle(client.request('none')));
      out.push(await settle(client.request('echo')));  // no params: the method answers undefined → null
      for (const v of values) {
        out.push(await settle(client.request('echo', [v])));
        out.push(await settle(client.request('fail', { code: 7, message: 'seven', data: v })));
        client.notify('note', [v]);
      }
      out.push(await settle(client.request('fail', { code: -32099, message: 'no data' })));
      out.push(await settle(client.request('nope', { x: 1 })));
      out.push(await Promise.all(client.batch([
        { method: 'echo', params: [1] }, { method: 'fail', params: { code: 1, message: 'm', data: [null] } },
        { method: 'note', params: ['in a batch'], notification: true }, { method: 'nope' },
      ]).map(settle)));
      out.push(await settle(client.request('echo', ['last'])));  // after every notification
      out.push(notes);
      assert.equal(client.stats().payloads, 0);
      assert.equal(server.stats().payloads, 0);
      return out;
    } finally { client.destroy(); server.destroy(); }
  };
  assert.deepEqual(await run('auto'), await run(false));
  // Every kind crossed as a tuple: requests, notifications, results and
  // errors (with and without data), and batches of them.
  const all = wire.flatMap((f) => f?.['weft/pack'] ?? [f]).flatMap((m) => (Array.isArray(m) && !isTuple(m) ? m : [m]));
  const kinds = new Set(all.filter(isTuple).map((t) => `${t[0]}:${t.length}`));
  for (const k of ['0:3', '0:4', '1:3', '2:3', '3:4', '3:5']) assert.ok(kinds.has(k), `a tuple of kind ${k} crossed`);
  assert.ok(wire.some((f) => Array.isArray(f) && !isTuple(f) && f.every(isTuple)), 'a batch of tuples crossed');
  assert.ok(all.filter(isTuple).length > all.length / 2, 'most messages were tuples');
});

test('tuples: a weft end answers plain JSON-RPC to a peer that did not announce tuples', T, async () => {
  await ready;
  for (const announcement of [null, { jsonrpc: '2.0', method: '$/weft/pack' }]) {
    const p = rawPeer();
    try {
      if (announcement) p.post(announcement);
      p.post(req(1, 'echo', [1]));
      p.post(req(2, 'fail', { code: 7, message: 'm', data: 1 }));
      await p.arrived(2);
      assert.deepEqual(p.got.flatMap((f) => f['weft/pack'] ?? [f]), [
        { jsonrpc: '2.0', result: [1], id: 1 },
        { jsonrpc: '2.0', error: { code: 7, message: 'm', data: 1 }, id: 2 },
      ]);
    } finally { p.done(); }
  }
});

test('tuples: pack: false sends plain JSON-RPC even to a peer that announced tuples', T, async () => {
  await ready;
  const p = rawPeer({ pack: false });
  try {
    p.post(ANNOUNCEMENT);
    p.post([0n, 1, 'echo', [1]]);  // and still reads them
    await p.arrived(1);
    assert.deepEqual(p.got, [{ jsonrpc: '2.0', result: [1], id: 1 }]);
  } finally { p.done(); }
});

// ignoreForeign: false, so that what is not JSON-RPC is answered, not ignored.
test('tuples: no JSON value is read as a tuple (an array of numbers is a batch)', T, async () => {
  await ready;
  const p = rawPeer(undefined, { ignoreForeign: false });
  try {
    p.post(ANNOUNCEMENT);
    p.post([0, 1, 'echo', [1]]);
    await p.arrived(1);
    const answer = fromTuple(p.got[0]);
    assert.ok(Array.isArray(answer) && answer.length === 4, 'a batch of four invalid elements');
    for (const e of answer) assert.deepEqual([e.id, e.error.code], [null, ErrorCode.InvalidRequest]);
  } finally { p.done(); }
});

test('tuples: a tuple whose first element is no message kind is not a message (Invalid Request, or ignored as foreign)', T, async () => {
  await ready;
  const p = rawPeer(undefined, { ignoreForeign: false });
  const quiet = rawPeer();
  try {
    for (const x of [p, quiet]) {
      x.post(ANNOUNCEMENT);
      x.post([9n, 1, 'echo', [1]]);
      x.post([-1n]);
      x.post([0n, 'last', 'echo', [1]]);
    }
    await p.arrived(3);
    await quiet.arrived(1);
    assert.deepEqual(quiet.got, [[2n, 'last', [1]]], 'the default (ignoreForeign) ignores them');
    assert.deepEqual(p.got[2], [2n, 'last', [1]]);
    for (const t of p.got.slice(0, 2)) {
      assert.ok(isTuple(t), 'answered in a tuple: the peer announced them');
      const m = fromTuple(t);
      assert.deepEqual([m.id, m.error.code], [null, ErrorCode.InvalidRequest]);
    }
  } finally { p.done(); quiet.done(); }
});

test('tuples: a tuple is judged as the object it stands for (wrong member types, batches)', T, async () => {
  await ready;
  const cases = [
    req(1, 7), req(2, null), req(3, 'echo', 5), req(4, 'echo', 'x'), req({}, 'echo', [1]), req([1], 'echo'),
    req(5, '', [1]), req(6, 'rpc.nope'), req(1.5, 'echo', [1]), req(2 ** 60, 'echo', [2]), req(-0, 'echo', [3]),
    // Ids and params at the edges of a request's short way in (weft_request).
    req(2 ** 53 - 1, 'echo', [4]), req(2 ** 53, 'echo', [5]), req(-7, 'echo', { a: 1 }), req(0, 'echo', []),
    req(11, 'echo'), req(12, 'echo', {}), req('s', 'echo', [6]), req(null, 'echo', [7]), req(13, 'none'),
    { jsonrpc: '2.0', method: 'echo', params: [1] }, { jsonrpc: '2.0', method: 3 },
    { jsonrpc: '2.0', result: 1, id: 99 }, { jsonrpc: '2.0', error: { code: 1, message: 'x' }, id: 98 },
    [req(7, 'echo', [7]), { jsonrpc: '2.0', method: 'echo' }, 1, req(8, 9)],
    [],
  ];
  const answers = async (encode) => {
    const p = rawPeer();
    try {
      p.post(ANNOUNCEMENT);
      for (const m of cases) p.post(encode(m));
      // The answer to a last request: everything before it is answered.
      p.post(encode(req('end', 'echo', ['end'])));
      await p.waitFor(() => p.got.some((f) => fromTuple(f)?.id === 'end'));
      return p.got.map(fromTuple);
    } finally { p.done(); }
  };
  const asObjects = await answers((m) => m);
  const asTuples = await answers(toTuple);
  assert.ok(cases.filter((m) => isTuple(toTuple(m))).length >= 12, 'most single messages are expressible as tuples');
  assert.deepEqual(asTuples, asObjects);
});

test('tuples: a request tuple is served, or ignored, as the object it stands for is, by every role', T, async () => {
  await ready;
  // Raw tuples toTuple() would not make: an undefined params element, a
  // NaN id, a method that is no string, an element too many.
  const raw = [[0n, 1, 'echo', undefined], [0n, NaN, 'echo', [1]], [0n, 3, 4, [3]], [0n, 4, 'echo', [4], 'extra'],
    [0n, 5, 'echo', null], [0n, 6, 'echo', 'x']];
  const plain = [req(1, 'echo'), req(NaN, 'echo', [1]), req(3, 4, [3]), req(4, 'echo', [4]), req(5, 'echo', null),
    req(6, 'echo', 'x')];
  const answers = async (Kind, list) => {
    const { port1, port2 } = new MessageChannel();
    const diags = [];
    let seen = () => {};
    const ep = new Kind(portTransport(port2), { onDiagnostic: (k, m) => { diags.push([k, m]); seen(); } });
    ep.method('echo', (p) => p);
    const got = [];
    port1.addEventListener('message', (ev) => { if (!isAnnouncement(ev.data)) { got.push(fromTuple(ev.data)); seen(); } });
    port1.start();
    try {
      port1.postMessage(ANNOUNCEMENT);
      for (const m of list) port1.postMessage(m);
      // A last message every role handles visibly: all before it was handled.
      const client = Kind === JSONRPCClient;
      port1.postMessage(client ? { jsonrpc: '2.0', result: 0, id: 'last' } : req('last', 'echo', ['last']));
      await new Promise((resolve) => {
        seen = () => { if (client ? diags.some(([, m]) => m.includes('"last"')) : got.some((m) => m?.id === 'last')) resolve(); };
        seen();
      });
      return [got, diags];
    } finally { ep.destroy(); port1.close(); }
  };
  for (const Kind of [JSONRPCServer, Peer, JSONRPCClient]) {
    assert.deepEqual(await answers(Kind, raw), await answers(Kind, plain), Kind.name);
  }
});

test('tuples: an answer tuple to a pending call is judged as the object it stands for', T, async () => {
  await ready;
  const answers = [
    [{ jsonrpc: '2.0', result: 5, id: 1 }, [2n, 1, 5]],
    [{ jsonrpc: '2.0', result: null, id: 1 }, [2n, 1, null]],
    [{ jsonrpc: '2.0', id: 1 }, [2n, 1]],  // no result: not a response
    [{ jsonrpc: '2.0', error: { code: 7, message: 'm', data: [1] }, id: 1 }, [3n, 1, 7, 'm', [1]]],
    [{ jsonrpc: '2.0', error: { code: 1.5, message: 'm' }, id: 1 }, [3n, 1, 1.5, 'm']],  // not an integer code
    [{ jsonrpc: '2.0', error: { code: 7, message: 8 }, id: 1 }, [3n, 1, 7, 8]],  // not a string message
  ];
  const outcome = async (answer) => {
    const { port1, port2 } = new MessageChannel();
    const diags = [];
    const client = new JSONRPCClient(portTransport(port1), { onDiagnostic: (k) => diags.push(k) });
    port2.addEventListener('message', (ev) => { if (!isAnnouncement(ev.data)) port2.postMessage(answer); });
    port2.start();
    try {
      const r = await client.request('m', [], { timeout: 300 }).then((v) => ['ok', v], (e) => ['err', e.code, e.message, e.data]);
      return [r, diags];
    } finally { client.destroy(); port2.close(); }
  };
  for (const [object, tuple] of answers) {
    assert.deepEqual(fromTuple(tuple), object, 'the tuple stands for the object');
    assert.deepEqual(await outcome(tuple), await outcome(object), JSON.stringify(object));
  }
});

test('tuples: a result tuple settles its call as the object it stands for would, for every id and kind of call', { timeout: 60000 }, async () => {
  await ready;
  // The answer's id, from the request's: its own, another, and ids that
  // are not the integer a JSON codec would read (weft_result declines them).
  const ids = [(id) => id, (id) => id + 1, () => -0, (id) => id + 0.5, (id) => String(id), () => 2 ** 53 + 2,
    (id) => BigInt(id), () => null];
  // The call the answer is for: plain, asking for metrics or progress, a stream.
  const calls = [
    (c) => c.request('m', [], { timeout: 100 }),
    (c) => c.request('m', [], { timeout: 100, onMetrics: () => {} }),
    (c) => c.request('m', [], { timeout: 100, onProgress: () => {} }),
    (c) => c.stream('m', [], { timeout: 100 }).result,
  ];
  const outcome = async (Kind, call, answer, twice) => {
    const { port1, port2 } = new MessageChannel();
    const diags = [];
    const ep = new Kind(portTransport(port1), { onDiagnostic: (k) => diags.push(k) });
    port2.addEventListener('message', (ev) => {
      const m = ev.data;
      const id = isTuple(m) ? (m[0] === 0n ? m[1] : undefined) : m?.method !== undefined ? m.id : undefined;
      if (id === undefined) return;  // announcements, $/weft/open
      port2.postMessage(answer(id));
      if (twice) port2.postMessage(answer(id));
    });
    port2.start();
    // Every answer posted has been delivered to the endpoint (its listener
    // was added first, so it has run when this one does).
    let delivered = 0;
    port1.addEventListener('message', (ev) => { if (!isAnnouncement(ev.data)) delivered++; });
    const all = when(port1, () => delivered >= (twice ? 2 : 1));
    try {
      const r = await call(ep).then((v) => ['ok', v], (e) => ['err', e.code, e.message]);
      await all;
      return [r, diags, ep.stats().calls, ep.stats().pending];
    } finally { ep.destroy(); port2.close(); }
  };
  let fast = 0;
  for (const id of ids) {
    for (const call of calls) {
      for (const twice of [false, true]) {
        const asTuple = await outcome(JSONRPCClient, call, (r) => [2n, id(r), { v: 1 }], twice);
        const asObject = await outcome(JSONRPCClient, call, (r) => ({ jsonrpc: '2.0', result: { v: 1 }, id: id(r) }), twice);
        assert.deepEqual(asTuple, asObject, `${id} ${call} twice=${twice}`);
        if (asTuple[0][0] === 'ok') fast++;
      }
    }
  }
  assert.ok(fast >= 8, 'the calls answered with their own id settle');
  // A Peer takes answers as a client does.
  const peerCall = (c) => c.request('m', [], { timeout: 300 });
  assert.deepEqual(await outcome(Peer, peerCall, (r) => [2n, r, 5], false), [['ok', 5], [], 0, 0]);
  assert.deepEqual(await outcome(Peer, peerCall, (r) => [2n, r, 5], false),
    await outcome(Peer, peerCall, (r) => ({ jsonrpc: '2.0', result: 5, id: r }), false));
});

test('tuples: a result tuple sent to a JSONRPCServer is ignored as the object it stands for is', T, async () => {
  await ready;
  for (const answer of [[2n, 1, 5], { jsonrpc: '2.0', result: 5, id: 1 }]) {
    const p = rawPeer({}, { onDiagnostic: (k, m) => p.diags.push([k, m]) });
    p.diags = [];
    try {
      p.post(answer);
      p.post(req(9, 'echo', [1]));
      await p.arrived(1);
      assert.deepEqual(p.got, [{ jsonrpc: '2.0', result: [1], id: 9 }]);  // the raw end announced no tuples
      assert.deepEqual(p.diags, [['IgnoredMessage', '1 message(s) not for this endpoint; ignored']], JSON.stringify(answer, (k, v) => (typeof v === 'bigint' ? `${v}n` : v)));
    } finally { p.done(); }
  }
});

test('tuples: a send error found while flushing inside another call stays with its own request', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2));
  server.method('echo', (p) => p);
  server.method('hold', () => new Promise(() => {}));
  const warnings = [];
  const client = new JSONRPCClient(portTransport(port1), { onDiagnostic: (k) => warnings.push(k) });
  try {
    assert.deepEqual(await client.request('echo', [1]), [1]);  // announcements exchanged
    const held = client.request('hold').catch((e) => e);  // a call pending: the next ones are queued
    const ac = new AbortController();
    const a = client.request('echo', [() => 1], { signal: ac.signal }).catch((e) => e);
    ac.abort();
    // Bulky: posted at once from inside its weft_call, after flushing the
    // queue, where a's request fails to clone.
    const b = client.request('hold', ['x'.repeat(10000)]).catch((e) => e);
    const ea = await a;
    assert.equal(ea.code, ErrorCode.RequestCancelled);
    assert.deepEqual(await client.request('echo', [2]), [2]);  // b reached the server before it
    client.destroy();
    for (const e of [await held, await b]) {
      assert.equal(e.code, ErrorCode.Closed);
      assert.equal(e.message, 'Endpoint destroyed');
      assert.equal(e.cause, undefined, 'not blamed for the clone error of another request');
    }
  } finally { client.destroy(); server.destroy(); }
});

test('tuples: a call whose tuple cannot be cloned rejects -32002 with the clone error as cause', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2));
  server.method('echo', (p) => p);
  const client = new JSONRPCClient(portTransport(port1));
  try {
    assert.deepEqual(await client.request('echo', [1]), [1]);  // announcements exchanged
    await assert.rejects(client.request('echo', [() => 1]),
      (e) => e instanceof RPCError && e.code === ErrorCode.Closed && /Transport send failed/.test(e.message) && e.cause?.name === 'DataCloneError');
    assert.deepEqual(await client.request('echo', [2]), [2]);
    assert.equal(client.stats().payloads, 0);
  } finally { client.destroy(); server.destroy(); }
});

test('tuples: asMessage() shows what a wire value says as JSON-RPC (for logs)', () => {
  const objects = [
    req(1, 'add', [1, 2]), req('a', 'none'), { jsonrpc: '2.0', method: 'note', params: {} }, { jsonrpc: '2.0', method: 'note' },
    { jsonrpc: '2.0', result: null, id: 1 }, { jsonrpc: '2.0', error: { code: 7, message: 'm' }, id: null },
    { jsonrpc: '2.0', error: { code: 7, message: 'm', data: [0] }, id: 2 },
  ];
  for (const m of objects) {
    assert.notStrictEqual(toTuple(m), m, 'each is expressible as a tuple');
    assert.deepEqual(asMessage(toTuple(m)), m);
    assert.equal(asMessage(m), m, 'a message object is returned as it is');
  }
  assert.deepEqual(asMessage(objects.map(toTuple)), objects, 'a batch of tuples');
  for (const x of [[1, 2], [], 'x', null, 5, { a: 1 }]) assert.equal(asMessage(x), x, 'not a tuple: as it is');
});
