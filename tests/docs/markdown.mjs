// The code blocks of weft's Markdown docs, and the markers that say what each
// one is (tests/js/docs-examples.test.mjs runs them; docs/guides/README.md
// describes the markers for authors). A marker is an HTML comment, invisible
// once rendered, on the last non-blank line before the opening fence:
//
//   <!-- example: NAME -->             a runnable example (or one file of it:
//   <!-- example: NAME/FILE k=v … -->  several blocks with one NAME are one example;
//                                      the one marked `main` (else the first) is run)
//   <!-- output: NAME -->              what example NAME prints, checked exactly
//   <!-- not-run: REASON -->           shown only; the reason is required
//
// A block without a marker is an error: every example either runs or says why not.
import fs from 'node:fs';
import path from 'node:path';

const MARKER = /^<!--\s*(example|output|not-run):\s*(.*?)\s*-->$/;

/** Every fenced code block of `file` with its marker (or marker: null). */
export function codeBlocks(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !lines[i].startsWith(indent + fence); i++) body.push(lines[i].slice(indent.length));
    let m = start - 1;
    while (m >= 0 && lines[m].trim() === '') m--;
    blocks.push({
      file,
      line: start + 1,
      lang,
      code: body.join('\n') + '\n',
      marker: m >= 0 ? parseMarker(lines[m].trim()) : null,
    });
  }
  return blocks;
}

/** { kind, name, fileName, attrs, reason } from one marker line, or null. */
export function parseMarker(text) {
  const m = MARKER.exec(text);
  if (!m) return null;
  const [, kind, rest] = m;
  if (kind === 'not-run') return { kind, reason: rest };
  const [id, ...pairs] = rest.split(/\s+/);
  const attrs = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq > 0) attrs[p.slice(0, eq)] = p.slice(eq + 1);
    else attrs[p] = true;
  }
  const slash = id.indexOf('/');
  return {
    kind,
    name: slash < 0 ? id : id.slice(0, slash),
    fileName: slash < 0 ? null : id.slice(slash + 1),
    attrs,
  };
}

/** The Markdown files whose examples must run: README.md and docs/**.md. */
export function docFiles(root) {
  const out = [path.join(root, 'README.md')];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(path.join(root, 'docs'));
  return out;
}

/**
 * Examples by name: { name, lang, blocks: [{ fileName, code, attrs, where }],
 * attrs (of the first block), output (string or null), where }.
 */
export function examples(blocks) {
  const byName = new Map();
  const outputs = new Map();
  for (const b of blocks) {
    const where = `${b.file}:${b.line}`;
    if (b.marker?.kind === 'example') {
      let ex = byName.get(b.marker.name);
      if (!ex) {
        ex = { name: b.marker.name, lang: b.lang, blocks: [], attrs: {}, output: null, where };
        byName.set(b.marker.name, ex);
      }
      ex.blocks.push({ fileName: b.marker.fileName, lang: b.lang, code: b.code, attrs: b.marker.attrs, where });
      Object.assign(ex.attrs, b.marker.attrs);  // an example's attributes may sit on any of its blocks
    } else if (b.marker?.kind === 'output') {
      outputs.set(b.marker.name, { code: b.code, where });
    }
  }
  for (const [name, out] of outputs) {
    const ex = byName.get(name);
    if (!ex) throw new Error(`${out.where}: output of an unknown example "${name}"`);
    ex.output = out.code;
  }
  return [...byName.values()];
}
