// `weft serve --ws`: JSON-RPC over WebSocket (docs/transports.md,
// "WebSocket"), driven by clients we did not write (npm `ws`) and by
// weft-rpc's webSocketTransport.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import WebSocket from 'ws';
import { decode, encode } from '@msgpack/msgpack';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { WEFT_BIN, within } from './helpers.mjs';
import { startWeb } from './web-server.mjs';
import { Peer, RPCError, ErrorCode, webSocketTransport, ready } from '../../js/index.js';

const T = { timeout: 30000 };
let srv;
before(async () => { srv = await startWeb(['--ws', '127.0.0.1:0', '--demo', '--max-message', '4096', '--allow-origin', 'http://page.example']); });
after(async () => { await srv.stop(); });

function open(url = srv.ws, protocols, options) {
  const ws = new WebSocket(url, protocols, options);
  return within(5000, new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (req, res) => resolve({ refused: res.statusCode }));
  }), 'open');
}
const nextMessage = (ws) => within(5000, new Promise((r) => ws.once('message', (data, isBinary) => r({ data, isBinary }))), 'message');
const closed = (ws) => within(5000, new Promise((r) => ws.once('close', (code, reason) => r({ code, reason: String(reason) }))), 'close');
const json = (m) => JSON.parse(String(m.data));

test('a request in a text frame is answered in one text frame', T, async () => {
  const ws = await open();
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subtract', params: [42, 23] }));
  const m = await nextMessage(ws);
  assert.equal(m.isBinary, false);
  assert.deepEqual(json(m), { jsonrpc: '2.0', result: 19, id: 1 });
  ws.close();
});

test('a batch in one frame is answered as one batch in one frame; notifications in it get no answer', T, async () => {
  const ws = await open();
  ws.send(JSON.stringify([
    { jsonrpc: '2.0', id: 1, method: 'sum', params: [1, 2, 4] },
    { jsonrpc: '2.0', method: 'update', params: [1] },
    { jsonrpc: '2.0', id: 2, method: 'nope' },
  ]));
  const r = json(await nextMessage(ws));
  assert.deepEqual(r.map((x) => x.id).sort(), [1, 2]);
  assert.equal(r.find((x) => x.id === 1).result, 7);
  assert.equal(r.find((x) => x.id === 2).error.code, -32601);
  ws.close();
});

test('a notification is not answered; the server can notify the client on the same connection', T, async () => {
  const ws = await open();
  ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'note', params: { text: 'hi' } }));
  assert.deepEqual(json(await nextMessage(ws)),
    { jsonrpc: '2.0', method: 'note.ack', params: { where: 'native', count: 1, text: 'hi' } });
  ws.close();
});

test('a frame that is not JSON is answered -32700 with id null, and the connection goes on', T, async () => {
  const ws = await open();
  ws.send('{"jsonrpc":');
  const r = json(await nextMessage(ws));
  assert.equal(r.id, null);
  assert.equal(r.error.code, -32700);
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'echo', params: ['still here'] }));
  assert.deepEqual(json(await nextMessage(ws)).result, ['still here']);
  ws.close();
});

test('with the weft.msgpack subprotocol, MessagePack travels in binary frames both ways', T, async () => {
  const ws = await open(srv.ws, ['weft.msgpack']);
  assert.equal(ws.protocol, 'weft.msgpack');
  ws.send(encode({ jsonrpc: '2.0', id: 5, method: 'subtract', params: [42, 23] }));
  const m = await nextMessage(ws);
  assert.equal(m.isBinary, true);
  assert.deepEqual(decode(m.data), { jsonrpc: '2.0', result: 19, id: 5 });
  ws.close();
});

test('a binary frame without the weft.msgpack subprotocol is refused: close 1003', T, async () => {
  const ws = await open();
  assert.equal(ws.protocol, '');
  const c = closed(ws);
  ws.send(encode({ jsonrpc: '2.0', id: 1, method: 'echo' }));
  assert.equal((await c).code, 1003);
});

test('a frame larger than --max-message is refused before it is buffered: close 1009', T, async () => {
  const ws = await open();
  const c = closed(ws);
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['x'.repeat(5000)] }));
  assert.equal((await c).code, 1009);
});

