// weft-rpc as a consumer installs it (issue 15), Node side: the npm pack
// tarball installed into a temp consumer project (tests/bundle/), run by Node
// unbundled and as esbuild --platform=node bundles (esm, cjs) with weft.wasm
// next to them; the browser bundles (esbuild, Vite) build cleanly (they run
// in Chromium in tests/browser/bundle.test.mjs). Plus the publish-ready
// package.json fields and the size budget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ROOT, makeConsumer, buildEsbuildBrowser, buildEsbuildNode, buildVite, timings } from '../bundle/prepare.mjs';

const T = { timeout: 60000 };
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
let consumer;

before(async () => { consumer = await makeConsumer(); }, { timeout: 60000 });
after(() => {
  console.log('# prepare (ms):', JSON.stringify(timings));
  consumer?.cleanup();
});

/** Runs `node file` and parses the JSON line it prints. */
function runNode(file, cwd) {
  const r = spawnSync(process.execPath, [file], { cwd, encoding: 'utf8', timeout: 20000 });
  const line = r.stdout.trim().split('\n').pop();
  let out;
  try { out = JSON.parse(line); } catch { out = { unparsed: r.stdout, stderr: r.stderr }; }
  return { status: r.status, out, stderr: r.stderr };
}

// -- the installed package --------------------------------------------------------
test('the tarball installs offline and resolves through "exports" (weft-rpc, weft-rpc/weft.wasm, weft-rpc/package.json)', T, () => {
  for (const f of ['js/index.js', 'js/index.d.ts', 'js/loader.js', 'dist/weft.wasm', 'dist/weft_module.js', 'dist/weft_abi.js', 'package.json'])
    assert.ok(fs.existsSync(path.join(consumer.pkg, f)), `${f} installed`);
  const resolved = execFileSync(process.execPath, ['--input-type=module', '-e',
    "for (const s of ['weft-rpc', 'weft-rpc/weft.wasm', 'weft-rpc/package.json']) console.log(import.meta.resolve(s));"],
  { cwd: consumer.dir, encoding: 'utf8' }).trim().split('\n');
  assert.deepEqual(resolved.map((u) => path.relative(consumer.pkg, new URL(u).pathname)),
    ['js/index.js', 'dist/weft.wasm', 'package.json']);
});

test('Node, unbundled: the consumer imports weft-rpc by name and makes a call', T, () => {
  const r = runNode('src/node-app.js', consumer.dir);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.out.sum, 42, JSON.stringify(r.out));
  assert.match(r.out.version, /^\d+\.\d+\.\d+/);
});

for (const format of ['esm', 'cjs']) {
  test(`esbuild --platform=node --format=${format}: the bundle finds weft.wasm next to it`, T, async () => {
    const { file } = await buildEsbuildNode(consumer.dir, format);
    const r = runNode(file, consumer.dir);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.out.sum, 42, JSON.stringify(r.out));
  });
}

test('esbuild --platform=node without weft.wasm: the call rejects, naming what was tried and what to do', T, async () => {
  fs.rmSync(path.join(consumer.dir, 'esbuild-node-esm'), { recursive: true, force: true });
  const { file } = await buildEsbuildNode(consumer.dir, 'esm', { copyWasm: false });
  const r = runNode(file, consumer.dir);
  assert.equal(r.status, 1);
  assert.match(r.out.error, /failed to load: weft\.wasm not found \(tried file:\/\/\S+\/esbuild-node-esm\/weft\.wasm: ENOENT; file:\/\/\S+\/dist\/weft\.wasm: ENOENT\)/);
  assert.match(r.out.error, /copied next to it/);
});

