// Seeded generator of raw JSON-RPC traffic sent to a server, for the
// differential test (tests/js/differential.test.mjs). Everything is a pure
// function of the seed: the same seed always gives the same sequence.
//
// A sequence is { seed, messages: [{ msg, foreign }], sleepIds } where `msg`
// is a plain JSON value (object, batch array, or something invalid) and
// `foreign` marks a top-level message that the JS endpoint documents it
// ignores on a shared postMessage channel ("Only messages with jsonrpc: "2.0"
// are looked at"): a non-object, an object without jsonrpc "2.0", or a
// non-empty batch without any such element. Native weft answers those; the JS
// side must stay silent. They are sent to the JS servers only (see isForeign).
//
// Answers to `sleep` requests may arrive out of order (they complete on a
// timer), so every sleep request gets an id from a reserved range
// (`sleepIds`) and frames carrying them are compared as a multiset.

/** mulberry32: a 32-bit seeded PRNG. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of sequence `i` of a run: sequence 0 has the run's own seed. */
export function sequenceSeed(runSeed, i) {
  return (runSeed + Math.imul(i, 0x9e3779b9)) >>> 0;
}

export class Rng {
  constructor(seed) { this.next = mulberry32(seed); }
  int(lo, hi) { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p) { return this.next() < p; }
  pick(a) { return a[Math.floor(this.next() * a.length)]; }
  // weighted pick: [[weight, value], ...]
  weighted(list) {
    let total = 0;
    for (const [w] of list) total += w;
    let r = this.next() * total;
    for (const [w, v] of list) { if ((r -= w) < 0) return v; }
    return list[list.length - 1][1];
  }
}

