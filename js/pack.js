// Packing, for the postMessage transports (option `pack`; the wire format,
// the announcement and tuples: docs/protocol.md, "Packing over postMessage").
// Every postMessage costs a structured-clone setup and an event dispatch on
// the other side, so weft ↔ weft links may coalesce: messages handed to
// send() during one turn are queued and flushed in a microtask, one as is
// (plain JSON-RPC), two or more as ONE frame { "weft/pack": [m1, m2, …] }.
// Every transport unpacks, whatever its option, and delivers the elements in
// order. A frame holds at most PACK_MAX messages, and a bulky message is
// posted on its own, at once, right after what is queued (see the constants).
//   pack: 'auto' (default)  plain until the other side proves it unpacks (a
//                           pack frame or its announcement arrives, from an
//                           endpoint this one can talk to), then pack;
//   pack: true              pack from the start (the peer must be weft);
//   pack: false             never pack.
// Order is kept: once packing, every message goes through the queue. Two
// weft endpoints with default options pack after their first exchange; a
// foreign peer only ever receives plain JSON-RPC (plus the announcement, a
// "$/" notification). The announcement's {"tuples": 1} says this end reads
// tuples (js/tuples.js); onTuples is called when the other side's says so.
//
// Whose announcement counts. A window carries every transport on it, so one
// endpoint hears what another endpoint there is told: a weft server in a
// frame announces to the parent's weft client, and the parent's weft server
// (talking to a non-weft client in that frame) hears it too. So the
// announcement names the sender's role, {"tuples": 1, "role": "server"}
// ("client", "server" or "peer", given by the endpoint: setRole()), and an
// endpoint heeds only one from an endpoint it can be talking to: a client
// ignores a client's, a server a server's; a peer heeds every one, and so
// does a transport no endpoint named a role to. One without a role (an
// older weft) is heeded as before. A pack frame switches 'auto' packing on
// under the same rule, judged by what it holds: a client heeds a frame
// holding an answer, a server one holding a request (that sender announced
// before it packed; the frame matters when its announcement went unheard).
//
// Send errors. Unpacked, send() posts at once and throws what postMessage
// throws (e.g. DataCloneError). Packing, send() never throws (except for a
// bulky message, posted at once, or the first one sent while a plain message
// is delivered): if the flush fails, each queued message is posted on its
// own, and for each that still fails the handler given to onSendError(fn) is
// called as fn(message, error) — later than send(), from a microtask (or
// from destroy()), with the very object passed to send(); the messages
// around it are still delivered, in order. Without a handler: console.warn.
// destroy() flushes what is queued (synchronously, before detaching); after
// close() send() posts directly, unpacked (a transport's destroy() then
// drops what it is given: transports/transport.js).
//
// Snapshot. A message posted at once is cloned at once; a queued one is
// copied when queued (snapshot()), or the flush would send what its params,
// result or data hold by then (a params object reused in the same turn).
// Plain objects and arrays are copied in JS, as structured clone copies them
// (structuredClone() costs ~10x more for a small message), other objects by
// structuredClone(); a value reached twice is copied twice, as JSON text
// would carry it, and a message of many objects (or a cycle) is
// structured-cloned whole. A message the copy throws on (a function, a
// throwing getter) is queued as it is: its flush fails and reports it as
// above. A Proxy over a plain object or an array, which structured clone
// refuses but JS cannot tell from that object, is copied as that data; so
// that it goes alike queued or not, a message posted at once that structured
// clone refuses is posted as its snapshot (postNow).

import { T_ERROR, T_REQUEST, T_RESULT, isTuple, tuplePayload } from './tuples.js';

const PACK_KEY = 'weft/pack';
const ANNOUNCE_METHOD = '$/weft/pack';
const announcement = (params) => Object.freeze({ jsonrpc: '2.0', method: ANNOUNCE_METHOD, params: Object.freeze(params) });
// By the sender's role (setRole); none: no endpoint named one.
const ANNOUNCE = {
  none: announcement({ tuples: 1 }),
  client: announcement({ tuples: 1, role: 'client' }),
  server: announcement({ tuples: 1, role: 'server' }),
  peer: announcement({ tuples: 1, role: 'peer' }),
};

