// Type declarations for weft-rpc.
import type { RPCTransport } from './transports/index.js';

/** A request (JSON-RPC 2.0 §4): answered with a response carrying the same `id`. */
export interface JSONRPCRequest {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | unknown[];
  id: number | string | null;
}
/** A notification (§4.1): a request without `id`, never answered. */
export interface JSONRPCNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | unknown[];
}
/** A successful response (§5): `result` of the request with the same `id`. */
export interface JSONRPCSuccessResponse {
  jsonrpc: '2.0';
  result: unknown;
  id: number | string | null;
}
/** An error response (§5, §5.1): `id` is null when the request's id could not be read. */
export interface JSONRPCErrorResponse {
  jsonrpc: '2.0';
  error: { code: number; message: string; data?: unknown };
  id: number | string | null;
}
/** A response: success or error. */
export type JSONRPCResponse = JSONRPCSuccessResponse | JSONRPCErrorResponse;
/** Any one JSON-RPC message (a batch is an array of them, §6). */
export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse;
/**
 * A message in the compact form two weft postMessage ends use once the other
 * side announced it reads it (docs/protocol.md, "Tuples"): `[0n, id, method,
 * params?]`, `[1n, method, params?]`, `[2n, id, result]`, `[3n, id, code,
 * message, data?]`.
 */
export type JSONRPCTuple =
  | readonly [0n, number | string | null, string, unknown?]
  | readonly [1n, string, unknown?]
  | readonly [2n, number | string | null, unknown]
  | readonly [3n, number | string | null, number, string, unknown?];
/** What an endpoint hands its transport: a message, a tuple, or a batch of them. */
export type WireMessage = JSONRPCMessage | JSONRPCTuple | (JSONRPCMessage | JSONRPCTuple)[];
/**
 * What a value from the wire says as JSON-RPC: a tuple becomes the message
 * object it stands for, a batch element by element; anything else is
 * returned as it is. For logging what a transport carries.
 */
export declare function asMessage(wire: WireMessage): JSONRPCMessage | JSONRPCMessage[];
export declare function asMessage(wire: unknown): unknown;

// The transports (RPCTransport and the factories): js/transports/index.d.ts.
export * from './transports/index.js';

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
  /** The rate limit was reached; data: { limit, window, retry_after }. */
  RateLimited: -32004;
  /** The other side is draining or shutting down; data: { retry_after, reason }. */
  Unavailable: -32005;
  /** rpc.handshake: no common protocol version; data: { supported }. */
  VersionMismatch: -32006;
  /** The call was cancelled (AbortSignal; LSP RequestCancelled). */
  RequestCancelled: -32800;
}>;

/**
 * Per-response metrics (docs/protocol.md, "Metrics"), as the response's
 * `metrics` member carries them and `weft call --metrics` prints them.
 */
export interface ResponseMetrics {
  /** Microseconds from the serving side's dispatch of the request to its answer, by its clock. */
  processing_time_us: number;
  /** Bytes of the response's encoding without the `metrics` member (weft-rpc: its JSON text, UTF-8). */
  response_size: number;
}

/**
 * A JSON-RPC error: `code`, `message` and optional `data`, as on the wire.
 * One a call rejects with has no stack frames (`stack` is
 * `RPCError: <message>`): they would be weft's own, never the caller's.
 */
export declare class RPCError extends Error {
  name: 'RPCError';
  code: number;
  data?: unknown;
  /** The error answer's metrics, when "metrics" was agreed or the call had `onMetrics`. */
  metrics?: ResponseMetrics;
  /** A local failure's cause: the AbortSignal's reason (-32800), the send error (-32002). */
  cause?: unknown;
  constructor(code: number, message: string, data?: unknown);
}

