// selfTransport() in a Node worker reaches parentPort through
// process.getBuiltinModule (Node 20.16 and 22.3 on): package.json's engines
// admits no Node without it, and in one (simulated here by deleting it inside
// the worker) the error says what is needed rather than "not inside a worker".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

const T = { timeout: 15000 };
const INDEX = new URL('../../js/index.js', import.meta.url).href;

// Runs selfTransport() in a worker; resolves with what it reported.
function inWorker(prelude) {
  const w = new Worker(`${prelude}
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(INDEX)}).then(({ selfTransport }) => {
      try { selfTransport().destroy?.(); parentPort.postMessage('ok'); }
      catch (e) { parentPort.postMessage(e.constructor.name + ': ' + e.message); }
    });`, { eval: true });
  return new Promise((resolve, reject) => {
    w.once('message', (m) => { resolve(m); w.terminate(); });
    w.once('error', reject);
  });
}

test('selfTransport() in a Node worker without process.getBuiltinModule throws a TypeError naming what it needs; with it, it works', T, async () => {
  assert.equal(await inWorker(''), 'ok');
  assert.equal(await inWorker('delete process.getBuiltinModule;'),
    'TypeError: selfTransport(): not inside a worker (Node: needs process.getBuiltinModule, 20.16+ or 22.3+)');
});

test('package.json engines admits only the Nodes with process.getBuiltinModule (20.16 on 20, 22.3 on)', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(pkg.engines.node, '>=20.16.0 <21 || >=22.3.0');
  assert.equal(typeof process.getBuiltinModule, 'function', `this Node (${process.version}) is inside engines`);
});
