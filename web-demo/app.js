// The weft web demo: one page talking JSON-RPC 2.0 across four boundaries
// (a cross-origin iframe, a dedicated Worker, a MessageChannel, and a native
// `weft serve --ws` over a WebSocket), with a live message log and a latency
// panel. Plain ES modules; no bundler.
import config from './config.js';
import {
  Peer, RPCError, ErrorCode, ready, coreVersion, asMessage,
  windowTransport, workerTransport, portTransport, webSocketTransport,
} from '/js/index.js';
import { serveDemo } from './methods.js';

const $ = (sel, root = document) => root.querySelector(sel);
const h = (tag, attrs = {}, ...kids) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) el.append(kid);
  return el;
};
const ms = (x) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toString()) + ' ms';
const short = (v, n = 60) => {
  const s = v === undefined ? 'undefined' : JSON.stringify(v);
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
};
const errText = (e) => (e instanceof RPCError || typeof e?.code === 'number') ? `${e.code} ${e.message}` : String(e?.message ?? e);

$('#app-origin').textContent = location.origin;

// ---------------------------------------------------------------- message log
const logEl = $('#log');
const LOG_MAX = 400;
let logPaused = false;
let logTotal = 0;

function hasError(msg) {
  if (Array.isArray(msg)) return msg.some(hasError);
  return !!(msg && typeof msg === 'object' && msg.error);
}
function summarize(msg) {
  if (Array.isArray(msg)) return `batch [${msg.length}]`;
  if (!msg || typeof msg !== 'object') return short(msg, 40);
  if (msg.jsonrpc !== '2.0') return `non-JSON-RPC ${short(msg, 40)}`;
  if (msg.method) return msg.id === undefined ? `${msg.method} (notification)` : `${msg.method} #${msg.id}`;
  if (msg.error) return `#${msg.id} error ${msg.error.code} ${msg.error.message}`;
  return `#${msg.id} result ${short(msg.result, 32)}`;
}

function log(boundary, dir, msg, note) {
  if (logPaused && dir !== 'rejected' && dir !== 'info') return;
  logTotal++;
  const t = new Date();
  const time = t.toTimeString().slice(0, 8) + '.' + String(t.getMilliseconds()).padStart(3, '0');
  const bad = dir === 'rejected' || hasError(msg);
  const arrow = { out: '→', in: '←', rejected: '✕', info: '•' }[dir];
  let json = '';
  try { json = JSON.stringify(msg, null, 2); } catch { json = String(msg); }
  const li = h('li', { class: `entry dir-${dir}${bad ? ' is-error' : ''}`, 'data-boundary': boundary, 'data-dir': dir },
    h('span', { class: 'time', text: time }),
    h('span', { class: `tag tag-${boundary}`, text: boundary }),
    h('span', { class: 'dir', title: dir, text: arrow }),
    msg === undefined
      ? h('span', { class: 'summary', text: note ?? '' })
      : h('details', {},
        h('summary', { text: (note ? note + ' · ' : '') + summarize(msg) }),
        h('pre', { text: json })),
  );
  logEl.prepend(li);
  while (logEl.childElementCount > LOG_MAX) logEl.lastElementChild.remove();
  $('#log-count').textContent = `${logTotal} msg${logTotal === 1 ? '' : 's'}`;
}
$('#log-clear').addEventListener('click', () => { logEl.replaceChildren(); logTotal = 0; $('#log-count').textContent = '0 msgs'; });
$('#log-errors-only').addEventListener('change', (e) => logEl.classList.toggle('errors-only', e.target.checked));

/**
 * Wraps a transport so every message in and out lands in the log, as the
 * JSON-RPC it says (tuples, docs/protocol.md, shown as message objects).
 */
