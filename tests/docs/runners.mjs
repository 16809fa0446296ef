// How tests/js/docs-examples.test.mjs runs each kind of example in the docs
// (markers: tests/docs/markdown.mjs). Every runner writes the example's
// blocks to files under build/docs-examples/NAME (inside the repository, so
// `import … from 'weft-rpc'` resolves to this checkout by the package's own
// name, as in an installed copy), runs them, and throws when they fail or
// print something other than the example's `output:` block.
//
//   js, env=node (default)  node FILE; stdout compared with the output block; harness=FILE
//                           completes a snippet as for C++ (import lines first)
//   js, env=browser         esbuild-bundled (weft.wasm copied next to the bundle, as the
//                           README says), loaded in Debian's Chromium; console.log is the
//                           output; origins=A,B replaces example origins with the test's two
//                           (127.0.0.1 and localhost); page=FILE, with=FILES: harness pages;
//                           listen=ws://HOST:PORT: as for console, the page's origin allowed
//   console                 a shell transcript: each `$ command` runs under bash (`weft` on
//                           PATH) against a server (server=demo: `weft serve --demo`;
//                           server=NAME: the C++ example NAME, given the socket as argv[1]);
//                           the lines after it are its stdout+stderr (… matches anything).
//                           socket=PATH (default /tmp/weft.sock) is replaced by a temp path.
//                           flags=A,B: more `weft serve` flags for server=demo and listen=.
//                           listen=ws://HOST:PORT or http://HOST:PORT: against `weft serve
//                           --ws`/`--http` (with --demo) on a free port instead; HOST:PORT in
//                           the commands becomes the real one.
//   cpp                     built against `cmake --install` of the build tree with
//                           find_package(weft) and weft::host; run, stdout compared.
//                           harness=FILE (tests/docs/harness/) completes a snippet: its
//                           #include lines go first, the rest replaces `// SNIPPET`.
//                           serve: a server, run by the transcripts that name it;
//                           server=…: a client, run with the server's socket as argv[1].
//   any                     uses=NAME/FILE: that file of example NAME is written here too.
//   cmake                   a CMakeLists.txt (with the example's .cpp files); harness=FILE
//                           completes a fragment (`# SNIPPET`); built, its `app` run.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const WORK = path.join(ROOT, 'build', 'docs-examples');
const BUILD = path.resolve(ROOT, process.env.WEFT_BUILD_DIR || 'build');
const WEFT_BIN = process.env.WEFT_BIN || path.join(BUILD, 'native-host', 'weft');
const HARNESS = path.join(ROOT, 'tests', 'docs', 'harness');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Resolves with what `promise` gives, or rejects after `ms` naming `what`. */
function within(ms, promise, what) {
  let t;
  const timeout = new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(t));
}

/** Runs a command to completion: { code, signal, stdout, stderr }. */
function run(cmd, args, { cwd = ROOT, env = {}, timeout = 60000, input } = {}) {
  return new Promise((resolve, reject) => {
    // Its own process group, so that a timeout also ends what it started
    // (`weft call --exec` runs a server; a shell runs a pipeline).
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const t = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } reject(new Error(`${cmd} ${args.join(' ')}: still running after ${timeout} ms\n${stdout}${stderr}`)); }, timeout);
    child.once('error', (e) => { clearTimeout(t); reject(e); });
    child.once('close', (code, signal) => { clearTimeout(t); resolve({ code, signal, stdout, stderr }); });
    child.stdin.end(input);
  });
}

