// Streamed results and progress in weft-rpc (docs/streams.md), over an
// in-process MessageChannel: chunks in order with the final answer, credit
// bounding what is in flight, break/abort/timeout cancelling (no chunk
// delivered after an abort; tests/js/stream-flow.test.mjs: the credit's
// steps, timeouts and binary over WebSocket), refusal when no stream
// was opened, progress only when asked, transferred buffers, and 1 GiB
// through a slow consumer with memory and the wasm heap bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONRPCClient, JSONRPCServer, ErrorCode, RPCError, portTransport, heapUsed } from '../../js/index.js';
import { fromTuple } from '../support/wire.mjs';
import { inColdRealm } from '../support/cold-realm.mjs';

const T = { timeout: 60000 };

function pair(copts, sopts) {
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1), copts);
  const server = new JSONRPCServer(portTransport(port2), sopts);
  return { client, server, done: () => { client.destroy(); server.destroy(); } };
}

// A producer writing n chunks (their index), awaiting room after each.
function serveCount(server, log = []) {
  server.method('count', async ({ n }, ctx) => {
    for (let i = 0; i < n; i++) {
      await ctx.sink.write(i, { final: i === n - 1, total: n });
      log.push(i);
    }
    return { chunks: n };
  });
}

const turn = () => new Promise((r) => setImmediate(r));

test('a stream delivers every chunk in order, then the answer', T, async () => {
  const { client, server, done } = pair();
  try {
    serveCount(server);
    const s = client.stream('count', { n: 50 });
    const got = [];
    for await (const c of s) got.push(c);
    assert.deepEqual(got, Array.from({ length: 50 }, (_, i) => i));
    assert.deepEqual(await s.result, { chunks: 50 });
    assert.equal(client.stats().pending, 0);
    assert.equal(server.stats().inFlight, 0);
  } finally { done(); }
});

test('the sender never has more chunks in flight than the highWaterMark', T, async () => {
  const { client, server, done } = pair();
  try {
    const written = [];
    serveCount(server, written);
    const s = client.stream('count', { n: 40 }, { highWaterMark: 4 });
    let taken = 0;
    let most = 0;
    for await (const c of s) {
      assert.equal(c, taken);
      taken++;
      // Written-and-resolved minus taken: what was in flight or buffered.
      most = Math.max(most, written.length - taken);
      for (let i = 0; i < 3; i++) await turn();  // a slow consumer
    }
    assert.equal(taken, 40);
    assert.ok(most <= 4, `at most the credit in flight, saw ${most}`);
  } finally { done(); }
});

test('break out of for await cancels the call; the handler sees its signal abort', T, async () => {
  const { client, server, done } = pair();
  try {
    let aborted;
    const seen = new Promise((r) => { aborted = r; });
    let writeError = null;
    server.method('forever', async (_p, ctx) => {
      ctx.signal.addEventListener('abort', () => aborted(ctx.signal.reason));
      try {
        for (let i = 0; ; i++) await ctx.sink.write(i);
      } catch (e) { writeError = e; }
      return 'stopped';
    });
    const s = client.stream('forever', undefined, { highWaterMark: 2 });
    for await (const c of s) if (c === 5) break;
    const reason = await seen;
    assert.equal(reason.code, ErrorCode.RequestCancelled);
    await assert.rejects(s.result, (e) => e instanceof RPCError && e.code === ErrorCode.RequestCancelled);
    while (!writeError) await turn();
    assert.equal(writeError.code, ErrorCode.RequestCancelled);
    assert.equal(client.stats().pending, 0);
  } finally { done(); }
});

test('a stream whose timeout passes is cancelled on the other side: the handler stops, its maxInFlight slot is freed', T, async () => {
  const { client, server, done } = pair(undefined, { limits: { maxInFlight: 1 } });
  try {
    let aborted;
    const seen = new Promise((r) => { aborted = r; });
    let writeError = null;
    server.method('ping', () => 'pong');
    server.method('rows', async (_p, ctx) => {
      ctx.signal.addEventListener('abort', () => aborted(ctx.signal.reason));
      try {
        for (let i = 0; ; i++) await ctx.sink.write(i);
      } catch (e) { writeError = e; }
      return 'stopped';
    });
    const s = client.stream('rows', undefined, { highWaterMark: 2, timeout: 50 });
    assert.deepEqual(await s.next(), { value: 0, done: false });  // then consume nothing more
    await assert.rejects(s.result, (e) => e instanceof RPCError && e.code === ErrorCode.Timeout);
    assert.equal((await seen).code, ErrorCode.RequestCancelled);
    while (!writeError) await turn();
    assert.equal(writeError.code, ErrorCode.RequestCancelled);
    while (server.stats().inFlight !== 0) await turn();
    assert.equal(await client.request('ping'), 'pong');  // the one slot is free again
  } finally { done(); }
});