/** Options of one call (request(), call(), batch()). */
export interface CallOptions {
  /**
   * Milliseconds (>= 0); overrides the endpoint's timeout. 0 or Infinity: none.
   * A negative or NaN timeout is a RangeError, one that is not a number a
   * TypeError: request() and call() reject with it, batch() throws it, nothing sent.
   */
  timeout?: number;
  /**
   * Aborting rejects the call at once (-32800) and sends `$/cancelRequest`.
   * Anything but an AbortSignal (or undefined, null) is a TypeError, as for `timeout`.
   */
  signal?: AbortSignal;
  /** Asks the handler for progress (`$/progress`, docs/streams.md) and receives each value. */
  onProgress?: (value: unknown) => void;
  /** Each progress value restarts the call's timeout (a long call that reports progress stays alive). */
  progressResetsTimeout?: boolean;
  /**
   * Receives the answer's metrics just before the call settles, when the
   * answer carried them: after a handshake agreed on "metrics" with a side
   * that measures (docs/protocol.md, "Metrics"). In batch(): for each entry
   * without its own `onMetrics`.
   */
  onMetrics?: (metrics: ResponseMetrics) => void;
  /**
   * Retry on a retryable error (-32001 answered by the other side, -32003, -32004, -32005), for idempotent
   * calls only: up to 5 attempts, backoff 100, 200+rand(50), 400+rand(100), 800+rand(200) ms,
   * or the error's data.retry_after when longer. The call's own timeout (this
   * side's -32001) is final, never retried, as in the native client.
   */
  retry?: boolean;
}

export interface StreamOptions extends CallOptions {
  /** Chunks held at most before the consumer takes them (1–1024, default 16): the sender's credit. */
  highWaterMark?: number;
}

/**
 * The chunks of a streamed result, in order (`for await`); `break` cancels
 * the call. Each chunk, and each grant of credit, restarts the call's timeout.
 * Rejects as `result` does: after an abort or the timeout at once, no chunk
 * delivered after it; after an error answer, once the chunks before it are.
 */
export interface ChunkStream<T = unknown> extends AsyncIterableIterator<T> {
  /** The handler's final answer. */
  readonly result: Promise<unknown>;
  /** The final answer's metrics, once it arrived carrying them. */
  readonly metrics: ResponseMetrics | undefined;
}

/** Options of one `StreamSink.write()`. */
export interface WriteOptions {
  /** This is the last chunk. */
  final?: boolean;
  /** How many chunks there are in all, when known. */
  total?: number;
  /** Default true: an ArrayBuffer, or a view of a whole one, is transferred (the writer gives it up). */
  transfer?: boolean;
}

/** Where a handler writes the chunks of a streamed result. */
export interface StreamSink {
  /** The caller opened a stream (`stream()`): chunks may be written. */
  readonly streaming: boolean;
  /**
   * Sends the next chunk; resolves when the caller has room for more (await it:
   * beyond the caller's credit at most 64 chunks are queued, then writes reject -32003).
   * Rejects -32600 when the caller opened no stream, -32002 once answered or cancelled.
   */
  write(value: unknown, options?: WriteOptions): Promise<void>;
}

/** What a handler learns besides params. */
export interface HandlerContext {
  /** Aborted when the caller cancels ($/cancelRequest) or the endpoint closes. */
  readonly signal: AbortSignal;
  readonly method: string;
  /** Chunks of a streamed result (docs/streams.md). */
  readonly sink: StreamSink;
  /** The caller asked for progress. */
  readonly wantsProgress: boolean;
  /** Sends a `$/progress` value if the caller asked for progress; else nothing. */
  progress(value: unknown): void;
}

/**
 * A call's params: an object or an array (JSON-RPC 2.0 §4.2), or none. Any
 * object type is accepted (interfaces too); anything else is answered -32602.
 */
export type Params = object | undefined;
/** A method: its return value (or the promise's) is the result; a thrown `RPCError` is the error (other throws: -32603). */
export type Handler<P = any, R = unknown> = (params: P, context: HandlerContext) => R | Promise<R>;
/** A notification handler: never answered, even when it throws. */
export type NotificationHandler<P = any> = (params: P) => void | Promise<void>;

/** Declared parameters: the core answers -32602 when they do not match. */
export interface ParamSpec {
  params?: ReadonlyArray<string | { name: string; type?: 'any' | 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object'; required?: boolean }>;
  byPosition?: boolean;
  byName?: boolean;
  /**
   * Accept params beyond the declared ones (default false: -32602). By name,
   * the extra members reach the handler as given; by position, the handler
   * gets the declared ones keyed by name and the extra elements are dropped.
   */
  allowExtra?: boolean;
}

/** What `onDiagnostic` is told about (other strings may come from newer cores). */
export type DiagnosticKind =
  | 'UnknownResponse' | 'InvalidResponse' | 'UnhandledNotification' | 'NotificationFailed'
  | 'ErrorWithoutId' | 'LateReply' | 'BadFrame' | 'IgnoredMessage' | 'SendFailed'
  | 'BadMessage' | 'NotifyFailed' | 'MetricsHandlerFailed' | 'BadParamSpec'
  | 'DrainHandlerFailed' | 'ProgressFailed'
  | (string & {});

/** Time for an endpoint's timeouts; the default is performance.now() and the global timers. */
export interface Clock<Handle = any> {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Runs `fn` after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): Handle;
  /** Cancels what setTimeout() armed. */
  clearTimeout(handle: Handle): void;
}

