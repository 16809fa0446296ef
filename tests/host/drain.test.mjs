// `weft serve` draining (docs/protocol.md, "Drain"; docs/reliability.md):
// SIGTERM/SIGINT announce $/weft/drain with reason "shutdown", SIGHUP with
// reason "reload" (the seed's hot reload: exit 0, the supervisor restarts);
// new requests on open connections get -32005 from the core, calls in flight
// finish, the socket file is removed, exit 0 — all within --grace. Driven by
// raw framed sockets, npm `ws` and the npm json-rpc-2.0 client (libraries we
// did not write).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import WebSocket from 'ws';
import { JSONRPCClient } from 'json-rpc-2.0';
import { spawn } from 'node:child_process';
import { WEFT_BIN, connectUnix, killAll, startServer, tempDir, track, within } from './helpers.mjs';
import { startWeb } from './web-server.mjs';

const T = { timeout: 30000 };
const tmp = tempDir();
let n = 0;
const sockPath = () => path.join(tmp.dir, `d${n++}.sock`);
after(() => {
  killAll();
  tmp.cleanup();
});

const isDrain = (m) => m.method === '$/weft/drain';
// The first $/weft/drain a raw client received (unmatched: it has no id).
async function drainNotice(client) {
  while (!client.unmatched.some(isDrain))
    await within(5000, new Promise((r) => client.waiters.push(r)), 'drain notice');
  return client.unmatched.find(isDrain);
}
// Resolves once `cond()` holds, checked after each `event` of `emitter`
// (whose listener that records what `cond` looks at was added first).
function when(emitter, event, cond, what) {
  return within(5000, new Promise((resolve) => {
    const check = () => {
      if (!cond()) return;
      emitter.off(event, check);
      resolve();
    };
    emitter.on(event, check);
    check();
  }), what);
}

test('SIGTERM with calls in flight: every connection gets $/weft/drain, each call in flight completes once, a new request gets -32005 with data, the socket file is removed, exit 0', T, async () => {
  const p = sockPath();
  const srv = await startServer(['serve', '--unix', p, '--demo', '--reconnect-after', '250']);
  const conns = await Promise.all([connectUnix(p), connectUnix(p)]);
  const calls = conns.flatMap(({ client }) => [1000, 1010, 1020].map((ms) => client.request('sleep', { ms })));
  // Answered in order after the sleeps were received: all three are in flight.
  for (const { client } of conns) await within(5000, client.request('rpc.ping'), 'ping');
  srv.kill('SIGTERM');
  for (const { client } of conns) {
    const notice = await drainNotice(client);
    assert.deepEqual(notice, { jsonrpc: '2.0', method: '$/weft/drain', params: { reason: 'shutdown', downtime: 0, reconnect_after: 250 } });
  }
  const refused = await within(5000, conns[0].client.request('rpc.ping'), 'new request while draining');
  assert.equal(refused.error.code, -32005);
  assert.deepEqual(refused.error.data, { retry_after: 250, reason: 'shutdown' });
  const answers = await within(10000, Promise.all(calls), 'calls in flight');
  assert.deepEqual(answers.map((r) => r.result), [1000, 1010, 1020, 1000, 1010, 1020]);
  assert.deepEqual(await within(10000, srv.exited, 'exit'), { code: 0, signal: null });
  assert.ok(!existsSync(p), 'socket file removed');
  for (const { client, socket } of conns) {
    if (!client.closed) await within(5000, new Promise((r) => socket.once('close', r)), 'the server closes the connection');
    // Exactly once: nothing but the notice arrived without a waiting request.
    assert.deepEqual(client.unmatched.filter((m) => !isDrain(m)), []);
    socket.destroy();
  }
});

test('SIGHUP: drain with reason "reload", --reconnect-after and --downtime in the notice and in -32005, then exit 0', T, async () => {
  const p = sockPath();
  const srv = await startServer(['serve', '--unix', p, '--demo', '--reconnect-after', '700', '--downtime', '2000']);
  const { socket, client } = await connectUnix(p);
  const inflight = client.request('sleep', { ms: 1000 });
  await within(5000, client.request('rpc.ping'), 'ping');
  srv.kill('SIGHUP');
  const notice = await drainNotice(client);
  assert.deepEqual(notice.params, { reason: 'reload', downtime: 2000, reconnect_after: 700 });
  const refused = await within(5000, client.request('echo', ['x']), 'new request while draining');
  assert.equal(refused.error.code, -32005);
  assert.deepEqual(refused.error.data, { retry_after: 700, reason: 'reload' });
  assert.equal((await within(5000, inflight, 'call in flight')).result, 1000);
  assert.deepEqual(await within(10000, srv.exited, 'exit'), { code: 0, signal: null });
  assert.match(srv.stderrText, /received SIGHUP, draining/);
  assert.ok(!existsSync(p), 'socket file removed');
  socket.destroy();
});

