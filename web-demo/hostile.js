// A frame from a third, disallowed origin. It posts forged JSON-RPC traffic
// with targetOrigin "*" to the demo page and to the demo iframe. weft's
// windowTransport must ignore all of it: no handler runs, no call resolves.
const forged = [
  { jsonrpc: '2.0', id: 'evil-1', method: 'echo', params: { from: 'hostile' } },
  { jsonrpc: '2.0', id: 'evil-2', method: 'fail' },
  { jsonrpc: '2.0', method: 'note', params: { text: 'forged notification' } },
  { jsonrpc: '2.0', method: 'boundary.ready', params: { where: 'iframe', origin: 'forged' } },
  { jsonrpc: '2.0', method: 'note.ack', params: { where: 'iframe', count: 999, text: 'forged ack' } },
  { jsonrpc: '2.0', id: 1, result: 'forged result' },
  [{ jsonrpc: '2.0', id: 'evil-3', method: 'add', params: [1, 2] }],
];
document.getElementById('origin').textContent = location.origin;
// ?frame=<name>: the sibling frame to attack as well (by its browsing-context name).
const frameName = new URLSearchParams(location.search).get('frame');
let sent = 0;
function post(win) {
  for (const m of forged) { win.postMessage(m, '*'); sent++; }
}
post(window.parent);
if (frameName) {
  const sibling = window.parent.frames[frameName];
  if (sibling && sibling !== window) post(sibling);
}
document.getElementById('sent').textContent = String(sent);
// Tell the page how many were posted (itself not JSON-RPC, also ignored by weft).
window.parent.postMessage({ hostileDone: sent, perTarget: forged.length }, '*');
