// What comes back to a call, as the core judges it on the WebAssembly build
// (the same rules natively: tests/peer_policy_test.cpp, tests/limits_test.cpp):
// a malformed answer fails its call at once and is never answered (§5); a
// batch of notifications from a server goes out; a batch longer than twice
// this side's maxBatch is refused before it is sent; a streamed chunk in the JSON
// codec's form of binary data is measured as the bytes it stands for; an
// error answer rejects its call with an RPCError that has no stack frames.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ErrorCode, JSONRPCClient, JSONRPCServer, Peer, RPCError, portTransport, ready } from '../../js/index.js';
import { chunkSize } from '../../js/size.js';

const T = { timeout: 15000 };

// A client whose port2 side answers each call with `answer(id)`; what else
// the client posts to that side is collected in `back`.
function answeredBy(answer, Client = JSONRPCClient) {
  const { port1, port2 } = new MessageChannel();
  const diags = [];
  const client = new Client(portTransport(port1, { pack: false }), { timeout: 0, onDiagnostic: (k) => diags.push(k) });
  const back = [];
  port2.onmessage = ({ data }) => {
    if (data?.method === 'up' && data.id !== undefined) port2.postMessage(answer(data.id));
    else back.push(data);
  };
  return { client, diags, back, close: () => { client.destroy(); port2.close(); } };
}

const MALFORMED = [
  ['both result and error', (id) => ({ jsonrpc: '2.0', result: 1, error: { code: 1, message: 'x' }, id }),
    'Invalid response: response must have exactly one of "result" and "error"'],
  ['an error code that is a string', (id) => ({ jsonrpc: '2.0', error: { code: 'E', message: 'x' }, id }),
    'Invalid response: error "code" must be an integer'],
  ['an error code of 1.5', (id) => ({ jsonrpc: '2.0', error: { code: 1.5, message: 'x' }, id }),
    'Invalid response: error "code" must be an integer'],
  ['an error without a message', (id) => ({ jsonrpc: '2.0', error: { code: 1 }, id }),
    'Invalid response: error "message" must be a string'],
  // What JSON.stringify makes of { result: undefined }, and its tuple.
  ['neither result nor error', (id) => ({ jsonrpc: '2.0', id }), 'Invalid response: no "method" member'],
  ['a result tuple without its value', (id) => [2n, id], 'Invalid response: no "method" member'],
];

for (const [name, answer, message] of MALFORMED) {
  test(`a malformed answer to a pending call (${name}) fails it at once with -32603 and is not answered`, T, async () => {
    await ready;
    for (const Client of [JSONRPCClient, Peer]) {
      const c = answeredBy(answer, Client);
      try {
        await assert.rejects(c.client.request('up'), (e) => e.code === ErrorCode.InternalError && e.message === message);
        // Something else the other side then sends arrives: nothing came before it.
        await c.client.request('up').catch(() => {});
        assert.deepEqual(c.back.filter((m) => m?.method === undefined), [], 'nothing answers an answer');
        assert.ok(c.diags.includes('InvalidResponse'));
        assert.equal(c.client.stats().pending, 0);
      } finally { c.close(); }
    }
  });
}

test('a server\'s batch of notifications alone goes out, as its notify() does', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port1, { pack: false }));
  const got = new Promise((resolve) => { port2.onmessage = ({ data }) => { if (Array.isArray(data)) resolve(data); }; });
  try {
    const sent = server.batch([{ method: 'progress', params: [1], notification: true },
      { method: 'progress', params: [2], notification: true }]);
    assert.deepEqual(await Promise.all(sent), [undefined, undefined]);
    assert.deepEqual(await got, [{ jsonrpc: '2.0', method: 'progress', params: [1] },
      { jsonrpc: '2.0', method: 'progress', params: [2] }]);
  } finally { server.destroy(); port2.close(); }
});

test('a batch of more calls than twice this side\'s maxBatch is refused, each call -32600, before anything is sent', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1, { pack: false }), { limits: { maxBatch: 2 } });
  const posted = [];
  port2.onmessage = ({ data }) => posted.push(data);
  try {
    const calls = client.batch(['a', 'b', 'c', 'd', 'e'].map((method) => ({ method })));
    for (const c of calls)
      await assert.rejects(c, (e) => e.code === ErrorCode.InvalidRequest &&
        e.message === 'Invalid Request: a batch of 5 calls exceeds twice this side\'s max_batch of 2, so its answers could not be received');
    await client.request('ping', undefined, { timeout: 50 }).catch(() => {});  // a later post, to wait on
    assert.ok(posted.every((m) => !Array.isArray(m)), 'no batch was posted');
    assert.equal(client.stats().pending, 0);
  } finally { client.destroy(); port2.close(); }
});

test('a chunk in the JSON codec\'s form of binary data counts as its bytes (max_stream_chunk)', () => {
  const bytes = Array.from({ length: 1000 }, (_, i) => i % 256);
  assert.equal(chunkSize({ bytes, subtype: null }), 1000);
  assert.equal(chunkSize({ bytes, subtype: 7 }), 1000);
  assert.equal(chunkSize(new Uint8Array(1000)), 1000);
  // Not that form: measured as any object (strings in it count in full).
  assert.ok(chunkSize({ bytes: ['x'.repeat(5000)], subtype: null }) > 5000);
  assert.ok(chunkSize({ bytes: [256], subtype: null }) > 1);
  assert.ok(chunkSize({ bytes, subtype: null, more: 1 }) > 1000 * 9);
  assert.ok(chunkSize({ bytes, subtype: 'x' }) > 1000 * 9);
});

test('an error answer, a timeout and a cancel reject with an RPCError without frames, and Error.stackTraceLimit is left as it was', T, async () => {
  await ready;
  const { client, close } = answeredBy((id) => ({ jsonrpc: '2.0', error: { code: 7, message: 'seven', data: [7] }, id }));
  const before = Error.stackTraceLimit;
  try {
    const frameless = (code, message) => (e) => {
      assert.ok(e instanceof RPCError && e instanceof Error);
      assert.equal(Object.prototype.toString.call(e), '[object Error]', 'a real Error, as structured clone and inspect see it');
      assert.equal(e.code, code);
      assert.match(e.message, message);
      assert.equal(e.stack, `RPCError: ${e.message}`, 'no frames: they would be weft\'s receive path');
      return true;
    };
    await assert.rejects(client.request('up', []), frameless(7, /^seven$/));
    await assert.rejects(client.request('down', [], { timeout: 1 }), frameless(ErrorCode.Timeout, /^Request timed out/));
    const ac = new AbortController();
    const call = client.request('down', [], { signal: ac.signal });
    ac.abort();
    await assert.rejects(call, frameless(ErrorCode.RequestCancelled, /^Request cancelled/));
    assert.equal(Error.stackTraceLimit, before);
    assert.match(new RPCError(1, 'made by the caller').stack, /\n\s+at /, 'an RPCError made in user code has its stack');
  } finally { close(); }
});
