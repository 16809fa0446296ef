// Wrong usages: each line after `// @ts-expect-error` must NOT compile (tsc
// fails with "Unused '@ts-expect-error' directive" if one does).
import { JSONRPCClient, JSONRPCServer, Peer, RPCError, ErrorCode, portTransport, workerTransport, windowTransport, webSocketTransport } from 'weft-rpc';
import type { EndpointOptions, ParamSpec } from 'weft-rpc';

interface Api {
  add(params: { a: number; b: number }): number;
  ping(): string;
  greet(params?: { name: string }): string;
}

export async function wrong(port: MessagePort): Promise<void> {
  const t = portTransport(port);
  const client = new JSONRPCClient(t);
  const server = new JSONRPCServer(t);

  // -- untyped endpoints -------------------------------------------------------
  // @ts-expect-error params must be an object or an array, not a number
  await client.request('add', 5);
  // @ts-expect-error not a string either
  client.notify('log', 'text');
  // @ts-expect-error the method name is a string
  await client.request(42);
  // @ts-expect-error an unknown call option
  await client.request('add', [], { timeut: 5 });
  // @ts-expect-error a handler is a function
  server.method('add', 42);
  // @ts-expect-error batch entries need a method
  client.batch([{ params: [] }]);
  // @ts-expect-error ErrorCode is read-only
  ErrorCode.Timeout = 1;
  // @ts-expect-error RPCError needs a numeric code
  new RPCError('x', 'message');
  // @ts-expect-error pack is true, false or 'auto'
  portTransport(port, { pack: 'always' });
  // @ts-expect-error a transport needs send and onMessage
  new JSONRPCClient({ send() {} });
  // @ts-expect-error not a worker
  workerTransport({});
  // @ts-expect-error not a WebSocket
  webSocketTransport({ send() {} });
  // @ts-expect-error origins are strings
  windowTransport(window.parent, window, 42);
  // @ts-expect-error limits are numbers
  const o1: EndpointOptions = { limits: { maxPending: 'many' } };
  // @ts-expect-error onDiagnostic gets (kind, message) strings
  const o2: EndpointOptions = { onDiagnostic: (kind: number) => kind };
  // @ts-expect-error a clock needs now/setTimeout/clearTimeout
  const o3: EndpointOptions = { clock: { now: () => 0 } };
  // @ts-expect-error an unknown parameter type
  const s1: ParamSpec = { params: [{ name: 'a', type: 'int' }] };
  // @ts-expect-error stats() fields are numbers
  const p: string = client.stats().pending;
  void [o1, o2, o3, s1, p];

  // -- with a method map ---------------------------------------------------------
  const typed = new JSONRPCClient<Api>(t);
  // @ts-expect-error not a method of Api
  await typed.request('mul', { a: 1, b: 2 });
  // @ts-expect-error wrong params
  await typed.request('add', { a: 1, b: '2' });
  // @ts-expect-error missing params (add requires them)
  await typed.request('add');
  // @ts-expect-error ping takes no params
  await typed.request('ping', { x: 1 });
  // @ts-expect-error greet's params are { name }
  await typed.request('greet', { nam: 'x' });
  // @ts-expect-error the result is a number
  const s: string = await typed.request('add', { a: 1, b: 2 });
  // @ts-expect-error not a method of Api
  typed.notify('mul', { a: 1, b: 2 });
  // @ts-expect-error a batch entry names a method of Api
  typed.batch([{ method: 'mul' }]);
  // @ts-expect-error a batch entry's params match its method
  typed.batch([{ method: 'add', params: { a: 'x', b: 2 } }]);
  const typedServer = new JSONRPCServer<Api>(t);
  // @ts-expect-error not a method of Api
  typedServer.method('mul', () => 0);
  // @ts-expect-error add answers a number
  typedServer.method('add', ({ a, b }) => `${a + b}`);
  // @ts-expect-error params are { a, b }
  typedServer.method('add', (p: { c: number }) => p.c);
  // @ts-expect-error async handlers too: add answers a number
  typedServer.method('add', async () => 'x');
  const peer = new Peer<Api, { local(): boolean }>(t);
  // @ts-expect-error Peer: calls go to Remote (Api), not Local
  await peer.call('local');
  // @ts-expect-error Peer: serves Local, not Api
  peer.method('add', () => 1);
  void s;
}
