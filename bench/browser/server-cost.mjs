// What one small request costs a JSON-RPC server in Chromium, alone: the
// page counterpart of bench/node/server-cost.mjs. In the bench's page, N
// json-rpc-2.0-shaped requests ({"jsonrpc":"2.0","method":"add",
// "params":{"a":1,"b":2},"id":n}) are handed to each server's port listener
// directly (no postMessage, no client), answers counted and dropped;
// per request: elapsed ÷ N, in 5 runs of 200,000 after three of 50,000 to
// warm up, the minimum printed with all of them; servers alternate, twice.
// (performance.now() is coarsened to 5 µs in the cross-origin isolated
// page: over a run of 200,000 requests that is 0.000025 µs a request.)
//   node bench/browser/server-cost.mjs
// Needs dist/weft.wasm (bash scripts/build-wasm.sh) and Chromium
// (CHROMIUM_PATH, default /usr/bin/chromium).
import { openBenchPage } from './open.mjs';

// Through DevTools (open.mjs): nothing here is posted, and evaluate takes a function.
const { page, close } = await openBenchPage('server-cost', { devtools: true });
try {
  const lines = await page.evaluate(async () => {
    const weft = await import('/js/index.js');
    const { JSONRPCServer: JrServer } = await import('/gen/json-rpc-2.0.mjs');
    await weft.ready;
    const N = 200000;
    const add = ({ a, b }) => a + b;
    async function measure(lib) {
      let listener = null;
      let answers = 0;
      const port = {
        postMessage(m) { if (m?.result === 3) answers++; },  // weft also posts its announcement
        addEventListener(type, l) { if (type === 'message') listener = l; },
        removeEventListener() {}, start() {}, close() {},
      };
      let stop = () => {};
      if (lib === 'weft') {
        const s = new weft.JSONRPCServer(weft.portTransport(port));
        s.method('add', add);
        stop = () => s.destroy();
      } else {  // as bench/browser/contenders.mjs serves it
        const s = new JrServer();
        s.addMethod('add', add);
        port.addEventListener('message', (ev) => {
          if (ev.data?.jsonrpc) s.receive(ev.data).then((r) => { if (r) port.postMessage(r); });
        });
      }
      let id = 0;
      async function run(n) {
        const t0 = performance.now();
        for (let i = 0; i < n; i++) {
          listener({ data: { jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: ++id } });
          if ((i & 63) === 63) await Promise.resolve();  // answers given by promise go out
        }
        await new Promise((r) => setTimeout(r, 0));
        return ((performance.now() - t0) * 1000) / n;
      }
      for (let r = 0; r < 3; r++) await run(N / 4);
      const us = [];
      for (let r = 0; r < 5; r++) us.push(await run(N));
      stop();
      if (answers !== id) throw new Error(`${lib}: ${answers} answers to ${id} requests`);
      return `${lib.padEnd(14)} ${Math.min(...us).toFixed(3)} µs per request (runs: ${us.map((u) => u.toFixed(3)).join(' ')})`;
    }
    const out = [];
    for (let k = 0; k < 2; k++) for (const lib of ['weft', 'json-rpc-2.0']) out.push(await measure(lib));
    return out;
  });
  for (const l of lines) console.log(l);
} finally {
  await close();
}
