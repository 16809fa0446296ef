// Transports: { send, onMessage, destroy, onClose?, onSendError? }. They only
// move messages; the endpoint ignores anything that is not JSON-RPC 2.0. The
// postMessage transports below all take options.pack (see ../pack.js);
// webSocketTransport sends plain JSON text frames.
export { windowTransport } from './window.js';
export { portTransport } from './port.js';
export { workerTransport } from './worker.js';
export { selfTransport } from './self.js';
export { webSocketTransport } from './websocket.js';
