// Loads the WebAssembly core once per realm (page, iframe, worker, Node
// thread): fetch + streaming instantiation in browsers, read from disk in
// Node (the Emscripten 3.1.6 loader cannot do either by itself there: under
// Node 20 it tries to fetch() a file path). The ABI check is module.js's.
//
// Where weft.wasm is found (a miss rejects `ready`, naming the URLs tried):
//   unbundled (Node, a <script type="module"> page): the package's dist/;
//   Vite, Rollup, webpack 5, Parcel: they see the literal
//     `new URL('../dist/weft.wasm', import.meta.url)` below, emit the file and
//     rewrite the URL: nothing to do;
//   esbuild (or any bundler that leaves that URL alone): NEXT TO THE BUNDLE —
//     copy node_modules/weft-rpc/dist/weft.wasm (export 'weft-rpc/weft.wasm')
//     into the output folder. For esm bundles (pages, module workers, Node),
//     Node cjs bundles (__dirname) and iife scripts (their URL).
import createWeftModule from '../dist/weft_module.js';

// Where this code runs from: its module URL or, where a bundle emptied
// import.meta (cjs, iife), the bundle's folder or the classic script's URL.
const moduleURL = typeof import.meta.url === 'string' ? import.meta.url : undefined;
const cjsDir = moduleURL === undefined && typeof __dirname === 'string' ? __dirname : undefined;
const scriptURL = moduleURL ??
  ((typeof document === 'object' && document?.currentScript?.src) ||
   (typeof importScripts === 'function' && typeof location === 'object' ? String(location.href) : undefined));
let loading = null;

/** The URLs (or, in a CommonJS bundle, file paths) to try, in order. */
function candidates() {
  // The literal is for bundlers to rewrite; the computed `own` (left alone)
  // tells whether one did.
  let packaged = null;
  try { packaged = new URL('../dist/weft.wasm', import.meta.url).href; } catch { /* import.meta emptied */ }
  if (cjsDir !== undefined) return [cjsDir.replace(/[\\/]?$/, '/') + 'weft.wasm'];
  if (scriptURL === undefined) return packaged ? [packaged] : [];
  const base = scriptURL;
  const own = new URL('../dist/' + 'weft.wasm', base).href;
  const unbundled = /\/js\/loader\.js(?:[?#]|$)/.test(base);
  if (packaged && (packaged !== own || unbundled)) return [packaged];
  const next = new URL('weft.wasm', base).href;
  return packaged && packaged !== next ? [next, packaged] : [next];
}

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
    typeof process.versions.node === 'string' &&
    (cjsDir !== undefined || (scriptURL !== undefined && scriptURL.startsWith('file:')));
}

function notFound(tried, why) {
  return new Error(`weft.wasm not found (tried ${tried.map((u, i) => `${u}: ${why[i]}`).join('; ')}). ` +
    'A bundle that does not rewrite new URL(…, import.meta.url) (e.g. esbuild) needs ' +
    'node_modules/weft-rpc/dist/weft.wasm copied next to it');
}

// Computed, so that browser bundles do not try to resolve node:fs.
const FS = 'node:fs';

async function nodeBytes() {
  const fs = typeof process.getBuiltinModule === 'function'
    ? process.getBuiltinModule(FS)
    : await import(/* webpackIgnore: true */ /* @vite-ignore */ FS);
  const tried = candidates();
  const why = [];
  for (const c of tried) {
    try {
      return await fs.promises.readFile(c.startsWith('file:') ? new URL(c) : c);
    } catch (e) {
      if (e?.code !== 'ENOENT') throw e;
      why.push('ENOENT');
    }
  }
  throw notFound(tried, why);
}

// The first candidate that answers 2xx.
async function fetchWasm() {
  const tried = candidates();
  const why = [];
  for (const url of tried) {
    let res;
    try {
      res = await fetch(url, { credentials: 'same-origin' });
    } catch (e) {
      why.push(String(e?.message ?? e));
      continue;
    }
    if (res.ok) return res;
    why.push(`HTTP ${res.status}`);
  }
  throw notFound(tried, why);
}

async function instantiate(imports) {
  const res = await fetchWasm();
  if (typeof WebAssembly.instantiateStreaming === 'function') {
    try {
      return await WebAssembly.instantiateStreaming(res, imports);
    } catch (e) {
      // A server without the application/wasm type: fall back to bytes.
      if (!(e instanceof TypeError) || res.bodyUsed) throw e;
    }
  }
  return WebAssembly.instantiate(await res.arrayBuffer(), imports);
}

/**
 * Resolves with the Emscripten module; `hooks` are the callbacks the core
 * calls (installed as Module.weft before any export runs).
 */
export function loadModule(hooks) {
  if (loading) return loading;
  loading = (async () => {
    // locateFile: the factory must not build a URL from import.meta (empty
    // in cjs/iife bundles); it never fetches: we hand it the module.
    const opts = { weft: hooks, printErr: (s) => console.warn('[weft]', s), locateFile: (p) => p };
    if (isNode()) {
      opts.wasmBinary = await nodeBytes();
      return createWeftModule(opts);
    }
    let fail;
    const failed = new Promise((_, reject) => { fail = reject; });
    opts.instantiateWasm = (imports, done) => {
      instantiate(imports).then((r) => done(r.instance, r.module)).catch(fail);
      return {};
    };
    return Promise.race([createWeftModule(opts), failed]);
  })();
  return loading;
}