function logged(t, boundary) {
  return {
    get tuples() { return t.tuples; },
    send(m, ...rest) { log(boundary, 'out', asMessage(m)); t.send(m, ...rest); },
    onSendError: typeof t.onSendError === 'function' ? (fn) => t.onSendError(fn) : undefined,
    onMessage(fn) { t.onMessage((d) => { log(boundary, 'in', asMessage(d)); fn(d); }); },
    onClose: typeof t.onClose === 'function' ? (fn) => t.onClose(fn) : undefined,
    destroy() { t.destroy(); },
  };
}

// ------------------------------------------------------------------ boundaries
const boundaries = {
  iframe: { title: 'iframe', sub: `second-origin <iframe> · windowTransport` },
  worker: { title: 'Worker', sub: 'dedicated module Worker · workerTransport' },
  channel: { title: 'MessageChannel', sub: 'port1 ↔ port2 · portTransport' },
  // The native server (C++, weft serve --ws --demo) has no `ping`: echo serves the burst.
  native: { title: 'native', sub: 'weft serve --ws (C++) · webSocketTransport', ping: 'echo' },
};
// `fail` as every server answers it: the native demo's answers with the error
// it is given, the page's own servers ignore the params (web-demo/methods.js).
const FAIL = { code: 4000, message: 'Deliberate failure', data: { hint: 'handlers choose code, message and data' } };

function setStatus(b, state, text) {
  const el = $(`[data-testid="${b}-status"]`);
  el.dataset.state = state;
  el.textContent = text ?? state;
}
function out(b, key, state, text, title) {
  const el = $(`[data-testid="${b}-out-${key}"]`);
  el.dataset.state = state;
  el.textContent = text;
  el.title = title ?? text;
}

/** A client Peer for boundary `b`, with the notifications servers send back. */
function clientPeer(b, transport) {
  const peer = new Peer(logged(transport, b), { timeout: 10000 });
  peer.onNotify('boundary.ready', () => setStatus(b, 'ready'));
  peer.onNotify('note.ack', (p) => {
    const B = boundaries[b];
    clearTimeout(B.ackTimer);
    out(b, 'notify', 'ok', `delivered · ${p.where} counted note #${p.count}`);
  });
  peer.onNotify('slow.aborted', (p) => out(b, 'abort', 'ok', `handler saw the abort after ${p.afterMs} ms ✓`));
  return peer;
}

// iframe: parent <-> a page on the second origin.
let frameEl;
let frameLoads = 0;
function frameURL() { return `${config.frame}/web-demo/frame.html?load=${++frameLoads}`; }
function startFrame() {
  const B = boundaries.iframe;
  B.peer = clientPeer('iframe', windowTransport(frameEl.contentWindow, window, config.frame));
  frameEl.src = frameURL();
}
function reloadFrame() {
  setStatus('iframe', 'loading', 'reloading');
  frameEl.src = frameURL();   // cross-origin: navigating is allowed, location.reload() is not
}
function swapFrameHostile() {
  // The same <iframe> (so the same source window) but on a disallowed origin:
  // its forged messages pass the source check and must fail the origin check.
  setStatus('iframe', 'hostile', 'hostile page loaded');
  frameEl.src = `${config.hostile}/web-demo/hostile.html`;
}

// Worker.
function startWorker() {
  const B = boundaries.worker;
  B.worker = new Worker('./worker.js', { type: 'module', name: 'weft-demo-worker' });
  B.worker.addEventListener('error', (e) => { log('worker', 'info', undefined, `worker error: ${e.message}`); });
  B.peer = clientPeer('worker', workerTransport(B.worker));
  setStatus('worker', 'loading');
}
function terminateWorker() {
  const B = boundaries.worker;
  if (!B.worker) return;
  B.worker.terminate();          // workerTransport notices: pending calls fail with -32002
  B.worker = null;
  setStatus('worker', 'terminated');
  log('worker', 'info', undefined, 'worker terminated');
}

