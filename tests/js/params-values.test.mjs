// Params of a method declared with a ParamSpec (docs/protocol.md "Objects
// instead of bytes"): the core checks each member's type, and the handler
// gets the members as they arrived over postMessage (structured clone), not
// as JSON text would have made them. One case per rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Peer, RPCError, ErrorCode, portTransport, ready } from '../../js/index.js';

async function served(spec, handler, fn) {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new Peer(portTransport(port2));
  const client = new Peer(portTransport(port1), { timeout: 15000 });
  server.method('m', handler, spec);
  try { return await fn(client); } finally { client.destroy(); server.destroy(); }
}

// What the handler saw, or the RPCError the call was refused with.
async function seen(spec, params) {
  let got;
  return served(spec, (p) => { got = p; return null; }, async (client) => {
    try {
      await client.request('m', params);
      return got;
    } catch (e) {
      if (e instanceof RPCError) return e;
      throw e;
    }
  });
}

const spec = (...params) => ({ params, allowExtra: true });

test('a member that is not JSON reaches the handler unchanged: typed arrays, Date, Map, Set', async () => {
  const when = new Date(86400000);
  const p = await seen(spec({ name: 'b', type: 'object' }, { name: 'd', type: 'object' },
    { name: 'm', type: 'object' }, { name: 's', type: 'object' }),
  { b: new Uint8Array([1, 2, 255]), d: when, m: new Map([[1, 'one']]), s: new Set([2]) });
  assert.ok(p.b instanceof Uint8Array);
  assert.deepEqual([...p.b], [1, 2, 255]);
  assert.ok(p.d instanceof Date);
  assert.equal(p.d.getTime(), when.getTime());
  assert.ok(p.m instanceof Map);
  assert.equal(p.m.get(1), 'one');
  assert.ok(p.s instanceof Set && p.s.has(2));
});

test('a nested value keeps what JSON would lose: -0, undefined, NaN inside an object member', async () => {
  const p = await seen(spec({ name: 'o', type: 'object' }), { o: { z: -0, u: undefined, n: NaN, deep: [[-0]] } });
  assert.ok(Object.is(p.o.z, -0));
  assert.ok(Object.hasOwn(p.o, 'u'));
  assert.ok(Number.isNaN(p.o.n));
  assert.ok(Object.is(p.o.deep[0][0], -0));
});

test('a cyclic member is served, not refused as a missing parameter', async () => {
  const o = { name: 'loop' };
  o.self = o;
  const p = await seen(spec({ name: 'o', type: 'object' }), { o });
  assert.equal(p.o.self, p.o);
});

test('-0 is an integer and arrives as -0', async () => {
  const p = await seen(spec({ name: 'n', type: 'integer' }), { n: -0 });
  assert.ok(Object.is(p.n, -0));
});

test('a BigInt is an integer and arrives as a BigInt', async () => {
  const p = await seen(spec({ name: 'n', type: 'integer' }), [2n ** 70n]);
  assert.equal(p.n, 2n ** 70n);
});

test('NaN and Infinity are numbers, not integers', async () => {
  const p = await seen(spec({ name: 'x', type: 'number' }, { name: 'y', type: 'number' }), [NaN, -Infinity]);
  assert.ok(Number.isNaN(p.x));
  assert.equal(p.y, -Infinity);
  const e = await seen(spec({ name: 'n', type: 'integer' }), { n: NaN });
  assert.equal(e.code, ErrorCode.InvalidParams);
  assert.equal(e.message, 'Invalid params: "n" must be an integer, got a number');
});

test('a string with a lone surrogate is a string and arrives unchanged', async () => {
  const p = await seen(spec({ name: 's', type: 'string' }), { s: 'a\uD800b' });
  assert.equal(p.s, 'a\uD800b');
});

