// Sequential small calls over the Chromium rows, timed in blocks of 10:
// performance.now() is coarsened to 5 µs in a cross-origin isolated page
// (bench/README.md, "What is missing" 4), so the p50 of 10-call blocks (÷ 10)
// resolves 0.5 µs where the bench's per-call p50 resolves 5. Contenders
// alternate; 4 repetitions of 20,000 calls each (2,000 on the cross-site
// iframe) after 3,000 to warm up.
//   node bench/browser/blocks.mjs [contender,...] [--transport messagechannel,worker,iframe,iframe-cross]
//   (defaults: weft,weft (pack:false),json-rpc-2.0 on the MessageChannel)
import { openBenchPage } from './open.mjs';

const args = process.argv.slice(2);
const ti = args.indexOf('--transport');
const transports = (ti >= 0 ? args.splice(ti, 2)[1] : 'messagechannel').split(',');
const libs = (args[0] ?? 'weft,weft (pack:false),json-rpc-2.0').split(',');
const { page, close } = await openBenchPage('blocks');
try {
  for (const t of transports) {
    const n = t === 'iframe-cross' ? 2000 : 20000;
    const got = Object.fromEntries(libs.map((l) => [l, []]));
    for (let rep = 0; rep < 4; rep++) {
      for (const lib of rep % 2 ? [...libs].reverse() : libs) {
        got[lib].push(await page.evaluate(([t, l, n]) => window.benchBlocks(t, l, n / 10, 10), [t, lib, n]));
      }
    }
    for (const [lib, v] of Object.entries(got)) {
      const s = [...v].sort((a, b) => a - b);
      console.log(`${t.padEnd(15)} ${lib.padEnd(20)} p50 of 10-call blocks: median ${((s[1] + s[2]) / 2).toFixed(2)} µs (runs: ${v.map((x) => x.toFixed(2)).join(' ')})`);
    }
  }
} finally {
  await close();
}
