// Message packing on the postMessage transports (option `pack`): what goes on
// the wire (observed with raw port listeners), order, the 'auto' handshake,
// send errors, destroy, and weft ↔ weft / weft ↔ json-rpc-2.0 end to end.
import { test } from 'node:test';
import { plain, isAnnouncement, ANNOUNCEMENT, announcementOf } from '../support/wire.mjs';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import * as JR from 'json-rpc-2.0';
import {
  JSONRPCClient, JSONRPCServer, Peer, portTransport, workerTransport, windowTransport,
} from '../../js/index.js';

const T = { timeout: 15000 };
const KEY = 'weft/pack';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const turn = () => new Promise((r) => setTimeout(r, 0));
const isPack = (d) => d !== null && typeof d === 'object' && !Array.isArray(d) && Array.isArray(d[KEY]);
const note = (n) => ({ jsonrpc: '2.0', method: 'n', params: [n] });
const indexURL = new URL('../../js/index.js', import.meta.url).href;

/** A transport on port1 and every raw `data` arriving on port2. */
function rawPair(options) {
  const { port1, port2 } = new MessageChannel();
  const t = portTransport(port1, options);
  const frames = [];
  port2.addEventListener('message', plain((d) => frames.push(d)));
  port2.start();
  return { t, port2, frames, done: () => { t.destroy(); port2.close(); } };
}

/**
 * Resolves once cond() holds, checking after each turn of the event loop
 * (every message arrives in a turn of its own); fails only if it never does.
 */
async function until(cond, ms = 15000) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setImmediate(r));
  }
}

test('pack: a lone message is posted as plain JSON-RPC', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  try {
    t.send(note(1));
    await turn();
    t.send(note(2));
    await until(() => frames.length === 2);
    await sleep(10);
    assert.deepEqual(frames, [note(1), note(2)]);
  } finally { done(); }
});

test('pack: several sends in one turn arrive as one packed frame', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  try {
    t.send(note(1));
    t.send([note(2), note(3)]);  // a batch is one element
    t.send(note(4));
    await until(() => frames.length >= 1);
    await sleep(10);
    assert.equal(frames.length, 1);
    assert.ok(isPack(frames[0]));
    assert.equal('jsonrpc' in frames[0], false);
    assert.deepEqual(frames[0][KEY], [note(1), [note(2), note(3)], note(4)]);
  } finally { done(); }
});

test('pack: order is kept across plain and packed posts, and the receiver unpacks in order', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const tx = portTransport(port1, { pack: true });
  const rx = portTransport(port2, { pack: false });
  const got = [];
  rx.onMessage((m) => got.push(m.params[0]));
  try {
    let n = 0;
    for (const size of [1, 3, 1, 1, 5, 2, 1]) {
      for (let i = 0; i < size; i++) tx.send(note(n++));
      if (size % 2) await turn();  // sometimes the next turn starts before the flush is seen
      else await Promise.resolve();
    }
    await until(() => got.length === n);
    assert.deepEqual(got, Array.from({ length: n }, (_, i) => i));
  } finally { tx.destroy(); rx.destroy(); }
});

test("pack: 'auto' (default) posts plain until a pack arrives, then packs", T, async () => {
  const { t, port2, frames, done } = rawPair();
  const got = [];
  t.onMessage((m) => got.push(m));
  try {
    t.send(note(1));
    t.send(note(2));
    await until(() => frames.length === 2);
    assert.deepEqual(frames, [note(1), note(2)]);
    // Look-alikes are delivered as they are and do not switch packing on.
    const fake1 = { jsonrpc: '2.0', [KEY]: [note(8)] };
    const fake2 = { [KEY]: 'not an array' };
    port2.postMessage(fake1);
    port2.postMessage(fake2);
    await until(() => got.length === 2);
    assert.deepEqual(got, [fake1, fake2]);
    t.send(note(3));
    t.send(note(4));
    await until(() => frames.length === 4);
    assert.deepEqual(frames.slice(2), [note(3), note(4)]);
    // A real pack: delivered element by element, and from now on we pack.
    port2.postMessage({ [KEY]: [note(10), note(11)] });
    await until(() => got.length === 4);
    assert.deepEqual(got.slice(2), [note(10), note(11)]);
    t.send(note(5));
    t.send(note(6));
    await until(() => frames.length === 5);
    await sleep(10);
    assert.equal(frames.length, 5);
    assert.deepEqual(frames[4], { [KEY]: [note(5), note(6)] });
  } finally { done(); }
});

