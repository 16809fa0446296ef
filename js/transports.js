// Transports: { send, onMessage, destroy, onClose?, onSendError? }. They only
// move messages; the endpoint ignores anything that is not JSON-RPC 2.0.
//
// Packing (the postMessage transports, option `pack`): every postMessage costs
// a structured-clone setup and an event dispatch on the other side, so weft ↔
// weft links may coalesce. Messages handed to send() during one turn are queued
// and flushed in a microtask: one message is posted as is (plain JSON-RPC), two
// or more as ONE frame { "weft/pack": [m1, m2, …] } (no `jsonrpc` member, so no
// JSON-RPC peer mistakes it for a message). Every transport unpacks what it
// receives, whatever its option, and delivers the elements in order. A frame
// holds at most PACK_MAX messages, and a bulky message (payload > BULKY bytes)
// is posted on its own: at once, right after what is queued (ports, workers),
// or, by windowTransport, queued like the others and posted alone in its
// place between what was queued before and after it (see the constants).
//   pack: 'auto' (default)  plain until a pack frame arrives from the other
//                           side (it has proven it unpacks), then pack;
//   pack: true              pack from the start (the peer must be weft);
//   pack: false             never pack.
// Order is kept: once packing, every message goes through the queue.
//
// Send errors. Unpacked, send() posts at once and throws what postMessage
// throws (e.g. DataCloneError), as before. Packing, send() never throws
// (except for a bulky message a port/worker transport posts at once): if
// the flush fails, each queued message is posted on its own, and for each that
// still fails the handler given to onSendError(fn) is called as
// fn(message, error) — later than send(), from a microtask (or from
// destroy()), with the very object passed to send(); the messages around it
// are still delivered, in order. Without a handler: console.warn.
// destroy() flushes what is queued (synchronously, before detaching); after
// destroy() send() posts directly, as before.

const PACK_KEY = 'weft/pack';
// A pack holds at most PACK_MAX messages: past that the postMessage cost is
// already amortised, and smaller frames let the other side start sooner.
const PACK_MAX = 32;
// A message carrying more than BULKY bytes of strings/buffers is posted on its
// own: packing big payloads stalls the pipeline — the other side can start on
// nothing until the whole frame is cloned — and measured slower than posting
// them one by one (bench, 64 KiB echo). Ports and workers post it from send(),
// so that the other thread can start on it while this one finishes the call.
// windowTransport waits for the flush instead: send() runs deep inside the
// core's call (listener → endpoint → wasm → hook → send), and with DevTools/CDP attached
// (as in the bench, driven by playwright) Chromium's window.postMessage costs
// more the deeper the caller's stack is (it seems to capture a stack trace for
// the inspector; MessagePort.postMessage does not, nor does it without CDP):
// posting the 64 KiB echo answer from there took 60–65 µs instead of 40 µs,
// the whole gap between weft and its peers on the same-origin iframe row.
// The flush runs from a microtask, on an almost empty stack. (Doing the same
// for a Worker cost ~5–10 µs of p50 there: the post then waits for the rest
// of the call's bookkeeping.)
const BULKY = 8192;

// Whether `m`'s payload is bulky, looking at no more than a few dozen values
// (a cheap guess: small calls must not pay for a full walk).
function bulky(m) {
  let budget = 32;
  let size = 0;
  const walk = (v, depth) => {
    if (--budget < 0) return;
    if (typeof v === 'string') { size += v.length; return; }
    if (v === null || typeof v !== 'object') return;
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) { size += v.byteLength; return; }
    if (depth > 2) return;
    if (Array.isArray(v)) { for (let i = 0; i < v.length && budget > 0 && size <= BULKY; i++) walk(v[i], depth + 1); return; }
    for (const k in v) { walk(v[k], depth + 1); if (budget <= 0 || size > BULKY) return; }
  };
  if (m === null || typeof m !== 'object') return false;
  walk(m.params !== undefined ? m.params : m.result !== undefined ? m.result : m.error?.data, 0);
  return size > BULKY;
}

function isNodeEmitter(x) {
  return typeof x.on === 'function' && typeof x.off === 'function' && typeof x.addEventListener !== 'function';
}

