// webSocketTransport (js/transports/websocket.js) over real sockets from npm
// `ws` (Node 20 has no global WebSocket): the same guarantees as the other
// transports, with weft-rpc and json-rpc-2.0 at either end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket, WebSocketServer } from 'ws';
import { JSONRPCClient as ForeignClient } from 'json-rpc-2.0';
import { Peer, JSONRPCClient, JSONRPCServer, RPCError, ErrorCode, webSocketTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };
let wss, url;
const accepted = [];  // server-side sockets, in order of connection
let onConnection = () => {};

before(async () => {
  await ready;
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  url = `ws://127.0.0.1:${wss.address().port}`;
  wss.on('connection', (ws) => { accepted.push(ws); onConnection(ws); });
});
after(() => new Promise((r) => { for (const ws of accepted) ws.terminate(); wss.close(r); }));

// The server side: a weft-rpc JSONRPCServer on the accepted npm `ws` socket.
function serveNext(setup) {
  return new Promise((resolve) => {
    onConnection = (ws) => {
      const server = new JSONRPCServer(webSocketTransport(ws));
      setup?.(server, ws);
      resolve({ server, ws });
    };
  });
}
const opened = (ws) => new Promise((r) => (ws.readyState === 1 ? r() : ws.once('open', r)));
// What `ws` receives from now on, as text; `arrived(n)` resolves once n have.
function received(ws) {
  const got = [];
  const waits = [];
  ws.on('message', (d) => {
    got.push(String(d));
    for (const w of waits.splice(0)) if (got.length >= w.n) w.resolve(got); else waits.push(w);
  });
  got.arrived = (n) => (got.length >= n ? Promise.resolve(got) : new Promise((resolve) => waits.push({ n, resolve })));
  return got;
}

test('calls made while the socket is connecting are queued and sent in order once it opens', T, async () => {
  const seen = [];
  const served = serveNext((s) => s.method('echo', (p) => { seen.push(p[0]); return p; }));
  const ws = new WebSocket(url);
  assert.equal(ws.readyState, WebSocket.CONNECTING);
  const peer = new Peer(webSocketTransport(ws));
  const answers = await Promise.all([1, 2, 3].map((i) => peer.request('echo', [i])));
  assert.deepEqual(answers, [[1], [2], [3]]);
  assert.deepEqual(seen, [1, 2, 3]);
  peer.destroy();
  (await served).server.destroy();
});

