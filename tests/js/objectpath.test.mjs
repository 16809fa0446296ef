// The object path between js/ and the core (wasm/):
// messages described member by member instead of as envelope text, records
// instead of text on the way out, payload markers, and transport.onSendError.
import { test } from 'node:test';
import { plain } from '../support/wire.mjs';
import { until } from '../support/until.mjs';
import assert from 'node:assert/strict';
import { Peer, JSONRPCClient, JSONRPCServer, RPCError, ErrorCode, portTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };
// Resolves once `list` holds n messages, checked on each message event of `port`.
function received(port, list, n) {
  return new Promise((resolve) => {
    const check = () => {
      if (list.length < n) return;
      port.removeEventListener('message', check);
      resolve();
    };
    port.addEventListener('message', check);
    check();
  });
}

// A server Peer on port2; raw messages in and out on port1.
function rawServer(opts) {
  const { port1, port2 } = new MessageChannel();
  const server = new Peer(portTransport(port2), opts);
  const got = [];
  port1.addEventListener('message', plain((d) => got.push(d)));
  port1.start();
  return {
    server, got, send: (m) => port1.postMessage(m),
    answers: (n) => received(port1, got, n),
    done: () => { server.destroy(); port1.close(); },
  };
}

test('ids of every JSON kind come back as sent (numbers as JSON text would carry them)', T, async () => {
  await ready;
  const { server, got, send, answers, done } = rawServer();
  try {
    server.method('echo', (p) => p);
    const ids = [1, -1, 0, 2 ** 53 - 1, 2 ** 53 + 2, 2 ** 60, 2 ** 64, 2 ** 80, 1e21, 1.5, -2.25, 1e-7, 'str', '', 'é ✓ 😀', 'x'.repeat(300), null];
    for (const id of ids) send({ jsonrpc: '2.0', method: 'echo', params: [id], id });
    await answers(ids.length);
    assert.equal(got.length, ids.length);
    for (let i = 0; i < ids.length; i++) assert.deepEqual(got[i], { jsonrpc: '2.0', result: [ids[i]], id: ids[i] });
    assert.deepEqual(Object.keys(got[0]), ['jsonrpc', 'result', 'id']);
    // Not JSON ids: NaN and Infinity are answered as an invalid id (null), as before.
    send({ jsonrpc: '2.0', method: 'echo', id: Infinity });
    await answers(ids.length + 1);
    assert.equal(got.at(-1).id, null);
    assert.equal(got.at(-1).error.code, ErrorCode.InvalidRequest);
  } finally { done(); }
});

test('responses: results and error members keep their types; malformed ones are reported', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const diags = [];
  const client = new JSONRPCClient(portTransport(port1), { onDiagnostic: (k, m) => diags.push([k, m]) });
  const requests = [];
  port2.addEventListener('message', plain((d) => requests.push(d)));
  port2.start();
  try {
    const a = client.request('a', { x: 1 });
    const b = client.request('b');
    const c = client.request('c', [1]);
    await received(port2, requests, 3);
    assert.deepEqual(requests[0], { jsonrpc: '2.0', method: 'a', params: { x: 1 }, id: 1 });
    assert.deepEqual(Object.keys(requests[0]), ['jsonrpc', 'method', 'params', 'id']);
    assert.deepEqual(requests[1], { jsonrpc: '2.0', method: 'b', id: 2 });
    port2.postMessage({ jsonrpc: '2.0', error: { code: 1.5, message: 'm' }, id: 1 });  // not an integer code: fails call 1
    port2.postMessage({ jsonrpc: '2.0', error: { code: 7, message: 'no', data: { '': 0 } }, id: 1 });  // too late
    port2.postMessage({ jsonrpc: '2.0', result: { '': 0 }, id: 2 });
    port2.postMessage({ jsonrpc: '2.0', result: undefined, id: 3 });
    await assert.rejects(a, (e) => e instanceof RPCError && e.code === ErrorCode.InternalError &&
      e.message === 'Invalid response: error "code" must be an integer');
    assert.deepEqual(await b, { '': 0 });
    assert.equal(await c, undefined);  // structured clone keeps `result: undefined`
    assert.ok(diags.some(([k, m]) => k === 'InvalidResponse' && /code/.test(m)));
    assert.equal(client.stats().payloads, 0);
  } finally { client.destroy(); port2.close(); }
});

