// The TypeScript declarations (js/index.d.ts) as a consumer compiles them
// (issue 15): tests/types/ imports 'weft-rpc' by name (resolved through
// package.json "exports"), once per tsconfig — moduleResolution node16 and
// bundler — under --strict. consumer.ts/methods.ts/node.ts use the whole API
// and must compile; errors.ts holds wrong usages under `// @ts-expect-error`,
// so tsc fails if any of them compiles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');
const T = { timeout: 60000 };

function tsc(config) {
  const r = spawnSync(TSC, ['-p', path.join(ROOT, 'tests/types', config), '--pretty', 'false', '--listFiles'],
    { cwd: ROOT, encoding: 'utf8' });
  const files = r.stdout.split('\n').filter((l) => l.startsWith('/')).map((f) => path.relative(ROOT, f));
  const errors = r.stdout.split('\n').filter((l) => l && !l.startsWith('/')).join('\n') + r.stderr;
  return { status: r.status, files, errors };
}

for (const [config, expected] of [
  ['tsconfig.node16.json', ['consumer.ts', 'methods.ts', 'node.ts', 'errors.ts']],
  ['tsconfig.bundler.json', ['consumer.ts', 'methods.ts', 'errors.ts']],
]) {
  test(`tsc --strict --noEmit -p tests/types/${config}: the API compiles, the wrong usages do not`, T, () => {
    assert.ok(fs.existsSync(TSC), 'node_modules/.bin/tsc missing: npm ci');
    const r = tsc(config);
    assert.equal(r.status, 0, `tsc failed:\n${r.errors}`);
    // 'weft-rpc' resolved, through "exports", to the shipped declarations.
    assert.ok(r.files.includes('js/index.d.ts'), `js/index.d.ts not compiled (files: ${r.files.join(', ')})`);
    for (const f of expected) assert.ok(r.files.includes(`tests/types/${f}`), `${f} compiled`);
  });
}

test('the harness bites: tsc rejects a wrong call outside @ts-expect-error (tests/types/must-fail.ts)', T, () => {
  const r = tsc('tsconfig.must-fail.json');
  assert.notEqual(r.status, 0, 'tsc accepted params = 5');
  assert.match(r.errors, /must-fail\.ts\(7,\d+\): error TS2769/);
});
