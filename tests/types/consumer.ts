// The whole public API of weft-rpc as an untyped (no method map) consumer
// uses it, under --strict: every line must compile, and the inferred types are
// checked with expect<Equal<…>>. Run by tests/js/types.test.mjs.
import {
  JSONRPCClient, JSONRPCServer, Peer, RPCError, ErrorCode, ready, heapUsed, coreVersion, asMessage,
  windowTransport, portTransport, workerTransport, selfTransport, webSocketTransport,
} from 'weft-rpc';
import type {
  Endpoint, EndpointOptions, EndpointStats, EndpointLimits, CallOptions, HandlerContext, Handler,
  NotificationHandler, Params, ParamSpec, BatchEntry, Clock, DiagnosticKind, RPCTransport,
  PostMessageTransport, PostMessageTransportOptions, JSONRPCMessage, JSONRPCRequest, JSONRPCNotification,
  JSONRPCResponse, JSONRPCSuccessResponse, JSONRPCErrorResponse, PortLike, WorkerLike, PostTarget, MessageSource, WebSocketLike, ConnectionTransport,
  ResponseMetrics, JSONRPCTuple, WireMessage,
} from 'weft-rpc';
import { expect, type Equal } from './util.js';

export async function untyped(): Promise<void> {
  // -- the module -------------------------------------------------------------
  const loaded: Promise<void> = ready;
  await loaded;
  expect<Equal<ReturnType<typeof heapUsed>, number>>();
  expect<Equal<ReturnType<typeof coreVersion>, string | undefined>>();

  // -- errors -----------------------------------------------------------------
  expect<Equal<typeof ErrorCode.Timeout, -32001>>();
  const codes: number[] = [ErrorCode.ParseError, ErrorCode.InvalidRequest, ErrorCode.MethodNotFound,
    ErrorCode.InvalidParams, ErrorCode.InternalError, ErrorCode.ServerError, ErrorCode.Timeout,
    ErrorCode.Closed, ErrorCode.Overloaded, ErrorCode.RequestCancelled];
  const err = new RPCError(ErrorCode.InvalidParams, 'bad', { field: 'a' });
  const e2 = new RPCError(-32000, 'plain');
  const asError: Error = err;
  expect<Equal<typeof err.code, number>>();
  expect<Equal<typeof err.data, unknown>>();
  const why: unknown = e2.cause;
  void [codes, asError, why];

  // -- transports ---------------------------------------------------------------
  const { port1, port2 } = new MessageChannel();
  const pack: PostMessageTransportOptions = { pack: 'auto' };
  const t1: PostMessageTransport = portTransport(port1, { pack: true });
  const t2 = portTransport(port2, pack);
  t2.onSendError((message: WireMessage, error: unknown) => { void [message, error]; });
  const sendsTuples: boolean = t2.tuples;
  const tuple: JSONRPCTuple = [0n, 1, 'add', [1, 2]];
  const shown: JSONRPCMessage | JSONRPCMessage[] = asMessage(tuple);
  void [sendsTuples, tuple, shown];
  t2.onClose(() => {});
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const wt: PostMessageTransport = workerTransport(worker, { pack: false });
  const st: RPCTransport = selfTransport();
  const frame = document.querySelector('iframe')?.contentWindow;
  if (frame) {
    windowTransport(frame, window, 'https://preview.example');
    windowTransport(frame, window, ['https://a.example', 'https://b.example'] as const, { pack: true });
    windowTransport(window.parent);
    windowTransport(window.parent, undefined, 'https://app.example');
  }
  const ports: PortLike[] = [port1];
  const workers: WorkerLike[] = [worker];
  const targets: PostTarget[] = [window];
  const sources: MessageSource[] = [window];
  // The browser's WebSocket fits webSocketTransport (npm `ws` does too: tests/types/node.ts).
  const socket = new WebSocket('ws://127.0.0.1:8765/');
  const wst: ConnectionTransport = webSocketTransport(socket);
  wst.onClose(() => {});
  const sockets: WebSocketLike[] = [socket];
  void [wt, st, ports, workers, targets, sources, wst, sockets];

  // A transport of one's own: send/onMessage, destroy/onClose/onSendError
  // optional; without `tuples` it is sent JSON-RPC messages only.
  const custom: RPCTransport = {
    send(message) { const m: WireMessage = message; void m; },
    onMessage(handler) { handler({ jsonrpc: '2.0', method: 'x' }); },
  };

  // -- endpoints and options ------------------------------------------------------
  const fake = { t: 0 };
  const clock: Clock<number> = {
    now: () => fake.t,
    setTimeout: (fn, ms) => { void [fn, ms]; return 1; },
    clearTimeout: (h: number) => { void h; },
  };
  const limits: EndpointLimits = { maxInFlight: 100, maxPending: 1000, maxBatch: 50 };
  const options: EndpointOptions = {
    timeout: 5000,
    limits,
    onDiagnostic: (kind: DiagnosticKind, message: string) => { if (kind === 'UnknownResponse') console.log(message); },
    clock,
    ignoreForeign: false,
  };
  // An onDiagnostic written against plain strings still fits.
  const loose: EndpointOptions = { onDiagnostic: (kind: string, message: string) => { void [kind, message]; } };
  const client = new JSONRPCClient(t1, options);
  const server = new JSONRPCServer(t2, loose);
  const peer = new Peer(custom);
  const peer2 = new Peer(custom, { clock: { now: () => 0, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h) } });
  const endpoints: Endpoint[] = [client, server, peer, peer2];

  await client.ready;

  // request: result unknown unless given; params an object or an array; options.
  const r1 = await client.request('add', { a: 1, b: 2 });
  expect<Equal<typeof r1, unknown>>();
  const r2 = await client.request<number>('add', [1, 2], { timeout: 1000 });
  expect<Equal<typeof r2, number>>();
  const r4: number = await client.request('add', [1, 2]);  // T inferred from the annotation, as before
  void r4;
  const ac = new AbortController();
  await client.request('slow', undefined, { signal: ac.signal, timeout: 0 });
  await client.request('ping');
  interface AddParams { a: number; b: number }  // an interface (no index signature) is accepted
  const ap: AddParams = { a: 1, b: 2 };
  await client.request('add', ap);
  await client.request('sum', [1, 2, 3] as const);
  const call: CallOptions = { timeout: Infinity, signal: ac.signal };
  const r3: string = await peer.call<string>('echo', { s: 'x' }, call);
  void r3;
  client.notify('log', { line: 'x' });
  client.notify('tick');

  // batch: one promise per entry, notifications included.
  const entries: BatchEntry[] = [{ method: 'add', params: [1, 2] }, { method: 'log', params: { x: 1 }, notification: true }];
  const out = client.batch(entries, { timeout: 100 });
  expect<Equal<typeof out, Promise<unknown>[]>>();
  client.batch([{ method: 'ping' }] as const);

  // metrics (docs/protocol.md "Metrics"): per call, per batch entry, on errors and streams.
  const agreed = await client.handshake({ capabilities: ['streams', 'metrics'] });
  void agreed.capabilities;
  const onMetrics = (m: ResponseMetrics): void => {
    expect<Equal<typeof m.processing_time_us, number>>();
    expect<Equal<typeof m.response_size, number>>();
  };
  await client.request('add', [1, 2], { onMetrics });
  client.batch([{ method: 'add', params: [1, 2], onMetrics }, { method: 'ping' }], { onMetrics });
  const metered = client.stream('count', { n: 2 }, { onMetrics });
  expect<Equal<typeof metered.metrics, ResponseMetrics | undefined>>();
  const failed = new RPCError(-32000, 'x');
  expect<Equal<typeof failed.metrics, ResponseMetrics | undefined>>();
  const chunkLimit: EndpointLimits = { maxStreamChunk: Infinity };
  void chunkLimit;

  // serving: handlers get params and { signal, method }; method()/onNotify() chain.
  const add: Handler<{ a: number; b: number }, number> = ({ a, b }) => a + b;
  server
    .method('add', add)
    .method('sub', (p: [number, number]) => p[0] - p[1])
    .method('anything', (params, ctx: HandlerContext) => {
      expect<Equal<typeof params, any>>();
      const s: AbortSignal = ctx.signal;
      const m: string = ctx.method;
      void [s, m];
      return Promise.resolve({ ok: true });
    })
    .method('fail', () => { throw new RPCError(-32000, 'no', { why: 1 }); })
    .onNotify('log', (p: { line: string }) => { console.log(p.line); });
  const spec: ParamSpec = {
    params: ['a', { name: 'b', type: 'integer', required: true }, { name: 'c' }],
    byPosition: true, byName: true, allowExtra: false,
  };
  server.method('spec', add, spec);
  const nh: NotificationHandler = async () => {};
  peer.onNotify('n', nh);

  const stats: EndpointStats = client.stats();
  const { pending, inFlight, calls, payloads, heap } = stats;
  void [pending, inFlight, calls, payloads, heap];
  for (const ep of endpoints) ep.destroy();

  // -- message types ---------------------------------------------------------------
  const req: JSONRPCRequest = { jsonrpc: '2.0', method: 'add', params: [1, 2], id: 1 };
  const note: JSONRPCNotification = { jsonrpc: '2.0', method: 'log' };
  const ok: JSONRPCSuccessResponse = { jsonrpc: '2.0', result: 3, id: 1 };
  const bad: JSONRPCErrorResponse = { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: null };
  const res: JSONRPCResponse[] = [ok, bad];
  const params: Params[] = [{}, [], undefined];
  void [req, note, res, params];
}
