// Native rows: stdio between two processes, a Unix socket and a WebSocket. The servers run
// as separate processes (weft serve, the C echo floor, a Node peer); the client
// for all of them is this Node process (len32be frames for weft and the floor;
// each peer's own client for the peers). A C client (weft-bench-pipelined)
// additionally checks the 1,000,000 calls/s target (bench/README.md) and the native RSS.
import { spawn, execFileSync } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureCall } from '../lib/measure.mjs';
import { alternate } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const WEFT = path.join(root, 'build/native-host/weft');
const PIPELINED = path.join(root, 'build/native-host/weft-bench-pipelined');
const ECHO = path.join(root, 'build/bench/echo');
const PEER = path.join(here, 'peer-server.mjs');
const BIG = 'x'.repeat(64 * 1024);
// The small call of every native row: add {"a":1,"b":2} -> 3 (weft serve --demo's `add`).
const ADD = { a: 1, b: 2 };

export const NATIVE_TRANSPORTS = {
  stdio: { label: 'stdio (2 processes)' },
  unix: { label: 'Unix socket' },
  'stdio-c': { label: 'stdio, C client' },
  'unix-c': { label: 'Unix socket, C client' },
  'stdio-lsp-c': { label: 'stdio LSP framing, C client' },
  ws: { label: 'WebSocket (loopback TCP)' },
};
const CLIENT = path.join(root, 'build/bench/client');

function buildEcho(log) {
  fs.mkdirSync(path.dirname(ECHO), { recursive: true });
  for (const [bin, c] of [[ECHO, 'echo.c'], [CLIENT, 'client.c']]) {
    const src = path.join(here, c);
    if (!fs.existsSync(bin) || fs.statSync(bin).mtimeMs < fs.statSync(src).mtimeMs) {
      execFileSync('cc', ['-O2', '-o', bin, src], { stdio: 'inherit' });
      log(`built ${bin}`);
    }
  }
}

/** One run of the C client; resolves its JSON line. */
function runC(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(CLIENT, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    const t = setTimeout(() => p.kill('SIGKILL'), 120000);
    p.on('exit', (code) => {
      clearTimeout(t);
      try { resolve(JSON.parse(out)); } catch { reject(new Error(`C client ${args.join(' ')} exited ${code}: ${out}`)); }
    });
  });
}

/** small/large × latency/throughput with the C client against `addr` (argv tail).
 *  opts: ['--lsp'] for LSP framing, ['--check'] to require "result":3 from a server (not the echo). */
async function measureC(addr, cfg, opts = []) {
  const r = {};
  for (const kind of ['small', 'large']) {
    const c = kind === 'large' ? cfg.large : cfg.small;
    const lat = await runC([...opts, kind, 'lat', String(c.latencyCalls), ...addr]);
    const thr = await runC([...opts, kind, 'thr', String(c.ms), String(c.inflight), ...addr]);
    r[kind] = { p50: lat.p50, p99: lat.p99, rate: thr.rate };
  }
  return r;
}

const request = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
function frame(str) {
  const n = Buffer.byteLength(str);
  const b = Buffer.allocUnsafe(4 + n);
  b.writeUInt32BE(n, 0);
  b.write(str, 4);
  return b;
}

/** len32be client. mode 'raw': prebuilt frames, answers matched in order, not parsed.
 *  mode 'json': a minimal JSON-RPC client (ids, JSON.parse of every answer). */
function len32Client(readable, writable, mode) {
  let buf = Buffer.alloc(0);
  const fifo = [];
  let head = 0;
  const pending = new Map();
  let nextId = 1;
  readable.on('data', (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let off = 0;
    while (buf.length - off >= 4) {
      const n = buf.readUInt32BE(off);
      if (buf.length - off - 4 < n) break;
      if (mode === 'raw') {
        const r = fifo[head]; fifo[head++] = undefined;
        if (head === fifo.length) { fifo.length = 0; head = 0; }
        r();
      } else {
        const m = JSON.parse(buf.toString('utf8', off + 4, off + 4 + n));
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (p) { if (m.error) p.reject(new Error(m.error.message)); else p.resolve(m.result); }
      }
      off += 4 + n;
    }
    buf = off === buf.length ? Buffer.alloc(0) : buf.subarray(off);
  });
  let corked = false;
  const write = (b) => {
    if (!corked) { corked = true; writable.cork(); process.nextTick(() => { corked = false; writable.uncork(); }); }
    writable.write(b);
  };
  if (mode === 'raw') {
    const small = frame(request(1, 'add', ADD));
    const large = frame(request(1, 'echo', [BIG]));
    const send = (f) => new Promise((r) => { fifo.push(r); write(f); });
    return { small: () => send(small), large: () => send(large) };
  }
  const call = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    write(frame(request(id, method, params)));
  });
  return { small: () => call('add', ADD), large: () => call('echo', [BIG]) };
}