test('esbuild, browser (format esm, page + module worker): bundles without errors, node:fs left unresolved', T, async () => {
  const { out, warnings } = await buildEsbuildBrowser(consumer.dir);
  assert.deepEqual(warnings.map((w) => w.text), []);
  for (const f of ['page.js', 'worker.js', 'weft.wasm', 'index.html']) assert.ok(fs.existsSync(path.join(out, f)), f);
  const js = fs.readFileSync(path.join(out, 'page.js'), 'utf8');
  assert.doesNotMatch(js, /from\s*["']node:/, 'no static node: import in a browser bundle');
});

test('Vite build (page + module worker): one weft.wasm asset, referenced by both chunks', T, async () => {
  const { out } = await buildVite(consumer.dir);
  const assets = fs.readdirSync(path.join(out, 'assets'));
  const wasm = assets.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, assets.join(', '));
  assert.equal(fs.statSync(path.join(out, 'assets', wasm[0])).size, fs.statSync(path.join(ROOT, 'dist/weft.wasm')).size);
  const chunks = assets.filter((f) => f.endsWith('.js'));
  assert.equal(chunks.length, 2, chunks.join(', '));
  for (const c of chunks) assert.ok(fs.readFileSync(path.join(out, 'assets', c), 'utf8').includes(wasm[0]), `${c} → ${wasm[0]}`);
});

// -- package.json ------------------------------------------------------------------
test('package.json is publish-ready: exports, files, sideEffects, engines, license, keywords, description', () => {
  assert.equal(pkg.name, 'weft-rpc');
  assert.equal(pkg.type, 'module');
  assert.deepEqual(pkg.exports['.'], { types: './js/index.d.ts', default: './js/index.js' });
  assert.deepEqual(Object.keys(pkg.exports['.']), ['types', 'default'], '"types" first (TypeScript takes the first match)');
  assert.equal(pkg.exports['./package.json'], './package.json');
  assert.equal(pkg.exports['./weft.wasm'], './dist/weft.wasm');
  for (const target of [pkg.main, pkg.types, ...Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)))])
    assert.ok(fs.existsSync(path.join(ROOT, target)), `${target} exists`);
  assert.deepEqual([...pkg.files].sort(), ['dist/weft.wasm', 'dist/weft_abi.js', 'dist/weft_module.js', 'js/']);
  // Only the module that starts loading the wasm has effects at import.
  assert.deepEqual(pkg.sideEffects, ['./js/module.js']);
  assert.match(fs.readFileSync(path.join(ROOT, 'js/module.js'), 'utf8'), /export const ready = loadModule\(/);
  assert.match(pkg.engines?.node ?? '', /^>=\d+/);
  assert.equal(pkg.license, 'MIT');
  assert.ok(Array.isArray(pkg.keywords) && pkg.keywords.includes('json-rpc') && pkg.keywords.length >= 5);
  assert.ok(typeof pkg.description === 'string' && pkg.description.length > 20);
  assert.equal(pkg.private, undefined, 'not private');
  for (const dep of ['dependencies', 'peerDependencies']) assert.equal(pkg[dep], undefined, `no ${dep}: the package is self-contained`);
});

