// webSocketTransport (js/transports/websocket.js): a socket that errors
// closes the transport, a JSONRPCClient sent a frame it cannot read before
// the core loaded ends the connection once it has, and what JSON text cannot carry faithfully (a lone
// surrogate) is refused at send as a function or NaN is, each element of a
// batch with its own reason (docs/transports.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { inColdRealm } from '../support/cold-realm.mjs';
import { until } from '../support/until.mjs';
import { Peer, JSONRPCServer, ErrorCode, webSocketTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };

// A port nothing listens on: one the system gave and took back.
async function refusedPort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

test('a socket that errors (connection refused) closes the transport: a queued call rejects at once with -32002, nothing is thrown', T, async () => {
  await ready;
  const ws = new WebSocket(`ws://127.0.0.1:${await refusedPort()}/`);
  const peer = new Peer(webSocketTransport(ws), { timeout: 10000 });
  try {
    await assert.rejects(peer.request('subtract', [42, 23]), (e) => e.code === ErrorCode.Closed);
    await assert.rejects(peer.request('subtract', [1, 1]), (e) => e.code === ErrorCode.Closed);
  } finally { peer.destroy(); }
});

test('destroy() while the socket is connecting: the error npm ws then reports is not thrown', T, async () => {
  await ready;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${wss.address().port}/`);
    new Peer(webSocketTransport(ws)).destroy();
    await new Promise((r) => ws.once('close', r));
  } finally { await new Promise((r) => wss.close(r)); }
});

// An open socket in memory: what is sent is kept (parsed), frames come in with deliver().
function fakeSocket() {
  const listeners = {};
  return {
    readyState: 1, sent: [],
    send(s) { this.sent.push(JSON.parse(s)); },
    addEventListener(k, f) { listeners[k] = f; },
    removeEventListener() {},
    close() {},
    deliver(m) { listeners.message({ data: JSON.stringify(m) }); },
  };
}

const lone = '😀'.slice(0, 1);  // '\ud83d', as a cut emoji leaves it

test('a call whose params hold a lone surrogate (in a string or a key) is not sent: it fails at once with -32002; a surrogate pair goes', T, async () => {
  await ready;
  const ws = fakeSocket();
  const peer = new Peer(webSocketTransport(ws), { timeout: 10000, onDiagnostic: () => {} });
  try {
    for (const params of [['a' + lone], { ['k' + lone]: 1 }, [{ deep: [lone + 'b'] }]]) {
      await assert.rejects(peer.request('echo', params), (e) => e.code === ErrorCode.Closed &&
        /lone surrogate/.test(e.message) && e.cause instanceof TypeError);
    }
    assert.deepEqual(ws.sent, []);
    peer.request('echo', ['a😀']).catch(() => {});
    assert.deepEqual(ws.sent.map((m) => m.params), [['a😀']]);
  } finally { peer.destroy(); }
});

test('a batch answer: each result JSON cannot carry is answered -32603 with its own reason, the others as they are', T, async () => {
  await ready;
  const ws = fakeSocket();
  const server = new JSONRPCServer(webSocketTransport(ws), { onDiagnostic: () => {} });
  server.method('fn', () => () => 1);
  server.method('inf', () => [Infinity]);
  server.method('ok', () => 'fine');
  server.method('cut', () => 'a' + lone);
  try {
    ws.deliver(['fn', 'inf', 'ok', 'cut'].map((method, i) => ({ jsonrpc: '2.0', method, id: i + 1 })));
    await until(() => ws.sent.length === 1, 'the batch answer');
    const [fn, inf, ok, cut] = ws.sent[0];
    const failed = (m, why) => m.error?.code === ErrorCode.InternalError &&
      m.error.message === 'Internal error: the result could not be sent: ' + why;
    assert.ok(failed(fn, 'a function is not JSON'), JSON.stringify(fn));
    assert.ok(failed(inf, 'NaN or Infinity has no JSON representation'), JSON.stringify(inf));
    assert.deepEqual(ok, { jsonrpc: '2.0', result: 'fine', id: 3 });
    assert.ok(failed(cut, 'a lone surrogate is not JSON'), JSON.stringify(cut));
  } finally { server.destroy(); }
});

test('a JSONRPCClient sent an undecodable frame before the core loaded: once it loads, the call made before fails -32700 naming why, the socket is closed, a later call fails at once', T, async () => {
  const got = await inColdRealm(`async (m) => {
    const listeners = {};
    const ws = {
      readyState: 1, sent: [], closed: null,
      send(s) { this.sent.push(JSON.parse(s).method); },
      addEventListener(k, f) { listeners[k] = f; },
      removeEventListener(k) { delete listeners[k]; },
      close(code) { this.closed = code; this.readyState = 3; },
    };
    const client = new m.JSONRPCClient(m.webSocketTransport(ws), { timeout: 0, onDiagnostic: () => {} });
    const outcome = (p) => p.then(() => 'resolved', (e) => e.code + ' ' + e.message);
    const early = outcome(client.request('echo', [1]));
    listeners.message({ data: 'not json' });
    const loaded = m.coreVersion() !== undefined;
    const out = { loaded, early: await early };
    out.later = await outcome(client.request('echo', [2]));
    out.closed = ws.closed;
    out.sent = ws.sent;
    out.calls = client.stats().calls;
    client.destroy();
    return out;
  }`);
  assert.equal(got.loaded, false, 'the frame arrived before the core loaded');
  assert.match(got.early, /^-32700 Parse error: undecodable data from the server: not JSON text/);
  assert.equal(got.later, `${ErrorCode.Closed} Endpoint closed`);
  assert.equal(got.closed, 1000);
  assert.deepEqual(got.sent, ['echo'], 'the call made before went out; nothing answered the frame');
  assert.equal(got.calls, 0);
});
