// weft's MessagePack codec against a MessagePack library weft did not write:
// npm @msgpack/msgpack encodes every request and decodes every answer of
// `weft serve --codec msgpack`. Seeded random traffic goes as MessagePack to
// that server and as JSON text to `weft serve --codec json`; the answers must
// be the same values (codec.h: a message decodes to the same value with
// either codec), and each must be MessagePack the other library reads.
//
//   WEFT_MSGPACK_DIFF_SEED=N       run seed (default: random, printed)
//   WEFT_MSGPACK_DIFF_SEQUENCES=N  sequences (default 5000)
//
// Then, one case per rule of core/src/codec/msgpack.cpp that JSON text cannot
// show: bin is bytes both ways, 64-bit integers are exact, float32 is read as
// a number, and what has no JSON form (a map key that is not a string, an
// ext value, a str that is not UTF-8) is -32700 with id null.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { encode, decode, ExtData } from '@msgpack/msgpack';
import { FrameDecoder, encodeFrame, killAll, startServer, tempDir, within } from './helpers.mjs';
import { Rng, randData, randId, randInt, randJson, randNumber, randString, sequenceSeed } from '../support/diff-gen.mjs';

const RUN_SEED = process.env.WEFT_MSGPACK_DIFF_SEED ? Number(process.env.WEFT_MSGPACK_DIFF_SEED) >>> 0 : randomInt(0, 2 ** 32 - 1);
const SEQUENCES = Number(process.env.WEFT_MSGPACK_DIFF_SEQUENCES || 5000);
const T = { timeout: 300000 };

// One connection to a server: send(bytes) writes a frame's payload;
// next() resolves with the next answer, decoded by `parse`.
function link(socket, parse) {
  const answers = [];
  const waiters = [];
  const decoder = new FrameDecoder('len32be', (m) => {
    const w = waiters.shift();
    if (w) w(m); else answers.push(m);
  }, parse);
  socket.on('data', (c) => decoder.push(c));
  return {
    send: (payload) => socket.write(encodeFrame('len32be', Buffer.from(payload))),
    next: () => within(5000, answers.length ? Promise.resolve(answers.shift()) : new Promise((r) => waiters.push(r)), 'an answer'),
  };
}
const connect = (p) => new Promise((resolve, reject) => {
  const s = net.createConnection(p);
  s.once('connect', () => resolve(s));
  s.once('error', reject);
});

const tmp = tempDir();
let mp, js, mp64;
before(async () => {
  const mpSock = path.join(tmp.dir, 'mp.sock');
  const jsSock = path.join(tmp.dir, 'js.sock');
  await startServer(['serve', '--unix', mpSock, '--demo', '--codec', 'msgpack', '--framing', 'len32be']);
  await startServer(['serve', '--unix', jsSock, '--demo', '--codec', 'json', '--framing', 'len32be']);
  mp = link(await connect(mpSock), (b) => decode(b));
  js = link(await connect(jsSock), (b) => JSON.parse(b.toString()));
  mp64 = link(await connect(mpSock), (b) => decode(b, { useBigInt64: true }));
});
after(() => {
  killAll();
  tmp.cleanup();
});

// ---- traffic ------------------------------------------------------------------
// One message of the demo's methods (core/demo/demo.cpp), a request or a
// notification.
function message(r) {
  const m = { jsonrpc: '2.0' };
  const kind = r.weighted([[3, 'echo'], [2, 'fail'], [2, 'subtract'], [1, 'sum'], [1, 'unknown'], [1, 'bad'], [1, 'sink']]);
  switch (kind) {
    case 'echo': m.method = 'echo'; m.params = r.chance(0.5) ? [randJson(r), randJson(r)] : { v: randJson(r), [randString(r, 6)]: randJson(r) }; break;
    case 'fail': {
      m.method = 'fail';
      m.params = { code: randInt(r) | 0, message: randString(r) };
      const data = randData(r);
      if (data !== undefined) m.params.data = data;
      break;
    }
    case 'subtract': {
      const a = randNumber(r), b = randNumber(r);
      m.method = 'subtract';
      m.params = r.chance(0.5) ? [a, b] : { subtrahend: b, minuend: a };
      break;
    }
    case 'sum': m.method = 'sum'; m.params = Array.from({ length: r.int(0, 5) }, () => randNumber(r)); break;
    case 'unknown': m.method = 'no_such_' + randString(r, 4); break;
    case 'bad': m.method = 'subtract'; m.params = [randString(r), randJson(r)]; break;  // -32602
    default: m.method = r.pick(['update', 'notify_hello', 'notify_sum']); m.params = [randJson(r)]; break;
  }
  if (r.chance(0.8)) m.id = randId(r);  // else a notification
  return m;
}

// The frames of one sequence: single messages and batches (of requests and
// notifications, or of notifications only, which are not answered).
function sequence(seed) {
  const r = new Rng(seed);
  return Array.from({ length: r.int(1, 4) }, () =>
    r.chance(0.7) ? message(r) : Array.from({ length: r.int(1, 4) }, () => message(r)));
}

