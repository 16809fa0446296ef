// Sizes the core asks JavaScript for, because only JavaScript holds the
// values (payloads stay JS values: wasm/payloads.h):
//  * chunkSize: a stream chunk's value, measured by weft::chunk_size's rule
//    (weft/peer.h, docs/streams.md "Limits") for PeerLimits::max_stream_chunk;
//    the core compares it with the limit and refuses (streams.cpp). Never
//    below what the receiver measures, on any transport: a value reached
//    twice counts twice (JSON sends it twice), a cycle (structured clone
//    only) once; binary counts its bytes, as JSON's {"bytes":[…]} does;
//  * utf8Length: the bytes of a response's JSON text, for its metrics'
//    response_size (docs/protocol.md "Metrics"), as an encoder measures it.

/**
 * UTF-8 bytes of `s`, as TextEncoder writes it (a lone surrogate is U+FFFD,
 * 3 bytes). Past `stop` it returns some count > stop without reading on.
 */
export function utf8Length(s, stop = Infinity) {
  const len = s.length;
  if (len > stop) return len;  // UTF-8 never has fewer bytes than UTF-16 units
  let n = len;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) { n += 1; continue; }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { n += 2; i++; continue; }  // a pair: 4 bytes for 2 units
    }
    n += 2;
  }
  return n;
}

/** An ArrayBuffer, SharedArrayBuffer, typed array or DataView, of any realm. */
export const tag = (v) => Object.prototype.toString.call(v).slice(8, -1);
export const isBinary = (v) => ArrayBuffer.isView(v) || tag(v).endsWith('ArrayBuffer');
const END = {};  // the last container opened ends here

// The JSON codec's form of binary data, as streams.cpp's binary_form.
function binaryForm({ bytes: b, subtype: t, ...rest }) {
  if (!Array.isArray(b) || (t !== null && !Number.isInteger(t)) || Object.keys(rest).length) return false;
  for (const x of b) if (!(Number.isInteger(x) && x >= 0 && x < 256)) return false;
  return true;
}

/**
 * weft::chunk_size for a JavaScript value: the bytes of its strings, binary
 * data (ArrayBuffer, typed arrays, DataView, Blob) and object keys, plus 8
 * for every other element, 1 per array element. A Map counts as its keys
 * and values, a Set as its values, a Date as its JSON too; a value reached
 * twice counts twice, but not again inside itself. Counting stops once past `stop`.
 */
export function chunkSize(value, stop = Infinity) {
  if (typeof value === 'string') return utf8Length(value, stop);
  if (value === null || typeof value !== 'object') return 8;
  if (isBinary(value)) return value.byteLength;
  let n = 0;  // a container: walked, its path kept against cycles
  const work = [value], path = [], open = new Set();
  while (work.length && n <= stop) {
    const v = work.pop();
    if (v === END) { open.delete(path.pop()); continue; }
    if (typeof v === 'string') { n += utf8Length(v, stop - n); continue; }
    if (v === null || typeof v !== 'object') { n += 8; continue; }
    if (isBinary(v)) { n += v.byteLength; continue; }
    if (typeof Blob === 'function' && v instanceof Blob) { n += v.size; continue; }
    if (open.has(v)) continue;
    open.add(v);
    path.push(v);
    work.push(END);
    if (Array.isArray(v)) {
      n += v.length;
      if (n > stop) break;
      for (let i = 0; i < v.length; i++) work.push(v[i]);
    } else if (v instanceof Map) {
      n += v.size;
      if (n > stop) break;
      for (const [k, x] of v) work.push(k, x);
    } else if (v instanceof Set) {
      n += v.size;
      if (n > stop) break;
      for (const x of v) work.push(x);
    } else if (Array.isArray(v.bytes) && binaryForm(v)) {
      n += v.bytes.length;
    } else {
      if (v instanceof Number || v instanceof Boolean) n += 8;
      try { if (typeof v.toJSON === 'function') work.push(v.toJSON()); } catch { /* JSON cannot send it */ }
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        n += utf8Length(k) + 1;
        if (n > stop) break;
        work.push(v[k]);
      }
    }
  }
  return n;
}
