// windowTransport across real origins in Chromium (three origins: A =
// 127.0.0.1, B = localhost, C = 127.0.0.2, each its own port):
//   - one weft endpoint's pack announcement is heeded only by an endpoint that
//     can be talking to it: the parent's weft server keeps answering a
//     non-weft client in the frame in plain JSON-RPC after the frame's weft
//     server has announced itself to the parent's weft client;
//   - with a list of allowed origins, a client keeps working after the frame
//     navigates to another allowed origin (whose server never speaks first).
// Run: node --test --test-concurrency=1 tests/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, pageServer, stopServer } from './chromium.mjs';

const T = { timeout: 30000 };

const PAGES = {
  // Parent (A): a weft client to the frame's weft server, and a weft server
  // for the frame's plain JSON-RPC client.
  '/crosstalk.html': `<!doctype html><meta charset="utf-8"><body><script type="module">
    import { JSONRPCClient, JSONRPCServer, windowTransport } from '/js/index.js';
    const B = new URLSearchParams(location.search).get('b');
    const frame = document.createElement('iframe');
    const up = new Promise((r) => addEventListener('message', function on(ev) {
      if (ev.origin === B && ev.data === 'frame-up') { removeEventListener('message', on); r(); }
    }));
    frame.src = B + '/crosstalk-frame.html?a=' + encodeURIComponent(location.origin);
    document.body.append(frame);
    await up;
    const server = new JSONRPCServer(windowTransport(frame.contentWindow, window, B));
    server.method('add', async ([a, b]) => a + b);
    const client = new JSONRPCClient(windowTransport(frame.contentWindow, window, B), { timeout: 5000 });
    const legacy = () => new Promise((r) => {
      addEventListener('message', function on(ev) {
        if (ev.data && ev.data.legacyGot) { removeEventListener('message', on); r(ev.data.legacyGot); }
      });
      frame.contentWindow.postMessage('legacy-call', B);
    });
    const before = await legacy();
    const weft = await Promise.all([client.request('ping'), client.request('ping'), client.request('ping')]);
    const afterAnnounce = await legacy();
    globalThis.__result = { before, weft, afterAnnounce, clientTuples: client.transport.tuples, serverTuples: server.transport.tuples };
  </script>`,
  // Frame (B): a weft server, and a plain client that reads JSON-RPC objects
  // only (two calls in one turn; it reports what arrived for them).
  '/crosstalk-frame.html': `<!doctype html><meta charset="utf-8"><script type="module">
    import { JSONRPCServer, windowTransport } from '/js/index.js';
    const A = new URLSearchParams(location.search).get('a');
    const s = new JSONRPCServer(windowTransport(parent, window, A));
    s.method('ping', async () => 'pong');
    let n = 0;
    addEventListener('message', (ev) => {
      if (ev.origin !== A || ev.data !== 'legacy-call') return;
      const ids = ['L' + ++n, 'L' + ++n];
      const got = [];
      const on = (e) => {
        const d = e.data;
        const mine = (m) => (Array.isArray(m) ? ids.includes(m[1]) : ids.includes(m && m.id));
        if (!(mine(d) || (d && Array.isArray(d['weft/pack']) && d['weft/pack'].some(mine)))) return;
        got.push(typeof d === 'object' && !Array.isArray(d) && d.jsonrpc === '2.0' ? d : { unreadable: String(Array.isArray(d) ? d.map(String) : JSON.stringify(d)) });
        if (got.length === 2 || got.some((g) => g.unreadable)) { removeEventListener('message', on); parent.postMessage({ legacyGot: got }, A); }
      };
      addEventListener('message', on);
      for (const [i, id] of ids.entries()) parent.postMessage({ jsonrpc: '2.0', id, method: 'add', params: [i, 10] }, A);
    });
    parent.postMessage('frame-up', A);
  </script>`,
  // Parent (A): a client allowing [B, C]; the frame goes from B to C.
  '/nav.html': `<!doctype html><meta charset="utf-8"><body><script type="module">
    import { JSONRPCClient, windowTransport } from '/js/index.js';
    const q = new URLSearchParams(location.search);
    const B = q.get('b'), C = q.get('c');
    const frame = document.createElement('iframe');
    // The frame's document never posts first (its server only answers): its
    // load event (after its module script ran) says it is there.
    const loaded = () => new Promise((r) => frame.addEventListener('load', r, { once: true }));
    const s = (p) => p.then((v) => ({ ok: v }), (e) => ({ code: e.code }));
    let ready = loaded();
    frame.src = B + '/nav-frame.html?a=' + encodeURIComponent(location.origin);
    document.body.append(frame);
    await ready;
    const c = new JSONRPCClient(windowTransport(frame.contentWindow, window, [B, C]), { timeout: 5000 });
    const first = await s(c.request('where'));
    ready = loaded();
    frame.src = C + '/nav-frame.html?a=' + encodeURIComponent(location.origin);
    await ready;
    const afterNav = await s(c.request('where'));
    const again = await s(c.request('where'));
    globalThis.__result = { first, afterNav, again };
  </script>`,
  '/nav-frame.html': `<!doctype html><meta charset="utf-8"><script type="module">
    import { JSONRPCServer, windowTransport } from '/js/index.js';
    const A = new URLSearchParams(location.search).get('a');
    const s = new JSONRPCServer(windowTransport(parent, window, A));
    s.method('where', () => location.origin);
  </script>`,
};

const servers = [];
let browser, A, B, C;

before(async () => {
  const origins = [];
  for (const [host, name] of [['127.0.0.1', '127.0.0.1'], ['127.0.0.1', 'localhost'], ['127.0.0.2', '127.0.0.2']]) {
    const s = pageServer(PAGES);
    await new Promise((r) => s.listen(0, host, r));
    servers.push(s);
    origins.push(`http://${name}:${s.address().port}`);
  }
  [A, B, C] = origins;
  browser = await launchChromium();
}, { timeout: 60000 });

after(async () => {
  await browser?.closeAll();
  for (const s of servers) await stopServer(s);
});

async function run(page) {
  const p = await browser.newPage();
  const errors = [];
  p.on('pageerror', (e) => errors.push(e.message));
  p.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  try {
    await p.goto(`${A}/${page}?b=${encodeURIComponent(B)}&c=${encodeURIComponent(C)}`, { waitUntil: 'load' });
    await p.waitForFunction(() => globalThis.__result, null, { timeout: 20000 });
    return { r: await p.evaluate(() => globalThis.__result), errors: errors.filter((e) => !/404/.test(e)) };
  } finally {
    await p.close();
  }
}

test('announcement: the parent\'s weft server ignores the frame\'s weft server\'s, and keeps answering a plain client in plain JSON-RPC', T, async () => {
  const { r, errors } = await run('crosstalk.html');
  assert.deepEqual(r.weft, ['pong', 'pong', 'pong']);
  assert.equal(r.clientTuples, true);
  assert.equal(r.serverTuples, false);
  assert.deepEqual(r.before, [{ jsonrpc: '2.0', result: 10, id: 'L1' }, { jsonrpc: '2.0', result: 11, id: 'L2' }]);
  assert.deepEqual(r.afterAnnounce, [{ jsonrpc: '2.0', result: 10, id: 'L3' }, { jsonrpc: '2.0', result: 11, id: 'L4' }]);
  assert.deepEqual(errors, []);
});

test('origins: with a list [B, C], a client keeps working after the frame navigates from B to C', T, async () => {
  const { r, errors } = await run('nav.html');
  assert.deepEqual(r, { first: { ok: B }, afterNav: { ok: C }, again: { ok: C } });
  assert.deepEqual(errors, []);
});
