// rpc.handshake and per-response metrics on the message transports:
// `weft serve --ws/--http --handshake --metrics` (docs/protocol.md
// "Handshake", "Metrics"; docs/transports.md). Driven by clients we did not
// write (npm `ws`, curl) and by the native client (`weft call ws://…`,
// `http://…`), which offers the handshake on those links too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { runCli, within } from './helpers.mjs';
import { startWeb } from './web-server.mjs';

const T = { timeout: 30000 };
const ACCEPT = 'application/json, text/event-stream';
let srv;    // --handshake --metrics on both listeners
let plain;  // no --handshake: plain JSON-RPC, as before
before(async () => {
  srv = await startWeb(['--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--demo', '--metrics']);
  plain = await startWeb(['--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--demo']);
});
after(async () => { await srv.stop(); await plain.stop(); });

const offer = (capabilities, extra = {}) => ({
  jsonrpc: '2.0', id: 1, method: 'rpc.handshake', params: { version: '1.0', capabilities, ...extra },
});

async function openWs(url) {
  const ws = new WebSocket(url);
  const inbox = [];
  const waiters = [];
  ws.on('message', (data) => { inbox.push(JSON.parse(String(data))); for (const w of waiters.splice(0)) w(); });
  await within(5000, new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); }), 'open');
  const next = async () => {
    while (!inbox.length) await within(5000, new Promise((r) => waiters.push(r)), 'a message');
    return inbox.shift();
  };
  return { ws, next, send: (m) => ws.send(JSON.stringify(m)) };
}

// curl → { status, headers (lower-case names), body }.
function post(url, body, headers = {}) {
  const out = execFileSync('curl', ['-s', '-i', '--max-time', '5', '-X', 'POST', '-H', `Accept: ${ACCEPT}`,
    '-H', 'Content-Type: application/json', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    '--data-binary', JSON.stringify(body), url], { encoding: 'utf8' });
  const [head, ...rest] = out.split('\r\n\r\n');
  const lines = head.split('\r\n');
  const h = {};
  for (const l of lines.slice(1)) { const i = l.indexOf(':'); h[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim(); }
  return { status: Number(lines[0].split(' ')[1]), headers: h, body: rest.join('\r\n\r\n') };
}

test('WebSocket: --handshake serves rpc.handshake, agreeing on what both list; compression only with --compress', T, async () => {
  const c = await openWs(srv.ws);
  c.send(offer(['streams', 'metrics', 'compression', 'telepathy'], { compression_preference: ['zstd'] }));
  const a = await c.next();
  assert.equal(a.id, 1);
  assert.deepEqual(a.result.capabilities, ['streams', 'metrics']);
  assert.equal(a.result.compression_used, undefined, 'not without --compress zstd (web-compression.test.mjs)');
  assert.match(a.result.session, /^ws#\d+$/);
  assert.equal(a.result.limits.max_in_flight, 1000);
  c.ws.close();
});

test('WebSocket: once "metrics" is agreed every answer carries processing_time_us and response_size', T, async () => {
  const c = await openWs(srv.ws);
  c.send(offer(['metrics']));
  await c.next();
  c.send({ jsonrpc: '2.0', id: 2, method: 'subtract', params: [42, 23] });
  const a = await c.next();
  assert.equal(a.result, 19);
  assert.equal(a.metrics.response_size, Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', result: 19, id: 2 })));
  assert.ok(Number.isInteger(a.metrics.processing_time_us) && a.metrics.processing_time_us >= 0);
  c.ws.close();
});

test('WebSocket: without a handshake the answers are plain JSON-RPC (no metrics member)', T, async () => {
  const c = await openWs(srv.ws);
  c.send({ jsonrpc: '2.0', id: 3, method: 'subtract', params: [42, 23] });
  assert.deepEqual(await c.next(), { jsonrpc: '2.0', result: 19, id: 3 });
  c.ws.close();
});

test('WebSocket: another major version is refused -32006 naming the version served', T, async () => {
  const c = await openWs(srv.ws);
  c.send({ jsonrpc: '2.0', id: 4, method: 'rpc.handshake', params: { version: '2.0', capabilities: [] } });
  const a = await c.next();
  assert.equal(a.error.code, -32006);
  assert.deepEqual(a.error.data, { supported: '1.0' });
  c.ws.close();
});

test('WebSocket: a server without --handshake answers rpc.handshake -32601, as any JSON-RPC server', T, async () => {
  const c = await openWs(plain.ws);
  c.send(offer(['metrics']));
  assert.equal((await c.next()).error.code, -32601);
  c.ws.close();
});

test('Streamable HTTP: the handshake starts a session named by its Mcp-Session-Id; its later answers carry metrics', T, () => {
  const h = post(srv.http, offer(['streams', 'metrics']));
  assert.equal(h.status, 200);
  const sid = h.headers['mcp-session-id'];
  assert.ok(sid);
  const agreed = JSON.parse(h.body).result;
  assert.deepEqual(agreed.capabilities, ['streams', 'metrics']);
  assert.equal(agreed.session, sid);
  const r = post(srv.http, { jsonrpc: '2.0', id: 2, method: 'subtract', params: [42, 23] }, { 'Mcp-Session-Id': sid });
  const a = JSON.parse(r.body);
  assert.equal(a.result, 19);
  assert.equal(a.metrics.response_size, Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', result: 19, id: 2 })));
  // Another session that made no handshake gets no metrics.
  const other = post(srv.http, { jsonrpc: '2.0', id: 3, method: 'subtract', params: [42, 23] });
  assert.equal(JSON.parse(other.body).metrics, undefined);
});

for (const kind of ['ws', 'http']) {
  test(`weft call --metrics ${kind}://: the native client offers the handshake and prints the answer's metrics`, T, async () => {
    const r = await runCli(['call', '--metrics', '--connect', srv[kind], 'subtract', '[42,23]']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '19');
    const m = JSON.parse(r.stderr.match(/^metrics (\{.*\})$/m)[1]);
    assert.ok(m.response_size > 0 && Number.isInteger(m.processing_time_us));
  });

  test(`weft call --metrics --stream ${kind}://: the handshake agrees on streams too, and the chunks arrive`, T, async () => {
    const r = await runCli(['call', '--metrics', '--stream', '--connect', srv[kind], 'bytes', '{"count":2,"size":3}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{"bytes":[0,0,0],"subtype":null}\n{"bytes":[1,1,1],"subtype":null}\n{"bytes":6,"chunks":2}\n');
  });

  test(`weft call --stream ${kind}:// against a server without --handshake: the chunks arrive, then the result`, T, async () => {
    const r = await runCli(['call', '--stream', '--connect', plain[kind], 'bytes', '{"count":2,"size":3}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{"bytes":[0,0,0],"subtype":null}\n{"bytes":[1,1,1],"subtype":null}\n{"bytes":6,"chunks":2}\n');
  });

  test(`weft call --metrics ${kind}:// against a server without a handshake is answered without metrics`, T, async () => {
    const r = await runCli(['call', '--metrics', '--connect', plain[kind], 'subtract', '[42,23]']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '19');
    assert.doesNotMatch(r.stderr, /^metrics /m);
  });
}
