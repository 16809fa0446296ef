// Shared helpers for the native-host integration tests (not a test file).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WEFT_BIN = process.env.WEFT_BIN || path.join(repoRoot, 'build', 'native-host', 'weft');
export const EXAMPLE_BIN =
  process.env.WEFT_EXAMPLE_BIN || path.join(path.dirname(WEFT_BIN), 'weft-embed-example');

export function tempDir() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'weft-host-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Rejects after `ms` with a message, so no wait is unbounded.
export function within(ms, promise, what = 'operation') {
  let t;
  const timeout = new Promise((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(t));
}

// ---- zstd (docs/framing.md "Compression") ----------------------------------
// The zstd frame magic number (RFC 8878 §3.1.1), and the zstd command-line
// tool: a compressor we did not write, run on `input` with `args`.
export const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
export function zstdTool(args, input) {
  const r = spawnSync('zstd', args, { input, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`zstd ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// docs/framing.md Z4, Z5 on any transport, after compression was agreed on
// it: `send(bytes)` sends one payload, `next()` resolves with the next answer
// as { msg }. A zstd bomb (1 MiB of spaces in under 1,000 bytes) is refused
// -32600 naming `bound`, a frame cut short -32700, each with id null, and
// the connection still answers after both.
export async function checkZstdRefusals({ send, next }, bound) {
  const bomb = zstdTool(['-c', '-q', '-19'], Buffer.alloc(1 << 20, 0x20));
  assert.ok(bomb.length < 1000);
  send(bomb);
  const a = (await next()).msg;
  assert.equal(a.id, null);
  assert.equal(a.error.code, -32600);
  assert.equal(a.error.message, `Invalid Request: decompressed frame exceeds ${bound} bytes (max_frame)`);
  const good = zstdTool(['-c', '-q'], Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'subtract', params: [5, 3] })));
  send(good.subarray(0, good.length - 2));
  const b = (await next()).msg;
  assert.equal(b.id, null);
  assert.equal(b.error.code, -32700);
  assert.match(b.error.message, /^Parse error: compressed frame: /);
  send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'subtract', params: [5, 3] })));
  assert.equal((await next()).msg.result, 2);
}

// ---- framing ---------------------------------------------------------------
export function encodeFrame(framing, payload) {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  switch (framing) {
    case 'lsp':
      return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
    case 'ndjson':
      return Buffer.concat([body, Buffer.from('\n')]);
    case 'len32be': {
      const h = Buffer.alloc(4);
      h.writeUInt32BE(body.length);
      return Buffer.concat([h, body]);
    }
    case 'len32le': {
      const h = Buffer.alloc(4);
      h.writeUInt32LE(body.length);
      return Buffer.concat([h, body]);
    }
    default:
      throw new Error(`framing ${framing}`);
  }
}

// Splits a byte stream into frames; `parse` turns a frame's payload into a
// message (JSON text unless told).
export class FrameDecoder {
  constructor(framing, onMessage, parse = (body) => JSON.parse(body.toString())) {
    this.framing = framing;
    this.onMessage = onMessage;
    this.parse = parse;
    this.buf = Buffer.alloc(0);
  }
  push(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      let body;
      if (this.framing === 'lsp') {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const m = /content-length:\s*(\d+)/i.exec(this.buf.subarray(0, end).toString());
        if (!m) throw new Error('bad LSP header from server');
        const n = Number(m[1]);
        if (this.buf.length < end + 4 + n) return;
        body = this.buf.subarray(end + 4, end + 4 + n);
        this.buf = this.buf.subarray(end + 4 + n);
      } else if (this.framing === 'ndjson') {
        const nl = this.buf.indexOf(10);
        if (nl < 0) return;
        body = this.buf.subarray(0, nl);
        this.buf = this.buf.subarray(nl + 1);
      } else {
        if (this.buf.length < 4) return;
        const n = this.framing === 'len32be' ? this.buf.readUInt32BE(0) : this.buf.readUInt32LE(0);
        if (this.buf.length < 4 + n) return;
        body = this.buf.subarray(4, 4 + n);
        this.buf = this.buf.subarray(4 + n);
      }
      this.onMessage(this.parse(body));
    }
  }
}

// A JSON-RPC client over a stream (socket or child stdio) with one framing.
export class RawClient {
  constructor(readable, writable, framing = 'len32be') {
    this.framing = framing;
    this.writable = writable;
    this.pending = new Map();
    this.unmatched = [];  // responses with id null or unknown id
    this.nextId = 1;
    this.closed = false;
    this.decoder = new FrameDecoder(framing, (msg) => this.#onMessage(msg));
    readable.on('data', (c) => this.decoder.push(c));
    readable.on('close', () => {
      this.closed = true;
      for (const [, p] of this.pending) p.reject(new Error('connection closed'));
      this.pending.clear();
    });
    this.waiters = [];
  }
  #onMessage(msg) {
    const list = Array.isArray(msg) ? msg : [msg];
    for (const m of list) {
      const p = m.id !== null && m.id !== undefined ? this.pending.get(m.id) : undefined;
      if (p) {
        this.pending.delete(m.id);
        p.resolve(m);
      } else {
        this.unmatched.push(m);
        for (const w of this.waiters.splice(0)) w();
      }
    }
  }
  // Resolves with the whole response object (result or error).
  request(method, params, id = this.nextId++) {
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    const p = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.writeRaw(encodeFrame(this.framing, JSON.stringify(msg)));
    return p;
  }
  notify(method, params) {
    const msg = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    this.writeRaw(encodeFrame(this.framing, JSON.stringify(msg)));
  }
  writeRaw(bytes) {
    this.writable.write(bytes);
  }
  // Waits until `n` responses without a matching request have arrived.
  async waitUnmatched(n, ms = 5000) {
    const deadline = Date.now() + ms;
    while (this.unmatched.length < n) {
      if (Date.now() > deadline) throw new Error(`expected ${n} unmatched responses, got ${this.unmatched.length}`);
      await within(deadline - Date.now() + 10, new Promise((r) => this.waiters.push(r)), 'waitUnmatched').catch(() => {});
    }
    return this.unmatched.splice(0, n);
  }
}

export function connectUnix(sockPath, framing = 'len32be') {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(sockPath);
    s.once('connect', () => resolve({ socket: s, client: new RawClient(s, s, framing) }));
    s.once('error', reject);
  });
}

export function connectTcp(port, framing = 'len32be') {
  return new Promise((resolve, reject) => {
    const s = net.createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => resolve({ socket: s, client: new RawClient(s, s, framing) }));
    s.once('error', reject);
  });
}

// ---- processes -------------------------------------------------------------
const children = new Set();

// Starts `weft serve ...`; resolves once it logged "listening on" (stderr).
export function startServer(args, { env = {}, bin = WEFT_BIN, ready = /listening on/ } = {}) {
  const child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.stderrText = '';
  child.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const up = new Promise((resolve, reject) => {
    const onData = (d) => {
      child.stderrText += d.toString();
      if (ready && ready.test(child.stderrText)) resolve(child);
    };
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before ready: ${child.stderrText}`)));
    if (!ready) resolve(child);
  });
  return within(10000, up, `start ${args.join(' ')}`).then(() => child);
}

// A child the test spawned itself: killAll() ends it too, so a failed test
// cannot leave it holding the test file open (its stdin still a pipe).
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function killAll() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {}
  }
  children.clear();
}

// Runs the CLI to completion: { code, stdout, stderr, ms }.
export function runCli(args, { env = {}, input, timeout = 20000, bin = WEFT_BIN } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`weft ${args.join(' ')} did not finish within ${timeout} ms; stderr: ${stderr}`));
    }, timeout);
    // 'close': the process exited and its stdout/stderr are drained.
    child.once('close', (code, signal) => {
      clearTimeout(t);
      children.delete(child);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/**
 * For a test file: a temporary folder and `weft serve --unix SOCK --demo`
 * started before its tests and stopped (with every other child) after them.
 * Returns { tmp, sock }.
 */
export function demoServerFixture(name) {
  const tmp = tempDir();
  const sock = path.join(tmp.dir, name);
  before(async () => { await startServer(['serve', '--unix', sock, '--demo']); });
  after(() => {
    killAll();
    tmp.cleanup();
  });
  return { tmp, sock };
}