test("pack: 'auto' announces itself once, before its first message; false never does", T, async () => {
  const seen = [];
  const { port1, port2 } = new MessageChannel();
  port2.addEventListener('message', (ev) => seen.push(ev.data));
  port2.start();
  const t = portTransport(port1);
  const quiet = rawPair({ pack: false });
  try {
    t.send(note(1));
    t.send(note(2));
    quiet.t.send(note(3));
    await until(() => seen.length === 3 && quiet.frames.length === 1);
    assert.deepEqual(seen, [ANNOUNCEMENT, note(1), note(2)]);
    assert.deepEqual(quiet.frames, [note(3)]);
  } finally { t.destroy(); port2.close(); quiet.done(); }
});

test('pack: the announcement is consumed by the transport and switches auto to packing', T, async () => {
  const { t, port2, frames, done } = rawPair();
  const got = [];
  t.onMessage((m) => got.push(m));
  try {
    port2.postMessage(ANNOUNCEMENT);
    port2.postMessage(note(7));
    await until(() => got.length === 1);
    assert.deepEqual(got, [note(7)], 'the announcement is not delivered');
    t.send(note(1));
    t.send(note(2));
    await until(() => frames.length === 1);
    assert.deepEqual(frames[0], { [KEY]: [note(1), note(2)] });
  } finally { done(); }
});

test('pack: two weft endpoints with default options pack after their first exchange', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const toServer = [];
  const toClient = [];
  port2.addEventListener('message', plain((d) => toServer.push(d)));
  port1.addEventListener('message', plain((d) => toClient.push(d)));
  const client = new JSONRPCClient(portTransport(port1));
  const server = new JSONRPCServer(portTransport(port2));
  server.method('add', ({ a, b }) => a + b);
  try {
    assert.equal(await client.request('add', { a: 1, b: 2 }), 3);
    const res = await Promise.all(Array.from({ length: 100 }, (_, i) => client.request('add', { a: i, b: 1 })));
    res.forEach((r, i) => assert.equal(r, i + 1));
    assert.ok(toServer.slice(1).some(isPack), 'the client packs');
    assert.ok(toClient.slice(1).some(isPack), 'the server packs');
  } finally { client.destroy(); server.destroy(); }
});

test('pack: false never packs, but still unpacks what it receives', T, async () => {
  const { t, port2, frames, done } = rawPair({ pack: false });
  const got = [];
  t.onMessage((m) => got.push(m));
  try {
    port2.postMessage({ [KEY]: [note(10), note(11)] });
    await until(() => got.length === 2);
    assert.deepEqual(got, [note(10), note(11)]);
    for (let i = 0; i < 3; i++) t.send(note(i));
    await until(() => frames.length === 3);
    await sleep(10);
    assert.deepEqual(frames, [note(0), note(1), note(2)]);
    assert.throws(() => portTransport(new MessageChannel().port1, { pack: 'yes' }), TypeError);
  } finally { done(); }
});

