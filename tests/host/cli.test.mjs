// The `weft` CLI contract: output and exit codes (0 result, 1 error response,
// 2 usage, 3 connection failure, 4 timeout), retries with backoff, --help,
// the default socket path, notify, --exec, codecs; and the embedding example.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { EXAMPLE_BIN, WEFT_BIN, demoServerFixture, runCli, sleep, startServer, within } from './helpers.mjs';

const { tmp, sock } = demoServerFixture('cli.sock');

const call = (args, opts) => runCli(['call', '--unix', sock, ...args], opts);

describe('weft call / notify', () => {
  test('result on stdout as JSON, exit 0', async () => {
    let r = await call(['subtract', '[42,23]']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '19\n', '']);
    r = await call(['subtract', '{"minuend":42,"subtrahend":23}']);
    assert.equal(r.stdout, '19\n');
    r = await call(['get_data']);
    assert.deepEqual(JSON.parse(r.stdout), ['hello', 5]);
    r = await call(['echo', '{"s":"h\\u00e9llo","n":[1.5,null,true]}']);
    assert.deepEqual(JSON.parse(r.stdout), { s: 'héllo', n: [1.5, null, true] });
    r = await call(['rpc.ping']);
    const ping = JSON.parse(r.stdout);
    assert.equal(ping.status, 'ok');
    assert.ok(ping.uptime_ms >= 0);
    assert.equal(typeof ping.version, 'string');
    r = await call(['rpc.discover']);
    assert.ok(JSON.parse(r.stdout).methods.some((m) => m.name === 'sleep'));
  });

  // The nesting limit (--max-depth, default 256, the message counting as 1):
  // params nested 128 deep reach the method; a message deeper than the
  // limit is -32600 with id null, naming it.
  test('params nested 128 deep are echoed; a message deeper than 256 levels is -32600 naming the limit', async () => {
    const nested = (n) => '['.repeat(n) + '1' + ']'.repeat(n);
    const r = await call(['echo', nested(128)]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, nested(128) + '\n');
    const deep = `{"jsonrpc":"2.0","method":"echo","params":${nested(256)},"id":1}\n`;
    const s = await runCli(['serve', '--stdio', '--framing', 'ndjson', '--demo'], { input: deep });
    assert.deepEqual(JSON.parse(s.stdout), { jsonrpc: '2.0', id: null,
      error: { code: -32600, message: 'Invalid Request: nesting deeper than 256 levels (max_depth)' } });
  });

  test('error response: JSON on stderr, exit 1', async () => {
    let r = await call(['fail', '{"code":-32010,"message":"no luck","data":[1]}']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.deepEqual(JSON.parse(r.stderr), { code: -32010, message: 'no luck', data: [1] });
    r = await call(['no_such_method']);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stderr).code, -32601);
    r = await call(['sleep', '{"ms":"x"}']);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stderr).code, -32602);
  });

  test('usage errors: one line on stderr, exit 2; --help exit 0', async () => {
    for (const args of [
      [],
      ['bogus'],
      ['call', '--bogus', 'm'],
      ['call', '--unix', sock],
      ['call', '--unix', sock, 'm', 'not json'],
      ['call', '--unix', sock, 'm', '7'],
      ['call', '--timeout', 'soon', 'm'],
      ['call', '--framing', 'xml', 'm'],
      ['call', '--codec', 'yaml', 'm'],
      ['call', '--unix', sock, '--tcp', '127.0.0.1:1', 'm'],
      ['notify', '--retries', 'many', 'm'],
      ['serve', '--stdio', '--tcp', '127.0.0.1:1'],
      ['serve', '--exec', 'x'],
      ['serve', '--tcp', 'localhost'],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, `weft ${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
      assert.equal(r.stdout, '');
    }
    for (const args of [['--help'], ['serve', '--help'], ['call', '--help'], ['notify', '--help']]) {
      const r = await runCli(args);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /Usage: weft/);
    }
  });

  test('connection failure: exit 3 after the retries', async () => {
    const missing = path.join(tmp.dir, 'nobody.sock');
    const r = await runCli(['call', '--unix', missing, '--retries', '2', 'rpc.ping']);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /cannot connect.*3 attempts/);
    assert.ok(r.ms >= 300, `backoff 100 + 200 ms, took ${r.ms}`);
    const r2 = await runCli(['call', '--tcp', '127.0.0.1:1', '--retries', '0', 'rpc.ping']);
    assert.equal(r2.code, 3);
    const r3 = await runCli(['call', '--exec', 'exit 0', 'rpc.ping']);
    assert.equal(r3.code, 3);
  });

  test('timeout: exit 4', async () => {
    const r = await call(['--timeout', '200', 'sleep', '{"ms":5000}']);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /timed out/);
    assert.ok(r.ms < 3000);
  });

  test('retries with exponential backoff reach a server that starts late', async () => {
    const late = path.join(tmp.dir, 'late.sock');
    const pending = runCli(['call', '--unix', late, '--retries', '6', '-v', 'sum', '[2,3]']);
    await sleep(650);
    const srv = await startServer(['serve', '--unix', late, '--demo']);
    const r = await within(15000, pending);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '5\n');
    const delays = [...r.stderr.matchAll(/retrying in (\d+) ms/g)].map((m) => Number(m[1]));
    assert.ok(delays.length >= 3, r.stderr);
    delays.forEach((d, k) => {
      const base = 100 * 2 ** k;
      assert.ok(d >= base && d <= base * 1.25, `delay ${k}: ${d} ms vs ${base}`);
    });
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
  });

  test('retries on connection refused (a stale socket file) too', async () => {
    const stale = path.join(tmp.dir, 'stale.sock');
    const dead = await startServer(['serve', '--unix', stale]);
    dead.kill('SIGKILL');
    await within(5000, dead.exited);
    const pending = runCli(['call', '--unix', stale, '--retries', '5', '-v', 'sum', '[1,1]']);
    await sleep(350);
    const srv = await startServer(['serve', '--unix', stale, '--demo']);
    const r = await within(15000, pending);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '2\n');
    assert.match(r.stderr, /Connection refused; retrying in/);
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
  });

  test('notify: exit 0 once written', async () => {
    let r = await runCli(['notify', '--unix', sock, 'update', '[1,2,3]']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', '']);
    r = await runCli(['notify', '--unix', path.join(tmp.dir, 'none.sock'), '--retries', '0', 'update']);
    assert.equal(r.code, 3);
  });

  test('default socket path: $WEFT_SOCKET, then $XDG_RUNTIME_DIR/weft.sock', async () => {
    let r = await runCli(['call', 'sum', '[1,2]'], { env: { WEFT_SOCKET: sock } });
    assert.equal(r.stdout, '3\n');
    const xdg = path.join(tmp.dir, 'xdg');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(xdg);
    const srv = await startServer(['serve', '--demo'], { env: { WEFT_SOCKET: '', XDG_RUNTIME_DIR: xdg } });
    assert.ok(existsSync(path.join(xdg, 'weft.sock')));
    r = await runCli(['call', 'sum', '[4,5]'], { env: { WEFT_SOCKET: '', XDG_RUNTIME_DIR: xdg } });
    assert.equal(r.stdout, '9\n');
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
    assert.ok(!existsSync(path.join(xdg, 'weft.sock')));
  });

  test('--exec: a child process over stdin/stdout, every framing and codec', async () => {
    for (const framing of ['lsp', 'ndjson', 'len32be', 'len32le']) {
      for (const codec of ['json', 'msgpack']) {
        if (framing === 'ndjson' && codec === 'msgpack') continue;  // binary has newlines: refused (exit 2)
        const cmd = `'${WEFT_BIN}' serve --stdio --demo --framing ${framing} --codec ${codec}`;
        const r = await runCli(['call', '--exec', cmd, '--framing', framing, '--codec', codec, 'subtract', '[10,4]']);
        assert.equal(r.code, 0, `${framing}/${codec}: ${r.stderr}`);
        assert.equal(r.stdout, '6\n');
      }
    }
    let r = await runCli(['call', '--exec', 'true', '--framing', 'ndjson', '--codec', 'msgpack', 'm']);
    assert.equal(r.code, 2);
    // A peer answering with an id-null error (it could not parse us) ends the call: exit 1.
    r = await runCli(['call', '--exec', `'${WEFT_BIN}' serve --stdio --codec msgpack`, '--timeout', '5000', 'rpc.ping']);
    assert.equal(r.code, 1, r.stderr);
    const cmd = `'${WEFT_BIN}' serve --stdio --demo`;
    r = await runCli(['call', '--exec', cmd, 'fail', '{"code":-32000,"message":"x"}']);
    assert.equal(r.code, 1);
    r = await runCli(['notify', '--exec', cmd, 'notify_hello', '[1]']);
    assert.equal(r.code, 0);
  });

  test('an error with id null answers the one call a connection carried, and no call once it carried more', async () => {
    // A server that reads nothing: every line gets -32700 with id null.
    const server = `node -e "require('readline').createInterface({input: process.stdin}).on('line', () => ` +
      `console.log(JSON.stringify({jsonrpc: '2.0', id: null, error: {code: -32700, message: 'Parse error'}})))"`;
    let r = await runCli(['call', '--session', '--exec', server, '--framing', 'ndjson', '--timeout', '5000'], { input: 'ping\n' });
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: 1 });
    // A notification went first: the error may be its, so it answers no line
    // and the call waits for its timeout.
    r = await runCli(['call', '--session', '--exec', server, '--framing', 'ndjson', '--timeout', '300'],
      { input: '{"jsonrpc":"2.0","method":"note"}\nping\n' });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(JSON.parse(r.stdout).error.code, -32001);
    assert.match(r.stderr, /-32700/);
  });

  test('a -32002 the server answers is its error (exit 1, the object on stderr), not a lost connection', async () => {
    const server = `node -e "require('readline').createInterface({input: process.stdin}).on('line', (l) => { const m = JSON.parse(l); ` +
      `console.log(JSON.stringify({jsonrpc: '2.0', id: m.id, error: {code: -32002, message: 'upstream closed', data: 7}})); })"`;
    const r = await runCli(['call', '--exec', server, '--framing', 'ndjson', 'ping']);
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(JSON.parse(r.stderr), { code: -32002, message: 'upstream closed', data: 7 });
  });

  test('msgpack over the unix socket', async () => {
    const p = path.join(tmp.dir, 'mp.sock');
    const srv = await startServer(['serve', '--unix', p, '--demo', '--codec', 'msgpack', '--framing', 'len32le']);
    const r = await runCli(['call', '--unix', p, '--codec', 'msgpack', '--framing', 'len32le', 'echo', '{"a":[1,"b",{"c":null}]}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { a: [1, 'b', { c: null }] });
    // Codec and framing names are taken in any case on the command line.
    const upper = await runCli(['call', '--unix', p, '--codec', 'MsgPack', '--framing', 'LEN32LE', 'echo', '[1]']);
    assert.equal(upper.code, 0, upper.stderr);
    assert.deepEqual(JSON.parse(upper.stdout), [1]);
    srv.kill('SIGTERM');
    await within(5000, srv.exited);
  });
});

describe('embedding example', () => {
  test('examples/embed_server.cpp serves its own methods on a unix socket', async () => {
    const p = path.join(tmp.dir, 'example.sock');
    const ex = await startServer([p], { bin: EXAMPLE_BIN, ready: null });
    let r = await runCli(['call', '--unix', p, '--retries', '6', 'add', '{"a":2,"b":3.5}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), 5.5);
    r = await runCli(['call', '--unix', p, 'greet', '["weft"]']);
    assert.equal(JSON.parse(r.stdout), 'hello, weft');
    r = await runCli(['call', '--unix', p, 'add', '{"a":"x","b":1}']);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stderr).code, -32602);
    ex.kill('SIGTERM');
    assert.equal((await within(5000, ex.exited)).code, 0);
    assert.ok(!existsSync(p));
  });
});
