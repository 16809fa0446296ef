// N sequential calls over a Node MessageChannel, both ends in this thread:
// the workload whose instructions per round trip bench/README.md reports for
// weft and its peers. MODE is `small` (default: add {a:1,b:2} -> 3) or `large`
// (echo of a 64 KiB string, the bench's large call: bench/node/rows.mjs).
// Run it under an instruction counter twice and take the difference, so
// start-up cancels out:
//   valgrind --tool=cachegrind --cache-sim=no node --single-threaded bench/node/round-trips.mjs weft 2000 [large]
//   valgrind --tool=cachegrind --cache-sim=no node --single-threaded bench/node/round-trips.mjs weft 12000 [large]
//   per round trip = (I(12000) - I(2000)) / 10000
// Needs dist/weft.wasm (bash scripts/build-wasm.sh) for the weft rows.
import { MessageChannel } from 'node:worker_threads';
import { CONTENDERS, serve, connect } from './contenders.mjs';

const [lib = 'weft', n = '2000', mode = 'small'] = process.argv.slice(2);
if (!CONTENDERS.includes(lib)) throw new Error(`unknown contender ${lib}; one of: ${CONTENDERS.join(', ')}`);
if (mode !== 'small' && mode !== 'large') throw new Error(`unknown mode ${mode}; small or large`);
const BIG = 'x'.repeat(64 * 1024);
const { port1, port2 } = new MessageChannel();
const stop = await serve(lib, port1);
const c = await connect(lib, port2, BIG);
for (let i = 0; i < Number(n); i++) {
  if (mode === 'small') {
    const r = await c.small();
    if (r !== 3) throw new Error(`${lib}: add answered ${r}`);
  } else {
    const r = await c.large();
    if (r !== BIG) throw new Error(`${lib}: echo answered ${typeof r === 'string' ? r.length + ' chars' : r}`);
  }
}
c.close();
await stop();
port1.close();
port2.close();