function ndjsonClient(sock) {
  return import('json-rpc-2.0').then(({ JSONRPCClient }) => {
    let corked = false;
    const c = new JSONRPCClient((req) => {
      if (!corked) { corked = true; sock.cork(); process.nextTick(() => { corked = false; sock.uncork(); }); }
      sock.write(JSON.stringify(req) + '\n');
    });
    let s = '';
    sock.setEncoding('utf8');
    sock.on('data', (chunk) => {
      s += chunk;
      let i;
      while ((i = s.indexOf('\n')) >= 0) { const line = s.slice(0, i); s = s.slice(i + 1); c.receive(JSON.parse(line)); }
    });
    return { small: () => c.request('add', ADD), large: () => c.request('echo', [BIG]) };
  });
}

// WebSocket rows: every server is driven by the same client, npm json-rpc-2.0's
// JSONRPCClient over npm ws (one message per text frame); "weft-rpc client" is
// weft's own (webSocketTransport) against weft serve --ws.
const WS_SERVERS = {
  'raw ws (canned answers)': () => spawn(process.execPath, [PEER, 'raw-ws'], { stdio: ['ignore', 'pipe', 'inherit'] }),
  'weft serve --ws': () => spawn(WEFT, ['serve', '--ws', '127.0.0.1:0', '--demo'], { stdio: ['ignore', 'ignore', 'pipe'] }),
  'weft serve --ws, weft-rpc client': () => spawn(WEFT, ['serve', '--ws', '127.0.0.1:0', '--demo'], { stdio: ['ignore', 'ignore', 'pipe'] }),
  'json-rpc-2.0 (ws)': () => spawn(process.execPath, [PEER, 'jsonrpc-ws'], { stdio: ['ignore', 'pipe', 'inherit'] }),
};