test('an AbortSignal cancels a stream: no chunk after the abort, though some were buffered; the iteration rejects -32800', T, async () => {
  const { client, server, done } = pair();
  try {
    const written = [];
    serveCount(server, written);
    server.method('ping', () => 'pong');
    const ac = new AbortController();
    const s = client.stream('count', { n: 1000 }, { signal: ac.signal, highWaterMark: 4 });
    const got = [];
    await assert.rejects((async () => {
      for await (const c of s) {
        got.push(c);
        if (c !== 3) continue;
        while (written.length < 6) await turn();  // chunks 4 and 5 sent…
        assert.equal(await client.request('ping'), 'pong');  // …and arrived before the answer
        ac.abort();
      }
    })(), (e) => e.code === ErrorCode.RequestCancelled);
    assert.deepEqual(got, [0, 1, 2, 3]);
  } finally { done(); }
});

test('a caller that opened no stream gets no chunks: write rejects -32600', T, async () => {
  const { client, server, done } = pair();
  try {
    let streaming, error;
    server.method('m', async (_p, ctx) => {
      streaming = ctx.sink.streaming;
      try { await ctx.sink.write(1); } catch (e) { error = e; }
      return 'plain';
    });
    assert.equal(await client.request('m'), 'plain');
    assert.equal(streaming, false);
    assert.equal(error.code, ErrorCode.InvalidRequest);
  } finally { done(); }
});

test('progress reaches the caller only when it asked for it', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const seenOnWire = [];
  const inner = portTransport(port2);
  const spy = { ...inner, send(m, alone, transfer) { seenOnWire.push(m); inner.send(m, alone, transfer); } };
  const client = new JSONRPCClient(portTransport(port1), { });
  const server = new JSONRPCServer(spy);
  try {
    let wanted = [];
    server.method('work', async (_p, ctx) => {
      wanted.push(ctx.wantsProgress);
      ctx.progress({ done: 1 });
      ctx.progress({ done: 2 });
      return 'ok';
    });
    assert.equal(await client.request('work'), 'ok');
    const values = [];
    assert.equal(await client.request('work', undefined, { onProgress: (v) => values.push(v) }), 'ok');
    assert.deepEqual(wanted, [false, true]);
    assert.deepEqual(values, [{ done: 1 }, { done: 2 }]);
    const progress = seenOnWire.filter((m) => m.method === '$/progress');
    assert.equal(progress.length, 2, 'sent only for the call that asked');
    assert.deepEqual(progress[0].params, { token: 2, value: { done: 1 } });
    assert.equal(server.stats().payloads, 0, 'values nobody asked for are released');
  } finally { client.destroy(); server.destroy(); }
});

test('progress restarts the timeout only with progressResetsTimeout', T, async () => {
  // A simulated clock: time moves only when the test says so.
  let now = 0;
  const timers = [];
  const clock = {
    now: () => now,
    setTimeout: (fn, ms) => { const t = { at: now + ms, fn }; timers.push(t); return t; },
    clearTimeout: (t) => { const i = timers.indexOf(t); if (i >= 0) timers.splice(i, 1); },
  };
  const advance = (t) => {
    now = t;
    for (const x of timers.filter((x) => x.at <= now)) { timers.splice(timers.indexOf(x), 1); x.fn(); }
  };
  for (const resets of [false, true]) {
    now = 0;
    timers.length = 0;
    const { client, server, done } = pair({ clock, timeout: 100 });
    try {
      let ctxOf;
      const started = new Promise((r) => { ctxOf = r; });
      server.method('work', (_p, ctx) => new Promise(() => ctxOf(ctx)));
      const values = [];
      const p = client.request('work', undefined, { onProgress: (v) => values.push(v), progressResetsTimeout: resets });
      p.catch(() => {});
      const ctx = await started;
      now = 80;
      ctx.progress(0.5);
      while (values.length === 0) await turn();
      advance(120);
      const state = await Promise.race([p.then(() => 'ok', (e) => e.code), turn().then(() => 'pending')]);
      assert.equal(state, resets ? 'pending' : ErrorCode.Timeout);
      advance(181);
      await assert.rejects(p, (e) => e.code === ErrorCode.Timeout);
    } finally { done(); }
  }
});

