// Type declarations for weft-rpc's transports (js/transports/index.js),
// re-exported by js/index.d.ts: the three-method endpoint every transport
// is, and the factories for postMessage channels and WebSockets.
import type { WireMessage } from '../index.js';

/** Moves messages; write your own with these three (onClose optional). */
export interface RPCTransport {
  /** Delivers a message or a batch to the other side (tuples only where `tuples` is true). */
  send(message: WireMessage): void;
  /**
   * Registers the one function that receives what arrives (any value: the
   * core judges it). The endpoint also passes its role: a postMessage
   * transport names it in its pack announcement, and heeds only the
   * announcement of an endpoint it can be talking to (docs/protocol.md,
   * "Packing over postMessage"); your own transport may ignore it.
   */
  onMessage(handler: (message: unknown) => void, role?: 'client' | 'server' | 'peer'): void;
  /** Stops listening and releases the channel (called by the endpoint's destroy()). */
  destroy?(): void;
  /** Called once when the other side is gone; pending calls then reject with -32002. */
  onClose?(handler: () => void): void;
  /**
   * Messages a packing transport could not post (send() itself does not throw
   * then): called later than send() (from a microtask, or from destroy()) once
   * per failed message, with the object passed to send() and the error (e.g.
   * DataCloneError). The other messages of the same flush are still delivered,
   * in order. No handler: console.warn. Unpacked, send() throws instead.
   */
  onSendError?(handler: (message: WireMessage, error: unknown) => void): void;
  /**
   * Whether `message` alone could be sent. Asked only when a batch of two or
   * more could not be sent (send() threw, or onSendError reported it), for
   * each element, to tell the one that failed from the rest (which then go
   * again). It may throw instead of returning false: the error is that
   * element's own reason. Default: structured clone succeeds on it as a
   * postMessage transport posts it alone (a Proxy over a plain object or an
   * array read as the data it presents).
   */
  sendable?(message: WireMessage): boolean;
  /**
   * True once the other side announced that it reads tuples: the endpoint
   * then sends them (postMessage transports; a transport without it gets
   * plain JSON-RPC). Every endpoint reads tuples it receives.
   */
  readonly tuples?: boolean;
}

/** The postMessage transports: plus onSendError. */
export interface PostMessageTransport extends RPCTransport {
  /**
   * Stops listening and releases the channel (a port is closed); the endpoint
   * is told, once: its pending calls reject at once with -32002, and so do
   * later ones. What is sent after it is dropped.
   */
  destroy(): void;
  /**
   * Called once when the transport closes: destroy(), a Worker terminated
   * (or, in a browser, whose script failed to load; in Node, exited), a Node
   * MessagePort whose other end closed. Not for a browser MessagePort (which
   * fires no close event), a window's navigation, or a worker's self.close():
   * calls left there end in their timeout (-32001).
   */
  onClose(handler: () => void): void;
  onSendError(handler: (message: WireMessage, error: unknown) => void): void;
  readonly tuples: boolean;
}

/**
 * Options of the postMessage transports. `pack`: coalesce the messages sent
 * during one turn into one postMessage, `{ "weft/pack": [m1, m2, …] }` (a lone
 * message is posted on its own). `'auto'` (default): once the other side has
 * announced itself or sent a pack; `true`: from the start (the peer must be
 * weft); `false`: never, and plain JSON-RPC only (no announcement, no tuples).
 * Packs and tuples are always read on receipt.
 */
export interface PostMessageTransportOptions {
  pack?: boolean | 'auto';
}

/** What windowTransport() posts to: a Window (an iframe's contentWindow, window.parent). */
export interface PostTarget {
  /** Window.postMessage. */
  postMessage(message: unknown, targetOrigin: string): void;
}
/** What windowTransport() listens on: a Window (default: this one). */
export interface MessageSource {
  /** Listens for message events. */
  addEventListener(type: 'message', listener: (ev: MessageEvent) => void): void;
  /** Stops listening. */
  removeEventListener(type: 'message', listener: (ev: MessageEvent) => void): void;
  /** The window's own origin ("null" when opaque): the default allowed origin. */
  origin?: string;
  /** Read when `origin` is absent (a stand-in window). */
  location?: { origin: string };
}

