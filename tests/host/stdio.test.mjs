// `weft serve --stdio` driven by vscode-jsonrpc (the LSP client library):
// calls, notifications, errors, 1,000 concurrent requests, cancellation; plus
// raw-byte checks of docs/framing.md: stdout discipline (S1), limits (F2),
// read timeout (F3), EOF (F4, S3).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, afterEach, describe, test } from 'node:test';
import rpc from 'vscode-jsonrpc/node.js';

import { FrameDecoder, WEFT_BIN, encodeFrame, killAll, sleep, within } from './helpers.mjs';

const { StreamMessageReader, StreamMessageWriter, createMessageConnection, CancellationTokenSource } = rpc;

function startStdio(extraArgs = [], env = {}) {
  const child = spawn(WEFT_BIN, ['serve', '--stdio', '--demo', ...extraArgs], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderrText = '';
  child.stderr.on('data', (d) => (child.stderrText += d));
  child.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

// Resolves once `done()` holds, checked again each time the child writes
// (an event, not a poll: its own listeners, registered first, have updated
// what `done` reads); fails after `ms`, a bound, not a synchronisation.
function until(child, done, what, ms = 10000) {
  return within(ms, new Promise((resolve) => {
    const check = () => {
      if (!done()) return;
      child.stdout.off('data', check);
      child.stderr.off('data', check);
      resolve();
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    check();
  }), what);
}

const live = [];
function lspClient(extraArgs, env) {
  const child = startStdio(extraArgs, env);
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  conn.listen();
  live.push({ child, conn });
  return { child, conn };
}

afterEach(() => {
  for (const { child, conn } of live.splice(0)) {
    conn.dispose();
    child.kill('SIGKILL');
  }
});
after(() => killAll());

describe('stdio with vscode-jsonrpc', () => {
  test('calls: positional and named params, builtins', async () => {
    const { conn } = lspClient();
    assert.equal(await within(5000, conn.sendRequest('subtract', 42, 23)), 19);
    assert.equal(await conn.sendRequest('subtract', { minuend: 42, subtrahend: 23 }), 19);
    assert.equal(await conn.sendRequest('sum', 1, 2, 4), 7);
    assert.deepEqual(await conn.sendRequest('get_data'), ['hello', 5]);
    assert.deepEqual(await conn.sendRequest('echo', { a: [1, 'x', null] }), { a: [1, 'x', null] });
    const ping = await conn.sendRequest('rpc.ping');
    assert.equal(ping.status, 'ok');
    assert.equal(typeof ping.uptime_ms, 'number');
    assert.equal(typeof ping.version, 'string');
    const doc = await conn.sendRequest('rpc.discover');
    assert.match(doc.openrpc, /^1\./);
    const names = doc.methods.map((m) => m.name);
    for (const n of ['subtract', 'sum', 'update', 'notify_hello', 'notify_sum', 'get_data', 'echo', 'fail', 'sleep', 'rpc.ping', 'rpc.discover'])
      assert.ok(names.includes(n), `rpc.discover lists ${n}`);
    const sleepDoc = doc.methods.find((m) => m.name === 'sleep');
    assert.deepEqual(sleepDoc.params.map((p) => [p.name, p.schema.type]), [['ms', 'integer']]);
  });

  test('notifications are never answered; the stream keeps going', async () => {
    const { conn } = lspClient();
    const stray = [];
    conn.onUnhandledNotification((n) => stray.push(n));
    await conn.sendNotification('update', 1, 2, 3);
    await conn.sendNotification('notify_hello', 7);
    await conn.sendNotification('no_such_notification', {});
    assert.equal(await within(5000, conn.sendRequest('sum', 1, 1)), 2);
    assert.deepEqual(stray, []);
  });

  test('errors: unknown method, invalid params, application error', async () => {
    const { conn } = lspClient();
    await assert.rejects(conn.sendRequest('nope'), (e) => e.code === -32601);
    await assert.rejects(conn.sendRequest('subtract', 'a', 1), (e) => e.code === -32602);
    await assert.rejects(conn.sendRequest('sleep', { ms: 'soon' }), (e) => e.code === -32602);
    await assert.rejects(conn.sendRequest('sleep', {}), (e) => e.code === -32602);
    await assert.rejects(conn.sendRequest('sleep', { ms: -5 }), (e) => e.code === -32602);
    await assert.rejects(conn.sendRequest('fail', { code: -32042, message: 'nope', data: { why: 1 } }), (e) => {
      assert.equal(e.code, -32042);
      assert.equal(e.message, 'nope');
      assert.deepEqual(e.data, { why: 1 });
      return true;
    });
  });

  test('1,000 concurrent requests, answered as they complete', async () => {
    const { conn } = lspClient();
    const calls = [];
    for (let i = 0; i < 1000; i++) {
      calls.push(i % 10 === 0 ? conn.sendRequest('sleep', { ms: 50 + (i % 7) * 10 }) : conn.sendRequest('sum', i, 1));
    }
    const results = await within(20000, Promise.all(calls), '1000 requests');
    for (let i = 0; i < 1000; i++) assert.equal(results[i], i % 10 === 0 ? 50 + (i % 7) * 10 : i + 1);
    // Sleeps do not block: a long sleep does not delay a quick call behind it.
    const slow = conn.sendRequest('sleep', { ms: 1500 });
    const t0 = Date.now();
    assert.equal(await conn.sendRequest('sum', 2, 2), 4);
    assert.ok(Date.now() - t0 < 1000, 'quick call answered while sleep runs');
    assert.equal(await within(5000, slow), 1500);
  });

  test('cancellation: $/cancelRequest ends a sleep with -32800 at once', async () => {
    const { conn } = lspClient();
    const source = new CancellationTokenSource();
    const t0 = Date.now();
    const p = conn.sendRequest('sleep', { ms: 10000 }, source.token);
    await sleep(100);
    source.cancel();
    await assert.rejects(within(3000, p), (e) => e.code === -32800);
    assert.ok(Date.now() - t0 < 3000);
    // Many cancelled at once, the rest still served.
    const sources = [];
    const ps = [];
    for (let i = 0; i < 50; i++) {
      const s = new CancellationTokenSource();
      sources.push(s);
      ps.push(conn.sendRequest('sleep', { ms: 10000 }, s.token).then(() => 'done', (e) => e.code));
    }
    await sleep(50);
    sources.forEach((s) => s.cancel());
    const codes = await within(5000, Promise.all(ps));
    assert.ok(codes.every((c) => c === -32800));
    assert.equal(await conn.sendRequest('rpc.ping').then((r) => r.status), 'ok');
  });

  test('ndjson, len32be and len32le framings over stdio (raw)', async () => {
    for (const framing of ['ndjson', 'len32be', 'len32le']) {
      const child = startStdio(['--framing', framing]);
      live.push({ child, conn: { dispose() {} } });
      const got = [];
      const dec = new FrameDecoder(framing, (m) => got.push(m));
      child.stdout.on('data', (c) => dec.push(c));
      child.stdin.write(encodeFrame(framing, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sum', params: [20, 22] })));
      await until(child, () => got.length >= 1, `the ${framing} answer`);
      assert.deepEqual(got, [{ jsonrpc: '2.0', id: 1, result: 42 }], framing);
    }
  });
});

describe('docs/framing.md: stdout discipline, limits, read timeout, EOF', () => {
  function rawServer(env) {
    const child = startStdio([], env);
    live.push({ child, conn: { dispose() {} } });
    child.stdoutBytes = Buffer.alloc(0);
    child.got = [];
    const dec = new FrameDecoder('lsp', (m) => child.got.push(m));
    child.stdout.on('data', (c) => {
      child.stdoutBytes = Buffer.concat([child.stdoutBytes, c]);
      dec.push(c);
    });
    // Waits for the n-th line matching `re` on stderr (the server's log).
    child.waitForLog = (re, n = 1) =>
      until(child, () => (child.stderrText.match(new RegExp(re, 'g')) || []).length >= n, `log line ${n} ${re}`);
    child.waitFor = async (n, ms = 5000) => {
      const deadline = Date.now() + ms;
      while (child.got.length < n) {
        if (Date.now() > deadline) throw new Error(`waited for ${n} messages, have ${JSON.stringify(child.got)}; stderr ${child.stderrText}`);
        await sleep(10);
      }
      return child.got;
    };
    return child;
  }

  test('stdout carries only frames; logs go to stderr', async () => {
    const child = rawServer();
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}'));
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":2,"method":"nope"}'));
    child.stdin.write(encodeFrame('lsp', '{not json'));
    child.stdin.write('Content-Length: 21\r\nContent-Type: text/plain\r\n\r\n{"jsonrpc":"2.0","x"}');
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":3,"method":"sum","params":[1,2]}'));
    child.stdin.end();
    const { code } = await within(5000, child.exited, 'exit at EOF');
    assert.equal(code, 0);
    const got = await child.waitFor(5);
    assert.equal(got[0].result.status, 'ok');
    assert.equal(got[1].error.code, -32601);
    assert.equal(got[2].error.code, -32700);
    assert.equal(got[2].id, null);
    assert.equal(got[3].error.code, -32600);
    assert.deepEqual(got[4], { jsonrpc: '2.0', id: 3, result: 3 });
    // Every stdout byte belongs to a frame: re-encoding the messages' count of
    // headers equals the number of "Content-Length" occurrences, nothing else.
    const text = child.stdoutBytes.toString();
    assert.equal(text.split('Content-Length: ').length - 1, 5);
    assert.match(text, /^Content-Length: /);
    assert.match(child.stderrText, /listening on stdio/);
  });

  test('oversize Content-Length is refused with -32600 and the stream continues', async () => {
    const child = rawServer();
    const big = 10 * 1000 * 1000 + 1;
    child.stdin.write(`Content-Length: ${big}\r\n\r\n`);
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let left = big;
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      if (!child.stdin.write(chunk.subarray(0, n))) await new Promise((r) => child.stdin.once('drain', r));
      left -= n;
    }
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":9,"method":"sum","params":[4,5]}'));
    const got = await child.waitFor(2, 15000);
    assert.equal(got[0].error.code, -32600);
    assert.equal(got[0].id, null);
    assert.deepEqual(got[1], { jsonrpc: '2.0', id: 9, result: 9 });
  });

  test('read timeout discards a partial frame and keeps serving (WEFT_READ_TIMEOUT_MS)', async () => {
    const child = rawServer({ WEFT_READ_TIMEOUT_MS: '300' });
    child.stdin.write('Content-Length: 100\r\n\r\n{"jsonrpc":"2.0",');
    // Each next frame is written once the server has logged the timeout, not
    // after a fixed sleep: a server slow to start or starved (ASan on a loaded
    // machine) would read it within 300 ms of the partial one, as its rest.
    await child.waitForLog('read timeout', 1);
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}'));
    await child.waitFor(1);
    // A second timeout does not end the daemon either.
    child.stdin.write('Content-Len');
    await child.waitForLog('read timeout', 2);
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":2,"method":"sum","params":[2,2]}'));
    const got = await child.waitFor(2);
    assert.deepEqual(got, [
      { jsonrpc: '2.0', id: 1, result: 3 },
      { jsonrpc: '2.0', id: 2, result: 4 },
    ]);
    assert.match(child.stderrText, /time/i);
    assert.equal(child.exitCode, null, 'still running');
  });

  test('EOF: a truncated frame is answered -32700, in-flight requests finish, exit 0', async () => {
    const child = rawServer();
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":300}}'));
    child.stdin.end('Content-Length: 50\r\n\r\n{"jsonrpc"');
    const { code } = await within(5000, child.exited, 'exit after EOF');
    assert.equal(code, 0);
    const got = await child.waitFor(2);
    const byId = Object.fromEntries(got.map((m) => [String(m.id), m]));
    assert.equal(byId.null.error.code, -32700);
    assert.equal(byId['1'].result, 300);
  });

  test('nobody reading stdout: the failed write ends the session though stdin stays open', async () => {
    // The answer cannot be written (EPIPE); a read is in flight on stdin,
    // which the other side never closes: the session must not wait for it.
    const child = startStdio();
    live.push({ child, conn: { dispose() {} } });
    child.stdout.destroy();
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}'));
    await within(5000, child.exited, 'exit after the failed write');
    assert.match(child.stderrText, /write: Broken pipe/);
  });

  test('SIGTERM: the drain notice, then the in-flight request answered, then exit 0', async () => {
    const child = rawServer();
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":300}}'));
    // Answered once the server runs (its signal handlers are installed) and
    // has the sleep in flight (a sanitized build starts slowly).
    child.stdin.write(encodeFrame('lsp', '{"jsonrpc":"2.0","id":2,"method":"rpc.ping"}'));
    await child.waitFor(1);
    child.kill('SIGTERM');
    const { code } = await within(5000, child.exited, 'exit after SIGTERM');
    assert.equal(code, 0);
    // docs/protocol.md, "Drain": stdio's one client is told too.
    assert.deepEqual((await child.waitFor(3)).slice(1), [
      { jsonrpc: '2.0', method: '$/weft/drain', params: { reason: 'shutdown', downtime: 0, reconnect_after: 1000 } },
      { jsonrpc: '2.0', id: 1, result: 300 },
    ]);
  });
});