test('a whole-buffer Uint8Array chunk is transferred, not copied', T, async () => {
  const { client, server, done } = pair();
  try {
    let sent;
    server.method('bytes', async (_p, ctx) => {
      sent = new Uint8Array(1024).fill(7);
      await ctx.sink.write(sent);
      const part = new Uint8Array(new ArrayBuffer(64), 0, 16).fill(1);
      await ctx.sink.write(part);  // a view of part of a buffer: copied
      assert.equal(part.byteLength, 16);
      return 2;
    });
    const got = [];
    for await (const c of client.stream('bytes')) got.push(c);
    assert.equal(sent.byteLength, 0, 'the writer gave its buffer up');
    assert.ok(got[0] instanceof Uint8Array);
    assert.equal(got[0].byteLength, 1024);
    assert.equal(got[0][1023], 7);
    assert.equal(got[1].byteLength, 16);
  } finally { done(); }
});

test('1 GiB through a deliberately slow consumer keeps memory bounded; cancel frees everything', T, async () => {
  const { client, server, done } = pair();
  try {
    const CHUNK = 64 * 1024, CHUNKS = 16 * 1024;  // 1 GiB
    server.method('gib', async (_p, ctx) => {
      for (let i = 0; i < CHUNKS; i++) await ctx.sink.write(new Uint8Array(CHUNK).fill(i & 255));
      return CHUNKS;
    });
    const heap0 = heapUsed();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0, bytes = 0, n = 0;
    const s = client.stream('gib', undefined, { highWaterMark: 8, timeout: 0 });
    for await (const c of s) {
      assert.equal(c[CHUNK - 1], n & 255);
      bytes += c.byteLength;
      if (++n % 64 === 0) {
        await turn();  // slow: it yields to the event loop between chunks
        peak = Math.max(peak, process.memoryUsage().rss);
      }
    }
    assert.equal(bytes, CHUNK * CHUNKS);
    assert.equal(await s.result, CHUNKS);
    assert.ok(peak - rss0 < 256 * 1024 * 1024, `RSS grew ${((peak - rss0) / 2 ** 20).toFixed(0)} MiB for 1 GiB sent`);
    assert.equal(server.stats().payloads, 0);
    assert.equal(client.stats().pending, 0);

    // Cancel mid-stream: the producer's queue and handles are freed.
    const s2 = client.stream('gib', undefined, { highWaterMark: 8 });
    let k = 0;
    for await (const _c of s2) if (++k === 100) break;
    await assert.rejects(s2.result, (e) => e.code === ErrorCode.RequestCancelled);
    while (server.stats().inFlight > 0 || server.stats().payloads > 0) await turn();
    assert.ok(heapUsed() - heap0 < 256 * 1024, `wasm heap back near its baseline (+${heapUsed() - heap0} B)`);
  } finally { done(); }
});

// -- max_stream_chunk (docs/streams.md "Limits"): the core decides, on both sides --
const BIG = 'x'.repeat(5_000_000);  // 5 MB: over the 1,000,000-byte default

test('a chunk written larger than max_stream_chunk rejects -32600, nothing is sent, and smaller chunks still go', T, async () => {
  const { client, server, done } = pair();
  try {
    const refused = [];
    server.method('big', async (_p, ctx) => {
      for (const v of [BIG, new Uint8Array(5_000_000), { list: [BIG] }])
        await ctx.sink.write(v).catch((e) => refused.push(e));
      await ctx.sink.write('small', { final: true });
      return 'done';
    });
    const got = [];
    const s = client.stream('big');
    for await (const c of s) got.push(c);
    assert.deepEqual(got, ['small']);
    assert.equal(await s.result, 'done');
    assert.equal(refused.length, 3);
    for (const e of refused) {
      assert.ok(e instanceof RPCError);
      assert.equal(e.code, ErrorCode.InvalidRequest);
      assert.equal(e.message, 'stream: the chunk is larger than max_stream_chunk (1000000 bytes): split it');
    }
    assert.equal(server.stats().payloads, 0, 'the refused values were given back');
  } finally { done(); }
});

