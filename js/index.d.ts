// Type declarations for weft-rpc.

export interface JSONRPCRequest {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | unknown[];
  id: number | string | null;
}
export interface JSONRPCNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | unknown[];
}
export interface JSONRPCSuccessResponse {
  jsonrpc: '2.0';
  result: unknown;
  id: number | string | null;
}
export interface JSONRPCErrorResponse {
  jsonrpc: '2.0';
  error: { code: number; message: string; data?: unknown };
  id: number | string | null;
}
export type JSONRPCResponse = JSONRPCSuccessResponse | JSONRPCErrorResponse;
export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse;

/** Moves messages; write your own with these three (onClose optional). */
export interface RPCTransport {
  send(message: JSONRPCMessage | JSONRPCMessage[]): void;
  onMessage(handler: (message: unknown) => void): void;
  destroy?(): void;
  /** Called once when the other side is gone; pending calls then reject with -32002. */
  onClose?(handler: () => void): void;
  /**
   * Messages a packing transport could not post (send() itself does not throw
   * then): called later than send() (from a microtask, or from destroy()) once
   * per failed message, with the object passed to send() and the error (e.g.
   * DataCloneError). The other messages of the same flush are still delivered,
   * in order. No handler: console.warn. Unpacked, send() throws as before.
   */
  onSendError?(handler: (message: JSONRPCMessage | JSONRPCMessage[], error: unknown) => void): void;
}

/** The postMessage transports: plus onSendError. */
export interface PostMessageTransport extends RPCTransport {
  destroy(): void;
  onClose(handler: () => void): void;
  onSendError(handler: (message: JSONRPCMessage | JSONRPCMessage[], error: unknown) => void): void;
}

/**
 * Options of the postMessage transports. `pack`: coalesce the messages sent
 * during one turn into one postMessage, `{ "weft/pack": [m1, m2, …] }` (a lone
 * message is still posted as plain JSON-RPC). `'auto'` (default): only once a
 * pack has been received from the other side; `true`: from the start (the peer
 * must be weft); `false`: never. Packs are always unpacked on receipt.
 */
export interface PostMessageTransportOptions {
  pack?: boolean | 'auto';
}

/** Error codes used by weft (weft/error.h). */
export declare const ErrorCode: Readonly<{
  ParseError: -32700;
  InvalidRequest: -32600;
  MethodNotFound: -32601;
  InvalidParams: -32602;
  InternalError: -32603;
  ServerError: -32000;
  /** A call timed out (endpoint or per-call `timeout`). */
  Timeout: -32001;
  /** The endpoint was destroyed, or its transport closed / worker terminated. */
  Closed: -32002;
  /** Too many calls pending / requests in flight. */
  Overloaded: -32003;
  /** The call was cancelled (AbortSignal; LSP RequestCancelled). */
  RequestCancelled: -32800;
}>;

export declare class RPCError extends Error {
  name: 'RPCError';
  code: number;
  data?: unknown;
  constructor(code: number, message: string, data?: unknown);
}

export interface CallOptions {
  /** Milliseconds; overrides the endpoint's timeout. 0 or Infinity: none. */
  timeout?: number;
  /** Aborting rejects the call at once (-32800) and sends `$/cancelRequest`. */
  signal?: AbortSignal;
}

export interface HandlerContext {
  /** Aborted when the caller cancels ($/cancelRequest) or the endpoint closes. */
  readonly signal: AbortSignal;
  readonly method: string;
}

export type Params = Record<string, unknown> | unknown[] | undefined;
export type Handler<P = any, R = unknown> = (params: P, context: HandlerContext) => R | Promise<R>;
export type NotificationHandler<P = any> = (params: P) => void | Promise<void>;

