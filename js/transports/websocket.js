// A WebSocket: the browser's, or any object with its shape (readyState,
// send, close, addEventListener for 'open'/'message'/'close'), such as the
// npm `ws` package's. One JSON-RPC message (or batch) per text frame, as
// `weft serve --ws` expects (docs/transports.md); no packing, so the other
// side may be any JSON-RPC server.
//   - Messages sent while the socket is CONNECTING are queued and sent, in
//     order, when it opens.
//   - When it closes (or if it is already closed), onClose fires once: the
//     endpoint rejects every pending call at once with -32002. Sending after
//     that throws, so the call is rejected with that error as its cause.
//   - A frame that is not JSON text is dropped (console.warn).
//   - destroy() stops listening and closes the socket (code 1000); what was
//     queued before open is dropped with it.
const CONNECTING = 0;
const OPEN = 1;

function text(data) {
  if (typeof data === 'string') return data;
  // Binary frames (ArrayBuffer, Node Buffer, typed arrays) holding UTF-8 JSON.
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return new TextDecoder().decode(data);
  return null;
}

/** One JSON-RPC transport over a WebSocket (browser WebSocket or npm `ws`). */
export function webSocketTransport(ws) {
  if (!ws || typeof ws.send !== 'function' || typeof ws.addEventListener !== 'function')
    throw new TypeError('webSocketTransport(): expected a WebSocket (send, close, addEventListener)');
  let handler = null;
  let closeHandlers = [];
  let closed = false;
  let queue = [];

  const onOpen = () => {
    const q = queue;
    queue = [];
    for (const s of q) ws.send(s);
  };
  const onMessage = (ev) => {
    const s = text(ev.data);
    let m;
    try {
      if (s === null) throw new TypeError('not text');
      m = JSON.parse(s);
    } catch {
      console.warn('webSocketTransport: dropped a frame that is not JSON text');
      return;
    }
    if (handler) handler(m);
  };
  const onCloseEvent = () => {
    if (closed) return;
    closed = true;
    queue = [];
    for (const h of closeHandlers) h();
  };
  ws.addEventListener('open', onOpen);
  ws.addEventListener('message', onMessage);
  ws.addEventListener('close', onCloseEvent);
  if (ws.readyState > OPEN) queueMicrotask(onCloseEvent);  // CLOSING or CLOSED already

  return {
    send(message) {
      if (closed || ws.readyState > OPEN) throw new Error('WebSocket is closed');
      const s = JSON.stringify(message);
      if (ws.readyState === CONNECTING) queue.push(s);
      else ws.send(s);
    },
    onMessage(h) { handler = h; },
    onClose(h) { closeHandlers.push(h); if (closed) h(); },
    destroy() {
      handler = null;
      closeHandlers = [];
      queue = [];
      ws.removeEventListener('open', onOpen);
      ws.removeEventListener('message', onMessage);
      ws.removeEventListener('close', onCloseEvent);
      try { if (ws.readyState <= OPEN) ws.close(1000); } catch { /* already closing */ }
    },
  };
}
