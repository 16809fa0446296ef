// Browser tests: the web demo in a real Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core), exercising every transport through the page's
// own UI, including Chromium's WebSocket to the native `weft serve --ws`
// (build/native-host/weft, or $WEFT_BIN). Run: node --test --test-concurrency=1 tests/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { startServer } from '../../web-demo/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = path.join(ROOT, 'build', 'browser-artifacts');
const T = { timeout: 30000 };
const BOUNDARIES = ['iframe', 'worker', 'channel', 'native'];

let server, browser, page;
const consoleErrors = [];

const tid = (id) => `[data-testid="${id}"]`;
async function click(id) { await page.click(tid(id), { timeout: 5000 }); }
/** Waits until the element's data-state is one of `states`; returns {state, text}. */
async function settled(id, states = ['ok', 'error', 'cancelled', 'closed', 'unexpected'], timeout = 8000) {
  await page.waitForFunction(([sel, ss]) => {
    const el = document.querySelector(sel);
    return el && ss.includes(el.dataset.state);
  }, [tid(id), states], { timeout });
  return page.$eval(tid(id), (el) => ({ state: el.dataset.state, text: el.textContent, data: { ...el.dataset } }));
}
async function resetOut(id) {
  await page.$eval(tid(id), (el) => { el.dataset.state = 'idle'; el.textContent = ''; });
}
async function waitReady(b, timeout = 10000) {
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === 'ready', tid(`${b}-status`), { timeout });
}

before(async () => {
  assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'weft.wasm')), 'dist/weft.wasm missing: run bash scripts/build-wasm.sh');
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer({ port: 0 });
  assert.ok(server.origins.native, `the native server did not start: ${server.origins.nativeWhy}`);
  browser = await launchChromium({ viewport: { width: 1440, height: 1000 } });
  page = browser.pages()[0] ?? await browser.newPage();
  page.setDefaultTimeout(10000);
  const track = (where) => (msg) => {
    if (msg.type() === 'error') consoleErrors.push(`${where}: ${msg.text()}`);
  };
  page.on('console', track('page'));
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  page.on('worker', (w) => w.on('console', track('worker')));
  await page.goto(server.url, { waitUntil: 'load', timeout: 15000 });
  for (const b of BOUNDARIES) await waitReady(b);
}, { timeout: 60000 });

after(async () => {
  await browser?.closeAll();
  await server?.close();
});

test('the page loads the WebAssembly core and every boundary reports ready', T, async () => {
  const core = await page.$eval(tid('core-status'), (el) => el.dataset.state);
  assert.equal(core, 'ready');
  for (const b of BOUNDARIES) {
    assert.equal(await page.$eval(tid(`${b}-status`), (el) => el.dataset.state), 'ready', b);
  }
  // The iframe really is on a second origin.
  const frame = page.frames().find((f) => f.url().includes('/web-demo/frame.html'));
  assert.ok(frame, 'iframe present');
  assert.notEqual(new URL(frame.url()).origin, new URL(page.url()).origin);
});

