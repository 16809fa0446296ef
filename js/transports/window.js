import { packMode } from '../pack.js';
import { makeTransport } from './transport.js';
import { eventListening } from './listen.js';

/**
 * window.postMessage between frames. `origin` is the allowed origin (or a list
 * of them): messages from other origins, or from any window but `target`, are
 * ignored, and messages are posted with an explicit targetOrigin, never to an
 * origin not allowed. With a list, each message goes to the origin of
 * `target`'s current document when this window can read it (same origin) and
 * it is allowed; otherwise once to each allowed origin: the browser delivers
 * only the post whose targetOrigin is that document's and drops the others
 * unread. Not just to the origin heard last: the target may have navigated to
 * another allowed origin since, and a server there never speaks first. (So a
 * list costs a structured clone per allowed origin, and buffers are then
 * copied, not transferred.) Omitted, `origin` is `source`'s own (real)
 * origin, `source.origin`: same-origin frames; a window whose origin is
 * opaque ("null": a sandboxed frame, a file: page) must pass it. "*" only
 * when passed, with a warning.
 *
 * Messages are posted as a port's are (js/pack.js), from deep in the call
 * stack: fastest without DevTools (bench/README.md, "The Chromium rows
 * without DevTools").
 */
export function windowTransport(target, source = globalThis, origin, options) {
  const mode = packMode(options, 'windowTransport()');
  let allowed;
  if (origin === undefined) {
    // The window's own origin, not its URL's: in a sandboxed frame
    // location.origin is the URL's while the document's origin is "null".
    const own = typeof source?.origin === 'string' ? source.origin : source?.location?.origin;
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
  // One origin allowed (or "*"): post to it; a list: see above.
  const postTo = any ? '*' : allowed.length === 1 ? allowed[0] : null;
  const accept = (ev) => ev.source === target && (any || allowed.includes(ev.origin));
  const post = (msg, transfer) => {
    if (postTo !== null) return target.postMessage(msg, postTo, transfer);
    const now = originNow(target);
    if (now !== null && allowed.includes(now)) return target.postMessage(msg, now, transfer);
    // Copied, not transferred: a transferred buffer would be gone after the first post.
    for (const o of allowed) target.postMessage(msg, o);
  };
  const transport = makeTransport({
    post,
    ...eventListening(source, accept),
    watchClose: null,
    mode,
  });
  // Every transport on this window hears every answer from `target`: the
  // endpoint numbers its calls from a random id (PeerOptions::first_id), so
  // two clients here never take each other's answers.
  transport.shared = true;
  return transport;
}

// The origin of `w`'s current document, or null where this window may not
// read it (cross-origin access throws) or it is opaque.
function originNow(w) {
  try {
    const o = w.origin;
    return typeof o === 'string' && o !== 'null' ? o : null;
  } catch {
    return null;
  }
}

function originOf(o) {
  if (o === '*') return o;
  let u = null;
  try { u = new URL(o).origin; } catch { /* not a URL */ }
  if (u === null || u === 'null') throw new TypeError(`windowTransport(): ${JSON.stringify(o)} is not an origin`);
  return u;
}