test('pack: weft client (pack: true) ↔ weft server (auto): 1,000 concurrent calls, replies packed', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const toServer = [];
  const toClient = [];
  // Extra raw listeners next to the transports' own.
  port2.addEventListener('message', plain((d) => toServer.push(d)));
  port1.addEventListener('message', plain((d) => toClient.push(d)));
  const client = new JSONRPCClient(portTransport(port1, { pack: true }));
  const server = new JSONRPCServer(portTransport(port2));
  server.method('add', ({ a, b }) => a + b);
  server.method('later', async ([x]) => { await sleep(1); return x * 2; });
  try {
    await client.ready;
    const calls = Array.from({ length: 1000 }, (_, i) => (i % 2 ? client.request('add', { a: i, b: 1 }) : client.request('later', [i])));
    const res = await Promise.all(calls);
    res.forEach((r, i) => assert.equal(r, i % 2 ? i + 1 : i * 2));
    assert.ok(toServer.some(isPack), 'the client packed');
    assert.ok(toClient.some(isPack), 'the server answered packed');
    const count = (frames) => frames.reduce((n, f) => n + (isPack(f) ? f[KEY].length : 1), 0);
    assert.equal(count(toServer), 1000);
    assert.equal(count(toClient), 1000);
    assert.ok(toServer.length < 100 && toClient.length < 1000, `${toServer.length} / ${toClient.length} frames`);
    assert.equal(client.stats().pending, 0);
  } finally { client.destroy(); server.destroy(); }
});

test('pack: a message that cannot be cloned reaches onSendError; the rest of the flush arrives in order', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  const failed = [];
  t.onSendError((m, e) => failed.push([m, e]));
  try {
    const bad = { jsonrpc: '2.0', method: 'n', params: [() => {}] };
    t.send(note(1));
    assert.doesNotThrow(() => t.send(bad));
    t.send(note(3));
    await until(() => frames.length === 2);
    await sleep(10);
    assert.deepEqual(frames, [note(1), note(3)]);
    assert.equal(failed.length, 1);
    assert.equal(failed[0][0], bad);
    assert.equal(failed[0][1].name, 'DataCloneError');
    // A lone one too; and without a handler, a console warning.
    t.send(bad);
    await turn();
    assert.equal(failed.length, 2);
    t.onSendError(null);
    const warned = [];
    const warn = console.warn;
    console.warn = (...a) => warned.push(a);
    try { t.send(bad); t.send(note(4)); await turn(); } finally { console.warn = warn; }
    assert.equal(warned.length, 1);
    await until(() => frames.length === 3);
    assert.deepEqual(frames[2], note(4));
    // Unpacked, send() still throws at once.
    const plain = rawPair({ pack: false });
    try { assert.throws(() => plain.t.send(bad), (e) => e.name === 'DataCloneError'); } finally { plain.done(); }
  } finally { done(); }
});

test('pack: destroy() flushes what is queued before closing the port', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  try {
    t.send(note(1));
    t.send(note(2));
    t.destroy();
    await until(() => frames.length === 1);
    assert.deepEqual(frames[0], { [KEY]: [note(1), note(2)] });
    assert.doesNotThrow(() => t.send(note(3)));  // after destroy: posted at once (a closed port drops it)
    await sleep(20);
    assert.equal(frames.length, 1);
  } finally { done(); }
});

test('pack: json-rpc-2.0 server with a weft client in default mode: no packs on the wire', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const seen = [];
  const server = new JR.JSONRPCServer();
  server.addMethod('add', ([a, b]) => a + b);
  port2.addEventListener('message', (ev) => {
    seen.push(ev.data);
    server.receive(ev.data).then((r) => { if (r) port2.postMessage(r); });
  });
  port2.start();
  const client = new JSONRPCClient(portTransport(port1));
  try {
    const res = await Promise.all(Array.from({ length: 50 }, (_, i) => client.request('add', [i, 1])));
    res.forEach((r, i) => assert.equal(r, i + 1));
    // Plain JSON-RPC only: the announcement notification once, first, then the calls.
    assert.equal(seen.length, 51);
    assert.deepEqual(seen[0], announcementOf('client'));
    assert.ok(seen.slice(1).every((m) => m.jsonrpc === '2.0' && !(KEY in m) && !isAnnouncement(m)));
  } finally { client.destroy(); port2.close(); }
});

