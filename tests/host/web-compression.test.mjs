// zstd compression on the message transports (docs/framing.md Z1–Z5,
// docs/transports.md "Compression"): `weft serve --ws/--http --compress zstd`.
// Checked against software we did not write: npm `ws` sends and receives the
// WebSocket frames, the zstd command-line tool makes and inflates the
// compressed payloads, curl speaks HTTP's Content-Encoding/Accept-Encoding;
// the native client is watched through an npm `ws` relay and a node:http
// relay, which record what crosses them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import WebSocket, { WebSocketServer } from 'ws';
import { checkZstdRefusals, runCli, tempDir, within, ZSTD_MAGIC, zstdTool } from './helpers.mjs';
import { startWeb } from './web-server.mjs';
import { Peer, webSocketTransport, ready } from '../../js/index.js';

const T = { timeout: 30000 };
const ACCEPT = 'application/json, text/event-stream';
const BIG = 'abc'.repeat(2000);
const tmp = tempDir();
let z;      // --compress zstd on both listeners
let small;  // the same with --max-message 100000 (the Z4 bound)
let plain;  // --handshake, no --compress
before(async () => {
  z = await startWeb(['--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--demo', '--compress', 'zstd']);
  small = await startWeb(['--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--demo', '--compress', 'zstd', '--max-message', '100000']);
  plain = await startWeb(['--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--demo', '--handshake']);
});
after(async () => {
  await z.stop();
  await small.stop();
  await plain.stop();
  tmp.cleanup();
});

const offer = (capabilities, compression) => ({
  jsonrpc: '2.0', id: 1, method: 'rpc.handshake',
  params: { version: '1.0', capabilities, ...(compression ? { compression_preference: compression } : {}) },
});

// An npm `ws` client keeping each frame's type; a compressed one is inflated
// by the zstd tool before it is parsed.
async function openWs(url) {
  const ws = new WebSocket(url);
  const inbox = [];
  const waiters = [];
  let closed = null;
  ws.on('message', (data, isBinary) => { inbox.push({ data, isBinary }); for (const w of waiters.splice(0)) w(); });
  ws.on('close', (code) => { closed = code; for (const w of waiters.splice(0)) w(); });
  await within(5000, new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); }), 'open');
  const next = async () => {
    while (!inbox.length) await within(5000, new Promise((r) => waiters.push(r)), 'a message');
    const { data, isBinary } = inbox.shift();
    const raw = Buffer.from(data);
    const compressed = raw.subarray(0, 4).equals(ZSTD_MAGIC);
    return { binary: isBinary, compressed, size: raw.length, msg: JSON.parse(String(compressed ? zstdTool(['-d', '-c'], raw) : raw)) };
  };
  const closeCode = async () => {
    while (closed === null) await within(5000, new Promise((r) => waiters.push(r)), 'the close');
    return closed;
  };
  return { ws, next, closeCode, send: (m) => ws.send(Buffer.isBuffer(m) ? m : JSON.stringify(m)) };
}

test('Z2 WebSocket: once zstd is agreed an answer over 1 KiB comes zstd-compressed in a binary frame, a small one as text', T, async () => {
  const c = await openWs(z.ws);
  c.send(offer(['streams', 'compression'], ['zstd']));
  const h = await c.next();
  assert.equal(h.msg.result.compression_used, 'zstd');
  assert.deepEqual(h.msg.result.capabilities, ['streams', 'compression']);
  c.send({ jsonrpc: '2.0', id: 2, method: 'echo', params: [BIG] });
  const a = await c.next();
  assert.equal(a.binary, true);
  assert.equal(a.compressed, true);
  assert.ok(a.size < 1024, `compressed to ${a.size} bytes`);
  assert.deepEqual(a.msg, { jsonrpc: '2.0', result: [BIG], id: 2 });
  c.send({ jsonrpc: '2.0', id: 3, method: 'subtract', params: [42, 23] });
  const s = await c.next();
  assert.equal(s.binary, false);
  assert.equal(s.msg.result, 19);
  c.ws.close();
});

test('Z3 WebSocket: a request compressed by the zstd tool, in a binary frame, is inflated and answered', T, async () => {
  const c = await openWs(z.ws);
  c.send(offer(['compression'], ['zstd']));
  await c.next();
  const req = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'echo', params: ['x'.repeat(4000)] });
  c.send(zstdTool(['-c', '-q'], Buffer.from(req)));
  const a = await c.next();
  assert.deepEqual(a.msg.result, ['x'.repeat(4000)]);
  c.ws.close();
});