// MessageChannel: both ports live in this page; port2 runs the demo server.
function startChannel() {
  const B = boundaries.channel;
  const mc = new MessageChannel();
  B.server = new Peer(portTransport(mc.port2), { timeout: 0 });
  serveDemo(B.server, 'channel');
  B.peer = clientPeer('channel', portTransport(mc.port1));
  B.server.ready.then(() => B.server.notify('boundary.ready', { where: 'channel' }));
}

// native: the browser's WebSocket to `weft serve --ws`, started by npm start
// (web-demo/server.mjs): the same JSON text the C++ core parses everywhere.
function startNative() {
  const B = boundaries.native;
  if (!config.native) {
    setStatus('native', 'unavailable', 'not running');
    log('native', 'info', undefined, `native server not running: ${config.nativeWhy}`);
    return;
  }
  setStatus('native', 'loading', 'connecting');
  const ws = new WebSocket(config.native);
  B.ws = ws;
  ws.addEventListener('open', () => { if (B.ws === ws) setStatus('native', 'ready'); });
  ws.addEventListener('close', (ev) => {
    log('native', 'info', undefined, `WebSocket closed (${ev.code})`);
    if (B.ws === ws) { B.ws = null; setStatus('native', 'closed', `closed (${ev.code})`); }
  });
  B.peer = clientPeer('native', webSocketTransport(ws));
}
function disconnectNative() {
  const B = boundaries.native;
  if (!B.ws) return;
  B.ws.close(1000);   // webSocketTransport notices: pending calls fail with -32002
}

