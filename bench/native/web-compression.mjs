// zstd on the message transports (docs/transports.md "Compression"): bytes on
// the wire and sequential round trips per second of `echo [records]` over
// `weft serve --ws/--http --compress zstd`, with compression agreed / asked
// for against the same server without it, paired and alternated per
// repetition. Payload: the compression section's JSON array of user records
// (bench/README.md). Not part of `npm run bench`.
//
//   node bench/native/web-compression.mjs [--records 1000] [--calls 300] [--reps 3]
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEFT = process.env.WEFT_BIN || path.join(root, 'build/native-host/weft');
const arg = (name, d) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : d; };
const RECORDS = arg('records', 1000);
const CALLS = arg('calls', 300);
const REPS = arg('reps', 3);

// Each run's first answer must be the echo (a compressed one inflated by the zstd tool).
function check(body) {
  const raw = Buffer.from(body);
  const text = raw.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd])) ? spawnSync('zstd', ['-d', '-c'], { input: raw }).stdout : raw;
  const m = JSON.parse(String(text));
  if (!Array.isArray(m.result) || m.result[0].length !== RECORDS) throw new Error(`not the echo: ${String(text).slice(0, 200)}`);
}

const records = Array.from({ length: RECORDS }, (_, i) => ({
  id: i, name: `user${i}`, email: `user${i}@example.com`, active: i % 3 !== 0, score: (i * 7919) % 1000,
}));

async function serve() {
  const p = spawn(WEFT, ['serve', '--ws', '127.0.0.1:0', '--http', '127.0.0.1:0', '--http-stateless', '--demo', '--compress', 'zstd'],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const urls = await new Promise((resolve) => p.stderr.on('data', (d) => {
    log += d;
    const ws = /listening on (ws:\/\/\S+)/.exec(log);
    const h = /listening on (http:\/\/\S+)/.exec(log);
    if (ws && h) resolve({ ws: ws[1], http: h[1] });
  }));
  return { ...urls, stop: () => p.kill('SIGTERM') };
}

async function wsRun(url, compress) {
  const ws = new WebSocket(url);
  await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
  let wire = 0;
  let waiting;
  ws.on('message', (d) => { wire += d.length; waiting(d); });
  const ask = (m) => new Promise((r) => { waiting = r; ws.send(JSON.stringify(m)); });
  await ask({ jsonrpc: '2.0', id: 0, method: 'rpc.handshake',
    params: { version: '1.0', capabilities: compress ? ['compression'] : [], ...(compress ? { compression_preference: ['zstd'] } : {}) } });
  check(await ask({ jsonrpc: '2.0', id: 1, method: 'echo', params: [records] }));
  wire = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 1; i <= CALLS; i++) await ask({ jsonrpc: '2.0', id: i, method: 'echo', params: [records] });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  ws.close();
  return { perCall: wire / CALLS, rate: CALLS / s };
}

async function httpRun(url, compress) {
  // Answers only (curl and browsers send plain requests); the client inflates.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: [records] });
  let wire = 0;
  let first = [];
  const post = () => new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      ...(compress ? { 'Accept-Encoding': 'zstd' } : {}) } }, (res) => {
      res.on('data', (c) => { wire += c.length; if (first) first.push(c); });
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
  await post();
  check(Buffer.concat(first));
  first = null;
  wire = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await post();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  return { perCall: wire / CALLS, rate: CALLS / s };
}

const srv = await serve();
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
try {
  console.log(`payload: echo of ${RECORDS} records, ${Buffer.byteLength(JSON.stringify(records))} B of JSON; ${CALLS} sequential calls × ${REPS} reps`);
  for (const [name, run, url] of [['ws', wsRun, srv.ws], ['http', httpRun, srv.http]]) {
    const ratios = [];
    let last;
    for (let r = 0; r < REPS; r++) {
      const order = r % 2 ? [true, false] : [false, true];
      const got = {};
      for (const c of order) got[c] = await run(url, c);
      ratios.push(got[true].rate / got[false].rate);
      last = got;
    }
    console.log(`${name}: answer on the wire ${Math.round(last[false].perCall)} B plain, ${Math.round(last[true].perCall)} B zstd ` +
      `(${(100 * last[true].perCall / last[false].perCall).toFixed(1)} %); calls/s plain ${last[false].rate.toFixed(0)}, ` +
      `zstd ${last[true].rate.toFixed(0)}; zstd/plain rate, median of ${REPS}: ${median(ratios).toFixed(2)}`);
  }
} finally {
  srv.stop();
}
