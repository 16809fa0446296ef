// Doxygen INPUT_FILTER for weft's public headers (docs/Doxyfile).
//
// The headers document their contracts in plain `//` comments, the style of
// the whole code base; Doxygen reads only `///`-style blocks. This filter
// hands Doxygen a copy in which
//   - the comment block that opens a file documents the file (\file),
//   - a block of whole-line `//` comments documents the declaration below it,
//   - a `// …` after code documents that member (`///<`), including the
//     whole-line comments aligned under it that continue it,
//   - a comment block over several declarations with no blank line between
//     them (overloads, a getter and its setter) documents each of them
//     (a Doxygen member group, DISTRIBUTE_GROUP_DOC),
//   - `// -- Section ---` banners and `}  // namespace x` stay plain comments,
//   - `\` and `@` in comment text are literal, not Doxygen commands, and
//     lines indented by 3+ spaces (the headers' examples) are shown as code.
// The headers themselves are not changed, so the comment a reader sees in the
// header is exactly what the reference shows. Usage: node doxygen-filter.mjs FILE
import fs from 'node:fs';

/** Column of a `//` that starts a comment on `line` (not inside a string), or -1. */
function commentColumn(line) {
  let quote = null;
  for (let i = 0; i < line.length - 1; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '/' && line[i + 1] === '/') {
      return i;
    }
  }
  return -1;
}

/**
 * Comment text with Doxygen's command characters made literal; a line
 * indented by three or more spaces (`//   code`, how the headers show
 * examples) is made a Markdown code block.
 */
const literal = (body) => body.replace(/[\\@]/g, '\\$&').replace(/^ {3,}/, '  $&');

const indentOf = (line) => line.length - line.trimStart().length;

/** Commas between declarators (`T a, b;`), not inside <>, () or {}. */
function declaratorCommas(line) {
  let depth = 0;
  let n = 0;
  for (const c of line.replace(/\/\/.*$/, '')) {
    if ('<({'.includes(c)) depth++;
    else if ('>)}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) n++;
  }
  return n;
}

/**
 * Wraps a doc block and the declarations right below it in a member group
 * when there are two or more of them: lines up to a blank line, a comment
 * line or a line indented less than the first; each line at the first one's
 * indentation starts a declaration. Not for declarations with a body.
 */
function group(lines) {
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\/\/\/(?!<)/.test(lines[i]) || /^\s*\/\/\/(<|\s*\\file)/.test(lines[i])) {
      out.push(lines[i]);
      continue;
    }
    let j = i;
    while (j < lines.length && /^\s*\/\/\/(?!<)/.test(lines[j])) j++;
    const first = j;
    if (first >= lines.length || lines[first].trim() === '') {
      out.push(...lines.slice(i, first));
      i = first - 1;
      continue;
    }
    const indent = indentOf(lines[first]);
    let k = first;
    let decls = 0;
    let body = false;
    while (k < lines.length) {
      const l = lines[k];
      if (l.trim() === '' || /^\s*\/\//.test(l) || indentOf(l) < indent) break;
      if (indentOf(l) === indent) {
        if (/^\s*[})]/.test(l)) break;
        decls += 1 + declaratorCommas(l);
      }
      if (/\{\s*(\/\/.*)?$/.test(l)) body = true;
      k++;
    }
    const pad = ' '.repeat(indent);
    if (decls >= 2 && !body) {
      out.push(`${pad}///@{`, ...lines.slice(i, k), `${pad}///@}`);
    } else {
      out.push(...lines.slice(i, k));
    }
    i = k - 1;
  }
  return out;
}

export function filter(text) {
  const lines = text.split('\n');
  const out = [];
  let inFileBlock = true;
  let trailingColumn = -1;  // column of the previous line's trailing comment
  for (const line of lines) {
    const col = commentColumn(line);
    const wholeLine = col >= 0 && line.slice(0, col).trim() === '';
    if (inFileBlock) {
      if (wholeLine) {
        out.push(out.length === 0 ? `/// \\file\n///${literal(line.slice(col + 2))}` : `///${literal(line.slice(col + 2))}`);
        continue;
      }
      inFileBlock = false;
    }
    if (col < 0) {
      trailingColumn = -1;
      out.push(line);
      continue;
    }
    const body = literal(line.slice(col + 2));
    if (wholeLine) {
      if (col === trailingColumn) {
        out.push(`${line.slice(0, col)}///<${body}`);  // continues the member comment above
      } else if (/^\s*--/.test(body) || line[col + 2] === '/') {
        trailingColumn = -1;
        out.push(line);  // a section banner, or already a Doxygen comment
      } else {
        trailingColumn = -1;
        out.push(`${line.slice(0, col)}///${body}`);
      }
      continue;
    }
    const code = line.slice(0, col);
    if (/^\s*(#|\})/.test(code) || line[col + 2] === '/') {
      trailingColumn = -1;
      out.push(line);  // preprocessor lines, `}  // namespace x`, already Doxygen
      continue;
    }
    trailingColumn = col;
    out.push(`${code}///<${body}`);
  }
  return group(out.join('\n').split('\n')).join('\n');
}

if (process.argv[2]) process.stdout.write(filter(fs.readFileSync(process.argv[2], 'utf8')));
