// `weft serve` limits against slow, idle and hostile clients (docs/reliability.md):
// each limit cuts off or refuses the offender, with the documented error, and
// the other clients keep being served.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { FrameDecoder, WEFT_BIN, connectTcp, connectUnix, encodeFrame, killAll, runCli, startServer, tempDir, within } from './helpers.mjs';

const tmp = tempDir();
after(() => {
  killAll();
  tmp.cleanup();
});
let n = 0;
const sockPath = () => path.join(tmp.dir, `l${++n}.sock`);

// Under ASan (WEFT_SANITIZED=1) freed memory sits in a quarantine: RSS bounds get 4x the room.
const SLACK = process.env.WEFT_SANITIZED === '1' ? 4 : 1;
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

// Resolves once the server's stderr matches `re` (it logs every cut-off).
function logged(srv, re, ms = 10000) {
  return within(
    ms,
    new Promise((resolve) => {
      const check = () => {
        if (re.test(srv.stderrText)) {
          srv.stderr.off('data', check);
          resolve();
        }
      };
      srv.stderr.on('data', check);
      check();
    }),
    `server log ${re}`,
  );
}

const closed = (socket) => new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', resolve)));

async function ping(p) {
  const { socket, client } = await connectUnix(p);
  try {
    return (await within(5000, client.request('rpc.ping'), 'ping')).result;
  } finally {
    socket.destroy();
  }
}

// A raw socket collecting the frames the server sends.
function rawUnix(p, framing = 'len32be') {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(p);
    const frames = [];
    const waiters = [];
    const dec = new FrameDecoder(framing, (m) => {
      frames.push(m);
      for (const w of waiters.splice(0)) w();
    });
    socket.on('data', (c) => dec.push(c));
    socket.on('error', () => {});
    socket.once('connect', () =>
      resolve({
        socket,
        frames,
        next: (what = 'frame') =>
          within(5000, new Promise((r) => (frames.length ? r() : waiters.push(r))), what).then(() => frames.shift()),
      }),
    );
    socket.once('error', reject);
  });
}

