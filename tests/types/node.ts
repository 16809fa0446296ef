// Node: node:worker_threads Workers, MessagePorts and parentPort fit the transports.
import { Worker, MessageChannel, isMainThread } from 'node:worker_threads';
import { JSONRPCClient, JSONRPCServer, Peer, portTransport, workerTransport, selfTransport, webSocketTransport, ready } from 'weft-rpc';
import type { WebSocketLike } from 'weft-rpc';

export async function node(): Promise<void> {
  await ready;
  if (!isMainThread) {
    new JSONRPCServer(selfTransport()).method('add', ({ a, b }: { a: number; b: number }) => a + b);
    return;
  }
  const worker = new Worker(new URL('./worker.js', import.meta.url));
  const rpc = new Peer(workerTransport(worker));
  await rpc.request<number>('add', { a: 1, b: 2 });
  const { port1, port2 } = new MessageChannel();
  const server = new JSONRPCServer(portTransport(port1, { pack: true }));
  const client = new JSONRPCClient(portTransport(port2));
  server.method('echo', (p: unknown) => p);
  await client.request('echo', ['x']);
  await worker.terminate();
  // Node 20 has no global WebSocket; npm `ws` (untyped here) has its shape.
  const { default: WS } = (await import('ws' as string)) as { default: new (url: string) => WebSocketLike };
  const ws = new Peer(webSocketTransport(new WS('ws://127.0.0.1:8765/')));
  await ws.request('rpc.ping');
}