async function mustRun(cmd, args, opts) {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code ?? r.signal}:\n${r.stdout}${r.stderr}`);
  return r;
}

/** A fresh folder for example `name`, with its blocks written into it. */
function writeExample(ex, defaultName) {
  const dir = path.join(WORK, ex.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const files = ex.blocks.map((b, i) => {
    const name = b.fileName ?? (i === 0 ? defaultName : null);
    if (!name) throw new Error(`${b.where}: the second block of example "${ex.name}" needs a file name (example: ${ex.name}/FILE)`);
    fs.writeFileSync(path.join(dir, name), b.code);
    return name;
  });
  // The file to run first: the block marked `main`, else the first one.
  const main = Math.max(0, ex.blocks.findIndex((b) => b.attrs.main));
  files.unshift(...files.splice(main, 1));
  return { dir, files };
}

/** Compares what an example printed with its output block. */
export function checkOutput(ex, actual) {
  if (ex.output === null) return;
  const want = ex.output.trimEnd();
  const got = actual.replace(/\r\n/g, '\n').trimEnd();
  if (!linesMatch(want.split('\n'), got.split('\n')))
    throw new Error(`example "${ex.name}" (${ex.where}) printed:\n${got}\n--- but its output block says:\n${want}`);
}

/** Line by line; `…` in an expected line matches any text. */
function linesMatch(want, got) {
  if (want.length !== got.length) return false;
  return want.every((w, i) => {
    const re = new RegExp(`^${w.split('…').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    return re.test(got[i]);
  });
}

// ---- js in Node ------------------------------------------------------------
export async function runNode(ex) {
  const { dir, files } = writeExample(ex, 'main.mjs');
  if (ex.attrs.harness) {
    const file = path.join(dir, files[0]);
    fs.writeFileSync(file, completeSnippet(fs.readFileSync(file, 'utf8'), ex.attrs.harness, '// SNIPPET'));
  }
  const r = await run(process.execPath, [path.join(dir, files[0])], { cwd: dir, timeout: 30000 });
  if (r.code !== 0) throw new Error(`example "${ex.name}" (${ex.where}) exited ${r.code ?? r.signal}:\n${r.stdout}${r.stderr}`);
  checkOutput(ex, r.stdout);
}

// ---- js in Chromium ----------------------------------------------------------
let browserPromise = null;
/** One headless Chromium for all browser examples; closed by closeBrowser(). */
async function browser() {
  browserPromise ??= (async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} missing: apt-get install -y chromium`);
    const { chromium } = await import('playwright-core');
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-docs-chromium-'));
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
    return { context, userDataDir };
  })();
  return browserPromise;
}
export async function closeBrowser() {
  if (esbuildModule) await (await esbuildModule).stop?.();
  if (!browserPromise) return;
  const { context, userDataDir } = await browserPromise;
  // A Chromium that died under us must not keep the test process waiting.
  try { await within(10000, context.close(), 'closing Chromium'); } catch { /* already gone */ }
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
let esbuildModule = null;

const esbuildWeft = {
  name: 'weft-rpc-from-this-checkout',
  setup(build) {
    build.onResolve({ filter: /^weft-rpc$/ }, () => ({ path: path.join(ROOT, 'js', 'index.js') }));
  },
};

export async function runBrowser(ex) {
  const { dir, files } = writeExample(ex, 'main.js');
  const out = path.join(dir, 'out');
  const scripts = files.filter((f) => /\.m?js$/.test(f));
  esbuildModule ??= import('esbuild');
  const esbuild = await esbuildModule;
  await esbuild.build({
    entryPoints: scripts.map((f) => path.join(dir, f)),
    outdir: out,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'silent',
    plugins: [esbuildWeft],
  });
  fs.copyFileSync(path.join(ROOT, 'dist', 'weft.wasm'), path.join(out, 'weft.wasm'));
  const { serveFolder } = await import('../bundle/server.mjs');
  const server = await serveFolder(out);
  const port = new URL(server.url).port;
  // Two origins of one server: 127.0.0.1 (the page) and localhost (a frame).
  const origins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
  const examples = ex.attrs.origins ? ex.attrs.origins.split(',') : [];
  for (const f of scripts) {
    let text = fs.readFileSync(path.join(out, f), 'utf8');
    examples.forEach((o, i) => { text = text.split(o).join(origins[i]); });
    fs.writeFileSync(path.join(out, f), text);
  }
  // The page: page=FILE (a harness page), else one that runs the first script;
  // with=A,B: more harness files the example's page needs (an iframe's page).
  for (const extra of (ex.attrs.with ?? '').split(',').filter(Boolean))
    fs.copyFileSync(path.join(HARNESS, extra), path.join(out, extra));
  if (ex.attrs.page) {
    fs.copyFileSync(path.join(HARNESS, ex.attrs.page), path.join(out, 'index.html'));
  } else {
    fs.writeFileSync(path.join(out, 'index.html'),
      `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module" src="./${scripts[0]}"></script>\n`);
  }
  for (const f of fs.readdirSync(out).filter((x) => x.endsWith('.html'))) {
    let text = fs.readFileSync(path.join(out, f), 'utf8');
    examples.forEach((o, i) => { text = text.split(o).join(origins[i]); });
    fs.writeFileSync(path.join(out, f), text);
  }
  // listen=ws://HOST:PORT: weft serve --ws for the page, which may connect from its origin.
  try {
    if (ex.attrs.listen) {
      await withListener(ex, ['--allow-origin', origins[0]], (from, to) => {
        for (const f of scripts) {
          const file = path.join(out, f);
          fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split(from).join(to));
        }
        return showPage(ex, origins, scripts);
      });
    } else {
      await showPage(ex, origins, scripts);
    }
  } finally {
    await server.close();
  }
}