/**
 * The core's limits; omitted or 0: its default. Each is an integer >= 0;
 * Infinity, or 2^32 and up, is as many as the core can count (no limit).
 * Anything else (negative, NaN, a fraction, not a number) makes the
 * constructor throw a RangeError naming the limit.
 */
export interface EndpointLimits {
  /** Incoming requests being served at once (default 1000); beyond: answered -32003. */
  maxInFlight?: number;
  /** Own calls awaiting an answer (default 65536); beyond: rejected -32003. */
  maxPending?: number;
  /** Elements of one incoming batch (default 4096); beyond: answered -32600. */
  maxBatch?: number;
  /** Incoming requests accepted per `rateWindow` ms (token bucket); beyond: answered -32004. Default: no limit. */
  rateLimit?: number;
  /** The rate limit's window in ms (default 1000); Infinity, a window that never refills: no rate limit. */
  rateWindow?: number;
  /**
   * One stream chunk's size in bytes (default 1,000,000; Infinity: none),
   * measured as docs/streams.md "Limits" says: a larger write rejects -32600
   * and sends nothing; a larger chunk received fails its stream with -32600.
   */
  maxStreamChunk?: number;
}

/** One side of rpc.handshake (docs/protocol.md, "Handshake"). */
export interface HandshakeOffer {
  /** "major.minor" (default "1.0"); different majors are refused with -32006. */
  version?: string;
  /**
   * Default ["streams", "progress", "drain"]. Add "metrics" to have answers
   * measured (docs/protocol.md, "Metrics"): offered in handshake(), or served
   * with the `handshake` option. "compression" is native-only
   * (docs/protocol.md, "Compression"): this build removes it from its offer.
   */
  capabilities?: string[];
  limits?: Record<string, unknown>;
  /** The serving side's session id. */
  session?: string;
}

/** What a handshake agreed on: the capabilities both sides support. */
export interface HandshakeAgreement {
  version: string;
  capabilities: string[];
  limits: Record<string, unknown>;
  session?: string;
}

/** A graceful drain, as announced ($/weft/drain, docs/protocol.md). */
export interface DrainNotice {
  reason: string;
  /** Expected downtime, ms (0: unknown). */
  downtime: number;
  /** When callers should try again, ms. */
  reconnectAfter: number;
}

/** Options of JSONRPCClient, JSONRPCServer and Peer. */
export interface EndpointOptions {
  /**
   * Default call timeout in ms (10000). 0 or Infinity: none. The constructor
   * throws a RangeError for a negative or NaN one, a TypeError for one that is not a number.
   */
  timeout?: number;
  limits?: EndpointLimits;
  /** Dropped or suspicious traffic. Without it, some kinds are logged with console.warn. */
  onDiagnostic?: (kind: DiagnosticKind, message: string) => void;
  /** Replaces the system clock (e.g. simulated time in tests). */
  clock?: Clock;
  /** The other side announced a drain: calls made from now on reject -32005 without being sent. */
  onDrain?: (notice: DrainNotice) => void;
  /** Serve rpc.handshake with this offer (docs/protocol.md, "Handshake"); off by default. */
  handshake?: HandshakeOffer;
  /**
   * true: values without `"jsonrpc": "2.0"` are ignored (channels shared with
   * other traffic); false: answered -32600 like any invalid message. Default:
   * true, but false over webSocketTransport, which carries only JSON-RPC.
   */
  ignoreForeign?: boolean;
}

/**
 * Method maps, optional: `JSONRPCClient<Api>`, `JSONRPCServer<Api>`,
 * `Peer<Remote, Local>` check method names, params and results against an
 * interface whose members are the methods as function signatures:
 *
 *     interface Api {
 *       add(params: { a: number; b: number }): number;
 *       ping(): string;                      // called without params
 *       log(params: { line: string }): void; // e.g. sent with notify()
 *     }
 *
 * A method's params are its one parameter (optional if the parameter is),
 * its result is its return type (a Promise's value). Without a map (the
 * default, `any`) every name and params are accepted, as before.
 */
