// `weft serve --unix` driven by Node `net` clients (len32be unless stated):
// socket mode, stale-socket takeover, live socket not stolen, SIGTERM cleanup,
// 100 concurrent clients, frames larger than the read buffer, disconnect mid-request,
// bad frames on each framing, TCP.
import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { FrameDecoder, connectTcp, connectUnix, encodeFrame, killAll, runCli, sleep, startServer, tempDir, within } from './helpers.mjs';

const tmp = tempDir();
after(() => {
  killAll();
  tmp.cleanup();
});
let n = 0;
const sockPath = () => path.join(tmp.dir, `s${++n}.sock`);

async function ping(p, framing) {
  const { socket, client } = await connectUnix(p, framing);
  try {
    return await within(5000, client.request('rpc.ping'), 'ping');
  } finally {
    socket.destroy();
  }
}

describe('unix socket server', () => {
  test('socket file is created with mode 0600 and removed on SIGTERM', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo']);
    const st = statSync(p);
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o600);
    assert.equal((await ping(p)).result.status, 'ok');
    srv.kill('SIGTERM');
    assert.deepEqual(await within(5000, srv.exited), { code: 0, signal: null });
    assert.ok(!existsSync(p), 'socket file removed');
  });

  test('a stale socket left by a dead process is replaced', async () => {
    const p = sockPath();
    const first = await startServer(['serve', '--unix', p]);
    first.kill('SIGKILL');
    await within(5000, first.exited);
    assert.ok(existsSync(p), 'SIGKILL leaves the socket file behind');
    const second = await startServer(['serve', '--unix', p]);
    assert.match(second.stderrText, /stale/);
    assert.equal((await ping(p)).result.status, 'ok');
    second.kill('SIGTERM');
    await within(5000, second.exited);
  });

  test("a live server's socket is never stolen", async () => {
    const p = sockPath();
    const live = await startServer(['serve', '--unix', p]);
    const r = await runCli(['serve', '--unix', p]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /already listening/);
    assert.equal((await ping(p)).result.status, 'ok', 'first server still answers');
    // A path that is not a socket is not touched either.
    const f = path.join(tmp.dir, 'plain-file');
    writeFileSync(f, 'keep me');
    const r2 = await runCli(['serve', '--unix', f]);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /not a socket/);
    assert.ok(existsSync(f));
    live.kill('SIGTERM');
    await within(5000, live.exited);
  });

  test('SIGTERM: stops accepting, answers the in-flight request, removes the file', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo']);
    const { socket, client } = await connectUnix(p);
    const inflight = client.request('sleep', { ms: 400 });
    await sleep(100);
    srv.kill('SIGTERM');
    await sleep(100);
    // New connections are refused (listener closed) while the old one finishes.
    await assert.rejects(connectUnix(p));
    const res = await within(5000, inflight, 'in-flight sleep');
    assert.deepEqual(res, { jsonrpc: '2.0', id: 1, result: 400 });
    assert.deepEqual(await within(5000, srv.exited), { code: 0, signal: null });
    assert.ok(!existsSync(p));
    socket.destroy();
  });

  test('SIGTERM: the grace period is bounded (WEFT_GRACE_MS)', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo'], { env: { WEFT_GRACE_MS: '300' } });
    const { socket, client } = await connectUnix(p);
    const inflight = client.request('sleep', { ms: 20000 }).then(() => 'answered', (e) => e.message);
    await sleep(50);
    const t0 = Date.now();
    srv.kill('SIGTERM');
    assert.deepEqual(await within(5000, srv.exited), { code: 0, signal: null });
    assert.ok(Date.now() - t0 < 2000, 'stopped after the grace period, not after the sleep');
    assert.equal(await within(5000, inflight), 'connection closed');
    assert.ok(!existsSync(p));
    socket.destroy();
  });

  test('100 concurrent clients, each response matched by id', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo']);
    const clients = await Promise.all(Array.from({ length: 100 }, () => connectUnix(p)));
    await within(
      20000,
      Promise.all(
        clients.map(async ({ client }, c) => {
          const reqs = [];
          for (let i = 0; i < 20; i++) {
            const id = `c${c}-r${i}`;
            const params = i % 5 === 0 ? { ms: 20 + ((c + i) % 30) } : [c, i];
            reqs.push(client.request(i % 5 === 0 ? 'sleep' : 'sum', params, id).then((r) => {
              assert.equal(r.id, id);
              assert.equal(r.result, i % 5 === 0 ? params.ms : c + i);
            }));
          }
          await Promise.all(reqs);
          assert.equal(client.unmatched.length, 0);
        }),
      ),
      '100 clients',
    );
    const pong = await ping(p);
    assert.equal(pong.result.connections, 101);
    clients.forEach(({ socket }) => socket.destroy());
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
  });

  test('messages larger than the read buffer come back intact, pipelined', async () => {
    // The session reads 64 KiB at a time and grows its buffer after full
    // reads (up to 1 MiB): frames of every size around those steps, written
    // back to back, each echoed byte for byte and matched by id.
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo']);
    const { socket, client } = await connectUnix(p);
    const sizes = [10, 65536, 65600, 131072, 300000, 1048576, 2500000, 70000, 5];
    const replies = await within(
      20000,
      Promise.all(sizes.map((n, i) => client.request('echo', ['é'.repeat(i) + 'x'.repeat(n)], `big${i}`))),
      'echoes',
    );
    replies.forEach((r, i) => {
      assert.equal(r.id, `big${i}`);
      assert.equal(r.result[0], 'é'.repeat(i) + 'x'.repeat(sizes[i]));
    });
    socket.destroy();
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
  });

  test('a client that disconnects mid-request: others are served, nothing leaks', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo']);
    const t0 = Date.now();
    for (let i = 0; i < 20; i++) {
      const { socket, client } = await connectUnix(p);
      client.request('sleep', { ms: 10000 }).catch(() => {});
      if (i % 2) client.writeRaw(encodeFrame('len32be', '{"jsonrpc":"2.0","id":99,"met').subarray(0, 20));  // half a frame too
      await sleep(5);
      socket.destroy();
    }
    const { socket, client } = await connectUnix(p);
    assert.deepEqual(await within(5000, client.request('sum', [1, 2])), { jsonrpc: '2.0', id: 1, result: 3 });
    // The abandoned sleeps are cancelled with their connections (not left to
    // run for 10 s): soon only this connection remains.
    let conns;
    for (let i = 0; i < 100; i++) {
      conns = (await within(5000, client.request('rpc.ping'))).result.connections;
      if (conns === 1) break;
      await sleep(50);
    }
    assert.equal(conns, 1);
    assert.ok(Date.now() - t0 < 5000, 'abandoned requests did not linger');
    assert.equal(srv.exitCode, null);
    socket.destroy();
    srv.kill('SIGTERM');
    assert.equal((await within(5000, srv.exited)).code, 0);
  });

  test('a half-closed client (end() after writing) still gets its answers', async () => {
    const p = sockPath();
    const srv = await startServer(['serve', '--unix', p, '--demo']);
    const socket = net.createConnection({ path: p, allowHalfOpen: true });
    await within(5000, new Promise((r) => socket.once('connect', r)));
    const chunks = [];
    socket.on('data', (c) => chunks.push(c));
    const ended = new Promise((r) => socket.once('end', r));
    socket.end(Buffer.concat([
      encodeFrame('len32be', '{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":200}}'),
      encodeFrame('len32be', '{"jsonrpc":"2.0","id":2,"method":"sum","params":[1,2]}'),
    ]));
    await within(5000, ended, 'server closes after answering');
    const got = [];
    const dec = new FrameDecoder('len32be', (m) => got.push(m));
    dec.push(Buffer.concat(chunks));
    assert.deepEqual(got, [
      { jsonrpc: '2.0', id: 2, result: 3 },
      { jsonrpc: '2.0', id: 1, result: 200 },
    ]);
    socket.destroy();
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
  });
});

