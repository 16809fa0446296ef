// Transports: { send, onMessage, destroy, onClose? }. They only move messages;
// the endpoint ignores anything that is not JSON-RPC 2.0.

function isNodeEmitter(x) {
  return typeof x.on === 'function' && typeof x.off === 'function' && typeof x.addEventListener !== 'function';
}

function make(send, attach, detach, closeSetup) {
  let handler = null;
  let closeHandlers = [];
  let closed = false;
  const deliver = (data) => { if (handler) handler(data); };
  const fireClose = () => {
    if (closed) return;
    closed = true;
    for (const h of closeHandlers) h();
  };
  attach(deliver);
  const undoClose = closeSetup ? closeSetup(fireClose) : null;
  return {
    send,
    onMessage(h) { handler = h; },
    onClose(h) { closeHandlers.push(h); if (closed) h(); },
    destroy() {
      handler = null;
      closeHandlers = [];
      detach(deliver);
      if (undoClose) undoClose();
    },
  };
}

/** A MessagePort (MessageChannel, worker_threads port, BroadcastChannel-like). */
export function portTransport(port) {
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
  );
}

/** A Worker: browser Worker or Node worker_threads Worker. Terminating it rejects pending calls. */
export function workerTransport(worker) {
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
  );
}

/** Inside a worker: the browser worker's global scope, or Node's parentPort. */
export function selfTransport() {
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
  );
}

/**
 * window.postMessage between frames. `origin` is the allowed origin (or a list
 * of them): messages from other origins, or from any window but `target`, are
 * ignored, and messages are posted with an explicit targetOrigin. Omitted, it
 * is `source`'s own origin (same-origin frames). "*" only when passed, with a warning.
 */
export function windowTransport(target, source = globalThis, origin) {
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
  );
}
