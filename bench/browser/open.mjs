// The bench's page in headless Chromium, for the tools that drive it
// (rows.mjs, blocks.mjs, server-cost.mjs): { call(name, ...args), version,
// isolated, crossUrl, page, browser, close() }. call runs
// window[name](...args) in the page and resolves to its (JSON) result;
// crossUrl is the cross-site frame's origin. The page is served by
// server.mjs, cross-origin isolated.
//
// Two ways to drive it:
//   devtools: false  Chromium is started without a debugging connection and
//                    the page takes its calls from the bench server
//                    (?driver=http). This is what a user's browser runs.
//   devtools: true   through Playwright, over the DevTools protocol (`page`
//                    and `browser` are Playwright's, for what only CDP can
//                    tell). With an inspector attached, Chromium's
//                    window.postMessage records where it was called from,
//                    which every message of the iframe rows pays for
//                    (bench/README.md, "The Chromium rows without DevTools").
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.mjs';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// WEFT_CHROMIUM_ARGS: more flags for an experiment, space-separated (e.g.
// '--js-flags=--perf-prof' to profile the page with perf: bench/README.md,
// "Where a cold message's time goes"); Chromium's own output is then shown.
// The page gets gc() (--expose-gc) unless `gc` is false (run.mjs --no-gc):
// lib/measure.mjs collects the heap before each contender; V8 flags given
// there join it (one --js-flags is read).
const EXTRA = (process.env.WEFT_CHROMIUM_ARGS ?? '').split(/\s+/).filter(Boolean);
const chromiumArgs = (gc) => {
  const js = [...(gc ? ['--expose-gc'] : []), ...EXTRA.filter((a) => a.startsWith('--js-flags=')).map((a) => a.slice('--js-flags='.length))];
  return ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', ...(js.length ? [`--js-flags=${js.join(' ')}`] : []),
    ...EXTRA.filter((a) => !a.startsWith('--js-flags='))];
};

export async function openBenchPage(tag, { devtools = false, gc = true } = {}) {
  const ARGS = chromiumArgs(gc);
  const server = await startBenchServer({ control: !devtools });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `weft-bench-${tag}-`));
  const cleanup = async () => {
    await server.close();
    // Chromium's helper processes may still be writing the profile after the
    // browser has exited. A profile left behind in the temp folder must not
    // cost the run its results, which are written after this.
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (e) {
      console.warn(`bench: could not remove the Chromium profile ${dir} (${e.code ?? e.message}); remove it by hand`);
    }
  };
  const url = (extra) => `${server.url}/bench/browser/page.html?frame=${encodeURIComponent(server.crossUrl)}${extra}`;
  try {
    const opened = devtools ? await withPlaywright(ARGS, dir, url(''), cleanup) : await withoutDevtools(ARGS, dir, url('&driver=http'), server, cleanup);
    return { ...opened, crossUrl: server.crossUrl };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

async function withPlaywright(ARGS, dir, url, cleanup) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, timeout: 30000, args: ARGS });
  try {
    const page = browser.pages()[0] ?? await browser.newPage();
    page.on('pageerror', (e) => console.log('page error:', e.message));
    await page.goto(url, { waitUntil: 'load', timeout: 15000 });
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 15000 });
    return {
      page, browser,
      version: browser.browser()?.version?.() ?? '?',
      isolated: await page.evaluate(() => window.benchIsolated),
      call: (name, ...args) => page.evaluate(([n, a]) => window[n](...a), [name, args]),
      close: async () => { try { await browser.close(); } finally { await cleanup(); } },
    };
  } catch (e) {
    await browser.close().catch(() => {});
    throw e;
  }
}

async function withoutDevtools(ARGS, dir, url, server, cleanup) {
  const chromium = spawn(CHROMIUM, [...ARGS, `--user-data-dir=${dir}`, url], { stdio: EXTRA.length ? 'inherit' : 'ignore' });
  const exited = new Promise((r) => {
    chromium.once('exit', r);
    chromium.once('error', (e) => r(e.message));  // not started (e.g. no such file)
  });
  const gone = exited.then((code) => { throw new Error(`Chromium exited (${code})`); });
  gone.catch(() => {});
  const close = async () => {
    chromium.kill();
    await exited;
    await cleanup();
  };
  try {
    // The first call answers once the page is loaded and polling.
    let timer;
    const late = new Promise((_, j) => { timer = setTimeout(() => j(new Error('the bench page did not start (15 s)')), 15000); });
    const { isolated } = await Promise.race([server.call('benchInfo'), gone, late]).finally(() => clearTimeout(timer));
    const version = fs.existsSync(CHROMIUM) ? await chromiumVersion() : '?';
    return {
      page: null, browser: null, version, isolated,
      call: (name, ...args) => Promise.race([server.call(name, ...args), gone]),
      close,
    };
  } catch (e) {
    chromium.kill();
    await exited;
    throw e;
  }
}

function chromiumVersion() {
  return new Promise((resolve) => {
    let out = '';
    const p = spawn(CHROMIUM, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    p.stdout.on('data', (d) => { out += d; });
    p.on('exit', () => resolve(out.match(/[\d.]+/)?.[0] ?? '?'));
    p.on('error', () => resolve('?'));
  });
}