const WORDS = ['a', 'b', 'x', 'key', 'hello', 'value', 'data', 'id', 'méthode', 'ключ', '日本', 'emoji😀', 'sp ace', 'q"uote', 'back\\slash', 'tab\t', 'nl\n', ''];
const CHARS = ['a', 'b', 'z', '0', '9', ' ', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', 'ß', 'ж', '✓', '€', '日', '😀', '𝄞', '\u2028', '\ufeff'];

export function randString(r, max = 12) {
  if (r.chance(0.3)) return r.pick(WORDS);
  const n = r.int(0, max);
  let s = '';
  for (let i = 0; i < n; i++) s += r.pick(CHARS);
  return s;
}

// Integers JSON and doubles carry exactly; floats k/8 (exact in binary).
export function randInt(r) {
  return r.weighted([
    [6, () => r.int(-100, 100)],
    [3, () => r.int(-1000000, 1000000)],
    [1, () => r.pick([0, 1, -1, 2147483647, -2147483648, 2147483648, -2147483649, 4294967296, 2 ** 53 - 1, -(2 ** 53 - 1)])],
  ])();
}
export function randFloat(r) {
  let k = r.int(-8000, 8000);
  if (k % 8 === 0) k += 1;  // a true fraction
  return k / 8;
}
export function randNumber(r) { return r.chance(0.6) ? randInt(r) : randFloat(r); }

/** Any JSON value (no -0, no lone surrogates, no __proto__ keys). */
export function randJson(r, depth = 3) {
  const kinds = depth > 0
    ? [[2, 'null'], [2, 'bool'], [3, 'int'], [2, 'float'], [3, 'string'], [2, 'array'], [2, 'object']]
    : [[2, 'null'], [2, 'bool'], [3, 'int'], [2, 'float'], [3, 'string']];
  switch (r.weighted(kinds)) {
    case 'null': return null;
    case 'bool': return r.chance(0.5);
    case 'int': return randInt(r);
    case 'float': return randFloat(r);
    case 'string': return randString(r);
    case 'array': {
      const n = r.int(0, 4);
      const a = [];
      for (let i = 0; i < n; i++) a.push(randJson(r, depth - 1));
      return a;
    }
    default: {
      const n = r.int(0, 4);
      const o = {};
      for (let i = 0; i < n; i++) o[randString(r, 6)] = randJson(r, depth - 1);
      return o;
    }
  }
}
function randStructured(r, depth = 3) {
  return r.chance(0.5) ? randArray(r, depth) : randObject(r, depth);
}
function randArray(r, depth) {
  const n = r.int(0, 4);
  const a = [];
  for (let i = 0; i < n; i++) a.push(randJson(r, depth - 1));
  return a;
}
function randObject(r, depth) {
  const n = r.int(0, 4);
  const o = {};
  for (let i = 0; i < n; i++) o[randString(r, 6)] = randJson(r, depth - 1);
  return o;
}
// `data` of an error: every JSON type, and absent (undefined).
const DATA_KINDS = ['absent', 'null', 'true', 'false', 'int', 'float', 'string', 'unicode', 'array', 'object', 'nested'];
export function randData(r) {
  switch (r.pick(DATA_KINDS)) {
    case 'absent': return undefined;
    case 'null': return null;
    case 'true': return true;
    case 'false': return false;
    case 'int': return randInt(r);
    case 'float': return randFloat(r);
    case 'string': return randString(r);
    case 'unicode': return r.pick(['é', '✓ ok', '😀', '日本語', 'ж\u2028', '𝄞']);
    case 'array': return randArray(r, 2);
    case 'object': return randObject(r, 2);
    default: return { level1: { level2: [randJson(r, 2), { level3: randJson(r, 1) }] }, list: randArray(r, 2) };
  }
}

/**
 * A deeply nested value: about 64, about 128, or near the deepest a message
 * may be (256 levels with the message object, params and a batch around it:
 * 250 here). The limit guards decoding bytes (codec.h, max_depth): weft-rpc
 * receives objects, not bytes, so deeper values are not compared — the native
 * side refuses them and the object path carries them.
 */
function deepValue(r) {
  const depth = r.weighted([[4, () => r.int(58, 66)], [3, () => r.int(118, 130)], [3, () => r.int(240, 250)]])();
  let v = r.chance(0.5) ? 1 : 'leaf';
  for (let i = 0; i < depth; i++) v = r.chance(0.5) ? [v] : { d: v };
  return v;
}

// ---- ids -----------------------------------------------------------------
export function randId(r) {
  return r.weighted([
    [4, () => r.int(0, 1000)],
    [2, () => -r.int(1, 1000)],
    [1, () => r.pick([2 ** 31, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 60, 2 ** 64, 1e21, 0.1, 1e-7])],
    [3, () => randString(r, 8)],
    [1, () => r.pick(['x', 'é', '😀', '\ufeff']) + 'long-id-'.repeat(r.int(6, 9))],
    [2, () => null],
    [1, () => randFloat(r)],
  ])();
}
const BAD_IDS = [true, false, {}, [], [1], { a: 1 }];

// ---- params per method ------------------------------------------------------
const SPEC2 = { subtract: ['minuend', 'subtrahend'], add: ['a', 'b'] };

function paramsFor(r, method) {
  const valid = r.chance(0.75);
  switch (method) {
    case 'subtract':
    case 'add': {
      const [n1, n2] = SPEC2[method];
      if (valid) {
        const x = randNumber(r), y = randNumber(r);
        return r.chance(0.5) ? [x, y] : r.chance(0.5) ? { [n1]: x, [n2]: y } : { [n2]: y, [n1]: x };
      }
      return r.pick([
        () => [randNumber(r)],
        () => [randNumber(r), randNumber(r), randNumber(r)],
        () => ({ [n1]: randNumber(r) }),
        () => ({ [n1]: randString(r), [n2]: randNumber(r) }),
        () => [randNumber(r), r.pick([null, true, 'x', [], {}])],
        () => ({ [n1]: randNumber(r), [n2]: randNumber(r), extra: 1 }),
        () => ({}),
        () => [],
        () => undefined,
      ])();
    }
    case 'sum': {
      if (valid) {
        const n = r.int(0, 6);
        const a = [];
        for (let i = 0; i < n; i++) a.push(randNumber(r));
        return a;
      }
      return r.pick([
        () => [randNumber(r), randJson(r, 1), randNumber(r)],
        () => [r.pick([null, true, false, 'x', [], {}, [1], { a: 1 }])],
        () => ({ a: 1 }),
        () => ({}),
        () => undefined,
      ])();
    }
    case 'echo':
      return r.weighted([[6, () => randStructured(r, 4)], [1, () => undefined], [1, () => [randData(r) ?? null]]])();
    case 'get_data':
      return r.pick([undefined, undefined, [], {}, [1], { x: 1 }, [null]]);
    case 'fail': {
      const code = valid
        ? r.weighted([[3, () => r.int(1, 100000)], [3, () => -r.int(1, 100000)], [2, () => r.pick([-32000, -32099, -32600, -32601, -32602, -32603, -32700, -32800, -32001, 0, 1, 7, -7])], [1, () => r.pick([2147483647, -2147483648])]])()
        : r.pick([2147483648, -2147483649, 4294967296, 1.5, -0.5, '7', null, true]);
      const message = valid || r.chance(0.5) ? randString(r, 10) : r.pick([7, null, true, [], {}]);
      const data = randData(r);
      const byPos = r.chance(0.3);
      if (byPos) {
        const a = [code, message];
        if (data !== undefined) a.push(data);
        if (!valid && r.chance(0.3)) a.length = 1;
        return a;
      }
      const o = { code, message };
      if (data !== undefined) o.data = data;
      if (!valid && r.chance(0.3)) { if (r.chance(0.5)) delete o.message; else o.extra = 1; }
      return o;
    }
    case 'update':
    case 'notify_hello':
    case 'notify_sum':
      return r.chance(0.3) ? undefined : randStructured(r, 2);
    case 'sleep': {
      if (valid) {
        const ms = r.int(0, 3);
        return r.chance(0.7) ? { ms } : [ms];
      }
      return r.pick([{ ms: 'x' }, { ms: -1 }, { ms: 1.5 }, {}, [], { ms: 1, extra: 1 }, { ms: 86400001 }, [null], undefined]);
    }
    default:
      return r.chance(0.3) ? undefined : randStructured(r, 2);
  }
}

const METHODS = [
  [10, 'subtract'], [6, 'add'], [8, 'sum'], [10, 'echo'], [4, 'get_data'], [12, 'fail'],
  [2, 'update'], [1, 'notify_hello'], [1, 'notify_sum'], [1.5, 'sleep'], [3, 'unknown'],
];
const UNKNOWN = ['nope', 'Echo', 'SUM', 'echo ', 'rpc.nope', '$/nope', 'ünknown', 'a.b.c', ''];

class Gen {
  constructor(seed) {
    this.r = new Rng(seed);
    this.sleepIds = new Set();
    this.nextSleep = 1;
  }
  // An id from the reserved ranges, for sleep requests only.
  sleepId() {
    const k = this.nextSleep++;
    const id = this.r.weighted([[2, 900000 + k], [1, -(900000 + k)], [2, 'zz' + k]]);
    this.sleepIds.add(id);
    return id;
  }
  method() {
    const m = this.r.weighted(METHODS);
    return m === 'unknown' ? this.r.pick(UNKNOWN) : m;
  }
  call(notification) {
    const r = this.r;
    const method = this.method();
    const params = paramsFor(r, method);
    const msg = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    if (!notification) msg.id = method === 'sleep' ? this.sleepId() : randId(r);
    // Member order should not matter.
    if (r.chance(0.1)) return shuffleKeys(r, msg);
    return msg;
  }
  // Invalid request objects (jsonrpc "2.0" present, so both sides look at them).
  invalid() {
    const r = this.r;
    const id = r.chance(0.7) ? randId(r) : undefined;
    const base = () => {
      const m = { jsonrpc: '2.0', method: r.pick(['echo', 'sum', 'subtract', 'nope']) };
      if (id !== undefined) m.id = id;
      return m;
    };
    return r.pick([
      () => { const m = base(); m.method = r.pick([1, null, true, [], {}, ['echo']]); return m; },
      () => { const m = base(); delete m.method; return m; },
      () => { const m = base(); m.id = r.pick(BAD_IDS); return m; },
      () => { const m = base(); m.params = r.pick(['x', 1, true, null, 0]); return m; },
      () => { const m = base(); m.extra = randJson(r, 1); return m; },
      () => ({ jsonrpc: '2.0' }),
      () => ({ jsonrpc: '2.0', id: id ?? 1 }),
      () => {
        const m = base();
        m.method = r.pick(['echo', 'echo', 'subtract', 'sum', 'fail']);
        m.params = m.method === 'fail' ? { code: 1, message: 'deep', data: deepValue(r) } : [deepValue(r), 1];
        return m;
      },
    ])();
  }
  // Batch elements the JS side would not look at on their own.
  foreignElement() {
    const r = this.r;
    return r.pick([
      () => ({ jsonrpc: r.pick(['1.0', '2', 2, 2.0, null, '2.0 ']), method: 'echo', params: [1], id: randId(r) }),
      () => ({ method: 'echo', params: [1], id: randId(r) }),
      () => r.pick([1, 'x', null, true, [], [1], {}]),
    ])();
  }
  batch() {
    const r = this.r;
    const n = r.int(1, 6);
    const b = [];
    for (let i = 0; i < n; i++) {
      b.push(r.weighted([
        [6, () => this.call(false)],
        [3, () => this.call(true)],
        [1, () => this.invalid()],
        [1, () => this.foreignElement()],
      ])());
    }
    // At least one element JS looks at: otherwise the batch is foreign.
    if (!b.some(isJsonRpc)) b.push(this.call(r.chance(0.5)));
    return b;
  }
  foreign() {
    const r = this.r;
    return r.pick([
      () => this.foreignElement(),
      () => [],
      () => [this.foreignElement(), this.foreignElement()],
      () => ({ jsonrpc: '1.0', method: 'sum', params: [1, 2], id: randId(r) }),
    ])();
  }
  // A payload past the packing transports' bulky threshold (8 KiB of strings).
  bulky() {
    const r = this.r;
    const big = r.pick(['x', 'é', '😀']).repeat(r.int(8200, 9000));
    return { jsonrpc: '2.0', method: r.pick(['echo', 'fail']), params: r.chance(0.5) ? [big] : { code: 5, message: 'big', data: big }, id: randId(r) };
  }
  // More messages in one turn than a pack frame holds (32).
  burst(messages) {
    const r = this.r;
    const n = r.int(30, 40);
    for (let i = 0; i < n; i++) messages.push(r.chance(0.8) ? this.call(false) : this.call(true));
  }
  // Two elements of one batch with the same id.
  duplicateIds() {
    const a = this.call(false), b = this.call(false);
    if (a.method === 'sleep' || b.method === 'sleep') return [a, b];
    b.id = a.id;
    return [a, b, this.call(true)];
  }
  message() {
    return this.r.weighted([
      [1, () => this.bulky()],
      [1, () => this.duplicateIds()],
      [50, () => this.call(false)],
      [15, () => this.call(true)],
      [22, () => this.batch()],
      [8, () => this.invalid()],
      [3, () => this.foreign()],
    ])();
  }
  // Cancellation: a sleep request, then $/cancelRequest for it (or a near miss).
  cancelCase(messages) {
    const r = this.r;
    const id = this.sleepId();
    const sleep = { jsonrpc: '2.0', method: 'sleep', params: { ms: 20 }, id };
    const cancelId = r.weighted([[6, id], [1, typeof id === 'string' ? 'zz0' : String(id)], [1, 'zz-none']]);
    const cancel = { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: cancelId } };
    const how = r.pick(['after', 'after', 'after', 'later', 'same-batch', 'cancel-in-batch', 'as-request', 'twice']);
    switch (how) {
      case 'after': messages.push(sleep, cancel); break;
      case 'later': messages.push(sleep, this.call(false), this.message(), cancel); break;
      case 'same-batch': messages.push([sleep, cancel]); break;
      case 'cancel-in-batch': messages.push(sleep, [cancel, this.call(false)]); break;
      case 'as-request': messages.push(sleep, { ...cancel, id: randId(r) }); break;
      default: messages.push(sleep, cancel, cancel); break;
    }
  }
}

