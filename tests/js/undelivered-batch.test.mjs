// What a postMessage transport cannot send (js/outgoing.js, Peer::undelivered):
// in a batch, each element that cannot be sent fails with its own reason,
// not that of the first element that failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plain } from '../support/wire.mjs';
import { until } from '../support/until.mjs';
import { JSONRPCServer, Peer, ErrorCode, portTransport, ready } from '../../js/index.js';

const T = { timeout: 15000 };

test('a batch answer with two results that cannot be cloned: each -32603 names its own value', T, async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port2, { pack: false }), { onDiagnostic: () => {} });
  server.method('fn', () => () => 1);
  server.method('sym', () => Symbol('the-symbol'));
  server.method('ok', () => 'fine');
  const got = [];
  port1.addEventListener('message', plain((d) => got.push(d)));
  port1.start();
  try {
    port1.postMessage(['fn', 'sym', 'ok'].map((method, i) => ({ jsonrpc: '2.0', method, id: i + 1 })));
    await until(() => got.length === 1, 'the batch answer');
    const [fn, sym, ok] = got[0];
    assert.equal(fn.error.code, ErrorCode.InternalError);
    assert.match(fn.error.message, /^Internal error: the result could not be sent: .*=> 1/);
    assert.equal(sym.error.code, ErrorCode.InternalError);
    assert.match(sym.error.message, /^Internal error: the result could not be sent: .*the-symbol/);
    assert.deepEqual(ok, { jsonrpc: '2.0', result: 'fine', id: 3 });
  } finally { server.destroy(); port1.close(); }
});

for (const pack of [false, true]) {
  test(`pack ${pack}: batch calls whose params cannot be cloned: each fails (-32002) with its own clone error as cause, the other is answered`, T, async () => {
    await ready;
    const { port1, port2 } = new MessageChannel();
    const server = new Peer(portTransport(port2, { pack }));
    server.method('save', ([x]) => `saved ${x}`);
    const client = new Peer(portTransport(port1, { pack }), { timeout: 0, onDiagnostic: () => {} });
    try {
      const [a, b, c] = client.batch([
        { method: 'save', params: [function first() {}] },
        { method: 'save', params: ['ok'] },
        { method: 'save', params: [Symbol('second')] },
      ]);
      await assert.rejects(a, (e) => e.code === ErrorCode.Closed && /first/.test(e.message) && /first/.test(e.cause?.message));
      await assert.rejects(c, (e) => e.code === ErrorCode.Closed && /second/.test(e.message) && /second/.test(e.cause?.message));
      assert.equal(await b, 'saved ok');
      assert.equal(client.stats().pending, 0);
    } finally { client.destroy(); server.destroy(); }
  });
}
