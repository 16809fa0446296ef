// The boundary is declared once (wasm/abi.h). dist/weft_abi.js is generated
// from the module's own tables at build time; these tests fail if the two
// disagree in any member, or if the shipped module carries test-only code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as A from '../../dist/weft_abi.js';
import { ready, ErrorCode } from '../../js/index.js';
import { loadModule } from '../../js/loader.js';

async function moduleAbi() {
  await ready;
  const M = await loadModule();
  const p = M._weft_abi();
  return { M, abi: JSON.parse(new TextDecoder().decode(M.HEAPU8.subarray(p, p + M._weft_abi_length()))) };
}

test('every constant of wasm/abi.h has the same value in dist/weft_abi.js', async () => {
  const { abi } = await moduleAbi();
  const names = Object.keys(abi.constants);
  assert.ok(names.length > 60, `${names.length} constants`);
  for (const name of names) assert.equal(A[name], abi.constants[name], name);
  assert.deepEqual({ ...A.CODES }, abi.codes);
  assert.deepEqual([...A.DIAGNOSTICS], abi.diagnostics);
  assert.deepEqual([...A.PARAM_TYPES], abi.paramTypes);
  // Nothing in weft_abi.js that the module does not declare.
  const extra = Object.keys(A).filter((k) => !(k in abi.constants) && !['ABI_HASH', 'CODES', 'DIAGNOSTICS', 'PARAM_TYPES'].includes(k));
  assert.deepEqual(extra, []);
});

test('the loader checks the ABI hash of the module it loads', async () => {
  const { M } = await moduleAbi();
  assert.equal(M._weft_abi_hash(), A.ABI_HASH);
});

test('ErrorCode is the core\'s table, not a copy', () => {
  assert.equal(ErrorCode, A.CODES);
  assert.equal(ErrorCode.RequestCancelled, -32800);
  assert.ok(Object.isFrozen(ErrorCode));
});

test('the shipped module has no test-only exports or demo methods', async () => {
  const bytes = readFileSync(new URL('../../dist/weft.wasm', import.meta.url));
  const exports = WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name);
  assert.ok(exports.some((n) => /weft_receive/.test(n)), 'sanity: the production exports are there');
  assert.deepEqual(exports.filter((n) => /test|demo/.test(n)), []);
  const text = bytes.toString('latin1');
  for (const demo of ['get_data', 'notify_hello', 'minuend']) assert.ok(!text.includes(demo), `weft.wasm contains "${demo}"`);
  const testBytes = readFileSync(new URL('../../dist-test/dist/weft.wasm', import.meta.url)).toString('latin1');
  assert.ok(testBytes.includes('minuend'), 'sanity: the test module does carry the demo');
});
