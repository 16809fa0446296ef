// The native client against peers we did not write: `weft call --connect`
// (one-shot and --session) over ws:// to an npm `ws` server running the
// `json-rpc-2.0` package, and over http:// to the MCP TypeScript SDK's
// StreamableHTTPServerTransport (JSON and SSE answers, sessions, a request
// from the server to the client, DELETE at the end) and to a plain Node http
// server for the failure statuses.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, describe, test } from 'node:test';

import { JSONRPCServer, JSONRPCServerAndClient, JSONRPCClient } from 'json-rpc-2.0';
import { WebSocketServer } from 'ws';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

import { killAll, runCli, startServer, within } from './helpers.mjs';

after(() => killAll());

const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const lines = (s) => s.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

// ---- ws:// -------------------------------------------------------------------
// json-rpc-2.0 over npm ws: one JSON text per WebSocket message, both ways.
async function startWsServer() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  const seen = { notes: [], clientAnswers: [], connections: 0 };
  wss.on('connection', (socket) => {
    seen.connections++;
    const peer = new JSONRPCServerAndClient(
      new JSONRPCServer(),
      new JSONRPCClient((req) => socket.send(JSON.stringify(req))),
    );
    peer.addMethod('sum', (params) => params.reduce((a, b) => a + b, 0));
    peer.addMethod('slow', ({ ms, v }) => new Promise((r) => setTimeout(() => r(v), ms)));
    peer.addMethod('note', (params) => {
      seen.notes.push(params);
    });
    // A request from the server to the client while answering ours: the
    // weft CLI registers no methods, so the client's Peer answers -32601.
    peer.addMethod('ask_client', async () => {
      try {
        return { answered: await peer.request('client.method', [1]) };
      } catch (e) {
        seen.clientAnswers.push(e.code);
        return { error: e.code };
      }
    });
    peer.addMethod('hang_up', () => {
      setImmediate(() => socket.terminate());
      return new Promise(() => {});
    });
    socket.on('message', (data, isBinary) => {
      assert.equal(isBinary, false, 'JSON travels in text frames');
      peer.receiveAndSend(JSON.parse(data.toString()));
    });
    socket.on('close', () => peer.rejectAllPendingRequests('closed'));
  });
  const port = wss.address().port;
  return { wss, seen, url: `ws://127.0.0.1:${port}/rpc`, close: () => new Promise((r) => wss.close(r)) };
}

describe('ws:// against npm ws + json-rpc-2.0', () => {
  test('one call: the result on stdout, exit 0', async () => {
    const s = await startWsServer();
    const r = await runCli(['call', '--connect', s.url, '--timeout', '5000', 'sum', '[1,2,3]']);
    assert.deepEqual([r.code, r.stdout], [0, '6\n'], r.stderr);
    await s.close();
  });

  test('session: many calls in flight on one connection, answers in input order', async () => {
    const s = await startWsServer();
    const input = [];
    for (let i = 0; i < 200; i++) input.push(`slow {"ms":${(200 - i) % 17},"v":${i}}`);
    input.push('{"jsonrpc":"2.0","method":"note","params":["hello"]}');
    input.push('{"jsonrpc":"2.0","id":"last","method":"sum","params":[40,2]}');
    const r = await runCli(['call', '--session', '--connect', s.url, '--timeout', '10000'], { input: input.join('\n') + '\n' });
    assert.equal(r.code, 0, r.stderr);
    const out = lines(r.stdout);
    assert.equal(out.length, 201);
    out.slice(0, 200).forEach((m, i) => assert.deepEqual(m, { jsonrpc: '2.0', result: i, id: i + 1 }));
    assert.deepEqual(out[200], { jsonrpc: '2.0', result: 42, id: 'last' });
    assert.equal(s.seen.connections, 1);
    assert.deepEqual(s.seen.notes, [['hello']]);
    await s.close();
  });

  test('a request from the server is answered by the client (-32601: the CLI registers none)', async () => {
    const s = await startWsServer();
    const r = await runCli(['call', '--connect', s.url, '--timeout', '5000', 'ask_client']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { error: -32601 });
    assert.deepEqual(s.seen.clientAnswers, [-32601]);
    await s.close();
  });

  test('the server dropping the connection fails the call with -32002, exit 3', async () => {
    const s = await startWsServer();
    const r = await runCli(['call', '--connect', s.url, '--timeout', '5000', 'hang_up']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /connection to ws:\/\/127\.0\.0\.1:\d+\/rpc closed/);
    await s.close();
  });

  test('nobody listening: exit 3 after the retries', async () => {
    const s = await startWsServer();
    const url = s.url;
    await s.close();
    const r = await runCli(['call', '--connect', url, '--retries', '1', 'sum', '[1]']);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /cannot connect to ws:.*2 attempts/);
  });
});

