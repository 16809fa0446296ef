// Faults under load (docs/reliability.md): 100 concurrent clients on a Unix
// socket and on TCP (loopback), each with many calls in flight; some clients
// are processes killed with SIGKILL mid-request, some hang up half-way through
// a frame. Every call of every surviving client is answered exactly once, the
// server keeps serving, and its file descriptors and memory come back to where
// they were.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { connectTcp, connectUnix, encodeFrame, killAll, startServer, tempDir, within } from './helpers.mjs';

const tmp = tempDir();
const kids = new Set();
after(() => {
  for (const k of kids) k.kill('SIGKILL');
  killAll();
  tmp.cleanup();
});

const CLIENTS = 100;
const KILLED = 10; // child processes, SIGKILLed with calls in flight
const HALF_FRAME = 10; // hang up in the middle of a frame
const CALLS = 30; // in flight per client

// Under ASan (WEFT_SANITIZED=1, the test command's sanitizer step) freed
// memory is held in a quarantine, so RSS bounds get 4x the room; leaks are
// caught there by LeakSanitizer at the server's exit instead.
const SLACK = process.env.WEFT_SANITIZED === '1' ? 4 : 1;
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
// Sockets only: what a connection holds. (The event loop's own descriptors,
// e.g. the signal pipe, and a sanitizer's, are made lazily and are not connections.)
const sockets = (pid) => readdirSync(`/proc/${pid}/fd`).filter((fd) => {
  try { return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:'); } catch { return false; }
});
const fdCount = (pid) => sockets(pid).length;
const fdList = (pid) => readdirSync(`/proc/${pid}/fd`).map((fd) => { try { return `${fd}:${readlinkSync(`/proc/${pid}/fd/${fd}`)}`; } catch { return fd; } });

// A client in its own process: writes CALLS long requests, says "sent", waits to be killed.
const CHILD = `
import net from 'node:net';
const [kind, where] = process.argv.slice(-2);
const s = kind === 'unix' ? net.createConnection(where) : net.createConnection({ host: '127.0.0.1', port: Number(where) });
s.on('connect', () => {
  const frames = [];
  for (let i = 1; i <= ${CALLS}; i++) {
    const b = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sleep', params: { ms: 800 } }));
    const h = Buffer.alloc(4); h.writeUInt32BE(b.length); frames.push(h, b);
  }
  s.write(Buffer.concat(frames), () => process.stdout.write('sent\\n'));
});
s.on('data', () => {});
`;

function killedClient(kind, where) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, kind, String(where)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  kids.add(child);
  const exited = new Promise((r) => child.once('exit', (code, signal) => r(signal)));
  return within(
    10000,
    new Promise((resolve) => child.stdout.once('data', resolve)).then(() => {
      child.kill('SIGKILL');
      return exited;
    }),
    'killed client',
  ).finally(() => kids.delete(child));
}

// Every call answered once: the right answer, and nothing unmatched (a second
// answer to an id arrives after its first, so it would land in `unmatched`).
async function survivor(connect) {
  const { socket, client } = await connect();
  const calls = [];
  for (let i = 0; i < CALLS; i++) {
    if (i % 3 === 0) calls.push(client.request('sleep', { ms: (i * 7) % 50 }).then((r) => assert.equal(r.result, (i * 7) % 50)));
    else if (i % 3 === 1) calls.push(client.request('add', [i, 1]).then((r) => assert.equal(r.result, i + 1)));
    else calls.push(client.request('echo', [`c${i}`]).then((r) => assert.deepEqual(r.result, [`c${i}`])));
  }
  await within(20000, Promise.all(calls), 'survivor calls');
  // One more round trip after the last answer: a duplicate would be in by now.
  await within(5000, client.request('rpc.ping'), 'final ping');
  assert.deepEqual(client.unmatched, [], 'no response without a matching request');
  socket.destroy();
  return CALLS;
}

async function halfFrame(connect) {
  const { socket, client } = await connect();
  for (let i = 0; i < 5; i++) client.request('sleep', { ms: 500 }).catch(() => {});
  const frame = encodeFrame('len32be', JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'echo', params: ['half'] }));
  socket.write(frame.subarray(0, frame.length >> 1));
  socket.destroy();
}

// Waits (on server round trips, bounded) until `probe()` holds.
async function eventually(connect, probe, what) {
  const { socket, client } = await connect();
  try {
    for (let i = 0; i < 1000; i++) {
      await within(5000, client.request('sleep', { ms: 25 }));
      if (probe()) return;
    }
    assert.fail(`${typeof what === 'function' ? what() : what}: never`);
  } finally {
    socket.destroy();
  }
}

async function round(kind, where, connect) {
  const jobs = [];
  for (let c = 0; c < CLIENTS; c++) {
    if (c < KILLED) jobs.push(killedClient(kind, where).then((sig) => assert.equal(sig, 'SIGKILL')));
    else if (c < KILLED + HALF_FRAME) jobs.push(halfFrame(connect));
    else jobs.push(survivor(connect));
  }
  await Promise.all(jobs);
}

for (const kind of ['unix', 'tcp']) {
  describe(`faults under load (${kind})`, () => {
    test(`${CLIENTS} clients x ${CALLS} calls, ${KILLED} SIGKILLed, ${HALF_FRAME} cut mid-frame: survivors answered once, fds and RSS back to baseline`, async (t) => {
      const sock = path.join(tmp.dir, `faults-${kind}.sock`);
      const args = kind === 'unix' ? ['serve', '--unix', sock, '--demo'] : ['serve', '--tcp', '127.0.0.1:0', '--demo'];
      const srv = await startServer(args);
      let where = sock;
      if (kind === 'tcp') where = Number(/listening on tcp:127\.0\.0\.1:(\d+)/.exec(srv.stderrText)[1]);
      const connect = () => (kind === 'unix' ? connectUnix(where) : connectTcp(where));
      const fd0 = fdCount(srv.pid);
      const rss0 = rssKb(srv.pid);

      await round(kind, where, connect);
      await eventually(connect, () => fdCount(srv.pid) === fd0 + 1, () => `sockets back to baseline (+1 probe): ${fd0} -> ${fdList(srv.pid)}`);
      const rss1 = rssKb(srv.pid);
      await round(kind, where, connect);
      await eventually(connect, () => fdCount(srv.pid) === fd0 + 1, 'sockets back to baseline after round 2');
      const rss2 = rssKb(srv.pid);

      // The server keeps serving, and a second identical round costs no more memory.
      const { socket, client } = await connect();
      assert.equal((await within(5000, client.request('rpc.ping'))).result.status, 'ok');
      socket.destroy();
      t.diagnostic(`open sockets ${fd0} at start and after each round; RSS ${rss0} -> ${rss1} -> ${rss2} kB`);
      assert.ok(rss1 - rss0 < 48 * 1024 * SLACK, `RSS after round 1: +${rss1 - rss0} kB`);
      assert.ok(rss2 - rss1 < 8 * 1024 * SLACK, `RSS grew by ${rss2 - rss1} kB in round 2`);
      srv.kill('SIGTERM');
      assert.deepEqual(await within(8000, srv.exited), { code: 0, signal: null });
    });
  });
}