/** Loads the example's page; its console.log lines are the output. */
async function showPage(ex, origins, scripts) {
  const { context } = await browser();
  const page = await context.newPage();
  const logs = [];
  const errors = [];
  const done = new Promise((resolve) => {
    const onConsole = (where) => (msg) => {
      if (msg.type() === 'error') errors.push(`${where}: ${msg.text()}`);
      else if (msg.type() === 'log') {
        if (msg.text() === 'docs-example: done') resolve();
        else logs.push(msg.text());
      }
    };
    page.on('console', onConsole('page'));
    page.on('worker', (w) => w.on('console', onConsole('worker')));
    page.on('pageerror', (e) => { errors.push(`pageerror: ${e.message}`); resolve(); });
  });
  try {
    // The example's module has finished (top-level await included) when the
    // page's dynamic import of it settles; that logs the line `done` waits for.
    await page.goto(`${origins[0]}/`, { waitUntil: 'load', timeout: 15000 });
    const evaluated = page.evaluate(async (entry) => {
      try { await import(entry); } catch (e) { console.error(`example threw: ${e?.stack ?? e}`); }
      console.log('docs-example: done');
    }, `./${scripts[0]}`);
    await within(30000, Promise.all([evaluated, done]), `example "${ex.name}" in Chromium`);
  } finally {
    await page.close();
  }
  if (errors.length) throw new Error(`example "${ex.name}" (${ex.where}) in Chromium:\n${errors.join('\n')}`);
  checkOutput(ex, logs.join('\n'));
}

// ---- C++ and CMake -------------------------------------------------------------
let prefixPromise = null;
/** `cmake --install` of the build tree into build/docs-examples/prefix (once). */
function installPrefix() {
  prefixPromise ??= (async () => {
    const prefix = path.join(WORK, 'prefix');
    fs.rmSync(prefix, { recursive: true, force: true });
    await mustRun('cmake', ['--install', BUILD, '--prefix', prefix]);
    return prefix;
  })();
  return prefixPromise;
}

/**
 * Completes a snippet with a harness: its #include (C++) or import (JS) lines
 * first, the rest at `marker`.
 */
