// Where a cold request misses the instruction cache, by function: the
// requests of `server-cost.mjs --cold F` run under callgrind with a 32 KiB,
// 8-way L1 instruction cache simulated (this machine's), while V8 writes a
// jitdump (--perf-prof) that names its code: JavaScript functions, and the
// WebAssembly module's functions (by their C++ names when dist/weft.wasm is
// built with `bash scripts/build-wasm.sh '-O2;--profiling-funcs'`, which
// leaves the code as it is; rebuild plainly afterwards). Each miss is
// charged to the function whose code it fell in. Two runs, N = 1,000 and
// 3,000: each handles 2N requests with the evicting code before them and 2N
// without (server-cost.mjs --runs 1), so their difference holds 4,000 of
// each and start-up cancels out; the requests without miss little. Printed
// per request with code before it. A simulated count: load on the machine
// does not move it, and a rerun repeats it. The code between requests
// misses about the same for every server; what differs is the server's.
//   node bench/node/cold-misses.mjs [weft,json-rpc-2.0] [--cold 6] [--top 25]
//        [--side server|client] [--shape object|tuple]
// (--side and --shape as server-cost.mjs takes them: with --side client,
// the misses of one call of a client instead.)
// Needs valgrind; about 10 minutes per contender (its two runs in parallel).
// bench/README.md, "Where a cold message's time goes".
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i < 0 ? dflt : args.splice(i, 2)[1];
};
const cold = opt('--cold', '6');
const top = Number(opt('--top', '25'));
const side = opt('--side', 'server');
const shape = opt('--shape', 'object');
const libs = (args[0] ?? 'weft,json-rpc-2.0').split(',');
const serverCost = fileURLToPath(new URL('./server-cost.mjs', import.meta.url));
// server-instructions.sh's flags (TurboFan from the start, one thread,
// repeatable), and a jitdump in the working directory.
const V8 = ['--no-liftoff', '--no-wasm-dynamic-tiering', '--single-threaded', '--predictable-gc-schedule',
  '--hash-seed=1', '--random-seed=1', '--perf-prof', '--perf-prof-annotate-wasm', '--no-write-protect-code-memory'];
const RUNS = [1000, 3000];
const COLD_REQUESTS = 2 * (RUNS[1] - RUNS[0]);

function run(lib, n) {
  const dir = mkdtempSync(join(tmpdir(), 'weft-cold-misses-'));
  const argv = ['--tool=callgrind', '--cache-sim=yes', '--I1=32768,8,64', '--D1=32768,8,64', '--dump-instr=yes',
    '--callgrind-out-file=cg.out', process.execPath, ...V8, serverCost, lib, '--runs', '1', '--n', String(n), '--cold', cold,
    '--side', side, '--shape', shape];
  return new Promise((resolve, reject) => {
    const p = spawn('valgrind', argv, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(dir) : reject(new Error(`valgrind ${lib} --n ${n}: exit ${code}\n${err}`))));
  });
}

// The jitdump's code-load records: [address, size, name], by address.
function jitCode(dir) {
  const file = readdirSync(dir).find((f) => /^jit-\d+\.dump$/.test(f));
  if (!file) throw new Error(`no jitdump in ${dir}`);
  const b = readFileSync(join(dir, file));
  const out = [];
  for (let off = b.readUInt32LE(8); off + 16 <= b.length;) {
    const id = b.readUInt32LE(off), size = b.readUInt32LE(off + 4);
    if (size === 0) break;
    if (id === 0) {  // JIT_CODE_LOAD: pid, tid, vma, code address, code size, index, name
      const addr = Number(b.readBigUInt64LE(off + 32)), len = Number(b.readBigUInt64LE(off + 40));
      const p = off + 56;
      out.push([addr, len, b.toString('utf8', p, b.indexOf(0, p))]);
    }
    off += size;
  }
  return out.sort((x, y) => x[0] - y[0]);
}

// Self cost per instruction address from callgrind's --dump-instr output,
// with the function callgrind named it by (native code only).
function costs(dir) {
  const text = readFileSync(join(dir, 'cg.out'), 'latin1');
  let events = null, npos = 1, last = 0, skip = false, fn = null;
  const names = new Map(), per = new Map();
  for (const line of text.split('\n')) {
    const c = line.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42) {  // 0-9 + - *
      const parts = line.split(' ');
      const a = parts[0];
      const addr = a.startsWith('0x') ? parseInt(a, 16) : a[0] === '+' ? last + Number(a.slice(1))
        : a[0] === '-' ? last - Number(a.slice(1)) : a === '*' ? last : Number(a);
      last = addr;
      if (skip) { skip = false; continue; }  // a call's inclusive cost, not this code's
      let v = per.get(addr);
      if (!v) per.set(addr, (v = { fn, n: new Array(events.length).fill(0) }));
      for (let i = npos; i < parts.length; i++) v.n[i - npos] += Number(parts[i]);
    } else if (line.startsWith('calls=')) {
      skip = true;
    } else if (line.startsWith('fn=') || line.startsWith('cfn=')) {
      const m = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line);
      if (m[2] !== undefined) names.set(m[1], m[2]);
      if (line[0] === 'f') fn = names.get(m[1]);
    } else if (line.startsWith('events:')) {
      events = line.split(' ').slice(1);
    } else if (line.startsWith('positions:')) {
      npos = line.split(' ').length - 1;
    }
  }
  return { events, per };
}

