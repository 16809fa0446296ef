// The weft-rpc JS API over MessageChannel: client/server, Peer, errors,
// timeouts, cancellation, notifications, destroy, batches, load and leaks.
import { test } from 'node:test';
import { plain } from '../support/wire.mjs';
import { inColdRealm } from '../support/cold-realm.mjs';
import assert from 'node:assert/strict';
import { until } from '../support/until.mjs';
import {
  Peer, JSONRPCClient, JSONRPCServer, RPCError, ErrorCode, portTransport, ready, heapUsed,
} from '../../js/index.js';

const T = { timeout: 15000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function pair(Left = JSONRPCClient, Right = JSONRPCServer, lopts, ropts) {
  const { port1, port2 } = new MessageChannel();
  const a = new Left(portTransport(port1), lopts);
  const b = new Right(portTransport(port2), ropts);
  return [a, b, () => { a.destroy(); b.destroy(); }];
}

test('client/server: results, params by position and name, notifications', T, async () => {
  const [client, server, done] = pair();
  try {
    server.method('add', ([a, b]) => a + b);
    server.method('greet', async ({ name }) => `hi ${name}`);
    server.method('nothing', () => undefined);
    const seen = [];
    server.onNotify('log', (p) => seen.push(p));
    assert.equal(await client.request('add', [2, 3]), 5);
    assert.equal(await client.request('greet', { name: 'weft' }), 'hi weft');
    assert.equal(await client.request('nothing'), null);
    const big = { list: Array.from({ length: 100 }, (_, i) => ({ i, s: 'x'.repeat(i) })), nested: { a: [1, [2, [3]]] } };
    server.method('echo', (p) => p);
    assert.deepEqual(await client.request('echo', big), big);
    client.notify('log', { level: 'info' });
    client.notify('log', ['a']);
    await sleep(20);
    assert.deepEqual(seen, [{ level: 'info' }, ['a']]);
  } finally { done(); }
});

test('handler errors: RPCError keeps code/message/data, anything else is -32603', T, async () => {
  const [client, server, done] = pair();
  try {
    server.method('typed', () => { throw new RPCError(-32042, 'build failed', { diagnostics: [1, 2] }); });
    server.method('asyncTyped', async () => { throw new RPCError(-32005, 'nope'); });
    server.method('plain', () => { throw new TypeError('bad thing'); });
    server.method('string', () => { throw 'just a string'; });
    await assert.rejects(client.request('typed', {}), (e) => e instanceof RPCError && e.code === -32042 && e.message === 'build failed' && e.data.diagnostics[1] === 2);
    await assert.rejects(client.request('asyncTyped', {}), (e) => e.code === -32005 && e.message === 'nope' && e.data === undefined);
    await assert.rejects(client.request('plain', {}), (e) => e.code === ErrorCode.InternalError && /bad thing/.test(e.message));
    await assert.rejects(client.request('string', {}), (e) => e.code === ErrorCode.InternalError);
    await assert.rejects(client.request('missing', {}), (e) => e.code === ErrorCode.MethodNotFound);
    await assert.rejects(client.request('add', 'not params'), (e) => e.code === ErrorCode.InvalidParams);
  } finally { done(); }
});

test('Peer: both sides call each other on one transport', T, async () => {
  const [a, b, done] = pair(Peer, Peer);
  try {
    a.method('whoami', () => 'a');
    b.method('whoami', () => 'b');
    b.method('ask-back', async () => `b heard ${await b.request('whoami')}`);
    assert.equal(await a.request('whoami'), 'b');
    assert.equal(await b.call('whoami'), 'a');
    assert.equal(await a.request('ask-back'), 'b heard a');
  } finally { done(); }
});

test('timeouts: endpoint default and per call, -32001', T, async () => {
  const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, { timeout: 60 });
  try {
    server.method('never', () => new Promise(() => {}));
    const t0 = Date.now();
    await assert.rejects(client.request('never', {}), (e) => e instanceof RPCError && e.code === ErrorCode.Timeout);
    assert.ok(Date.now() - t0 >= 50, 'not early');
    await assert.rejects(client.request('never', {}, { timeout: 20 }), (e) => e.code === ErrorCode.Timeout);
    assert.equal(client.stats().pending, 0);
  } finally { done(); }
});