test('a message far over --max-message (11 MB against 1000) still gets close 1009, and is not buffered', T, async () => {
  // The server reads and discards the rest of the message before closing:
  // closing with it unread would make the kernel reset the connection, and
  // the client would see 1006 instead (RFC 6455 §7.4.1, 1009).
  const s = await startWeb(['--ws', '127.0.0.1:0', '--demo', '--max-message', '1000']);
  const hwm = () => {  // peak RSS in bytes (Linux); null elsewhere
    try {
      return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))[1]) * 1024;
    } catch { return null; }
  };
  try {
    const ws = await open(s.ws);
    const before = hwm();
    const c = closed(ws);
    const big = 'x'.repeat(11 * 1000 * 1000);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: [big] }));
    assert.equal((await c).code, 1009);
    // Under ASan (WEFT_SANITIZED=1) the chunks read and discarded sit in its
    // quarantine for a while: twice the room, still far below the message.
    const room = big.length / (process.env.WEFT_SANITIZED === '1' ? 2 : 4);
    if (before !== null) assert.ok(hwm() - before < room, `server peak RSS grew by ${hwm() - before} bytes`);
    const other = await open(s.ws);
    other.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'echo', params: ['x'.repeat(900)] }));
    assert.deepEqual(json(await nextMessage(other)).result, ['x'.repeat(900)]);
    other.close();
  } finally {
    await s.stop();
  }
});

test('the native client names the server\'s close: "the server closed the WebSocket (1009)", exit 3', T, () => {
  const r = spawnSync(WEFT_BIN, ['call', '--connect', `${srv.ws}`, 'echo', JSON.stringify(['x'.repeat(5000)])],
    { encoding: 'utf8', timeout: 20000 });
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /closed: the server closed the WebSocket \(1009\)/);
});

test('an Origin not in --allow-origin is refused with 403; a listed one and none at all are accepted', T, async () => {
  assert.deepEqual(await open(srv.ws, undefined, { origin: 'http://evil.example' }), { refused: 403 });
  const ok = await open(srv.ws, undefined, { origin: 'http://page.example' });
  ok.close();
  const none = await open();
  none.close();
});

test('weft-rpc webSocketTransport: calls made before the socket opens are queued, then answered', T, async () => {
  await ready;
  const peer = new Peer(webSocketTransport(new WebSocket(srv.ws)));
  const acks = [];
  peer.onNotify('note.ack', (p) => acks.push(p));
  const [a, b] = await Promise.all([peer.request('subtract', [42, 23]), peer.request('echo', { x: 1 })]);
  assert.equal(a, 19);
  assert.deepEqual(b, { x: 1 });
  await assert.rejects(peer.request('fail', { code: 4000, message: 'no luck' }),
    (e) => e instanceof RPCError && e.code === 4000 && e.message === 'no luck');
  const got = new Promise((r) => peer.onNotify('note.ack', r));
  peer.notify('note', { text: 'from weft-rpc' });
  assert.equal((await within(5000, got, 'note.ack')).text, 'from weft-rpc');
  peer.destroy();
});

test('weft-rpc webSocketTransport: a pending call is rejected at once with -32002 when the connection drops', T, async () => {
  await ready;
  const ws = new WebSocket(srv.ws);
  const peer = new Peer(webSocketTransport(ws));
  await peer.request('rpc.ping');
  const pending = peer.request('sleep', { ms: 60000 });
  ws.terminate();  // the TCP connection is gone, no close handshake
  await within(2000, assert.rejects(pending, (e) => e instanceof RPCError && e.code === ErrorCode.Closed), 'rejection');
  await assert.rejects(peer.request('rpc.ping'), (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
  peer.destroy();
});

test('a request that is no upgrade is answered 426 with Upgrade: websocket, with or without a body', T, async () => {
  const url = srv.ws.replace(/^ws:/, 'http:');
  const get = await fetch(url);
  assert.equal(get.status, 426);
  assert.equal(get.headers.get('upgrade'), 'websocket');
  await get.text();
  const post = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }) });
  assert.equal(post.status, 426);
  assert.equal(await post.text(), 'this is a WebSocket endpoint\n');
});

test('beyond --max-connections the upgrade is answered 503', T, async () => {
  const s = await startWeb(['--ws', '0', '--max-connections', '1']);
  try {
    const first = await open(s.ws);
    assert.deepEqual(await open(s.ws), { refused: 503 });
    first.close();
  } finally {
    await s.stop();
  }
});

