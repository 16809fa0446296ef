// Every code block in README.md and docs/**.md either runs here or is marked
// as not run, with the reason (issue 15: "every example in them runs in a
// test"). Markers and runners: tests/docs/markdown.mjs, tests/docs/runners.mjs;
// how to write one: docs/guides/README.md.
// Needs the native build (build/, WEFT_BIN), dist/ (scripts/build-wasm.sh) and
// Chromium for the browser examples.
// Run: node --test --test-concurrency=1 tests/js/docs-examples.test.mjs
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { codeBlocks, docFiles, examples } from '../docs/markdown.mjs';
import { ROOT, runNode, runBrowser, runCpp, buildCpp, runTranscript, closeBrowser } from '../docs/runners.mjs';

const blocks = docFiles(ROOT).flatMap(codeBlocks);
const rel = (b) => `${path.relative(ROOT, b.file)}:${b.line}`;
const all = examples(blocks);
// uses=NAME/FILE: a file shown once in the docs, used by a second example too.
for (const ex of all) {
  for (const use of (ex.attrs.uses ?? '').split(',').filter(Boolean)) {
    const [name, file] = use.split('/');
    const block = all.find((e) => e.name === name)?.blocks.find((b) => b.fileName === file);
    if (!block) throw new Error(`${ex.where}: uses=${use}, but there is no such block`);
    ex.blocks.push({ ...block });
  }
}

after(closeBrowser);

test('every code block in README.md and docs/ is marked: example, output, or not-run with a reason', () => {
  const unmarked = blocks.filter((b) => b.marker === null).map(rel);
  assert.deepEqual(unmarked, [], 'blocks without <!-- example: … -->, <!-- output: … --> or <!-- not-run: REASON -->');
  const noReason = blocks.filter((b) => b.marker?.kind === 'not-run' && !b.marker.reason).map(rel);
  assert.deepEqual(noReason, [], 'not-run markers must say why');
});

test('the docs have examples of every kind the runners know', () => {
  const kinds = new Set(all.map(kindOf));
  for (const k of ['node', 'browser', 'transcript', 'cpp', 'server']) assert.ok(kinds.has(k), `no ${k} example`);
});

/** How an example runs, from its first block's language and attributes. */
function kindOf(ex) {
  if (ex.lang === 'console') return 'transcript';
  if (ex.lang === 'js') return ex.attrs.env === 'browser' ? 'browser' : 'node';
  if (ex.lang === 'cpp' || ex.lang === 'cmake') return ex.attrs.serve ? 'server' : 'cpp';
  return `unknown (fence language "${ex.lang}")`;
}

// Servers (C++ examples marked `serve`) are built once, for the transcripts
// that call them (server=NAME).
const servers = {};
for (const ex of all.filter((e) => kindOf(e) === 'server')) servers[ex.name] = buildCpp(ex);
// Awaited by their own test; a failed build also fails the transcripts that need it.
for (const p of Object.values(servers)) p.catch(() => {});

// 5 minutes each: a C++ example compiles Boost.Asio headers on a shared machine.
for (const ex of all) {
  const kind = kindOf(ex);
  test(`example "${ex.name}" (${path.relative(ROOT, ex.where)}, ${kind})`, { timeout: 300000 }, async () => {
    switch (kind) {
      case 'node': return runNode(ex);
      case 'browser': return runBrowser(ex);
      case 'cpp': {
        const built = {};
        if (ex.attrs.server && ex.attrs.server !== 'demo') built[ex.attrs.server] = await servers[ex.attrs.server];
        return runCpp(ex, built);
      }
      case 'server': {
        await servers[ex.name];
        const callers = all.filter((e) => e.attrs.server === ex.name);
        assert.ok(callers.length > 0, `server example "${ex.name}" is called by no example (server=${ex.name})`);
        return;
      }
      case 'transcript': {
        const built = {};
        if (ex.attrs.server && ex.attrs.server !== 'demo') {
          assert.ok(servers[ex.attrs.server], `no server example "${ex.attrs.server}"`);
          built[ex.attrs.server] = await servers[ex.attrs.server];
        }
        return runTranscript(ex, built);
      }
      default: assert.fail(`example "${ex.name}" (${ex.where}): ${kind}`);
    }
  });
}
