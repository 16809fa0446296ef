// Listening for 'message', two ways: an EventTarget (MessagePort, browser
// Worker, a worker's global scope, window) hands each listener a MessageEvent;
// Node's emitter API (on/off: worker_threads Worker, parentPort) the data itself.

/** A Node EventEmitter without addEventListener (a worker_threads Worker; Node's MessagePort has both and is used as an EventTarget). */
export function isNodeEmitter(x) {
  return typeof x.on === 'function' && typeof x.off === 'function' && typeof x.addEventListener !== 'function';
}

/**
 * { listen, unlisten } for 'message' events on `target`: receive(ev.data) for
 * every event, or only for those `accept(ev)` returns true for.
 */
export function eventListening(target, accept) {
  let current = () => {};
  const listener = accept
    ? (ev) => { if (accept(ev)) current(ev.data); }
    : (ev) => current(ev.data);
  return {
    listen(receive) { current = receive; target.addEventListener('message', listener); },
    unlisten() { target.removeEventListener('message', listener); current = () => {}; },
  };
}

/** { listen, unlisten } for 'message' on a Node EventEmitter. */
export function emitterListening(emitter) {
  let fn = null;
  return {
    listen(receive) { fn = receive; emitter.on('message', fn); },
    unlisten() { emitter.off('message', fn); },
  };
}