test('pack: workerTransport ↔ selfTransport (worker_threads) with pack: true both ways', T, async () => {
  const w = new Worker(`
    import(${JSON.stringify(indexURL)}).then((m) => {
      const s = new m.JSONRPCServer(m.selfTransport({ pack: true }));
      s.method('sq', ([x]) => x * x);
    });
  `, { eval: true });
  const frames = [];
  w.on('message', (d) => frames.push(d));
  const client = new JSONRPCClient(workerTransport(w, { pack: true }));
  try {
    const res = await Promise.all(Array.from({ length: 200 }, (_, i) => client.request('sq', [i])));
    res.forEach((r, i) => assert.equal(r, i * i));
    assert.ok(frames.some(isPack));
  } finally { client.destroy(); await w.terminate(); }
});

test('pack: windowTransport takes options as its 4th argument; packs pass the origin checks', T, async () => {
  // Two fake windows; each only ever hears from the other: to.postMessage()
  // dispatches on `to` with the other window as source.
  const win = (origin) => Object.assign(new EventTarget(), { location: { origin } });
  const a = win('https://a.example');
  const b = win('https://b.example');
  const wire = (from, to) => {
    to.frames = [];
    to.postMessage = (data, targetOrigin) => {
      if (targetOrigin !== to.location.origin) return;
      to.frames.push(data);
      setTimeout(() => to.dispatchEvent(Object.assign(new Event('message'), { data: structuredClone(data), source: from, origin: from.location.origin })), 0);
    };
  };
  wire(a, b);
  wire(b, a);
  const client = new JSONRPCClient(windowTransport(b, a, 'https://b.example', { pack: true }));
  const server = new JSONRPCServer(windowTransport(a, b, 'https://a.example'));
  server.method('id', ([x]) => x);
  try {
    const res = await Promise.all(Array.from({ length: 20 }, (_, i) => client.request('id', [i])));
    res.forEach((r, i) => assert.equal(r, i));
    assert.ok(b.frames.some(isPack), 'client packed');
    assert.ok(a.frames.some(isPack), 'server answered packed');
  } finally { client.destroy(); server.destroy(); }
});

test('pack: a frame holds at most 32 messages; the rest follow in order', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  try {
    for (let i = 0; i < 70; i++) t.send(note(i));
    await until(() => frames.length === 3);
    await sleep(10);
    assert.deepEqual(frames.map((f) => (isPack(f) ? f[KEY].length : 1)), [32, 32, 6]);
    assert.deepEqual(frames.flatMap((f) => f[KEY]).map((m) => m.params[0]), Array.from({ length: 70 }, (_, i) => i));
  } finally { done(); }
});

test('pack: a bulky message (> 8 KiB of strings) is posted on its own, after what was queued', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  try {
    const big = { jsonrpc: '2.0', method: 'echo', params: ['x'.repeat(65536)], id: 1 };
    t.send(note(1));
    t.send(note(2));
    t.send(big);
    t.send(note(3));
    t.send({ jsonrpc: '2.0', result: { blob: new Uint8Array(10000) }, id: 2 });
    await until(() => frames.length === 4);
    await sleep(10);
    assert.deepEqual(frames[0][KEY], [note(1), note(2)]);
    assert.equal(frames[1].params[0].length, 65536);
    assert.deepEqual(frames[2], note(3));  // a lone queued message stays plain
    assert.equal(frames[3].result.blob.length, 10000);
  } finally { done(); }
});