test('SIGTERM: the drain notice, the request in flight answered, then the connection is closed 1001 and the server exits 0', T, async () => {
  const s = await startWeb(['--ws', '0', '--demo']);
  const ws = await open(s.ws);
  const answers = [];
  const three = new Promise((r) => ws.on('message', (d) => { answers.push(JSON.parse(String(d))); if (answers.length === 3) r(); }));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sleep', params: { ms: 300 } }));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'rpc.ping' }));
  const c = closed(ws);
  await within(5000, new Promise((r) => ws.once('message', r)), 'ping answer');  // sleep is in flight now
  const exit = s.stop('SIGTERM');
  await within(5000, three, 'sleep answer');
  // docs/protocol.md, "Drain" (tests/host/drain.test.mjs has the -32005 part).
  assert.deepEqual(answers.map((a) => a.id ?? a.method), [2, '$/weft/drain', 1]);
  assert.equal(answers[2].result, 300);
  assert.equal((await c).code, 1001);
  assert.deepEqual(await exit, { code: 0, signal: null });
});

test('a client that answers nothing (not even the pings) for --idle-timeout is closed', T, async () => {
  const s = await startWeb(['--ws', '0', '--idle-timeout', '400']);
  try {
    const { port } = new URL(s.ws);
    // A hand-made upgrade, then silence: npm ws would answer the server's pings.
    const sock = net.connect(Number(port), '127.0.0.1');
    let got = '';
    sock.on('data', (d) => { got += d.toString('latin1'); });
    sock.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    const t0 = Date.now();
    await within(5000, new Promise((r) => sock.once('close', r)), 'server closing the idle connection');
    assert.match(got, /^HTTP\/1\.1 101/);
    assert.ok(got.includes('\x89'), 'a ping was sent first');  // opcode 0x9 with FIN
    assert.ok(Date.now() - t0 >= 300, 'not before the idle timeout');
  } finally {
    await s.stop();
  }
});

test('a client that stops reading is a slow client: its connection is closed after the write timeout', T, async () => {
  const s = await startWeb(['--ws', '0', '--demo'], { WEFT_WRITE_TIMEOUT_MS: '300' });
  try {
    const ws = await open(s.ws);
    ws._socket.pause();  // npm ws reads no more: the kernel buffers fill, the server's write stalls
    const big = 'x'.repeat(256 * 1024);
    // 40 MiB of answers: more than the socket buffers and max_queued_output (8 MiB) hold.
    for (let i = 0; i < 160; i++) ws.send(JSON.stringify({ jsonrpc: "2.0", id: i, method: "echo", params: [big] }));
    await within(10000, s.waitLog(/slow client/), 'the server noticing the slow client');
    // Its connection is gone on the server: a second client is the only one left.
    // (The first client need not read its megabytes to learn it.)
    const other = await open(s.ws);
    other.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }));
    assert.equal(json(await nextMessage(other)).result.connections, 1);
    other.close();
    ws.terminate();
  } finally {
    await s.stop();
  }
});

test('serve flags: a bad --ws/--http address or --allow-origin value is a usage error (exit 2)', T, async () => {
  const { spawnSync } = await import('node:child_process');
  const { WEFT_BIN } = await import('./helpers.mjs');
  for (const [args, msg] of [
    [['--ws', 'nope'], /--ws expects \[HOST:\]PORT, got 'nope'/],
    [['--http', '127.0.0.1:99999'], /--http expects \[HOST:\]PORT/],
    [['--ws', '0', '--http-path', 'mcp'], /--http-path expects a path starting with '\/'/],
    [['--ws', '0', '--allow-origin', ''], /--allow-origin needs an origin/],
    [['--ws', '0', '--max-message', '0'], /--max-message expects an integer/],
  ]) {
    const r = spawnSync(WEFT_BIN, ['serve', ...args], { encoding: 'utf8', timeout: 5000 });
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, msg);
  }
});

test('weft call --timeout over ws://: only the timeout is reported, not the late answer to its own cancel', T, async () => {
  const { runCli } = await import('./helpers.mjs');
  for (let i = 0; i < 3; i++) {
    const r = await runCli(['call', '--connect', srv.ws, '--timeout', '300', 'sleep', '{"ms": 1500}']);
    assert.equal(r.code, 4);
    assert.equal(r.stderr, 'weft: timed out after 300 ms\n');
  }
});