function shuffleKeys(r, o) {
  const keys = Object.keys(o);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  const out = {};
  for (const k of keys) out[k] = o[k];
  return out;
}

export function isJsonRpc(e) {
  return e !== null && typeof e === 'object' && !Array.isArray(e) && e.jsonrpc === '2.0';
}

/**
 * Whether the JS endpoint ignores this top-level message by its documented
 * rule for postMessage channels (README: only messages with jsonrpc "2.0" are
 * looked at): a value that is not an object with jsonrpc "2.0", or an array
 * holding none (the empty array too: PeerOptions::ignore_foreign).
 */
export function isForeign(msg) {
  if (Array.isArray(msg)) return !msg.some(isJsonRpc);
  return !isJsonRpc(msg);
}

/** The sequence of seed `seed`. */
export function generateSequence(seed) {
  const g = new Gen(seed);
  const r = g.r;
  const messages = [];
  const n = r.int(1, 5);
  for (let i = 0; i < n; i++) messages.push(g.message());
  if (r.chance(0.005)) g.burst(messages);
  if (r.chance(0.012)) g.cancelCase(messages);
  return {
    seed,
    messages: messages.map((msg) => ({ msg, foreign: isForeign(msg) })),
    sleepIds: g.sleepIds,
  };
}

/** A sequence from hand-written messages (scenarios, shrinking). */
export function makeSequence(msgs, sleepIds = collectSleepIds(msgs), seed = null) {
  return { seed, messages: msgs.map((msg) => ({ msg, foreign: isForeign(msg) })), sleepIds };
}
/** The ids of the sleep requests among `msgs` (each is answered once, with its id). */
export function collectSleepIds(msgs) {
  const s = new Set();
  for (const m of msgs) for (const e of Array.isArray(m) ? m : [m])
    if (isJsonRpc(e) && e.method === 'sleep' && e.id !== undefined) s.add(e.id);
  return s;
}