export type MethodName<M> =
  IsAny<M> extends true ? string : { [K in keyof M]-?: M[K] extends AnyFunction ? K : never }[keyof M] & string;
/** The params a method of map `M` takes (undefined: none). */
export type MethodParams<M, K extends MethodName<M>> = IsAny<M> extends true ? any : ParamOf<Member<M, K>>;
/** What a method of map `M` answers. */
export type MethodResult<M, K extends MethodName<M>> = IsAny<M> extends true ? unknown : ResultOf<Member<M, K>>;

type AnyFunction = (...args: any[]) => any;
type IsAny<T> = 0 extends 1 & T ? true : false;
type Member<M, K> = K extends keyof M ? (M[K] extends AnyFunction ? M[K] : never) : never;
/** Only a map's names (never without a map). */
type TypedName<M> = IsAny<M> extends true ? never : MethodName<M>;
/** string without a map, never with one: the untyped overloads. */
type UntypedName<M> = IsAny<M> extends true ? string : never;
type ParamOf<F> = F extends (...args: infer A) => any
  ? A extends [] ? undefined : A extends [infer P] ? P : A extends [(infer P)?] ? P | undefined : Params
  : never;
/** The params argument of request()/notify(): absent, optional or required. */
type ParamsArg<F> = F extends (...args: infer A) => any
  ? A extends [] ? [params?: undefined] : A extends [infer P] ? [params: P] : A extends [(infer P)?] ? [params?: P] : [params?: Params]
  : never;
type ResultOf<F> = F extends (...args: any[]) => infer R ? Awaited<R> : never;
type TypedHandler<F> = (params: ParamOf<F>, context: HandlerContext) => ResultOf<F> | Promise<ResultOf<F>>;

/** One entry of batch(); with a method map, a method of it and its params. */
export type BatchEntry<M = any> = IsAny<M> extends true ? {
  method: string;
  params?: Params;
  /** true: sent as a notification; its promise resolves to undefined once the batch is handed to the transport, else rejects as its calls do (a notification the transport then cannot send is reported through onDiagnostic). */
  notification?: boolean;
  /** This call's metrics, as CallOptions.onMetrics (instead of the batch's). */
  onMetrics?: (metrics: ResponseMetrics) => void;
} : {
  [K in MethodName<M>]: {
    method: K; params?: ParamOf<Member<M, K>>; notification?: boolean;
    /** This call's metrics, as CallOptions.onMetrics (instead of the batch's). */
    onMetrics?: (metrics: ResponseMetrics) => void;
  };
}[MethodName<M>];

/** Counts for tests and monitoring: calls pending, requests in flight, values held for the core, heap bytes. */
export interface EndpointStats {
  pending: number;
  inFlight: number;
  calls: number;
  payloads: number;
  heap: number;
}

/**
 * What JSONRPCClient, JSONRPCServer and Peer share (not exported at run time:
 * a type only). `Remote`: the methods the other side serves (request, notify,
 * batch); `Local`: the methods this side serves (method, onNotify).
 */