function completeSnippet(code, harnessFile, marker) {
  const harness = fs.readFileSync(path.join(HARNESS, harnessFile), 'utf8');
  const line = new RegExp(`^${marker}$`, 'm');  // the marker alone on its line
  if (!line.test(harness)) throw new Error(`${harnessFile} has no "${marker}" line`);
  const head = /^\s*(#\s*include|import\s)/;
  const includes = code.split('\n').filter((l) => head.test(l)).join('\n');
  const rest = code.split('\n').filter((l) => !head.test(l)).join('\n');
  return `${includes}\n${harness.replace(line, () => rest)}`;
}

/**
 * Builds a C++ or CMake example as its own project against the installed
 * package; resolves with the path of its executable.
 */
export async function buildCpp(ex) {
  const { dir, files } = writeExample(ex, ex.lang === 'cmake' ? 'CMakeLists.txt' : 'main.cpp');
  if (ex.attrs.harness) {
    const file = path.join(dir, files[0]);
    const marker = ex.lang === 'cmake' ? '# SNIPPET' : '// SNIPPET';
    fs.writeFileSync(file, completeSnippet(fs.readFileSync(file, 'utf8'), ex.attrs.harness, marker));
  }
  if (!files.includes('CMakeLists.txt')) {
    const sources = files.filter((f) => f.endsWith('.cpp'));
    fs.writeFileSync(path.join(dir, 'CMakeLists.txt'), [
      'cmake_minimum_required(VERSION 3.20)',
      'project(docs_example LANGUAGES CXX)',
      'find_package(weft CONFIG REQUIRED)',
      `add_executable(app ${sources.join(' ')})`,
      'target_link_libraries(app PRIVATE weft::host)',
      '',
    ].join('\n'));
  }
  // A project that needs sources the harness names but the docs do not show.
  for (const extra of (ex.attrs.with ?? '').split(',').filter(Boolean))
    fs.copyFileSync(path.join(HARNESS, extra), path.join(dir, extra));
  const prefix = await installPrefix();
  const bdir = path.join(dir, 'build');
  const gen = spawnSync('ninja', ['--version']).status === 0 ? ['-G', 'Ninja'] : [];
  await mustRun('cmake', ['-S', dir, '-B', bdir, ...gen, '-DCMAKE_BUILD_TYPE=Release', `-DCMAKE_PREFIX_PATH=${prefix}`,
    '-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF'], { timeout: 120000 });
  await mustRun('cmake', ['--build', bdir, '-j1'], { timeout: 300000 });
  return path.join(bdir, 'app');
}


// ---- shell transcripts against a server -------------------------------------
/**
 * Resolves once `file` exists (fs.watch on its folder: an event, not a poll
 * loop); `stop` closes the watcher when nobody waits any more.
 */
function appears(file) {
  let watcher;
  const promise = new Promise((resolve) => {
    watcher = fs.watch(path.dirname(file), () => { if (fs.existsSync(file)) { watcher.close(); resolve(); } });
    if (fs.existsSync(file)) { watcher.close(); resolve(); }
  });
  return { promise, stop: () => watcher.close() };
}

/** `$ command` lines and the output lines after each. */
export function parseTranscript(code) {
  const steps = [];
  let cont = false;
  for (const line of code.replace(/\n$/, '').split('\n')) {
    if (cont) {
      steps.at(-1).command += `\n${line}`;
      cont = line.endsWith('\\');
    } else if (line.startsWith('$ ')) {
      steps.push({ command: line.slice(2), output: [] });
      cont = line.endsWith('\\');
    } else {
      if (!steps.length) throw new Error(`transcript line before any "$ command": ${line}`);
      steps.at(-1).output.push(line);
    }
  }
  return steps;
}

/**
 * Starts the server an example names (server=demo: `weft serve --unix S
 * --demo`; server=NAME: the built C++ example NAME, given S as argv[1]) on a
 * fresh socket S, runs `fn(S, tmpDir)`, then stops it with SIGTERM. A C++
 * server must exit 0 on SIGTERM (its graceful stop).
 */
async function withServer(ex, servers, fn) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-docs-'));
  const socket = path.join(tmp, 'weft.sock');
  const which = ex.attrs.server ?? 'demo';
  const exe = which === 'demo' ? WEFT_BIN : servers[which];
  if (!exe) throw new Error(`example "${ex.name}": no server "${which}"`);
  const flags = (ex.attrs.flags ?? '').split(',').filter(Boolean);
  const args = which === 'demo' ? ['serve', '--unix', socket, '--demo', ...flags] : [socket];
  const server = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let serverLog = '';
  server.stderr.on('data', (d) => { serverLog += d; });
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })));
  const up = appears(socket);
  try {
    await within(15000, Promise.race([up.promise, exited.then((e) => { throw new Error(`server exited ${e.code ?? e.signal}: ${serverLog}`); })]),
      `server of example "${ex.name}"`);
    await fn(socket, tmp);
  } finally {
    up.stop();
    server.kill('SIGTERM');
    const e = await within(10000, exited, `server of example "${ex.name}" stopping`)
      .catch((err) => { server.kill('SIGKILL'); throw err; });
    fs.rmSync(tmp, { recursive: true, force: true });
    if (which !== 'demo' && e.code !== 0) throw new Error(`server "${which}" exited ${e.code ?? e.signal} on SIGTERM: ${serverLog}`);
  }
}

