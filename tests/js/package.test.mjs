// What `npm pack` ships: the library and its module, nothing test-only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('npm pack ships js/ and dist/weft.{wasm,_module.js,_abi.js}, and no test code', () => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
  const files = JSON.parse(out)[0].files.map((f) => f.path).sort();
  for (const need of ['dist/weft.wasm', 'dist/weft_module.js', 'dist/weft_abi.js', 'js/index.js', 'js/index.d.ts', 'js/endpoint.js', 'package.json'])
    assert.ok(files.includes(need), `${need} is shipped (files: ${files.join(', ')})`);
  const stray = files.filter((f) => !/^(js\/|dist\/weft(\.wasm|_module\.js|_abi\.js)$|package\.json$|README\.md$|LICENSE)/.test(f));
  assert.deepEqual(stray, [], 'nothing outside the library');
  assert.ok(!files.some((f) => /test|demo|dist-test/i.test(f)), 'no test or demo files');
});
