// `weft call --session`: one connection, one request per stdin line, one
// answer per line in input order, exit status the highest of the lines'
// codes. The README's transcript of it runs in tests/js/docs-examples.test.mjs;
// the persistent client's C++ example is checked here to be the file ctest runs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { WEFT_BIN, demoServerFixture, repoRoot, runCli, startServer, track, within } from './helpers.mjs';

const { tmp, sock } = demoServerFixture('session.sock');

const session = (input, args = []) => runCli(['call', '--session', '--unix', sock, ...args], { input });
const lines = (s) => s.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('weft call --session', () => {
  test('both line forms; answers in input order with the request ids (method form: the line number)', async () => {
    const r = await session(
      [
        'sleep {"ms": 150}',
        '{"jsonrpc":"2.0","id":"x","method":"subtract","params":{"minuend":5,"subtrahend":8}}',
        '',
        'get_data',
        '{"jsonrpc":"2.0","id":null,"method":"sum","params":[1,1]}',
      ].join('\n') + '\n',
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), [
      { jsonrpc: '2.0', result: 150, id: 1 },
      { jsonrpc: '2.0', result: -3, id: 'x' },
      { jsonrpc: '2.0', result: ['hello', 5], id: 4 },
      { jsonrpc: '2.0', result: 2, id: null },
    ]);
  });

  test('all requests are in flight at once on one connection', async () => {
    // 50 sleeps of 300 ms answered one after another would take 15 s.
    const input = Array.from({ length: 50 }, () => 'sleep {"ms": 300}').join('\n') + '\n';
    const t0 = Date.now();
    const r = await session(input);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(lines(r.stdout).length, 50);
    assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
    const ping = await runCli(['call', '--unix', sock, 'rpc.ping']);
    assert.equal(JSON.parse(ping.stdout).connections, 1, 'the session closed its one connection');
  });

  test('notifications print nothing and are written before the connection closes', async () => {
    const r = await session('{"jsonrpc":"2.0","method":"update","params":[1]}\n{"jsonrpc":"2.0","method":"update"}\n');
    assert.deepEqual([r.code, r.stdout], [0, ''], r.stderr);
  });

  test('bad lines are answered -32700 / -32600 with id null, exit 1; the others still run', async () => {
    const r = await session(
      ['sum [1', '{"jsonrpc":"2.0","id":1', '[{"jsonrpc":"2.0","id":1,"method":"sum"}]', '{"id":1}', 'sum 7', 'sum [2,2]'].join('\n'),
    );
    assert.equal(r.code, 1);
    const out = lines(r.stdout);
    assert.deepEqual(out.map((m) => m.error?.code ?? m.result), [-32700, -32700, -32600, -32600, -32602, 4]);
    assert.deepEqual(out.map((m) => m.id), [null, null, null, null, null, 6]);
    assert.match(out[0].error.message, /^line 1: /);
  });

  test('exit status: the highest of the lines (error 1 < connection 3 < timeout 4)', async () => {
    let r = await session('fail {"code": -32010, "message": "no"}\nsum [1]\n');
    assert.equal(r.code, 1);
    r = await session('sleep {"ms": 5000}\nfail {"code": -32010, "message": "no"}\n', ['--timeout', '200']);
    assert.equal(r.code, 4);
    assert.deepEqual(lines(r.stdout).map((m) => m.error.code), [-32001, -32010]);
    r = await runCli(['call', '--session', '--unix', path.join(tmp.dir, 'none.sock'), '--retries', '0'], {
      input: 'sum [1]\nsum [2]\n',
    });
    assert.equal(r.code, 3);
    assert.deepEqual(lines(r.stdout).map((m) => m.error.code), [-32002, -32002]);
    r = await runCli(['call', '--session', '--unix', path.join(tmp.dir, 'none.sock'), '--retries', '0'], {
      input: '{"jsonrpc":"2.0","method":"update"}\n',
    });
    assert.equal(r.code, 3, 'a notification that could not be sent');
    // A request over max_request (10 MB) is never sent: not delivered, as a
    // notification would be (3), not an error the server answered (1).
    r = await session(`echo ["${'x'.repeat(10_000_100)}"]\nsum [1]\n`);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(lines(r.stdout).map((m) => m.error?.code ?? m.result), [-32002, 1]);
    assert.match(lines(r.stdout)[0].error.message, /over max_request/);
  });

  test('an error with id null answers no line: a notification the server refused does not fail the call before it', async () => {
    const small = path.join(tmp.dir, 'small.sock');
    await startServer(['serve', '--unix', small, '--demo', '--max-message', '200']);
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'update', params: ['x'.repeat(300)] });
    const r = await runCli(['call', '--session', '--unix', small], { input: `sleep {"ms": 300}\n${big}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), [{ jsonrpc: '2.0', result: 300, id: 1 }]);
    assert.match(r.stderr, /id null: -32600 .*exceeds max_frame 200/);  // logged, not given to line 1
  });

  test('ids are echoed exactly: a number keeps its text (docs/protocol.md)', async () => {
    const ids = ['123456789012345678901234567890', '123456789012345678901234567891', '1E3', '1.50', '-0.0', '18446744073709551616'];
    const r = await session(ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"sum","params":[1]}`).join('\n') + '\n');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ids.map((id) => `{"jsonrpc":"2.0","result":1,"id":${id}}`));
  });

  test('a line whose "jsonrpc" is not "2.0" is refused -32600, not sent as 2.0', async () => {
    const r = await session('{"jsonrpc":"1.0","id":1,"method":"sum","params":[1]}\n');
    assert.equal(r.code, 1);
    assert.deepEqual(lines(r.stdout), [{ jsonrpc: '2.0', error: { code: -32600, message: 'line 1: "jsonrpc" must be "2.0"' }, id: null }]);
  });

  test('a typed rpc.handshake offering compression is refused -32602 with its id, not sent; --compress agrees on it', async () => {
    const zsock = path.join(tmp.dir, 'session-zstd.sock');
    const srv = await startServer(['serve', '--unix', zsock, '--demo', '--handshake', '--compress', 'zstd']);
    const hs = (id, capabilities) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'rpc.handshake',
        params: { version: '1.0', capabilities, compression_preference: ['zstd'] },
      });
    const big = `echo ["${'a'.repeat(3000)}"]`;
    const typed = 'rpc.handshake {"version":"1.0","capabilities":["streams","compression"],"compression_preference":["zstd"]}';
    // A notification agrees to nothing: it goes as it is.
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'rpc.handshake', params: { version: '1.0', capabilities: ['compression'] } });
    const r = await runCli(['call', '--session', '--unix', zsock], {
      input: [hs(1, ['compression']), typed, hs(3, ['streams']), big, 'sum [1, 2]', note].join('\n') + '\n',
    });
    assert.equal(r.code, 1, r.stderr);
    const out = lines(r.stdout);
    assert.equal(out.length, 5, 'a notification prints nothing, whatever it offers');
    for (const [k, id] of [[0, 1], [1, 2]]) {
      assert.equal(out[k].id, id);
      assert.equal(out[k].error.code, -32602);
      assert.match(out[k].error.message, new RegExp(`^line ${id}: rpc.handshake offering compression .*--compress zstd`));
    }
    // Without "compression" among the capabilities nothing is agreed on it: sent as typed.
    assert.equal(out[2].id, 3);
    assert.equal(out[2].result.compression_used, undefined);
    assert.deepEqual(out[3], { jsonrpc: '2.0', result: ['a'.repeat(3000)], id: 4 });
    assert.deepEqual(out[4], { jsonrpc: '2.0', result: 3, id: 5 });
    // With --compress the session's own handshake agrees on zstd; large answers are read.
    const z = await runCli(['call', '--session', '--unix', zsock, '--compress', 'zstd'], { input: `${big}\nsum [1, 2]\n` });
    assert.equal(z.code, 0, z.stderr);
    assert.deepEqual(lines(z.stdout), [
      { jsonrpc: '2.0', result: ['a'.repeat(3000)], id: 1 },
      { jsonrpc: '2.0', result: 3, id: 2 },
    ]);
    srv.kill('SIGTERM');
    await within(8000, srv.exited);
  });

  test('a notification too large to send is logged and makes the exit status 3', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'update', params: ['x'.repeat(10_000_100)] });
    const r = await session(`sum [1]\n${big}\n`);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(lines(r.stdout), [{ jsonrpc: '2.0', result: 1, id: 1 }]);
    assert.match(r.stderr, /could not deliver a message: the message is \d+ bytes, over max_request/);
  });

  test('--session takes no METHOD', async () => {
    const r = await runCli(['call', '--session', '--unix', sock, 'sum']);
    assert.equal(r.code, 2);
  });

  test('stdin from a regular file and from a slow pipe alike', async () => {
    const file = path.join(tmp.dir, 'in.txt');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, 'sum [1, 2]\nsum [3, 4]\n');
    const out = await shell(`'${WEFT_BIN}' call --session --unix '${sock}' < '${file}'`);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(lines(out.stdout).map((m) => m.result), [3, 7]);
    // A pipe that delivers lines one at a time: each is answered before the next arrives.
    const child = track(spawn(WEFT_BIN, ['call', '--session', '--unix', sock], { stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let waiter = null;
    const count = () => stdout.trim().split('\n').filter(Boolean).length;
    child.stdout.on('data', (d) => {
      stdout += d;
      if (waiter && count() >= waiter.n) waiter.resolve();
    });
    const got = (n) =>
      within(5000, new Promise((resolve) => (count() >= n ? resolve() : (waiter = { n, resolve }))), `${n} answers`);
    child.stdin.write('sum [1]\n');
    await got(1);
    child.stdin.write('sum [2]\n');
    await got(2);
    child.stdin.end();
    const code = await within(5000, new Promise((resolve) => child.on('close', resolve)));
    assert.equal(code, 0);
    assert.deepEqual(lines(stdout).map((m) => m.result), [1, 2]);
  });
});

// ---- README examples ----------------------------------------------------
function shell(cmd, env = {}) {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', cmd], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// The fenced block of `lang` after `heading` in README.md.
function readmeBlock(heading, lang) {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const at = readme.indexOf(heading);
  assert.ok(at >= 0, `README has "${heading}"`);
  const open = readme.indexOf('```' + lang + '\n', at);
  const close = readme.indexOf('\n```', open + 4);
  return readme.slice(open + lang.length + 4, close + 1);
}

describe('README: the persistent client', () => {
  test('the C++ example is examples/persistent_client.cpp, as built and run by ctest', () => {
    const block = readmeBlock('### The persistent client (C++)', 'cpp');
    const file = readFileSync(path.join(repoRoot, 'native-host', 'examples', 'persistent_client.cpp'), 'utf8');
    assert.equal(block, file);
  });
});
