// The targets table of a run again, from the figures it kept:
//   node bench/targets.mjs [--check] bench/results/<run>.json
// With --check it also exits 1 when a target is not met in the median of
// the run's repetitions (verdict "within spread" or "not met"), and names
// each such target on stderr; a target the run has no rows for (a run of
// some contenders) is not judged, and a run with none to judge fails. A
// pass/fail for a run, which CI does not make (a full run takes 25–50
// minutes on these machines).
import fs from 'node:fs';
import { checkTargets, targetLines } from './lib/targets.mjs';

const args = process.argv.slice(2);
const check = args.includes('--check');
const file = args.find((a) => !a.startsWith('--'));
if (!file || args.some((a) => a.startsWith('--') && a !== '--check')) {
  console.error('usage: node bench/targets.mjs [--check] bench/results/<run>.json');
  process.exit(2);
}
const { labels, results } = JSON.parse(fs.readFileSync(file, 'utf8'));
console.log(targetLines(results, labels).join('\n'));
if (check) {
  const { ok, lines } = checkTargets(results, labels);
  for (const l of lines) console.error(l);
  process.exitCode = ok ? 0 : 1;
}
