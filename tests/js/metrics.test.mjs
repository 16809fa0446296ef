// Per-response metrics in weft-rpc (docs/protocol.md "Metrics"), weft-rpc ↔
// weft-rpc over a Node MessageChannel: negotiated by rpc.handshake, measured
// by the serving side's clock (the endpoint's `clock`, in µs), delivered to
// onMetrics just before the call settles, on RPCError.metrics and
// ChunkStream.metrics, per entry in batch(); and across builds over a
// WebSocket, with the native weft serve and weft call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { Peer, JSONRPCServer, ErrorCode, RPCError, portTransport, webSocketTransport } from '../../js/index.js';

const T = { timeout: 30000 };
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEFT_BIN = process.env.WEFT_BIN || path.join(repoRoot, 'build', 'native-host', 'weft');

// A clock the test moves: now() in ms, with sub-ms steps (the µs clock is now() × 1000).
function steppedClock() {
  const c = { t: 1000 };
  c.now = () => c.t;
  c.setTimeout = (fn, ms) => setTimeout(fn, ms);
  c.clearTimeout = (h) => clearTimeout(h);
  return c;
}

// A caller and a server serving rpc.handshake with `caps`; the server's
// clock is `clock`. Methods: echo; slow (takes 0.25 ms by that clock); fail.
function pair(caps, clock = steppedClock()) {
  const { port1, port2 } = new MessageChannel();
  const client = new Peer(portTransport(port1));
  const server = new Peer(portTransport(port2), { handshake: { capabilities: caps }, clock });
  server.method('echo', (p) => p);
  server.method('slow', async (p) => { clock.t += 0.25; return p; });
  server.method('fail', () => { throw new RPCError(-32000, 'no', { why: 'test' }); });
  server.method('count', async ({ n }, ctx) => {
    for (let i = 0; i < n; i++) await ctx.sink.write(i, { final: i === n - 1 });
    return { chunks: n };
  });
  return { client, server, clock, done: () => { client.destroy(); server.destroy(); } };
}

// The bytes of a response's JSON text without metrics (docs/protocol.md).
const sizeOf = (response) => Buffer.byteLength(JSON.stringify(response));

test('once "metrics" is agreed, onMetrics gets the answer\'s processing time and size just before the call settles', T, async () => {
  const { client, done } = pair(['streams', 'metrics']);
  try {
    const agreed = await client.handshake({ capabilities: ['streams', 'metrics'] });
    assert.deepEqual(agreed.capabilities, ['streams', 'metrics']);
    const events = [];
    const answer = client.request('slow', ['abc'], { onMetrics: (m) => events.push(['metrics', m]) })
      .then((v) => { events.push(['settled', v]); });
    await answer;
    assert.deepEqual(events, [
      ['metrics', { processing_time_us: 250, response_size: sizeOf({ jsonrpc: '2.0', result: ['abc'], id: 2 }) }],
      ['settled', ['abc']],
    ]);
  } finally { done(); }
});

test('response_size counts the UTF-8 bytes of the answer\'s JSON text', T, async () => {
  const { client, done } = pair(['metrics']);
  try {
    await client.handshake({ capabilities: ['metrics'] });
    let got;
    const text = 'é€𝄞 and ascii';
    await client.request('echo', { text }, { onMetrics: (m) => { got = m; } });
    assert.equal(got.response_size, sizeOf({ jsonrpc: '2.0', result: { text }, id: 2 }));
    assert.ok(got.response_size > JSON.stringify({ jsonrpc: '2.0', result: { text }, id: 2 }).length);
  } finally { done(); }
});

test('without a handshake, answers carry no metrics and onMetrics is never called', T, async () => {
  const { client, done } = pair(['metrics']);
  try {
    let called = false;
    assert.deepEqual(await client.request('echo', [1], { onMetrics: () => { called = true; } }), [1]);
    assert.equal(called, false);
  } finally { done(); }
});

