// Outbound payload handles (js/payloads.js, wasm/payloads.h): a handle names
// one value until it is released, exactly once; a handle of an entry that
// was released, or reused since, is refused, never resolved to another value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as A from '../../dist/weft_abi.js';
import { Outbound } from '../../js/payloads.js';

const INDEX = 2 ** A.PAY_INDEX_BITS;
const GEN_MAX = 2 ** (52 - A.PAY_INDEX_BITS) - 1;

test('a handle resolves to its value until released, and release returns it', () => {
  const out = new Outbound();
  const v = { a: 1 };
  const h = out.hold(v);
  assert.equal(out.peek(h), v);
  assert.equal(out.count, 1);
  assert.equal(out.release(h), v);
  assert.equal(out.count, 0);
});

test('a released handle is refused', () => {
  const out = new Outbound();
  const h = out.hold('x');
  out.release(h);
  assert.throws(() => out.peek(h), /stale payload handle/);
  assert.throws(() => out.release(h), /stale payload handle/);
});

test('a reused entry refuses the handle of its earlier value', () => {
  const out = new Outbound();
  const h1 = out.hold('first');
  out.release(h1);
  const h2 = out.hold('second');
  assert.notEqual(h2, h1);
  assert.equal(h2 % INDEX, h1 % INDEX, 'the entry is reused');
  assert.throws(() => out.peek(h1), /stale payload handle/);
  assert.equal(out.peek(h2), 'second');
});

test('handles of live values are distinct and stay below the inbound range', () => {
  const out = new Outbound();
  const hs = new Set();
  for (let i = 0; i < 1000; i++) hs.add(out.hold(i));
  assert.equal(hs.size, 1000);
  for (const h of hs) {
    assert.ok(Number.isSafeInteger(h) && h < A.PAY_INBOUND_BASE);
    assert.equal(out.peek(h), (h % INDEX));
  }
});

test('generations wrap from the largest to 1, and the old handle is still refused', () => {
  const out = new Outbound();
  const h = out.hold('a');
  out.release(h);
  const n = h % INDEX;
  out.gens[n] = GEN_MAX - 1;
  const last = out.hold('b');
  assert.equal(Math.floor(last / INDEX), GEN_MAX);
  assert.ok(last < A.PAY_INBOUND_BASE);
  assert.equal(out.release(last), 'b');
  const wrapped = out.hold('c');
  assert.equal(Math.floor(wrapped / INDEX), 1);
  assert.equal(out.peek(wrapped), 'c');
  assert.throws(() => out.peek(last), /stale payload handle/);
});