test('when the other side closes, pending calls are rejected at once with -32002, and later calls too', T, async () => {
  let release;
  const served = serveNext((s) => s.method('hang', () => new Promise((r) => { release = r; })));
  const ws = new WebSocket(url);
  const peer = new Peer(webSocketTransport(ws));
  const pending = peer.request('hang', [], { timeout: 0 });
  const { ws: serverSide } = await served;
  await new Promise((r) => serverSide.once('message', r));  // the call has arrived
  serverSide.close(1001, 'going away');
  await assert.rejects(pending, (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
  await assert.rejects(peer.request('hang'), (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
  release();
  peer.destroy();
});

test('a socket that is already closed: the transport reports it closed, calls are rejected with -32002', T, async () => {
  serveNext();
  const ws = new WebSocket(url);
  await opened(ws);
  await new Promise((r) => { ws.once('close', r); ws.close(); });
  const peer = new Peer(webSocketTransport(ws));
  await assert.rejects(peer.request('anything'), (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
  peer.destroy();
});

test('a frame that is not JSON text is answered -32700 with id null (§5) and reported; the next message is delivered', T, async () => {
  const served = serveNext();
  const ws = new WebSocket(url);
  const diags = [];
  const peer = new Peer(webSocketTransport(ws), { onDiagnostic: (kind, message) => diags.push([kind, message]) });
  const got = new Promise((r) => peer.onNotify('hello', r));
  const { ws: serverSide } = await served;
  await opened(ws);
  const text = received(serverSide);
  serverSide.send('{"jsonrpc":');
  serverSide.send(Buffer.from([0x81, 0xa1, 0x61, 0x01]));  // binary: MessagePack, which it does not speak
  serverSide.send(JSON.stringify({ jsonrpc: '2.0', method: 'hello', params: { n: 1 } }));
  assert.deepEqual(await got, { n: 1 });
  const answers = (await text.arrived(2)).map((a) => JSON.parse(a));
  assert.deepEqual(answers.map((a) => [a.id, a.error.code]), [[null, ErrorCode.ParseError], [null, ErrorCode.ParseError]]);
  assert.match(answers[0].error.message, /^Parse error: not JSON text/);
  assert.match(answers[1].error.message, /^Parse error: a binary frame/);
  assert.deepEqual(diags.map(([k]) => k), ['BadFrame', 'BadFrame']);
  peer.destroy();
});

// The server side as a plain npm `ws` socket: what it receives is recorded
// from the moment it connects (received()).
function rawNext() {
  return new Promise((resolve) => {
    onConnection = (ws) => resolve({ ws, got: received(ws) });
  });
}
const closeCode = (ws) => new Promise((r) => (ws.readyState === 3 ? r(null) : ws.once('close', (code) => r(code))));
const parseError = (why) => (e) => e instanceof RPCError && e.code === ErrorCode.ParseError &&
  e.message.startsWith('Parse error: undecodable data from the server: ' + why);

test('a JSONRPCClient sent a text frame that is not JSON: its pending calls fail -32700 at once naming why, it answers nothing and closes the socket; later calls fail at once', T, async () => {
  const raw = rawNext();
  const ws = new WebSocket(url);
  const diags = [];
  const client = new JSONRPCClient(webSocketTransport(ws), { timeout: 0, onDiagnostic: (kind, message) => diags.push([kind, message]) });
  const first = client.request('echo', [1]);
  const second = client.request('echo', [2], { retry: true });
  const [batched] = client.batch([{ method: 'echo', params: [3] }]);
  const { ws: serverSide, got } = await raw;
  await got.arrived(3);  // two calls and the batch
  const closed = closeCode(serverSide);
  serverSide.send('{"jsonrpc":');
  await assert.rejects(first, parseError('not JSON text'));
  await assert.rejects(second, parseError('not JSON text'));
  await assert.rejects(batched, parseError('not JSON text'));
  assert.equal(await closed, 1000);
  await assert.rejects(client.request('echo', [4]), (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
  assert.equal(got.length, 3, 'the frame was not answered, nothing was sent after it');
  assert.deepEqual(diags.map(([k]) => k), ['BadFrame']);
  assert.match(diags[0][1], /^Parse error: undecodable data from the server: not JSON text/);
  assert.deepEqual(client.stats().calls, 0);
  client.destroy();
});

test('a JSONRPCClient sent a binary frame: the call fails -32700 at once naming it, the socket closes, a later call fails at once', T, async () => {
  const raw = rawNext();
  const ws = new WebSocket(url);
  const client = new JSONRPCClient(webSocketTransport(ws), { timeout: 0, onDiagnostic: () => {} });
  const call = client.request('echo', [1]);
  const { ws: serverSide, got } = await raw;
  await got.arrived(1);
  const closed = closeCode(ws);
  serverSide.send(Buffer.from([0x81, 0xa1, 0x61, 0x01]));  // MessagePack, which it does not speak
  await assert.rejects(call, parseError('a binary frame'));
  assert.equal(await closed, 1000);
  await assert.rejects(client.request('echo', [2]), (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
  client.destroy();
});

test('a JSONRPCClient with no call pending sent an undecodable frame: it closes, and the next call fails at once instead of waiting', T, async () => {
  const raw = rawNext();
  const ws = new WebSocket(url);
  const client = new JSONRPCClient(webSocketTransport(ws), { timeout: 0, onDiagnostic: () => {} });
  const { ws: serverSide } = await raw;
  await opened(ws);
  const closed = closeCode(serverSide);
  serverSide.send('nope');
  assert.equal(await closed, 1000);
  await assert.rejects(client.request('echo', [1]), (e) => e instanceof RPCError && e.code === ErrorCode.Closed);
  client.destroy();
});

test('after 16 undecodable frames in a row only the diagnostic, until a message decodes', T, async () => {
  const served = serveNext();
  const ws = new WebSocket(url);
  const diags = [];
  const peer = new Peer(webSocketTransport(ws), { onDiagnostic: (kind, message) => diags.push(message) });
  peer.method('up', () => 'pong');
  const { ws: serverSide } = await served;
  await opened(ws);
  const text = received(serverSide);
  for (let i = 0; i < 20; i++) serverSide.send('nope');
  serverSide.send('{"jsonrpc":"2.0","method":"up","id":1}');
  serverSide.send('nope');
  const answers = (await text.arrived(18)).map((a) => JSON.parse(a));
  assert.equal(answers.filter((a) => a.id === null).length, 17);
  assert.deepEqual(answers[16], { jsonrpc: '2.0', result: 'pong', id: 1 });
  assert.equal(diags.filter((m) => /no longer answering/.test(m)).length, 1);
  peer.destroy();
});

test('what is not JSON-RPC 2.0 is answered as the native server answers it: a WebSocket carries nothing else', T, async () => {
  // ignoreForeign defaults to false on a WebSocket; each answer is what
  // `weft serve --ws` sends for the same text.
  serveNext((s) => s.method('echo', (p) => p));
  const raw = new WebSocket(url);
  await opened(raw);
  const answers = received(raw);
  const cases = [
    ['[]', '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: empty batch array"},"id":null}'],
    ['{"id":2,"method":"echo"}', '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: \\"jsonrpc\\" must be exactly \\"2.0\\""},"id":2}'],
    ['{"jsonrpc":"1.0","id":3,"method":"echo"}', '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: \\"jsonrpc\\" must be exactly \\"2.0\\""},"id":3}'],
    ['[1]', '[{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: expected an object, got a number"},"id":null}]'],
    ['{"jsonrpc":"2.0","id":4,"method":"echo","params":[4]}', '{"jsonrpc":"2.0","result":[4],"id":4}'],
  ];
  for (const [text] of cases) raw.send(text);
  await answers.arrived(cases.length);
  assert.deepEqual(answers.map((a) => JSON.parse(a)), cases.map(([, a]) => JSON.parse(a)));
  raw.close();
});

test('a number id JSON.parse would round (beyond 2^53, 1.50) is answered with its own text, as the native server answers it; in a batch too', T, async () => {
  serveNext((s) => s.method('echo', (p) => p));
  const raw = new WebSocket(url);
  await opened(raw);
  const answers = received(raw);
  // Each answer is what `weft serve --ws` (the native codec) sends for the same text.
  const cases = [
    ['{"jsonrpc":"2.0","method":"echo","params":[1],"id":12345678901234567890}', '{"jsonrpc":"2.0","result":[1],"id":12345678901234567890}'],
    ['{"jsonrpc":"2.0","method":"echo","params":[2],"id":1.50}', '{"jsonrpc":"2.0","result":[2],"id":1.50}'],
    ['[{"jsonrpc":"2.0","method":"echo","params":[3],"id":-9007199254740993},{"jsonrpc":"2.0","method":"echo","params":[4],"id":7}]',
      '[{"jsonrpc":"2.0","result":[3],"id":-9007199254740993},{"jsonrpc":"2.0","result":[4],"id":7}]'],
    ['{"jsonrpc":"2.0","method":"echo","params":["\\u0000weft-id-x-0"],"id":9007199254740993}', '{"jsonrpc":"2.0","result":["\\u0000weft-id-x-0"],"id":9007199254740993}'],
  ];
  for (const [text] of cases) raw.send(text);
  await answers.arrived(cases.length);
  assert.deepEqual([...answers], cases.map(([, a]) => a));
  raw.close();
});

test('destroy() closes the socket with code 1000', T, async () => {
  const served = serveNext();
  const ws = new WebSocket(url);
  const peer = new Peer(webSocketTransport(ws));
  const { ws: serverSide } = await served;
  await opened(ws);
  const code = new Promise((r) => serverSide.once('close', (c) => r(c)));
  peer.destroy();
  assert.equal(await code, 1000);
});

test('a result JSON cannot carry (a function, a nested symbol, Infinity) is answered -32603, as over postMessage and natively; the rest of the batch is answered', T, async () => {
  const served = serveNext((s) => {
    s.method('fn', () => () => 1);
    s.method('nested', () => ({ a: 1, s: Symbol('x') }));
    s.method('ok', () => ({ a: 1 }));
    s.method('inf', () => [1, Infinity]);
  });
  const ws = new WebSocket(url);
  await opened(ws);
  const replies = [];
  const two = new Promise((r) => ws.on('message', (d) => { replies.push(JSON.parse(String(d))); if (replies.length === 3) r(); }));
  ws.send(JSON.stringify([{ jsonrpc: '2.0', method: 'fn', id: 1 }, { jsonrpc: '2.0', method: 'nested', id: 2 },
    { jsonrpc: '2.0', method: 'ok', id: 3 }, { jsonrpc: '2.0', method: 'inf', id: 5 }]));
  ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'fn', id: 4 }));
  ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'inf', id: 6 }));
  await two;
  // Each element that failed goes again with its own reason: the batch may come last.
  const batch = replies.find(Array.isArray);
  const lone = replies.find((m) => m.id === 4);
  const inf = replies.find((m) => m.id === 6);
  const internal = (m, id, why = /not JSON/) => m.id === id && m.error?.code === ErrorCode.InternalError &&
    /could not be sent/.test(m.error.message) && why.test(m.error.message);
  assert.equal(batch.length, 4);
  assert.ok(internal(batch.find((m) => m.id === 1), 1), JSON.stringify(batch));
  assert.ok(internal(batch.find((m) => m.id === 2), 2), JSON.stringify(batch));
  assert.deepEqual(batch.find((m) => m.id === 3), { jsonrpc: '2.0', result: { a: 1 }, id: 3 });
  assert.ok(internal(batch.find((m) => m.id === 5), 5, /NaN or Infinity/), JSON.stringify(batch));  // its own reason
  assert.ok(internal(lone, 4), JSON.stringify(lone));
  assert.ok(internal(inf, 6, /NaN or Infinity has no JSON representation/), JSON.stringify(inf));
  ws.close();
  (await served).server.destroy();
});

test('interop: a json-rpc-2.0 client over npm ws calls a weft-rpc server on webSocketTransport', T, async () => {
  const served = serveNext((s) => s.method('add', ({ a, b }) => a + b));
  const ws = new WebSocket(url);
  await opened(ws);
  const client = new ForeignClient((req) => ws.send(JSON.stringify(req)));
  ws.on('message', (d) => client.receive(JSON.parse(String(d))));
  assert.equal(await client.request('add', { a: 1, b: 2 }), 3);
  await assert.rejects(client.request('missing', {}), (e) => e.code === -32601);
  ws.close();
  (await served).server.destroy();
});

test('webSocketTransport refuses what is not a WebSocket', () => {
  assert.throws(() => webSocketTransport({}), TypeError);
});