test('a server whose handshake offer lacks "metrics" does not agree on them, and measures nothing', T, async () => {
  const { client, done } = pair(['streams']);
  try {
    const agreed = await client.handshake({ capabilities: ['streams', 'metrics'] });
    assert.deepEqual(agreed.capabilities, ['streams']);
    let called = false;
    await client.request('echo', [1], { onMetrics: () => { called = true; } });
    assert.equal(called, false);
  } finally { done(); }
});

test('an error answer carries its metrics, on RPCError.metrics as well', T, async () => {
  const { client, done } = pair(['metrics']);
  try {
    await client.handshake({ capabilities: ['metrics'] });
    let seen;
    const err = await client.request('fail', undefined, { onMetrics: (m) => { seen = m; } }).catch((e) => e);
    assert.ok(err instanceof RPCError);
    assert.equal(err.code, -32000);
    const size = sizeOf({ jsonrpc: '2.0', error: { code: -32000, message: 'no', data: { why: 'test' } }, id: 2 });
    assert.deepEqual(err.metrics, { processing_time_us: 0, response_size: size });
    assert.deepEqual(seen, err.metrics);
    // Agreed, the metrics are there without onMetrics too.
    const again = await client.request('nope').catch((e) => e);
    assert.equal(again.code, ErrorCode.MethodNotFound);
    assert.equal(again.metrics.response_size, sizeOf({ jsonrpc: '2.0', error: { code: again.code, message: again.message }, id: 3 }));
  } finally { done(); }
});

test('in a batch, each call\'s metrics go to its own onMetrics, else to the batch\'s, before it settles', T, async () => {
  const { client, done } = pair(['metrics']);
  try {
    await client.handshake({ capabilities: ['metrics'] });
    const events = [];
    const [a, n, b] = client.batch([
      { method: 'echo', params: [1], onMetrics: (m) => events.push(`own ${m.response_size}`) },
      { method: 'echo', params: ['note'], notification: true },
      { method: 'slow', params: [22] },
    ], { onMetrics: (m) => events.push(`batch ${m.response_size} ${m.processing_time_us}`) });
    a.then(() => events.push('first settled'));
    b.then(() => events.push('third settled'));
    await Promise.all([a, n, b]);
    const s1 = sizeOf({ jsonrpc: '2.0', result: [1], id: 2 });
    const s3 = sizeOf({ jsonrpc: '2.0', result: [22], id: 3 });
    // The batch's answers arrive together: each call's metrics come before
    // its own promise settles (promise callbacks run a microtask later).
    assert.deepEqual([...events].sort(), [`batch ${s3} 250`, 'first settled', `own ${s1}`, 'third settled']);
    assert.ok(events.indexOf(`own ${s1}`) < events.indexOf('first settled'));
    assert.ok(events.indexOf(`batch ${s3} 250`) < events.indexOf('third settled'));
  } finally { done(); }
});

test('a streamed call\'s final answer carries metrics: onMetrics and ChunkStream.metrics', T, async () => {
  const { client, done } = pair(['streams', 'metrics']);
  try {
    await client.handshake({ capabilities: ['streams', 'metrics'] });
    let seen;
    const s = client.stream('count', { n: 3 }, { onMetrics: (m) => { seen = m; } });
    const got = [];
    for await (const c of s) got.push(c);
    assert.deepEqual(got, [0, 1, 2]);
    assert.deepEqual(await s.result, { chunks: 3 });
    assert.deepEqual(s.metrics, { processing_time_us: 0, response_size: sizeOf({ jsonrpc: '2.0', result: { chunks: 3 }, id: 2 }) });
    assert.deepEqual(seen, s.metrics);
  } finally { done(); }
});

