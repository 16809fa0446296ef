// The bench's percentiles (bench/lib/stats.mjs): on a coarsened clock a
// p50 is interpolated within the clock's step, on a fine one it is the
// sample at its rank; one case per rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { latency } from '../../bench/lib/measure.mjs';
import { medianInterval, pairedVerdict, percentile, selectedTransports, steppedPercentile, timerStep } from '../../bench/lib/stats.mjs';

const sorted = (xs) => Float64Array.from(xs).sort();
const repeat = (v, n) => Array(n).fill(v);

test('timerStep: 5 or 100 µs when every sample is on that grid, else 0', () => {
  // As a browser's clock gives them: ms differences times 1000, off by rounding.
  assert.equal(timerStep(sorted([0.02 * 1000, 0.025000000000000001 * 1000, (0.105 - 0.08) * 1000])), 5);
  assert.equal(timerStep(sorted([100, 200, 300, 200])), 100);
  assert.equal(timerStep(sorted([20, 25, 21.37])), 0);
  assert.equal(timerStep(sorted([])), 0);
});

test('steppedPercentile: with no step, the sample at the rank', () => {
  const t = sorted([3.2, 1.1, 2.7, 9.9]);
  assert.equal(steppedPercentile(t, 50, 0), percentile(t, 50));
  assert.equal(steppedPercentile(t, 50, 0), 2.7);
});

test('steppedPercentile: samples all on one step give that step', () => {
  assert.equal(steppedPercentile(sorted(repeat(20, 10)), 50, 5), 20);
});

test('steppedPercentile: a p50 moves with the share of samples on each step', () => {
  // 60 % at 20 µs, 40 % at 25: rank 50 of 100 lies 50/60 into 20's step [17.5, 22.5).
  const a = sorted([...repeat(20, 60), ...repeat(25, 40)]);
  assert.equal(steppedPercentile(a, 50, 5), 17.5 + (50 / 60) * 5);
  // More samples at 25: the p50 is higher, though the plain one is 20 in both.
  const b = sorted([...repeat(20, 52), ...repeat(25, 48)]);
  assert.ok(steppedPercentile(b, 50, 5) > steppedPercentile(a, 50, 5));
  assert.equal(percentile(a, 50), percentile(b, 50));
  // Half below 25: the p50 is 25's lower edge.
  assert.equal(steppedPercentile(sorted([...repeat(20, 50), ...repeat(25, 50)]), 50, 5), 22.5);
});

test('steppedPercentile: the p99 is interpolated in its own step', () => {
  // 99 of 100 at 20 µs or below: rank 99 ends 20's step.
  const t = sorted([...repeat(15, 9), ...repeat(20, 90), 50]);
  assert.equal(steppedPercentile(t, 99, 5), 22.5);
});

test('latency: a clock on no grid gives plain percentiles and step 0', async () => {
  const r = await latency(() => Promise.resolve(), 200);
  assert.equal(r.step, 0);
  assert.equal(r.n, 200);
  assert.ok(r.p50 > 0 && r.p99 >= r.p50);
});

test('selectedTransports: --transports keeps the rows it names, in the table\'s order', () => {
  const table = { a: 1, b: 2, c: 3 };
  assert.deepEqual(selectedTransports(table, ['c', 'a']), [['a', 1], ['c', 3]]);
  assert.deepEqual(selectedTransports(table, null), [['a', 1], ['b', 2], ['c', 3]]);
});

test('bench/run.mjs: a --transports key no row has is refused, naming the rows there are', async () => {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, [new URL('../../bench/run.mjs', import.meta.url).pathname, '--transports', 'chromium-ifrme'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--transports: no row chromium-ifrme \(Node and Chromium rows: .*chromium-iframe,/);
});

test('medianInterval: the order statistics a Binomial(n, 1/2) puts 95 % between', () => {
  const xs = Array.from({ length: 20 }, (_, i) => 20 - i);  // 20..1, unsorted
  // n = 20: P(B < 6) = 0.0207, P(B < 7) = 0.0577, so k = 6: x(6) and x(15).
  assert.deepEqual(medianInterval(xs), [6, 15]);
  // n = 6: P(B < 1) = 0.0156, P(B < 2) = 0.109: the extremes.
  assert.deepEqual(medianInterval([3, 1, 2, 6, 5, 4]), [1, 6]);
  assert.deepEqual(medianInterval([1, 2, 3, 4, 5]), [NaN, NaN], 'five samples cannot give 95 %');
  assert.deepEqual(medianInterval([1, NaN, 2]), [NaN, NaN], 'NaN is no sample');
});

test('pairedVerdict: faster or slower only when the interval leaves 1 out', () => {
  const around = (c) => Array.from({ length: 20 }, (_, i) => c + (i - 10) * 0.002);
  assert.equal(pairedVerdict(around(1.05)), 'faster');
  assert.equal(pairedVerdict(around(0.95)), 'slower');
  assert.equal(pairedVerdict(around(1.0)), 'no difference shown');
  assert.equal(pairedVerdict([1.1, 1.2]), 'too few rounds');
});
