// Node: unbundled (`node src/node-app.js`) and as an esbuild --platform=node
// bundle (esm and cjs: no top-level await). Prints the outcome as JSON.
import * as weft from 'weft-rpc';
import { addOverChannel } from './scenario.js';

addOverChannel(weft).then(
  (r) => console.log(JSON.stringify(r)),
  (e) => { console.log(JSON.stringify({ error: String(e?.message ?? e) })); process.exitCode = 1; },
);
