// What one small request costs a JSON-RPC server, alone: N requests
// ({"jsonrpc":"2.0","method":"add","params":{"a":1,"b":2},"id":n}, or weft's
// tuple [0n, n, "add", {a,b}] with --shape tuple) handed to the server's
// port listener directly, answers counted and dropped: no postMessage, no
// client. The server's share of a round trip, which a foreign client's p50
// carries (bench/README.md). --shape notification: the same without an id
// ({"jsonrpc":"2.0","method":"add","params":{"a":1,"b":2}}), which each
// server runs and never answers (not with --cold, which awaits answers).
// --shape batch: each message a batch (§6) of 4 such requests, answered as
// one array; the time is per request, as for the others.
// Per request: elapsed ÷ N, in runs of N (200,000) after three of a quarter
// as many to warm up; the minimum of the runs is printed with all of them. Servers: weft, json-rpc-2.0, and two that are not
// peers: 'raw (JSON-RPC objects)' (no library) and 'wasm floor' (the least a
// core behind marshalling does, wasm-floor.mjs).
//   node bench/node/server-cost.mjs [weft,json-rpc-2.0,...] [--shape object|tuple|notification] [--runs 5] [--n 200000]
//        [--cold 6] [--side client [--answer error]]
// --cold F: each request is timed alone (its answer awaited), after F
// generated functions of 3,000 branches each have run once: code enough that
// the caches no longer hold the server's, as after a browser's own work
// between two messages. Each function is too large for V8 to optimize, so
// the code in between stays the same through the run. Runs of 4,000; as
// above, the minimum of the runs' means is printed, beside the same for the
// requests without the code in between (bench/README.md, "Where a cold
// message's time goes").
// (bench/node/server-instructions.sh counts the same requests' instructions.)
// --side client: the other end instead. A client's call add({a:1,b:2}),
// answered from a microtask by a stand-in server on its port (plain
// objects; with --shape tuple, weft's tuples after that server's
// announcement, as between two weft endpoints with default options), timed
// one at a time until its promise resolves: the client's share of a round
// trip. Clients: weft, json-rpc-2.0. --answer error: the stand-in answers
// each call with the error {"code": 5, "message": "five"} (as a tuple
// [3n, id, 5, "five"] with --shape tuple), and the call must reject with it;
// on the server side (weft, json-rpc-2.0), each request is for "fail", whose
// handler throws that error (contenders.mjs).
// Needs dist/weft.wasm (bash scripts/build-wasm.sh) for weft.
import { connect, serve } from './contenders.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i < 0 ? dflt : args.splice(i, 2)[1];
};
const shape = opt('--shape', 'object');
const side = opt('--side', 'server');
const runs = Number(opt('--runs', '5'));
const cold = Number(opt('--cold', '0'));
const answerKind = opt('--answer', 'result');
if (answerKind !== 'result' && answerKind !== 'error') throw new Error(`--answer ${answerKind}: result or error`);
const failing = answerKind === 'error';
const N = Number(opt('--n', cold ? '4000' : '200000'));
const libs = (args[0] ?? 'weft,json-rpc-2.0').split(',');
const SIDES = { server: ['weft', 'json-rpc-2.0', 'raw (JSON-RPC objects)', 'wasm floor'], client: ['weft', 'json-rpc-2.0'] };
if (!SIDES[side]) throw new Error(`--side ${side}: server or client`);
for (const lib of libs) if (!SIDES[side].includes(lib)) throw new Error(`${lib}: one of ${SIDES[side].join(', ')}`);
if (!['object', 'tuple', 'notification', 'batch'].includes(shape)) throw new Error(`--shape ${shape}: object, tuple, notification or batch`);
const noted = shape === 'notification';
if (noted && (cold || side !== 'server')) throw new Error('--shape notification: a server, without --cold');
const B = shape === 'batch' ? 4 : 1;  // requests per message
if (B > 1 && (cold || side !== 'server')) throw new Error('--shape batch: a server, without --cold');
if (failing && side === 'server' && (cold || libs.some((l) => l !== 'weft' && l !== 'json-rpc-2.0')))
  throw new Error('--answer error on the server side: weft or json-rpc-2.0, without --cold');

const served = failing ? 'fail' : 'add';
const object = (id) => ({ jsonrpc: '2.0', method: served, params: { a: 1, b: 2 }, id });
const request = shape === 'tuple'
  ? (id) => [0n, id, served, { a: 1, b: 2 }]
  : noted ? () => ({ jsonrpc: '2.0', method: served, params: { a: 1, b: 2 } })
    : B > 1 ? (id) => Array.from({ length: B }, (_, k) => object(B * id + k)) : object;
const turn = () => new Promise((r) => setImmediate(r));

// The code for --cold: F functions of 3,000 branches on their own constants.
// Smaller ones get optimized after a few thousand requests, and their
// smaller code then evicts less as the run goes on.
const evictors = Array.from({ length: cold }, (_, k) => {
  let body = 'let a = x | 0, b = (x * 7) | 0, c = 0;\n';
  for (let j = 0; j < 3000; j++)
    body += `if ((a + ${j * k + 1}) & ${1 << (j % 5)}) c = (c + a * ${j + k} + b) | 0; else b = (b ^ c ^ ${k + 3 * j}) | 0;\n`;
  return new Function('x', `${body}return c ^ b;`);
});
function evict() {
  let s = 0;
  for (let k = 0; k < evictors.length; k++) s ^= evictors[k](k);
  return s;
}

