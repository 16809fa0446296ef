// Method maps: JSONRPCClient<Api>, JSONRPCServer<Api>, Peer<Remote, Local>
// check names, params and results; untyped endpoints stay as they were.
import { JSONRPCClient, JSONRPCServer, Peer, portTransport } from 'weft-rpc';
import type { Endpoint, MethodName, MethodParams, MethodResult, BatchEntry, HandlerContext } from 'weft-rpc';
import { expect, type Equal } from './util.js';

interface Api {
  add(params: { a: number; b: number }): number;
  sum(params: number[]): number;
  ping(): string;
  greet(params?: { name: string }): string;
  fetchUser(params: { id: string }): Promise<{ id: string; name: string }>;
  log(params: { line: string }): void;
  readonly version: string;  // not a method: not callable
}
interface Ui {
  progress(params: { done: number }): void;
  confirm(params: { question: string }): boolean;
}

expect<Equal<MethodName<Api>, 'add' | 'sum' | 'ping' | 'greet' | 'fetchUser' | 'log'>>();
expect<Equal<MethodParams<Api, 'add'>, { a: number; b: number }>>();
expect<Equal<MethodParams<Api, 'ping'>, undefined>>();
expect<Equal<MethodResult<Api, 'fetchUser'>, { id: string; name: string }>>();
expect<Equal<MethodName<any>, string>>();

export async function typed(port1: MessagePort, port2: MessagePort): Promise<void> {
  const client = new JSONRPCClient<Api>(portTransport(port1));
  const n = await client.request('add', { a: 1, b: 2 });
  expect<Equal<typeof n, number>>();
  const total = await client.request('sum', [1, 2, 3], { timeout: 100 });
  expect<Equal<typeof total, number>>();
  const pong = await client.request('ping');
  expect<Equal<typeof pong, string>>();
  await client.request('ping', undefined, { signal: AbortSignal.timeout(10) });
  await client.request('greet');
  await client.request('greet', { name: 'x' });
  const user = await client.request('fetchUser', { id: '1' });
  expect<Equal<typeof user, { id: string; name: string }>>();
  client.notify('log', { line: 'hello' });
  client.notify('ping');
  const entries: BatchEntry<Api>[] = [{ method: 'add', params: { a: 1, b: 2 } }, { method: 'log', params: { line: 'x' }, notification: true }];
  client.batch(entries);
  client.batch([{ method: 'ping' }]);
  client.batch([{ method: 'ping', onMetrics: (m) => { void m.response_size; } }]);

  const server = new JSONRPCServer<Api>(portTransport(port2));
  server
    .method('add', ({ a, b }) => a + b)
    .method('sum', (xs) => xs.reduce((s, x) => s + x, 0))
    .method('ping', (params, ctx: HandlerContext) => {
      expect<Equal<typeof params, undefined>>();
      return ctx.method;
    })
    .method('greet', (p) => `hello ${p?.name ?? 'you'}`)
    .method('fetchUser', async ({ id }) => ({ id, name: 'N' }))
    .method('log', () => {})
    .onNotify('log', ({ line }) => { console.log(line); });

  // Peer: calls go to Remote, handlers serve Local; the two ends mirror each other.
  const app = new Peer<Ui, Api>(portTransport(port1));
  const ui = new Peer<Api, Ui>(portTransport(port2));
  app.method('add', ({ a, b }) => a + b);
  ui.method('confirm', ({ question }) => question.length > 0);
  const yes = await app.call('confirm', { question: 'ok?' });
  expect<Equal<typeof yes, boolean>>();
  const three = await ui.request('add', { a: 1, b: 2 });
  expect<Equal<typeof three, number>>();
  app.notify('progress', { done: 1 });

  // A typed endpoint is still an Endpoint, and an untyped one still takes any name.
  const all: Endpoint[] = [client, server, app, ui];
  const untyped = new JSONRPCClient(portTransport(port1));
  const x = await untyped.request<{ ok: boolean }>('whatever', { any: 'thing' });
  expect<Equal<typeof x, { ok: boolean }>>();
  const loose: JSONRPCClient = client;  // typed → untyped is allowed
  void [all, loose];
}
