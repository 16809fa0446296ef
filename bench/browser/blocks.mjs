// Sequential small calls over a Chromium MessageChannel, timed in blocks of
// 10: performance.now() is coarsened to 5 µs in a cross-origin isolated page
// (bench/README.md, "What is missing" 4), so the p50 of 10-call blocks (÷ 10)
// resolves 0.5 µs where the bench's per-call p50 resolves 5. Contenders
// alternate; 4 repetitions of 20,000 calls each after 3,000 to warm up.
//   node bench/browser/blocks.mjs [contender,...]   (default weft,weft (pack:false),json-rpc-2.0)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.mjs';

const libs = (process.argv[2] ?? 'weft,weft (pack:false),json-rpc-2.0').split(',');
const { chromium } = await import('playwright-core');
const server = await startBenchServer();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-bench-blocks-'));
const browser = await chromium.launchPersistentContext(dir, {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
});
try {
  const page = browser.pages()[0] ?? await browser.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(`${server.url}/bench/browser/page.html`, { waitUntil: 'load' });
  await page.waitForFunction(() => window.benchReady === true);
  const run = (lib) => page.evaluate(async (lib) => {
    const { serve, connect, portLink } = await import('/bench/browser/contenders.mjs');
    const { port1, port2 } = new MessageChannel();
    const stop = await serve(lib, portLink(port2));
    const c = await connect(lib, portLink(port1), 'x');
    try {
      for (let i = 0; i < 3000; i++) await c.small();
      const N = 20000, B = 10;
      const blocks = new Float64Array(N / B);
      for (let b = 0; b < N / B; b++) {
        const s = performance.now();
        for (let i = 0; i < B; i++) await c.small();
        blocks[b] = (performance.now() - s) / B;
      }
      blocks.sort();
      return blocks[blocks.length >> 1] * 1000;
    } finally { c.close(); stop(); port1.close(); port2.close(); }
  }, lib);
  const got = Object.fromEntries(libs.map((l) => [l, []]));
  for (let rep = 0; rep < 4; rep++) {
    for (const lib of rep % 2 ? [...libs].reverse() : libs) got[lib].push(await run(lib));
  }
  for (const [lib, v] of Object.entries(got)) {
    const s = [...v].sort((a, b) => a - b);
    console.log(`${lib.padEnd(20)} p50 of 10-call blocks: median ${((s[1] + s[2]) / 2).toFixed(2)} µs (runs: ${v.map((x) => x.toFixed(2)).join(' ')})`);
  }
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