test('a member of the wrong type is refused -32602 naming its type as JS has it', async () => {
  const cases = [
    [{ name: 's', type: 'string' }, new Date(0), '"s" must be a string, got an object'],
    [{ name: 'a', type: 'array' }, new Uint8Array(2), '"a" must be an array, got an object'],
    [{ name: 'o', type: 'object' }, [1], '"o" must be an object, got an array'],
    [{ name: 'n', type: 'number' }, 'five', '"n" must be a number, got a string'],
    [{ name: 'i', type: 'integer' }, 1.5, '"i" must be an integer, got a number'],
    [{ name: 'b', type: 'boolean' }, null, '"b" must be a boolean, got null'],
  ];
  for (const [param, v, why] of cases) {
    const e = await seen(spec(param), [v]);
    assert.ok(e instanceof RPCError, why);
    assert.equal(e.code, ErrorCode.InvalidParams);
    assert.equal(e.message, `Invalid params: ${why}`);
  }
});

test('positional members are named by the spec and keep their values; an undefined element is typed null', async () => {
  const bytes = new Uint8Array([9]);
  const p = await seen(spec({ name: 'a', type: 'object' }, { name: 'b', type: 'null' }, { name: 'c' }), [bytes, undefined, 3]);
  assert.deepEqual(Object.keys(p).sort(), ['a', 'b', 'c']);
  assert.ok(p.a instanceof Uint8Array && p.a[0] === 9);
  assert.equal(p.b, undefined);
  assert.equal(p.c, 3);
});

test('a member whose value JSON leaves out (undefined) counts as absent', async () => {
  const e = await seen({ params: [{ name: 'x' }] }, { x: undefined });
  assert.equal(e.code, ErrorCode.InvalidParams);
  assert.equal(e.message, 'Invalid params: missing required parameter "x"');
});

test('a member name with a lone surrogate is refused -32602 saying so', async () => {
  const e = await seen(spec(), { ['k\uDC00']: 1 });
  assert.equal(e.code, ErrorCode.InvalidParams);
  assert.equal(e.message, 'Invalid params: a member name is not Unicode text (a lone surrogate)');
});

test('JSON members are handed over as they are, and __proto__ stays a member', async () => {
  const params = JSON.parse('{"a":1,"b":"two","c":[3],"__proto__":{"d":4},"e":null,"f":1.5}');
  const p = await seen(spec(), params);
  assert.deepEqual(p, params);
  assert.ok(Object.hasOwn(p, '__proto__'));
  assert.equal(Object.getPrototypeOf(p), Object.prototype);
});

test('a notification to a method with a spec gets its members unchanged too', async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const server = new Peer(portTransport(port2));
  const client = new Peer(portTransport(port1));
  try {
    const got = new Promise((resolve) => server.method('n', resolve, spec({ name: 'b', type: 'object' })));
    client.notify('n', { b: new Uint8Array([7]) });
    const p = await got;
    assert.ok(p.b instanceof Uint8Array && p.b[0] === 7);
  } finally { client.destroy(); server.destroy(); }
});

test('params whose reading throws (a getter, on a transport that does not clone) are refused -32602, and the batch around them is answered', async () => {
  await ready;
  const t = { sent: [], handler: null, send(m) { t.sent.push(m); }, onMessage(h) { t.handler = h; }, destroy() {} };
  const server = new Peer(t);
  try {
    server.method('m', () => 'ran', spec({ name: 'x' }));
    server.method('ok', () => 'fine');
    const params = { get x() { throw new Error('no'); } };
    t.handler([{ jsonrpc: '2.0', method: 'm', params, id: 1 }, { jsonrpc: '2.0', method: 'ok', id: 2 }]);
    assert.equal(t.sent.length, 1);
    assert.deepEqual(t.sent[0], [
      { jsonrpc: '2.0', error: { code: ErrorCode.InvalidParams, message: 'Invalid params: they cannot be read (reading them threw)' }, id: 1 },
      { jsonrpc: '2.0', result: 'fine', id: 2 },
    ]);
  } finally { server.destroy(); }
});

test('a ParamSpec that declares a name twice is refused when registered, with a TypeError saying so', async () => {
  await ready;
  const { port1, port2 } = new MessageChannel();
  const p = new Peer(portTransport(port1));
  try {
    assert.throws(() => p.method('twice', () => 1, { params: [{ name: 'a', type: 'number' }, { name: 'a', type: 'string' }] }),
      (e) => e instanceof TypeError && /ParamSpec: parameter "a" is declared twice/.test(e.message));
  } finally { p.destroy(); port2.close(); }
});