// Each run: the requests of `runAlone` without, then with, the code in
// between; the first of each untimed (the evicting functions and the code
// measured reach their tiers before anything is timed).
async function coldRuns(runAlone) {
  const us = [], hot = [];
  await runAlone(N, null);
  await runAlone(N, evict);
  for (let r = 0; r < runs; r++) {
    hot.push(await runAlone(N, null));
    us.push(await runAlone(N, evict));
  }
  return { us, hot };
}

// Times `f` (a promise's maker) alone, after `before` when given.
async function alone(n, before, f) {
  let ns = 0n;
  for (let i = 0; i < n; i++) {
    before?.();
    const t0 = process.hrtime.bigint();
    await f();
    ns += process.hrtime.bigint() - t0;
  }
  return Number(ns) / n / 1000;
}

// The stand-in server of --side client: each request it is posted (alone,
// in a weft pack frame, or as a tuple) answered from a microtask.
const T_REQUEST = 0n, T_RESULT = 2n, T_ERROR = 3n;
function answerer(deliver) {
  const answer = (m) => {
    if (Array.isArray(m) && m[0] === T_REQUEST) return failing ? [T_ERROR, m[1], 5, 'five'] : [T_RESULT, m[1], 3];
    if (m?.method === 'add' && m.id !== undefined) {
      return failing ? { jsonrpc: '2.0', error: { code: 5, message: 'five' }, id: m.id } : { jsonrpc: '2.0', result: 3, id: m.id };
    }
    return undefined;  // weft's announcement, a notification
  };
  return (m) => {
    for (const x of Array.isArray(m?.['weft/pack']) ? m['weft/pack'] : [m]) {
      const a = answer(x);
      if (a !== undefined) queueMicrotask(() => deliver(a));
    }
  };
}

async function measureClient(lib) {
  if (shape === 'tuple' && lib !== 'weft') throw new Error('--shape tuple: weft only');
  let listener = null;
  const post = answerer((data) => listener({ data }));
  const port = {
    postMessage(m) { post(m); },
    addEventListener(type, l) { if (type === 'message') listener = l; },
    removeEventListener() {},
    start() {},
    close() {},
  };
  const c = await connect(lib, port);
  // A weft server's announcement (js/pack.js): the client packs and sends tuples.
  if (shape === 'tuple') listener({ data: { jsonrpc: '2.0', method: '$/weft/pack', params: { tuples: 1 } } });
  let calls = 0;
  const call = failing
    ? () => c.small().then(() => { throw new Error(`${lib}: resolved`); }, (e) => {
      if (e.code !== 5) throw new Error(`${lib}: a wrong error`);
      calls++;
    })
    : async () => {
      if ((await c.small()) !== 3) throw new Error(`${lib}: a wrong answer`);
      calls++;
    };
  const runAlone = (n, before) => alone(n, before, call);
  let r;
  if (cold) {
    r = await coldRuns(runAlone);
  } else {
    for (let i = 0; i < 3; i++) await runAlone(N / 4, null);
    r = { us: [], hot: [] };
    for (let i = 0; i < runs; i++) r.us.push(await runAlone(N, null));
  }
  c.close();
  if (calls === 0) throw new Error(`${lib}: no calls`);
  return r;
}

async function measure(lib) {
  if (side === 'client') return measureClient(lib);
  if (shape === 'tuple' && lib !== 'weft') throw new Error('--shape tuple: weft only');
  let answers = 0;
  let listener = null;
  const port = {
    // An answer to `add` (weft also posts its announcement, docs/protocol.md).
    postMessage(m) {
      const right = (a) => (failing ? a?.error?.code === 5 || (Array.isArray(a) && a[2] === 5) : a?.result === 3);
      if (B > 1 && Array.isArray(m)) answers += m.filter(right).length;  // a batch's answers (§6)
      else if (right(m)) answers++;
    },
    addEventListener(type, l) { if (type === 'message') listener = l; },
    removeEventListener() {},
    start() {},
    close() {},
  };
  const stop = await serve(lib, port);
  let id = 0;
  async function run(n) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      listener({ data: request(++id) });
      if ((i & 63) === 63) await turn();  // answers given later (promises) go out
    }
    await turn();
    return ((performance.now() - t0) * 1000) / (n * B);
  }
  // One request at a time, its answer awaited, after `evict` when given.
  const one = async () => {
    const want = answers + 1;
    listener({ data: request(++id) });
    while (answers < want) await null;
  };
  const runAlone = (n, before) => alone(n, before, one);
  let us = [], hot = [];
  if (cold) {
    ({ us, hot } = await coldRuns(runAlone));
  } else {
    for (let r = 0; r < 3; r++) await run(N / 4);
    for (let r = 0; r < runs; r++) us.push(await run(N));
  }
  await turn();
  stop();
  if (answers !== (noted ? 0 : id * B)) throw new Error(`${lib}: ${answers} answers to ${id} ${noted ? 'notifications' : 'requests'}`);
  return { us, hot };
}

const fmt = (v) => Math.min(...v).toFixed(3);
for (const lib of libs) {
  const { us, hot } = await measure(lib);
  const also = hot.length ? `, ${fmt(hot)} with no code between requests` : '';
  console.log(`${lib.padEnd(24)} ${side} ${shape}${failing ? ', error answers' : ''}: ${fmt(us)} µs per ${noted ? 'notification' : 'request'}${cold ? ` after ${cold} evicting functions` : ''}${also} (runs: ${us.map((u) => u.toFixed(3)).join(' ')})`);
}
