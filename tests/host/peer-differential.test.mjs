// Seeded differential test of the native server against an implementation
// weft did not write: `weft serve --demo` and a json-rpc-2.0 (npm)
// JSONRPCServer, in this process, serving the same demo methods
// (core/demo/demo.cpp, with the parameter rules of core/include/weft/params.h
// written out again in JS below). Two differentials:
//
// 1. raw traffic: the same JSON text goes to weft over a Unix socket (len32be
//    frames, cut into random chunks) and to json-rpc-2.0's receiveJSON; every
//    answer must be equal.
// 2. a client weft did not write: vscode-jsonrpc over `weft serve --stdio
//    --demo` (LSP framing) makes seeded calls; the exact request it wrote is
//    also given to json-rpc-2.0; every result and error must be equal.
//
//   WEFT_NATIVE_DIFF_SEED=N       run seed (default: random, printed); sequence
//                                 0 uses it, so a failing sequence's seed replays
//                                 it with WEFT_NATIVE_DIFF_SEQUENCES=1
//   WEFT_NATIVE_DIFF_SEQUENCES=N  sequences per test (default 5000)
//
// Compared: requests and notifications (string, number and null ids; array,
// object and absent params), batches mixing them (duplicate ids included),
// subtract/add by position and by name with integers and fractions, sum,
// the sinks update/notify_hello/notify_sum, get_data, echo of any JSON value,
// fail with any code, message and `data` of every JSON type, invalid params
// (missing, too many, wrong type, unknown name) and unknown methods; the JSON
// text compact, indented, or with every non-ASCII character \u-escaped
// (surrogate pairs too).
//
// Normalisations, all for json-rpc-2.0's sake (as in
// tests/js/peer-differential.test.mjs): it answers a batch with one response
// as that bare response (§6: "an Array containing the corresponding Response
// objects"), wrapped here; its errors leave out a `data` that is null (§5.1:
// data is "a Primitive or Structured value", weft keeps null), so a null data
// counts as none; the message of -32601 is each library's own text (§5.1), so
// only its code is compared (fail is never given -32601 for that reason).
// Answers are compared as values (JSON.parse of each side's text) with object
// members in one order, and the answers to one sequence, and the responses
// in one batch, in any order (§6: "in any order").
//
// Not generated, because the two rightly differ or json-rpc-2.0 does not
// follow the specification: malformed requests, non-structured params (§4.2)
// and the empty batch (§6: one -32600 error; json-rpc-2.0 says nothing) —
// tests/js/differential.test.mjs covers those against the WebAssembly build;
// method names Object.prototype has (json-rpc-2.0 looks methods up in a plain
// object); rpc.ping, rpc.discover, sleep, bytes (weft's own, no counterpart)
// and $/cancelRequest. Numbers: any double that JSON.stringify writes is
// compared where it only has to round-trip (echo, error data, ids: 2**60,
// 2**64, 1e21, 5e-324, MAX_VALUE...). Arithmetic params (subtract, add, sum)
// and fail's code keep to integers within ±(2**53 - 1) and to fractions:
// JSON.parse cannot tell integer text from float text, and JSON.stringify
// writes 2**60 as 1152921504606847000, a different integer, which weft reads
// and adds exactly (RFC 8259 §6 lets it) while JS has only the double; and
// to finite results: an overflow to Infinity is -32603 from weft (no JSON
// for it) but null from JSON.stringify.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import net from 'node:net';
import { test } from 'node:test';
import * as JR from 'json-rpc-2.0';
import rpc from 'vscode-jsonrpc/node.js';

import { FrameDecoder, demoServerFixture, encodeFrame, startServer, within } from './helpers.mjs';
import {
  canonical, METHOD_NOT_FOUND, normalError, normalResponse, randData, randId, randJson, randNumber, randString, Rng, sequenceSeed,
} from '../support/diff-gen.mjs';

const { StreamMessageReader, StreamMessageWriter, createMessageConnection, ParameterStructures } = rpc;

