// The 'wasm floor' server (server-cost.mjs, cold-misses.mjs): a JSON-RPC
// server of weft's shape — JavaScript describes each message into the
// module's memory, a WebAssembly core judges it and calls the handler, and
// JavaScript builds the answer from one record — doing as little as that
// shape allows (wasm-floor.c). What it costs is the least any core behind
// marshalling costs per message: the bar for weft's own per-message path
// (bench/README.md, "The floor of a core behind marshalling"). Sync handlers,
// single requests only; not a peer, and never a row of the round-trip tables.
// The module is built on first use with clang's wasm32 target (clang-14 and
// wasm-ld, which scripts/deps.sh installs) into the system's temp folder.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('./wasm-floor.c', import.meta.url));
// wasm-floor.c's kinds; NON_FINITE (NaN, ±Infinity: no JSON number) is none
// of the kinds it accepts.
const ABSENT = 0, NUL = 1, FALSE = 2, TRUE = 3, NUMBER = 4, STRING = 5, ARRAY = 6, OBJECT = 7, NON_FINITE = 8;

function build() {
  const hash = createHash('sha256').update(readFileSync(SOURCE)).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), 'weft-bench');
  const out = join(dir, `wasm-floor-${hash}.wasm`);
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${out}.${process.pid}`;
    // -fno-builtin: the name copy must stay a loop, not an import of memcpy.
    execFileSync('clang-14', ['--target=wasm32', '-O2', '-nostdlib', '-fno-builtin', '-Wl,--no-entry',
      '-Wl,--allow-undefined', '-o', tmp, SOURCE]);
    renameSync(tmp, out);
  }
  return readFileSync(out);
}

function kindOf(v) {
  switch (typeof v) {
    case 'undefined': return ABSENT;
    case 'string': return STRING;
    case 'number': return Number.isFinite(v) ? NUMBER : NON_FINITE;
    case 'boolean': return v ? TRUE : FALSE;
    case 'object': return v === null ? NUL : Array.isArray(v) ? ARRAY : OBJECT;
    default: return NUL;
  }
}

const enc = new TextEncoder();

/**
 * Serves `handlers` (name → sync function of the params) on `port` (a
 * MessagePort-like object: addEventListener, postMessage); returns what stops it.
 */
export async function serveFloor(port, handlers) {
  let F, U8;
  const fns = [];
  // Payload handles: 0 the params of the request in hand, 1 its result.
  const payloads = [undefined, undefined];
  let stringId = null;  // a string id stays a JavaScript value
  const env = {
    call(fn, h) {
      payloads[1] = fns[fn](payloads[h]);
      return 1;
    },
    send() {
      const r = recordAt;
      const idKind = F[r + 1];
      const id = idKind === NUMBER ? F[r + 2] : idKind === STRING ? stringId : null;
      port.postMessage(F[r] === 1 ? { jsonrpc: '2.0', result: payloads[F[r + 3]], id }
        : { jsonrpc: '2.0', error: { code: F[r + 4], message: 'refused' }, id });
    },
  };
  const { instance } = await WebAssembly.instantiate(build(), { env });
  const X = instance.exports;
  F = new Float64Array(X.memory.buffer);
  U8 = new Uint8Array(X.memory.buffer);
  const slots = X.slots() >> 3, bytes = X.bytes(), recordAt = X.record() >> 3;
  // Writes `s` as UTF-8 at byte `at` of the input bytes; returns its length.
  const put = (s, at) => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c > 127 || at + i >= 1000) return i + enc.encodeInto(s.slice(i), U8.subarray(bytes + at + i, bytes + 1024)).written;
      U8[bytes + at + i] = c;
    }
    return s.length;
  };
  for (const [name, fn] of Object.entries(handlers)) {
    const i = X.register(put(name, 0));
    if (i < 0) throw new RangeError(`wasm floor: cannot register ${JSON.stringify(name)} (at most 16 methods of 32 bytes)`);
    fns[i] = fn;
  }
  const listener = (ev) => {
    const m = ev.data;
    const shape = kindOf(m);
    F[slots] = shape;
    if (shape === OBJECT) {
      const v = m.jsonrpc, method = m.method, id = m.id, params = m.params;
      let at = 0;
      F[slots + 1] = kindOf(v);
      if (typeof v === 'string') at = F[slots + 2] = put(v, 0);
      F[slots + 3] = kindOf(method);
      if (typeof method === 'string') { F[slots + 4] = at; F[slots + 5] = put(method, at); }
      const ik = kindOf(id);
      F[slots + 6] = ik;
      if (ik === NUMBER) F[slots + 7] = id;
      else if (ik === STRING) stringId = id;
      const pk = kindOf(params);
      F[slots + 8] = pk;
      payloads[0] = params;
      F[slots + 9] = 0;
    }
    X.receive();
  };
  port.addEventListener('message', listener);
  if (typeof port.start === 'function') port.start();
  return () => port.removeEventListener('message', listener);
}
