// Streams on the native host, from outside (docs/streams.md, "Native host"):
// `weft call --stream` against `weft serve --demo`'s `bytes`, the wire
// messages as a plain JSON client sees them, and a binary chunk's bytes on
// the wire with --codec msgpack (MessagePack `bin`, read without our decoder).
// The C++ API and the 1 GiB memory proof: native-host/tests/stream_*_test.cpp.
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { decode, encode } from '@msgpack/msgpack';
import { connectUnix, demoServerFixture, encodeFrame, runCli, startServer, tempDir, within } from './helpers.mjs';

const { sock } = demoServerFixture('streams.sock');

describe('weft call --stream', () => {
  test('prints each chunk as one JSON line as it arrives, then the result', async () => {
    const r = await runCli(['call', '--unix', sock, '--stream', 'bytes', '{"count":3,"size":4}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, [
      '{"bytes":[0,0,0,0],"subtype":null}',
      '{"bytes":[1,1,1,1],"subtype":null}',
      '{"bytes":[2,2,2,2],"subtype":null}',
      '{"bytes":12,"chunks":3}',
      '',
    ].join('\n'));
  });

  test('a stream call the server refuses whole (id null: too large) ends with that error, exit 1, not a wait', async () => {
    const small = path.join(tempDir().dir, 'small.sock');
    await startServer(['serve', '--unix', small, '--demo', '--max-message', '200']);
    const r = await runCli(['call', '--unix', small, '--stream', 'bytes', JSON.stringify({ count: 1, size: 1, pad: 'x'.repeat(300) })]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(JSON.parse(r.stderr).message, /exceeds max_frame 200/);
  });

  test('a method that does not stream: only its result', async () => {
    const r = await runCli(['call', '--unix', sock, '--stream', 'add', '{"a":1,"b":2}']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '3\n', '']);
  });

  test('bytes without --stream is -32600 saying how to call it, exit 1', async () => {
    const r = await runCli(['call', '--unix', sock, 'bytes', '{"count":1,"size":1}']);
    assert.equal(r.code, 1);
    const e = JSON.parse(r.stderr);
    assert.equal(e.code, -32600);
    assert.match(e.message, /--stream/);
  });

  test('a chunk over 1 MB (max_stream_chunk) is refused before it is made: -32602 naming the limit', async () => {
    const r = await runCli(['call', '--unix', sock, '--stream', 'bytes', '{"count":1,"size":1000001}']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const e = JSON.parse(r.stderr);
    assert.equal(e.code, -32602);
    assert.equal(e.message, 'Invalid params: size must be an integer from 0 to 1000000 (max_stream_chunk)');
  });
});

describe('the wire, from a plain JSON client', () => {
  test('$/weft/open then the request: chunks within the credit, $/weft/credit for more, then the answer', async () => {
    const { socket, client } = await connectUnix(sock);
    try {
      client.notify('$/weft/open', { id: 7, credit: 2 });
      const answer = client.request('bytes', { count: 3, size: 1 }, 7);
      const first = await client.waitUnmatched(2);
      assert.deepEqual(first.map((m) => [m.method, m.params.seq]), [['$/weft/chunk', 0], ['$/weft/chunk', 1]]);
      assert.deepEqual(first[0].params, { id: 7, seq: 0, total: 3, value: { bytes: [0], subtype: null } });
      // Credit spent: the rest waits for a grant (the ping's answer comes first).
      assert.equal((await client.request('rpc.ping')).result.status, 'ok');
      assert.equal(client.unmatched.length, 0);
      client.notify('$/weft/credit', { id: 7, credit: 5 });
      const [last] = await client.waitUnmatched(1);
      assert.deepEqual(last.params, { id: 7, seq: 2, final: true, total: 3, value: { bytes: [2], subtype: null } });
      assert.deepEqual((await within(5000, answer)).result, { chunks: 3, bytes: 3 });
    } finally {
      socket.destroy();
    }
  });
});

describe('binary chunks with --codec msgpack', () => {
  const tmp = tempDir();
  const msock = path.join(tmp.dir, 'mp.sock');
  let server;
  before(async () => { server = await startServer(['serve', '--unix', msock, '--codec', 'msgpack', '--demo']); });
  after(async () => {
    server.kill('SIGTERM');
    await within(5000, server.exited);
    tmp.cleanup();
  });

  test('a chunk of bytes is a MessagePack bin on the wire (bin8: c4, length, bytes)', async () => {
    const s = net.createConnection(msock);
    await new Promise((r, j) => s.once('connect', r).once('error', j));
    let got = Buffer.alloc(0);
    const firstFrame = new Promise((resolve) => {
      s.on('data', (d) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 4 && got.length >= 4 + got.readUInt32BE(0)) resolve(got.subarray(4, 4 + got.readUInt32BE(0)));
      });
    });
    s.write(encodeFrame('len32be', encode({ jsonrpc: '2.0', method: '$/weft/open', params: { id: 1, credit: 1 } })));
    s.write(encodeFrame('len32be', encode({ jsonrpc: '2.0', id: 1, method: 'bytes', params: { count: 1, size: 3 } })));
    const payload = await within(5000, firstFrame, 'the first chunk');
    s.destroy();
    const chunk = decode(payload);  // read by a MessagePack library weft did not write
    assert.equal(chunk.method, '$/weft/chunk');
    assert.ok(chunk.params.value instanceof Uint8Array, 'the value is a bin');
    // bin8 of 3 bytes, each 0 (chunk 0 is filled with 0).
    assert.ok(payload.includes(Buffer.from([0xc4, 3, 0, 0, 0])), payload.toString('hex'));
  });

  test('weft call --codec msgpack --stream receives them (printed in the JSON form of binary)', async () => {
    const r = await runCli(['call', '--unix', msock, '--codec', 'msgpack', '--stream', 'bytes', '{"count":2,"size":2}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '{"bytes":[0,0],"subtype":null}\n{"bytes":[1,1],"subtype":null}\n{"bytes":4,"chunks":2}\n');
  });
});