test('Z4, Z5 WebSocket: a zstd bomb is refused -32600 naming --max-message, a corrupt frame -32700, and the connection goes on', T, async () => {
  const c = await openWs(small.ws);
  c.send(offer(['compression'], ['zstd']));
  await c.next();
  // A plain payload in a text frame, a compressed one in a binary frame (Z1).
  await checkZstdRefusals({ send: (b) => (b.subarray(0, 4).equals(ZSTD_MAGIC) ? c.send(b) : c.ws.send(String(b))), next: c.next }, 100000);
  c.ws.close();
});

test('Z1 WebSocket: a peer that offers no compression (npm ws, as weft-rpc) gets no compressed frame', T, async () => {
  for (const first of [offer(['streams']), null]) {
    const c = await openWs(z.ws);
    if (first) {
      c.send(first);
      const h = await c.next();
      assert.equal(h.msg.result.compression_used, undefined);
      assert.deepEqual(h.msg.result.capabilities, ['streams']);
    }
    c.send({ jsonrpc: '2.0', id: 2, method: 'echo', params: [BIG] });
    const a = await c.next();
    assert.equal(a.binary, false);
    assert.equal(a.compressed, false);
    assert.deepEqual(a.msg.result, [BIG]);
    c.ws.close();
  }
});

test('Z1 WebSocket: weft-rpc (its WebAssembly build has no zstd) offers no compression and gets every answer as JSON text', T, async () => {
  await ready;
  const ws = new WebSocket(z.ws);
  const sent = [];
  const binary = [];
  const send = ws.send.bind(ws);
  ws.send = (d, ...rest) => { sent.push(JSON.parse(String(d))); return send(d, ...rest); };
  ws.on('message', (d, isBinary) => binary.push(isBinary));
  const peer = new Peer(webSocketTransport(ws));
  const agreed = await peer.handshake({ capabilities: ['streams', 'compression'] });
  assert.deepEqual(agreed.capabilities, ['streams']);
  assert.ok(!sent[0].params.capabilities.includes('compression') && !sent[0].params.compression_preference, JSON.stringify(sent[0]));
  assert.deepEqual(await peer.request('echo', [BIG]), [BIG]);
  assert.deepEqual(binary, [false, false]);
  peer.destroy();
});

test('Z1 WebSocket: a server without --compress never agrees, and a binary frame on a JSON connection still closes 1003', T, async () => {
  const c = await openWs(plain.ws);
  c.send(offer(['compression'], ['zstd']));
  const h = await c.next();
  assert.equal(h.msg.result.compression_used, undefined);
  c.send(zstdTool(['-c', '-q'], Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'subtract', params: [5, 3] }))));
  assert.equal(await c.closeCode(), 1003);
  // With --compress, a binary frame that is not zstd is no message either.
  const d = await openWs(z.ws);
  d.send(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"subtract","params":[5,3]}'));
  assert.equal(await d.closeCode(), 1003);
});

// An npm `ws` relay between the native client and the server, recording
// each frame's direction, type and first bytes.
async function wsRelay(target) {
  const frames = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (down) => {
    const up = new WebSocket(target);
    const queued = [];
    up.on('open', () => { for (const [d, b] of queued.splice(0)) up.send(d, { binary: b }); });
    down.on('message', (d, b) => {
      frames.push({ to: 'server', binary: b, compressed: Buffer.from(d).subarray(0, 4).equals(ZSTD_MAGIC) });
      if (up.readyState === WebSocket.OPEN) up.send(d, { binary: b });
      else queued.push([d, b]);
    });
    up.on('message', (d, b) => {
      frames.push({ to: 'client', binary: b, compressed: Buffer.from(d).subarray(0, 4).equals(ZSTD_MAGIC) });
      down.send(d, { binary: b });
    });
    down.on('close', () => up.close());
    up.on('close', () => down.close());
  });
  return { url: `ws://127.0.0.1:${wss.address().port}/`, frames, close: () => new Promise((r) => wss.close(r)) };
}