// The flush's microtask: Node's queueMicrotask costs an async resource each.
const resolved = Promise.resolve();

function isAnnouncement(d) {
  return typeof d === 'object' && d !== null && d.method === ANNOUNCE_METHOD && d.jsonrpc === '2.0' && !('id' in d);
}
// Whether an endpoint of `role` heeds announcement `d` (see "Whose
// announcement counts"): not a client a client's, nor a server a server's.
function heeds(role, d) {
  return role === null || role === 'peer' || d.params?.role !== role;
}
// Whether pack frame `p` holds what an endpoint of `role` reads: a server a
// request, a client an answer (one level into a batch).
function reads(role, m) {
  if (isTuple(m)) return role === 'server' ? m[0] === T_REQUEST : m[0] === T_RESULT || m[0] === T_ERROR;
  if (typeof m !== 'object' || m === null) return false;
  if (Array.isArray(m)) return m.some((e) => !Array.isArray(e) && reads(role, e));
  return role === 'server' ? typeof m.method === 'string' && 'id' in m : !('method' in m) && ('result' in m || 'error' in m);
}
function heedsFrame(role, p) {
  return role === null || role === 'peer' || p.some((m) => reads(role, m));
}
// A pack holds at most PACK_MAX messages: past that the postMessage cost is
// already amortised, and smaller frames let the other side start sooner.
const PACK_MAX = 32;
// A message carrying more than BULKY bytes of strings/buffers is posted on its
// own: packing big payloads stalls the pipeline — the other side can start on
// nothing until the whole frame is cloned — and measured slower than posting
// them one by one (bench, 64 KiB echo). It is posted from send(), so that the
// other side can start on it while this one finishes the call. (Waiting for
// the flush instead cost a Worker ~5–10 µs of p50: the post then waits for
// the rest of the call's bookkeeping.)
const BULKY = 8192;

const OBJECT = Object.prototype;
const ARRAY = Array.prototype;
const clone = (v) => structuredClone(v);  // where there is none, v is kept
// An object, or what structured clone refuses (copy() throws).
const deep = (x) => (typeof x === 'object' ? x !== null : typeof x === 'function' || typeof x === 'symbol');
// The copy walks paths, not objects: a value reached twice is copied twice.
// Past BUDGET objects (a shared value reached by very many paths, a cycle)
// the whole message is structured-cloned instead, which keeps sharing and
// cycles and takes one pass over the objects.
const BUDGET = 1024;
// So is one with more than ELEMENTS array elements: the copy visits holes.
const ELEMENTS = 1 << 16;
const OVER = new Error('over budget');
let left = 0, elements = 0;
const copy = (v, other) => {
  if (typeof v !== 'object') throw new TypeError('not cloneable');
  if (--left < 0) throw OVER;
  const p = Object.getPrototypeOf(v);
  if (p === ARRAY && Array.isArray(v)) {
    if ((elements -= v.length) < 0) throw OVER;
    // slice() keeps holes, and a packed array packed: V8 clones a holey
    // array as a sparse one, several times slower.
    const a = ARRAY.slice.call(v);
    for (let i = 0; i < a.length; i++) if (deep(a[i])) a[i] = copy(a[i], other);
    return a;
  }
  if (p !== OBJECT && p !== null) return other(v);
  const o = { ...v };  // own enumerable members, getters read once
  for (const k in o) {
    if (!deep(o[k])) continue;
    // Assigning "__proto__" would set the prototype.
    if (k === '__proto__') Object.defineProperty(o, k, { value: copy(o[k], other), writable: true, enumerable: true, configurable: true });
    else o[k] = copy(o[k], other);
  }
  return o;
};

/**
 * `v` copied (see "Snapshot"), or `v` when that throws. `other(x)` copies
 * what is neither an array nor a plain object, and a whole message past
 * BUDGET objects.
 */
