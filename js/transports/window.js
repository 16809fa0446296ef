import { packMode } from '../pack.js';
import { makeTransport } from './transport.js';
import { eventListening } from './listen.js';

/**
 * window.postMessage between frames. `origin` is the allowed origin (or a list
 * of them): messages from other origins, or from any window but `target`, are
 * ignored, and messages are posted with an explicit targetOrigin (with a
 * list, to each of them until the other side's origin is known). Omitted, it
 * is `source`'s own origin (same-origin frames). "*" only when passed, with a warning.
 *
 * Messages are posted as a port's are (js/pack.js). With DevTools attached,
 * Chromium's window.postMessage records its caller's stack for the
 * inspector, so it costs more the deeper it is called from (here: listener →
 * endpoint → wasm → hook → send); a browser without DevTools does not, and
 * posting from that depth is what measured fastest there (bench/README.md,
 * "The Chromium rows without DevTools").
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
  // As a MessageEvent spells them ("https://a.example/" is "https://a.example"),
  // once each: a message posted to each origin must reach the target once.
  allowed = [...new Set(allowed.map(originOf))];
  const any = allowed.includes('*');
  if (any) console.warn('[weft] windowTransport: targetOrigin "*" lets any origin read these messages');
  // Where to post: known once the other side has spoken (its origin), or
  // when only one origin is allowed. Until then a message is posted once per
  // allowed origin: the browser delivers only the post whose targetOrigin is
  // the target's, and drops the others unread.
  let postTo = any ? '*' : allowed.length === 1 ? allowed[0] : null;
  const accept = (ev) => {
    if (ev.source !== target) return false;
    if (!any) {
      if (!allowed.includes(ev.origin)) return false;
      postTo = ev.origin;  // answer the origin that is actually there
    }
    return true;
  };
  const post = (msg, transfer) => {
    if (postTo !== null) return target.postMessage(msg, postTo, transfer);
    // Copied, not transferred: a transferred buffer would be gone after the first post.
    for (const o of allowed) target.postMessage(msg, o);
  };
  return makeTransport({
    post,
    ...eventListening(source, accept),
    watchClose: null,
    mode,
  });
}

function originOf(o) {
  if (o === '*') return o;
  let u = null;
  try { u = new URL(o).origin; } catch { /* not a URL */ }
  if (u === null || u === 'null') throw new TypeError(`windowTransport(): ${JSON.stringify(o)} is not an origin`);
  return u;
}