const RUN_SEED = process.env.WEFT_NATIVE_DIFF_SEED ? Number(process.env.WEFT_NATIVE_DIFF_SEED) >>> 0 : randomInt(0, 2 ** 32 - 1);
const SEQUENCES = Number(process.env.WEFT_NATIVE_DIFF_SEQUENCES || 5000);
const T = { timeout: 600000 };
const replay = (seed, name) =>
  `replay: WEFT_NATIVE_DIFF_SEED=${seed} WEFT_NATIVE_DIFF_SEQUENCES=1 node --test --test-name-pattern='${name}' tests/host/peer-differential.test.mjs`;

const { sock } = demoServerFixture('peer-diff.sock');

// ---- the demo methods for json-rpc-2.0 ------------------------------------
// What weft's parser makes of a value that JSON.stringify wrote, as the words
// of weft's -32602 messages (params.cpp type_word); integers are only ever
// safe ones here (see the header), so Number.isInteger tells them apart.
function typeWord(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'boolean': return 'a boolean';
    case 'number': return Number.isInteger(v) ? 'an integer' : 'a number';
    case 'string': return 'a string';
    default: return 'an object';
  }
}
// nlohmann's type_name(), which sum's message uses.
const typeName = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const invalidParams = (what) => new JR.JSONRPCErrorException(`Invalid params: ${what}`, -32602);
// JSON object members in the order weft sees them (a std::map: UTF-8 bytes).
const byUtf8 = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

// A ParamSpec check (params.h): by position or by name, declared order first
// (missing, then wrong type), then the first unknown name.
function checkParams(spec, p) {
  const missing = (q) => invalidParams(`missing required parameter "${q.name}"`);
  const fits = (q, v) => q.type === 'any value' || typeWord(v) === q.type || (q.type === 'a number' && typeWord(v) === 'an integer');
  const wrong = (q, v) => invalidParams(`"${q.name}" must be ${q.type}, got ${typeWord(v)}`);
  if (p === undefined) {
    const q = spec.find((x) => x.required !== false);
    if (q) throw missing(q);
    return {};
  }
  if (Array.isArray(p)) {
    if (p.length > spec.length) throw invalidParams(`too many parameters: got ${p.length}, expected at most ${spec.length}`);
    const out = {};
    spec.forEach((q, i) => {
      if (i >= p.length) { if (q.required !== false) throw missing(q); return; }
      if (!fits(q, p[i])) throw wrong(q, p[i]);
      out[q.name] = p[i];
    });
    return out;
  }
  for (const q of spec) {
    if (!Object.hasOwn(p, q.name)) { if (q.required !== false) throw missing(q); continue; }
    if (!fits(q, p[q.name])) throw wrong(q, p[q.name]);
  }
  const unknown = Object.keys(p).filter((k) => !spec.some((q) => q.name === k)).sort(byUtf8)[0];
  if (unknown !== undefined) throw invalidParams(`unknown parameter "${unknown}"`);
  return p;
}

const NUMBER = 'a number';
const SUBTRACT = [{ name: 'minuend', type: NUMBER }, { name: 'subtrahend', type: NUMBER }];
const ADD = [{ name: 'a', type: NUMBER }, { name: 'b', type: NUMBER }];
const FAIL = [{ name: 'code', type: 'an integer' }, { name: 'message', type: 'a string' }, { name: 'data', type: 'any value', required: false }];
// Integers stay integers, exactly (int64 in weft, BigInt here); otherwise doubles.
const arith = (x, y, op) =>
  (Number.isInteger(x) && Number.isInteger(y) ? Number(op(BigInt(x), BigInt(y))) : op(x, y));