export function snapshot(v, other, n = 1) {
  if (typeof v !== 'object' || v === null) return v;
  const outer = left, outerN = elements;  // a getter read by the copy may send: its own snapshot
  left = BUDGET * n;
  elements = ELEMENTS * n;
  try {
    return copy(v, other);
  } catch (e) {
    if (e !== OVER) return v;
    // Refused by structured clone (a Proxy in it): copied within wider bounds.
    try { return other(v); } catch (x) { return n === 1 && x?.name === 'DataCloneError' ? snapshot(v, other, 256) : v; }
  } finally {
    left = outer;
    elements = outerN;
  }
}

// Whether `m`'s payload is bulky, looking at no more than a few dozen values
// (a cheap guess: small calls must not pay for a full walk).
let budget = 0;
let size = 0;
function walk(v, depth) {
  if (--budget < 0) return;
  if (typeof v === 'string') { size += v.length; return; }
  if (v === null || typeof v !== 'object') return;
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) { size += v.byteLength; return; }
  if (depth > 2) return;
  if (Array.isArray(v)) { for (let i = 0; i < v.length && budget > 0 && size <= BULKY; i++) walk(v[i], depth + 1); return; }
  for (const k in v) { walk(v[k], depth + 1); if (budget <= 0 || size > BULKY) return; }
}
function bulky(m) {
  if (m === null || typeof m !== 'object') return false;
  const p = isTuple(m) ? tuplePayload(m)
    : m.params !== undefined ? m.params : m.result !== undefined ? m.result : m.error?.data;
  if (typeof p !== 'object' && typeof p !== 'string') return false;
  budget = 32;
  size = 0;
  try { walk(p, 0); } catch { return false; }  // a getter threw: the flush reports it
  return size > BULKY;
}

/**
 * The `pack` option of `options`: 'auto' (default), true or false; anything
 * else throws a TypeError naming `who` (e.g. 'portTransport()'). Transports
 * check it before anything else, so a bad `pack` is the error they report.
 */
export function packMode(options, who) {
  const p = options?.pack ?? 'auto';
  if (p !== true && p !== false && p !== 'auto')
    throw new TypeError(`${who}: options.pack must be true, false or 'auto'`);
  return p;
}

/**
 * Packing for one transport, both ways.
 *   post(msg)   posts one message or frame now; may throw (e.g. DataCloneError).
 *   mode        what packMode() returned.
 *   onTuples    called once, when the other side announces it reads tuples:
 *               the endpoint sends them from then on.
 * Returns:
 *   send(msg, alone, transfer)  posts at once (not packing, a bulky message,
 *                          or after close()) or queues for the flush; throws
 *                          only as "Send errors" above says. `alone`: the caller expects no other
 *                          message this turn (see the endpoint), so a packing
 *                          transport with nothing queued posts it at once;
 *   unpack(data, deliver)  calls deliver(data), or, for a pack frame, deliver(m)
 *                          for each of its messages in order, until deliver
 *                          returns false (the receiver is gone). A frame or
 *                          an announcement this end heeds (see "Whose
 *                          announcement counts") makes 'auto' pack from then
 *                          on — already for what deliver sends in reply; an
 *                          announcement itself is never delivered;
 *   onSendError(fn)        fn(message, error) for each message a flush could
 *                          not post (null: console.warn);
 *   setRole(r)             this endpoint's role, 'client', 'server' or 'peer'
 *                          (anything else: none), before its first send: the
 *                          announcement names it, and unpack() heeds only
 *                          what an endpoint it can talk to announced;
 *   close()                flushes what is queued, synchronously, once; from
 *                          then on send() posts at once and fn is dropped.
 */