function packMode(options, who) {
  const p = options?.pack ?? 'auto';
  if (p !== true && p !== false && p !== 'auto')
    throw new TypeError(`${who}: options.pack must be true, false or 'auto'`);
  return p;
}

// queueBulky: bulky messages wait for the flush too (windowTransport, see BULKY).
function make(post, attach, detach, closeSetup, mode, queueBulky = false) {
  let handler = null;
  let closeHandlers = [];
  let closed = false;
  let destroyed = false;
  let sendError = null;
  let packing = mode === true;
  let queue = [];
  let bulkyAt = [];  // indices in `queue` of the bulky messages (posted alone)
  let scheduled = false;

  const report = (m, e) => {
    if (sendError) {
      try { sendError(m, e); return; } catch (e2) { e = e2; }
    }
    console.warn('[weft] a message could not be sent:', e);
  };
  const flush = () => {
    scheduled = false;
    flushNow();
  };
  const postOne = (m) => {
    try { post(m); } catch (e) { report(m, e); }
  };
  // q[from..to) as one frame (or plain, if it is one message). The frame's
  // array is handed over: postMessage clones it at once, but a wrapper or a
  // stand-in (tests) may keep it, so it is never refilled.
  const postRun = (q, from, to) => {
    if (to - from === 1) { postOne(q[from]); return; }
    if (to - from < 1) return;
    try {
      post({ [PACK_KEY]: from === 0 && to === q.length ? q : q.slice(from, to) });
    } catch {
      for (let i = from; i < to; i++) postOne(q[i]);
    }
  };
  const flushNow = () => {
    const q = queue;
    const n = q.length;
    if (n === 0) return;
    if (n === 1) {
      // Posted as is; the array stays ours and is reused.
      const m = q[0];
      q.length = 0;
      bulkyAt.length = 0;
      postOne(m);
      return;
    }
    queue = [];
    if (bulkyAt.length === 0) { postRun(q, 0, n); return; }
    // Bulky messages alone, in their place between the frames around them.
    const b = bulkyAt;
    bulkyAt = [];
    let from = 0;
    for (let k = 0; k < b.length; k++) {
      postRun(q, from, b[k]);
      postOne(q[b[k]]);
      from = b[k] + 1;
    }
    postRun(q, from, n);
  };
  const deliver = (data) => {
    let p;
    if (typeof data === 'object' && data !== null && (p = data[PACK_KEY]) !== undefined &&
        Array.isArray(p) && !Array.isArray(data) && !('jsonrpc' in data)) {
      if (mode === 'auto') packing = true;
      for (let i = 0; i < p.length && handler; i++) handler(p[i]);
      return;
    }
    if (handler) handler(data);
  };
  const fireClose = () => {
    if (closed) return;
    closed = true;
    for (const h of closeHandlers) h();
  };
  attach(deliver);
  const undoClose = closeSetup ? closeSetup(fireClose) : null;
  return {
    send(msg) {
      if (!packing || destroyed) { post(msg); return; }
      if (bulky(msg)) {
        if (!queueBulky) {
          if (queue.length) flushNow();
          post(msg);  // throws like the unpacked path: the endpoint handles it
          return;
        }
        bulkyAt.push(queue.length);
      }
      queue.push(msg);
      if (queue.length >= PACK_MAX) {
        flushNow();
      } else if (!scheduled) { scheduled = true; queueMicrotask(flush); }
    },
    onMessage(h) { handler = h; },
    onClose(h) { closeHandlers.push(h); if (closed) h(); },
    onSendError(fn) { sendError = fn; },
    destroy() {
      if (!destroyed) {
        destroyed = true;
        flush();
      }
      handler = null;
      closeHandlers = [];
      sendError = null;
      detach(deliver);
      if (undoClose) undoClose();
    },
  };
}

/** A MessagePort (MessageChannel, worker_threads port, BroadcastChannel-like). */
export function portTransport(port, options) {
  const mode = packMode(options, 'portTransport()');
  const listener = (ev) => current(ev.data);
  let current = () => {};
  return make(
    (msg) => port.postMessage(msg),
    (deliver) => {
      current = deliver;
      port.addEventListener('message', listener);
      if (typeof port.start === 'function') port.start();
    },
    () => {
      port.removeEventListener('message', listener);
      current = () => {};
      try { port.close(); } catch { /* already closed */ }
    },
    (fire) => {
      port.addEventListener('close', fire);
      return () => port.removeEventListener('close', fire);
    },
    mode,
  );
}