test('Z2 WebSocket: weft call --compress zstd offers zstd and sends and reads compressed binary frames', T, async () => {
  const relay = await wsRelay(z.ws);
  try {
    const r = await runCli(['call', '--connect', relay.url, '--compress', 'zstd', 'echo', JSON.stringify([BIG])]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [BIG]);
    assert.ok(relay.frames.some((f) => f.to === 'server' && f.binary && f.compressed), JSON.stringify(relay.frames));
    assert.ok(relay.frames.some((f) => f.to === 'client' && f.binary && f.compressed), JSON.stringify(relay.frames));
    assert.ok(relay.frames.every((f) => f.binary === f.compressed), 'JSON otherwise in text frames');
    // Without --compress nothing is compressed either way.
    relay.frames.length = 0;
    const p = await runCli(['call', '--connect', relay.url, '--metrics', 'echo', JSON.stringify([BIG])]);
    assert.equal(p.code, 0, p.stderr);
    assert.ok(relay.frames.length >= 4 && relay.frames.every((f) => !f.binary && !f.compressed), JSON.stringify(relay.frames));
  } finally {
    await relay.close();
  }
});

test('Z2 WebSocket: weft call --compress zstd against a server without it works uncompressed', T, async () => {
  const r = await runCli(['call', '--connect', plain.ws, '--compress', 'zstd', 'echo', JSON.stringify([BIG])]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [BIG]);
});