/** The longest valid sleep in a sequence (ms), or -1 if it has none. */
export function maxSleep(seq) {
  let max = -1;
  for (const { msg } of seq.messages) for (const e of Array.isArray(msg) ? msg : [msg]) {
    if (!isJsonRpc(e) || e.method !== 'sleep') continue;
    const p = e.params;
    const ms = Array.isArray(p) ? p[0] : p && typeof p === 'object' ? p.ms : undefined;
    max = Math.max(max, Number.isInteger(ms) && ms >= 0 && ms < 10000 ? ms : 0);
  }
  return max;
}

function depthOf(v) {
  if (v === null || typeof v !== 'object') return 0;
  let d = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) d = Math.max(d, depthOf(x));
  return d + 1;
}
/** A well-formed notification (never answered, §4.1), not near a nesting limit. */
export function isPlainNotification(e) {
  if (!isJsonRpc(e) || typeof e.method !== 'string' || 'id' in e) return false;
  if (Object.keys(e).some((k) => k !== 'jsonrpc' && k !== 'method' && k !== 'params')) return false;
  if (e.params === undefined) return true;
  return e.params !== null && typeof e.params === 'object' && depthOf(e.params) < 50;
}
/** Whether every message of the sequence is a notification (or a batch of them): nothing may be answered. */
export function onlyNotifications(seq) {
  return seq.messages.every(({ msg, foreign }) => foreign ||
    (Array.isArray(msg) ? msg.length > 0 && msg.every(isPlainNotification) : isPlainNotification(msg)));
}

// ---- comparing answers with json-rpc-2.0's ------------------------------------
// (tests/js/peer-differential.test.mjs and tests/host/peer-differential.test.mjs)
export const METHOD_NOT_FOUND = -32601;
/** A value as JSON carries it, with object members in one order. */
export function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) if (v[k] !== undefined) o[k] = canonical(v[k]);
    return o;
  }
  return v;
}
/** An error as compared: a null data counts as none, and -32601's text is each library's own. */
export function normalError(e) {
  const c = canonical({ code: e.code, message: e.message, data: e.data ?? undefined });
  if (c.code === METHOD_NOT_FOUND) c.message = '(the library\'s text)';
  return c;
}
export function normalResponse(a) {
  const c = canonical(a);
  if (c?.error) c.error = normalError(c.error);
  return c;
}
