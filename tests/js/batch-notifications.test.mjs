// batch() (js/batch.js): a notification entry's promise resolves once the
// batch is sent; when the batch is not sent it rejects as the batch's calls do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONRPCClient, JSONRPCServer, ErrorCode, portTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };

function pair() {
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2));
  const client = new JSONRPCClient(portTransport(port1), { timeout: 10000 });
  const logged = [];
  server.onNotify('log', (p) => logged.push(p[0]));
  server.method('echo', (p) => p);
  return { client, server, logged, done: () => { client.destroy(); server.destroy(); } };
}

// Each entry's outcome: its code, or 'sent' for a notification that resolved.
const outcomes = (ps) => Promise.all(ps.map((p) => p.then((v) => (v === undefined ? 'sent' : v), (e) => e.code)));

test('batch: a notification entry resolves to undefined once its batch is sent', T, async () => {
  await ready;
  const { client, logged, done } = pair();
  try {
    const [n, c] = client.batch([{ method: 'log', params: ['a'], notification: true }, { method: 'echo', params: [1] }]);
    assert.equal(await n, undefined);
    assert.deepEqual(await c, [1]);
    assert.deepEqual(logged, ['a']);
  } finally { done(); }
});

test('batch: a batch refused whole (bad params in another entry) rejects its notification with the calls\' error', T, async () => {
  await ready;
  const { client, done } = pair();
  try {
    const [n, c] = client.batch([{ method: 'log', params: ['a'], notification: true }, { method: 'echo', params: 5 }]);
    const [en, ec] = await Promise.allSettled([n, c]).then((r) => r.map((s) => s.reason));
    assert.equal(ec.code, ErrorCode.InvalidParams);
    assert.equal(en, ec);
  } finally { done(); }
});

test('batch: an already aborted signal rejects a notification entry with -32800, as the calls', T, async () => {
  await ready;
  const { client, logged, done } = pair();
  try {
    const ac = new AbortController();
    ac.abort();
    const ps = client.batch([{ method: 'log', params: ['a'], notification: true }, { method: 'echo' }], { signal: ac.signal });
    assert.deepEqual(await outcomes(ps), [ErrorCode.RequestCancelled, ErrorCode.RequestCancelled]);
    const only = client.batch([{ method: 'log', params: ['b'], notification: true }], { signal: ac.signal });
    assert.deepEqual(await outcomes(only), [ErrorCode.RequestCancelled]);
    assert.equal(await client.request('echo', ['after']).then(() => logged.length), 0);
  } finally { done(); }
});

test('batch: on a destroyed endpoint a notification entry rejects with -32002, as the calls', T, async () => {
  await ready;
  const { client, done } = pair();
  client.destroy();
  try {
    const ps = client.batch([{ method: 'log', params: ['a'], notification: true }, { method: 'echo' }]);
    assert.deepEqual(await outcomes(ps), [ErrorCode.Closed, ErrorCode.Closed]);
  } finally { done(); }
});