test('params that look like payload markers are data ($/ methods and declared params)', T, async () => {
  const { server, got, send, answers, done } = rawServer();
  try {
    const seen = [];
    server.method('$/look', (p) => { seen.push(p); return p; });
    server.method('spec', (p) => { seen.push(p); return p; }, { params: [{ name: '' }] });
    send({ jsonrpc: '2.0', method: '$/look', params: { '': 0 }, id: 1 });
    send({ jsonrpc: '2.0', method: '$/look', params: [{ '': 0 }], id: 2 });
    send({ jsonrpc: '2.0', method: 'spec', params: [0], id: 3 });
    await answers(3);
    assert.deepEqual(seen, [{ '': 0 }, [{ '': 0 }], { '': 0 }]);
    assert.deepEqual(got.map((m) => m.result), [{ '': 0 }, [{ '': 0 }], { '': 0 }]);
  } finally { done(); }
});

test('a lone surrogate in a method name becomes U+FFFD, as UTF-8 encoding makes it', T, async () => {
  const { server, got, send, answers, done } = rawServer();
  try {
    server.method('echo', (p) => p);
    server.method('bad\uFFFD', () => 'replaced');
    send({ jsonrpc: '2.0', method: 'bad\uD800', id: 1 });
    await answers(1);
    assert.deepEqual(got, [{ jsonrpc: '2.0', result: 'replaced', id: 1 }]);
  } finally { done(); }
});

// A transport that records sends and lets the test report a deferred failure.
function failingTransport() {
  const t = {
    sent: [], handler: null, failed: null,
    send(m) { t.sent.push(m); },
    onMessage(h) { t.handler = h; },
    onSendError(fn) { t.failed = fn; },
    destroy() {},
  };
  return t;
}

test('transport.onSendError: a request that could not be posted rejects with the send error', T, async () => {
  await ready;
  const t = failingTransport();
  const diags = [];
  const client = new JSONRPCClient(t, { onDiagnostic: (k) => diags.push(k) });
  try {
    assert.equal(typeof t.failed, 'function');
    const other = client.request('other', []);
    const p = client.request('m', { big: 1 });
    const boom = new Error('boom');
    t.failed(t.sent[1], boom);
    await assert.rejects(p, (e) => e instanceof RPCError && e.code === ErrorCode.Closed && e.message === 'Transport send failed: boom' && e.cause === boom);
    assert.ok(diags.includes('SendFailed'));
    // The request never left, so nothing more is sent; the other call is untouched.
    assert.equal(t.sent.length, 2);
    t.handler({ jsonrpc: '2.0', result: 'fine', id: 1 });
    assert.equal(await other, 'fine');
    // A failure reported for a call that has settled meanwhile changes nothing.
    t.failed(t.sent[0], boom);
    assert.equal(client.stats().calls, 0);
  } finally { client.destroy(); }
});