test('timeout: Infinity (or 0) turns the endpoint default off for one call', T, async () => {
  const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, { timeout: 30 });
  try {
    server.method('late', () => sleep(120).then(() => 'made it'));
    assert.equal(await client.request('late', {}, { timeout: Infinity }), 'made it');
    assert.equal(await client.request('late', {}, { timeout: 0 }), 'made it');
  } finally { done(); }
});

test('retry: the call\'s own timeout (-32001 of its endpoint) is final, as natively (docs/protocol.md); a -32001 the other side answers is retried', T, async () => {
  for (const [lopts, copts] of [[undefined, { timeout: 50 }], [{ timeout: 50 }, {}]]) {
    const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, lopts);
    try {
      let slow = 0, upstream = 0;
      server.method('slow', () => { slow++; return new Promise(() => {}); });
      server.method('upstream', () => {
        if (++upstream < 2) throw new RPCError(ErrorCode.Timeout, 'the upstream timed out');
        return 'ok';
      });
      await assert.rejects(client.request('slow', [], { ...copts, retry: true }),
        (e) => e.code === ErrorCode.Timeout && e.message === 'Request timed out after 50 ms: slow');
      await sleep(400);  // past the first backoff (100 ms): nothing was sent again
      assert.equal(slow, 1);
      assert.equal(await client.request('upstream', [], { ...copts, retry: true }), 'ok');
      assert.equal(upstream, 2);
      assert.equal(client.stats().calls, 0);
    } finally { done(); }
  }
});

test('AbortSignal: the call rejects at once and the handler sees $/cancelRequest', T, async () => {
  const [client, server, done] = pair();
  try {
    let aborted;
    const handlerAborted = new Promise((r) => { aborted = r; });
    server.method('slow', (_p, ctx) => new Promise((resolve) => {
      const t = setTimeout(() => resolve('late'), 5000);
      ctx.signal.addEventListener('abort', () => { clearTimeout(t); aborted(ctx.signal.reason); });
    }));
    const ac = new AbortController();
    const p = client.request('slow', {}, { signal: ac.signal });
    await sleep(20);
    ac.abort();
    await assert.rejects(p, (e) => e.code === ErrorCode.RequestCancelled);
    const reason = await handlerAborted;
    assert.equal(reason.code, ErrorCode.RequestCancelled);
    await sleep(20);
    assert.equal(server.stats().inFlight, 0);
    const pre = new AbortController();
    pre.abort();
    await assert.rejects(client.request('slow', {}, { signal: pre.signal }), (e) => e.code === ErrorCode.RequestCancelled);
  } finally { done(); }
});

// docs/protocol.md "$/cancelRequest": the cancel lets the serving side free
// what it holds for the call, whether or not its handler ever settles.
test('a cancelled request whose handler never settles holds nothing: its serving entry, reply token and the core\'s slot are freed at once', T, async () => {
  await ready;
  const diags = [];
  const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, { timeout: 0 }, { onDiagnostic: (k) => diags.push(k) });
  try {
    const N = 300;
    let started = 0;
    let aborts = [];
    server.method('never', (_p, ctx) => {
      started++;
      aborts.push(new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true })));
      return new Promise(() => {});  // ignores its signal
    });
    const round = async () => {
      started = 0;
      aborts = [];
      const acs = [];
      const calls = [];
      for (let i = 0; i < N; i++) {
        const ac = new AbortController();
        acs.push(ac);
        calls.push(client.request('never', { i }, { signal: ac.signal }));
      }
      await until(() => started === N, 'every handler started');
      for (const ac of acs) ac.abort();
      for (const c of calls) await assert.rejects(c, (e) => e.code === ErrorCode.RequestCancelled);
      await Promise.all(aborts);  // every handler saw its $/cancelRequest
    };
    // Warm-up: tables reach their working size (twice: the peak in flight
    // depends on how the turns fall).
    await round();
    await round();
    const base = heapUsed();
    const tokens = server.serving.length;
    assert.equal(server.serving.filter(Boolean).length, 0);
    for (let r = 0; r < 3; r++) await round();
    assert.equal(server.serving.filter(Boolean).length, 0, 'serving entries');
    assert.equal(server.serving.length, tokens, 'the tokens of cancelled requests are reused');
    assert.equal(server.stats().inFlight, 0);
    assert.equal(server.stats().payloads, 0);
    // Flat, not byte-exact (a hash table may still reach a new size); a
    // token kept per cancelled call would be kilobytes.
    assert.ok(heapUsed() - base <= 256, `wasm heap ${heapUsed()} > baseline ${base} + 256`);
    assert.deepEqual(diags, [], 'letting go of a cancelled request is no late reply');
  } finally { done(); }
});

