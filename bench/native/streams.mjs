// Native streaming throughput over a Unix socket (issue 12's target: ≥ 1 GB/s
// with 64 KiB `bin` chunks): `weft serve --unix S --codec msgpack --demo`
// streaming its `bytes` builtin to weft::host::Client::stream (credit 16,
// every chunk's size and fill checked) in `weft-bench-stream weft`, against
// the raw floor `weft-bench-stream floor`: a forked writer write()ing the
// same bytes 64 KiB at a time on a Unix socket, read() into a 64 KiB buffer,
// no framing, no protocol, no flow control. Same run, alternating order,
// ratio per repetition, medians.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const WEFT = path.join(root, 'build/native-host/weft');
const BENCH = path.join(root, 'build/native-host/weft-bench-stream');
const CHUNK = 64 * 1024;
const CREDIT = 16;

/** One run of weft-bench-stream; resolves its JSON line. */
function run(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(BENCH, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    const t = setTimeout(() => p.kill('SIGKILL'), 120000);
    p.on('exit', (code) => {
      clearTimeout(t);
      try { resolve(JSON.parse(out)); } catch { reject(new Error(`weft-bench-stream ${args.join(' ')} exited ${code}: ${out}`)); }
    });
  });
}

/** Resolves once the server accepts a connection (it listens once started). */
async function listening(sock, child) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`weft serve exited ${child.exitCode}`);
    const ok = await new Promise((resolve) => {
      const s = net.createConnection(sock, () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 20));  // not up yet: try again shortly
  }
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 6000);
    child.once('exit', () => { clearTimeout(t); resolve(); });
    child.kill('SIGTERM');
  });
}

/** Markdown lines for the results (empty with a note when the binaries are missing). */
export async function runNativeStreams(cfg, log) {
  if (!fs.existsSync(WEFT) || !fs.existsSync(BENCH))
    return [`- native streaming row skipped: ${fs.existsSync(WEFT) ? BENCH : WEFT} missing`, ''];
  const bytes = cfg.streamBytes;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-bench-stream-'));
  const sock = path.join(dir, 's.sock');
  const server = spawn(WEFT, ['serve', '--unix', sock, '--codec', 'msgpack', '--demo'], { stdio: ['ignore', 'ignore', 'ignore'] });
  const weft = [], raw = [], ratio = [];
  try {
    await listening(sock, server);
    for (let rep = 0; rep < cfg.reps; rep++) {
      const order = rep % 2 ? ['raw', 'weft'] : ['weft', 'raw'];
      const r = {};
      for (const which of order)
        r[which] = (which === 'weft'
          ? await run(['weft', sock, String(bytes), String(CREDIT), String(CHUNK)])
          : await run(['floor', dir, String(bytes), String(CHUNK)])).rate;
      weft.push(r.weft); raw.push(r.raw); ratio.push(r.weft / r.raw);
      log(`native streams rep ${rep + 1}: weft ${(r.weft / 1e6).toFixed(0)} MB/s, raw ${(r.raw / 1e6).toFixed(0)} MB/s`);
    }
  } finally {
    await stop(server);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const mb = (v) => (v / 1e6).toFixed(0);
  return [
    `## native streaming: ${(bytes / 2 ** 20).toFixed(0)} MiB in 64 KiB MessagePack \`bin\` chunks over a Unix socket (target ≥ 1 GB/s)`,
    '',
    '| contender | MB/s | ÷ floor |',
    '| --- | ---: | ---: |',
    `| raw: write()/read() of the same bytes, 64 KiB at a time, no framing (floor) | ${mb(median(raw))} | (floor) |`,
    `| weft serve --codec msgpack \`bytes\` → weft::host::Client::stream, credit ${CREDIT} | ${mb(median(weft))} | ${median(ratio).toFixed(2)}× |`,
    '',
  ];
}