describe('weft serve limits', () => {
  test('slowloris: connections trickling a frame header are closed after --frame-timeout; others are served', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--framing', 'lsp', '--frame-timeout', '400']);
    const header = Buffer.from('Content-Length: 2\r\n\r\n');
    const tricklers = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const { socket } = await rawUnix(p, 'lsp');
        let i = 0;
        const t = setInterval(() => socket.write(header.subarray(i, ++i % header.length || 1)), 50);
        socket.once('close', () => clearInterval(t));
        return socket;
      }),
    );
    // A request written in three pieces, all within the timeout, is answered.
    const { socket, next } = await rawUnix(p, 'lsp');
    const frame = encodeFrame('lsp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }));
    socket.write(frame.subarray(0, 10));
    socket.write(frame.subarray(10, 30));
    socket.write(frame.subarray(30));
    assert.equal((await next('ping')).result.status, 'ok');
    await within(5000, Promise.all(tricklers.map(closed)), '40 tricklers closed');
    await logged(srv, /partial frame not completed within the frame read timeout; closing/);
    socket.destroy();
    srv.kill('SIGTERM');
    assert.deepEqual(await within(8000, srv.exited), { code: 0, signal: null });
  });

  test('a client that never reads its answers is closed after --write-timeout; others are served', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo', '--write-timeout', '500', '--max-output', '65536']);
    const base = rssKb(srv.pid);
    const { socket } = await rawUnix(p);
    socket.pause(); // reads nothing from now on
    const big = 'x'.repeat(32 * 1024);
    for (let i = 0; i < 300; i++)
      socket.write(encodeFrame('len32be', JSON.stringify({ jsonrpc: '2.0', id: i, method: 'echo', params: [big] })));
    await logged(srv, /client not reading\); closing/);
    assert.equal((await ping(p)).status, 'ok');
    assert.ok(rssKb(srv.pid) - base < 32 * 1024 * SLACK, 'queued output stays bounded by --max-output');
    socket.resume();
    await within(5000, closed(socket), 'the non-reader is disconnected');
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  test('a flood beyond --max-in-flight is answered -32003 at once, memory stays bounded', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo', '--max-in-flight', '8']);
    const base = rssKb(srv.pid);
    const { socket, client } = await connectUnix(p);
    // Eight calls that would run for a minute take every slot.
    const slow = Array.from({ length: 8 }, () => client.request('sleep', { ms: 60000 }));
    let slowDone = 0;
    for (const p of slow) p.then(() => slowDone++);
    const flood = Array.from({ length: 20000 }, () => client.request('sleep', { ms: 60000 }));
    const answers = await within(30000, Promise.all(flood), 'flood answered');
    for (const r of answers) assert.equal(r.error.code, -32003);
    assert.equal(slowDone, 0, 'every -32003 came while the admitted calls were still running');
    assert.ok(rssKb(srv.pid) - base < 32 * 1024 * SLACK, `RSS grew ${rssKb(srv.pid) - base} kB`);
    // The admitted ones are still served: cancelled, each answered -32800.
    slow.forEach((_, i) => client.notify('$/cancelRequest', { id: i + 1 }));
    for (const r of await within(5000, Promise.all(slow), 'admitted calls')) assert.equal(r.error.code, -32800);
    socket.destroy();
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  test('an oversized frame header is refused before its payload is read', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--max-message', '1000']);
    const base = rssKb(srv.pid);
    const len = await rawUnix(p);
    const h = Buffer.alloc(4);
    h.writeUInt32BE(0xfffffff0);
    len.socket.write(h); // a 4 GiB frame is announced; not one payload byte follows
    const r = await len.next('answer to the length prefix');
    assert.equal(r.id, null);
    assert.equal(r.error.code, -32600);
    assert.match(r.error.message, /exceeds max_frame 1000/);

    const srvLsp = await startServer(['serve', '--unix', `${p}.lsp`, '--framing', 'lsp', '--max-message', '1000']);
    const l = await rawUnix(`${p}.lsp`, 'lsp');
    l.socket.write('Content-Length: 99999999999\r\n\r\n');
    const r2 = await l.next('answer to the header');
    assert.equal(r2.error.code, -32600);
    assert.match(r2.error.message, /exceeds max_frame 1000/);
    assert.ok(rssKb(srv.pid) - base < 4096 * SLACK, 'no buffer grew');
    for (const s of [len.socket, l.socket]) s.destroy();
    srv.kill('SIGTERM');
    srvLsp.kill('SIGTERM');
    await within(8000, Promise.all([srv.exited, srvLsp.exited]));
  });

  test('connections beyond --max-connections get -32003 (id null) and are closed', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--max-connections', '3']);
    const held = await Promise.all([0, 1, 2].map(() => connectUnix(p)));
    for (const { client } of held) assert.equal((await within(5000, client.request('rpc.ping'))).result.status, 'ok');
    const extra = await rawUnix(p);
    const r = await extra.next('refusal');
    assert.deepEqual(r.error.code, -32003);
    assert.equal(r.id, null);
    assert.match(r.error.message, /too many connections \(max 3\)/);
    await within(5000, closed(extra.socket), 'refused socket closed');
    // `weft call` over the limit reports the server's -32003 as its error answer (exit 1),
    // not a write to the closed socket: the server lets the request in before it closes.
    for (let i = 0; i < 5; i++) {
      const r = await runCli(['call', '--unix', p, '--retries', '0', 'rpc.ping']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /-32003.*too many connections \(max 3\)/);
    }
    // A freed slot is usable again.
    held[0].socket.destroy();
    const { client } = held[1];
    for (let i = 0; ; i++) {
      const { result } = await within(5000, client.request('rpc.ping'));
      if (result.connections === 2) break;
      assert.ok(i < 1000, 'the closed connection is never released');
    }
    assert.equal((await ping(p)).status, 'ok');
    for (const h of held) h.socket.destroy();
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  test('weft call over --max-connections on TCP gets -32003 as its answer; a refused client holds no slot', async () => {
    const srv = await startServer(['serve', '--tcp', '127.0.0.1:0', '--max-connections', '1']);
    const port = Number(/listening on tcp:127\.0\.0\.1:(\d+)/.exec(srv.stderrText)[1]);
    const held = await connectTcp(port);
    assert.equal((await within(5000, held.client.request('rpc.ping'))).result.status, 'ok');
    for (let i = 0; i < 5; i++) {
      const r = await runCli(['call', '--tcp', `127.0.0.1:${port}`, '--retries', '0', 'rpc.ping']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /-32003.*too many connections \(max 1\)/);
    }
    // A refused client that never closes and keeps sending is closed within a second or so.
    const s = net.createConnection({ host: '127.0.0.1', port, allowHalfOpen: true });
    await new Promise((resolve) => s.once('connect', resolve));
    s.on('error', () => {});
    s.resume();
    const flood = setInterval(() => s.write(Buffer.alloc(1000)), 10);
    const t0 = Date.now();
    await within(5000, closed(s), 'refused socket closed');
    clearInterval(flood);
    assert.ok(Date.now() - t0 < 3000, `closed after ${Date.now() - t0} ms`);
    held.socket.destroy();
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  // Not against the sanitized build (WEFT_SANITIZED=1): UBSan's vptr check
  // opens a pipe to tell readable memory, so with no descriptor left it
  // reports the first virtual call of each type as a bad vptr, and stops the
  // server (its suppressions cannot help: matching them needs descriptors too).
  const sanitized = process.env.WEFT_SANITIZED === '1' && 'the sanitizers\' runtime needs descriptors of its own';
  test('out of file descriptors, a connection waiting to be accepted gets -32003 saying so, not silence', { skip: sanitized }, async () => {
    // The server runs with 40 descriptors; 60 clients connect and hold on.
    const p = sockPath();
    const srv = await startServer(['-c', 'ulimit -n 40 && exec "$0" serve --unix "$1" --demo', WEFT_BIN, p], { bin: 'sh' });
    const held = [];
    const refusals = [];
    for (let i = 0; i < 60; i++) {
      const s = net.createConnection(p);
      s.on('error', () => {});
      s.on('data', (d) => { if (/out of file descriptors/.test(String(d))) refusals.push(i); });
      held.push(s);
    }
    const r = await runCli(['call', '--unix', p, '--retries', '0', '--timeout', '5000', 'rpc.ping']);
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(JSON.parse(r.stderr), { code: -32003, message: 'Server overloaded: out of file descriptors' });
    assert.ok(refusals.length > 0, 'the held connections past the descriptors were refused too');
    for (const s of held) s.destroy();
    // Descriptors freed: served again.
    await within(5000, (async () => {
      for (;;) {
        const ok = await runCli(['call', '--unix', p, '--retries', '0', 'rpc.ping']);
        if (ok.code === 0) return;
        await new Promise((res) => setTimeout(res, 100));
      }
    })(), 'served again');
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  test('a server that answers and closes before reading the call: weft call still reports its answer, not the failed write', async () => {
    // The refusal, then the close, without reading what the client sends
    // (as a server that does not linger does): the client's write fails,
    // and the answer it had already received must still be what it reports.
    const p = sockPath();
    const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32003, message: 'Server overloaded: full' }, id: null });
    const srv = net.createServer((c) => { c.end(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`); c.destroy(); });
    await new Promise((resolve) => srv.listen(p, resolve));
    try {
      for (let i = 0; i < 20; i++) {
        const r = await runCli(['call', '--unix', p, '--framing', 'lsp', '--retries', '0', 'rpc.ping']);
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, /-32003.*Server overloaded: full/);
      }
    } finally { srv.close(); }
  });

  test('--idle-timeout closes a silent connection, not one with a call in flight', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo', '--idle-timeout', '300']);
    const silent = await connectUnix(p);
    const busy = await connectUnix(p);
    const answer = busy.client.request('sleep', { ms: 700 });
    await within(5000, closed(silent.socket), 'silent connection closed');
    assert.equal((await within(5000, answer)).result, 700, 'the call in flight is answered');
    await within(5000, closed(busy.socket), 'then it idles out too');
    await logged(srv, /idle for 300 ms; closing/);
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  test('SIGTERM exits within --grace even with 5000 calls cancelled and a stderr nobody reads', async () => {
    const p = sockPath();
    // 5,000 admitted (the default --max-in-flight is 1,000): all of them cancelled at SIGTERM.
    const srv = await startServer(['serve', '--unix', p, '--demo', '--grace', '1000', '--max-in-flight', '5000']);
    srv.stderr.pause(); // from now on the pipe fills up and is never drained
    srv.stderr.removeAllListeners('data');
    const { socket, client } = await connectUnix(p);
    const calls = Array.from({ length: 5000 }, () => client.request('sleep', { ms: 60000 }).catch((e) => e));
    await within(5000, client.request('rpc.ping').catch(() => {}), 'requests read');
    const t0 = Date.now();
    srv.kill('SIGTERM');
    assert.deepEqual(await within(4000, srv.exited, 'exit after SIGTERM'), { code: 0, signal: null });
    assert.ok(Date.now() - t0 < 3000, `exited after ${Date.now() - t0} ms`);
    assert.ok(!existsSync(p), 'socket file removed');
    socket.destroy();
    await Promise.all(calls);
  });

  test('SIGTERM with calls in flight: they finish, new connections are refused, the file is removed, exit 0', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo']);
    const clients = await Promise.all(Array.from({ length: 20 }, () => connectUnix(p)));
    const calls = clients.flatMap(({ client }) =>
      Array.from({ length: 10 }, (_, i) => client.request('sleep', { ms: 300 + i * 20 })),
    );
    await within(5000, clients[19].client.request('rpc.ping'));
    srv.kill('SIGTERM');
    await logged(srv, /received SIGTERM/);
    await assert.rejects(
      new Promise((resolve, reject) => {
        const s = net.createConnection(p, () => resolve(s));
        s.once('error', reject);
      }),
      /ECONNREFUSED|ENOENT/,
    );
    const answers = await within(5000, Promise.all(calls), 'in-flight calls');
    answers.forEach((r, i) => assert.equal(r.result, 300 + (i % 10) * 20));
    assert.deepEqual(await within(8000, srv.exited), { code: 0, signal: null });
    assert.ok(!existsSync(p));
    for (const c of clients) c.socket.destroy();
  });

  test('a batch longer than --max-batch runs nothing and answers each call -32600 with its id', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo', '--max-batch', '2']);
    const { socket, next } = await rawUnix(p);
    const call = (id) => ({ jsonrpc: '2.0', id, method: 'echo', params: [id] });
    socket.write(encodeFrame('len32be', JSON.stringify([call(1), { jsonrpc: '2.0', method: 'echo' }, call('b'), call(4)])));
    const why = 'Invalid Request: batch of 4 messages exceeds the limit of 2';
    assert.deepEqual(await next('refusal'), [1, 'b', 4].map((id) => ({ jsonrpc: '2.0', error: { code: -32600, message: why }, id })));
    socket.write(encodeFrame('len32be', JSON.stringify([call(5), call(6)])));
    assert.deepEqual((await next('a batch within the limit')).map((r) => r.result), [[5], [6]]);
    socket.destroy();
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  test('limit flags: bad values are usage errors (exit 2)', async () => {
    for (const args of [
      ['--max-in-flight', '0'],
      ['--max-message', 'lots'],
      ['--idle-timeout', '-1'],
      ['--write-timeout'],
    ]) {
      const r = await runCli(['serve', '--unix', sockPath(), ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, new RegExp(args[0]));
    }
    const help = await runCli(['serve', '--help']);
    for (const flag of ['--max-message', '--max-in-flight', '--max-batch', '--max-connections', '--max-output',
      '--frame-timeout', '--write-timeout', '--idle-timeout', '--grace'])
      assert.ok(help.stdout.includes(flag), flag);
  });
});