/** A Worker: browser Worker or Node worker_threads Worker. Terminating it rejects pending calls. */
export function workerTransport(worker, options) {
  const mode = packMode(options, 'workerTransport()');
  if (isNodeEmitter(worker)) {
    let fn = null;
    return make(
      (msg) => worker.postMessage(msg),
      (deliver) => { fn = deliver; worker.on('message', fn); },
      () => { worker.off('message', fn); },
      (fire) => {
        worker.on('exit', fire);
        return () => worker.off('exit', fire);
      },
      mode,
    );
  }
  const listener = (ev) => current(ev.data);
  let current = () => {};
  return make(
    (msg) => worker.postMessage(msg),
    (deliver) => { current = deliver; worker.addEventListener('message', listener); },
    () => { worker.removeEventListener('message', listener); current = () => {}; },
    (fire) => {
      // Browsers fire no event when a worker is terminated: watch the call.
      const own = Object.prototype.hasOwnProperty.call(worker, 'terminate');
      const prev = worker.terminate;
      worker.terminate = function terminate(...args) {
        fire();
        return prev.apply(this, args);
      };
      return () => {
        if (own) worker.terminate = prev;
        else delete worker.terminate;
      };
    },
    mode,
  );
}

/** Inside a worker: the browser worker's global scope, or Node's parentPort. */
export function selfTransport(options) {
  const mode = packMode(options, 'selfTransport()');
  if (typeof process === 'object' && process?.versions?.node && typeof process.getBuiltinModule === 'function') {
    const wt = process.getBuiltinModule('node:worker_threads');
    if (wt && !wt.isMainThread && wt.parentPort) {
      const port = wt.parentPort;
      let fn = null;
      return make(
        (msg) => port.postMessage(msg),
        (deliver) => { fn = deliver; port.on('message', fn); },
        () => { port.off('message', fn); },
        null,
        mode,
      );
    }
  }
  const scope = globalThis;
  if (typeof scope.postMessage !== 'function' || typeof scope.addEventListener !== 'function')
    throw new TypeError('selfTransport(): not inside a worker');
  const listener = (ev) => current(ev.data);
  let current = () => {};
  return make(
    (msg) => scope.postMessage(msg),
    (deliver) => { current = deliver; scope.addEventListener('message', listener); },
    () => { scope.removeEventListener('message', listener); current = () => {}; },
    null,
    mode,
  );
}

/**
 * window.postMessage between frames. `origin` is the allowed origin (or a list
 * of them): messages from other origins, or from any window but `target`, are
 * ignored, and messages are posted with an explicit targetOrigin. Omitted, it
 * is `source`'s own origin (same-origin frames). "*" only when passed, with a warning.
 */
export function windowTransport(target, source = globalThis, origin, options) {
  const mode = packMode(options, 'windowTransport()');
  let allowed;
  if (origin === undefined) {
    const own = source?.location?.origin;
    if (!own || own === 'null')
      throw new TypeError('windowTransport(): pass the target origin (this window has no usable origin)');
    allowed = [own];
  } else {
    allowed = Array.isArray(origin) ? origin.slice() : [origin];
  }
  if (allowed.length === 0 || allowed.some((o) => typeof o !== 'string'))
    throw new TypeError('windowTransport(): origin must be a string or an array of strings');
  const any = allowed.includes('*');
  if (any) console.warn('[weft] windowTransport: targetOrigin "*" lets any origin read these messages');
  let postTo = any ? '*' : allowed[0];
  const listener = (ev) => {
    if (ev.source !== target) return;
    if (!any) {
      if (!allowed.includes(ev.origin)) return;
      postTo = ev.origin;  // answer the origin that is actually there
    }
    current(ev.data);
  };
  let current = () => {};
  return make(
    (msg) => target.postMessage(msg, postTo),
    (deliver) => { current = deliver; source.addEventListener('message', listener); },
    () => { source.removeEventListener('message', listener); current = () => {}; },
    null,
    mode,
    true,
  );
}