// ----------------------------------------------------------------- the actions
const actions = {
  async call(b) {
    const text = $(`[data-testid="${b}-call-input"]`).value;
    out(b, 'call', 'pending', 'calling echo…');
    const t0 = performance.now();
    try {
      const r = await boundaries[b].peer.request('echo', { text });
      out(b, 'call', 'ok', `echo → ${short(r)} · ${ms(performance.now() - t0)}`);
    } catch (e) { out(b, 'call', 'error', `failed: ${errText(e)}`); }
  },
  notify(b) {
    const B = boundaries[b];
    out(b, 'notify', 'pending', 'sent; waiting for the server to acknowledge…');
    clearTimeout(B.ackTimer);
    B.ackTimer = setTimeout(() => out(b, 'notify', 'error', 'no acknowledgement within 3 s'), 3000);
    B.peer.notify('note', { text: $(`[data-testid="${b}-call-input"]`).value });
  },
  async batch(b) {
    out(b, 'batch', 'pending', 'batch of 4 sent…');
    const entries = [
      { method: 'add', params: [2, 3] },
      { method: 'echo', params: ['batched'] },
      { method: 'note', params: { text: 'in a batch' }, notification: true },
      { method: 'fail', params: FAIL },
    ];
    const t0 = performance.now();
    const res = await Promise.allSettled(boundaries[b].peer.batch(entries));
    const parts = res.map((r, i) => {
      const m = entries[i].method;
      if (entries[i].notification) return `${m} → notified`;
      return r.status === 'fulfilled' ? `${m} → ${short(r.value, 24)}` : `${m} → ✕ ${r.reason?.code ?? ''}`;
    });
    const okShape = res[0].value === 5 && res[3].status === 'rejected' && res[3].reason?.code === 4000;
    out(b, 'batch', okShape ? 'ok' : 'error', `${parts.join(' · ')} · ${ms(performance.now() - t0)}`);
  },
  async slow(b) {
    const B = boundaries[b];
    if (B.slowAbort) B.slowAbort.abort();
    const ac = new AbortController();
    B.slowAbort = ac;
    out(b, 'slow', 'pending', 'slow call running (5 s)… press Cancel');
    out(b, 'abort', 'idle', '');
    $(`[data-testid="${b}-cancel"]`).disabled = false;
    const t0 = performance.now();
    try {
      const r = await B.peer.request('slow', { ms: 5000 }, { signal: ac.signal, timeout: 20000 });
      out(b, 'slow', 'ok', `completed: ${short(r)} after ${ms(performance.now() - t0)}`);
    } catch (e) {
      const dt = B.cancelAt ? performance.now() - B.cancelAt : null;
      if (e?.code === ErrorCode.RequestCancelled) {
        out(b, 'slow', 'cancelled', `cancelled: rejected ${ms(dt ?? 0)} after Cancel (${errText(e)})`);
      } else if (e?.code === ErrorCode.Closed) {
        const why = { worker: 'the worker was terminated', native: 'the WebSocket closed' }[b] ?? 'the channel closed';
        out(b, 'slow', 'closed', `failed at once: ${errText(e)} — ${why}`);
      } else {
        out(b, 'slow', 'error', `failed: ${errText(e)}`);
      }
    } finally {
      if (B.slowAbort === ac) { B.slowAbort = null; B.cancelAt = null; $(`[data-testid="${b}-cancel"]`).disabled = true; }
    }
  },
  cancel(b) {
    const B = boundaries[b];
    if (!B.slowAbort) return;
    B.cancelAt = performance.now();
    out(b, 'abort', 'pending', 'waiting for the handler to report the abort…');
    B.slowAbort.abort();
  },
  async fail(b) {
    out(b, 'fail', 'pending', 'calling fail…');
    try {
      const r = await boundaries[b].peer.request('fail', FAIL);
      out(b, 'fail', 'unexpected', `unexpectedly succeeded: ${short(r)}`);
    } catch (e) {
      out(b, 'fail', 'error', `RPCError ${e.code}: ${e.message}${e.data ? ' · data ' + short(e.data, 48) : ''}`);
    }
  },
  async stats(b) {
    out(b, 'stats', 'pending', 'asking…');
    if (b === 'native') {
      try {
        const s = await boundaries[b].peer.request('rpc.ping');
        out(b, 'stats', 'ok', `rpc.ping: ${s.status} · weft ${s.version} · ${s.connections} connection(s) · up ${Math.round(s.uptime_ms / 1000)} s`);
      } catch (e) { out(b, 'stats', 'error', `failed: ${errText(e)}`); }
      return;
    }
    try {
      const s = await boundaries[b].peer.request('stats');
      const el = $(`[data-testid="${b}-out-stats"]`);
      for (const k of ['handled', 'notes', 'aborted', 'rejected']) if (k in s) el.dataset[k] = s[k];
      out(b, 'stats', 'ok', `handled ${s.handled} · notes ${s.notes} · aborted ${s.aborted}${'rejected' in s ? ` · rejected ${s.rejected}` : ''}`);
    } catch (e) { out(b, 'stats', 'error', `failed: ${errText(e)}`); }
  },
};

function row(label, controls, ...outs) {
  return h('div', { class: 'row' },
    h('div', { class: 'row-label', text: label }),
    h('div', { class: 'row-controls' }, controls),
    h('div', { class: 'row-outs' }, outs));
}
function output(b, key) { return h('output', { class: 'out', 'data-testid': `${b}-out-${key}`, 'data-state': 'idle' }); }
function button(b, key, label, cls = '') {
  return h('button', { class: cls, 'data-testid': `${b}-${key}`, onclick: () => actions[key]?.(b) ?? extras[key]?.(b) }, label);
}
const extras = {
  reload: () => reloadFrame(),
  swap: () => swapFrameHostile(),
  terminate: () => terminateWorker(),
  restart: () => { terminateWorker(); startWorker(); },
  disconnect: () => disconnectNative(),
  reconnect: () => { disconnectNative(); startNative(); },
};

