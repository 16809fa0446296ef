// weft-rpc as a web developer gets it (issue 15): the npm pack tarball
// installed into a consumer project (tests/bundle/), bundled by esbuild and by
// Vite, and imported without a bundler by a plain <script type="module"> —
// each loaded in Debian's Chromium, in the page and in a module worker, each
// making real calls (tests/bundle/consumer/src/scenario.js).
// Run: node --test --test-concurrency=1 tests/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeConsumer, buildEsbuildBrowser, buildVite, startViteDev, timings } from '../bundle/prepare.mjs';
import { serveFolder } from '../bundle/server.mjs';
import { launchChromium } from './chromium.mjs';

const T = { timeout: 30000 };

let consumer, server, browser;

before(async () => {
  consumer = await makeConsumer();
  await buildEsbuildBrowser(consumer.dir);
  await buildEsbuildBrowser(consumer.dir, { copyWasm: false, outName: 'esbuild-nowasm' });
  await buildVite(consumer.dir);
  server = await serveFolder(consumer.dir);
  browser = await launchChromium();
  console.log('# prepare (ms):', JSON.stringify(timings));
}, { timeout: 60000 });

after(async () => {
  await browser?.closeAll();
  await server?.close();
  consumer?.cleanup();
});

/**
 * Opens `folder`/index.html (on `base`, default the static server); resolves
 * with its __weftResult, console errors and the requests the server saw.
 */
async function open(folder, base = server.url) {
  const page = await browser.newPage();
  const errors = [];
  const track = (where) => (msg) => { if (msg.type() === 'error') errors.push(`${where}: ${msg.text()}`); };
  page.on('console', track('page'));
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('worker', (w) => w.on('console', track('worker')));
  const responses = [];  // as the browser saw them (any server)
  page.on('response', (r) => responses.push({ path: new URL(r.url()).pathname, status: r.status() }));
  const from = server.log.length;
  try {
    await page.goto(folder ? `${base}/${folder}/` : `${base}/`, { waitUntil: 'load', timeout: 10000 });
    await page.waitForFunction(() => globalThis.__weftResult, null, { timeout: 15000 });
    const result = await page.evaluate(() => globalThis.__weftResult);
    const requests = server.log.slice(from);
    return { result, errors, wasm: requests.filter((r) => r.path.endsWith('.wasm')), requests, responses };
  } finally {
    await page.close();
  }
}

function assertCalls({ result, errors }, what) {
  assert.equal(result.error, null, `${what}: ${result.error}`);
  assert.deepEqual(result.page, { sum: 42, version: result.page.version }, `${what}: the page's call`);
  assert.match(result.page.version, /^\d+\.\d+\.\d+/, `${what}: coreVersion()`);
  assert.deepEqual(result.worker, result.page, `${what}: the module worker's call`);
  assert.equal(result.cross, 23, `${what}: page → worker`);
  assert.deepEqual(errors, [], `${what}: console errors`);
}

test('esbuild bundle (format esm, weft.wasm copied next to it): page and module worker call', T, async () => {
  const r = await open('esbuild-out');
  assertCalls(r, 'esbuild');
  // Fetched from next to the bundle, once per realm, with no failed try first.
  assert.deepEqual(r.wasm, [{ path: '/esbuild-out/weft.wasm', status: 200 }, { path: '/esbuild-out/weft.wasm', status: 200 }]);
});

test('Vite build: the wasm is emitted as an asset and found by page and module worker', T, async () => {
  const assets = fs.readdirSync(path.join(consumer.dir, 'vite-out/assets'));
  const wasm = assets.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `one wasm asset (${assets.join(', ')})`);
  const r = await open('vite-out');
  assertCalls(r, 'vite');
  assert.deepEqual(r.wasm.map((w) => w.path), [`/vite-out/assets/${wasm[0]}`, `/vite-out/assets/${wasm[0]}`]);
  assert.ok(r.wasm.every((w) => w.status === 200));
});

test('no bundler: <script type="module"> importing node_modules/weft-rpc/js/index.js, and a module worker', T, async () => {
  const r = await open('plain');
  assertCalls(r, 'plain');
  assert.deepEqual(r.wasm, [
    { path: '/node_modules/weft-rpc/dist/weft.wasm', status: 200 },
    { path: '/node_modules/weft-rpc/dist/weft.wasm', status: 200 },
  ]);
  assert.ok(r.requests.every((q) => q.status === 200), JSON.stringify(r.requests.filter((q) => q.status !== 200)));
});

test('esbuild bundle without weft.wasm: the call rejects naming the URLs tried and what to do', T, async () => {
  const { result, wasm } = await open('esbuild-nowasm');
  assert.match(result.error ?? '', /-32002|failed to load/);
  assert.match(result.error, /weft\.wasm not found \(tried http:\/\/127\.0\.0\.1:\d+\/esbuild-nowasm\/weft\.wasm: HTTP 404; http:\/\/127\.0\.0\.1:\d+\/dist\/weft\.wasm: HTTP 404\)/);
  assert.match(result.error, /copied next to it/);
  // The page tried both URLs once (its error names them, above); the worker,
  // started with the page, may have tried none, one or both of its own by the
  // time the page's call has failed.
  assert.ok(wasm.length >= 2 && wasm.length <= 4, `${wasm.length} wasm requests`);
  assert.ok(wasm.every((w) => w.status === 404), JSON.stringify(wasm));
});

test('Vite dev server (dependency pre-bundling on): page and module worker call', T, async () => {
  const dev = await startViteDev(consumer.dir);
  try {
    const r = await open('', dev.url);
    assertCalls(r, 'vite dev');
    assert.ok(r.responses.some((q) => q.path.endsWith('/.vite/deps/weft-rpc.js')), 'weft-rpc was pre-bundled');
    assert.deepEqual(r.responses.filter((q) => q.path.endsWith('.wasm')),
      [{ path: '/node_modules/weft-rpc/dist/weft.wasm', status: 200 }, { path: '/node_modules/weft-rpc/dist/weft.wasm', status: 200 }],
      'weft.wasm fetched once per realm');
  } finally {
    await dev.close();
  }
});