test('the package ships the MIT LICENSE its package.json names', () => {
  assert.equal(pkg.license, 'MIT');
  assert.match(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'), /^MIT License/);
});

// -- size budget ---------------------------------------------------------------------
// zlib gzip level 9. The budgets are a little above the sizes of 2026-11-23
// (JS glue, 18 files, 60,596 bytes: 19,027 gzipped as one, 23,878 file by
// file; weft.wasm -O2 245,289: 94,989; weft_module.js 21,249: 6,140;
// weft_abi.js 2,792: 959).
// Growing past one is a decision: raise it here, with the reason, in the
// same commit.
// Raised for streams and progress (docs/streams.md): the credit/queue logic
// in the core and its exports took weft.wasm to 107,100 gzipped, the sink
// and the chunk iterator the glue to 22,172 (20 files); then for the rate
// limit, drain and retry rule (limits.cpp): weft.wasm 111,554, glue 22,753;
// then for rpc.handshake (handshake.cpp and its exports): weft.wasm 123,282,
// weft_module.js 6,834. (Not yet trimmed: the next place to look for bytes.)
// With webSocketTransport (js/transports/websocket.js) the glue is 23,512
// gzipped as one, 29,681 file by file (21 files).
// Raised for per-response metrics and compression negotiation
// (docs/protocol.md "Metrics", "Compression"): the core reads and writes the
// response's "metrics" member and the handshake's compression members in
// both builds (the wasm build never offers them, but its Peer is the same
// code): weft.wasm 125,988 gzipped. With the stream chunk-size limit
// (docs/streams.md "Limits") and the small-call work (string members as text,
// release.h): 127,460.
// Raised for metrics and the chunk limit in weft-rpc (docs/protocol.md
// "Metrics", docs/streams.md "Limits"): the µs clock, the metrics member
// across the boundary, batch metrics and the chunk-size hook took weft.wasm
// to 128,627 gzipped (+1,167) and weft_abi.js to 1,112; onMetrics and
// js/size.js (chunk values measured by weft::chunk_size's rule) the glue to
// 25,551 as one, 32,182 file by file (23 files).
// Raised for the small-call work in the core (bench/README.md, "Small calls,
// third pass": handlers called in place with retired handlers kept, cheaper
// id copies, the params pool, compiled in but keeping nothing in the module):
// weft.wasm 129,348 (+721).
// Raised for issue 11's p50 work (bench/README.md, "JS round trip, p50
// pass"): handlers answering now or later (DeferrableHandler, weft_defer,
// the lazy token in js/context.js) and the reused item and message vectors:
// weft.wasm 130,479 (+1,131), the glue 32,616 file by file.
// Raised for tuples (docs/protocol.md "Tuples"; js/tuples.js, their
// description and making in js/wire.js, the announcement, asMessage): the
// glue 28,145 gzipped as one (+2,161), 35,169 file by file (24 files); and
// for link-time optimisation of the module (wasm/CMakeLists.txt): weft.wasm
// 130,910.
// Raised for the call clock (js/timer.js callClock: performance.now() read
// once per millisecond, 170-400 ns a call saved in Chromium): the glue 28,707
// gzipped as one, 35,798 file by file.
// Raised for a receive's description without per-member kind lookups and
// payload handles without floating-point remainders (js/wire.js,
// js/payloads.js: 0.06-0.1 us of a served request's 0.62): the glue 29,061
// gzipped as one, 36,159 file by file.
const BUDGET = {
  'JS glue, js/**/*.js gzipped as one': 29300,
  'JS glue, js/**/*.js gzipped file by file': 36400,
  'dist/weft.wasm': 131500,
  'dist/weft_module.js': 7000,
  'dist/weft_abi.js': 1150,
};

test('size budget (gzip -9): the JS glue, weft.wasm, weft_module.js', () => {
  const gz = (b) => zlib.gzipSync(b, { level: 9 }).length;
  const glue = ['js', 'js/transports'].flatMap((d) => fs.readdirSync(path.join(ROOT, d))
    .filter((f) => f.endsWith('.js')).sort().map((f) => fs.readFileSync(path.join(ROOT, d, f))));
  const raw = glue.reduce((n, b) => n + b.length, 0);
  const sizes = {
    'JS glue, js/**/*.js gzipped as one': [raw, gz(Buffer.concat(glue))],
    'JS glue, js/**/*.js gzipped file by file': [raw, glue.reduce((n, b) => n + gz(b), 0)],
  };
  for (const f of ['dist/weft.wasm', 'dist/weft_module.js', 'dist/weft_abi.js']) {
    const b = fs.readFileSync(path.join(ROOT, f));
    sizes[f] = [b.length, gz(b)];
  }
  const over = [];
  for (const [what, [bytes, gzipped]] of Object.entries(sizes)) {
    console.log(`# ${what}: ${bytes} bytes, ${gzipped} gzipped (budget ${BUDGET[what]})`);
    if (gzipped > BUDGET[what]) over.push(`${what}: ${gzipped} > ${BUDGET[what]}`);
  }
  assert.equal(glue.length >= 18, true, `${glue.length} JS files`);
  assert.deepEqual(over, [], 'over budget (raise it in tests/js/bundle.test.mjs with the reason, or shrink)');
});
