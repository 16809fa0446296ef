// What one small request costs a JSON-RPC server, alone: N requests
// ({"jsonrpc":"2.0","method":"add","params":{"a":1,"b":2},"id":n}, or weft's
// tuple [0n, n, "add", {a,b}] with --shape tuple) handed to the server's
// port listener directly, answers counted and dropped: no postMessage, no
// client. The server's share of a round trip, which a foreign client's p50
// carries (bench/README.md). Per request: elapsed ÷ N, in runs of N (200,000)
// after three of a quarter as many to warm up; the minimum of the runs is printed
// with all of them.
//   node bench/node/server-cost.mjs [weft,json-rpc-2.0,...] [--shape object|tuple] [--runs 5] [--n 200000]
// (bench/node/server-instructions.sh counts the same requests' instructions.)
// Needs dist/weft.wasm (bash scripts/build-wasm.sh) for weft.
import { serve } from './contenders.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i < 0 ? dflt : args.splice(i, 2)[1];
};
const shape = opt('--shape', 'object');
const runs = Number(opt('--runs', '5'));
const N = Number(opt('--n', '200000'));
const libs = (args[0] ?? 'weft,json-rpc-2.0').split(',');
const SERVERS = ['weft', 'json-rpc-2.0', 'raw (JSON-RPC objects)'];
for (const lib of libs) if (!SERVERS.includes(lib)) throw new Error(`${lib}: one of ${SERVERS.join(', ')}`);
if (shape !== 'object' && shape !== 'tuple') throw new Error(`--shape ${shape}: object or tuple`);

const request = shape === 'tuple'
  ? (id) => [0n, id, 'add', { a: 1, b: 2 }]
  : (id) => ({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id });
const turn = () => new Promise((r) => setImmediate(r));

async function measure(lib) {
  if (shape === 'tuple' && lib !== 'weft') throw new Error('--shape tuple: weft only');
  let answers = 0;
  let listener = null;
  const port = {
    // An answer to `add` (weft also posts its announcement, docs/protocol.md).
    postMessage(m) { if (m?.result === 3) answers++; },
    addEventListener(type, l) { if (type === 'message') listener = l; },
    removeEventListener() {},
    start() {},
    close() {},
  };
  const stop = await serve(lib, port);
  let id = 0;
  async function run(n) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      listener({ data: request(++id) });
      if ((i & 63) === 63) await turn();  // answers given later (promises) go out
    }
    await turn();
    return ((performance.now() - t0) * 1000) / n;
  }
  for (let r = 0; r < 3; r++) await run(N / 4);
  const us = [];
  for (let r = 0; r < runs; r++) us.push(await run(N));
  await turn();
  stop();
  if (answers !== id) throw new Error(`${lib}: ${answers} answers to ${id} requests`);
  return us;
}

for (const lib of libs) {
  const us = await measure(lib);
  console.log(`${lib.padEnd(24)} ${shape}: ${Math.min(...us).toFixed(3)} µs per request (runs: ${us.map((u) => u.toFixed(3)).join(' ')})`);
}
