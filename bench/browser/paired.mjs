// Paired throughput on one Chromium row: two contenders open at once take
// turns at short bursts of 256 calls in flight (window.benchPaired), and
// each round's ratio (first ÷ second, calls/s) is one sample. The median
// ratio comes with a 95 % interval that assumes nothing about the noise
// (lib/stats.mjs medianInterval), and the verdict on "the first no slower
// than the second" says only what that interval shows: 'faster', 'slower'
// or 'no difference shown'. For the rows whose ratio sits within a few
// percent of 1 in run.mjs's repetitions (bench/README.md, "What is missing"
// 6), where a slow spell a minute long decides a repetition.
//   node bench/browser/paired.mjs 'A,B' [--transport messagechannel|worker|iframe|iframe-cross]
//        [--kind small|large] [--rounds 30] [--ms 300] [--devtools]
// Writes bench/results/<date>-paired-<transport>-<kind>-<A>-vs-<B>.md (--no-save: not).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBenchPage } from './open.mjs';
import { fmtRate, fmtRatio, median, medianInterval, pairedVerdict } from '../lib/stats.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i < 0 ? dflt : args.splice(i, 2)[1];
};
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 && args.splice(i, 1).length > 0;
};
const command = 'node bench/browser/paired.mjs ' + process.argv.slice(2).map((a) => (/[^\w.,:/-]/.test(a) ? `'${a}'` : a)).join(' ');
const transport = opt('--transport', 'iframe');
const kind = opt('--kind', 'small');
const rounds = Number(opt('--rounds', '30'));
const ms = Number(opt('--ms', '300'));
const devtools = flag('--devtools');
const save = !flag('--no-save');
const libs = (args[0] ?? 'json-rpc-2.0 → weft,json-rpc-2.0').split(',');
if (libs.length !== 2 || !['small', 'large'].includes(kind) || !(rounds >= 6) || !(ms > 0) ||
    !['messagechannel', 'worker', 'iframe', 'iframe-cross'].includes(transport)) {
  console.error("usage: node bench/browser/paired.mjs 'A,B' [--transport messagechannel|worker|iframe|iframe-cross] [--kind small|large] [--rounds N>=6] [--ms MS]");
  process.exit(2);
}

const { call, version, close } = await openBenchPage('paired', { devtools });
let got;
try {
  got = await call('benchPaired', transport, libs, kind, rounds, ms);
} finally {
  await close();
}
const [a, b] = libs;
const ratios = got[a].map((x, i) => x / got[b][i]);
const [lo, hi] = medianInterval(ratios);
const lines = [
  `# paired throughput: ${a} ÷ ${b}, ${transport}, ${kind === 'small' ? 'small call add({a:1,b:2})' : '64 KiB echo'}`,
  '',
  `- date: ${new Date().toISOString()}; Chromium ${version}; ${os.availableParallelism()} logical CPUs`,
  `- command: \`${command}\``,
  `- ${rounds} rounds; in each, both contenders in turn (order reversed every other round) keep 256 calls in flight for ${ms} ms on a collected heap`,
  '',
  `| contender | median calls/s |`,
  '| --- | ---: |',
  `| ${a} | ${fmtRate(median(got[a]))} |`,
  `| ${b} | ${fmtRate(median(got[b]))} |`,
  '',
  `**${a} ÷ ${b}: median ${fmtRatio(median(ratios))}, 95 % interval [${fmtRatio(lo)}–${fmtRatio(hi)}]: ${pairedVerdict(ratios)}**`,
  '',
  `rounds' ratios: ${ratios.map((r) => r.toFixed(3)).join(' ')}`,
];
console.log(lines.join('\n'));
if (save) {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'results');
  const stamp = new Date().toISOString().replace(/[:]/g, '').replace(/\..*/, 'Z');
  // The contenders in the name too: one row is often paired with several.
  const slug = libs.map((l) => l.replace(/ → /g, '-to-').replace(/[^\w.-]+/g, '')).join('-vs-');
  const file = path.join(dir, `${stamp}-paired-${transport}-${kind}-${slug}.md`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  console.log(`\nwritten: bench/results/${path.basename(file)}`);
}
