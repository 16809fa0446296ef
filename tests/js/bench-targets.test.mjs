// The bench's target verdicts (bench/lib/targets.mjs) say what the
// repetitions show: one case per rule of its header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

// node bench/targets.mjs --check: the exit code of a run's verdicts.
function check(results) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-targets-'));
  const file = path.join(dir, 'run.json');
  fs.writeFileSync(file, JSON.stringify({ labels: { 'node-messagechannel': 'Node MessageChannel' }, results }));
  const r = spawnSync(process.execPath, [fileURLToPath(new URL('../../bench/targets.mjs', import.meta.url)), '--check', file], { encoding: 'utf8' });
  fs.rmSync(dir, { recursive: true });
  return r;
}
const allMet = () => ({ 'node-messagechannel': {
  raw: row([1000, 1000, 1000]),
  weft: row([[300, 8], [300, 8], [300, 8]]),
  'weft → json-rpc-2.0': row([110, 110, 110]),
  'json-rpc-2.0 → weft': row([100, 90, 105]),
  'json-rpc-2.0': row([100, 100, 100]),
} });

test('--check exits 0 when every target is met in the median', () => {
  const r = check(allMet());
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /5 of 5 targets met in the median/);
});

test('--check exits 1 and names a target met only within the spread', () => {
  const results = allMet();
  results['node-messagechannel']['json-rpc-2.0 → weft'] = row([100, 90, 95]);
  const r = check(results);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /not met in the median: json-rpc-2\.0 client → weft server ÷ json-rpc-2\.0 \(≥ 1\), Node MessageChannel \(within spread\)/);
});

test('--check does not judge targets without rows, and fails a run with none', () => {
  const results = allMet();
  delete results['node-messagechannel']['json-rpc-2.0 → weft'];
  const r = check(results);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /4 of 4 targets met in the median/);
  const none = check({ 'node-messagechannel': { raw: row([1]) } });
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no target to judge/);
});
