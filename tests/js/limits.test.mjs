// Rate limit, graceful drain and opt-in retry in weft-rpc (docs/protocol.md),
// over an in-process MessageChannel; the rules themselves are the core's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONRPCClient, JSONRPCServer, ErrorCode, RPCError, portTransport } from '../../js/index.js';

const T = { timeout: 20000 };

// Simulated time: moves only when the test says so.
function simClock() {
  const c = { t: 0, timers: [] };
  c.now = () => c.t;
  c.setTimeout = (fn, ms) => { const x = { at: c.t + ms, fn }; c.timers.push(x); return x; };
  c.clearTimeout = (x) => { const i = c.timers.indexOf(x); if (i >= 0) c.timers.splice(i, 1); };
  c.advance = (ms) => {
    c.t += ms;
    for (const x of c.timers.filter((y) => y.at <= c.t)) { c.timers.splice(c.timers.indexOf(x), 1); x.fn(); }
  };
  return c;
}

function pair(copts, sopts) {
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1), copts);
  const server = new JSONRPCServer(portTransport(port2), sopts);
  return { client, server, done: () => { client.destroy(); server.destroy(); } };
}

test('the rate limit answers -32004 with limit, window and retry_after', T, async () => {
  const clock = simClock();
  const { client, server, done } = pair({}, { clock, limits: { rateLimit: 2, rateWindow: 1000 } });
  try {
    server.method('ping', () => 'pong');
    assert.equal(await client.request('ping'), 'pong');
    assert.equal(await client.request('ping'), 'pong');
    await assert.rejects(client.request('ping'), (e) => e instanceof RPCError && e.code === ErrorCode.RateLimited &&
      e.data.limit === 2 && e.data.window === 1000 && e.data.retry_after === 500);
    clock.advance(500);
    assert.equal(await client.request('ping'), 'pong');
  } finally { done(); }
});

test('a draining server announces it, refuses new requests -32005, finishes those in flight', T, async () => {
  const notices = [];
  const { client, server, done } = pair({ onDrain: (n) => notices.push(n) });
  try {
    let finish;
    server.method('slow', () => new Promise((r) => { finish = r; }));
    server.method('ping', () => 'pong');
    const slow = client.request('slow');
    while (!finish) await new Promise((r) => setImmediate(r));
    server.drain({ reason: 'reload', downtime: 2000, reconnectAfter: 300 });
    while (notices.length === 0) await new Promise((r) => setImmediate(r));
    assert.deepEqual(notices, [{ reason: 'reload', downtime: 2000, reconnectAfter: 300 }]);
    await assert.rejects(client.request('ping'), (e) => e.code === ErrorCode.Unavailable &&
      e.data.retry_after === 300 && e.data.reason === 'reload');
    finish('done');
    assert.equal(await slow, 'done');
    assert.equal(server.stats().inFlight, 0);
  } finally { done(); }
});

test('retry: opt-in, backs off, stops after a success; errors that are not retryable are not retried', T, async () => {
  const clock = simClock();
  const { client, server, done } = pair({ clock });
  try {
    let calls = 0;
    server.method('flaky', () => {
      if (++calls < 3) throw new RPCError(ErrorCode.Overloaded, 'busy');
      return 'ok';
    });
    let bad = 0;
    server.method('bad', () => { bad++; throw new RPCError(ErrorCode.InvalidParams, 'no'); });
    const p = client.request('flaky', [], { retry: true });
    // Each failed attempt waits for its backoff on the (simulated) clock.
    while (calls < 3) {
      await new Promise((r) => setImmediate(r));
      clock.advance(300);
    }
    assert.equal(await p, 'ok');
    assert.equal(calls, 3);
    await assert.rejects(client.request('bad', [], { retry: true }), (e) => e.code === ErrorCode.InvalidParams);
    assert.equal(bad, 1);
    calls = 0;
    await assert.rejects(client.request('flaky', []), (e) => e.code === ErrorCode.Overloaded);  // no retry asked
    assert.equal(calls, 1);
  } finally { done(); }
});

test('retry gives up after 5 attempts', T, async () => {
  const clock = simClock();
  const { client, server, done } = pair({ clock });
  try {
    let calls = 0;
    server.method('down', () => { calls++; throw new RPCError(ErrorCode.Overloaded, 'busy'); });
    const p = client.request('down', [], { retry: true });
    let settled = false;
    p.then(() => {}, () => {}).then(() => { settled = true; });
    while (!settled) {
      await new Promise((r) => setImmediate(r));
      clock.advance(1000);
    }
    await assert.rejects(p, (e) => e.code === ErrorCode.Overloaded);
    assert.equal(calls, 5);
  } finally { done(); }
});

