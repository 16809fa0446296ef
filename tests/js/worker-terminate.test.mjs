// workerTransport (js/transports/worker.js) on a browser-style Worker, which
// fires no event when terminated: terminate() rejects the pending calls of
// every endpoint on that worker at once, whichever were destroyed before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Peer, ErrorCode, workerTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };

// A browser Worker's shape (an EventTarget, no on/off) whose other side never answers.
class FakeWorker extends EventTarget {
  terminated = 0;
  postMessage() {}
  terminate() { this.terminated++; }
}

test('two endpoints on one worker: after the first-created is destroyed, terminate() still rejects the other\'s pending call at once with -32002', T, async () => {
  await ready;
  const w = new FakeWorker();
  const first = new Peer(workerTransport(w));
  const second = new Peer(workerTransport(w), { timeout: 10000 });
  first.destroy();
  const pending = second.request('hang');
  w.terminate();
  await assert.rejects(pending, (e) => e.code === ErrorCode.Closed);
  assert.equal(w.terminated, 1);
  second.destroy();
});

test('two endpoints on one worker: terminate() rejects the pending calls of both, and terminates once', T, async () => {
  await ready;
  const w = new FakeWorker();
  const a = new Peer(workerTransport(w), { timeout: 10000 });
  const b = new Peer(workerTransport(w), { timeout: 10000 });
  const pending = [a.request('hang'), b.request('hang')];
  w.terminate();
  for (const p of pending) await assert.rejects(p, (e) => e.code === ErrorCode.Closed);
  assert.equal(w.terminated, 1);
  a.destroy(); b.destroy();
});

test('a destroyed endpoint is not told of a later terminate(); terminate() still terminates', T, async () => {
  await ready;
  const w = new FakeWorker();
  const closes = [];
  const t = workerTransport(w);
  t.onClose(() => closes.push('destroyed one'));
  t.destroy();
  assert.deepEqual(closes, ['destroyed one'], 'destroy() itself tells the endpoint, once');
  w.terminate();
  assert.deepEqual(closes, ['destroyed one']);
  assert.equal(w.terminated, 1);
});

test('a worker-like object without terminate() still makes a transport; calls go out as on any worker', T, async () => {
  await ready;
  const sent = [];
  const w = new (class extends EventTarget { postMessage(m) { sent.push(m); } })();
  const p = new Peer(workerTransport(w), { timeout: 10000 });
  p.notify('hello', [1]);
  await p.request('ping', [], { timeout: 1 }).catch(() => {});
  assert.ok(sent.length >= 1);
  p.destroy();
});
