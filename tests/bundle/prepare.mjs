// A consumer project of the published package, as a user gets it: `npm pack`
// of this repository, installed (offline: a local tarball needs no registry)
// into a temp copy of tests/bundle/consumer, then built with the repository's
// esbuild and Vite. Used by tests/js/bundle.test.mjs (Node) and
// tests/browser/bundle.test.mjs (Chromium).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TEMPLATE = path.join(ROOT, 'tests/bundle/consumer');
const NODE_MODULES = path.join(ROOT, 'node_modules');

/** Milliseconds each step took, for the test log. */
export const timings = {};
async function timed(name, fn) {
  const t0 = performance.now();
  try { return await fn(); } finally { timings[name] = Math.round(performance.now() - t0); }
}

/**
 * Packs the repository and installs the tarball into a fresh consumer copy.
 * Returns { dir, tarball, pkg (the installed package's folder), cleanup() }.
 */
export async function makeConsumer() {
  for (const f of ['dist/weft.wasm', 'dist/weft_module.js', 'dist/weft_abi.js'])
    if (!fs.existsSync(path.join(ROOT, f))) throw new Error(`${f} missing: run bash scripts/build-wasm.sh`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-consumer-'));
  const packDir = path.join(tmp, 'pack');
  const dir = path.join(tmp, 'app');
  fs.mkdirSync(packDir);
  fs.cpSync(TEMPLATE, dir, { recursive: true });
  const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const tarball = await timed('npm pack', () => {
    const out = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], ROOT));
    return path.join(packDir, out[0].filename);
  });
  await timed('npm install <tarball>', () => npm(['install', '--offline', '--no-audit', '--no-fund',
    '--ignore-scripts', '--no-package-lock', '--loglevel=error', tarball], dir));
  return {
    dir,
    tarball,
    pkg: path.join(dir, 'node_modules/weft-rpc'),
    cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
}

const esbuildAPI = () => import(pathToFileURL(path.join(NODE_MODULES, 'esbuild/lib/main.js')).href);

/**
 * esbuild, browser: src/page.js and src/worker.js as ES modules into
 * `outName` (esbuild-out/), with weft.wasm copied next to them (what the
 * loader's comment tells esbuild users to do) unless told not, and an
 * index.html. Returns { out, warnings }.
 */
export async function buildEsbuildBrowser(dir, { copyWasm = true, outName = 'esbuild-out' } = {}) {
  const esbuild = await esbuildAPI();
  const out = path.join(dir, outName);
  const result = await timed(`esbuild (browser, ${outName})`, () => esbuild.build({
    absWorkingDir: dir,
    entryPoints: ['src/page.js', 'src/worker.js'],
    outdir: out,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    logLevel: 'silent',
  }));
  if (copyWasm) fs.copyFileSync(path.join(dir, 'node_modules/weft-rpc/dist/weft.wasm'), path.join(out, 'weft.wasm'));
  fs.copyFileSync(path.join(dir, 'esbuild.html'), path.join(out, 'index.html'));
  return { out, warnings: result.warnings };
}

/**
 * esbuild, Node: src/node-app.js as one file (format 'esm' → app.mjs, 'cjs'
 * → app.cjs) in esbuild-node-<format>/, weft.wasm next to it unless told not.
 */
export async function buildEsbuildNode(dir, format, { copyWasm = true } = {}) {
  const esbuild = await esbuildAPI();
  const out = path.join(dir, `esbuild-node-${format}`);
  const file = path.join(out, format === 'esm' ? 'app.mjs' : 'app.cjs');
  const result = await timed(`esbuild (node, ${format})`, () => esbuild.build({
    absWorkingDir: dir,
    entryPoints: ['src/node-app.js'],
    outfile: file,
    bundle: true,
    format,
    platform: 'node',
    target: 'node18',
    logLevel: 'silent',
  }));
  if (copyWasm) fs.copyFileSync(path.join(dir, 'node_modules/weft-rpc/dist/weft.wasm'), path.join(out, 'weft.wasm'));
  return { file, warnings: result.warnings };
}

/**
 * Vite production build of index.html (page + module worker) into vite-out/,
 * with a relative base so it can be served from a sub-folder. No config file:
 * the defaults a user gets, plus worker.format 'es' (module workers).
 */
export async function buildVite(dir) {
  const { build } = await import(pathToFileURL(path.join(NODE_MODULES, 'vite/dist/node/index.js')).href);
  const out = path.join(dir, 'vite-out');
  await timed('vite build', () => build({
    root: dir,
    configFile: false,
    base: './',
    logLevel: 'warn',
    worker: { format: 'es' },
    build: { outDir: out, emptyOutDir: true },
  }));
  return { out };
}

/** Vite's dev server on the consumer (its dependency pre-bundling included). Resolves with { url, close() }. */
export async function startViteDev(dir) {
  const { createServer } = await import(pathToFileURL(path.join(NODE_MODULES, 'vite/dist/node/index.js')).href);
  const server = await createServer({
    root: dir,
    configFile: false,
    logLevel: 'warn',
    worker: { format: 'es' },
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
  });
  await timed('vite dev (listen)', () => server.listen());
  return { url: server.resolvedUrls.local[0].replace(/\/$/, ''), close: () => server.close() };
}