// curl → { status, headers (lower-case names), body (a Buffer) }.
function curl(url, args) {
  const r = spawnSync('curl', ['-s', '-i', '--max-time', '5', '-X', 'POST', '-H', `Accept: ${ACCEPT}`,
    '-H', 'Content-Type: application/json', ...args, url], { maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, String(r.stderr));
  const out = r.stdout;
  const end = out.indexOf('\r\n\r\n');
  const lines = out.subarray(0, end).toString('latin1').split('\r\n');
  const h = {};
  for (const l of lines.slice(1)) { const i = l.indexOf(':'); h[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim(); }
  return { status: Number(lines[0].split(' ')[1]), headers: h, body: out.subarray(end + 4) };
}
const call = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

test('HTTP: curl --compressed gets a JSON answer over 1 KiB zstd-encoded, with Vary: Accept-Encoding, and decodes it', T, () => {
  const r = curl(z.http, ['--compressed', '--data-binary', call(1, 'echo', [BIG])]);
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-encoding'], 'zstd');
  assert.equal(r.headers.vary, 'Accept-Encoding');
  assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', result: [BIG], id: 1 });
  // The bytes on the wire are one zstd frame, which the zstd tool inflates.
  const raw = curl(z.http, ['-H', 'Accept-Encoding: gzip, zstd', '--data-binary', call(2, 'echo', [BIG])]);
  assert.equal(raw.headers['content-encoding'], 'zstd');
  assert.ok(raw.body.subarray(0, 4).equals(ZSTD_MAGIC));
  assert.ok(Number(raw.headers['content-length']) < 1024, raw.headers['content-length']);
  assert.deepEqual(JSON.parse(zstdTool(['-d', '-c'], raw.body)), { jsonrpc: '2.0', result: [BIG], id: 2 });
});

test('HTTP: no zstd in Accept-Encoding (absent, zstd;q=0, gzip only), or an answer of 1 KiB or less: sent as it is', T, () => {
  for (const ae of [null, 'zstd;q=0, *', 'gzip', '*;q=0']) {
    const r = curl(z.http, [...(ae ? ['-H', `Accept-Encoding: ${ae}`] : []), '--data-binary', call(1, 'echo', [BIG])]);
    assert.equal(r.headers['content-encoding'], undefined, ae);
    assert.equal(r.headers.vary, 'Accept-Encoding', ae);
    assert.deepEqual(JSON.parse(r.body).result, [BIG], ae);
  }
  const star = curl(z.http, ['-H', 'Accept-Encoding: *', '--data-binary', call(1, 'echo', [BIG])]);
  assert.equal(star.headers['content-encoding'], 'zstd');
  const s = curl(z.http, ['-H', 'Accept-Encoding: zstd', '--data-binary', call(1, 'subtract', [42, 23])]);
  assert.equal(s.headers['content-encoding'], undefined);
  assert.equal(JSON.parse(s.body).result, 19);
});

test('HTTP: an SSE answer is not encoded, whatever Accept-Encoding says', T, () => {
  const r = curl(z.http, ['-H', 'Accept-Encoding: zstd', '--data-binary', call(1, 'sleep', { ms: 50 })]);
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'], /^text\/event-stream/);
  assert.equal(r.headers['content-encoding'], undefined);
  assert.match(r.body.toString(), /"result":50/);
});

test('HTTP: a body compressed by the zstd tool with Content-Encoding: zstd is inflated and answered', T, () => {
  const f = path.join(tmp.dir, 'req.zst');
  fs.writeFileSync(f, zstdTool(['-c', '-q'], Buffer.from(call(7, 'echo', ['y'.repeat(5000)]))));
  const r = curl(z.http, ['-H', 'Content-Encoding: zstd', '--data-binary', `@${f}`]);
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', result: ['y'.repeat(5000)], id: 7 });
});

test('HTTP: an unknown Content-Encoding is 415 with a JSON-RPC error and Accept-Encoding naming zstd', T, () => {
  const r = curl(z.http, ['-H', 'Content-Encoding: gzip', '--data-binary', call(1, 'subtract', [5, 3])]);
  assert.equal(r.status, 415);
  assert.equal(r.headers['accept-encoding'], 'zstd');
  const e = JSON.parse(r.body);
  assert.equal(e.id, null);
  assert.equal(e.error.code, -32600);
  assert.equal(e.error.message, "Content-Encoding 'gzip' is not supported (zstd)");
});

test('HTTP Z4, Z5: a zstd bomb body is 413 -32600 naming the bound; a corrupt one 400 -32700', T, () => {
  const bomb = path.join(tmp.dir, 'bomb.zst');
  fs.writeFileSync(bomb, zstdTool(['-c', '-q', '-19'], Buffer.alloc(1 << 20, 0x20)));
  const r = curl(small.http, ['-H', 'Content-Encoding: zstd', '--data-binary', `@${bomb}`]);
  assert.equal(r.status, 413);
  assert.deepEqual(JSON.parse(r.body).error, { code: -32600, message: 'Invalid Request: decompressed frame exceeds 100000 bytes (max_frame)' });
  const bad = path.join(tmp.dir, 'bad.zst');
  const good = zstdTool(['-c', '-q'], Buffer.from(call(3, 'subtract', [5, 3])));
  fs.writeFileSync(bad, good.subarray(0, good.length - 2));
  const c = curl(small.http, ['-H', 'Content-Encoding: zstd', '--data-binary', `@${bad}`]);
  assert.equal(c.status, 400);
  assert.equal(JSON.parse(c.body).error.code, -32700);
  assert.match(JSON.parse(c.body).error.message, /^Parse error: compressed frame: /);
});

test('HTTP: a server without --compress refuses Content-Encoding: zstd (415) and never encodes its answers', T, () => {
  const f = path.join(tmp.dir, 'plain.zst');
  fs.writeFileSync(f, zstdTool(['-c', '-q'], Buffer.from(call(1, 'subtract', [5, 3]))));
  const r = curl(plain.http, ['-H', 'Content-Encoding: zstd', '--data-binary', `@${f}`]);
  assert.equal(r.status, 415);
  assert.equal(r.headers['accept-encoding'], 'identity');
  const a = curl(plain.http, ['--compressed', '--data-binary', call(1, 'echo', [BIG])]);
  assert.equal(a.headers['content-encoding'], undefined);
  assert.equal(a.headers.vary, undefined);
  assert.deepEqual(JSON.parse(a.body).result, [BIG]);
});

test('HTTP: the handshake never agrees on compression (HTTP negotiates its own)', T, () => {
  const r = curl(z.http, ['--data-binary', JSON.stringify(offer(['streams', 'compression'], ['zstd']))]);
  const a = JSON.parse(r.body).result;
  assert.deepEqual(a.capabilities, ['streams']);
  assert.equal(a.compression_used, undefined);
});

// A node:http relay in front of the server, recording each POST's
// Accept-Encoding and its answer's Content-Encoding.
async function httpRelay(target) {
  const seen = [];
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const up = http.request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (ur) => {
      if (req.method === 'POST') seen.push({ acceptEncoding: req.headers['accept-encoding'], contentEncoding: ur.headers['content-encoding'] });
      res.writeHead(ur.statusCode, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, seen, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

test('HTTP: weft call --compress zstd asks for zstd and inflates the answer', T, async () => {
  const relay = await httpRelay(z.http);
  try {
    const r = await runCli(['call', '--connect', relay.url, '--compress', 'zstd', 'echo', JSON.stringify([BIG])]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [BIG]);
    assert.ok(relay.seen.length >= 2 && relay.seen.every((s) => s.acceptEncoding === 'zstd'), JSON.stringify(relay.seen));
    assert.ok(relay.seen.some((s) => s.contentEncoding === 'zstd'), JSON.stringify(relay.seen));
  } finally {
    await relay.close();
  }
});
