// The 'wasm floor' bench server (bench/node/wasm-floor.mjs) is a lower bound
// only if it does the work it claims: the envelope checks of §4, the method
// lookup, the handler's answer under the request's id. One case per claim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serveFloor } from '../../bench/node/wasm-floor.mjs';

async function floor() {
  const answers = [];
  let listener = null;
  const port = {
    postMessage: (m) => answers.push(m),
    addEventListener: (type, l) => { if (type === 'message') listener = l; },
    removeEventListener: () => { listener = null; },
  };
  const stop = await serveFloor(port, { add: ({ a, b }) => a + b, 'sümme': ([a, b]) => a + b });
  const ask = (m) => { listener({ data: m }); return answers.pop(); };
  return { ask, stop, listening: () => listener !== null };
}

test('a request is answered with its handler\'s result under its id (number, string or null)', async () => {
  const { ask } = await floor();
  assert.deepEqual(ask({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: 7 }), { jsonrpc: '2.0', result: 3, id: 7 });
  assert.deepEqual(ask({ jsonrpc: '2.0', method: 'add', params: { a: 2, b: 2 }, id: 'x' }), { jsonrpc: '2.0', result: 4, id: 'x' });
  assert.deepEqual(ask({ jsonrpc: '2.0', method: 'sümme', params: [1, 5], id: null }), { jsonrpc: '2.0', result: 6, id: null });
});

test('"jsonrpc" must be exactly "2.0" and "method" a string (-32600)', async () => {
  const { ask } = await floor();
  assert.equal(ask({ jsonrpc: '2.1', method: 'add', params: { a: 1, b: 2 }, id: 1 }).error.code, -32600);
  assert.equal(ask({ jsonrpc: 2, method: 'add', params: { a: 1, b: 2 }, id: 1 }).error.code, -32600);
  assert.equal(ask({ jsonrpc: '2.0', method: 5, id: 1 }).error.code, -32600);
});

test('an id that is not a string, number or null, and params that are not structured, are refused (-32600)', async () => {
  const { ask } = await floor();
  assert.equal(ask({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: true }).error.code, -32600);
  assert.equal(ask({ jsonrpc: '2.0', method: 'add', params: 3, id: 1 }).error.code, -32600);
});

test('a NaN or infinite id is not a JSON number (-32600)', async () => {
  const { ask } = await floor();
  assert.equal(ask({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: NaN }).error.code, -32600);
  assert.equal(ask({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: Infinity }).error.code, -32600);
});

test('a method the module cannot hold is refused when it is registered, not later', async () => {
  const port = { postMessage() {}, addEventListener() {}, removeEventListener() {} };
  await assert.rejects(serveFloor(port, { ['m'.repeat(33)]: () => 0 }), /cannot register/);
});

test('a value that is not an object is refused with id null (-32600)', async () => {
  const { ask } = await floor();
  assert.deepEqual(ask('hello'), { jsonrpc: '2.0', error: { code: -32600, message: 'refused' }, id: null });
});

test('an unknown method is -32601', async () => {
  const { ask } = await floor();
  assert.equal(ask({ jsonrpc: '2.0', method: 'ad', id: 1 }).error.code, -32601);
  assert.equal(ask({ jsonrpc: '2.0', method: 'addd', id: 1 }).error.code, -32601);
});

test('stopping removes the listener', async () => {
  const { stop, listening } = await floor();
  stop();
  assert.equal(listening(), false);
});