declare class Endpoint<Remote = any, Local = any> {
  /** Resolves once the WebAssembly core is loaded (calls before that are queued). */
  readonly ready: Promise<void>;
  /** Calls `method`; resolves with its result, rejects with an `RPCError` (a TypeError or RangeError for bad options, a TypeError for a method name that is undefined, null or one String() throws on). */
  request<T = unknown>(method: UntypedName<Remote>, params?: Params, options?: CallOptions): Promise<T>;
  /** Calls a method of the `Remote` map, its params and result typed by it. */
  request<K extends TypedName<Remote>>(method: K, ...args: [...ParamsArg<Member<Remote, K>>, options?: CallOptions]): Promise<MethodResult<Remote, K>>;
  /** Sends a notification (no answer, no promise); throws a TypeError for a method name that is undefined, null or one String() throws on. */
  notify(method: UntypedName<Remote>, params?: Params): void;
  /** Sends a notification of the `Remote` map. */
  notify<K extends TypedName<Remote>>(method: K, ...args: ParamsArg<Member<Remote, K>>): void;
  /** A streamed call: the chunks the handler writes, as they arrive, with flow control. */
  stream<T = unknown>(method: UntypedName<Remote> | TypedName<Remote>, params?: Params, options?: StreamOptions): ChunkStream<T>;
  /** Sends one JSON-RPC batch; one promise per entry, in order. Throws, sending nothing, for bad options (a timeout that is negative or NaN: RangeError; one that is not a number, or a signal that is not an AbortSignal: TypeError), an entry that is not an object, or a method name that is missing, null or one String() throws on (TypeError). */
  batch(entries: ReadonlyArray<BatchEntry<Remote>>, options?: CallOptions): Promise<unknown>[];
  /**
   * Serves `name` (replacing an earlier handler); `spec` lets the core answer -32602 for bad
   * params. With a spec the handler gets params as an object keyed by name (positional params
   * named by the spec), each member the value that arrived, unconverted. A spec the core cannot read (an unknown type or member) throws a TypeError naming
   * what is wrong (before the core has loaded: the `BadParamSpec` diagnostic), and the method
   * then answers -32603 saying so rather than serve unchecked.
   */
  method<P = any, R = unknown>(name: UntypedName<Local>, handler: Handler<P, R>, spec?: ParamSpec): this;
  /** Serves a method of the `Local` map, its handler typed by it. */
  method<K extends TypedName<Local>>(name: K, handler: TypedHandler<Member<Local, K>>, spec?: ParamSpec): this;
  /**
   * Handles the notification `name`. One handler per name: this replaces a `method()` of the
   * same name (a request for `name` is then answered -32601), and `method()` replaces this.
   */
  onNotify<P = any>(name: UntypedName<Local>, handler: NotificationHandler<P>): this;
  /** Handles a notification of the `Local` map. */
  onNotify<K extends TypedName<Local>>(name: K, handler: NotificationHandler<ParamOf<Member<Local, K>>>): this;
  /** Sends rpc.handshake; resolves with what both sides agreed on (rejects -32006 on a version mismatch). `timeout`: as in CallOptions. */
  handshake(offer?: HandshakeOffer, options?: { timeout?: number }): Promise<HandshakeAgreement>;
  /** Starts a graceful drain: announces it, answers new requests -32005, finishes those in flight. */
  drain(notice?: Partial<DrainNotice>): void;
  /** Rejects every pending call (-32002), cancels requests being served, detaches the transport. */
  destroy(): void;
  /** Current counts (EndpointStats). */
  stats(): EndpointStats;
}
export type { Endpoint };

/**
 * Sends requests and notifications; ignores requests arriving on its transport. A frame its
 * transport cannot read (webSocketTransport: not JSON text, or binary) ends the connection,
 * as natively: pending calls reject -32700 at once, the transport is closed.
 */
export declare class JSONRPCClient<Remote = any> extends Endpoint<Remote, any> {
  constructor(transport: RPCTransport, options?: EndpointOptions | null);
}
/**
 * Serves methods and notifications; ignores responses arriving on its transport, so its own
 * request() and batch() calls, which could never be answered, reject at once (-32600).
 */
export declare class JSONRPCServer<Local = any> extends Endpoint<any, Local> {
  constructor(transport: RPCTransport, options?: EndpointOptions | null);
}
/** Client and server on one transport: `Remote` the other side's methods, `Local` this side's. */
export declare class Peer<Remote = any, Local = any> extends Endpoint<Remote, Local> {
  constructor(transport: RPCTransport, options?: EndpointOptions | null);
  /** Alias of request(). */
  call<T = unknown>(method: UntypedName<Remote>, params?: Params, options?: CallOptions): Promise<T>;
  call<K extends TypedName<Remote>>(method: K, ...args: [...ParamsArg<Member<Remote, K>>, options?: CallOptions]): Promise<MethodResult<Remote, K>>;
}

/**
 * Resolves when the WebAssembly core has loaded; rejects with an RPCError
 * (-32002) if it cannot be (e.g. weft.wasm not found: an esbuild bundle needs
 * it copied next to the bundle).
 */
export declare const ready: Promise<void>;
/** Bytes in use on the WebAssembly heap. */
export declare function heapUsed(): number;
/** The core's version, once loaded. */
export declare function coreVersion(): string | undefined;