describe('bad frames on every framing', () => {
  for (const framing of ['lsp', 'ndjson', 'len32be', 'len32le']) {
    test(`${framing}: malformed and oversize frames get errors, the connection keeps serving`, async () => {
      const p = sockPath();
      const srv = await startServer(['serve', '--unix', p, '--demo', '--framing', framing]);
      const { socket, client } = await connectUnix(p, framing);
      client.writeRaw(encodeFrame(framing, '{"jsonrpc":"2.0","id":1,'));  // truncated JSON
      client.writeRaw(encodeFrame(framing, '[]'));  // empty batch
      client.writeRaw(encodeFrame(framing, '{"jsonrpc":"1.0","id":2,"method":"sum"}'));
      const bad = await client.waitUnmatched(3);
      assert.equal(bad[0].error.code, -32700);
      assert.equal(bad[0].id, null);
      assert.equal(bad[1].error.code, -32600);
      assert.equal(bad[2].error.code, -32600);
      assert.equal(bad[2].id, 2);
      assert.deepEqual(await within(5000, client.request('sum', [1, 1], 3)), { jsonrpc: '2.0', id: 3, result: 2 });
      // Oversize (> 10 MB): refused with -32600, id null, and skipped.
      const big = 10 * 1000 * 1000 + 10;
      if (framing === 'ndjson') {
        const line = Buffer.alloc(big, 0x20);
        line[0] = 0x5b;  // '['
        client.writeRaw(encodeFrame(framing, line));
      } else {
        const header = encodeFrame(framing, Buffer.alloc(0)).subarray(0, framing === 'lsp' ? undefined : 4);
        const head =
          framing === 'lsp'
            ? Buffer.from(`Content-Length: ${big}\r\n\r\n`)
            : (() => {
                const h = Buffer.from(header);
                framing === 'len32be' ? h.writeUInt32BE(big) : h.writeUInt32LE(big);
                return h;
              })();
        client.writeRaw(head);
        client.writeRaw(Buffer.alloc(big, 0x20));
      }
      const [over] = await client.waitUnmatched(1, 15000);
      assert.equal(over.error.code, -32600);
      assert.equal(over.id, null);
      assert.deepEqual(await within(10000, client.request('sum', [2, 3], 4)), { jsonrpc: '2.0', id: 4, result: 5 });
      socket.destroy();
      srv.kill('SIGTERM');
      assert.equal((await within(5000, srv.exited)).code, 0);
    });
  }
});

describe('tcp on loopback', () => {
  test('serve --tcp 127.0.0.1:0 and a net client', async () => {
    const srv = await startServer(['serve', '--tcp', '127.0.0.1:0', '--demo', '--framing', 'ndjson']);
    const port = Number(/tcp:127\.0\.0\.1:(\d+)/.exec(srv.stderrText)[1]);
    assert.ok(port > 0);
    const { socket, client } = await connectTcp(port, 'ndjson');
    assert.deepEqual(await within(5000, client.request('subtract', { minuend: 5, subtrahend: 8 })), { jsonrpc: '2.0', id: 1, result: -3 });
    const r = await runCli(['call', '--tcp', `127.0.0.1:${port}`, '--framing', 'ndjson', 'sum', '[1,2,3]']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), '6');
    socket.destroy();
    srv.kill('SIGTERM');
    assert.equal((await within(5000, srv.exited)).code, 0);
  });
});
