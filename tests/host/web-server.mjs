// Starting `weft serve --ws/--http` for the WebSocket and HTTP tests (not a
// test file): resolves once the server has logged its addresses.
import { spawn } from 'node:child_process';
import { WEFT_BIN, within } from './helpers.mjs';

export async function startWeb(args, env = {}) {
  const proc = spawn(WEFT_BIN, ['serve', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let log = '';
  const watchers = [];
  proc.stderr.on('data', (c) => {
    log += c;
    for (const w of watchers.splice(0)) w();
  });
  const urls = {};
  await within(10000, new Promise((resolve, reject) => {
    proc.stderr.on('data', () => {
      for (const m of log.matchAll(/listening on ((ws|http):\/\/\S+)/g)) urls[m[2]] = m[1];
      if ((!args.includes('--ws') || urls.ws) && (!args.includes('--http') || urls.http)) resolve();
    });
    proc.on('exit', (code) => reject(new Error(`weft serve exited ${code}: ${log}`)));
  }), 'weft serve start');
  const exited = new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal })));
  return {
    ws: urls.ws, http: urls.http, proc, log: () => log,
    // Resolves once the server's log matches `re` (it logs on stderr).
    waitLog(re) {
      return new Promise((resolve) => {
        const check = () => (re.test(log) ? resolve(log) : watchers.push(check));
        check();
      });
    },
    async stop(signal = 'SIGTERM') { if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal); return exited; },
  };
}