test('a cancelled handler that settles after its token went to another request answers nothing: not that request, not the sink, no progress', T, async () => {
  await ready;
  const diags = [];
  const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, { timeout: 0 }, { onDiagnostic: (k) => diags.push(k) });
  try {
    const held = [];
    server.method('held', (_p, ctx) => new Promise((resolve, reject) => {
      held.push({ ctx, resolve, reject, token: ctx.token, aborted: new Promise((r) => ctx.signal.addEventListener('abort', r)) });
    }));
    server.method('echo', (p) => p);
    const ac = new AbortController();
    const stale = client.request('held', ['stale'], { signal: ac.signal });
    await until(() => held.length === 1, 'the first handler started');
    ac.abort();
    await assert.rejects(stale, (e) => e.code === ErrorCode.RequestCancelled);
    await held[0].aborted;
    // The second call is a stream asking for progress: a stale chunk or
    // progress value would reach it.
    let fresh = null;
    const progress = [];
    const chunks = [];
    const s = client.stream('held', ['fresh'], { onProgress: (v) => progress.push(v) });
    const read = (async () => { for await (const c of s) chunks.push(c); })();
    const second = s.result.then((v) => (fresh = { v }), (e) => (fresh = { e }));
    await until(() => held.length === 2, 'the second handler started');
    assert.ok(held[1].ctx.sink.streaming && held[1].ctx.wantsProgress);
    assert.equal(held[1].token, held[0].token, 'the second request got the cancelled one\'s token');
    held[0].ctx.progress('stale progress');
    await assert.rejects(held[0].ctx.sink.write('stale chunk'), (e) => e.code === ErrorCode.Closed);
    held[0].resolve('stale answer');
    held[0].reject(new Error('stale error'));
    // Messages keep their order: an answer sent for the stale handler would
    // have reached the client before this one.
    assert.deepEqual(await client.request('echo', ['after']), ['after']);
    assert.equal(fresh, null, 'the second request is still unanswered');
    held[1].resolve('fresh answer');
    await second;
    await read;
    assert.deepEqual(fresh, { v: 'fresh answer' });
    assert.deepEqual(chunks, []);
    assert.deepEqual(progress, []);
    assert.equal(server.serving.filter(Boolean).length, 0);
    assert.equal(server.stats().inFlight, 0);
    assert.deepEqual(diags, ['LateReply'], 'the stale answer, dropped, is reported as a late one');
  } finally { done(); }
});

test('a handler that answered while its chunks wait for credit is done: a cancel then touches no later request on its token', T, async () => {
  await ready;
  const diags = [];
  const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, { timeout: 0 }, { onDiagnostic: (k) => diags.push(k) });
  try {
    let answered, tokenA;
    const aAnswered = new Promise((r) => { answered = r; });
    server.method('chunks', (_p, ctx) => {
      tokenA = ctx.token;
      for (const v of [1, 2, 3]) ctx.sink.write(v).catch(() => {});  // credit 1: two wait in the core
      setTimeout(answered, 0);  // after the answer below has reached the core
      return Promise.resolve('answer A');
    });
    const held = [];
    server.method('held', (_p, ctx) => new Promise((resolve) => {
      const h = { resolve, token: ctx.token, aborted: false };
      ctx.signal.addEventListener('abort', () => { h.aborted = true; });
      held.push(h);
    }));
    server.method('echo', (p) => p);
    const ac = new AbortController();
    const s = client.stream('chunks', [], { highWaterMark: 1, signal: ac.signal });
    s.result.catch(() => {});
    await aAnswered;
    const b = client.request('held', ['B']);
    await until(() => held.length === 1, 'B served');
    assert.equal(held[0].token, tokenA, 'B got the answered request\'s token');
    ac.abort();  // $/cancelRequest for A, whose chunks still wait
    assert.deepEqual(await client.request('echo', ['after the cancel']), ['after the cancel']);
    assert.equal(held[0].aborted, false, 'B was not cancelled');
    held[0].resolve('answer B');
    assert.equal(await b, 'answer B');
    assert.deepEqual(diags, []);
  } finally { done(); }
});