/**
 * Starts `weft serve --demo` on a free loopback port for an example marked
 * listen=ws://HOST:PORT or http://HOST:PORT (extra: more serve flags), runs
 * `fn(from, to)` with the example's HOST:PORT and the real one, then stops it
 * with SIGTERM, which must end it with status 0.
 */
async function withListener(ex, extra, fn) {
  const m = /^(ws|http):\/\/([^/]+)/.exec(ex.attrs.listen);
  if (!m) throw new Error(`example "${ex.name}": listen=${ex.attrs.listen} is not ws://HOST:PORT or http://HOST:PORT`);
  const server = spawn(WEFT_BIN, ['serve', `--${m[1]}`, '127.0.0.1:0', '--demo', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let serverLog = '';
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })));
  // The CLI logs the port it was given: "listening on ws://127.0.0.1:PORT".
  const listening = new Promise((resolve) => server.stderr.on('data', (d) => {
    serverLog += d;
    const at = /listening on (?:ws|http):\/\/(127\.0\.0\.1:\d+)/.exec(serverLog);
    if (at) resolve(at[1]);
  }));
  try {
    const real = await within(15000, Promise.race([listening, exited.then((e) => { throw new Error(`weft serve exited ${e.code ?? e.signal}: ${serverLog}`); })]),
      `server of example "${ex.name}"`);
    await fn(m[2], real);
  } finally {
    server.kill('SIGTERM');
    const e = await within(10000, exited, `server of example "${ex.name}" stopping`)
      .catch((err) => { server.kill('SIGKILL'); throw err; });
    if (e.code !== 0) throw new Error(`weft serve exited ${e.code ?? e.signal} on SIGTERM: ${serverLog}`);
  }
}

/**
 * Runs a transcript example. `servers` maps example names to built server
 * executables (server=NAME); server=demo is `weft serve --demo`.
 */
export async function runTranscript(ex, servers = {}) {
  const steps = async (from, to, tmp) => {
    const env = { PATH: `${path.dirname(WEFT_BIN)}:${process.env.PATH}`, WEFT_SOCKET: '', XDG_RUNTIME_DIR: tmp };
    for (const code of ex.blocks.map((b) => b.code)) {
      for (const step of parseTranscript(code.split(from).join(to))) {
        const r = await run('bash', ['-c', `exec 2>&1\n${step.command}`], { env, timeout: 20000, cwd: tmp });
        const got = r.stdout.replace(/\n$/, '').split('\n').filter((l, i, a) => !(a.length === 1 && l === ''));
        if (!linesMatch(step.output, got)) {
          throw new Error(`example "${ex.name}" (${ex.where}):\n$ ${step.command}\n${got.join('\n')}\n--- but the docs say:\n${step.output.join('\n')}`);
        }
      }
    }
  };
  if (ex.attrs.listen) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-docs-'));
    const flags = (ex.attrs.flags ?? '').split(',').filter(Boolean);
    try { await withListener(ex, flags, (from, to) => steps(from, to, tmp)); } finally { fs.rmSync(tmp, { recursive: true, force: true }); }
  } else {
    await withServer(ex, servers, (socket, tmp) => steps(ex.attrs.socket ?? '/tmp/weft.sock', socket, tmp));
  }
}

/** Runs a built C++ example; with server=…, against that server (socket as argv[1]). */
export async function runCpp(ex, servers = {}) {
  const exe = await buildCpp(ex);
  const go = async (args) => {
    const r = await run(exe, args, { timeout: 30000 });
    if (r.code !== 0) throw new Error(`example "${ex.name}" (${ex.where}) exited ${r.code ?? r.signal}:\n${r.stdout}${r.stderr}`);
    checkOutput(ex, r.stdout);
  };
  if (ex.attrs.server) await withServer(ex, servers, (socket) => go([socket]));
  else await go([]);
}