// Sends `frames` over `side` (encoded by `enc`), then a request whose answer
// closes the sequence: the demo's methods answer in order, so every answer
// before it belongs to the sequence.
async function answersOf(side, frames, enc) {
  const end = { jsonrpc: '2.0', id: 'end-of-sequence', method: 'get_data' };
  for (const f of [...frames, end]) side.send(enc(f));
  const got = [];
  for (;;) {
    const a = await side.next();
    if (!Array.isArray(a) && a?.id === 'end-of-sequence') return got;
    got.push(a);
  }
}

test('seeded traffic: the MessagePack server gives the JSON server\'s answers, and @msgpack/msgpack reads them', T, async () => {
  console.log(`# WEFT_MSGPACK_DIFF_SEED=${RUN_SEED} (${SEQUENCES} sequences)`);
  let answers = 0;
  for (let i = 0; i < SEQUENCES; i++) {
    const seed = sequenceSeed(RUN_SEED, i);
    const frames = sequence(seed);
    const viaJson = await answersOf(js, frames, (f) => JSON.stringify(f));
    const viaMsgpack = await answersOf(mp, frames, (f) => encode(f));
    assert.deepEqual(viaMsgpack, viaJson,
      `sequence ${i} differs (replay: WEFT_MSGPACK_DIFF_SEED=${seed} WEFT_MSGPACK_DIFF_SEQUENCES=1 ` +
      `node --test tests/host/msgpack-peer.test.mjs)\nsent: ${JSON.stringify(frames)}`);
    answers += viaJson.length;
  }
  assert.ok(answers > SEQUENCES, `the traffic was answered (${answers} answers)`);
});

// ---- what JSON text cannot show -------------------------------------------------
const call = async (side, msg, opts) => {
  side.send(encode(msg, opts));
  return side.next();
};

test('bin is bytes both ways: echo returns a bin the other library reads as the same bytes', T, async () => {
  const bytes = new Uint8Array([0, 1, 127, 128, 255]);
  const a = await call(mp, { jsonrpc: '2.0', id: 1, method: 'echo', params: [bytes, { b: new Uint8Array(0) }] });
  assert.ok(a.result[0] instanceof Uint8Array && a.result[1].b instanceof Uint8Array, 'bin, not an array');
  assert.deepEqual([...a.result[0]], [...bytes]);
  assert.equal(a.result[1].b.length, 0);
});

test('64-bit integers are exact: int64 and uint64 at their limits come back as they went', T, async () => {
  const ints = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n];
  const a = await call(mp64, { jsonrpc: '2.0', id: 2, method: 'echo', params: ints }, { useBigInt64: true });
  assert.deepEqual(a.result.map(BigInt), ints);
  // An id too: §5 "the same as the value of the id member in the Request".
  const b = await call(mp64, { jsonrpc: '2.0', id: 2n ** 64n - 2n, method: 'get_data' }, { useBigInt64: true });
  assert.equal(BigInt(b.id), 2n ** 64n - 2n);
  assert.deepEqual(b.result, ['hello', 5]);
});

test('float32 is read as a number: subtract of two float32 values', T, async () => {
  const a = await call(mp, { jsonrpc: '2.0', id: 3, method: 'subtract', params: [2.5, 0.25] }, { forceFloat32: true });
  assert.equal(a.result, 2.25);
});

test('what has no JSON form is a parse error (-32700, id null), and the connection goes on', T, async () => {
  // Written byte by byte where @msgpack/msgpack will not write it (it
  // writes a Map as an empty map).
  const str = (s) => [0xa0 + Buffer.byteLength(s), ...Buffer.from(s)];
  const echoOf = (...param) => Uint8Array.from([0x84, ...str('jsonrpc'), ...str('2.0'), ...str('id'), 4,
    ...str('method'), ...str('echo'), ...str('params'), 0x91, ...param]);
  assert.deepEqual(decode(echoOf(...str('ok'))), { jsonrpc: '2.0', id: 4, method: 'echo', params: ['ok'] });
  const cases = {
    'a map key that is not a string': echoOf(0x81, 0x01, ...str('one')),  // {1: "one"}
    'a map key that is a map': echoOf(0x81, 0x80, ...str('one')),        // {{}: "one"}
    'an ext value': encode({ jsonrpc: '2.0', id: 5, method: 'echo', params: [new ExtData(7, new Uint8Array([1]))] }),
    // fixmap {"method": str of 0xff 0xfe}: a str that is not UTF-8 (RFC 8259 §8.1).
    'a str that is not UTF-8': Uint8Array.from([0x81, 0xa6, ...Buffer.from('method'), 0xa2, 0xff, 0xfe]),
  };
  for (const [what, bytes] of Object.entries(cases)) {
    mp.send(bytes);
    const a = await mp.next();
    assert.equal(a.id, null, what);
    assert.equal(a.error.code, -32700, `${what}: ${JSON.stringify(a)}`);
    assert.match(a.error.message, /^invalid MessagePack at byte \d+: /, what);
  }
  assert.deepEqual((await call(mp, { jsonrpc: '2.0', id: 6, method: 'get_data' })).result, ['hello', 5]);
});
