// Loads the WebAssembly core once per realm (page, iframe, worker, Node
// thread). The .wasm is found relative to this file: fetch + streaming
// instantiation in browsers, read from disk in Node (the Emscripten 3.1.6
// loader cannot do either by itself there; see /work/shared/toolchain.md).
import createWeftModule from '../dist/weft_module.js';

const wasmURL = new URL('../dist/weft.wasm', import.meta.url);
let loading = null;

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
    typeof process.versions.node === 'string' && wasmURL.protocol === 'file:';
}

async function nodeBytes() {
  const fs = typeof process.getBuiltinModule === 'function'
    ? process.getBuiltinModule('node:fs')
    : await import(/* webpackIgnore: true */ 'node:fs');
  return fs.promises.readFile(wasmURL);
}

function streaming(imports, done) {
  const go = async () => {
    const res = fetch(wasmURL, { credentials: 'same-origin' });
    if (typeof WebAssembly.instantiateStreaming === 'function') {
      try {
        return await WebAssembly.instantiateStreaming(res, imports);
      } catch (e) {
        // A server without the application/wasm type: fall back to bytes.
        if (!(e instanceof TypeError)) throw e;
      }
    }
    const bytes = await (await res).arrayBuffer();
    return WebAssembly.instantiate(bytes, imports);
  };
  return go().then((r) => done(r.instance, r.module));
}

/**
 * Resolves with the Emscripten module; `hooks` are the callbacks the core
 * calls (installed as Module.weft before any export runs).
 */
export function loadModule(hooks) {
  if (loading) return loading;
  loading = (async () => {
    const opts = { weft: hooks, printErr: (s) => console.warn('[weft]', s) };
    if (isNode()) {
      opts.wasmBinary = await nodeBytes();
    } else {
      let fail;
      const failed = new Promise((_, reject) => { fail = reject; });
      opts.instantiateWasm = (imports, done) => {
        streaming(imports, done).catch(fail);
        return {};
      };
      return Promise.race([createWeftModule(opts), failed]);
    }
    return createWeftModule(opts);
  })();
  return loading;
}