test('a grace that expires still exits 0: the call still in flight is cut off, the socket file removed', T, async () => {
  const p = sockPath();
  const srv = await startServer(['serve', '--unix', p, '--demo', '--grace', '200']);
  const { socket, client } = await connectUnix(p);
  const inflight = client.request('sleep', { ms: 20000 }).then(() => 'answered', (e) => e.message);
  await within(5000, client.request('rpc.ping'), 'ping');
  const t0 = Date.now();
  srv.kill('SIGTERM');
  assert.equal((await drainNotice(client)).params.reason, 'shutdown');
  assert.deepEqual(await within(5000, srv.exited, 'exit'), { code: 0, signal: null });
  assert.ok(Date.now() - t0 < 3000, `exited after ${Date.now() - t0} ms, not after the 20 s call`);
  assert.equal(await within(5000, inflight), 'connection closed');
  assert.ok(!existsSync(p));
  socket.destroy();
});

test('WebSocket: SIGTERM sends $/weft/drain, a new request gets -32005, the call in flight is answered, then close 1001', T, async () => {
  const s = await startWeb(['--ws', '127.0.0.1:0', '--demo', '--reconnect-after', '400']);
  const ws = new WebSocket(s.ws);
  await within(5000, new Promise((r, j) => { ws.once('open', r); ws.once('error', j); }), 'open');
  const got = [];
  ws.on('message', (d) => got.push(JSON.parse(String(d))));
  const closed = new Promise((r) => ws.once('close', (code) => r(code)));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sleep', params: { ms: 1000 } }));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'rpc.ping' }));
  await when(ws, 'message', () => got.some((m) => m.id === 2), 'ping answered');
  const exit = s.stop('SIGTERM');
  await when(ws, 'message', () => got.some(isDrain), 'drain notice');
  assert.deepEqual(got.find(isDrain).params, { reason: 'shutdown', downtime: 0, reconnect_after: 400 });
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'rpc.ping' }));
  assert.equal(await within(5000, closed, 'close'), 1001);
  const by = (id) => got.filter((m) => m.id === id);
  assert.equal(by(1).length, 1);
  assert.equal(by(1)[0].result, 1000);
  assert.equal(by(3).length, 1);
  assert.equal(by(3)[0].error.code, -32005);
  assert.deepEqual(by(3)[0].error.data, { retry_after: 400, reason: 'shutdown' });
  assert.deepEqual(await exit, { code: 0, signal: null });
});

// POSTs on one kept-alive connection (node:http, one socket).
function keptAlive(url) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    post: (body, sid) => new Promise((resolve, reject) => {
      const req = http.request(url, {
        method: 'POST', agent,
        headers: { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', 'Mcp-Session-Id': sid },
      }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    }),
    agent,
  };
}

test('Streamable HTTP: the notice goes on the GET stream, a request POSTed into the session while draining gets -32005, exit 0', T, async () => {
  const s = await startWeb(['--http', '127.0.0.1:0', '--demo']);
  const ACCEPT = 'application/json, text/event-stream';
  const post = (body, sid) => fetch(s.http, {
    method: 'POST',
    headers: { Accept: ACCEPT, 'Content-Type': 'application/json', ...(sid ? { 'Mcp-Session-Id': sid } : {}) },
    body: JSON.stringify(body),
  });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  // A kept-alive connection of our own, open (idle) when the drain starts.
  const kept = keptAlive(s.http);
  assert.equal((await kept.post({ jsonrpc: '2.0', id: 5, method: 'rpc.ping' }, sid)).status, 200);
  const get = await fetch(s.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid } });
  const getText = get.text();  // until the server ends the stream
  // Its SSE headers (and priming event) come once the server has the request: in flight.
  const slow = (await post({ jsonrpc: '2.0', id: 2, method: 'slow', params: { ms: 1500 } }, sid)).text();
  const exit = s.stop('SIGTERM');
  const events = await within(5000, getText, 'GET stream ended');
  assert.match(events, /"method":"\$\/weft\/drain"/);
  assert.match(events, /"reason":"shutdown"/);
  const refused = await within(5000, kept.post({ jsonrpc: '2.0', id: 4, method: 'rpc.ping' }, sid), 'POST while draining');
  assert.equal(refused.status, 200);
  assert.equal(refused.headers.connection, 'close');
  const body = JSON.parse(refused.body);
  assert.equal(body.error.code, -32005);
  assert.deepEqual(body.error.data, { retry_after: 1000, reason: 'shutdown' });
  assert.match(await within(5000, slow, 'slow answered'), /"slept":1500/);
  assert.deepEqual(await exit, { code: 0, signal: null });
  kept.agent.destroy();
});

