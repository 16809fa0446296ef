// js/ids.js: a number id JSON.parse would round is read again from the
// frame's text (exactIds), and an id from the core is a number unless a
// double would change its text (idOf, bigId).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { IdText, bigId, exactIds, idOf } from '../../js/ids.js';

const ids = (text) => {
  const m = exactIds(text, JSON.parse(text));
  return (Array.isArray(m) ? m : [m]).map((x) => (x?.id instanceof IdText ? `text ${x.id.text}` : x?.id));
};

test('a message\'s number id beyond 2^53 or with more digits than a double keeps is taken from the text', () => {
  assert.deepEqual(ids('{"jsonrpc":"2.0","method":"m","id":12345678901234567890}'), ['text 12345678901234567890']);
  assert.deepEqual(ids('{"id" : -9007199254740993 }'), ['text -9007199254740993']);
  assert.deepEqual(ids('{"id":1.50}'), ['text 1.50']);
  assert.deepEqual(ids('{"id":7}'), [7]);  // kept by a double: left as it is
  assert.deepEqual(ids('{"id":1e400}'), [Infinity]);  // not a number JSON-RPC takes, natively either
});

test('only the message\'s own "id" member counts: not one in its params, in a string, or in a nested array', () => {
  assert.deepEqual(ids('{"params":{"id":99999999999999999999},"x":"\\"id\\":5","id":9007199254740993}'), ['text 9007199254740993']);
  assert.deepEqual(ids('{"a":[1,{"id":2}],"\\u0069d":12345678901234567891}'), ['text 12345678901234567891']);
  assert.deepEqual(ids('{"id":5,"id":12345678901234567890}'), ['text 12345678901234567890']);  // the last, as JSON.parse
});

test('§6: in a batch each object element gets its own id; other elements are skipped', () => {
  assert.deepEqual(ids('[{"id":1},3,[{"id":7}],{"id":12345678901234567890},"s",{"id":"12345678901234567890"},{"id":1.25}]'),
    [1, undefined, undefined, 'text 12345678901234567890', undefined, '12345678901234567890', 'text 1.25']);
});

test('an id from the core is the number it spells when a double keeps its text, else the text', () => {
  assert.equal(idOf('1152921504606847000'), 2 ** 60);  // as String(2 ** 60) spells it
  assert.ok(Object.is(idOf('-0.0'), -0));
  assert.equal(idOf('1e+21'), 1e21);
  assert.deepEqual(idOf('1.50'), new IdText('1.50'));
  assert.deepEqual(bigId(-2874452364, 3944680146), new IdText('-12345678901234567890'));
  assert.equal(bigId(268435456, 24), 2 ** 60);  // the digits 1152921504606847000, as a JS number 2 ** 60 went in
  assert.deepEqual(bigId(268435456, 0), new IdText('1152921504606846976'));  // the same value, other digits: kept
});