// ---- http:// (MCP Streamable HTTP) -----------------------------------------
// The SDK's own server transport, one per session, behind a Node http server
// that records what the client sent.
async function startMcpServer({ json = false } = {}) {
  const transports = new Map();
  const log = [];
  const newServer = () => {
    const mcp = new McpServer({ name: 'test', version: '1.0.0' });
    mcp.tool('hello', async () => ({ content: [{ type: 'text', text: 'hello from MCP' }] }));
    // Sends a request to the client (MCP "ping", server → client) and reports the outcome.
    mcp.tool('ping_client', async () => {
      try {
        await mcp.server.ping();
        return { content: [{ type: 'text', text: 'pong' }] };
      } catch (e) {
        return { content: [{ type: 'text', text: `client answered ${e.code}` }] };
      }
    });
    return mcp;
  };
  const server = http.createServer(async (req, res) => {
    const sid = req.headers['mcp-session-id'];
    log.push({ method: req.method, sid, accept: req.headers.accept, version: req.headers['mcp-protocol-version'] });
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    transports,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

const mcpSession = [
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"weft","version":"0"}}}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{}}}',
  '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ping_client","arguments":{}}}',
].join('\n') + '\n';

for (const json of [false, true]) {
  describe(`http:// against the MCP SDK's StreamableHTTPServerTransport (${json ? 'JSON' : 'SSE'} answers)`, () => {
    test('a session: initialize, tools/list, tools/call, a request from the server, DELETE at the end', async () => {
      const s = await startMcpServer({ json });
      const r = await runCli(['call', '--session', '--connect', s.url, '--timeout', '10000'], { input: mcpSession });
      assert.equal(r.code, 0, r.stderr);
      const out = lines(r.stdout);
      assert.deepEqual(out.map((m) => m.id), [1, 2, 3, 4]);
      assert.equal(out[0].result.serverInfo.name, 'test');
      assert.deepEqual(out[1].result.tools.map((t) => t.name).sort(), ['hello', 'ping_client']);
      assert.equal(out[2].result.content[0].text, 'hello from MCP');
      if (!json) {
        // SSE answers carry the server's ping to the client; our answer goes back by POST.
        assert.equal(out[3].result.content[0].text, 'client answered -32601');
      }
      const posts = s.log.filter((e) => e.method === 'POST');
      assert.ok(posts.every((e) => /application\/json/.test(e.accept) && /text\/event-stream/.test(e.accept)));
      assert.equal(posts[0].sid, undefined);  // initialize starts the session
      const sid = posts[1].sid;
      assert.ok(sid, 'Mcp-Session-Id sent after initialize');
      assert.ok(posts.slice(1).every((e) => e.sid === sid));
      assert.ok(posts.slice(1).every((e) => e.version === '2025-06-18'), 'MCP-Protocol-Version');
      assert.ok(s.log.some((e) => e.method === 'DELETE' && e.sid === sid), 'session ended with DELETE');
      await s.close();
    });
  });
}