// ---- the snapshot of a queued message against structured clone -----------------
// A queued message is copied when queued (js/pack.js, "Snapshot") and
// structured-cloned when its frame is posted: the other side must receive
// what posting it at once would have given, for any value of a tree's shape
// (a value reached twice is copied twice, as JSON carries it: not generated).
function randomCloneable(r, depth) {
  const k = Math.floor(r() * (depth > 0 ? 16 : 9));
  const s = () => ['', 'a', 'é😀', '__proto__', 'constructor', '0', 'len gth'][Math.floor(r() * 7)];
  switch (k) {
    case 0: return null;
    case 1: return undefined;
    case 2: return r() < 0.5;
    case 3: return [0, -0, NaN, Infinity, 1.5, -7, 2 ** 53][Math.floor(r() * 7)];
    case 4: return s();
    case 5: return BigInt(Math.floor(r() * 1000)) - 500n;
    case 6: return new Date(Math.floor(r() * 2e12));
    case 7: return new Uint8Array([1, 2, 255]).subarray(Math.floor(r() * 2));
    case 8: return /x+/gi;
    case 9: case 10: {  // an array: dense, holey, or long and sparse
      const a = [];
      const n = Math.floor(r() * 5);
      for (let i = 0; i < n; i++) if (r() < 0.8) a[i] = randomCloneable(r, depth - 1);
      if (r() < 0.15) a.length = r() < 0.5 ? 70000 : 2 ** 32 - 1;
      return a;
    }
    case 11: return new Map([[s(), randomCloneable(r, depth - 1)]]);
    case 12: return new Set([randomCloneable(r, 0)]);
    case 13: {  // a null-prototype object
      const o = Object.create(null);
      o[s()] = randomCloneable(r, depth - 1);
      return o;
    }
    default: {
      const o = {};
      for (let n = Math.floor(r() * 4); n > 0; n--) {
        const key = s();
        if (key === '__proto__') Object.defineProperty(o, key, { value: randomCloneable(r, depth - 1), enumerable: true, writable: true, configurable: true });
        else o[key] = randomCloneable(r, depth - 1);
      }
      return o;
    }
  }
}

test('snapshot: a queued message arrives as structured clone would have sent it (seeded, tree-shaped values)', { timeout: 60000 }, async () => {
  const { snapshot } = await import('../../js/pack.js');
  const seed = Number(process.env.WEFT_SNAPSHOT_SEED || (Date.now() % 2 ** 31));
  let x = seed || 1;
  const r = () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) / 2 ** 32; };
  for (let i = 0; i < 3000; i++) {
    const msg = { jsonrpc: '2.0', id: i, method: 'm', params: [randomCloneable(r, 3), randomCloneable(r, 3)] };
    const t0 = performance.now();
    const copy = snapshot(msg, structuredClone);
    assert.ok(performance.now() - t0 < 1000, `value ${i} took ${performance.now() - t0} ms to copy (WEFT_SNAPSHOT_SEED=${seed})`);
    assert.deepStrictEqual(structuredClone(copy), structuredClone(msg), `value ${i} differs (WEFT_SNAPSHOT_SEED=${seed})`);
  }
});

// ---- Proxies (js/pack.js, "Proxies") -------------------------------------------
// JS cannot tell a Proxy from the object it presents, so the snapshot of a
// queued message reads it as that object; a message posted at once is sent
// or refused as its snapshot would be, so that the outcome does not depend on
// whether it was queued.
const proxied = () => ({ jsonrpc: '2.0', method: 'save', params: new Proxy({ name: 'ann', tags: new Proxy(['a', 'b'], {}) }, {}), id: 1 });
const asData = { jsonrpc: '2.0', method: 'save', params: { name: 'ann', tags: ['a', 'b'] }, id: 1 };
const isCloneError = (e) => e?.name === 'DataCloneError';

test('pack: a Proxy over plain data posted at once (pack: false) is sent as the data it presents', T, async () => {
  const { t, frames, done } = rawPair({ pack: false });
  try {
    t.send(proxied());
    await until(() => frames.length === 1);
    assert.deepEqual(frames[0], asData);
  } finally { done(); }
});