test('transport.send throwing on a result: the request is answered -32603 instead', T, async () => {
  await ready;
  const t = failingTransport();
  t.send = (m) => {
    if (m.result === 'unsendable') throw new Error('cannot post');
    t.sent.push(m);
  };
  const diags = [];
  const server = new JSONRPCServer(t, { onDiagnostic: (k) => diags.push(k) });
  try {
    server.method('give', (p) => p[0]);
    server.method('later', async (p) => p[0]);
    t.handler({ jsonrpc: '2.0', method: 'give', params: ['unsendable'], id: 1 });
    t.handler({ jsonrpc: '2.0', method: 'give', params: ['fine'], id: 2 });
    t.handler({ jsonrpc: '2.0', method: 'later', params: ['unsendable'], id: 3 });
    await until(() => t.sent.length === 3, 'three answers');
    // The replacements go a microtask after the failed sends.
    assert.deepEqual([...t.sent].sort((a, b) => a.id - b.id), [
      { jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'Internal error: the result could not be sent: cannot post' }, id: 1 },
      { jsonrpc: '2.0', result: 'fine', id: 2 },
      { jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'Internal error: the result could not be sent: cannot post' }, id: 3 },
    ]);
    assert.equal(diags.filter((k) => k === 'SendFailed').length, 2);
    assert.equal(server.stats().payloads, 0);
  } finally { server.destroy(); }
});

test('transport.onSendError: a result that could not be posted is replaced by -32603', T, async () => {
  await ready;
  const t = failingTransport();
  const diags = [];
  const server = new JSONRPCServer(t, { onDiagnostic: (k) => diags.push(k) });
  try {
    server.method('give', () => 'value');
    t.handler({ jsonrpc: '2.0', method: 'give', id: 'a' });
    assert.deepEqual(t.sent, [{ jsonrpc: '2.0', result: 'value', id: 'a' }]);
    t.failed(t.sent[0], new Error('nope'));
    await until(() => t.sent.length === 2, 'the replacement');
    assert.deepEqual(t.sent[1], { jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'Internal error: the result could not be sent: nope' }, id: 'a' });
    // An error response without data: once more with a short message (its
    // own may be what could not be sent), then only the diagnostic; a
    // notification: only the diagnostic.
    t.failed(t.sent[1], new Error('again'));
    await until(() => t.sent.length === 3, 'the short error');
    assert.deepEqual(t.sent[2], { jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'the answer could not be sent' }, id: 'a' });
    t.failed(t.sent[2], new Error('again'));
    t.failed({ jsonrpc: '2.0', method: 'note' }, new Error('again'));
    await until(() => diags.filter((k) => k === 'SendFailed').length === 4, 'all reported');
    assert.equal(t.sent.length, 3);
  } finally { server.destroy(); }
});

test('a packing transport that cannot clone a request fails that call only', T, async () => {
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1, { pack: true }), { onDiagnostic: () => {} });
  const server = new JSONRPCServer(portTransport(port2));
  server.method('add', ([a, b]) => a + b);
  try {
    const bad = client.request('add', [1, () => {}]);
    const good = client.request('add', [1, 2]);
    await assert.rejects(bad, (e) => e.code === ErrorCode.Closed && /Transport send failed/.test(e.message));
    assert.equal(await good, 3);
    assert.equal(client.stats().pending, 0);
    assert.equal(client.stats().payloads, 0);
  } finally { client.destroy(); server.destroy(); }
});

test('timer: kept across calls, still fires for the earliest deadline; idle endpoints keep no ref', T, async () => {
  await ready;
  const t = failingTransport();
  const answer = (id) => t.handler({ jsonrpc: '2.0', result: 'ok', id });
  const client = new JSONRPCClient(t, { timeout: 10000 });
  try {
    const first = client.request('a');
    answer(1);
    assert.equal(await first, 'ok');
    assert.equal(client.timer.idle, true);              // left over from the first call, unref'd
    assert.equal(client.timer.timer.hasRef(), false);
    const slow = client.request('b');                   // due in 10 s: the kept timer is due earlier, reused
    assert.equal(client.timer.timer.hasRef(), true);
    const t0 = Date.now();
    await assert.rejects(client.request('c', [], { timeout: 30 }), (e) => e.code === ErrorCode.Timeout);
    const took = Date.now() - t0;
    assert.ok(took >= 25 && took < 1000, `timed out after ${took} ms`);
    answer(2);
    assert.equal(await slow, 'ok');
    assert.equal(client.stats().pending, 0);
  } finally { client.destroy(); }
});
