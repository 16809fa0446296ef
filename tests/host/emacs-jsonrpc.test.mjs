// weft against Emacs's jsonrpc.el (Emacs 28, jsonrpc 1.0.14): a JSON-RPC
// and LSP-framing implementation in another language, with its own JSON
// parser, that weft did not write. Seeded random calls go both ways:
//   - jsonrpc.el as the client of `weft serve --stdio --demo`
//     (tests/host/emacs/client.el);
//   - `weft call --unix PATH --framing lsp` as the client of a jsonrpc.el
//     server (tests/host/emacs/server.el).
// Every answer must be what the method gives: echo its params, subtract the
// difference, fail exactly the error it was given.
//
//   WEFT_EMACS_SEED=N   run seed (default: random, printed)
//
// Values are those jsonrpc.el can carry unchanged (it reads an object as a
// plist, null as nil): no empty object (an empty plist is nil, sent as
// null), no "" key (its keyword ":" is written back as ":"), no U+0000
// (Emacs's parser refuses it without JSON_ALLOW_NUL).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { WEFT_BIN, killAll, repoRoot, runCli, tempDir, track, within } from './helpers.mjs';
import { Rng, randData, randInt, randJson, randNumber, randString } from '../support/diff-gen.mjs';

const SEED = process.env.WEFT_EMACS_SEED ? Number(process.env.WEFT_EMACS_SEED) >>> 0 : randomInt(0, 2 ** 32 - 1);
const EMACS = path.join(repoRoot, 'tests', 'host', 'emacs');
const T = { timeout: 120000 };
const tmp = tempDir();
after(() => {
  killAll();
  tmp.cleanup();
});

// `v` as jsonrpc.el carries it unchanged (see the header).
function carried(v) {
  if (typeof v === 'string') return v.replaceAll('\u0000', '0');
  if (Array.isArray(v)) return v.map(carried);
  if (v === null || typeof v !== 'object') return v;
  const o = {};
  for (const [k, x] of Object.entries(v)) o[k === '' ? 'empty' : carried(k)] = carried(x);
  if (Object.keys(o).length === 0) o.k = 0;
  return o;
}

// A call and the answer the method must give.
function randCall(r) {
  switch (r.weighted([[4, 'echo'], [2, 'subtract'], [2, 'fail'], [1, 'unknown']])) {
    case 'echo': {
      const params = carried(r.chance(0.5) ? [randJson(r), randJson(r)] : { v: randJson(r), [randString(r, 6)]: randJson(r) });
      return { method: 'echo', params, expect: { result: params } };
    }
    case 'subtract': {
      const a = randNumber(r), b = randNumber(r);
      return { method: 'subtract', params: [a, b], expect: { result: a - b } };
    }
    case 'fail': {
      const params = carried({ code: randInt(r) | 0, message: randString(r) });
      const data = randData(r);
      if (data !== undefined) params.data = carried(data);
      return { method: 'fail', params, expect: { error: { code: params.code, message: params.message, data: params.data ?? null } } };
    }
    default:
      return { method: 'no_such_method', params: [], expect: { error: { code: -32601 } } };
  }
}

test('jsonrpc.el as the client of weft serve --stdio: every seeded call gets the method\'s answer', T, async () => {
  console.log(`# WEFT_EMACS_SEED=${SEED}`);
  const r = new Rng(SEED);
  const calls = Array.from({ length: 400 }, () => randCall(r));
  // Frames larger than a pipe's buffer, in many-byte characters: both sides
  // count a Content-Length in bytes.
  const big = 'é😀日'.repeat(30000);
  calls.push({ method: 'echo', params: [big], expect: { result: [big] } });
  const input = path.join(tmp.dir, 'calls.json');
  const output = path.join(tmp.dir, 'outcomes.json');
  fs.writeFileSync(input, JSON.stringify(calls.map(({ method, params }) => ({ method, params }))));
  const emacs = track(spawn('emacs', ['--batch', '-Q', '-l', path.join(EMACS, 'client.el'), WEFT_BIN, input, output],
    { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  emacs.stderr.on('data', (d) => { stderr += d; });
  const code = await within(100000, new Promise((res) => emacs.once('exit', res)), 'emacs');
  assert.ok(fs.existsSync(output), `emacs exited ${code} without writing its outcomes: ${stderr}`);
  const outcomes = JSON.parse(fs.readFileSync(output, 'utf8'));
  assert.equal(outcomes.length, calls.length);
  calls.forEach((c, i) => {
    const got = outcomes[i];
    const what = `call ${i} (WEFT_EMACS_SEED=${SEED}): ${JSON.stringify(c.params).slice(0, 300)}`;
    if (c.method === 'no_such_method') assert.equal(got.error?.code, -32601, what);
    else assert.deepEqual(got, c.expect, what);
  });
});

test('weft call as the client of a jsonrpc.el server: every seeded call gets the method\'s answer', T, async () => {
  const sock = path.join(tmp.dir, 'emacs.sock');
  const emacs = track(spawn('emacs', ['--batch', '-Q', '-l', path.join(EMACS, 'server.el'), sock],
    { stdio: ['ignore', 'ignore', 'pipe'] }));
  await within(20000, new Promise((res) => {
    let text = '';
    emacs.stderr.on('data', (d) => { text += d; if (text.includes('listening')) res(); });
  }), 'the jsonrpc.el server');
  const r = new Rng(SEED ^ 0x5bd1e995);
  for (let i = 0; i < 40; i++) {
    const c = randCall(r);
    const res = await runCli(['call', '--unix', sock, '--framing', 'lsp', c.method, JSON.stringify(c.params)]);
    const what = `call ${i} (WEFT_EMACS_SEED=${SEED}) ${c.method} ${JSON.stringify(c.params).slice(0, 300)}: ${res.stderr}`;
    if (c.expect.result !== undefined) {
      assert.equal(res.code, 0, what);
      assert.deepEqual(JSON.parse(res.stdout), c.expect.result, what);
    } else {
      // An error answer: exit 1, the error object on stderr (README, "weft call").
      // jsonrpc.el sends no error data, and names an unknown method its own way.
      assert.equal(res.code, 1, what);
      const err = JSON.parse(res.stderr.trim().split('\n').at(-1));
      assert.equal(err.code, c.expect.error.code, what);
      if (c.method === 'fail') assert.equal(err.message, c.expect.error.message, what);
    }
  }
});
