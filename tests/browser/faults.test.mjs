// weft-rpc faults only a browser has (docs/reliability.md): an iframe
// navigated away in the middle of calls. A window has no "closed" event for
// its child's document, so the calls the old document never answered settle
// through their timeout (-32001), each exactly once; calls answered before
// the navigation keep their results; and once a weft page is back in the
// frame, the same endpoint serves new calls correctly.
// Run: node --test --test-concurrency=1 tests/browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, pageServer, stopServer } from './chromium.mjs';

const T = { timeout: 30000 };

const PAGES = {
  // The parent: calls into the frame, navigates it mid-call, reports every settlement.
  '/parent.html': `<!doctype html><meta charset="utf-8"><body><script type="module">
    import { Peer, windowTransport } from '/js/index.js';
    const frame = document.createElement('iframe');
    const loaded = () => new Promise((r) => frame.addEventListener('load', r, { once: true }));
    frame.src = '/child.html';
    document.body.append(frame);
    await loaded();
    const peer = new Peer(windowTransport(frame.contentWindow, window, location.origin), { timeout: 1500 });
    const ready = () => new Promise((r) => addEventListener('message', function on(ev) {
      if (ev.data && ev.data.method === 'child.ready') { removeEventListener('message', on); r(); }
    }));
    const childUp = ready();
    frame.contentWindow.postMessage('hello?', location.origin);  // the child may have started already
    await Promise.race([childUp, peer.request('echo', ['warm'])]);
    const counts = new Map();
    const track = (name, p) => p.then(
      (v) => { counts.set(name, (counts.get(name) ?? 0) + 1); return { name, ok: v }; },
      (e) => { counts.set(name, (counts.get(name) ?? 0) + 1); return { name, code: e.code }; });
    const answered = await Promise.all(Array.from({ length: 20 }, (_, i) => track('echo' + i, peer.request('echo', [i]))));
    const hanging = Array.from({ length: 50 }, (_, i) => track('hang' + i, peer.request('hang', [i])));
    const batch = peer.batch(Array.from({ length: 10 }, (_, i) => ({ method: 'hang', params: [i] }))).map((p, i) => track('batch' + i, p));
    await peer.request('echo', ['the hanging calls have arrived']);
    frame.src = '/elsewhere.html';   // navigated mid-call: the old document is gone
    await loaded();
    const lost = await Promise.all([...hanging, ...batch]);
    const back = ready();
    frame.src = '/child.html';
    await loaded();
    await back;
    const after = await Promise.all(Array.from({ length: 20 }, (_, i) => peer.request('echo', ['after', i])));
    const stats = peer.stats();
    globalThis.__result = { answered, lost, after, counts: [...counts.values()], stats };
  </script>`,
  '/child.html': `<!doctype html><meta charset="utf-8"><script type="module">
    import { Peer, windowTransport } from '/js/index.js';
    const peer = new Peer(windowTransport(parent, window, location.origin), { timeout: 0 });
    peer.method('echo', (p) => p);
    peer.method('hang', () => new Promise(() => {}));
    peer.notify('child.ready', {});
  </script>`,
  '/elsewhere.html': '<!doctype html><meta charset="utf-8"><p>not a weft page</p>',
};

let server, browser, base;

before(async () => {
  server = pageServer(PAGES);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
}, { timeout: 60000 });

after(async () => {
  await browser?.closeAll();
  await stopServer(server);
});

test('an iframe navigated mid-call: each pending call settles once (-32001), answered ones keep their result, later calls work', T, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  try {
    await page.goto(`${base}/parent.html`, { waitUntil: 'load' });
    await page.waitForFunction(() => globalThis.__result, null, { timeout: 20000 });
    const r = await page.evaluate(() => globalThis.__result);
    r.answered.forEach((o, i) => assert.equal(o.ok[0], i));
    assert.equal(r.lost.length, 60);
    for (const o of r.lost) assert.equal(o.code, -32001, `${o.name}: ${JSON.stringify(o)}`);
    assert.deepEqual(new Set(r.counts), new Set([1]), 'every promise settled exactly once');
    r.after.forEach((v, i) => assert.deepEqual(v, ['after', i]));
    assert.deepEqual({ pending: r.stats.pending, calls: r.stats.calls }, { pending: 0, calls: 0 });
    assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
  } finally {
    await page.close();
  }
});
