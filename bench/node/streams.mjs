// Streaming throughput over a Node MessageChannel: weft's client.stream() of
// 64 KiB Uint8Array chunks (transferred, with credit-based flow control)
// against the raw floor — the same buffers posted and transferred with no
// protocol and no flow control — in the same run, alternating, medians.
import { JSONRPCClient, JSONRPCServer, portTransport } from '../../js/index.js';
import { median } from '../lib/stats.mjs';
import { pathToFileURL } from 'node:url';

const CHUNK = 64 * 1024;

async function weftStream(bytes, hwm) {
  const { port1, port2 } = new MessageChannel();
  const client = new JSONRPCClient(portTransport(port1), { timeout: 0 });
  const server = new JSONRPCServer(portTransport(port2));
  const n = Math.ceil(bytes / CHUNK);
  server.method('bytes', async (_p, ctx) => {
    for (let i = 0; i < n; i++) await ctx.sink.write(new Uint8Array(CHUNK));
    return n;
  });
  await client.ready;
  const t = performance.now();
  let got = 0;
  for await (const c of client.stream('bytes', undefined, { highWaterMark: hwm })) got += c.byteLength;
  const s = (performance.now() - t) / 1000;
  client.destroy(); server.destroy();
  if (got !== n * CHUNK) throw new Error(`weft stream: ${got} bytes, expected ${n * CHUNK}`);
  return got / s;
}

async function rawFloor(bytes) {
  const { port1, port2 } = new MessageChannel();
  const n = Math.ceil(bytes / CHUNK);
  const t = performance.now();
  const done = new Promise((resolve) => {
    let got = 0;
    port2.onmessage = (e) => { got += e.data.byteLength; if (got >= n * CHUNK) resolve(got); };
  });
  for (let i = 0; i < n; i++) { const b = new Uint8Array(CHUNK); port1.postMessage(b, [b.buffer]); }
  const got = await done;
  const s = (performance.now() - t) / 1000;
  port1.close(); port2.close();
  return got / s;
}

/** Markdown lines: weft streaming MB/s vs the raw floor, per repetition then median. */
export async function runStreams(cfg, log) {
  const bytes = cfg.streamBytes;
  const weft = [], raw = [], ratio = [];
  for (let rep = 0; rep < cfg.reps; rep++) {
    const order = rep % 2 ? ['raw', 'weft'] : ['weft', 'raw'];
    const r = {};
    for (const which of order) r[which] = which === 'weft' ? await weftStream(bytes, 16) : await rawFloor(bytes);
    weft.push(r.weft); raw.push(r.raw); ratio.push(r.weft / r.raw);
    log(`streams rep ${rep + 1}: weft ${(r.weft / 1e6).toFixed(0)} MB/s, raw ${(r.raw / 1e6).toFixed(0)} MB/s`);
  }
  const mb = (v) => (v / 1e6).toFixed(0);
  return [
    `## streaming: ${(bytes / 2 ** 20).toFixed(0)} MiB in 64 KiB Uint8Array chunks over a Node MessageChannel (transferred)`,
    '',
    '| contender | MB/s | ÷ floor |',
    '| --- | ---: | ---: |',
    `| raw postMessage, transferred, no flow control (floor) | ${mb(median(raw))} | (floor) |`,
    `| weft client.stream(), highWaterMark 16 (credit-based flow control) | ${mb(median(weft))} | ${median(ratio).toFixed(2)}× |`,
    '',
  ];
}

// Run alone: `node bench/node/streams.mjs [MiB] [reps]` (default 1024 MiB, 5 repetitions),
// the same rows `npm run bench` prints in its "streaming" section.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const mib = Number(process.argv[2] ?? 1024), reps = Number(process.argv[3] ?? 5);
  const lines = await runStreams({ streamBytes: mib * 2 ** 20, reps }, console.log);
  console.log(lines.join('\n'));
}
