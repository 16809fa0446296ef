// Chromium rows (headless; without a debugging connection unless
// cfg.devtools, open.mjs): MessageChannel, dedicated
// Worker, same-origin iframe and cross-site iframe, each contender paired with
// the raw postMessage floor in the same repetition, order alternating. Then
// weft's wasm heap over `cfg.heapCalls` small calls in the page.
import fs from 'node:fs';
import { CHROMIUM, openBenchPage } from './open.mjs';
import { alternate, selected, selectedTransports } from '../lib/stats.mjs';

export const BROWSER_TRANSPORTS = {
  'chromium-messagechannel': { label: 'Chromium MessageChannel', t: 'messagechannel' },
  'chromium-worker': { label: 'Chromium dedicated Worker', t: 'worker' },
  'chromium-iframe': { label: 'Chromium iframe (same origin)', t: 'iframe' },
  'chromium-iframe-cross': { label: 'Chromium iframe (cross-site)', t: 'iframe-cross' },
};
const LIBS = ['raw', 'weft', 'weft (pack:false)', 'weft → json-rpc-2.0', 'json-rpc-2.0 → weft', 'json-rpc-2.0', 'comlink'];

export async function runBrowser(cfg, log) {
  const notes = [];
  if (!fs.existsSync(CHROMIUM)) {
    notes.push(`Chromium rows skipped: ${CHROMIUM} missing (set CHROMIUM_PATH)`);
    return { results: {}, notes };
  }
  const devtools = cfg.devtools === true;
  const results = {};
  let heap = null;
  const { call, page, browser, version, isolated, crossUrl, close } = await openBenchPage('chromium', { devtools, gc: cfg.gc !== false });
  try {
    notes.push(`Chromium ${version} (headless, ${CHROMIUM}), ${devtools
      ? 'driven through DevTools (Playwright, --devtools): window.postMessage then records its caller for the inspector, which the iframe rows pay for'
      : 'started without a debugging connection, as a user\'s browser runs (the page takes its calls from the bench server)'}; ` +
      `page crossOriginIsolated=${isolated}, so performance.now() resolution is ${isolated ? '5 µs' : '100 µs'}: browser samples are multiples of it, and each p50/p99 is interpolated within its step (bench/README.md, "What is measured")`);
    let oopif = null;
    const libs = selected(LIBS, cfg.contenders);
    for (const [key, tr] of selectedTransports(BROWSER_TRANSPORTS, cfg.transports)) {
      results[key] = {};
      for (const lib of libs) results[key][lib] = { small: [], large: [] };
      for (let rep = 0; rep < cfg.reps; rep++) {
        for (const lib of alternate(libs, rep)) {
          if (tr.t === 'iframe-cross' && oopif === null && devtools) oopif = await checkOutOfProcess(browser, page, crossUrl);
          const r = await call('benchOne', tr.t, lib, { small: cfg.small, large: cfg.large });
          for (const kind of ['small', 'large']) {
            results[key][lib][kind].push(r[kind]);
            log(`${tr.label} rep ${rep + 1} ${lib} ${kind}: p50 ${r[kind].p50.toFixed(1)} µs, p99 ${r[kind].p99.toFixed(1)} µs, ${Math.round(r[kind].rate)} calls/s`);
          }
        }
      }
    }
    notes.push('Chromium cross-site iframe: the frame is served from another host (another site; ' +
      'with COEP require-corp + CORP cross-origin, and the page stays cross-origin isolated); ' +
      'every contender posts with that explicit targetOrigin and checks the sender\'s origin; ' +
      `the frame ${oopif === true ? 'runs in its own renderer process (out-of-process iframe, per CDP)' : oopif === false ? 'was NOT reported as an out-of-process iframe by CDP' : devtools ? 'process could not be checked (CDP)' : 'process is not checked without DevTools (--devtools asks CDP)'}`);
    if (!cfg.transports) {  // a --transports run is a latency/throughput check only
      const t0 = Date.now();
      heap = await call('benchHeap', cfg.heapCalls);
      log(`Chromium weft wasm heap: ${heap.before} B before, ${heap.mid} B halfway, ${heap.after} B after ${heap.calls} calls (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
  } finally {
    await close();
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