function card(b) {
  const B = boundaries[b];
  const extra = {
    iframe: [button(b, 'reload', 'Reload iframe', 'ghost small'), button(b, 'swap', 'Swap in hostile page', 'ghost danger small')],
    worker: [button(b, 'terminate', 'Terminate worker', 'ghost danger small'), button(b, 'restart', 'Restart worker', 'ghost small')],
    channel: [],
    native: [button(b, 'disconnect', 'Close WebSocket', 'ghost danger small'), button(b, 'reconnect', 'Reconnect', 'ghost small')],
  }[b];
  const cancel = button(b, 'cancel', 'Cancel', 'ghost');
  cancel.disabled = true;
  const el = h('article', { class: 'card boundary', id: `card-${b}`, 'data-testid': `card-${b}` },
    h('header', { class: 'card-head' },
      h('div', {},
        h('h2', {}, h('span', { class: `tag tag-${b}`, text: B.title })),
        h('p', { class: 'muted small', text: B.sub })),
      h('span', { class: 'pill status', 'data-testid': `${b}-status`, 'data-state': 'loading', text: 'loading' })),
    b === 'iframe' ? h('div', { class: 'frame-slot', id: 'frame-slot' }) : null,
    row('request', [h('input', { 'data-testid': `${b}-call-input`, value: 'hello weft', 'aria-label': `${b} echo text`, spellcheck: 'false' }), button(b, 'call', 'Call echo', 'primary')], output(b, 'call')),
    row('notify', [button(b, 'notify', 'Send note')], output(b, 'notify')),
    row('batch', [button(b, 'batch', 'Run batch')], output(b, 'batch')),
    row('cancel', [button(b, 'slow', 'Start slow call'), cancel], output(b, 'slow'), output(b, 'abort')),
    row('error', [button(b, 'fail', 'Trigger failing call')], output(b, 'fail')),
    row('server', [button(b, 'stats', 'Server stats', 'ghost small'), ...extra], output(b, 'stats')),
  );
  return el;
}

const grid = $('#boundaries');
for (const b of Object.keys(boundaries)) grid.append(card(b));

// The hostile frame finds it as parent.frames['weft-demo-frame'].
frameEl = h('iframe', { id: 'demo-frame', name: 'weft-demo-frame', title: 'weft demo iframe (second origin)', 'data-testid': 'demo-frame' });
$('#frame-slot').append(frameEl);

// ------------------------------------------------ origin checks (monitoring)
// weft's windowTransport silently drops messages from any window but the
// iframe and from any origin but the iframe's. This listener only counts
// and logs what was dropped, so the check is visible.
let rejected = 0;
window.addEventListener('message', (ev) => {
  if (ev.source === frameEl.contentWindow && ev.origin === config.frame) return;
  rejected++;
  $('#rejected-count').textContent = String(rejected);
  const why = ev.source === frameEl.contentWindow ? 'rejected origin' : 'rejected source';
  log('hostile', 'rejected', ev.data, `${why} ${ev.origin}`);
  if (ev.data && typeof ev.data === 'object' && 'hostileDone' in ev.data) actions.stats('iframe');
});

let hostileRuns = 0;
$('#hostile').addEventListener('click', () => {
  const slot = $('#hostile-slot');
  slot.replaceChildren(h('iframe', {
    title: 'hostile frame (third origin)', 'data-testid': 'hostile-frame',
    src: `${config.hostile}/web-demo/hostile.html?frame=weft-demo-frame&run=${++hostileRuns}`,
  }));
  slot.classList.add('shown');
});

// ----------------------------------------------------------------- latency
const benchRows = $('#bench-rows');
for (const b of Object.keys(boundaries)) {
  benchRows.append(h('tr', { 'data-testid': `bench-result-${b}`, 'data-state': 'idle' },
    h('td', {}, h('span', { class: `tag tag-${b}`, text: boundaries[b].title })),
    h('td', { class: 'num', 'data-k': 'p50', text: '–' }),
    h('td', { class: 'num', 'data-k': 'p99', text: '–' }),
    h('td', { class: 'num', 'data-k': 'rate', text: '–' })));
}

