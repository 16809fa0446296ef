// The Doxygen input filter (docs/doxygen-filter.mjs) that lets the public
// headers keep plain `//` comments: one case per rule of its header comment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filter } from '../../docs/doxygen-filter.mjs';

const lines = (...l) => l.join('\n');

test('the comment block that opens a file documents the file', () => {
  assert.equal(filter(lines('// weft/x.h — what it is.', '// More.', '#pragma once')),
    lines('/// \\file', '/// weft/x.h — what it is.', '/// More.', '#pragma once'));
});

test('a whole-line comment block documents the declaration below it', () => {
  assert.equal(filter(lines('#pragma once', '// Adds.', 'int add(int a, int b);')),
    lines('#pragma once', '/// Adds.', 'int add(int a, int b);'));
});

test('a comment after code documents that member, with the aligned lines that continue it', () => {
  assert.equal(filter(lines('#pragma once', 'struct S {', '  int a;  // first line', '          // second line', '  // next member', '  int b;', '};')),
    lines('#pragma once', 'struct S {', '  int a;  ///< first line', '          ///< second line', '  /// next member', '  int b;', '};'));
});

test('section banners, closing-brace comments and preprocessor comments stay plain', () => {
  const text = lines('#pragma once', '// -- Serving --------', '', '#include <x>  // why', 'namespace a {', '}  // namespace a');
  assert.equal(filter(text), text);
});

test('a comment over several declarations without a blank line documents each (a member group)', () => {
  assert.equal(filter(lines('#pragma once', '// Registration.', 'void f(int);', 'void f(long);', '', 'int g();')),
    lines('#pragma once', '///@{', '/// Registration.', 'void f(int);', 'void f(long);', '///@}', '', 'int g();'));
  assert.equal(filter(lines('#pragma once', '  // The members.', '  std::optional<json> a, b;')),
    lines('#pragma once', '  ///@{', '  /// The members.', '  std::optional<json> a, b;', '  ///@}'));
});

test('no group for one declaration, or for a declaration with a body', () => {
  const one = lines('#pragma once', '/// One.', 'int one();');
  assert.equal(filter(lines('#pragma once', '// One.', 'int one();')), one);
  const body = filter(lines('#pragma once', '// S.', 'struct S {', '  int a;', '};'));
  assert.ok(!body.includes('@{'), body);
});

test('backslashes and @ in comments are literal; three-space indented lines are code', () => {
  assert.equal(filter(lines('#pragma once', '// "a\\r\\n" @b', '//   code();', 'int x;')),
    lines('#pragma once', '/// "a\\\\r\\\\n" \\@b', '///     code();', 'int x;'));
});

test('// inside a string literal is not a comment', () => {
  const text = lines('#pragma once', 'const char* u = "http://x";');
  assert.equal(filter(text), text);
});

// docs/Doxyfile itself: the gate scripts/docs.sh relies on.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
/** Doxygen with docs/Doxyfile over one header; { code, log }. */
function doxygen(header) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-doxygen-'));
  try {
    fs.writeFileSync(path.join(dir, 'x.h'), header);
    const config = `${fs.readFileSync(path.join(ROOT, 'docs/Doxyfile'), 'utf8')}
INPUT = ${dir}/x.h
USE_MDFILE_AS_MAINPAGE =
OUTPUT_DIRECTORY = ${dir}/out
`;
    const r = spawnSync('doxygen', ['-'], { cwd: ROOT, input: config, encoding: 'utf8', env: { ...process.env, WEFT_VERSION: 'test' } });
    return { code: r.status, log: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('docs/Doxyfile fails on an undocumented public declaration and passes once it is documented', () => {
    assert.equal(spawnSync('doxygen', ['--version']).status, 0, 'doxygen missing (scripts/deps.sh installs it)');
    const undocumented = doxygen(lines('// x.h — a header.', '#pragma once', 'namespace weft {', '// Documented.', 'int a();', '', 'int b();', '}  // namespace weft'));
    assert.notEqual(undocumented.code, 0, undocumented.log);
    assert.match(undocumented.log, /b\(\).*is not documented/);
    const documented = doxygen(lines('// x.h — a header.', '#pragma once', 'namespace weft {', '// Documented.', 'int a();', '', '// Also.', 'int b();', '}  // namespace weft'));
    assert.equal(documented.code, 0, documented.log);
  });