function jrDemoServer() {
  const s = new JR.JSONRPCServer({ errorListener: () => {} });
  s.addMethod('subtract', (p) => { const q = checkParams(SUBTRACT, p); return arith(q.minuend, q.subtrahend, (x, y) => x - y); });
  s.addMethod('add', (p) => { const q = checkParams(ADD, p); return arith(q.a, q.b, (x, y) => x + y); });
  s.addMethod('sum', (p) => {
    if (!Array.isArray(p)) throw invalidParams('sum takes an array of numbers');
    let exact = 0n;
    let dsum = 0;
    let integral = true;
    for (const v of p) {
      if (typeof v !== 'number') throw invalidParams(`sum takes an array of numbers, got ${typeName(v)}`);
      dsum += v;
      if (integral && Number.isInteger(v)) exact += BigInt(v);
      else integral = false;
    }
    return integral ? Number(exact) : dsum;
  });
  for (const sink of ['update', 'notify_hello', 'notify_sum']) s.addMethod(sink, () => null);
  s.addMethod('get_data', (p) => { checkParams([], p); return ['hello', 5]; });
  s.addMethod('echo', (p) => p ?? null);
  s.addMethod('fail', (p) => {
    const q = checkParams(FAIL, p);
    if (q.code < -2147483648 || q.code > 2147483647) throw invalidParams('"code" must be an integer from -2147483648 to 2147483647');
    throw new JR.JSONRPCErrorException(q.message, q.code, q.data);
  });
  return s;
}

// json-rpc-2.0's answer to one message's text, as it would go over a wire.
async function jrAnswer(server, text) {
  let a = await server.receiveJSON(text);
  if (a === null) return null;
  if (text.trimStart().startsWith('[') && !Array.isArray(a)) a = [a];  // §6 (see the header)
  return JSON.parse(JSON.stringify(a));
}

// ---- generated traffic -----------------------------------------------------
// Doubles that only have to round-trip (see the header).
const ROUND_TRIP = [2 ** 53 + 2, 2 ** 60, -(2 ** 63), 2 ** 64, 1e21, 123456789012345680000, Number.MAX_VALUE, -Number.MAX_VALUE,
  Number.MIN_VALUE, 2.2250738585072014e-308, 0.1, 0.1 + 0.2, 1 / 3, 1e-7, -1.5e300, 5e-324];
// Fractions for arithmetic: finite whatever they are added to.
const SMALL = [0.1, 0.1 + 0.2, 1 / 3, 1e-7, 5e-324, 2.2250738585072014e-308, -2.5e-300];
const arithNumber = (r) => r.weighted([[8, () => randNumber(r)], [1, () => r.pick(SMALL)], [1, () => r.pick([2 ** 53 - 1, -(2 ** 53 - 1), 0])]])();
const value = (r, depth = 3) => (r.chance(0.15) ? r.pick(ROUND_TRIP) : randJson(r, depth));
function structured(r) {
  const a = [];
  for (let i = r.int(0, 4); i > 0; i--) a.push(value(r));
  if (r.chance(0.5)) return a;
  const o = {};
  for (const v of a) o[randString(r, 6)] = v;
  return o;
}
const errorData = (r) => (r.chance(0.15) ? r.pick(ROUND_TRIP) : randData(r));
// A string of 1,000 to 70,000 characters (up to 280 KB): frames longer than one socket read.
const bulky = (r) => r.pick(['x', 'é', '😀', '\u2028', '"']).repeat(r.int(1000, 70000));
const notNumber = (r) => r.pick([null, true, false, 'x', '1', [], {}, [1], { a: 1 }]);

