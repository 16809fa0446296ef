// Runs generated sequences (diff-gen.mjs) against JS and native servers and
// compares their answers, for tests/js/differential.test.mjs.
//
// A target takes raw JSON values and collects every frame its server sends
// back (a pack frame {"weft/pack": [...]} is unpacked, in order; the
// transport's one-time announcement, support/wire.mjs, is left out). A packed
// target talks as a weft client with default options does once the two have
// met: it announces, sends packed and in tuples wherever a tuple says the
// same, and reads the tuples it is answered in. After each
// sequence a sentinel request is sent; its answer says the sequence is done
// (wait on events, never sleep). The sentinel is `echo`, or a `sleep` longer
// than every sleep of the sequence when it has some; the sequence is done when
// the sentinel and every sleep request have been answered. (The sentinel's
// sleep starts later than the others, but on a loaded machine its timer may
// still fire first: the messages before it can take longer than its margin.)
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { JSONRPCServer, portTransport, ready } from '../../js/index.js';
import { registerDiffMethods } from './diff-methods.mjs';
import { collectSleepIds, isJsonRpc, makeSequence, maxSleep } from './diff-gen.mjs';
import { ANNOUNCEMENT, fromTuple, isAnnouncement, toTuple } from './wire.mjs';

const PACK_KEY = 'weft/pack';

/** Calls onLine(line) for every non-blank line of a readable text stream. */
export function ndjsonLines(stream, onLine) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim() !== '') onLine(line);
    }
  });
}

function unpack(data, out) {
  if (data !== null && typeof data === 'object' && !Array.isArray(data) && Array.isArray(data[PACK_KEY]) && !('jsonrpc' in data)) {
    for (const m of data[PACK_KEY]) out.push(fromTuple(m));
  } else if (!isAnnouncement(data)) {
    out.push(fromTuple(data));
  }
}

// What a packed target posts for `msgs`: announced once, then packed, as
// tuples where they say the same (support/wire.mjs).
function packedPosts(target, msgs) {
  const posts = [];
  if (!target.announced) { target.announced = true; posts.push(ANNOUNCEMENT); }
  const t = msgs.map(toTuple);
  if (t.length > 1) posts.push({ [PACK_KEY]: t });
  else posts.push(...t);
  return posts;
}

class Target {
  constructor(name) {
    this.name = name;
    this.frames = [];
    this.waiter = null;  // { pred, resolve }
    this.failed = null;
  }
  _receive(frame) {
    this.frames.push(frame);
    if (this.waiter && this.waiter.pred(frame)) {
      const w = this.waiter;
      this.waiter = null;
      w.resolve(this.frames.length);
    }
  }
  _die(err) {
    this.failed = err;
    if (this.waiter) { const w = this.waiter; this.waiter = null; w.reject(err); }
  }
  // Resolves with the number of frames up to and including the first (new)
  // frame satisfying pred; rejects after ms.
  waitFor(pred, ms) {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`${this.name}: no answer to the sentinel within ${ms} ms`));
      }, ms);
      this.waiter = {
        pred,
        resolve: (n) => { clearTimeout(timer); resolve(n); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      };
    });
  }
}

/** A JSONRPCServer on one port of a MessageChannel; the test posts on the other. */
export class JsPortTarget extends Target {
  constructor(name, { pack = false } = {}) {
    super(name);
    this.packed = pack;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    // Diagnostics (e.g. NotificationFailed) are expected here: kept quiet.
    this.server = new JSONRPCServer(portTransport(port2, pack ? { pack: true } : undefined), { onDiagnostic: () => {} });
    registerDiffMethods(this.server);
    port1.on('message', (data) => { const out = []; unpack(data, out); for (const f of out) this._receive(f); });
  }
  async start() { await ready; }
  send(msgs) {
    for (const m of this.packed ? packedPosts(this, msgs) : msgs) this.port.postMessage(m);
  }
  close() { this.server.destroy(); this.port.close(); }
}