test('destroy() rejects every pending call at once with -32002', T, async () => {
  const [client, server, done] = pair();
  try {
    server.method('never', () => new Promise(() => {}));
    const calls = [client.request('never', {}), client.request('never', [1]), client.request('never')];
    await sleep(10);
    client.destroy();
    for (const c of calls) await assert.rejects(c, (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
    await assert.rejects(client.request('never', {}), (e) => e.code === ErrorCode.Closed);
  } finally { done(); }
});

test('a closed transport rejects pending calls at once', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1));
  const server = new JSONRPCServer(portTransport(port2));
  server.method('never', () => new Promise(() => {}));
  const p = client.request('never', {});
  await sleep(10);
  port2.close();  // the other side goes away: port1 gets 'close'
  await assert.rejects(p, (e) => e.code === ErrorCode.Closed);
  client.destroy(); server.destroy();
});

test('batch: one JSON-RPC batch on the wire, each call settles on its own', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1));
  const wire = [];
  port2.addEventListener('message', plain((d) => wire.push(d)));
  const server = new JSONRPCServer(portTransport(port2));
  try {
    const logged = [];
    server.method('add', ([a, b]) => a + b);
    server.method('fail', () => { throw new RPCError(-32010, 'no'); });
    server.onNotify('log', (p) => logged.push(p));
    const [a, b, c, d] = client.batch([
      { method: 'add', params: [1, 2] },
      { method: 'fail', params: {} },
      { method: 'log', params: ['x'], notification: true },
      { method: 'add', params: [40, 2] },
    ]);
    assert.equal(await a, 3);
    await assert.rejects(b, (e) => e.code === -32010);
    assert.equal(await c, undefined);
    assert.equal(await d, 42);
    assert.equal(wire.length, 1);
    assert.ok(Array.isArray(wire[0]) && wire[0].length === 4);
    assert.deepEqual(wire[0][0], { jsonrpc: '2.0', method: 'add', params: [1, 2], id: 1 });
    assert.deepEqual(logged, [['x']]);
  } finally { client.destroy(); server.destroy(); }
});

test('batch: an entry whose params are neither array nor object refuses the batch whole; the error names the entry', T, async () => {
  const [client, server, done] = pair();
  try {
    let served = 0;
    server.method('save', () => ++served);
    const settled = await Promise.allSettled(client.batch([{ method: 'save', params: [1] }, { method: 'save', params: 7 }]));
    for (const s of settled) {
      assert.equal(s.reason.code, ErrorCode.InvalidParams);
      assert.equal(s.reason.message, 'Invalid params: batch entry 1 (save): params must be an array or an object');
    }
    assert.equal(await client.request('save', []), 1);  // nothing of the batch was sent
  } finally { done(); }
});

// An AbortSignal stand-in that counts its listeners.
function countingSignal() {
  const listeners = new Set();
  return {
    aborted: false, reason: undefined, listeners,
    addEventListener(type, fn) { if (type === 'abort') listeners.add(fn); },
    removeEventListener(type, fn) { if (type === 'abort') listeners.delete(fn); },
    abort(reason) { this.aborted = true; this.reason = reason; for (const fn of [...listeners]) fn(); listeners.clear(); },
  };
}