function byNameOrPosition(r, [n1, n2], x, y) {
  return r.pick([() => [x, y], () => ({ [n1]: x, [n2]: y }), () => ({ [n2]: y, [n1]: x })])();
}
function twoNumbers(r, names) {
  const x = arithNumber(r);
  const y = arithNumber(r);
  if (r.chance(0.7)) return byNameOrPosition(r, names, x, y);
  const [n1, n2] = names;
  return r.pick([
    () => [x], () => [x, y, arithNumber(r)], () => [], () => ({}), () => undefined,
    () => ({ [n1]: x }), () => ({ [n2]: y }),
    () => byNameOrPosition(r, names, notNumber(r), y), () => byNameOrPosition(r, names, x, notNumber(r)),
    () => byNameOrPosition(r, names, notNumber(r), notNumber(r)),
    () => ({ [n1]: x, [n2]: y, extra: 1 }),
    () => ({ [randString(r, 4)]: 1, [n2]: y, [randString(r, 4)]: 2, [n1]: x }),
    () => ({ [n1]: notNumber(r), zz: 1 }),
  ])();
}
function sumParams(r) {
  const a = [];
  for (let i = r.int(0, 6); i > 0; i--) a.push(arithNumber(r));
  if (r.chance(0.75)) return a;
  return r.pick([
    () => { a.splice(r.int(0, a.length), 0, randJson(r, 1)); return a; },
    () => [notNumber(r)], () => ({ a: 1 }), () => ({}), () => undefined,
  ])();
}
function failParams(r) {
  const valid = r.chance(0.75);
  let code = valid
    ? r.weighted([[3, () => r.int(-100000, 100000)], [2, () => r.pick([-32000, -32099, -32600, -32602, -32603, -32700, 0, 1, -1])],
      [1, () => r.pick([2147483647, -2147483648])]])()
    : r.pick([2147483648, -2147483649, 4294967296, 2 ** 53 - 1, 1.5, -0.5, '7', null, true, [], {}]);
  if (code === METHOD_NOT_FOUND) code = -32602;  // see the header
  const message = valid || r.chance(0.5) ? randString(r, 10) : r.pick([7, null, true, [], {}]);
  const data = errorData(r);
  if (r.chance(0.3)) {
    const a = [code, message];
    if (data !== undefined) a.push(data);
    if (!valid && r.chance(0.3)) a.length = r.pick([0, 1]);
    else if (!valid && r.chance(0.3)) a.push(...(a.length === 2 ? [null] : []), 'extra');
    return a;
  }
  const o = { code, message };
  if (data !== undefined) o.data = data;
  if (!valid && r.chance(0.3)) { if (r.chance(0.5)) delete o.message; else o[r.pick(['extra', 'Data', 'é'])] = 1; }
  return o;
}
const UNKNOWN = ['nope', 'Echo', 'SUM', 'echo ', ' echo', 'rpc.nope', '$/nope', 'ünknown', 'a.b.c', '', 'subtract\u0000', '😀'];

// One call: { method, params }.
function call(r) {
  const method = r.weighted([[3, 'subtract'], [2, 'add'], [3, 'sum'], [4, 'echo'], [1, 'get_data'], [4, 'fail'],
    [1, 'update'], [1, 'notify_hello'], [1, 'notify_sum'], [2, 'unknown']]);
  switch (method) {
    case 'subtract': return { method, params: twoNumbers(r, ['minuend', 'subtrahend']) };
    case 'add': return { method, params: twoNumbers(r, ['a', 'b']) };
    case 'sum': return { method, params: sumParams(r) };
    case 'echo': return { method, params: r.chance(0.1) ? undefined : r.chance(0.01) ? [bulky(r)] : structured(r) };
    case 'get_data': return { method, params: r.pick([undefined, undefined, [], {}, [1], { x: 1 }, [null], { é: 1, a: 2 }]) };
    case 'fail': return { method, params: failParams(r) };
    case 'unknown': return { method: r.chance(0.7) ? r.pick(UNKNOWN) : `no.${randString(r, 6)}`, params: r.chance(0.3) ? undefined : structured(r) };
    default: return { method, params: r.chance(0.3) ? undefined : structured(r) };
  }
}
// A request (with `id`) or a notification; members in either order.
function wire(r, c, id) {
  const m = { jsonrpc: '2.0', method: c.method };
  if (c.params !== undefined) m.params = c.params;
  if (id !== undefined) m.id = id;
  return r.chance(0.2) ? Object.fromEntries(Object.entries(m).reverse()) : m;
}
// The text of a message: compact, indented, and/or every non-ASCII UTF-16
// unit \u-escaped (a surrogate pair becomes two escapes).
function render(r, m) {
  const text = r.chance(0.8) ? JSON.stringify(m) : JSON.stringify(m, null, r.pick([1, 2, '\t']));
  return r.chance(0.2) ? text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}