test('a client we did not write (npm json-rpc-2.0) takes the notice harmlessly and reads -32005 as an error', T, async () => {
  const p = sockPath();
  const srv = await startServer(['serve', '--unix', p, '--demo', '--framing', 'ndjson']);
  const { socket } = await connectUnix(p, 'ndjson');
  const received = [];
  const client = new JSONRPCClient((req) => socket.write(JSON.stringify(req) + '\n'));
  let buf = '';
  socket.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      received.push(msg);
      client.receive(msg);  // a notification: ignored by the library
    }
  });
  const inflight = client.request('sleep', { ms: 1000 });
  assert.equal(await client.request('subtract', [5, 3]), 2);
  srv.kill('SIGTERM');
  await when(socket, 'data', () => received.some(isDrain), 'drain notice');
  await assert.rejects(client.request('subtract', [5, 3]), (e) => e.code === -32005 && e.data.reason === 'shutdown');
  assert.equal(await within(5000, inflight, 'in flight'), 1000);
  assert.deepEqual(await within(10000, srv.exited, 'exit'), { code: 0, signal: null });
  socket.destroy();
});

test('weft call --session across a reload: the call in flight is answered, a line read while draining gets -32005, a line after the restart is answered by the new server', T, async () => {
  const p = sockPath();
  const first = await startServer(['serve', '--unix', p, '--demo', '--reconnect-after', '200']);
  const cli = track(spawn(WEFT_BIN, ['call', '--session', '--unix', p, '--verbose'], { stdio: ['pipe', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  cli.stdout.on('data', (d) => (out += d));
  cli.stderr.on('data', (d) => (err += d));
  const exited = new Promise((r) => cli.once('close', (code) => r(code)));
  const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  cli.stdin.write('sleep {"ms": 800}\n');
  // The session connects before it reads its first line, so the sleep is in
  // flight only once the server counts it (rpc.ping's in_flight).
  const side = await connectUnix(p);
  await within(10000, (async () => {
    while ((await side.client.request('rpc.ping')).result.in_flight < 1);
  })(), 'the sleep in flight');
  side.socket.destroy();
  first.kill('SIGHUP');
  await when(cli.stderr, 'data', () => /server draining \(reload\)/.test(err), 'the client saw the notice');
  cli.stdin.write('echo ["meanwhile"]\n');
  assert.deepEqual(await within(10000, first.exited, 'first server exit'), { code: 0, signal: null });
  await when(cli.stderr, 'data', () => /drained connection closed/.test(err), 'the client saw the close');
  const second = await startServer(['serve', '--unix', p, '--demo']);
  cli.stdin.end('echo ["after"]\n');
  assert.equal(await within(10000, exited, 'session end'), 1);  // the -32005 line is an error answer
  const got = lines();
  assert.equal(got.length, 3);
  assert.deepEqual(got[0], { jsonrpc: '2.0', result: 800, id: 1 });
  assert.equal(got[1].id, 2);
  assert.equal(got[1].error.code, -32005);
  assert.deepEqual(got[1].error.data, { retry_after: 200, reason: 'reload' });
  assert.deepEqual(got[2], { jsonrpc: '2.0', result: ['after'], id: 3 });
  second.kill('SIGTERM');
  await within(10000, second.exited, 'second server exit');
});

test('rpc.ping counts the requests being served on every listener (in_flight): a Unix connection, a WebSocket and a Streamable HTTP session', T, async () => {
  const p = sockPath();
  const s = await startWeb(['--unix', p, '--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--demo']);
  track(s.proc);
  await within(5000, s.waitLog(/listening on unix:/), 'unix listener');  // logged after the web ones
  const { client, socket } = await connectUnix(p);
  const ws = new WebSocket(s.ws);
  // Listened for now: the socket may open while the first ping is awaited.
  const opened = new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
  opened.catch(() => {});  // awaited below; an early error must not go unhandled meanwhile
  try {
    const ping = async () => (await within(5000, client.request('rpc.ping'), 'ping')).result;
    assert.equal((await ping()).in_flight, 0);  // the ping is answered in place
    await within(5000, opened, 'open');
    const wsAnswer = new Promise((r) => ws.once('message', (d) => r(JSON.parse(String(d)))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sleep', params: { ms: 1500 } }));
    const post = (body, sid) => fetch(s.http, {
      method: 'POST',
      headers: { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', ...(sid ? { 'Mcp-Session-Id': sid } : {}) },
      body: JSON.stringify(body),
    });
    const init = await within(5000, post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }), 'session');
    const sid = init.headers.get('mcp-session-id');
    await init.text();
    const httpAnswer = post({ jsonrpc: '2.0', id: 2, method: 'sleep', params: { ms: 1500 } }, sid).then((r) => r.text());
    await within(10000, (async () => { while ((await ping()).in_flight < 2); })(), 'both sleeps in flight');
    assert.equal((await within(5000, wsAnswer, 'ws answer')).result, 1500);
    assert.match(await within(5000, httpAnswer, 'http answer'), /"result":1500/);
    assert.equal((await ping()).in_flight, 0);
  } finally {
    ws.terminate();
    socket.destroy();
  }
  assert.deepEqual(await within(10000, s.stop('SIGTERM'), 'exit'), { code: 0, signal: null });
});
