// What a transport cannot send (Peer::undelivered, js/outgoing.js): every
// request still gets its own answer (JSON-RPC 2.0 §5, §6), and every call
// its own outcome, whatever else was in its batch; with packing (the
// default between weft ends) as without.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plain } from '../support/wire.mjs';
import { until } from '../support/until.mjs';
import { JSONRPCServer, Peer, RPCError, ErrorCode, portTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };
const uncloneable = () => ({ name: 'ann', toString() { return 'ann'; } });
// -32603 for request `id`, whose result could not be cloned (the clone error's text is the engine's).
function couldNotSend(m, id) {
  assert.equal(m.id, id);
  assert.equal(m.error.code, ErrorCode.InternalError);
  assert.match(m.error.message, /^Internal error: the result could not be sent: .*clone/);
  assert.equal('result' in m, false);
}

// A JSONRPCServer on port2 (pack: false, as to a foreign peer); raw JSON-RPC in and out on port1.
function rawServer() {
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2, { pack: false }), { onDiagnostic: () => {} });
  server.method('ok', () => 'fine');
  server.method('getUser', uncloneable);
  server.method('deny', () => { throw new RPCError(4001, 'denied', { retry: () => {} }); });
  const got = [];
  port1.addEventListener('message', plain((d) => got.push(d)));
  port1.start();
  const done = () => { server.destroy(); port1.close(); };
  return { got, send: (m) => port1.postMessage(m), done };
}

test('a batch answer with a result that cannot be sent: that result is -32603, the others are theirs', T, async () => {
  await ready;
  const { got, send, done } = rawServer();
  try {
    send([{ jsonrpc: '2.0', method: 'ok', id: 1 }, { jsonrpc: '2.0', method: 'getUser', id: 2 }]);
    await until(() => got.length === 1, 'the batch answer');
    assert.equal(got[0].length, 2);
    assert.deepEqual(got[0][0], { jsonrpc: '2.0', result: 'fine', id: 1 });
    couldNotSend(got[0][1], 2);
  } finally { done(); }
});

test('an error whose data cannot be sent goes without its data, alone or in a batch', T, async () => {
  await ready;
  const { got, send, done } = rawServer();
  try {
    send([{ jsonrpc: '2.0', method: 'deny', id: 3 }, { jsonrpc: '2.0', method: 'ok', id: 4 }]);
    send({ jsonrpc: '2.0', method: 'deny', id: 5 });
    await until(() => got.length === 2, 'both answers');
    const denied = (id) => ({ jsonrpc: '2.0', error: { code: 4001, message: 'denied' }, id });
    assert.deepEqual(got[0], [denied(3), { jsonrpc: '2.0', result: 'fine', id: 4 }]);
    assert.deepEqual(got[1], denied(5));
  } finally { done(); }
});

for (const pack of [false, 'auto', true]) {
  test(`pack ${pack}: a batch call whose answer cannot be sent gets -32603, the other call its result`, T, async () => {
    await ready;
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2, { pack }), { onDiagnostic: () => {} });
    server.method('ok', () => 'fine');
    server.method('getUser', async () => uncloneable());
    const client = new Peer(portTransport(port1, { pack }), { timeout: 0 });
    try {
      assert.equal(await client.request('ok'), 'fine');  // both ends now pack (but pack: false)
      const [a, b] = client.batch([{ method: 'ok' }, { method: 'getUser' }]);
      assert.equal(await a, 'fine');
      await assert.rejects(b, (e) => e.code === ErrorCode.InternalError && /could not be sent/.test(e.message));
    } finally { client.destroy(); server.destroy(); }
  });

  test(`pack ${pack}: a batch entry whose params cannot be sent fails alone (-32002), the other is answered`, T, async () => {
    await ready;
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2, { pack }));
    server.method('save', ([x]) => `saved ${x}`);
    const diags = [];
    const client = new Peer(portTransport(port1, { pack }), { timeout: 0, onDiagnostic: (k) => diags.push(k) });
    try {
      assert.equal(await client.request('save', ['warm-up']), 'saved warm-up');
      const [a, b] = client.batch([{ method: 'save', params: ['a'] }, { method: 'save', params: [{ onDone() {} }] }]);
      await assert.rejects(b, (e) => e.code === ErrorCode.Closed && /Transport send failed/.test(e.message) &&
        e.cause?.name === 'DataCloneError');
      assert.equal(await a, 'saved a');
      assert.deepEqual(diags, ['SendFailed']);
      assert.equal(client.stats().pending, 0);
      assert.equal(client.stats().payloads, 0);
    } finally { client.destroy(); server.destroy(); }
  });

  test(`pack ${pack}: a batch entry whose params are a Proxy over plain data is answered beside one that cannot be sent`, T, async () => {
    await ready;
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2, { pack }));
    server.method('save', ([x]) => `saved ${x.name}`);
    const client = new Peer(portTransport(port1, { pack }), { timeout: 0, onDiagnostic: () => {} });
    try {
      assert.equal(await client.request('save', [{ name: 'warm-up' }]), 'saved warm-up');
      // JS cannot tell a Proxy from what it presents: a postMessage transport
      // sends that (js/pack.js, "Proxies"), here as when the entry goes alone.
      const [a, b] = client.batch([{ method: 'save', params: [new Proxy({ name: 'ann' }, {})] }, { method: 'save', params: [{ onDone() {} }] }]);
      await assert.rejects(b, (e) => e.code === ErrorCode.Closed && e.cause?.name === 'DataCloneError');
      assert.equal(await a, 'saved ann');
      assert.equal(client.stats().pending, 0);
    } finally { client.destroy(); server.destroy(); }
  });
}

test('a transport that fails as a whole: every call of the batch fails, every answer is -32603', T, async () => {
  await ready;
  const sent = [];
  let broken = false;
  let deliver = null;
  const t = {
    send(m) { if (broken) throw new Error('port closed'); sent.push(m); },
    onMessage(h) { deliver = h; },
  };
  const server = new JSONRPCServer(t, { onDiagnostic: () => {} });
  server.method('ok', () => 'fine');
  try {
    broken = true;
    deliver([{ jsonrpc: '2.0', method: 'ok', id: 1 }, { jsonrpc: '2.0', method: 'ok', id: 2 }]);
    broken = false;  // the replacement goes a microtask later
    await until(() => sent.length === 1, 'the replacement');
    const failed = (id) => ({ jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'Internal error: the result could not be sent: port closed' }, id });
    assert.deepEqual(sent[0], [failed(1), failed(2)]);
  } finally { server.destroy(); }
});