test('a chunk received larger than max_stream_chunk fails the stream with -32600 and sends $/cancelRequest', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1));
  const raw = portTransport(port2);  // a sender that ignores the limit
  const seen = [];
  let cancelled;
  const cancelSeen = new Promise((r) => { cancelled = r; });
  raw.onMessage((t) => {
    const m = fromTuple(t);  // raw announced tuples: the client sends them
    seen.push(m);
    if (m.method === 'big') raw.send({ jsonrpc: '2.0', method: '$/weft/chunk', params: { id: m.id, seq: 0, value: BIG } });
    if (m.method === '$/cancelRequest') cancelled(m);
  });
  try {
    const s = client.stream('big');
    await assert.rejects((async () => { for await (const _c of s) { /* none arrives */ } })(), (e) =>
      e instanceof RPCError && e.code === ErrorCode.InvalidRequest &&
      e.message === 'Invalid Request: stream: a chunk larger than max_stream_chunk (1000000 bytes)');
    const id = seen.find((m) => m.method === 'big').id;
    assert.deepEqual((await cancelSeen).params, { id });
    assert.equal(client.stats().pending, 0);
  } finally { client.destroy(); raw.destroy(); }
});

test('limits.maxStreamChunk sets the limit on both sides; Infinity lifts it', T, async () => {
  const small = pair({ limits: { maxStreamChunk: 10 } }, { limits: { maxStreamChunk: 10 } });
  const none = pair({ limits: { maxStreamChunk: Infinity } }, { limits: { maxStreamChunk: Infinity } });
  try {
    for (const { server } of [small, none])
      server.method('two', async (_p, ctx) => {
        const r = await ctx.sink.write('0123456789').then(() => 'ok', (e) => e.code);
        const r2 = await ctx.sink.write('0123456789a', { final: true }).then(() => 'ok', (e) => e.code);
        return [r, r2];
      });
    const run = async (p) => { const s = p.client.stream('two'); const got = []; for await (const c of s) got.push(c); return [got, await s.result]; };
    assert.deepEqual(await run(small), [['0123456789'], ['ok', ErrorCode.InvalidRequest]]);
    assert.deepEqual(await run(none), [['0123456789', '0123456789a'], ['ok', 'ok']]);
  } finally { small.done(); none.done(); }
});

test('a chunk whose measuring throws (a getter) reaches the core as size 0; the transport cannot clone it: SendFailed, the stream fails -32603', T, async () => {
  const diags = [];
  const { client, server, done } = pair({}, { onDiagnostic: (k, m) => diags.push(`${k}: ${m}`) });
  try {
    let outcome;
    server.method('hostile', async (_p, ctx) => {
      const v = { get boom() { throw new Error('getter'); } };
      outcome = await ctx.sink.write(v).then(() => 'written', (e) => e);
      return 'answered';
    });
    const s = client.stream('hostile');
    const got = [];
    await assert.rejects((async () => { for await (const c of s) got.push(c); })(),
      (e) => e.code === ErrorCode.InternalError && e.message === 'Internal error: a stream chunk could not be sent: getter');
    await assert.rejects(s.result, (e) => e.code === ErrorCode.InternalError);
    assert.equal(outcome, 'written');  // the failure is known only after the write
    assert.deepEqual(got, []);
    assert.equal(diags[0], 'SendFailed: the transport could not deliver a message: getter');
    assert.equal(server.stats().payloads, 0);
  } finally { done(); }
});

test('next() called again before the last one settled: each gets the next chunk, in order', T, async () => {
  const { client, server, done } = pair();
  try {
    server.method('count', async ({ n }, ctx) => {
      for (let i = 0; i < n; i++) {
        await turn();
        await ctx.sink.write(i);
      }
      return 'done';
    });
    const s = client.stream('count', { n: 3 });
    const all = await Promise.all([s.next(), s.next(), s.next(), s.next()]);
    assert.deepEqual(all, [{ value: 0, done: false }, { value: 1, done: false }, { value: 2, done: false },
      { value: undefined, done: true }]);
    assert.equal(await s.result, 'done');
  } finally { done(); }
});