describe('http:// failure statuses (a plain Node http server)', () => {
  test('an error status fails the call with -32002 naming it; 202 for a notification is success', async () => {
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const msg = JSON.parse(body);
        if (msg.id === undefined) return res.writeHead(202).end();
        if (msg.method === 'boom') return res.writeHead(500, { 'Content-Type': 'text/plain' }).end('kaput');
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: msg.params }));
      });
    });
    const port = await listen(server);
    const url = `http://127.0.0.1:${port}/`;
    let r = await runCli(['call', '--connect', url, '--timeout', '5000', 'echo', '[1,"a"]']);
    assert.deepEqual([r.code, r.stdout], [0, '[1,"a"]\n'], r.stderr);
    // An HTTP error status is no JSON-RPC answer: the call was not delivered (exit 3).
    r = await runCli(['call', '--connect', url, '--timeout', '5000', 'boom']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /Transport send failed: HTTP 500.*kaput/);
    r = await runCli(['notify', '--connect', url, '--timeout', '5000', 'tick']);
    assert.equal(r.code, 0, r.stderr);
    await within(5000, new Promise((res) => { server.closeAllConnections(); server.close(res); }));
  });

  test('a notification answered 404 (the server ended the session) is not delivered: logged, and session mode exits 3', async () => {
    // The first request starts a session; the server then knows it no more.
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.headers['mcp-session-id']) return res.writeHead(404).end();
        const msg = JSON.parse(body);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 's1' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: 'hello' }));
      });
    });
    const port = await listen(server);
    const input = '{"jsonrpc":"2.0","id":1,"method":"initialize"}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
    const r = await runCli(['call', '--session', '--connect', `http://127.0.0.1:${port}/`, '--timeout', '5000'], { input });
    assert.deepEqual(lines(r.stdout), [{ jsonrpc: '2.0', id: 1, result: 'hello' }], r.stderr);
    assert.match(r.stderr, /the server refused a notification: it ended session s1 \(404\)/);
    assert.equal(r.code, 3, r.stderr);
    await within(5000, new Promise((res) => { server.closeAllConnections(); server.close(res); }));
  });
});

// ---- weft serve --ws / --http (the native server of the same tree) -----------
// WEFT_SERVE_BIN: another build's server (default: the same weft).
const SERVE_BIN = process.env.WEFT_SERVE_BIN || undefined;
const serveHelp = await runCli(['serve', '--help'], { bin: SERVE_BIN });
const hasWebServe = /--ws/.test(serveHelp.stdout) && /--http/.test(serveHelp.stdout);

describe('the client against weft serve --ws / --http', { skip: !hasWebServe && 'this build has no weft serve --ws/--http' }, () => {
  const both = /listening on ws:[\s\S]*listening on http:|listening on http:[\s\S]*listening on ws:/;
  let srv, wsUrl, httpUrl;
  test('start', async () => {
    srv = await startServer(['serve', '--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--demo'], { ready: both, bin: SERVE_BIN });
    wsUrl = /listening on (ws:\/\/\S+)/.exec(srv.stderrText)[1];
    httpUrl = /listening on (http:\/\/\S+)/.exec(srv.stderrText)[1];
  });

  test('ws://: 1,000 requests in flight in one session, JSON and MessagePack', async () => {
    const input = Array.from({ length: 1000 }, (_, i) => `subtract [${i}, 1]`).join('\n') + '\n';
    const r = await runCli(['call', '--session', '--connect', wsUrl, '--timeout', '10000'], { input });
    assert.equal(r.code, 0, r.stderr);
    lines(r.stdout).forEach((m, i) => assert.deepEqual(m, { jsonrpc: '2.0', result: i - 1, id: i + 1 }));
    const mp = await runCli(['call', '--connect', wsUrl, '--codec', 'msgpack', '--timeout', '5000', 'get_data']);
    assert.deepEqual([mp.code, mp.stdout], [0, '["hello",5]\n'], mp.stderr);
  });

  test('http://: calls, a notification and an error answer', async () => {
    const input = ['sum [1, 2]', 'sleep {"ms": 50}', '{"jsonrpc":"2.0","method":"update","params":[1]}', 'nope'].join('\n') + '\n';
    const r = await runCli(['call', '--session', '--connect', httpUrl, '--timeout', '10000'], { input });
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(lines(r.stdout).map((m) => m.result ?? m.error.code), [3, 50, -32601]);
  });

  test('stop', async () => {
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
  });
});
