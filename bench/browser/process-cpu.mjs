// Where a Chromium row's CPU goes: small-call throughput of contenders
// taking turns on one transport (the bench's benchOne, order alternating per
// repetition), and the CPU time each Chromium process spent per call while
// it ran, read from /proc (Linux): the browser process by thread (its
// threads' names), the renderers by process, busiest first (a cross-site
// frame has its own; Chromium may reuse one process for the frames of
// successive contenders), and all of them together in CPU-seconds per second:
// a row whose processes keep every CPU busy is bound by the CPUs, and its
// calls/s move with whatever else takes CPU time, Chromium's own work
// included (bench/README.md, "The cross-site iframe: three processes on two
// cores").
//   node bench/browser/process-cpu.mjs [contender,...] [--transport iframe-cross] [--reps 4]
//        [--ms 3000] [--latency 100]
//   (defaults: json-rpc-2.0,raw,json-rpc-2.0 → weft,weft → json-rpc-2.0,weft (pack:false));
//   the first contender named is the one the others are held against, per repetition
import fs from 'node:fs';
import { openBenchPage } from './open.mjs';
import { alternate, median } from '../lib/stats.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i < 0 ? dflt : args.splice(i, 2)[1];
};
const transport = opt('--transport', 'iframe-cross');
const reps = Number(opt('--reps', '4'));
const ms = Number(opt('--ms', '3000'));
const latencyCalls = Number(opt('--latency', '100'));
const libs = (args[0] ?? 'json-rpc-2.0,raw,json-rpc-2.0 → weft,weft → json-rpc-2.0,weft (pack:false)').split(',');
const TAG = `cpu${process.pid}`;
const HZ = 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s

// CPU seconds of this run's Chromium, by process and, within each, by
// thread: Map pid → { type, s, threads: Map name → s }. Its browser process
// is the one whose command line names the profile folder (which names TAG);
// the others are its descendants (renderers are forked from a zygote and do
// not all repeat the browser's flags).
function chromiumCpu() {
  const out = new Map();
  const fields = (stat) => stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  // Fields after the command name: ppid is the 2nd, utime and stime the 12th and 13th.
  const seconds = (f) => (Number(f[11]) + Number(f[12])) / HZ;
  const procs = new Map();
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      procs.set(pid, { cmd: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'), f: fields(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')) });
    } catch { /* the process exited meanwhile */ }
  }
  const ours = new Set([...procs].filter(([, p]) => p.cmd.includes(`weft-bench-${TAG}-`) && !p.cmd.includes('--type=')).map(([pid]) => pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of procs) if (!ours.has(pid) && ours.has(p.f[1])) { ours.add(pid); grew = true; }
  }
  for (const pid of ours) {
    const { cmd, f } = procs.get(pid);
    // An exited process (a zombie: state Z, no command line) is not read:
    // its last reading while it ran stands (see sample()).
    if (f[0] === 'Z' || cmd === '') continue;
    const threads = new Map();
    try {
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        try {
          const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
          threads.set(name, (threads.get(name) ?? 0) + seconds(fields(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))));
        } catch { /* the thread exited meanwhile */ }
      }
    } catch { /* the process exited meanwhile */ }
    out.set(pid, { type: cmd.match(/--type=([a-z-]+)/)?.[1] ?? 'browser', s: seconds(f), threads });
  }
  return out;
}

const { call, close } = await openBenchPage(TAG);
const got = Object.fromEntries(libs.map((l) => [l, { rate: [], load: [], perCall: {} }]));
const show = (by, calls) => Object.entries(by).filter(([, x]) => x / calls * 1e6 >= 0.5)
  .map(([who, x]) => `${who} ${(x / calls * 1e6).toFixed(1)}`).join(', ');
try {
  for (let rep = 0; rep < reps; rep++) {
    for (const lib of alternate(libs, rep)) {
      const before = chromiumCpu();
      // A frame's process may exit as soon as the frame is removed, at the
      // end of benchOne: read /proc every 100 ms meanwhile and keep what each
      // process was last seen to have used (up to 100 ms of it is missed).
      const after = new Map(before);
      const sample = () => { for (const [pid, v] of chromiumCpu()) after.set(pid, v); };
      const timer = setInterval(sample, 100);
      let r;
      try {
        r = await call('benchOne', transport, lib, {
          small: { inflight: 256, ms, latencyCalls },
          large: { inflight: 4, ms: 50, latencyCalls: 20 },
        });
      } finally {
        clearInterval(timer);
      }
      sample();
      // Calls this benchOne made: the throughput window's and the sequential ones.
      const calls = r.small.rate * ms / 1000 + latencyCalls;
      // The browser process's busiest threads by name; renderers by CPU, busiest first.
      const by = {};
      const renderers = [];
      for (const [pid, v] of after) {
        const was = before.get(pid);
        const s = v.s - (was?.s ?? 0);
        if (v.type === 'renderer') renderers.push(s);
        else if (v.type === 'browser') {
          for (const [name, t] of v.threads) by[`browser ${name}`] = t - (was?.threads.get(name) ?? 0);
        } else by[v.type] = (by[v.type] ?? 0) + s;
      }
      renderers.sort((x, y) => y - x).forEach((s, i) => { by[`renderer ${i + 1}`] = s; });
      got[lib].rate.push(r.small.rate);
      for (const [who, s] of Object.entries(by)) (got[lib].perCall[who] ??= []).push(s / calls * 1e6);
      const all = Object.values(by).reduce((a, b) => a + b, 0);
      got[lib].load.push(all / calls * r.small.rate);
      console.log(`rep ${rep + 1} ${lib.padEnd(22)} ${Math.round(r.small.rate).toString().padStart(7)} calls/s; CPU µs per call: ${show(by, calls)}; ` +
        `all ${(all / calls * 1e6).toFixed(1)} (${(all / calls * r.small.rate).toFixed(2)} CPU-s per s)`);
    }
  }
} finally {
  await close();
}
console.log(`\n${transport}, medians of ${reps} (CPU µs per call, by process):`);
for (const [lib, v] of Object.entries(got)) {
  console.log(`${lib.padEnd(22)} ${Math.round(median(v.rate)).toString().padStart(7)} calls/s [${Math.round(Math.min(...v.rate))}–${Math.round(Math.max(...v.rate))}]; ` +
    Object.entries(v.perCall).map(([who, xs]) => [who, median(xs)]).filter(([, x]) => x >= 0.5)
      .map(([who, x]) => `${who} ${x.toFixed(1)}`).join(', ') + `; ${median(v.load).toFixed(2)} CPU-s per s`);
}
// Each contender against the first named, repetition by repetition (the two
// turns of one repetition are adjacent in time: a busier moment moves both).
const [ref, ...others] = libs;
if (others.length) {
  console.log(`\ncalls/s ÷ ${ref}'s in the same repetition: median [lowest–highest], repetitions at or above 1`);
  for (const lib of others) {
    const rs = got[lib].rate.map((x, i) => x / got[ref].rate[i]);
    console.log(`${lib.padEnd(22)} ${median(rs).toFixed(2)}× [${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}], ${rs.filter((x) => x >= 1).length} of ${rs.length}`);
  }
}
