// Small statistics helpers for the bench: percentiles, medians, formatting.
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/**
 * The step of the clock that timed `sorted` (µs): 100 or 5 when every sample
 * sits on that grid (a browser's coarsened performance.now(): 100 µs, or 5
 * µs cross-origin isolated), else 0 (a clock finer than the samples' spread).
 */
export function timerStep(sorted) {
  if (sorted.length === 0) return 0;
  for (const q of [100, 5]) {
    if (sorted.every((x) => Math.abs(x / q - Math.round(x / q)) < 1e-4)) return q;
  }
  return 0;
}

/**
 * Percentile `p` of samples timed by a clock of step `w` µs (timerStep): a
 * sample of value v stands for a time in [v - w/2, v + w/2), so the
 * percentile is interpolated within the step its rank falls in (the median
 * of grouped data), not rounded to the grid. With w = 0, percentile().
 * Why: on a 5 µs grid two p50s of 20-odd µs are 20 or 25 whatever their
 * difference; interpolated, a shift of the samples between the two values
 * moves the p50 with it.
 */
export function steppedPercentile(sorted, p, w) {
  const v = percentile(sorted, p);
  if (!(w > 0) || !Number.isFinite(v)) return v;
  const rank = (p / 100) * sorted.length;
  let below = 0;
  while (below < sorted.length && sorted[below] < v - w / 2) below++;
  let at = below;
  while (at < sorted.length && sorted[at] < v + w / 2) at++;
  const f = at - below;  // samples on v's step (at least the one at the rank)
  return v - w / 2 + Math.min(1, Math.max(0, (rank - below) / f)) * w;
}

export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** `all` without the contenders `--contenders` left out (floors, 'raw…', are always kept). */
export function selected(all, contenders) {
  return contenders ? all.filter((l) => l.startsWith('raw') || contenders.includes(l)) : all;
}

/**
 * The entries of a table of transports `--transports` keeps (its keys, e.g.
 * chromium-iframe), every entry without the flag; a key no table holds is an
 * error (bench/run.mjs checks them against every table).
 */
export function selectedTransports(table, keys) {
  return Object.entries(table).filter(([k]) => !keys || keys.includes(k));
}

/** Order of contenders for repetition `rep`: forward on even reps, reversed on odd. */
export function alternate(list, rep) {
  return rep % 2 === 0 ? list.slice() : list.slice().reverse();
}

export const fmtUs = (x) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0)) : '—');
export const fmtRate = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
export const fmtRatio = (x) => (Number.isFinite(x) ? x.toFixed(2) + '×' : '—');

/**
 * A 95 % confidence interval for the median of `xs`, free of any assumption
 * about their distribution: the order statistics x(k) and x(n+1-k), k the
 * largest rank with P(Binomial(n, 1/2) < k) ≤ 2.5 % (each sample falls
 * below the true median with probability 1/2). [NaN, NaN] for fewer than 6
 * samples, where no such k exists.
 */
export function medianInterval(xs) {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const n = s.length;
  let below = 0;    // P(Binomial(n, 1/2) < k)
  let term = 0.5 ** n;  // P(Binomial(n, 1/2) = k - 1), from k = 1
  let k = 0;
  for (let j = 0; j < n; j++) {
    if (below + term > 0.025) break;
    below += term;
    term = (term * (n - j)) / (j + 1);
    k = j + 1;
  }
  return k >= 1 ? [s[k - 1], s[n - k]] : [NaN, NaN];
}

/**
 * What a paired comparison's ratios say about "A no slower than B" (a
 * ratio A ÷ B where higher is better): 'faster' when the median's 95 %
 * interval (medianInterval) lies above 1, 'slower' when below, else
 * 'no difference shown'; 'too few rounds' below 6, where no 95 % interval
 * exists.
 */
export function pairedVerdict(ratios) {
  const [lo, hi] = medianInterval(ratios);
  if (!Number.isFinite(lo)) return 'too few rounds';
  return lo > 1 ? 'faster' : hi < 1 ? 'slower' : 'no difference shown';
}
