// Runs `body` in a fresh worker_threads realm, where weft-rpc has not loaded
// its WebAssembly yet: the module loads once per realm, so only a new one
// shows what happens to endpoints used before it is ready. `body` is the
// source of an async function of `m` (the weft-rpc module, just imported)
// whose return value (structured-cloneable) is resolved here.
import { Worker } from 'node:worker_threads';

const url = new URL('../../js/index.js', import.meta.url).href;

export async function inColdRealm(body) {
  const w = new Worker(`
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(url)}).then((m) => (${body})(m)).then((r) => parentPort.postMessage(r));
  `, { eval: true });
  try {
    return await new Promise((res, rej) => { w.once('message', res); w.once('error', rej); });
  } finally { await w.terminate(); }
}