test('batch: an already aborted signal sends nothing and rejects every call with -32800', T, async () => {
  await ready;
  const sent = [];
  const client = new JSONRPCClient({ send: (m) => sent.push(m), onMessage() {}, destroy() {} });
  try {
    const ac = new AbortController();
    ac.abort();
    const [a, n, b] = client.batch([{ method: 'x' }, { method: 'n', notification: true }, { method: 'y', params: [1] }], { signal: ac.signal });
    await assert.rejects(a, (e) => e instanceof RPCError && e.code === ErrorCode.RequestCancelled);
    await assert.rejects(b, (e) => e instanceof RPCError && e.code === ErrorCode.RequestCancelled);
    await assert.rejects(n, (e) => e instanceof RPCError && e.code === ErrorCode.RequestCancelled);  // not sent either
    assert.deepEqual(sent, []);
    assert.deepEqual(client.stats(), { ...client.stats(), pending: 0, calls: 0, payloads: 0 });
  } finally { client.destroy(); }
});

test('batch: the abort listener is removed once every call of the batch has settled', T, async () => {
  const [client, server, done] = pair();
  try {
    server.method('echo', (p) => p);
    const signal = countingSignal();
    const ps = client.batch([{ method: 'echo', params: [1] }, { method: 'echo', params: [2] }], { signal });
    assert.equal(signal.listeners.size, 1, 'one listener for the batch');
    assert.deepEqual(await Promise.all(ps), [[1], [2]]);
    assert.equal(signal.listeners.size, 0, 'removed after the last call settled');
  } finally { done(); }
});

test('batch: aborting cancels the calls still pending', T, async () => {
  const [client, server, done] = pair();
  try {
    let started = 0;
    let bothStarted;
    const serving = new Promise((r) => { bothStarted = r; });
    server.method('never', () => { if (++started === 2) bothStarted(); return new Promise(() => {}); });
    const ac = new AbortController();
    const [a, b] = client.batch([{ method: 'never' }, { method: 'never' }], { signal: ac.signal });
    await serving;  // both calls are being served on the other side
    ac.abort();
    await assert.rejects(a, (e) => e.code === ErrorCode.RequestCancelled);
    await assert.rejects(b, (e) => e.code === ErrorCode.RequestCancelled);
    assert.equal(client.stats().pending, 0);
  } finally { done(); }
});

test('calls made before the module has loaded are queued, never dropped', T, async () => {
  const msg = await inColdRealm(`async (m) => {
    const { port1, port2 } = new MessageChannel();
    const client = new m.JSONRPCClient(m.portTransport(port1));
    const server = new m.JSONRPCServer(m.portTransport(port2));
    const early = client.request('add', [1, 2]);   // before the wasm exists
    port1.postMessage({ jsonrpc: '2.0', method: 'add', params: [5, 5], id: 'raw' }); // arrives early at the server
    server.method('add', ([a, b]) => a + b);
    const got = [];
    port1.addEventListener('message', (ev) => got.push(ev.data));
    const r = await early;
    await new Promise((res) => setTimeout(res, 50));
    client.destroy(); server.destroy();
    return { r, got: got.filter((x) => x.id === 'raw') };
  }`);
  assert.equal(msg.r, 3);
  assert.deepEqual(msg.got, [{ jsonrpc: '2.0', result: 10, id: 'raw' }]);
});

test('10,000 concurrent requests complete; pending table and wasm heap return to baseline', T, async () => {
  await ready;
  const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, { timeout: 30000 });
  try {
    server.method('inc', ([n]) => n + 1);
    server.method('later', async ({ n }) => { await null; return { n }; });
    const round = async () => {
      const ps = [];
      for (let i = 0; i < 10000; i++) ps.push(i % 2 ? client.request('inc', [i]) : client.request('later', { n: i }));
      const rs = await Promise.all(ps);
      for (let i = 0; i < 10000; i++) assert.deepEqual(rs[i], i % 2 ? i + 1 : { n: i });
    };
    // Warm-up: tables and buffers reach their working size (the peak in
    // flight depends on how the turns fall, so twice).
    await round();
    await round();
    await sleep(10);
    const base = heapUsed();
    await round();
    await round();
    await sleep(10);
    for (const ep of [client, server]) {
      const s = ep.stats();
      assert.equal(s.pending, 0);
      assert.equal(s.inFlight, 0);
      assert.equal(s.calls, 0);
      assert.equal(s.payloads, 0);
    }
    assert.ok(heapUsed() <= base, `heap ${heapUsed()} > baseline ${base}`);
  } finally { done(); }
});

