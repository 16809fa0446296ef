// weft-rpc: JSON-RPC 2.0 over postMessage, MessagePort and workers, with the
// protocol implemented once, in C++, compiled to WebAssembly.
// A drop-in for the Wiggum API (JSONRPCClient, JSONRPCServer, RPCError and
// the transports), plus Peer, per-call { timeout, signal } and batch().
import { Endpoint, Role } from './endpoint.js';
import { ErrorCode, RPCError } from './errors.js';
import { coreVersion, heapUsed, ready } from './module.js';

export { RPCError, ErrorCode, ready, heapUsed, coreVersion };
export { asMessage } from './tuples.js';
export { windowTransport, portTransport, workerTransport, selfTransport, webSocketTransport } from './transports/index.js';

/** Client and server on one transport: both sides call each other. */
export class Peer extends Endpoint {
  constructor(transport, options) { super(transport, Role.Peer, options); }
  /** Alias of request(). */
  call(method, params, options) { return this.request(method, params, options); }
}

/** Sends requests and notifications; ignores requests arriving on its transport. */
export class JSONRPCClient extends Endpoint {
  constructor(transport, options) { super(transport, Role.Client, options); }
}

/** Serves methods and notifications; ignores responses arriving on its transport. */
export class JSONRPCServer extends Endpoint {
  constructor(transport, options) { super(transport, Role.Server, options); }
}
