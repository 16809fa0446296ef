// Number ids as text, over JSON text transports (WebSocket): JSON.parse
// would round 12345678901234567890 or 1.50, and the answer would carry
// another id. Such an id travels as an IdText instead, as the native codec
// keeps it (docs/protocol.md, "Ids are echoed exactly"): the core gets the lexeme (wire.js
// describeId), gives it back (recId), and the transport writes it unquoted.

/** A number id's JSON text, kept whole. */
export class IdText {
  constructor(text) { this.text = text; }
}

// The number text of each message object's "id" in JSON text `text` (the
// object, or the objects of a top-level array, in order); valid JSON, a
// later duplicate winning, as for JSON.parse.
function idTexts(text) {
  const out = [];
  const n = text.length;
  let depth = 0, level = 1, index = -1, wantKey = false, key = null;
  for (let i = 0; i < n;) {
    const c = text.charCodeAt(i);
    if (c === 34) {  // a string: a member's name where one is due
      let j = i + 1;
      while (text.charCodeAt(j) !== 34) j += text.charCodeAt(j) === 92 ? 2 : 1;
      if (depth === level && wantKey) { key = JSON.parse(text.slice(i, j + 1)); wantKey = false; }
      i = j + 1;
    } else if (c === 123 || c === 91) {  // { [
      if (++depth === 1 && c === 91) level = 2;
      if (c === 123 && depth === level) { index++; wantKey = true; }
      i++;
    } else if (c === 125 || c === 93) {  // } ]
      depth--;
      i++;
    } else if (c === 44) {  // , between members
      if (depth === level) wantKey = true;
      i++;
    } else if (c === 45 || (c >= 48 && c <= 57)) {  // - 0-9
      let j = i + 1;
      for (let d; j < n && ((d = text.charCodeAt(j)) === 43 || d === 45 || d === 46 || d === 69 || d === 101 || (d >= 48 && d <= 57));) j++;
      if (depth === level && key === 'id' && !wantKey) out[index] = text.slice(i, j);
      i = j;
    } else {
      i++;  // whitespace, ':', true, false, null
    }
  }
  return out;
}

// Finite only: 1e400 is refused natively (-32700), Infinity here.
const lost = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) && Number.isFinite(x.id) && !Number.isSafeInteger(x.id);

/**
 * `m`, parsed from `text`, with each message's number id that JSON.parse
 * did not keep (not a safe integer) as an IdText of its text. Scans `text`
 * only when there is one.
 */
export function exactIds(text, m) {
  const list = Array.isArray(m) ? m : [m];
  if (!list.some(lost)) return m;
  const texts = idTexts(text);
  let k = 0;
  for (const x of list) {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) continue;
    const t = texts[k++];
    if (lost(x) && t !== undefined) x.id = new IdText(t);
  }
  return m;
}

/** An id lexeme from the core: a number, unless a double would not keep it. */
export function idOf(text) {
  const v = Number(text);
  return String(v) === text || Object.is(v, -0) ? v : new IdText(text);
}

/** An ID_BIG id (abi.h): high 32 bits of the magnitude with the sign, low 32; as idOf gives it. */
export function bigId(high, low) {
  return idOf((high < 0 ? '-' : '') + ((BigInt(Math.abs(high)) << 32n) + BigInt(low)));
}