// Messages (requests, notifications, batches of them, never empty) as text,
// and where to cut the bytes sent to weft.
function rawSequence(seed) {
  const r = new Rng(seed);
  const one = () => (r.chance(0.7) ? wire(r, call(r), randId(r)) : wire(r, call(r)));
  const texts = [];
  for (let n = r.int(1, 6); n > 0; n--) {
    if (r.chance(0.3)) {
      const b = [];
      for (let k = r.chance(0.05) ? r.int(20, 60) : r.int(1, 6); k > 0; k--) b.push(one());
      if (b.length > 1 && r.chance(0.1)) b[1].id = b[0].id ?? 1;  // a duplicate id
      texts.push(render(r, b));
    } else texts.push(render(r, one()));
  }
  const cuts = [];
  for (let n = r.int(0, 3); n > 0; n--) cuts.push(r.next());
  return { texts, cuts };
}

// ---- comparing ---------------------------------------------------------------
const order = (x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1);
const normalAnswer = (a) => (Array.isArray(a) ? a.map(normalResponse).sort(order) : normalResponse(a));
const normalAnswers = (list) => list.map(normalAnswer).sort(order);

// One connection to `weft serve --unix`: `exchange` sends the texts (as one
// byte string cut at `cuts`), then a request marking the end, and resolves
// with every answer before the marker's.
async function nativeConnection(path) {
  const socket = net.createConnection(path);
  await within(5000, new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); }), 'connect');
  let got = [];
  let waiting = null;
  const decoder = new FrameDecoder('len32be', (a) => {
    if (waiting && !Array.isArray(a) && a.id === waiting.mark) { const w = waiting; waiting = null; w.resolve(got); got = []; } else got.push(a);
  });
  socket.on('data', (c) => decoder.push(c));
  socket.on('close', () => waiting?.reject(new Error(`connection closed; answers so far ${JSON.stringify(got)}`)));
  return {
    exchange(texts, cuts, mark) {
      const bytes = Buffer.concat([...texts, JSON.stringify({ jsonrpc: '2.0', method: 'echo', id: mark })].map((t) => encodeFrame('len32be', t)));
      const at = [0, ...cuts.map((c) => Math.floor(c * bytes.length)).sort((x, y) => x - y), bytes.length];
      const done = new Promise((resolve, reject) => { waiting = { mark, resolve, reject }; });
      for (let i = 1; i < at.length; i++) if (at[i] > at[i - 1]) socket.write(bytes.subarray(at[i - 1], at[i]));
      return within(10000, done, `weft's answer to the end marker ${mark} (answers so far ${JSON.stringify(got)})`);
    },
    close: () => socket.destroy(),
  };
}

test('raw traffic: weft serve --demo and json-rpc-2.0 give the same answers to the same JSON text', T, async (t) => {
  t.diagnostic(`run seed ${RUN_SEED} (WEFT_NATIVE_DIFF_SEED), ${SEQUENCES} sequences`);
  const weft = await nativeConnection(sock);
  const jr = jrDemoServer();
  try {
    for (let i = 0; i < SEQUENCES; i++) {
      const seed = sequenceSeed(RUN_SEED, i);
      const { texts, cuts } = rawSequence(seed);
      const [w, j] = await Promise.all([
        weft.exchange(texts, cuts, `end-${i}`),
        Promise.all(texts.map((x) => jrAnswer(jr, x))).then((list) => list.filter((a) => a !== null)),
      ]);
      assert.deepEqual(normalAnswers(w), normalAnswers(j), `answers differ, sequence ${i}, seed ${seed}
sent:          ${texts.join('\n               ')}
weft:          ${JSON.stringify(w)}
json-rpc-2.0:  ${JSON.stringify(j)}
${replay(seed, 'raw traffic')}`);
    }
  } finally { weft.close(); }
});