async function burst(peer, method = 'ping', n = 1000, inFlight = 32) {
  const lat = new Array(n);
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const s = performance.now();
      await peer.request(method, [i]);
      lat[i] = performance.now() - s;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const total = performance.now() - t0;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(n - 1, Math.floor(p * n))];
  return { p50: q(0.5), p99: q(0.99), rate: n / (total / 1000), total };
}

const results = {};
function drawChart() {
  const svg = $('#bench-chart');
  const NS = 'http://www.w3.org/2000/svg';
  const s = (tag, attrs, text) => {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    return el;
  };
  svg.replaceChildren();
  const names = Object.keys(boundaries);
  const max = Math.max(0.001, ...names.map((b) => results[b]?.p99 ?? 0));
  const x0 = 122, w = 310, rowH = 46;
  names.forEach((b, i) => {
    const y = 16 + i * rowH;
    const r = results[b];
    svg.append(s('text', { x: 0, y: y + 14, class: 'c-label' }, boundaries[b].title));
    svg.append(s('rect', { x: x0, y, width: w, height: 28, class: 'c-track', rx: 4 }));
    if (r) {
      svg.append(s('rect', { x: x0, y, width: Math.max(2, (r.p99 / max) * w), height: 28, class: `c-p99 c-${b}`, rx: 4 }));
      svg.append(s('rect', { x: x0, y: y + 6, width: Math.max(2, (r.p50 / max) * w), height: 16, class: `c-p50 c-${b}`, rx: 3 }));
      svg.append(s('text', { x: x0 + w + 10, y: y + 12, class: 'c-val' }, `p50 ${ms(r.p50)} · p99 ${ms(r.p99)}`));
      svg.append(s('text', { x: x0 + w + 10, y: y + 26, class: 'c-sub' }, `${Math.round(r.rate).toLocaleString('en-US')} calls/s`));
    } else {
      svg.append(s('text', { x: x0 + w + 10, y: y + 18, class: 'c-sub' }, 'not run yet'));
    }
  });
  svg.append(s('text', { x: x0, y: 16 + names.length * rowH + 4, class: 'c-sub' }, 'inner bar p50, outer bar p99 (same scale)'));
}
drawChart();

$('#bench-run').addEventListener('click', async (ev) => {
  const btn = ev.currentTarget;
  btn.disabled = true;
  for (const b of Object.keys(boundaries)) {
    const tr = $(`[data-testid="bench-result-${b}"]`);
    tr.dataset.state = 'running';
    tr.querySelector('[data-k="p50"]').textContent = '…';
    logPaused = true;
    log(b, 'info', undefined, 'latency burst: 1,000 ping calls (messages not logged)');
    try {
      const r = await burst(boundaries[b].peer, boundaries[b].ping);
      results[b] = r;
      tr.dataset.state = 'done';
      tr.querySelector('[data-k="p50"]').textContent = ms(r.p50);
      tr.querySelector('[data-k="p99"]').textContent = ms(r.p99);
      tr.querySelector('[data-k="rate"]').textContent = Math.round(r.rate).toLocaleString('en-US');
      logPaused = false;
      log(b, 'info', undefined, `burst done: p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, ${Math.round(r.rate)} calls/s`);
    } catch (e) {
      tr.dataset.state = 'error';
      tr.querySelector('[data-k="p50"]').textContent = 'failed';
      logPaused = false;
      log(b, 'info', undefined, `burst failed: ${errText(e)}`);
    }
    drawChart();
  }
  btn.disabled = false;
});

// ------------------------------------------------------------------ start
ready.then(() => {
  const el = $('#core-status');
  el.dataset.state = 'ready';
  el.textContent = `core ready${coreVersion() ? ' · ' + coreVersion() : ''}`;
}, (e) => {
  const el = $('#core-status');
  el.dataset.state = 'error';
  el.textContent = `core failed: ${errText(e)}`;
});
startFrame();
startWorker();
startChannel();
startNative();