test('the side that offered "metrics" measures the answers it serves too', T, async () => {
  // A handshake agrees for both directions: the caller measures its own answers.
  const clock = steppedClock();
  const { port1, port2 } = new MessageChannel();
  const a = new Peer(portTransport(port1), { clock });
  const b = new Peer(portTransport(port2), { handshake: { capabilities: ['metrics'] } });
  try {
    a.method('ping', () => 'pong');
    await a.handshake({ capabilities: ['metrics'] });
    let got;
    assert.equal(await b.request('ping', undefined, { onMetrics: (m) => { got = m; } }), 'pong');
    assert.deepEqual(got, { processing_time_us: 0, response_size: sizeOf({ jsonrpc: '2.0', result: 'pong', id: 1 }) });
  } finally { a.destroy(); b.destroy(); }
});

// Across builds, over a WebSocket (npm `ws`): the native `weft serve --ws
// --handshake --metrics` measures for a weft-rpc caller, and the native
// `weft call --metrics` prints what a weft-rpc server measured, in its one
// shape `metrics {"processing_time_us":N,"response_size":N}`.
function run(args) {
  return new Promise((resolve) => {
    const child = spawn(WEFT_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const NATIVE = { ...T, skip: existsSync(WEFT_BIN) ? false : `no native weft at ${WEFT_BIN}` };

test('weft-rpc gets the metrics of native weft serve --ws --handshake --metrics, as the native core measured them', NATIVE, async () => {
  const server = spawn(WEFT_BIN, ['serve', '--ws', '127.0.0.1:0', '--demo', '--handshake', '--metrics'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let peer;
  try {
    const url = await new Promise((resolve, reject) => {  // its log line names the address
      let log = '';
      server.stderr.on('data', (d) => { log += d; const m = /listening on (ws:\/\/\S+)/.exec(log); if (m) resolve(m[1]); });
      server.on('exit', (c) => reject(new Error(`weft serve exited ${c}: ${log}`)));
    });
    peer = new Peer(webSocketTransport(new WebSocket(url)));
    const agreed = await peer.handshake({ capabilities: ['streams', 'metrics'] });
    assert.deepEqual(agreed.capabilities, ['streams', 'metrics']);
    let got;
    assert.equal(await peer.request('subtract', [42, 23], { onMetrics: (m) => { got = m; } }), 19);
    assert.deepEqual(Object.keys(got), ['processing_time_us', 'response_size']);
    assert.ok(Number.isInteger(got.processing_time_us) && got.processing_time_us >= 0);
    assert.equal(got.response_size, sizeOf({ jsonrpc: '2.0', result: 19, id: 2 }));
    const err = await peer.request('nope').catch((e) => e);
    assert.equal(err.code, ErrorCode.MethodNotFound);
    assert.equal(err.metrics.response_size, sizeOf({ jsonrpc: '2.0', error: { code: err.code, message: err.message }, id: 3 }));
  } finally {
    peer?.destroy();
    server.kill('SIGKILL');
  }
});

test('weft call --metrics prints the metrics a weft-rpc server measured, in the same shape', NATIVE, async () => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  const clock = steppedClock();
  const servers = [];
  wss.on('connection', (ws) => {
    const s = new JSONRPCServer(webSocketTransport(ws), { handshake: { capabilities: ['streams', 'metrics'] }, clock });
    s.method('subtract', ([a, b]) => { clock.t += 0.25; return a - b; });
    servers.push(s);
  });
  try {
    const r = await run(['call', '--metrics', '--connect', `ws://127.0.0.1:${wss.address().port}/`, 'subtract', '[42,23]']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '19');
    const line = /^metrics (\{.*\})$/m.exec(r.stderr);
    assert.ok(line, `no metrics line in: ${r.stderr}`);
    // The same object weft-rpc's onMetrics gets: the CLI read weft-rpc's member.
    assert.deepEqual(JSON.parse(line[1]), { processing_time_us: 250, response_size: sizeOf({ jsonrpc: '2.0', result: 19, id: 2 }) });
  } finally {
    for (const s of servers) s.destroy();
    await new Promise((r) => wss.close(r));
  }
});