async function openWs(name, fn) {
  const child = WS_SERVERS[name]();
  const out = child.stdout ?? child.stderr;
  const url = await new Promise((resolve, reject) => {
    let s = '';
    out.on('data', (d) => { s += d; const m = /(ws:\/\/127\.0\.0\.1:\d+)/.exec(s); if (m) resolve(m[1]); });
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}: ${s}`)));
  });
  const { default: WebSocket } = await import('ws');
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  let c;
  let peer = null;
  if (name.endsWith('weft-rpc client')) {
    const weft = await import('../../js/index.js');
    await weft.ready;
    peer = new weft.Peer(weft.webSocketTransport(ws));
    c = { small: () => peer.request('add', ADD), large: () => peer.request('echo', [BIG]) };
  } else {
    const { JSONRPCClient } = await import('json-rpc-2.0');
    const client = new JSONRPCClient((req) => ws.send(JSON.stringify(req)));
    ws.on('message', (d) => client.receive(JSON.parse(d.toString())));
    c = { small: () => client.request('add', ADD), large: () => client.request('echo', [BIG]) };
  }
  try { return await fn(c); } finally {
    if (peer) peer.destroy(); else ws.close();
    await stopChild(child);
  }
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 6000);
    child.once('exit', () => { clearTimeout(t); resolve(); });
    child.kill('SIGTERM');
  });
}

async function connectUnix(p, child) {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error('server exited early');
    try {
      return await new Promise((resolve, reject) => {
        const s = net.createConnection(p);
        s.once('connect', () => { s.off('error', reject); resolve(s); });
        s.once('error', reject);
      });
    } catch { await new Promise((r) => setTimeout(r, 50)); }
  }
  throw new Error('could not connect to ' + p);
}

const STDIO = {
  'C echo': () => spawn(ECHO, ['stdio'], { stdio: ['pipe', 'pipe', 'inherit'] }),
  'weft serve --stdio': () => spawn(WEFT, ['serve', '--stdio', '--framing', 'len32be', '--demo'], { stdio: ['pipe', 'pipe', 'ignore'] }),
  'vscode-jsonrpc': () => spawn(process.execPath, [PEER, 'vscode-stdio'], { stdio: ['pipe', 'pipe', 'inherit'] }),
};

async function openStdio(name, fn) {
  const child = STDIO[name]();
  let c;
  let conn = null;
  if (name === 'vscode-jsonrpc') {
    const rpc = await import('vscode-jsonrpc/node.js');
    conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
    conn.listen();
    // One params object (not spread): vscode-jsonrpc sends it as `params` by name, like the others.
    c = { small: () => conn.sendRequest('add', ADD), large: () => conn.sendRequest('echo', [BIG]) };
  } else {
    c = len32Client(child.stdout, child.stdin, name === 'C echo' ? 'raw' : 'json');
  }
  try { return await fn(c); } finally {
    if (conn) conn.dispose();
    child.stdin.end();
    await stopChild(child);
  }
}

async function openUnix(name, dir, fn) {
  const sock = path.join(dir, name.replace(/\W+/g, '_') + '.sock');
  const child = name === 'C echo' ? spawn(ECHO, ['unix', sock], { stdio: 'inherit' })
    : name === 'weft serve --unix' ? spawn(WEFT, ['serve', '--unix', sock, '--demo'], { stdio: ['ignore', 'ignore', 'ignore'] })
      : spawn(process.execPath, [PEER, 'jsonrpc-net', sock], { stdio: 'inherit' });
  try {
    const s = await connectUnix(sock, child);
    const c = name === 'json-rpc-2.0 (net, ndjson)' ? await ndjsonClient(s)
      : len32Client(s, s, name === 'C echo' ? 'raw' : 'json');
    try { return await fn(c, sock, child); } finally { s.destroy(); }
  } finally { await stopChild(child); }
}

/** Only the server: the C echo serves one connection at a time, so no Node connection stays open. */
async function unixServer(name, dir, fn) {
  const sock = path.join(dir, name.replace(/\W+/g, '_') + '-c.sock');
  const child = name === 'C echo' ? spawn(ECHO, ['unix', sock], { stdio: 'inherit' })
    : spawn(WEFT, ['serve', '--unix', sock, '--demo'], { stdio: ['ignore', 'ignore', 'ignore'] });
  try {
    (await connectUnix(sock, child)).destroy();
    return await fn(sock);
  } finally { await stopChild(child); }
}

function rssKiB(pid) {
  try { return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]); } catch { return NaN; }
}

function cClient(sock, n, window) {
  return new Promise((resolve) => {
    const p = spawn(PIPELINED, [sock, String(n), String(window)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    const t = setTimeout(() => p.kill('SIGKILL'), 120000);
    p.on('exit', () => { clearTimeout(t); const m = /([\d.]+) calls\/s/.exec(out); resolve({ rate: m ? Number(m[1]) : NaN, out: out.trim() }); });
  });
}

/** The WebSocket rows (also alone: node bench/run.mjs --only ws). */
export async function runWs(cfg, log, results = {}, notes = []) {
  if (!fs.existsSync(WEFT)) {
    notes.push(`WebSocket rows skipped: ${WEFT} missing`);
    return { results, notes };
  }
  // WebSocket: weft serve --ws against json-rpc-2.0 over npm ws, same client, same run.
  const names = Object.keys(WS_SERVERS);
  results.ws = {};
  for (const n of names) results.ws[n] = { small: [], large: [] };
  for (let rep = 0; rep < cfg.reps; rep++) {
    for (const name of alternate(names, rep)) {
      await openWs(name, async (c) => {
        const v = await c.small();
        if (v !== 3) throw new Error(`${name}: add {"a":1,"b":2} answered ${JSON.stringify(v)}, not 3`);
        for (const kind of ['small', 'large']) {
          const r = await measureCall(c[kind], kind === 'large' ? cfg.large : cfg.small);
          results.ws[name][kind].push(r);
          log(`${NATIVE_TRANSPORTS.ws.label} rep ${rep + 1} ${name} ${kind}: p50 ${r.p50.toFixed(1)} µs, p99 ${r.p99.toFixed(1)} µs, ${Math.round(r.rate)} calls/s`);
        }
      });
    }
  }
  const per = (name, k) => results.ws[name].small.map((x) => x[k]);
  const ratio = (w, v) => { const r = w.slice(0, v.length).map((x, i) => x / v[i]).sort((p, q) => p - q); return r[r.length >> 1]; };
  const thr = ratio(per('weft serve --ws', 'rate'), per('json-rpc-2.0 (ws)', 'rate'));
  const p50 = ratio(per('weft serve --ws', 'p50'), per('json-rpc-2.0 (ws)', 'p50'));
  notes.push(`WebSocket small call (add), weft serve --ws ÷ json-rpc-2.0 over npm ws, both driven by the same json-rpc-2.0 client over npm ws, median of ${cfg.reps} per-repetition ratios: ` +
    `throughput **${thr.toFixed(2)}×**, p50 **${p50.toFixed(2)}×** (lower is better)`);
  return { results, notes };
}

export async function runNative(cfg, log) {
  const notes = [];
  const memory = [];
  if (!fs.existsSync(WEFT)) {
    notes.push(`native rows skipped: ${WEFT} missing (build: cmake -S . -B build -G Ninja && cmake --build build -j2)`);
    return { results: {}, notes, memory: [] };
  }
  buildEcho(log);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-bench-'));
  const results = { stdio: {}, unix: {} };
  const sets = {
    stdio: ['C echo', 'weft serve --stdio', 'vscode-jsonrpc'],
    unix: ['C echo', 'weft serve --unix', 'json-rpc-2.0 (net, ndjson)'],
  };
  try {
    for (const [tk, names] of Object.entries(sets)) {
      for (const n of names) results[tk][n] = { small: [], large: [] };
      for (let rep = 0; rep < cfg.reps; rep++) {
        for (const name of alternate(names, rep)) {
          const open = tk === 'stdio' ? (f) => openStdio(name, f) : (f) => openUnix(name, dir, f);
          await open(async (c) => {
            // Every contender answers the same call: add {"a":1,"b":2} -> 3 (the floor only echoes).
            if (name !== 'C echo') {
              const v = await c.small();
              if (v !== 3) throw new Error(`${name}: add {"a":1,"b":2} answered ${JSON.stringify(v)}, not 3`);
            }
            for (const kind of ['small', 'large']) {
              const r = await measureCall(c[kind], kind === 'large' ? cfg.large : cfg.small);
              results[tk][name][kind].push(r);
              log(`${NATIVE_TRANSPORTS[tk].label} rep ${rep + 1} ${name} ${kind}: p50 ${r.p50.toFixed(1)} µs, p99 ${r.p99.toFixed(1)} µs, ${Math.round(r.rate)} calls/s`);
            }
          });
        }
      }
    }
    await runWs(cfg, log, results, notes);

    // The same rows with the C client (build/bench/client): the server's figures without a JS client.
    // stdio-lsp-c: weft and the vscode-jsonrpc server both driven by the same C client (LSP framing).
    const cSets = {
      'stdio-c': ['C echo', 'weft serve --stdio'],
      'unix-c': ['C echo', 'weft serve --unix'],
      'stdio-lsp-c': ['C echo', 'weft serve --stdio', 'vscode-jsonrpc'],
    };
    const lspAddr = {
      'C echo': ['exec', ECHO, 'stdio-lsp'],
      'weft serve --stdio': ['exec', WEFT, 'serve', '--stdio', '--framing', 'lsp', '--demo'],
      'vscode-jsonrpc': ['exec', process.execPath, PEER, 'vscode-stdio'],
    };
    for (const [tk, names] of Object.entries(cSets)) {
      results[tk] = {};
      for (const n of names) results[tk][n] = { small: [], large: [] };
      for (let rep = 0; rep < cfg.reps; rep++) {
        for (const name of alternate(names, rep)) {
          let r;
          const check = name === 'C echo' ? [] : ['--check'];
          if (tk === 'stdio-c') {
            const addr = name === 'C echo' ? ['exec', ECHO, 'stdio'] : ['exec', WEFT, 'serve', '--stdio', '--framing', 'len32be', '--demo'];
            r = await measureC(addr, cfg, check);
          } else if (tk === 'stdio-lsp-c') {
            r = await measureC(lspAddr[name], cfg, ['--lsp', ...check]);
          } else {
            r = await unixServer(name, dir, (sock) => measureC(['unix', sock], cfg, check));
          }
          for (const kind of ['small', 'large']) {
            results[tk][name][kind].push(r[kind]);
            log(`${NATIVE_TRANSPORTS[tk].label} rep ${rep + 1} ${name} ${kind}: p50 ${r[kind].p50.toFixed(1)} µs, p99 ${r[kind].p99.toFixed(1)} µs, ${Math.round(r[kind].rate)} calls/s`);
          }
        }
      }
    }
    {
      // stdio target (weft ≥ 20× vscode-jsonrpc small-call throughput), per repetition, three ways:
      // (a) weft driven from Node (this process's minimal len32be client) ÷ vscode-jsonrpc driven by its
      //     own Node client: the same client language;
      // (b) weft driven by the C client ÷ vscode-jsonrpc driven by its own Node client (the verdict);
      // (c) both servers driven by the same C client with LSP framing (row "stdio LSP framing, C client").
      const rates = (tk, name) => results[tk][name].small.map((x) => x.rate);
      const ratio = (w, v) => {
        const r = w.slice(0, v.length).map((x, i) => x / v[i]).sort((p, q) => p - q);
        return { m: r[r.length >> 1], n: r.length };
      };
      const v = rates('stdio', 'vscode-jsonrpc');
      const a = ratio(rates('stdio', 'weft serve --stdio'), v);
      const b = ratio(rates('stdio-c', 'weft serve --stdio'), v);
      const c = ratio(rates('stdio-lsp-c', 'weft serve --stdio'), rates('stdio-lsp-c', 'vscode-jsonrpc'));
      notes.push(`stdio small-call throughput, weft ÷ vscode-jsonrpc, median of ${a.n} per-repetition ratios: ` +
        `(a) weft driven from Node ÷ vscode-jsonrpc driven by its own Node client (same client language): **${a.m.toFixed(1)}×**; ` +
        `(b) weft driven by the C client ÷ vscode-jsonrpc driven by its own Node client: **${b.m.toFixed(1)}×**; ` +
        `(c) both servers driven by the same C client (LSP framing): **${c.m.toFixed(1)}×**. ` +
        `The ≥ 20× target verdict uses (b): **${b.m >= 20 ? 'met' : 'missed'}** ((a) ${a.m >= 20 ? 'met' : 'missed'}, (c) ${c.m >= 20 ? 'met' : 'missed'})`);
    }

    // C client, one connection, 256 in flight: the 1,000,000 calls/s target and the RSS check.
    // (weft-bench-pipelined checks every answer is result 3, so it cannot run against the echo.)
    if (fs.existsSync(PIPELINED)) {
      const calls = cfg.heapCalls;
      const rates = [];
      let rss = null;
      for (let rep = 0; rep < cfg.reps; rep++) {
        await openUnix('weft serve --unix', dir, async (c, sock, child) => {
          const before = rssKiB(child.pid);
          const r = await cClient(sock, calls, 256);
          const mid = rssKiB(child.pid);
          rates.push(r.rate);
          log(`C client (weft-bench-pipelined, window 256) vs weft serve --unix: ${r.out}; RSS ${before} -> ${mid} KiB`);
          if (!rss) {
            // A second run on the same server: flat RSS means no growth between the two.
            const r2 = await cClient(sock, calls, 256);
            rss = { before, mid, after: rssKiB(child.pid) };
            log(`second run on the same server: ${r2.out}; RSS ${rss.mid} -> ${rss.after} KiB`);
          }
        });
      }
      const med = rates.slice().sort((a, b) => a - b)[rates.length >> 1];
      notes.push(`Unix socket, C client (\`weft-bench-pipelined SOCK ${calls} 256\`: add {"a":1,"b":2}, one connection, 256 in flight), median of ${cfg.reps}: **weft ${Math.round(med).toLocaleString('en-US')} calls/s** (target ≥ 1,000,000: ${med >= 1000000 ? 'met' : 'missed'})`);
      memory.push(`weft serve --unix RSS: fresh ${rss.before} KiB → ${rss.mid} KiB after ${calls.toLocaleString('en-US')} calls → ${rss.after} KiB after ${calls.toLocaleString('en-US')} more on a second connection (growth in the second run: ${rss.after - rss.mid} KiB)`);
    } else {
      notes.push(`${PIPELINED} missing: the C-client 1,000,000 calls/s check was not run`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { results, notes, memory };
}
