// The bench's target verdicts (bench/lib/targets.mjs) say what the
// repetitions show: one case per rule of its header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { targetLines, verdict } from '../../bench/lib/targets.mjs';

const rep = (rate, p50 = 10) => ({ p50, p99: p50 * 3, rate });
const row = (small, large = small) => ({ small: small.map((r) => rep(...[r].flat())), large: large.map((r) => rep(...[r].flat())) });
const cell = (lines, target) => {
  const line = lines.find((l) => l.startsWith(`| ${target}`));
  assert.ok(line, `no line for ${target}`);
  return line.split('|').slice(2, -1).map((c) => c.trim());
};

test('verdict: met in every repetition, in the median only, in some, or in none', () => {
  assert.equal(verdict([1.6, 1.7, 1.5], 1.5), 'met');
  assert.equal(verdict([1.6, 1.7, 1.4], 1.5), 'met (median)');
  assert.equal(verdict([1.6, 1.4, 1.3], 1.5), 'within spread');
  assert.equal(verdict([1.2, 1.4, 1.3], 1.5), 'not met');
  assert.equal(verdict([], 1), 'no data');
});

test('verdict: a p50 target is met at or below it', () => {
  assert.equal(verdict([0.9, 1.0, 0.95], 1, true), 'met');
  assert.equal(verdict([0.9, 1.1, 1.2], 1, true), 'within spread');
});

test('the best peer is the best median, held against weft repetition by repetition', () => {
  // birpc's median (30) is best; weft ÷ birpc per repetition: 1.0, 0.5, 2.0.
  const results = { 'node-messagechannel': {
    raw: row([100, 100, 100]),
    weft: row([30, 30, 30]),
    'json-rpc-2.0': row([25, 25, 25]),
    birpc: row([30, 60, 15]),
  } };
  const [c] = cell(targetLines(results, { 'node-messagechannel': 'Node MessageChannel' }), '64 KiB calls/s');
  assert.equal(c, '1.00× [0.50×–2.00×] met (median)');
});

test('weft rows, raw floors and the foreign pairs are not peers', () => {
  const results = { 'chromium-worker': {
    raw: row([1000]),
    weft: row([300]),
    'weft (pack:false)': row([900]),
    'weft → json-rpc-2.0': row([900]),
    'json-rpc-2.0 → weft': row([90]),
    'json-rpc-2.0': row([100]),
  } };
  const lines = targetLines(results, {});
  assert.deepEqual(cell(lines, 'small calls/s'), ['**3.00× [3.00×–3.00×]** met']);
  assert.deepEqual(cell(lines, 'weft client'), ['**9.00× [9.00×–9.00×]** met']);
  assert.deepEqual(cell(lines, 'json-rpc-2.0 client'), ['0.90× [0.90×–0.90×] not met']);
});

test('p50 is held against the lowest peer p50', () => {
  const results = { 'node-worker': {
    weft: row([[100, 30]]),
    'json-rpc-2.0': row([[100, 40]]),
    comlink: row([[100, 25]]),
  } };
  assert.deepEqual(cell(targetLines(results, {}), 'small p50'), ['1.20× [1.20×–1.20×] not met']);
});

test('only postMessage transports are judged; a missing row is a dash', () => {
  const results = {
    unix: { 'C echo': row([1]), weft: row([1]) },
    'chromium-messagechannel': { weft: row([2]), comlink: row([1]) },
  };
  const lines = targetLines(results, { 'chromium-messagechannel': 'Chromium MessageChannel' });
  assert.ok(lines.some((l) => l === '| target | Chromium MessageChannel |'));
  assert.deepEqual(cell(lines, 'json-rpc-2.0 client'), ['—']);
  assert.deepEqual(targetLines({ unix: results.unix }, {}), []);
});
