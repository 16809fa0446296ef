// Starting `weft serve --ws/--http` for the WebSocket and HTTP tests (not a
// test file): resolves once the server has logged its addresses.
import { spawn } from 'node:child_process';
import { WEFT_BIN, within } from './helpers.mjs';

export async function startWeb(args) {
  const proc = spawn(WEFT_BIN, ['serve', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const urls = {};
  await within(10000, new Promise((resolve, reject) => {
    proc.stderr.on('data', (c) => {
      log += c;
      for (const m of log.matchAll(/listening on ((ws|http):\/\/\S+)/g)) urls[m[2]] = m[1];
      if ((!args.includes('--ws') || urls.ws) && (!args.includes('--http') || urls.http)) resolve();
    });
    proc.on('exit', (code) => reject(new Error(`weft serve exited ${code}: ${log}`)));
  }), 'weft serve start');
  const exited = new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal })));
  return {
    ws: urls.ws, http: urls.http, proc, log: () => log,
    async stop(signal = 'SIGTERM') { if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal); return exited; },
  };
}