/** A JSONRPCServer on selfTransport() inside a worker_threads Worker. */
export class JsWorkerTarget extends Target {
  constructor(name, { pack = false } = {}) {
    super(name);
    this.packed = pack;
    this.worker = new Worker(new URL('./diff-worker.mjs', import.meta.url), { workerData: { pack } });
    this.up = new Promise((resolve, reject) => {
      this.worker.on('message', (data) => {
        if (data && data.diffWorkerReady === true) { resolve(); return; }
        const out = [];
        unpack(data, out);
        for (const f of out) this._receive(f);
      });
      this.worker.once('error', (e) => { reject(e); this._die(e); });
      this.worker.once('exit', (code) => { const e = new Error(`worker exited (${code})`); reject(e); this._die(e); });
    });
  }
  start() { return this.up; }
  send(msgs) {
    for (const m of this.packed ? packedPosts(this, msgs) : msgs) this.worker.postMessage(m);
  }
  close() { this.worker.removeAllListeners('exit'); return this.worker.terminate(); }
}

/** One long-running `weft serve --stdio --framing ndjson --demo`. */
export class NativeTarget extends Target {
  constructor(name, bin) {
    super(name);
    this.native = true;
    this.bin = bin;
    this.stderr = '';
  }
  start() {
    const child = spawn(this.bin, ['serve', '--stdio', '--framing', 'ndjson', '--demo'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    ndjsonLines(child.stdout, (line) => {
      let f;
      try { f = JSON.parse(line); } catch { f = { '<unparsable line>': line }; }
      this._receive(f);
    });
    child.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    child.stdin.on('error', () => {});
    child.once('exit', (code, signal) => this._die(new Error(`weft serve exited (${code ?? signal}); stderr: ${this.stderr}`)));
    return new Promise((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  }
  send(msgs) {
    let text = '';
    for (const m of msgs) text += JSON.stringify(m) + '\n';
    this.child.stdin.write(text);
  }
  close() {
    this.child.removeAllListeners('exit');
    this.child.stdin.end();
    this.child.kill('SIGKILL');
  }
}

// ---- one sequence on one target ---------------------------------------------
export function sentinelFor(seq, index) {
  const id = `$end-${index}`;
  const ms = maxSleep(seq);
  return ms >= 0
    ? { jsonrpc: '2.0', method: 'sleep', params: { ms: ms + 5 }, id }
    : { jsonrpc: '2.0', method: 'echo', params: ['$end'], id };
}

/**
 * Sends the sequence (native targets skip the messages JS documents it
 * ignores) and its sentinel; resolves with { frames, stray, sentinel } where
 * `stray` are frames that arrived between the previous sentinel and this run.
 */
export async function runSequence(target, seq, index) {
  const stray = target.frames.splice(0);
  const sentinel = sentinelFor(seq, index);
  const msgs = seq.messages.filter((m) => !(target.native && m.foreign)).map((m) => m.msg);
  const isSentinel = (f) => f !== null && typeof f === 'object' && !Array.isArray(f) && f.id === sentinel.id;
  const unanswered = collectSleepIds(msgs);
  let sentinelSeen = false;
  const done = target.waitFor((f) => {
    for (const e of Array.isArray(f) ? f : [f]) if (e !== null && typeof e === 'object') unanswered.delete(e.id);
    sentinelSeen ||= isSentinel(f);
    return sentinelSeen && unanswered.size === 0;
  }, 5000 + Math.max(0, maxSleep(seq)));
  target.send([...msgs, sentinel]);
  let n;
  try {
    n = await done;
  } catch (e) {
    return { frames: target.frames.splice(0), stray, sentinel: { error: String(e.message) } };
  }
  const frames = target.frames.splice(0, n);
  const answer = frames.splice(frames.findIndex(isSentinel), 1)[0];
  return { frames, stray, sentinel: answer };
}

// ---- comparison -----------------------------------------------------------------
/** Canonical text of a received value: sorted keys; undefined and non-JSON numbers marked. */
export function canon(v) {
  if (v === undefined) return '<undefined>';
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : `<${v}>`;
  if (typeof v === 'bigint') return `<bigint ${v}>`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? `<${typeof v}>`;
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
  return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}';
}
// Batch answers: any order (§6).
export function canonFrame(f) {
  return Array.isArray(f) ? 'batch[' + f.map(canon).sort().join(',') + ']' : canon(f);
}

function isAsync(frame, sleepIds) {
  for (const e of Array.isArray(frame) ? frame : [frame])
    if (e !== null && typeof e === 'object' && sleepIds.has(e.id)) return true;
  return false;
}

/** The comparable form of one target's answers to a sequence. */
export function normalise(run, seq) {
  const ordered = [];
  const unordered = [];
  for (const f of run.frames) (isAsync(f, seq.sleepIds) ? unordered : ordered).push(canonFrame(f));
  unordered.sort();
  return { ordered, unordered, stray: run.stray.map(canonFrame), sentinel: canon(run.sentinel) };
}

export function sameAnswers(a, b, seq) {
  const x = normalise(a, seq), y = normalise(b, seq);
  return JSON.stringify(x) === JSON.stringify(y);
}

// ---- shrinking -----------------------------------------------------------------
function candidates(msgs) {
  const out = [];
  for (let i = 0; i < msgs.length; i++) out.push(msgs.filter((_, j) => j !== i));
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (!Array.isArray(m)) continue;
    if (m.length === 1 && isJsonRpc(m[0])) out.push(msgs.map((x, j) => (j === i ? m[0] : x)));
    for (let k = 0; k < m.length; k++) {
      if (m.length <= 1) break;
      const smaller = m.filter((_, j) => j !== k);
      out.push(msgs.map((x, j) => (j === i ? smaller : x)));
    }
  }
  return out;
}

/**
 * Greedy shrink: drops messages and batch elements while `js` and `native`
 * still disagree (checked twice, so timing noise does not steer it).
 * `counter` gives fresh sentinel numbers.
 */
export async function shrink(seq, js, native, counter, budget = 150) {
  let msgs = seq.messages.map((m) => m.msg);
  const differs = async (ms) => {
    const s = makeSequence(ms, seq.sleepIds);
    for (let k = 0; k < 2; k++) {
      const i = counter.next++;
      const [a, b] = await Promise.all([runSequence(js, s, i), runSequence(native, s, i)]);
      if (sameAnswers(a, b, s)) return null;
      if (k === 1) return { a, b, s };
    }
    return null;
  };
  let best = await differs(msgs);
  if (!best) return null;  // did not reproduce
  let progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (const c of candidates(msgs)) {
      if (--budget < 0) break;
      if (c.length === 0) continue;
      const r = await differs(c);
      if (r) { msgs = c; best = r; progress = true; break; }
    }
  }
  return { seq: best.s, js: best.a, native: best.b };
}

// ---- reporting -----------------------------------------------------------------
// A rough class of a (shrunk) mismatch: the shape of the sequence (methods,
// batches, notifications) and the members whose values differ.
function shapeOf(e) {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return 'non-object';
  if (e.jsonrpc !== '2.0') return 'bad-jsonrpc';
  if (typeof e.method !== 'string') return 'bad-method';
  return e.method + (e.id === undefined ? '(notification)' : '');
}
function diffPaths(a, b, p, out) {
  if (canon(a) === canon(b)) return;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diffPaths(a[k], b[k], p + '.' + (Array.isArray(a) ? '*' : k), out);
    return;
  }
  out.add(p || '(whole)');
}
/** Where two runs' answers differ (member paths), without the sequence's shape. */
export function diffKey(js, native) {
  const paths = new Set();
  if (js.frames.length !== native.frames.length) paths.add(`frames ${js.frames.length} vs ${native.frames.length}`);
  else js.frames.forEach((f, k) => diffPaths(f, native.frames[k], '', paths));
  return [...paths].sort().join(' ');
}
export function signature(seq, js, native) {
  const shape = seq.messages.map(({ msg }) => (Array.isArray(msg) ? '[' + msg.map(shapeOf).join(',') + ']' : shapeOf(msg))).join(' ; ');
  return shape + ' => differs at ' + diffKey(js, native);
}

const show = (v) => JSON.stringify(v, (k, x) => (x === undefined ? '<undefined>' : x));

export function describeRun(seq, jsName, js, native) {
  const lines = [];
  lines.push('  sequence (in order; [JS only]: ignored by the JS server by its documented rule, not sent to native):');
  for (const m of seq.messages) lines.push(`    --> ${m.foreign ? '[JS only] ' : ''}${show(m.msg)}`);
  const side = (name, run) => {
    lines.push(`  ${name} answered:`);
    if (run.stray.length) for (const f of run.stray) lines.push(`    (stray, before the sequence) <-- ${show(f)}`);
    if (run.frames.length === 0) lines.push('    (nothing)');
    for (const f of run.frames) lines.push(`    <-- ${show(f)}`);
    lines.push(`    (sentinel) <-- ${show(run.sentinel)}`);
  };
  side(jsName, js);
  side('native', native);
  return lines.join('\n');
}