test('return() before the core loaded: a waiting next() is done, and the call is never sent', T, async () => {
  const msg = await inColdRealm(`async (m) => {
    const { port1, port2 } = new MessageChannel();
    const client = new m.JSONRPCClient(m.portTransport(port1));
    const server = new m.JSONRPCServer(m.portTransport(port2));
    let served = 0;
    server.method('count', async (_p, ctx) => { served++; await ctx.sink.write(1); return 'done'; });
    server.method('ping', () => 'pong');
    const s = client.stream('count');   // before the wasm exists
    const waiting = s.next();
    const code = s.result.then(() => 0, (e) => e.code);
    await s.return();
    const first = await waiting;
    const later = await s.next();
    const pong = await client.request('ping');  // the queue has drained by now
    const pending = client.stats().pending;
    client.destroy(); server.destroy();
    return { first, later, code: await code, served, pong, pending };
  }`);
  assert.deepEqual(msg, { first: { value: undefined, done: true }, later: { value: undefined, done: true },
    code: ErrorCode.RequestCancelled, served: 0, pong: 'pong', pending: 0 });
});

test('return() while a next() waits: that next() is done, and so is every later one', T, async () => {
  const { client, server, done } = pair();
  try {
    let started;
    const running = new Promise((r) => { started = r; });
    server.method('slow', async (_p, ctx) => {
      started();
      await new Promise((r) => ctx.signal.addEventListener('abort', r));
      return 'stopped';
    });
    const s = client.stream('slow');
    const waiting = s.next();
    await running;
    await s.return();
    assert.deepEqual(await waiting, { value: undefined, done: true });
    await assert.rejects(s.result, (e) => e.code === ErrorCode.RequestCancelled);
    assert.deepEqual(await s.next(), { value: undefined, done: true });
  } finally { done(); }
});

test('a chunk the transport cannot send fails the stream -32603 on both ends, not a stream short of it', T, async () => {
  const { client, server, done } = pair(undefined, { onDiagnostic: () => {} });
  let aborted = false;
  const writes = [];
  server.method('rows', async (p, ctx) => {
    ctx.signal.addEventListener('abort', () => { aborted = true; });
    for (const c of ['a', { row: 2, format() {} }, 'c']) {
      await ctx.sink.write(c).then(() => writes.push('ok'), (e) => writes.push(e.code));
    }
    return { rows: 3 };
  });
  try {
    const s = client.stream('rows');
    const got = [];
    await assert.rejects((async () => { for await (const v of s) got.push(v); })(),
      (e) => e.code === ErrorCode.InternalError && /^Internal error: a stream chunk could not be sent: /.test(e.message));
    await assert.rejects(s.result, (e) => e.code === ErrorCode.InternalError);
    assert.deepEqual(got, ['a']);
    await turn();
    assert.ok(aborted, 'the handler learns it as a cancellation');
    assert.equal(writes.at(-1), ErrorCode.Closed, 'writes after it are refused');
    assert.equal(server.stats().inFlight, 0);
  } finally { done(); }
});

test('a buffer written twice was given up by the first write: the second fails the stream -32603, not lost on the way', T, async () => {
  // The first write transfers the buffer (transfer: true is the default);
  // posting it again with a transfer list is dropped by Node's postMessage
  // without an error, so the caller would get a stream short of a chunk.
  const { client, server, done } = pair(undefined, { onDiagnostic: () => {} });
  const writes = [];
  server.method('padding', async ({ n }, ctx) => {
    const zeros = new Uint8Array(1024);
    for (let i = 0; i < n; i++) await ctx.sink.write(zeros).then(() => writes.push('ok'), (e) => writes.push(e.code));
    return { chunks: n };
  });
  try {
    const s = client.stream('padding', { n: 3 });
    const got = [];
    await assert.rejects((async () => { for await (const v of s) got.push(v.byteLength); })(),
      (e) => e.code === ErrorCode.InternalError && /detached/.test(e.message));
    await assert.rejects(s.result, (e) => e.code === ErrorCode.InternalError);
    assert.deepEqual(got, [1024]);
    await turn();
    assert.equal(writes[0], 'ok');
    assert.equal(writes.at(-1), ErrorCode.Closed, 'writes after it are refused');
  } finally { done(); }
});