/** A browser MessagePort or a node:worker_threads MessagePort. */
export interface PortLike {
  /** Posts a message to the other end. */
  postMessage(message: unknown): void;
  /** Listens for message (and close: a Node MessagePort's) events. */
  addEventListener(type: string, listener: (ev: any) => void): void;
  /** Stops listening. */
  removeEventListener(type: string, listener: (ev: any) => void): void;
  /** Starts delivery (browser MessagePort). */
  start?(): void;
  /** Closes the port. */
  close?(): void;
}
/** A browser Worker (EventTarget) or a node:worker_threads Worker (EventEmitter). */
export interface WorkerLike {
  /** Posts a message to the worker. */
  postMessage(message: unknown): void;
  /** Stops the worker; weft then rejects its pending calls. */
  terminate(): unknown;
  /** Browser Worker: listens for messages and errors. */
  addEventListener?(type: string, listener: (ev: any) => void): void;
  /** Browser Worker: stops listening. */
  removeEventListener?(type: string, listener: (ev: any) => void): void;
  /** node:worker_threads Worker: listens for messages and exit. */
  on?(event: string, listener: (...args: any[]) => void): unknown;
  /** node:worker_threads Worker: stops listening. */
  off?(event: string, listener: (...args: any[]) => void): unknown;
}

/**
 * Between windows (iframe ↔ parent). `origin`: the allowed origin(s); messages
 * are posted with it as targetOrigin, never to an origin not allowed (a list:
 * to `target`'s current origin when this window can read it, else once to
 * each allowed origin, so calls keep working after `target` navigates to
 * another allowed origin; buffers are then copied, not transferred).
 * Omitted: `source`'s own origin (`source.origin`; a window whose origin is
 * opaque, e.g. a sandboxed frame, must pass one: it throws a TypeError).
 * "*" only when passed (with a console warning). A window has no close
 * event: calls its navigated-away document never answers end in their timeout.
 */
export declare function windowTransport(target: PostTarget, source?: MessageSource, origin?: string | readonly string[], options?: PostMessageTransportOptions): PostMessageTransport;
/**
 * A MessagePort (MessageChannel, worker_threads). When a Node MessagePort's
 * other end closes, pending calls reject at once with -32002; a browser
 * MessagePort fires no close event (Chromium), so there they end in their
 * timeout (-32001).
 */
export declare function portTransport(port: PortLike, options?: PostMessageTransportOptions): PostMessageTransport;
/**
 * A Worker (browser or node:worker_threads); terminating it rejects pending
 * calls at once (-32002), as does a browser Worker whose script fails to load,
 * parse or import (its plain `error` Event) and a Node worker's exit. An
 * uncaught exception in a running browser worker closes nothing; a browser worker
 * that calls self.close() tells the page nothing: calls end in their timeout.
 * In Node an uncaught exception ends the worker (its exit: -32002) and is
 * Node's `error` event on the Worker, which weft does not listen for: listen
 * for it yourself, or Node throws it in the thread that made the Worker.
 */
export declare function workerTransport(worker: WorkerLike, options?: PostMessageTransportOptions): PostMessageTransport;
/**
 * Inside a worker: its global scope, or Node's parentPort, which it reaches
 * through process.getBuiltinModule (Node 20.16 and 22.3 on; in an older Node
 * worker it throws a TypeError saying so).
 */
export declare function selfTransport(options?: PostMessageTransportOptions): PostMessageTransport;

/** What webSocketTransport needs: the browser's WebSocket, or npm `ws`'s. */
export interface WebSocketLike {
  readonly readyState: number;
  /** Sends one text frame. */
  send(data: string): void;
  /** Closes the connection. */
  close(code?: number, reason?: string): void;
  /** Listens for open, message and close events. */
  addEventListener(type: 'open' | 'message' | 'close', listener: (event: any) => void): void;
  /** Stops listening. */
  removeEventListener(type: 'open' | 'message' | 'close', listener: (event: any) => void): void;
}
/** The transports that own a connection: destroy() closes it; onClose always exists. */
export interface ConnectionTransport extends RPCTransport {
  destroy(): void;
  onClose(handler: () => void): void;
}
/**
 * A WebSocket (e.g. to `weft serve --ws`): one JSON-RPC message per text
 * frame. A binary frame, or a text frame that is not JSON, is reported
 * (BadFrame): a Peer or JSONRPCServer answers it -32700 with id null; a
 * JSONRPCClient fails its pending calls -32700 ("Parse error: undecodable
 * data from the server: …") and closes, socket included. Sends wait until
 * it opens; when it closes, pending calls reject at once with -32002.
 * destroy() closes the socket.
 */
export declare function webSocketTransport(ws: WebSocketLike): ConnectionTransport;
