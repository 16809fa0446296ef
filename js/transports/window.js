import { packMode } from '../pack.js';
import { makeTransport } from './transport.js';
import { eventListening } from './listen.js';

/**
 * window.postMessage between frames. `origin` is the allowed origin (or a list
 * of them): messages from other origins, or from any window but `target`, are
 * ignored, and messages are posted with an explicit targetOrigin. Omitted, it
 * is `source`'s own origin (same-origin frames). "*" only when passed, with a warning.
 *
 * Every message is posted from the flush (shallowPosts), packing or not,
 * where ports and workers post from send(): send() runs deep inside the
 * core's call (listener → endpoint → wasm → hook → send), and with DevTools/CDP
 * attached (as in the bench, driven by playwright) Chromium's
 * window.postMessage costs more the deeper the caller's stack is (it seems to
 * capture a stack trace for the inspector; MessagePort.postMessage does not,
 * nor does it without CDP): posting the 64 KiB echo answer from there took
 * 60–65 µs instead of 40 µs, the whole gap between weft and its peers on the
 * same-origin iframe row (and small calls without packing ran at half the
 * rate of json-rpc-2.0's). The flush runs from a microtask, or at the end of
 * a delivery, on an almost empty stack.
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
  const accept = (ev) => {
    if (ev.source !== target) return false;
    if (!any) {
      if (!allowed.includes(ev.origin)) return false;
      postTo = ev.origin;  // answer the origin that is actually there
    }
    return true;
  };
  return makeTransport({
    post: (msg, transfer) => target.postMessage(msg, postTo, transfer),
    ...eventListening(source, accept),
    watchClose: null,
    mode,
    shallowPosts: true,
  });
}
