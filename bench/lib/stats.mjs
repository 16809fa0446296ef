// Small statistics helpers for the bench: percentiles, medians, formatting.
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
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

/** Order of contenders for repetition `rep`: forward on even reps, reversed on odd. */
export function alternate(list, rep) {
  return rep % 2 === 0 ? list.slice() : list.slice().reverse();
}

export const fmtUs = (x) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0)) : '—');
export const fmtRate = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
export const fmtRatio = (x) => (Number.isFinite(x) ? x.toFixed(2) + '×' : '—');