export function createPacker(post, mode, onTuples) {
  let packing = mode === true;
  let announce = mode !== false;  // not yet announced
  let role = null;  // this endpoint's, once setRole() names it
  let peerTuples = false;  // the other side announced it reads tuples
  let closed = false;
  let sendError = null;
  let queue = [];  // snapshots of the messages queued,
  let given = [];  // and the messages send() got (for onSendError)
  let scheduled = false;
  let delivering = 0;  // in unpack() (it flushes after): 1 a message, 2 a frame

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
  // Posts `m`, or its snapshot if structured clone refuses it (a Proxy).
  const postNow = (m) => {
    try { post(m); } catch (e) {
      const s = e?.name === 'DataCloneError' ? snapshot(m, clone) : m;
      if (s === m) throw e;
      post(s);
    }
  };
  const postOne = (m, sent = m) => {
    try { postNow(m); } catch (e) { report(sent, e); }
  };
  // What is queued: one message as is (the array stays ours and is reused),
  // two or more as one frame. The frame's array is handed over: postMessage
  // clones it at once, but a wrapper or a stand-in (tests) may keep it, so it
  // is never refilled.
  const flushNow = () => {
    const q = queue;
    const n = q.length;
    if (n === 0) return;
    if (n === 1) {
      postOne(q.pop(), given.pop());
      return;
    }
    const g = given;
    queue = [];
    given = [];
    try {
      post({ [PACK_KEY]: q });
    } catch {
      for (let i = 0; i < n; i++) postOne(q[i], g[i]);
    }
  };

  return {
    send(msg, alone = false, transfer = undefined) {
      if (announce) {
        announce = false;
        try { post(ANNOUNCE[role ?? 'none']); } catch { /* the message itself will report the failure */ }
      }
      if (transfer) {
        // Buffers to transfer go with their own message, after what is
        // queued (order is kept); it throws like the unpacked path.
        if (queue.length) flushNow();
        post(msg, transfer);
        return;
      }
      if (closed || !packing) { postNow(msg); return; }
      // The sender knows nothing else is on its way (a call made while no
      // other is pending): queueing would only delay it. Posted at once, and
      // failures reported as for a flush.
      if (alone && queue.length === 0) { postOne(msg); return; }
      // The first message sent while a plain message is delivered (its
      // answer) goes at once, as unpacked: a Worker on the other side starts
      // on it while this side finishes the call.
      if (delivering === 1 && queue.length === 0) { postNow(msg); return; }
      if (bulky(msg)) {
        if (queue.length) flushNow();
        postNow(msg);  // throws like the unpacked path: the endpoint handles it
        return;
      }
      queue.push(snapshot(msg, clone));
      given.push(msg);
      if (queue.length >= PACK_MAX) {
        flushNow();
      } else if (!scheduled && !delivering) { scheduled = true; resolved.then(flush); }
    },
    unpack(data, deliver) {
      if (isAnnouncement(data)) {
        // Another endpoint's, on the same window: consumed, not heeded.
        if (!heeds(role, data)) return;
        if (mode === 'auto') packing = true;
        // pack: false sends plain JSON-RPC only.
        if (mode !== false && data.params?.tuples === 1 && !peerTuples) {
          peerTuples = true;
          onTuples();
        }
        return;
      }
      let p;
      const outer = delivering;
      delivering = 1;
      try {
        if (typeof data === 'object' && data !== null && (p = data[PACK_KEY]) !== undefined &&
            Array.isArray(p) && !Array.isArray(data) && !('jsonrpc' in data)) {
          if (mode === 'auto' && !packing && heedsFrame(role, p)) packing = true;
          delivering = 2;
          for (let i = 0; i < p.length && deliver(p[i]) !== false; i++);
        } else {
          deliver(data);
        }
      } finally {
        delivering = outer;
        // What the delivery answered synchronously (sync handlers) is
        // complete: post it now rather than from the flush's microtask, one
        // round-trip hop sooner. Answers that come later (promises) still go
        // by microtask.
        if (queue.length && !closed) flushNow();
      }
    },
    onSendError(fn) { sendError = fn; },
    setRole(r) { role = r === 'client' || r === 'server' || r === 'peer' ? r : null; },
    close() {
      if (!closed) {
        closed = true;
        flush();
      }
      sendError = null;
    },
  };
}
