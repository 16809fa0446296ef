// Chromium rows (headless, via playwright-core): MessageChannel, dedicated
// Worker, same-origin iframe and cross-site iframe, each contender paired with
// the raw postMessage floor in the same repetition, order alternating. Then
// weft's wasm heap over `cfg.heapCalls` small calls in the page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.mjs';
import { alternate, selected } from '../lib/stats.mjs';

export const BROWSER_TRANSPORTS = {
  'chromium-messagechannel': { label: 'Chromium MessageChannel', t: 'messagechannel' },
  'chromium-worker': { label: 'Chromium dedicated Worker', t: 'worker' },
  'chromium-iframe': { label: 'Chromium iframe (same origin)', t: 'iframe' },
  'chromium-iframe-cross': { label: 'Chromium iframe (cross-site)', t: 'iframe-cross' },
};
const LIBS = ['raw', 'weft', 'weft (pack:false)', 'weft → json-rpc-2.0', 'json-rpc-2.0 → weft', 'json-rpc-2.0', 'comlink'];
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export async function runBrowser(cfg, log) {
  const notes = [];
  if (!fs.existsSync(CHROMIUM)) {
    notes.push(`Chromium rows skipped: ${CHROMIUM} missing (set CHROMIUM_PATH)`);
    return { results: {}, notes };
  }
  const { chromium } = await import('playwright-core');
  const server = await startBenchServer();
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-bench-chromium-'));
  let browser;
  const results = {};
  let heap = null;
  try {
    browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      timeout: 30000,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
    const page = browser.pages()[0] ?? await browser.newPage();
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    await page.goto(`${server.url}/bench/browser/page.html?frame=${encodeURIComponent(server.crossUrl)}`, { waitUntil: 'load', timeout: 15000 });
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 15000 });
    const version = browser.browser()?.version?.() ?? '?';
    const isolated = await page.evaluate(() => window.benchIsolated);
    notes.push(`Chromium ${version} (headless, ${CHROMIUM}); page crossOriginIsolated=${isolated}, so performance.now() resolution is ${isolated ? '5 µs' : '100 µs'}: browser p50/p99 are quantized to it`);
    let oopif = null;
    const libs = selected(LIBS, cfg.contenders);
    for (const [key, tr] of Object.entries(BROWSER_TRANSPORTS)) {
      results[key] = {};
      for (const lib of libs) results[key][lib] = { small: [], large: [] };
      for (let rep = 0; rep < cfg.reps; rep++) {
        for (const lib of alternate(libs, rep)) {
          if (tr.t === 'iframe-cross' && oopif === null) oopif = await checkOutOfProcess(browser, page, server.crossUrl);
          const r = await page.evaluate(([t, l, c]) => window.benchOne(t, l, c), [tr.t, lib, { small: cfg.small, large: cfg.large }]);
          for (const kind of ['small', 'large']) {
            results[key][lib][kind].push(r[kind]);
            log(`${tr.label} rep ${rep + 1} ${lib} ${kind}: p50 ${r[kind].p50.toFixed(1)} µs, p99 ${r[kind].p99.toFixed(1)} µs, ${Math.round(r[kind].rate)} calls/s`);
          }
        }
      }
    }
    notes.push(`Chromium cross-site iframe: page ${server.url}, frame ${server.crossUrl} (another host, so another site; ` +
      `the frame is served with COEP require-corp + CORP cross-origin and the page stays cross-origin isolated); ` +
      `every contender posts with that explicit targetOrigin and checks the sender's origin; ` +
      `the frame ${oopif === true ? 'runs in its own renderer process (out-of-process iframe, per CDP)' : oopif === false ? 'was NOT reported as an out-of-process iframe by CDP' : 'process could not be checked (CDP)'}`);
    const t0 = Date.now();
    heap = await page.evaluate((n) => window.benchHeap(n), cfg.heapCalls);
    log(`Chromium weft wasm heap: ${heap.before} B before, ${heap.mid} B halfway, ${heap.after} B after ${heap.calls} calls (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  } finally {
    try { await browser?.close(); } catch { /* gone */ }
    await server.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  return { results, notes, heap };
}

/** Opens one cross-site frame and asks CDP whether it is an out-of-process iframe target. */
async function checkOutOfProcess(browser, page, crossUrl) {
  let cdp;
  try {
    cdp = await browser.newCDPSession(page);
    await page.evaluate(() => {
      const f = document.createElement('iframe');
      f.id = 'oopif-probe';
      document.body.append(f);
      return new Promise((resolve) => { f.onload = resolve; f.src = new URL(`/bench/browser/frame.html?lib=raw&parent=${encodeURIComponent(location.origin)}`, new URL(window.benchCrossOrigin)).href; });
    });
    const { targetInfos } = await cdp.send('Target.getTargets');
    return targetInfos.some((t) => t.type === 'iframe' && t.url.startsWith(crossUrl));
  } catch {
    return undefined;
  } finally {
    await page.evaluate(() => document.getElementById('oopif-probe')?.remove()).catch(() => {});
    await cdp?.detach().catch(() => {});
  }
}