test('pack: a Proxy over plain data posted alone while packing is sent as the data it presents', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  const failed = [];
  t.onSendError((m, e) => failed.push(e));
  try {
    t.send(proxied(), true);  // alone: posted at once, not queued
    await until(() => frames.length === 1);
    assert.deepEqual(frames[0], asData);
    assert.deepEqual(failed, []);
  } finally { done(); }
});

test('pack: a Proxy over plain data queued in a frame is sent as the data it presents', T, async () => {
  const { t, frames, done } = rawPair({ pack: true });
  try {
    t.send(proxied());
    t.send(note(2));
    await until(() => frames.length === 1);
    assert.deepEqual(frames[0], { [KEY]: [asData, note(2)] });
  } finally { done(); }
});

test('pack: a Proxy over plain data in a message of more objects than the copy\'s budget (1,024) is sent as that data too, at once or queued', T, async () => {
  const rows = () => new Proxy(Array.from({ length: 2000 }, (_, i) => new Proxy({ i }, {})), {});
  const want = { jsonrpc: '2.0', method: 'rows', params: Array.from({ length: 2000 }, (_, i) => ({ i })) };
  const plainT = rawPair({ pack: false });
  try {
    plainT.t.send({ jsonrpc: '2.0', method: 'rows', params: rows() });
    await until(() => plainT.frames.length === 1);
    assert.deepEqual(plainT.frames[0], want);
  } finally { plainT.done(); }
  const { t, frames, done } = rawPair({ pack: true });
  try {
    t.send({ jsonrpc: '2.0', method: 'rows', params: rows() });
    t.send(note(2));
    await until(() => frames.length === 1);
    assert.deepEqual(frames[0], { [KEY]: [want, note(2)] });
  } finally { done(); }
});

test('pack: a Proxy the snapshot cannot read as plain data (over a Map, revoked) is refused with DataCloneError, at once or queued', T, async () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const bad = [new Proxy(new Map([[1, 2]]), {}), revoked.proxy].map((params) => ({ jsonrpc: '2.0', method: 'n', params }));
  const plainT = rawPair({ pack: false });
  try {
    for (const m of bad) assert.throws(() => plainT.t.send(m), isCloneError);
  } finally { plainT.done(); }
  const { t, frames, done } = rawPair({ pack: true });
  const failed = [];
  t.onSendError((m, e) => failed.push([m, e]));
  try {
    t.send(note(1));
    for (const m of bad) t.send(m);
    t.send(note(3));
    await until(() => failed.length === 2 && frames.length === 2);
    assert.deepEqual(frames, [note(1), note(3)]);
    assert.deepEqual(failed.map(([m]) => m), bad);
    assert.ok(failed.every(([, e]) => isCloneError(e)));
  } finally { done(); }
});

for (const pack of [false, 'auto', true]) {
  test(`pack ${pack}: a call whose params are a Proxy over plain data is answered, alone or among calls in flight`, T, async () => {
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2, { pack }));
    server.method('save', (p) => p);
    const client = new Peer(portTransport(port1, { pack }), { timeout: 0 });
    try {
      assert.deepEqual(await client.request('save', proxied().params), asData.params);  // alone
      const all = [1, 2, 3].map(() => client.request('save', proxied().params));  // queued while packing
      assert.deepEqual(await Promise.all(all), [asData.params, asData.params, asData.params]);
    } finally { client.destroy(); server.destroy(); }
  });

  test(`pack ${pack}: a handler's result that is a Proxy over plain data is sent as that data`, T, async () => {
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2, { pack }));
    server.method('load', () => proxied().params);
    const client = new Peer(portTransport(port1, { pack }), { timeout: 0 });
    try {
      assert.deepEqual(await client.request('load'), asData.params);
      assert.deepEqual(await Promise.all([client.request('load'), client.request('load')]), [asData.params, asData.params]);
    } finally { client.destroy(); server.destroy(); }
  });
}
