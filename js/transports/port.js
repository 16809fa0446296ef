import { packMode } from '../pack.js';
import { makeTransport } from './transport.js';
import { eventListening } from './listen.js';

/** A MessagePort (MessageChannel, worker_threads port, BroadcastChannel-like). */
export function portTransport(port, options) {
  const mode = packMode(options, 'portTransport()');
  const events = eventListening(port);
  return makeTransport({
    post: (msg, transfer) => port.postMessage(msg, transfer),
    listen(receive) {
      events.listen(receive);
      // On the web, addEventListener (unlike onmessage) does not start a port.
      if (typeof port.start === 'function') port.start();
    },
    unlisten() {
      events.unlisten();
      try { port.close(); } catch { /* already closed */ }
    },
    watchClose(fire) {
      port.addEventListener('close', fire);
      return () => port.removeEventListener('close', fire);
    },
    mode,
  });
}
