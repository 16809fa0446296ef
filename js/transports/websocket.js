// A WebSocket (or npm `ws`): one JSON-RPC message per text frame, no packing.
// Contract: docs/transports.md.
// Refused as structured clone and the native codecs do: JSON.stringify would
// drop a function or symbol (a response without "result"), write null, or
// a lone surrogate weft's parser refuses, or write as {} (a Map, Blob: any
// object but a plain one or a boxed primitive). Binary is the JSON codec's
// {"bytes":[…],"subtype":null}, as natively.
import { IdText, exactIds } from '../ids.js';
import { isBinary, tag } from '../size.js';

const lone = /\p{Cs}/u;
// An IdText (ids.js) is written as its text, unquoted: JSON.stringify writes
// this mark in its place, replaced after. The nonce keeps a string of the
// message's own from being taken for one.
const MARK = `\u0000weft-id-${Math.random().toString(36).slice(2)}-`;
function json(message) {
  let ids;
  const s = JSON.stringify(message, function (k, v) {
    if (v instanceof IdText) return MARK + ((ids ??= []).push(v.text) - 1);
    if (typeof v === 'function' || typeof v === 'symbol') throw new TypeError(`a ${typeof v} is not JSON`);
    if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError('NaN or Infinity has no JSON representation');
    if (lone.test(k) || typeof v === 'string' && lone.test(v)) throw new TypeError('a lone surrogate is not JSON');
    const b = this[k];  // before toJSON (a Buffer's)
    if (b && isBinary(b)) return { bytes: Array.from(new Uint8Array(b.buffer ?? b, b.byteOffset, b.byteLength)), subtype: null };
    const t = v !== null && typeof v === 'object' && !Array.isArray(v) && tag(v);
    if (t && !/^(Object|Number|String|Boolean)$/.test(t)) throw new TypeError(`a ${t} is not JSON`);
    return v;
  });
  return ids ? ids.reduce((out, text, i) => out.replace(JSON.stringify(MARK + i), text), s) : s;
}

export function webSocketTransport(ws) {
  if (typeof ws?.send !== 'function' || typeof ws.addEventListener !== 'function')
    throw new TypeError('webSocketTransport(): expected a WebSocket');
  let handler = null;
  let undecodable = (why) => console.warn(`webSocketTransport: dropped a frame: ${why}`);
  let onClose = [];
  let closed = false;
  let queue = [];
  const on = {
    open() { for (const s of queue.splice(0)) ws.send(s); },
    message({ data }) {
      // Text frames only: weft's binary ones hold MessagePack or zstd (docs/transports.md).
      if (typeof data !== 'string') return undecodable('a binary frame (webSocketTransport reads JSON text frames)');
      let m;
      try { m = JSON.parse(data); } catch (e) { return undecodable(`not JSON text (${e.message})`); }
      handler?.(exactIds(data, m));
    },
    close() {
      if (closed) return;
      closed = true;
      queue = [];
      for (const h of onClose) h();
    },
  };
  for (const k in on) ws.addEventListener(k, on[k]);
  // Kept after destroy(): npm ws throws an unheard 'error'.
  ws.addEventListener('error', on.close);
  if (ws.readyState > 1) queueMicrotask(on.close);  // CLOSING or CLOSED already
  return {
    send(message) {
      if (closed || ws.readyState > 1) throw new Error('WebSocket is closed');
      const s = json(message);
      if (ws.readyState === 0) queue.push(s);
      else ws.send(s);
    },
    // After a batch failed: true, or throws why not.
    sendable(message) { return !!json(message); },
    onMessage(h) { handler = h; },
    // A frame that is no message: the core decides what follows (§5).
    onUndecodable(h) { undecodable = h; },
    // It carries only JSON-RPC: what is not JSON-RPC 2.0 is answered -32600,
    // not ignored as on a window (the endpoint's ignoreForeign default).
    dedicated: true,
    onClose(h) { onClose.push(h); if (closed) h(); },
    destroy() {
      handler = null;
      onClose = [];
      queue = [];
      for (const k in on) ws.removeEventListener(k, on[k]);
      try { if (ws.readyState <= 1) ws.close(1000); } catch { /* closing already */ }
    },
  };
}
