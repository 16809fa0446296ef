// Replays tests/vectors/peer/*.txt against the WebAssembly build, through the
// text path (NDJSON framing + JSON codec + demo methods), exactly as
// tests/vectors_test.cpp does natively: both must produce the same bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { ready, TextEndpoint } from '../../js/core.js';

const dir = new URL('../vectors/peer/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();

function parse(text) {
  const cases = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('## ')) { cases.push({ name: line.slice(3), steps: [] }); return; }
    if (!line || line[0] === '#' || !cases.length) return;
    const sp = line.indexOf(' ');
    cases.at(-1).steps.push({ op: sp < 0 ? line : line.slice(0, sp), rest: sp < 0 ? '' : line.slice(sp + 1), line: i + 1 });
  });
  return cases;
}

function harness() {
  const ep = new TextEndpoint();
  const sleeps = [];
  let order = 0;
  const h = { ep, now: 0 };
  ep._register('sleep', (paramsText, token) => {
    const ms = JSON.parse(paramsText).ms;
    sleeps.push({ due: h.now + ms, order: order++, ms, token });
    return -1;  // answered later
  }, 0, { params: [{ name: 'ms', type: 'integer' }] });
  ep.onCancel = (token) => {
    const i = sleeps.findIndex((s) => s.token === token);
    if (i < 0) return;
    sleeps.splice(i, 1);
    ep.replyErrorText(token, '{"code":-32800,"message":"Request cancelled"}');
  };
  h.setTime = (t) => {
    h.now = t;
    sleeps.sort((a, b) => (a.due !== b.due ? a.due - b.due : a.order - b.order));
    while (sleeps.length && sleeps[0].due <= h.now) {
      const s = sleeps.shift();
      ep.replyText(s.token, String(s.ms));
    }
    ep.advance(h.now);
  };
  return h;
}

function runCase(file, c) {
  const h = harness();
  const { ep } = h;
  const where = (s) => `${file}:${s.line}: ${s.op} ${s.rest}`;
  let last = 0;
  const drained = () => {
    assert.deepEqual(ep.frames, [], `${file}:${last} — unexpected output after this step`);
  };
  try {
    for (const s of c.steps) {
      if (s.op === '<--') {
        assert.ok(ep.frames.length > 0, `${where(s)}: nothing was sent`);
        assert.equal(ep.frames.shift(), s.rest, where(s));
        continue;
      }
      drained();
      last = s.line;
      switch (s.op) {
        case '-->': ep.feed(s.rest, h.now); break;
        case 'call': {
          let rest = s.rest;
          let timeout = -1;
          const p = rest.lastIndexOf(' timeout=');
          if (p >= 0) { timeout = Number(rest.slice(p + 9)); rest = rest.slice(0, p); }
          const sp = rest.indexOf(' ');
          const method = sp < 0 ? rest : rest.slice(0, sp);
          const ptext = sp < 0 ? '-' : rest.slice(sp + 1);
          const id = ep.call(method, ptext === '-' ? null : ptext, timeout, h.now);
          assert.ok(id > 0, where(s));
          break;
        }
        case 'notify': {
          const sp = s.rest.indexOf(' ');
          const ptext = sp < 0 ? '-' : s.rest.slice(sp + 1);
          assert.equal(ep.notifyText(sp < 0 ? s.rest : s.rest.slice(0, sp), ptext === '-' ? null : ptext), 1, where(s));
          break;
        }
        case 'cancel': assert.ok(ep.cancel(Number(s.rest)), where(s)); break;
        case 'time': h.setTime(Number(s.rest)); break;
        case 'close': ep.close(); break;
        case 'settled': {
          const sp = s.rest.indexOf(' ');
          const id = Number(s.rest.slice(0, sp));
          assert.ok(ep.settled.has(id), `${where(s)}: call ${id} has not settled`);
          assert.deepEqual(ep.settled.get(id), JSON.parse(s.rest.slice(sp + 1)), where(s));
          break;
        }
        case 'pending': assert.equal(ep.pending(), Number(s.rest), where(s)); break;
        case 'inflight': assert.equal(ep.inFlight(), Number(s.rest), where(s)); break;
        case 'diag': assert.ok(ep.diags.includes(s.rest), `${where(s)}: diagnostics were ${JSON.stringify(ep.diags)}`); break;
        default: assert.fail(`${where(s)}: unknown step`);
      }
    }
    drained();
  } finally {
    ep.destroy();
  }
}

test('endpoint vectors replay exactly on the WebAssembly build', { timeout: 30000 }, async (t) => {
  await ready;
  assert.ok(files.length >= 3, 'vector files found');
  let cases = 0;
  for (const f of files) {
    for (const c of parse(readFileSync(new URL(f, dir), 'utf8'))) {
      cases++;
      await t.test(`${f}: ${c.name}`, () => runCase(f, c));
    }
  }
  assert.ok(cases > 0);
});