// ---- vscode-jsonrpc as the client ---------------------------------------------
// Makes the call so that vscode-jsonrpc writes `params` as given (an array of
// one goes by position; the empty array goes as no params at all).
function send(conn, { method, params }) {
  if (params === undefined || (Array.isArray(params) && params.length === 0)) return conn.sendRequest(method);
  if (!Array.isArray(params)) return conn.sendRequest(method, params);
  if (params.length === 1) return conn.sendRequest(method, ParameterStructures.byPosition, params[0]);
  return conn.sendRequest(method, ...params);
}
// What a call came to: { ok } or { error }.
const outcome = (p) => p.then((ok) => ({ ok: canonical(ok) }), (e) => ({ error: normalError(e) }));
const jrOutcome = (a) => (a.error ? { error: normalError(a.error) } : { ok: canonical(a.result) });

function callSequence(seed) {
  const r = new Rng(seed);
  const ops = [];
  for (let n = r.int(1, 8); n > 0; n--) {
    if (r.chance(0.85)) ops.push({ kind: 'call', ...call(r) });
    else ops.push({ kind: 'notify', method: r.pick(['update', 'notify_hello', 'fail', 'nope']), params: r.chance(0.5) ? undefined : { x: value(r) } });
  }
  return ops;
}

test('vscode-jsonrpc client: weft serve --stdio --demo and json-rpc-2.0 give the same outcomes to its requests', T, async (t) => {
  t.diagnostic(`run seed ${RUN_SEED} (WEFT_NATIVE_DIFF_SEED), ${SEQUENCES} sequences`);
  const child = await startServer(['serve', '--stdio', '--demo']);
  // The request vscode-jsonrpc wrote last (sendRequest writes synchronously).
  let written = null;
  const writer = new StreamMessageWriter(child.stdin);
  // Its writes finish asynchronously: the last is awaited before the server
  // goes, so that none is left to write to a destroyed pipe.
  let lastWrite = Promise.resolve();
  const recording = {
    onError: writer.onError, onClose: writer.onClose, end: () => writer.end(), dispose: () => writer.dispose(),
    write: (m) => { written = m; return (lastWrite = writer.write(m)); },
  };
  // vscode-jsonrpc logs an answer it cannot match (to a notification, say).
  const complaints = [];
  const logger = { error: (m) => complaints.push(m), warn: (m) => complaints.push(m), info: () => {}, log: () => {} };
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), recording, logger);
  conn.listen();
  const jr = jrDemoServer();
  try {
    for (let i = 0; i < SEQUENCES; i++) {
      const seed = sequenceSeed(RUN_SEED, i);
      const ops = callSequence(seed);
      const sent = [];
      const weftOutcomes = [];
      const jrOutcomes = [];
      for (const op of ops) {
        written = null;
        if (op.kind === 'notify') conn.sendNotification(op.method, op.params);
        else weftOutcomes.push(outcome(send(conn, op)));
        assert.ok(written !== null, 'vscode-jsonrpc wrote the message');
        sent.push(written);
        // json-rpc-2.0 answers no notification (null), so none is compared.
        if (op.kind === 'call') jrOutcomes.push(jrAnswer(jr, JSON.stringify(written)).then(jrOutcome));
      }
      const w = await within(10000, Promise.all(weftOutcomes), `weft's answers to sequence ${i}, seed ${seed}: ${JSON.stringify(sent)}`);
      const j = await Promise.all(jrOutcomes);
      const why = `sequence ${i}, seed ${seed}\nsent: ${JSON.stringify(sent)}\n${replay(seed, 'vscode-jsonrpc client')}`;
      assert.deepEqual(w, j, `outcomes differ: weft (actual) vs json-rpc-2.0 (expected); ${why}`);
      assert.deepEqual(complaints, [], `vscode-jsonrpc complained; ${why}`);
    }
  } finally {
    await lastWrite.catch(() => {});
    conn.dispose();
    child.kill('SIGKILL');
  }
});