for (const b of BOUNDARIES) {
  test(`${b}: request, notification and batch round-trip through the UI`, T, async () => {
    await page.fill(tid(`${b}-call-input`), `hi ${b}`);
    await click(`${b}-call`);
    const call = await settled(`${b}-out-call`);
    assert.equal(call.state, 'ok', call.text);
    assert.match(call.text, new RegExp(`echo → \\{"text":"hi ${b}"\\}`));

    await click(`${b}-notify`);
    const note = await settled(`${b}-out-notify`);
    assert.equal(note.state, 'ok', note.text);
    assert.match(note.text, new RegExp(`delivered · ${b} counted note #\\d+`));

    await click(`${b}-batch`);
    const batch = await settled(`${b}-out-batch`);
    assert.equal(batch.state, 'ok', batch.text);
    assert.match(batch.text, /add → 5 · echo → \["batched"\] · note → notified · fail → ✕ 4000/);

    await click(`${b}-fail`);
    const fail = await settled(`${b}-out-fail`);
    assert.equal(fail.state, 'error');
    assert.match(fail.text, /RPCError 4000: Deliberate failure/);

    // The log shows both directions for this boundary, with the failure highlighted.
    const counts = await page.$$eval(`#log .entry[data-boundary="${b}"]`, (els) => ({
      out: els.filter((e) => e.dataset.dir === 'out').length,
      in: els.filter((e) => e.dataset.dir === 'in').length,
      errors: els.filter((e) => e.classList.contains('is-error')).length,
    }));
    assert.ok(counts.out >= 4 && counts.in >= 4, JSON.stringify(counts));
    assert.ok(counts.errors >= 2, JSON.stringify(counts));
  });

  test(`${b}: cancelling a slow call rejects it at once and the handler sees the abort`, T, async () => {
    await resetOut(`${b}-out-abort`);
    await click(`${b}-slow`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === 'pending', tid(`${b}-out-slow`));
    await page.waitForTimeout(150);
    const t0 = Date.now();
    await click(`${b}-cancel`);
    const slow = await settled(`${b}-out-slow`, ['ok', 'error', 'cancelled', 'closed'], 2000);
    assert.ok(Date.now() - t0 < 1500, 'rejected promptly');
    assert.equal(slow.state, 'cancelled', slow.text);
    assert.match(slow.text, /-32800/);
    const abort = await settled(`${b}-out-abort`, ['ok'], 3000);
    assert.match(abort.text, /handler saw the abort/);
  });
}

test('iframe: messages from a third origin are ignored (hostile frame)', T, async () => {
  await click('iframe-stats');
  const before = await settled('iframe-out-stats');
  assert.equal(before.state, 'ok');
  const rejectedBefore = Number(await page.textContent(tid('rejected-count')));
  const noteBefore = await page.textContent(tid('iframe-out-notify'));
  await resetOut('iframe-out-stats');

  await click('hostile');
  // 7 forged messages to the page + 1 "done" message; 7 more to the iframe.
  await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).textContent) >= n,
    [tid('rejected-count'), rejectedBefore + 8]);
  const afterStats = await settled('iframe-out-stats');   // refreshed by the page when the hostile frame is done
  assert.equal(afterStats.state, 'ok');
  assert.ok(Number(afterStats.data.rejected) >= Number(before.data.rejected ?? 0) + 7, JSON.stringify(afterStats.data));
  // No handler ran for the forged requests / notification: only our own `stats` call was added.
  assert.equal(Number(afterStats.data.handled), Number(before.data.handled), 'no forged request was handled');
  assert.equal(Number(afterStats.data.notes), Number(before.data.notes), 'no forged notification was handled');
  // A forged note.ack did not reach the page's endpoint either.
  assert.equal(await page.textContent(tid('iframe-out-notify')), noteBefore);
  assert.equal(await page.$eval(tid('iframe-status'), (el) => el.dataset.state), 'ready');
  const rejectedLog = await page.$$eval('#log .entry.dir-rejected', (els) => els.map((e) => e.textContent));
  assert.ok(rejectedLog.some((t) => /rejected source http:\/\/127\.0\.0\.1/.test(t)), 'log shows the rejection');
});

test('iframe: the same frame navigated to a disallowed origin fails the origin check', T, async () => {
  const rejectedBefore = Number(await page.textContent(tid('rejected-count')));
  await click('iframe-swap');
  await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).textContent) >= n,
    [tid('rejected-count'), rejectedBefore + 8]);
  // Its forged `boundary.ready` came from the right window but the wrong origin.
  assert.equal(await page.$eval(tid('iframe-status'), (el) => el.dataset.state), 'hostile');
  const log = await page.$$eval('#log .entry.dir-rejected', (els) => els.map((e) => e.textContent));
  assert.ok(log.some((t) => t.includes('rejected origin')), 'log shows "rejected origin"');
  // Reload restores the real iframe.
  await click('iframe-reload');
  await waitReady('iframe');
});

test('iframe: a reloaded iframe is survived; calls after the reload work', T, async () => {
  await resetOut('iframe-out-call');
  await click('iframe-reload');
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state !== 'ready', tid('iframe-status'), { timeout: 2000 }).catch(() => {});
  await waitReady('iframe');
  await page.fill(tid('iframe-call-input'), 'after reload');
  await click('iframe-call');
  const call = await settled('iframe-out-call');
  assert.equal(call.state, 'ok', call.text);
  assert.match(call.text, /after reload/);
  await click('iframe-stats');
  const s = await settled('iframe-out-stats');
  assert.equal(s.state, 'ok');
  assert.ok(Number(s.data.handled) <= 2, 'a fresh iframe document answered: ' + JSON.stringify(s.data));
});

