// Sequential small calls over the Chromium rows, timed in blocks of 10:
// performance.now() is coarsened to 5 µs in a cross-origin isolated page
// (bench/README.md, "What is missing" 4), so the p50 of 10-call blocks (÷ 10)
// resolves 0.5 µs where the bench's per-call p50 resolves 5. Contenders
// alternate; 4 repetitions (--reps) of 20,000 calls each (2,000 on the
// cross-site iframe) after 3,000 to warm up. Chromium runs without a
// debugging connection unless --devtools (open.mjs says what that changes).
//   node bench/browser/blocks.mjs [contender,...] [--transport messagechannel,worker,iframe,iframe-cross]
//        [--reps 4] [--devtools]
//   (defaults: weft,weft (pack:false),json-rpc-2.0 on the MessageChannel)
import { openBenchPage } from './open.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i < 0 ? dflt : args.splice(i, 2)[1];
};
const transports = opt('--transport', 'messagechannel').split(',');
const reps = Number(opt('--reps', '4'));
const di = args.indexOf('--devtools');
const devtools = di >= 0 && args.splice(di, 1).length > 0;
const libs = (args[0] ?? 'weft,weft (pack:false),json-rpc-2.0').split(',');

const { call, close } = await openBenchPage('blocks', { devtools });
try {
  for (const t of transports) {
    const got = await call('benchBlocksAlternating', t, libs, reps);
    for (const [lib, v] of Object.entries(got)) {
      const s = [...v].sort((a, b) => a - b);
      const median = s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
      console.log(`${t.padEnd(15)} ${lib.padEnd(20)} p50 of 10-call blocks: median ${median.toFixed(2)} µs (runs: ${v.map((x) => x.toFixed(2)).join(' ')})`);
    }
  }
} finally {
  await close();
}