test('method(): a ParamSpec the core cannot read throws a TypeError naming what is wrong; the method refuses rather than serve unchecked', async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new Peer(portTransport(port2));
  const client = new Peer(portTransport(port1));
  try {
    const refused = (spec, why) => assert.throws(() => server.method('scale', ({ x }) => x * 2, spec),
      (e) => e instanceof TypeError && e.message === `method "scale": ParamSpec: ${why}`);
    refused({ params: [{ name: 'x', type: 'float' }] },
      'params[0].type "float" is not one of any, null, boolean, integer, number, string, array, object');
    refused({ params: 'x' }, 'params must be an array');
    refused({ params: [7] }, 'params[0] must be a name or {name, type, required}');
    refused({ params: [{ type: 'number' }] }, 'params[0] has no name');
    refused({ param: ['x'] }, 'unknown member "param"');
    refused({ byName: 1 }, 'byName must be a boolean');
    await assert.rejects(client.request('scale', { x: 'abc' }), (e) => e.code === ErrorCode.InternalError &&
      e.message === 'Internal error: method "scale" has an invalid ParamSpec: byName must be a boolean');
    server.method('scale', ({ x }) => x * 2, { params: [{ name: 'x', type: 'number' }] });
    assert.equal(await client.request('scale', { x: 2 }), 4);
  } finally { client.destroy(); server.destroy(); }
});

test('JSONRPCServer: a call, which could never be answered (responses are ignored), is refused at once', async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2));
  const other = new Peer(portTransport(port1));
  other.method('up', () => 'never seen');
  try {
    await assert.rejects(server.request('up'), (e) => e.code === ErrorCode.InvalidRequest && /ignores responses/.test(e.message));
    await assert.rejects(server.batch([{ method: 'up' }])[0], (e) => e.code === ErrorCode.InvalidRequest);
    assert.equal(server.stats().pending, 0);
  } finally { other.destroy(); server.destroy(); }
});

// JSON-RPC 2.0 §4: "method" is a String; the empty string is one.
for (const pack of [false, true]) {
  test(`pack ${pack}: the empty string is a method name for request, notify and batch, as for method()`, T, async () => {
    const [client, server, done] = pair(JSONRPCClient, JSONRPCServer, { pack }, { pack });
    try {
      const seen = [];
      server.method('', (p) => { seen.push(p); return ['served', p]; });
      assert.deepEqual(await client.request('', [1]), ['served', [1]]);
      client.notify('', { n: 2 });
      assert.deepEqual(await Promise.all(client.batch([{ method: '', params: [3] }])), [['served', [3]]]);
      assert.deepEqual(seen, [[1], { n: 2 }, [3]]);  // in order: the notification too
    } finally { done(); }
  });
}

test('one handler per name: onNotify() replaces method() of that name (a request is then -32601), and method() replaces onNotify()', T, async () => {
  const [client, server, done] = pair();
  try {
    const seen = [];
    server.method('x', () => 'method');
    let noted;
    const arrived = new Promise((r) => { noted = r; });
    server.onNotify('x', (p) => { seen.push(p); noted(); });
    await assert.rejects(client.request('x'), (e) => e.code === ErrorCode.MethodNotFound && e.message === 'Method not found: x');
    client.notify('x', [1]);
    await arrived;
    server.method('x', (p) => { seen.push(['method', p]); return 'method'; });
    client.notify('x', [2]);
    assert.equal(await client.request('x', [3]), 'method');
    assert.deepEqual(seen, [[1], ['method', [2]], ['method', [3]]]);
  } finally { done(); }
});

test('an endpoint without a transport, or a batch that is not an array, is a TypeError saying what was expected', () => {
  for (const Ctor of [Peer, JSONRPCClient, JSONRPCServer])
    for (const t of [undefined, null, {}, { send() {} }])
      assert.throws(() => new Ctor(t), { name: 'TypeError', message: /expected a transport: \{ send, onMessage \}/ });
  const { port1 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1));
  try {
    for (const entries of [null, undefined, { method: 'x' }])
      assert.throws(() => client.batch(entries), { name: 'TypeError', message: 'batch(): expected an array of entries' });
  } finally { client.destroy(); port1.close(); }
});
