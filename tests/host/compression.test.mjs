// weft serve --handshake/--metrics/--compress zstd over a Unix socket
// (docs/protocol.md "Metrics", docs/framing.md "Compression"), checked
// against a zstd we did not write: the zstd command-line tool compresses
// what we send and decompresses what the server sends.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';

import { checkZstdRefusals, killAll, runCli, startServer, tempDir, within, ZSTD_MAGIC, zstdTool } from './helpers.mjs';

const tmp = tempDir();
const sock = path.join(tmp.dir, 'z.sock');
const small = path.join(tmp.dir, 'small.sock');
const plainSock = path.join(tmp.dir, 'plain.sock');

before(async () => {
  await startServer(['serve', '--unix', sock, '--demo', '--metrics', '--compress', 'zstd']);
  await startServer(['serve', '--unix', small, '--demo', '--compress', 'zstd', '--max-message', '100000']);
  await startServer(['serve', '--unix', plainSock, '--demo']);
});
after(() => {
  killAll();
  tmp.cleanup();
});

// A len32be client keeping payloads as bytes: compressed ones are inflated by
// the zstd tool before they are parsed.
async function connect(where) {
  const s = net.createConnection(where);
  await new Promise((resolve, reject) => {
    s.once('connect', resolve);
    s.once('error', reject);
  });
  let buf = Buffer.alloc(0);
  const frames = [];
  const waiters = [];
  s.on('data', (c) => {
    buf = Buffer.concat([buf, c]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const n = buf.readUInt32BE(0);
      frames.push(buf.subarray(4, 4 + n));
      buf = buf.subarray(4 + n);
    }
    for (const w of waiters.splice(0)) w();
  });
  const next = async () => {
    while (!frames.length) await within(5000, new Promise((r) => waiters.push(r)), 'a frame');
    const raw = frames.shift();
    const compressed = raw.subarray(0, 4).equals(ZSTD_MAGIC);
    const text = compressed ? zstdTool(['-d', '-c'], raw) : raw;
    return { compressed, size: raw.length, msg: JSON.parse(text.toString()) };
  };
  const send = (payload) => {
    const body = Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
    const h = Buffer.alloc(4);
    h.writeUInt32BE(body.length);
    s.write(Buffer.concat([h, body]));
  };
  return { socket: s, next, send };
}

const offer = (capabilities, compression) => ({
  jsonrpc: '2.0', id: 1, method: 'rpc.handshake',
  params: { version: '1.0', capabilities, ...(compression ? { compression_preference: compression } : {}) },
});

test('weft serve --compress zstd --metrics agrees on both with a caller that offers them', async () => {
  const c = await connect(sock);
  c.send(offer(['streams', 'metrics', 'compression'], ['zstd']));
  const { msg } = await c.next();
  assert.deepEqual(msg.result.capabilities, ['streams', 'metrics', 'compression']);
  assert.equal(msg.result.compression_used, 'zstd');
  assert.equal(msg.metrics, undefined, 'the handshake answer itself carries no metrics');
  c.socket.destroy();
});

test('an answer over 1 KiB comes back zstd-compressed, and the zstd tool inflates it to the answer with metrics', async () => {
  const c = await connect(sock);
  c.send(offer(['metrics', 'compression'], ['zstd']));
  await c.next();
  const big = 'abc'.repeat(2000);
  c.send({ jsonrpc: '2.0', id: 2, method: 'echo', params: [big] });
  const a = await c.next();
  assert.equal(a.compressed, true);
  assert.ok(a.size < 1024, `compressed to ${a.size} bytes`);
  assert.deepEqual(a.msg.result, [big]);
  const bare = JSON.stringify({ jsonrpc: '2.0', result: [big], id: 2 });
  assert.equal(a.msg.metrics.response_size, Buffer.byteLength(bare));
  assert.ok(Number.isInteger(a.msg.metrics.processing_time_us) && a.msg.metrics.processing_time_us >= 0);
  // A small answer stays as it is, metrics included.
  c.send({ jsonrpc: '2.0', id: 3, method: 'subtract', params: [42, 23] });
  const s = await c.next();
  assert.equal(s.compressed, false);
  assert.equal(s.msg.result, 19);
  assert.ok(s.msg.metrics.response_size > 0);
  c.socket.destroy();
});

test('a request compressed by the zstd tool is decompressed and answered', async () => {
  const c = await connect(sock);
  c.send(offer(['compression'], ['zstd']));
  await c.next();
  const req = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'echo', params: ['x'.repeat(4000)] });
  c.send(zstdTool(['-c', '-q'], Buffer.from(req)));
  const a = await c.next();
  assert.deepEqual(a.msg.result, ['x'.repeat(4000)]);
  c.socket.destroy();
});

test('a caller that offers neither gets plain answers without metrics', async () => {
  const c = await connect(sock);
  c.send(offer(['streams']));
  const h = await c.next();
  assert.deepEqual(h.msg.result.capabilities, ['streams']);
  assert.equal(h.msg.result.compression_used, undefined);
  c.send({ jsonrpc: '2.0', id: 2, method: 'echo', params: ['abc'.repeat(2000)] });
  const a = await c.next();
  assert.equal(a.compressed, false);
  assert.equal(a.msg.metrics, undefined);
  c.socket.destroy();
});

test('Z4, Z5: a zstd bomb is refused -32600 naming max_frame, a corrupt frame -32700, and the connection goes on', async () => {
  const c = await connect(small);
  c.send(offer(['compression'], ['zstd']));
  await c.next();
  await checkZstdRefusals(c, 100000);
  c.socket.destroy();
});

test('weft call --metrics --compress zstd prints the result, and the metrics on stderr', async () => {
  const big = 'abc'.repeat(2000);
  const r = await runCli(['call', '--unix', sock, '--metrics', '--compress', 'zstd', 'echo', JSON.stringify([big])]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [big]);
  const m = /^metrics (\{.*\})$/m.exec(r.stderr);
  assert.ok(m, r.stderr);
  const metrics = JSON.parse(m[1]);
  assert.equal(metrics.response_size, Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', result: [big], id: 2 })));
  assert.ok(metrics.processing_time_us >= 0);
});

test('weft call --metrics on an error answer prints the error and the metrics', async () => {
  const r = await runCli(['call', '--unix', sock, '--metrics', 'nope']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /"code":-32601/);
  assert.match(r.stderr, /^metrics \{"processing_time_us":\d+,"response_size":\d+\}$/m);
});

test('weft call --metrics --compress zstd against a server without a handshake works without either', async () => {
  const r = await runCli(['call', '--unix', plainSock, '--metrics', '--compress', 'zstd', 'subtract', '[42,23]']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '19\n');
  assert.doesNotMatch(r.stderr, /metrics/);
});