/** Declared parameters: the core answers -32602 when they do not match. */
export interface ParamSpec {
  params: Array<string | { name: string; type?: 'any' | 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object'; required?: boolean }>;
  byPosition?: boolean;
  byName?: boolean;
  allowExtra?: boolean;
}

export interface EndpointOptions {
  /** Default call timeout in ms (10000). 0 or Infinity: none. */
  timeout?: number;
  limits?: { maxInFlight?: number; maxPending?: number; maxBatch?: number };
  /** Dropped or suspicious traffic (UnknownResponse, InvalidResponse, …). */
  onDiagnostic?: (kind: string, message: string) => void;
}

export interface BatchEntry {
  method: string;
  params?: Params;
  /** true: sent as a notification; its promise resolves to undefined. */
  notification?: boolean;
}

export interface EndpointStats {
  pending: number;
  inFlight: number;
  calls: number;
  payloads: number;
  heap: number;
}

declare class Endpoint {
  /** Resolves once the WebAssembly core is loaded (calls before that are queued). */
  readonly ready: Promise<void>;
  request<T = unknown>(method: string, params?: Params, options?: CallOptions): Promise<T>;
  notify(method: string, params?: Params): void;
  /** Sends one JSON-RPC batch; one promise per entry, in order. */
  batch(entries: BatchEntry[], options?: CallOptions): Promise<unknown>[];
  method<P = any, R = unknown>(name: string, handler: Handler<P, R>, spec?: ParamSpec): this;
  onNotify<P = any>(name: string, handler: NotificationHandler<P>): this;
  /** Rejects every pending call (-32002), cancels requests being served, detaches the transport. */
  destroy(): void;
  stats(): EndpointStats;
}

export declare class JSONRPCClient extends Endpoint {
  constructor(transport: RPCTransport, options?: EndpointOptions);
}
export declare class JSONRPCServer extends Endpoint {
  constructor(transport: RPCTransport, options?: EndpointOptions);
}
/** Client and server on one transport. */
export declare class Peer extends Endpoint {
  constructor(transport: RPCTransport, options?: EndpointOptions);
  call<T = unknown>(method: string, params?: Params, options?: CallOptions): Promise<T>;
}

interface PostTarget {
  postMessage(message: unknown, targetOrigin: string): void;
}
interface MessageSource {
  addEventListener(type: 'message', listener: (ev: MessageEvent) => void): void;
  removeEventListener(type: 'message', listener: (ev: MessageEvent) => void): void;
  location?: { origin: string };
}

/** A browser MessagePort or a node:worker_threads MessagePort. */
interface PortLike {
  postMessage(message: unknown): void;
  addEventListener(type: string, listener: (ev: any) => void): void;
  removeEventListener(type: string, listener: (ev: any) => void): void;
  start?(): void;
  close?(): void;
}
/** A browser Worker (EventTarget) or a node:worker_threads Worker (EventEmitter). */
interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): unknown;
  addEventListener?(type: string, listener: (ev: any) => void): void;
  removeEventListener?(type: string, listener: (ev: any) => void): void;
  on?(event: string, listener: (...args: any[]) => void): unknown;
  off?(event: string, listener: (...args: any[]) => void): unknown;
}

/**
 * Between windows (iframe ↔ parent). `origin`: the allowed origin(s); messages
 * are posted with it as targetOrigin. Omitted: `source`'s own origin. "*" only
 * when passed (with a console warning).
 */
export declare function windowTransport(target: PostTarget, source?: MessageSource, origin?: string | string[], options?: PostMessageTransportOptions): PostMessageTransport;
/** A MessagePort (MessageChannel, worker_threads). */
export declare function portTransport(port: PortLike, options?: PostMessageTransportOptions): PostMessageTransport;
/** A Worker (browser or node:worker_threads); terminating it rejects pending calls. */
export declare function workerTransport(worker: WorkerLike, options?: PostMessageTransportOptions): PostMessageTransport;
/** Inside a worker: its global scope, or Node's parentPort. */
export declare function selfTransport(options?: PostMessageTransportOptions): PostMessageTransport;

/** Resolves when the WebAssembly core has loaded. */
export declare const ready: Promise<void>;
/** Bytes in use on the WebAssembly heap. */
export declare function heapUsed(): number;
/** The core's version, once loaded. */
export declare function coreVersion(): string | undefined;
