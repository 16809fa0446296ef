// A call from the moment it is made to the moment it settles: what it sends is
// what it held when made (a pack queue or a core still loading reads it
// later), it settles once and at once where nothing can answer it (a
// transport closed before the core loaded, an aborted signal, a method name
// that is not one), its -32800 carries the signal's reason, a retry waits as
// long as the other side asked, and a handler's thenable is taken as `await`
// takes it. Each test ends with nothing held (stats() back to zero).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Peer, RPCError, ErrorCode, portTransport, ready } from '../../js/index.js';
import { inColdRealm } from '../support/cold-realm.mjs';
import { until } from '../support/until.mjs';
import { plain } from '../support/wire.mjs';
import { snapshot } from '../../js/pack.js';

const T = { timeout: 15000 };
const KEY = 'weft/pack';
const isPack = (d) => d !== null && typeof d === 'object' && !Array.isArray(d) && Array.isArray(d[KEY]);

// p's outcome, or a failure naming `what` if it has not settled within `ms`
// (a bound for a test that would otherwise wait for its own timeout).
function settled(p, what, ms = 5000) {
  let timer;
  const bound = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not settled after ${ms} ms`)), ms); });
  return Promise.race([p, bound]).finally(() => clearTimeout(timer));
}

// A client Peer and a server Peer on a MessageChannel (default options: they
// pack once they have exchanged a message), and every raw `data` the server's
// port receives.
function pair(options) {
  const { port1, port2 } = new MessageChannel();
  const toServer = [];
  port2.addEventListener('message', ({ data }) => toServer.push(data));
  const server = new Peer(portTransport(port2));
  const client = new Peer(portTransport(port1), options);
  return {
    client, server, toServer,
    close() { try { client.destroy(); } finally { server.destroy(); } },
  };
}

const zero = { pending: 0, inFlight: 0, calls: 0, payloads: 0 };
const counts = (ep) => { const { heap, ...rest } = ep.stats(); return rest; };

// -- a handler's thenable ---------------------------------------------------------
test('a handler answering a thenable whose then getter or then() throws is answered -32603 with the thrown message, as await would reject; one that resolves before throwing answers that value; a batch around it is answered whole; nothing leaks', T, async () => {
  await ready;
  const { client, server, close } = pair({ timeout: 0 });
  try {
    server.method('thenThrows', () => ({ then() { throw new Error('then threw'); } }));
    server.method('getterThrows', () => ({ get then() { throw new Error('the then getter threw'); } }));
    server.method('resolvesThenThrows', () => ({ then(resolve) { resolve('resolved first'); throw new Error('ignored'); } }));
    server.method('adopts', () => ({ then(resolve) { resolve({ then(r) { r('inner'); } }); } }));
    server.method('ok', () => 'ok');
    const internal = (message) => (e) => e instanceof RPCError && e.code === ErrorCode.InternalError && e.message === message;
    await assert.rejects(settled(client.request('thenThrows'), 'thenThrows'), internal('then threw'));
    await assert.rejects(settled(client.request('getterThrows'), 'getterThrows'), internal('the then getter threw'));
    assert.equal(await settled(client.request('resolvesThenThrows'), 'resolvesThenThrows'), 'resolved first');
    assert.equal(await settled(client.request('adopts'), 'adopts'), 'inner');
    const [a, b, c] = client.batch([{ method: 'ok' }, { method: 'thenThrows' }, { method: 'getterThrows' }]);
    assert.equal(await settled(a, 'batch: ok'), 'ok');
    await assert.rejects(settled(b, 'batch: thenThrows'), internal('then threw'));
    await assert.rejects(settled(c, 'batch: getterThrows'), internal('the then getter threw'));
    assert.deepEqual(counts(client), zero);
    assert.deepEqual(counts(server), zero);
  } finally { close(); }
});

// -- what a call sends --------------------------------------------------------------
test('packing: a message queued for the flush is sent as it was when queued; params, a result or error data changed later in the same turn are not', T, async () => {
  await ready;
  const { client, server, toServer, close } = pair();
  try {
    let shared = { n: 0 };
    const errData = { n: 0 };
    const notes = [];
    server.method('echo', (p) => p);
    server.method('next', () => { shared.n++; return shared; });
    server.method('fail', () => { errData.n++; throw new RPCError(1, 'failed', errData); });
    server.onNotify('note', (p) => notes.push(p));
    await Promise.all([client.request('echo', [1]), client.request('echo', [2])]);  // both sides pack from here
    const packs = toServer.filter(isPack).length;

    // Params: one object reused for every call of a turn.
    const p = { i: -1 };
    const calls = [];
    for (let i = 0; i < 5; i++) { p.i = i; calls.push(client.request('echo', p)); }
    const n = { v: 'as notified' };
    client.notify('note', n);
    n.v = 'changed';
    // Results and error data: one object the server answers every call with.
    const results = [client.request('next'), client.request('next'), client.request('next')];
    const errors = [1, 2].map(() => client.request('fail').then(() => null, (e) => e.data));
    assert.deepEqual(await Promise.all(calls), [0, 1, 2, 3, 4].map((i) => ({ i })));
    assert.deepEqual(await Promise.all(results), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.deepEqual(await Promise.all(errors), [{ n: 1 }, { n: 2 }]);
    await until(() => notes.length === 1, 'the notification');
    assert.deepEqual(notes, [{ v: 'as notified' }]);
    assert.ok(toServer.filter(isPack).length > packs, 'the calls went packed');
    shared = null;
    assert.deepEqual(counts(client), zero);
    assert.deepEqual(counts(server), zero);
  } finally { close(); }
});

test('before the core loaded: request(), notify() and batch() send the params they had when made', T, async () => {
  const got = await inColdRealm(`async (m) => {
    const { port1, port2 } = new MessageChannel();
    const server = new m.Peer(m.portTransport(port2));
    const client = new m.Peer(m.portTransport(port1));
    const notes = [];
    server.method('echo', (p) => p);
    server.onNotify('note', (p) => notes.push(p));
    const loaded = m.coreVersion() !== undefined;
    const p = { v: 'as called', list: [1, , 3], when: new Date(0) };
    const r = client.request('echo', p);
    client.notify('note', p);
    const [b] = client.batch([{ method: 'echo', params: p }]);
    p.v = 'changed'; p.list[1] = 2; p.when.setTime(1);
    const out = { loaded, request: await r, batch: await b };
    while (notes.length === 0) await new Promise((res) => setImmediate(res));
    out.note = notes[0];
    client.destroy(); server.destroy();
    return out;
  }`);
  assert.equal(got.loaded, false, 'the calls were made before the core loaded');
  // A Date is kept as it is until the core sends it (the transport decides how it goes).
  const sent = (v) => ({ v: 'as called', list: [1, , 3], when: new Date(v) });
  assert.deepEqual(got.request, sent(1));
  assert.deepEqual(got.batch, sent(1));
  assert.deepEqual(got.note, sent(1));
});

test('a queued message is copied as structured clone copies it: holes, an own "__proto__" member, null-prototype objects, Dates, Maps, typed arrays, BigInts, class instances, deep nesting and cycles', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const t = portTransport(port1, { pack: true });
  const frames = [];
  port2.addEventListener('message', plain((d) => frames.push(d)));
  port2.start();
  try {
    class Point { constructor() { this.x = 1; } get y() { return 2; } }
    const bare = Object.create(null);
    bare.a = [1];
    const innermost = { end: true };
    let deep = innermost;
    for (let i = 0; i < 40; i++) deep = { deep };
    const cycle = { name: 'cycle' };
    cycle.self = cycle;
    const params = {
      holes: [1, , 3, , ], proto: JSON.parse('{"__proto__": {"x": 1}, "y": 2}'), bare,
      when: new Date(5), map: new Map([[1, { a: 1 }]]), bytes: new Uint8Array([1, 2, 3]),
      big: 5n, point: new Point(), deep, cycle, nothing: undefined, negZero: -0, nan: NaN,
      list: [[[{ s: 'x' }]]],
    };
    const tuple = [0n, 7, 'm', params];
    const expected = [structuredClone(note(1)), structuredClone(tuple)];
    t.send(note(1));
    t.send(tuple);
    // Changed after send(), before the flush.
    params.holes[1] = 2; params.proto.y = 3; bare.a.push(2); params.when.setTime(6);
    params.map.get(1).a = 2; params.bytes[0] = 9; params.point.x = 3; cycle.name = 'changed';
    params.list[0][0][0].s = 'y'; innermost.end = false; tuple[3] = null;
    await until(() => frames.length === 1, 'the pack frame');
    assert.ok(isPack(frames[0]), 'sent as one pack');
    assert.deepEqual(frames[0][KEY], expected);
    assert.equal(Object.hasOwn(frames[0][KEY][1][3].proto, '__proto__'), true);
    assert.equal(Object.getPrototypeOf(frames[0][KEY][1][3].proto), Object.prototype);
  } finally { t.destroy(); port2.close(); }
});

test('a queued message that cannot be copied (a function, a throwing getter) reaches onSendError as the very object sent, with the error posting it raised; the rest arrives', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const t = portTransport(port1, { pack: true });
  const frames = [];
  port2.addEventListener('message', plain((d) => frames.push(d)));
  port2.start();
  const failed = [];
  t.onSendError((m, e) => failed.push([m, e]));
  try {
    const fn = { jsonrpc: '2.0', method: 'n', params: [() => {}] };
    const getter = { jsonrpc: '2.0', method: 'n', params: { get bad() { throw new Error('getter threw'); } } };
    t.send(note(1));
    assert.doesNotThrow(() => t.send(fn));
    assert.doesNotThrow(() => t.send(getter));
    t.send(note(2));
    await until(() => frames.length === 2 && failed.length === 2, 'the flush');
    assert.deepEqual(frames, [note(1), note(2)]);
    assert.equal(failed[0][0], fn);
    assert.equal(failed[0][1].name, 'DataCloneError');
    assert.equal(failed[1][0], getter);
    assert.equal(failed[1][1].message, 'getter threw');
  } finally { t.destroy(); port2.close(); }
});

function note(n) { return { jsonrpc: '2.0', method: 'n', params: [n] }; }

// -- settling where nothing can answer ---------------------------------------------
test('a transport that closes before the core loads: calls made after the load reject -32002 at once, as those made before; nothing is left pending', T, async () => {
  const got = await inColdRealm(`async (m) => {
    const outcome = (p) => Promise.race([
      p.then(() => 'resolved', (e) => e.code + ' ' + (m.coreVersion() === undefined ? 'before' : 'after') + ' the load'),
      new Promise((res) => setTimeout(() => res('pending after 2 s'), 2000)),
    ]);
    const { port1, port2 } = new MessageChannel();
    const ep = new m.Peer(m.portTransport(port1), { timeout: 0 });
    port2.close();
    const early = await outcome(ep.request('x'));
    await m.ready;
    const request = await outcome(ep.request('x'));
    const batch = await outcome(ep.batch([{ method: 'x' }])[0]);
    ep.notify('x');
    const { heap, ...stats } = ep.stats();
    ep.destroy();
    return { early, request, batch, stats };
  }`);
  assert.deepEqual(got, {
    early: '-32002 before the load', request: '-32002 after the load', batch: '-32002 after the load',
    stats: { pending: 0, inFlight: 0, calls: 0, payloads: 0 },
  });
});

test('a method name String() cannot convert: request() rejects and notify() and batch() throw a TypeError, before anything is registered, held or sent', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const ran = [];
  const server = new Peer(portTransport(port2)).method('echo', (p) => { ran.push(p); return p; });
  const client = new Peer(portTransport(port1));
  try {
    const bad = { toString() { throw new Error('no name'); } };
    const typeError = (e) => e instanceof TypeError && /no name/.test(e.message) && e.cause?.message === 'no name';
    await assert.rejects(client.request(bad, { a: 1 }), typeError);
    await assert.rejects(client.request(bad, { a: 1 }, { retry: true }), typeError);
    assert.throws(() => client.notify(bad, [1]), typeError);
    assert.throws(() => client.batch([{ method: 'echo', params: ['first entry'] }, { method: bad, params: [2] }]), typeError);
    assert.deepEqual(counts(client), zero);
    assert.equal(await client.request('echo', ['after']).then((r) => r[0]), 'after');
    assert.deepEqual(ran, [['after']], 'nothing of the bad calls was sent');
    assert.deepEqual(counts(client), zero);
  } finally { client.destroy(); server.destroy(); }
});

test('before the core loaded, a method name String() cannot convert fails the same way, and the calls made around it are made once it loads', T, async () => {
  const got = await inColdRealm(`async (m) => {
    const { port1, port2 } = new MessageChannel();
    const server = new m.Peer(m.portTransport(port2)).method('echo', (p) => p);
    const client = new m.Peer(m.portTransport(port1));
    const bad = { toString() { throw new Error('no name'); } };
    const name = (f) => { try { f(); return 'no throw'; } catch (e) { return e.name; } };
    const loaded = m.coreVersion() !== undefined;
    const before = client.request('echo', ['before']);
    const request = client.request(bad, [1]).then(() => 'resolved', (e) => e.name);
    const notify = name(() => client.notify(bad, [1]));
    const batch = name(() => client.batch([{ method: 'echo', params: [1] }, { method: bad }]));
    const after = client.request('echo', ['after']);
    const out = { loaded, request: await request, notify, batch, answers: await Promise.all([before, after]) };
    const { heap, ...stats } = client.stats();
    out.stats = stats;
    client.destroy(); server.destroy();
    return out;
  }`);
  assert.deepEqual(got, {
    loaded: false, request: 'TypeError', notify: 'TypeError', batch: 'TypeError',
    answers: [['before'], ['after']], stats: { pending: 0, inFlight: 0, calls: 0, payloads: 0 },
  });
});

// -- cancellation -------------------------------------------------------------------
test('-32800 carries the signal\'s reason as cause: an already aborted request() or batch(), and a request() or batch() queued before the core loaded and then aborted', T, async () => {
  await ready;
  const { client, server, close } = pair();
  try {
    const reason = new Error('user pressed cancel');
    const ac = new AbortController();
    ac.abort(reason);
    const cancelled = (e) => e instanceof RPCError && e.code === ErrorCode.RequestCancelled && e.cause === reason;
    await assert.rejects(client.request('echo', [1], { signal: ac.signal }), cancelled);
    for (const p of client.batch([{ method: 'echo' }, { method: 'echo' }], { signal: ac.signal })) await assert.rejects(p, cancelled);
    assert.deepEqual(counts(client), zero);
  } finally { close(); }
  const queued = await inColdRealm(`async (m) => {
    const { port1 } = new MessageChannel();
    const client = new m.Peer(m.portTransport(port1));
    const reason = new Error('user pressed cancel');
    const ac = new AbortController();
    const cause = (p) => p.then(() => 'resolved', (e) => e.code + (e.cause === reason ? ' with the reason' : ' cause ' + e.cause));
    const r = cause(client.request('echo', [1], { signal: ac.signal }));
    const b = cause(client.batch([{ method: 'echo', params: [2] }], { signal: ac.signal })[0]);
    ac.abort(reason);
    const out = [await r, await b];
    client.destroy();
    return out;
  }`);
  assert.deepEqual(queued, ['-32800 with the reason', '-32800 with the reason']);
});

test('aborting a batch() queued before the core loaded rejects its calls at once, as a queued request() is, and sends nothing', T, async () => {
  const got = await inColdRealm(`async (m) => {
    const { port1, port2 } = new MessageChannel();
    const ran = [];
    const server = new m.Peer(m.portTransport(port2)).method('echo', (p) => { ran.push(p); return p; });
    const client = new m.Peer(m.portTransport(port1));
    const ac = new AbortController();
    const when = (p) => p.then(() => 'resolved', (e) => e.code + (m.coreVersion() === undefined ? ' before' : ' after') + ' the load');
    const loaded = m.coreVersion() !== undefined;
    const r = when(client.request('echo', [1], { signal: ac.signal }));
    const b = client.batch([{ method: 'echo', params: [2] }, { method: 'echo', params: [3] }], { signal: ac.signal }).map(when);
    ac.abort();
    const out = { loaded, request: await r, batch: await Promise.all(b) };
    await m.ready;
    out.after = await client.request('echo', ['after']);
    out.ran = ran;
    client.destroy(); server.destroy();
    return out;
  }`);
  assert.deepEqual(got, {
    loaded: false, request: '-32800 before the load', batch: ['-32800 before the load', '-32800 before the load'],
    after: ['after'], ran: [['after']],
  });
});

// -- retry --------------------------------------------------------------------------
test('retry: a retry_after longer than setTimeout can wait (2^31-1 ms) is waited in full, in steps no longer than that', T, async () => {
  await ready;
  const MAX = 2 ** 31 - 1;
  const days30 = 30 * 24 * 3600 * 1000;
  let now = 0;
  const armed = [];
  let onArm = null;
  const clock = {
    now: () => now,
    setTimeout: (fn, ms) => { armed.push({ fn, ms }); onArm?.(); return armed.length; },
    clearTimeout: () => {},
  };
  const nextArm = (k) => new Promise((resolve) => {
    onArm = () => { if (armed.length >= k) { onArm = null; resolve(); } };
    onArm();
  });
  const { client, server, close } = pair({ timeout: 0, clock });
  try {
    let attempts = 0;
    let onAttempt = null;
    server.method('busy', () => {
      attempts++;
      onAttempt?.();
      if (attempts === 1) throw new RPCError(ErrorCode.Unavailable, 'draining', { retry_after: days30 });
      return 'done';
    });
    const result = client.request('busy', [], { retry: true });
    await nextArm(1);
    assert.deepEqual(armed.map((a) => a.ms), [MAX], 'the first step is setTimeout\'s longest');
    now = MAX;
    armed[0].fn();
    assert.deepEqual(armed.map((a) => a.ms), [MAX, days30 - MAX], 'fired early: armed again for the rest');
    assert.equal(attempts, 1, 'not retried before retry_after');
    const retried = new Promise((resolve) => { onAttempt = resolve; });
    now = days30;
    armed[1].fn();
    await retried;
    assert.equal(await result, 'done');
    assert.equal(attempts, 2);
    assert.deepEqual(counts(client), zero);
  } finally { close(); }
});

for (const how of ['destroy()', 'its transport closing']) {
  test(`retry: a call waiting out retry_after fails -32002 at once on ${how}, as every pending call, and its timer is cleared`, T, async () => {
    await ready;
    // A clock whose timers never fire: without the close, the wait would
    // last for ever, so the bound below is only met by the close itself.
    const armed = new Set();
    let onArm = null;
    let id = 0;
    const clock = {
      now: () => 0,
      setTimeout: () => { armed.add(++id); onArm?.(); return id; },
      clearTimeout: (t) => { armed.delete(t); },
    };
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2));
    const client = new Peer(portTransport(port1), { timeout: 0, clock });
    try {
      let attempts = 0;
      server.method('busy', () => { attempts++; throw new RPCError(ErrorCode.Unavailable, 'draining', { retry_after: 60000 }); });
      server.method('never', () => new Promise(() => {}));
      const waiting = new Promise((resolve) => { onArm = resolve; });
      const retried = client.request('busy', [], { retry: true });
      const plainCall = client.request('never');
      await waiting;
      assert.equal(attempts, 1);
      if (how === 'destroy()') client.destroy();
      else port2.close();  // port1 hears 'close'
      const closed = (e) => e instanceof RPCError && e.code === ErrorCode.Closed;
      await assert.rejects(settled(plainCall, 'the plain call', 1000), closed);
      await assert.rejects(settled(retried, 'the retrying call', 1000), closed);
      assert.equal(armed.size, 0, 'the retry timer was cleared');
      assert.equal(attempts, 1, 'not sent again');
      assert.deepEqual(counts(client), zero);
    } finally { client.destroy(); server.destroy(); }
  });
}

test('a queued message of many objects or with a cycle is structured-cloned whole: sharing and cycles kept, the work bounded', { timeout: 30000 }, () => {
  const sc = (v) => structuredClone(v);
  const cyc = { n: 1 };
  cyc.self = cyc;
  const c = snapshot([1n, 'note', cyc], sc);
  assert.equal(c[2].self, c[2]);
  assert.notEqual(c[2], cyc);
  // A value shared by 2^22 paths: copied path by path it would take minutes (the test's timeout).
  let d = { leaf: 1 };
  for (let i = 0; i < 22; i++) d = { l: d, r: d };
  const dc = snapshot([1n, 'note', d], sc);
  assert.equal(dc[2].l, dc[2].r);
  assert.notEqual(dc[2], d);
  // A small message: copied in JS, a shared value copied twice, as JSON text carries it.
  const shared = { x: 1 };
  const s = snapshot([1n, 'note', { a: shared, b: shared }], sc);
  assert.deepEqual(s[2], { a: { x: 1 }, b: { x: 1 } });
  assert.notEqual(s[2].a, shared);
});

// weft_call hands its own request back for the glue to post; a call made
// while the core is still inside it (here: from the post of a stream's
// $/weft/open) must not make the outer call's request go twice or not at all.
test('a call made while a stream\'s $/weft/open is being posted goes out once with its params, and so does the stream\'s request, in the order made', T, async () => {
  await ready;
  const sent = [];
  let client = null;
  let inner = null;
  const transport = {
    send(m) {
      sent.push(m);
      if (inner === null && m.method === '$/weft/open') inner = client.request('inner', { x: 1 }).catch((e) => e.code);
    },
    onMessage() {},
    destroy() {},
  };
  client = new Peer(transport, { onDiagnostic: () => {} });
  const s = client.stream('outer', [1, 2]);
  s.result.catch(() => {});
  await until(() => inner !== null, 'the inner call');
  assert.deepEqual(sent.map((m) => [m.method, m.params]), [
    ['$/weft/open', { id: sent[0].params.id, credit: 16 }],
    ['inner', { x: 1 }],
    ['outer', [1, 2]],
  ]);
  assert.equal(sent[2].id, sent[0].params.id, 'the stream\'s request has the id its open announced');
  assert.notEqual(sent[1].id, sent[2].id);
  client.destroy();
  assert.equal(await inner, ErrorCode.Closed);
  assert.deepEqual(client.stats().payloads, 0);
});