test('rpc.handshake agrees on capabilities, gates streams, refuses another major version', T, async () => {
  const { client, server, done } = pair({}, { handshake: { capabilities: ['progress', 'drain'], session: 's-1' } });
  try {
    server.method('count', async (_p, ctx) => { await ctx.sink.write(1); return 1; });
    const agreed = await client.handshake({ capabilities: ['streams', 'progress'] });
    assert.deepEqual(agreed.capabilities, ['progress']);
    assert.equal(agreed.session, 's-1');
    assert.equal(agreed.version, '1.0');
    assert.ok(agreed.limits.max_in_flight > 0);
    await assert.rejects(client.stream('count').result, (e) => e.code === ErrorCode.InvalidRequest &&
      /streams were not agreed/.test(e.message));
    const { client: c2, server: s2, done: d2 } = pair({}, { handshake: { version: '1.0' } });
    try {
      await assert.rejects(c2.handshake({ version: '2.1' }), (e) => e.code === ErrorCode.VersionMismatch);
    } finally { d2(); }
  } finally { done(); }
});

test('rpc.handshake: the JavaScript build offers and agrees on metrics, never on compression', T, async () => {
  // docs/protocol.md "Metrics", "Compression": compression is native-only;
  // metrics are measured with the endpoint's clock. The server side records
  // the offer it receives.
  const { client, server, done } = pair({}, {});
  try {
    let offered;
    server.method('rpc.handshake', (p) => {
      offered = p;
      return { version: '1.0', capabilities: p.capabilities, compression_used: 'zstd' };
    });
    const agreed = await client.handshake({ capabilities: ['streams', 'metrics', 'compression'] });
    assert.deepEqual(offered.capabilities, ['streams', 'metrics']);
    assert.equal(offered.compression_preference, undefined);
    assert.deepEqual(agreed.capabilities, ['streams', 'metrics']);
    assert.equal(agreed.compression_used, undefined);
  } finally { done(); }
  const { client: c2, server: s2, done: d2 } = pair({}, { handshake: { capabilities: ['streams', 'metrics', 'compression'] } });
  try {
    // A JS server measures with its clock, and has no zstd: metrics only.
    const raw = await c2.request('rpc.handshake', { version: '1.0', capabilities: ['metrics', 'compression'],
      compression_preference: ['zstd'] });
    assert.deepEqual(raw.capabilities, ['metrics']);
    assert.equal(raw.compression_used, undefined);
  } finally { d2(); }
});

// A limit is a count: Infinity or a value past 32 bits means "as many as the
// core can count", never a limit of 0 (the WebAssembly build's size_t is 32
// bits; the value is clamped, not wrapped).
for (const name of ['maxInFlight', 'maxPending', 'maxBatch']) {
  test(`limits.${name} of Infinity or 2^32 is no limit, not a limit of 0`, T, async () => {
    for (const n of [Infinity, 2 ** 32, 2 ** 40 + 0.5]) {
      const { client, server, done } = pair({ limits: { [name]: n } }, { limits: { [name]: n } });
      try {
        server.method('echo', (p) => p);
        assert.deepEqual(await client.request('echo', [1]), [1]);
        assert.deepEqual(await Promise.all(client.batch([{ method: 'echo', params: [2] }, { method: 'echo', params: [3] }])),
          [[2], [3]]);
      } finally { done(); }
    }
  });
}

test('a timeout of a fraction of a millisecond rounds up: the call is not due at once', T, async () => {
  const clock = simClock();
  const { client, server, done } = pair({ clock }, {});
  try {
    server.method('later', () => new Promise(() => {}));
    server.method('ping', () => 1);
    const p = client.request('later', [], { timeout: 0.5 });
    const settled = p.then(() => 'resolved', (e) => e.message);
    assert.equal(await client.request('ping'), 1); // 'later' has gone out and waits
    clock.advance(0);
    assert.equal(await Promise.race([settled, 'pending']), 'pending');
    clock.advance(1);
    assert.equal(await settled, 'Request timed out after 1 ms: later');
  } finally { done(); }
});
