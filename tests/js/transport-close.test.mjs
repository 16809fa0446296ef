// When a postMessage transport closes (js/transports/transport.js, worker.js,
// port.js), pending calls reject at once with -32002, and later ones too:
//   - destroy() called on the transport itself tells its endpoint, once;
//   - a browser Worker whose script fails to load (a plain `error` Event)
//     closes its transports; an uncaught exception in a running worker (an
//     ErrorEvent, with a message) does not;
//   - a Node MessagePort whose other end closes fires `close` (a browser
//     MessagePort does not: there calls end in their timeout, README).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { ErrorCode, JSONRPCClient, JSONRPCServer, Peer, portTransport, ready, workerTransport } from '../../js/index.js';

const T = { timeout: 15000 };
const closed = (e) => e.code === ErrorCode.Closed;

test('destroy() on the transport itself rejects pending calls at once with -32002; later calls fail at once; close handlers run once', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2));
  let started;
  const arrived = new Promise((r) => { started = r; });
  server.method('hang', () => { started(); return new Promise(() => {}); });
  const t = portTransport(port1);
  const client = new JSONRPCClient(t, { timeout: 60000 });  // far beyond the test's own timeout
  let closes = 0;
  t.onClose(() => closes++);
  try {
    const pending = client.request('hang');
    await arrived;
    t.destroy();
    await assert.rejects(pending, closed);
    await assert.rejects(client.request('hang'), closed);
    assert.equal(closes, 1);
    t.destroy();
    client.destroy();
    assert.equal(closes, 1, 'once');
    assert.equal(client.stats().calls, 0);
  } finally { client.destroy(); server.destroy(); }
});

test('destroy() on the transport itself: what is sent after it is dropped, not posted', T, async () => {
  await ready;
  const posted = [];
  const port = Object.assign(new EventTarget(), { postMessage: (m) => posted.push(m), start() {}, close() {} });
  const t = portTransport(port, { pack: false });
  t.send({ jsonrpc: '2.0', method: 'before' });
  t.destroy();
  assert.doesNotThrow(() => t.send({ jsonrpc: '2.0', method: 'after' }));
  assert.deepEqual(posted.map((m) => m.method), ['before']);
});

// A browser Worker's shape: an EventTarget with postMessage and terminate;
// it answers `echo` requests (plain JSON-RPC) while it runs.
class FakeWorker extends EventTarget {
  postMessage(m) {
    if (m?.method === 'echo' && m.id !== undefined)
      queueMicrotask(() => this.dispatchEvent(Object.assign(new Event('message'), { data: { jsonrpc: '2.0', id: m.id, result: m.params } })));
  }
  terminate() {}
}

test('worker: a browser Worker whose script fails to load (a plain error Event) rejects pending calls at once with -32002', T, async () => {
  await ready;
  const w = new FakeWorker();
  const client = new JSONRPCClient(workerTransport(w), { timeout: 60000 });
  try {
    const pending = client.request('hang');
    w.dispatchEvent(new Event('error'));  // what a browser fires for a 404, a parse or import failure
    await assert.rejects(pending, closed);
    await assert.rejects(client.request('echo', [1]), closed);
  } finally { client.destroy(); }
});

test('worker: an uncaught exception inside a running worker (an ErrorEvent) closes nothing', T, async () => {
  await ready;
  const w = new FakeWorker();
  const client = new Peer(workerTransport(w), { timeout: 60000 });
  try {
    assert.deepEqual(await client.request('echo', [1]), [1]);
    w.dispatchEvent(Object.assign(new Event('error'), { message: 'Uncaught Error: boom', filename: 'worker.js', lineno: 1 }));
    assert.deepEqual(await client.request('echo', [2]), [2]);
  } finally { client.destroy(); }
});

test('worker: a destroyed transport stops watching the worker\'s error events', T, async () => {
  await ready;
  const w = new FakeWorker();
  const t = workerTransport(w);
  let closes = 0;
  t.onClose(() => closes++);
  t.destroy();
  w.dispatchEvent(new Event('error'));
  assert.equal(closes, 1, 'only destroy() itself');
});

test('port: a Node MessagePort whose other end closes rejects pending calls at once with -32002', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const a = new Peer(portTransport(port1), { timeout: 60000 });
  const b = new Peer(portTransport(port2));
  let started;
  const arrived = new Promise((r) => { started = r; });
  b.method('hang', () => { started(); return new Promise(() => {}); });
  try {
    const pending = a.request('hang');
    await arrived;
    b.destroy();  // closes port2
    await assert.rejects(pending, closed);
  } finally { a.destroy(); b.destroy(); }
});
