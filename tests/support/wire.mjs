// The announcement a weft postMessage transport posts once before its first
// message (js/pack.js, docs/protocol.md): tests that read the raw wire leave
// it out with `plain()`.
export const ANNOUNCEMENT = { jsonrpc: '2.0', method: '$/weft/pack' };
export const isAnnouncement = (m) => m !== null && typeof m === 'object' && m.method === '$/weft/pack' && m.jsonrpc === '2.0' && !('id' in m);
/** Calls fn(data) for every raw message except the announcement. */
export const plain = (fn) => (ev) => { if (!isAnnouncement(ev.data)) fn(ev.data); };