// A C++ name, short: without its parameter list (the first parenthesis
// outside template arguments; long names come truncated), and a
// std::function by what it holds.
function shortName(name) {
  const f = /__function::__func<([^,]+),/.exec(name);
  if (f) return `std::function of ${f[1]}`;
  name = name.replaceAll('(anonymous namespace)::', '');
  for (let i = 0, depth = 0; i < name.length; i++) {
    if (name[i] === '<') depth++;
    else if (name[i] === '>') depth--;
    else if (name[i] === '(' && depth === 0) return name.slice(0, i) + '()';
  }
  return name;
}

// What a piece of code is: [group, name].
function kindOf(jitName, nativeFn) {
  if (nativeFn && nativeFn !== '???' && !nativeFn.startsWith('0x'))
    return nativeFn.startsWith('Builtins_') ? ['V8 builtins (shared)', nativeFn] : ['V8 and Node (C++)', nativeFn];
  if (jitName === null) return ['other generated code', '?'];
  const n = jitName.replace(/^JS:/, '');
  const w = /^(.*)-(\d+)-(turbofan|liftoff)$/.exec(n);  // name(params)-index-tier
  if (w) return [n.startsWith('wasm-to-js') ? 'WebAssembly module (import wrappers)' : 'WebAssembly module', w[1].startsWith('wasm-function[') ? w[1] : `${shortName(w[1])} #${w[2]}`];
  if (n.includes('server-cost.mjs') || /^. :1:\d+$/.test(n)) return ['the bench (code between requests)', n];
  if (n.includes('/bench/')) return ["the bench's wiring of the server", n.replace(/file:\/\/\S*\/bench\//, 'bench/')];
  if (n.includes('/node_modules/')) return ['the library (JavaScript)', n.replace(/(file:\/\/)?\S*\/node_modules\//, '')];
  if (/\/js\/|\/dist\//.test(n)) return ['weft glue (JavaScript)', n.replace(/file:\/\/\S*\//, '')];
  if (n.startsWith('Builtin:')) return ['V8 builtins (shared)', n];
  return ['other generated code', n];
}

function attribute(dir) {
  const code = jitCode(dir);
  const starts = code.map((c) => c[0]);
  const { events, per } = costs(dir);
  const miss = events.indexOf('I1mr'), ir = events.indexOf('Ir');
  const byFn = new Map();
  for (const [addr, { fn, n }] of per) {
    let lo = 0, hi = starts.length - 1, i = -1;
    while (lo <= hi) { const m = (lo + hi) >> 1; if (starts[m] <= addr) { i = m; lo = m + 1; } else hi = m - 1; }
    const jit = i >= 0 && addr < code[i][0] + code[i][1] ? code[i][2] : null;
    const [group, name] = kindOf(jit, fn);
    const key = group + '\u0000' + name;
    const v = byFn.get(key) ?? { group, name, miss: 0, ir: 0 };
    v.miss += n[miss]; v.ir += n[ir];
    byFn.set(key, v);
  }
  return byFn;
}

for (const lib of libs) {
  const dirs = await Promise.all(RUNS.map((n) => run(lib, n)));
  const [a, b] = dirs.map(attribute);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  const rows = [];
  for (const [k, v] of b) {
    const u = a.get(k) ?? { miss: 0, ir: 0 };
    rows.push({ ...v, miss: (v.miss - u.miss) / COLD_REQUESTS, ir: (v.ir - u.ir) / COLD_REQUESTS });
  }
  const groups = new Map();
  for (const r of rows) {
    const g = groups.get(r.group) ?? { miss: 0, ir: 0 };
    g.miss += r.miss; g.ir += r.ir;
    groups.set(r.group, g);
  }
  console.log(`${lib} (${side}, ${shape}): L1i misses (32 KiB, 8-way) per request after ${cold} evicting functions (instructions: that request and one without)`);
  let rest = 0;
  for (const [g, v] of [...groups].sort((x, y) => y[1].miss - x[1].miss)) {
    if (v.miss === 0 && v.ir === 0) continue;
    console.log(`  ${v.miss.toFixed(0).padStart(7)} misses ${v.ir.toFixed(0).padStart(9)} instr  ${g}`);
    if (g !== 'the bench (code between requests)') rest += v.miss;
  }
  console.log(`  ${rest.toFixed(0).padStart(7)} misses outside the code between requests`);
  console.log(`  by function (not the bench's code):`);
  for (const r of rows.filter((r) => r.group !== 'the bench (code between requests)').sort((x, y) => y.miss - x.miss).slice(0, top))
    console.log(`  ${r.miss.toFixed(1).padStart(7)} misses ${r.ir.toFixed(0).padStart(9)} instr  ${r.group}: ${r.name.slice(0, 110)}`);
}
