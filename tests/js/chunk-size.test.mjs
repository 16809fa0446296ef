// js/size.js measures a JavaScript chunk value for max_stream_chunk; it must
// give what the core's weft::chunk_size gives for the same JSON value
// (docs/streams.md "Limits"), so both builds refuse the same chunks. Checked
// against the core itself, through the test-only module (dist-test/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunkSize, utf8Length } from '../../js/size.js';
import { ready } from '../../dist-test/js/index.js';
import { loadModule } from '../../dist-test/js/loader.js';

async function coreChunkSize() {
  await ready;
  const M = await loadModule();
  return (text) => {
    const bytes = new TextEncoder().encode(text);
    const p = M._weft_in(bytes.length);
    M.HEAPU8.set(bytes, p);
    return M._weft_test_chunk_size(bytes.length);
  };
}

// A seeded random JSON value (xorshift), with non-ASCII strings and keys.
function randomValue(seed) {
  let x = seed || 1;
  const rnd = (n) => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) % n; };
  const chars = ['a', 'Z', '0', ' ', 'é', '€', '𝄞', '"', '\\', '\n'];
  const str = () => Array.from({ length: rnd(8) }, () => chars[rnd(chars.length)]).join('');
  const val = (depth) => {
    switch (rnd(depth > 3 ? 5 : 7)) {
      case 0: return null;
      case 1: return rnd(2) === 0;
      case 2: return rnd(1000) - 500;
      case 3: return rnd(1000) / 7;
      case 4: return str();
      case 5: return Array.from({ length: rnd(5) }, () => val(depth + 1));
      default: return Object.fromEntries(Array.from({ length: rnd(5) }, () => [str(), val(depth + 1)]));
    }
  };
  return val(0);
}

test('chunkSize of a JSON value is weft::chunk_size of the same value', async () => {
  const core = await coreChunkSize();
  const fixed = [null, true, 0, 1.5, '', 'abc', 'é€𝄞', [], {}, [1, 2], { ab: [1, 'xyz'] }, { '€': { '': [null, [[]]] } }];
  for (const v of fixed) assert.equal(chunkSize(v), core(JSON.stringify(v)), JSON.stringify(v));
  for (let seed = 1; seed <= 2000; seed++) {
    const v = randomValue(seed);
    assert.equal(chunkSize(v), core(JSON.stringify(v)), `seed ${seed}: ${JSON.stringify(v)}`);
  }
});

test('chunkSize counts binary data by its bytes, a value reached twice twice (JSON sends it twice), a cycle once, and stops past the limit', () => {
  assert.equal(chunkSize(new Uint8Array(300)), 300);
  assert.equal(chunkSize(new ArrayBuffer(7)), 7);
  assert.equal(chunkSize(new DataView(new ArrayBuffer(9), 2, 5)), 5);
  const shared = 'x'.repeat(100);
  const o = { a: shared };
  assert.equal(chunkSize([o, o]), 2 + 2 * (2 + 100));
  const cycle = { k: null };
  cycle.k = cycle;
  assert.equal(chunkSize(cycle), 2);
  assert.equal(chunkSize(new Map([['k', 'vv']])), 1 + 1 + 2);
  assert.equal(chunkSize(new Set(['abc'])), 1 + 3);
  // Past `stop` it returns some size > stop without walking the rest.
  assert.ok(chunkSize('y'.repeat(5_000_000), 1_000_000) > 1_000_000);
  assert.ok(chunkSize(new Array(5_000_000).fill(0), 1_000_000) > 1_000_000);
});

test('utf8Length is the byte count TextEncoder writes, lone surrogates as U+FFFD', () => {
  for (const s of ['', 'abc', 'é', '€', '𝄞', '\ud800', 'a\udc00b', '\ud800\ud800', 'x'.repeat(1000) + '€'])
    assert.equal(utf8Length(s), new TextEncoder().encode(s).length, JSON.stringify(s));
});