test('worker: terminating it fails a pending call at once with a clear error', T, async () => {
  await click('worker-slow');
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === 'pending', tid('worker-out-slow'));
  const t0 = Date.now();
  await click('worker-terminate');
  const slow = await settled('worker-out-slow', ['ok', 'error', 'cancelled', 'closed'], 2000);
  assert.ok(Date.now() - t0 < 1500, 'failed promptly, no hang');
  assert.equal(slow.state, 'closed', slow.text);
  assert.match(slow.text, /-32002 .*worker was terminated/);
  assert.equal(await page.$eval(tid('worker-status'), (el) => el.dataset.state), 'terminated');
  // Further calls fail at once too.
  await resetOut('worker-out-call');
  await click('worker-call');
  const call = await settled('worker-out-call', ['ok', 'error'], 2000);
  assert.equal(call.state, 'error');
  assert.match(call.text, /-32002/);
  // Restart brings it back.
  await click('worker-restart');
  await waitReady('worker');
  await resetOut('worker-out-call');
  await click('worker-call');
  assert.equal((await settled('worker-out-call')).state, 'ok');
});

test('native: the card talks to the weft process over a WebSocket; closing it fails a pending call at once, reconnecting works', T, async () => {
  await click('native-stats');
  const ping = await settled('native-out-stats');
  assert.equal(ping.state, 'ok', ping.text);
  assert.match(ping.text, /rpc\.ping: ok · weft \d+\.\d+\.\d+ · \d+ connection/);
  assert.match(await page.evaluate(() => import('/web-demo/config.js').then((m) => m.default.native)), /^ws:\/\/127\.0\.0\.1:\d+$/);
  await resetOut('native-out-slow');
  await click('native-slow');
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === 'pending', tid('native-out-slow'));
  const t0 = Date.now();
  await click('native-disconnect');
  const slow = await settled('native-out-slow', ['ok', 'error', 'cancelled', 'closed'], 2000);
  assert.ok(Date.now() - t0 < 1500, 'failed promptly, no hang');
  assert.equal(slow.state, 'closed', slow.text);
  assert.match(slow.text, /-32002 .*the WebSocket closed/);
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === 'closed', tid('native-status'));
  await click('native-reconnect');
  await waitReady('native');
  await resetOut('native-out-call');
  await click('native-call');
  assert.equal((await settled('native-out-call')).state, 'ok');
});

test('latency burst: 1,000 calls per boundary with p50, p99 and calls/s', { timeout: 60000 }, async () => {
  await click('bench-run');
  for (const b of BOUNDARIES) {
    await page.waitForFunction((sel) => ['done', 'error'].includes(document.querySelector(sel)?.dataset.state),
      tid(`bench-result-${b}`), { timeout: 40000 });
    const row = await page.$eval(tid(`bench-result-${b}`), (tr) => ({
      state: tr.dataset.state,
      p50: tr.querySelector('[data-k="p50"]').textContent,
      p99: tr.querySelector('[data-k="p99"]').textContent,
      rate: tr.querySelector('[data-k="rate"]').textContent,
    }));
    assert.equal(row.state, 'done', JSON.stringify(row));
    assert.match(row.p50, /ms$/);
    assert.match(row.p99, /ms$/);
    assert.ok(Number(row.rate.replace(/,/g, '')) > 0, row.rate);
  }
  const bars = await page.$$eval('#bench-chart rect.c-p50', (els) => els.length);
  assert.equal(bars, BOUNDARIES.length);
});

test('screenshot of the demo is saved, and the console has no errors', T, async () => {
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = path.join(ARTIFACTS, 'demo.png');
  await page.screenshot({ path: file, fullPage: true });
  assert.ok(fs.statSync(file).size > 10000);
  if (process.env.WEFT_UPDATE_DOCS_SCREENSHOT === '1') fs.copyFileSync(file, path.join(ROOT, 'docs', 'demo.png'));
  assert.deepEqual(consoleErrors, []);
});
