// The targets table of a run again, from the figures it kept:
//   node bench/targets.mjs bench/results/<run>.json
import fs from 'node:fs';
import { targetLines } from './lib/targets.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/targets.mjs bench/results/<run>.json');
  process.exit(2);
}
const { labels, results } = JSON.parse(fs.readFileSync(file, 'utf8'));
console.log(targetLines(results, labels).join('\n'));
