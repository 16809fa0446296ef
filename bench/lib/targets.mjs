// The speed targets of the postMessage transports, judged from one run's
// repetitions (README "Benchmarks"; the targets as the benchmark issue set
// them):
//   1. weft ↔ weft with default options: small-call calls/s ≥ 1.5× the best
//      peer's;
//   2. its small-call p50 no worse than the best peer's (the lowest);
//   3. its 64 KiB calls/s no lower than the best peer's;
//   4. against a foreign peer (json-rpc-2.0 at the other end), small-call
//      calls/s no lower than that peer's on both ends, as a client and as
//      a server.
// The best peer is the one the results table names (the best median); each
// ratio is then taken per repetition, against that peer's figure in the same
// repetition, so that a busier moment moves both sides. The 64 KiB rows sit
// at their floor (structured clone), where every contender's figure moves
// by ±10 % between repetitions: one median cannot say "slower" there, so
// the verdict names where the target falls among the repetitions:
//   met            in every repetition;
//   met (median)   in the median, not in every repetition;
//   within spread  not in the median, but in some repetition;
//   not met        in no repetition.

const isPeer = (lib) => !lib.startsWith('raw') && !lib.startsWith('C echo') && !lib.includes('weft');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Ratios of one target, one per repetition: `pick(libs, i)` returns
 * [weft's figure, the figure it is held against] of repetition i, or null.
 */
function perRep(libs, kind, pick) {
  const n = Math.min(...Object.values(libs).map((v) => v[kind].length));
  const out = [];
  for (let i = 0; i < n; i++) {
    const pair = pick(libs, i);
    if (pair && pair[1] > 0) out.push(pair[0] / pair[1]);
  }
  return out;
}

// The peer with the best median `key` (the lowest if `lowest`).
function bestPeer(libs, kind, key, lowest) {
  let best = null, who = null;
  for (const [lib, v] of Object.entries(libs)) {
    if (!isPeer(lib) || !v[kind].length) continue;
    const x = median(v[kind].map((r) => r[key]));
    if (best === null || (lowest ? x < best : x > best)) { best = x; who = lib; }
  }
  return who;
}

// [weft's figure, the best peer's] in repetition i.
const vsBest = (kind, key, lowest) => (l, i) => {
  const who = bestPeer(l, kind, key, lowest);
  return l.weft && who && [l.weft[kind][i][key], l[who][kind][i][key]];
};

/** Where `target` falls among ratios `rs` (higher is better unless `lower`). */
export function verdict(rs, target, lower = false) {
  if (!rs.length) return 'no data';
  const ok = (r) => (lower ? r <= target : r >= target);
  if (rs.every(ok)) return 'met';
  if (ok(median(rs))) return 'met (median)';
  return rs.some(ok) ? 'within spread' : 'not met';
}

const TARGETS = [
  { name: 'small calls/s ÷ best peer', target: 1.5, kind: 'small', pick: vsBest('small', 'rate') },
  { name: 'small p50 ÷ best peer\'s', target: 1, lower: true, kind: 'small', pick: vsBest('small', 'p50', true) },
  { name: '64 KiB calls/s ÷ best peer', target: 1, kind: 'large', pick: vsBest('large', 'rate') },
  { name: 'weft client → json-rpc-2.0 server ÷ json-rpc-2.0', target: 1, kind: 'small',
    pick: (l, i) => l['weft → json-rpc-2.0'] && l['json-rpc-2.0'] && [l['weft → json-rpc-2.0'].small[i].rate, l['json-rpc-2.0'].small[i].rate] },
  { name: 'json-rpc-2.0 client → weft server ÷ json-rpc-2.0', target: 1, kind: 'small',
    pick: (l, i) => l['json-rpc-2.0 → weft'] && l['json-rpc-2.0'] && [l['json-rpc-2.0 → weft'].small[i].rate, l['json-rpc-2.0'].small[i].rate] },
];

const fmt = (x) => x.toFixed(2) + '×';
// A target as the table and the check name it.
const targetName = (t) => `${t.name} (${t.lower ? '≤' : '≥'} ${t.target})`;

/** The postMessage transports of `results`, in its order. */
const postMessageTransports = (results) =>
  Object.keys(results).filter((k) => k.startsWith('node-') || k.startsWith('chromium-'));

/**
 * Every target on every postMessage transport of `results`
 * (results[transport][lib][kind] = [{p50, p99, rate}, …]), as
 * { target, transport, ratios, verdict }; ratios is empty (verdict
 * 'no data') where the run lacks the rows.
 */
export function targetVerdicts(results) {
  const out = [];
  for (const t of TARGETS) {
    for (const transport of postMessageTransports(results)) {
      const ratios = perRep(results[transport], t.kind, t.pick).filter(Number.isFinite);
      out.push({ target: targetName(t), transport, ratios, verdict: verdict(ratios, t.target, t.lower) });
    }
  }
  return out;
}

/** Whether a verdict counts as met for a check (`--check`): in the median at least. */
const metInMedian = (v) => v === 'met' || v === 'met (median)';

/**
 * The check of `--check` (targets.mjs, run.mjs): ok unless a target with
 * rows is not met in the median, or none has rows; `lines` says which (for
 * stderr), and how many were met.
 */
export function checkTargets(results, labels) {
  const all = targetVerdicts(results).filter((v) => v.ratios.length);
  const short = all.filter((v) => !metInMedian(v.verdict));
  const lines = short.map((v) => `not met in the median: ${v.target}, ${labels[v.transport] ?? v.transport} (${v.verdict})`);
  lines.push(all.length ? `${all.length - short.length} of ${all.length} targets met in the median` : 'no target to judge in this run');
  return { ok: all.length > 0 && short.length === 0, lines };
}

/** Markdown lines: one table of targetVerdicts(results), a row per target. */
export function targetLines(results, labels) {
  const transports = postMessageTransports(results);
  if (!transports.length) return [];
  const lines = ['## targets (postMessage transports; ratio per repetition: median [lowest–highest], verdict)', ''];
  lines.push(`| target | ${transports.map((t) => labels[t] ?? t).join(' | ')} |`);
  lines.push(`| --- |${transports.map(() => ' ---: |').join('')}`);
  const all = targetVerdicts(results);
  for (const t of TARGETS) {
    const name = targetName(t);
    const cells = all.filter((v) => v.target === name).map(({ ratios: rs, verdict: v }) => {
      if (!rs.length) return '—';
      const body = `${fmt(median(rs))} [${fmt(Math.min(...rs))}–${fmt(Math.max(...rs))}]`;
      return v === 'met' ? `**${body}** met` : `${body} ${v}`;
    });
    lines.push(`| ${name} | ${cells.join(' | ')} |`);
  }
  lines.push('');
  return lines;
}
