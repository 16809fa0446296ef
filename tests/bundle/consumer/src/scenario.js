// What every build of the consumer runs, taking the weft-rpc namespace so the
// same code serves the bundled entries ('weft-rpc') and the plain pages (a
// path into node_modules).

/** One real call: a JSONRPCServer on one end of a MessageChannel answers `add`. */
export async function addOverChannel(weft) {
  const { port1, port2 } = new MessageChannel();
  const server = new weft.JSONRPCServer(weft.portTransport(port1));
  server.method('add', ({ a, b }) => a + b);
  const client = new weft.JSONRPCClient(weft.portTransport(port2), { timeout: 5000 });
  try {
    const sum = await client.request('add', { a: 2, b: 40 });
    return { sum, version: weft.coreVersion() };
  } finally {
    client.destroy();
    server.destroy();
  }
}

/** In a module worker: serves `add`, and `selfCheck` (the worker's own addOverChannel). */
export function serveWorker(weft) {
  const server = new weft.JSONRPCServer(weft.selfTransport());
  server.method('add', ({ a, b }) => a + b);
  server.method('selfCheck', () => addOverChannel(weft));
}

/**
 * In the page: its own addOverChannel, then the worker's, then a call across
 * (page → worker). The outcome lands in globalThis.__weftResult.
 */
export async function runPage(weft, worker) {
  const out = { page: null, worker: null, cross: null, error: null };
  try {
    out.page = await addOverChannel(weft);
    const rpc = new weft.JSONRPCClient(weft.workerTransport(worker), { timeout: 10000 });
    out.worker = await rpc.request('selfCheck');
    out.cross = await rpc.request('add', { a: 20, b: 3 });
    rpc.destroy();
    worker.terminate();
  } catch (e) {
    out.error = String(e?.stack ?? e);
  }
  globalThis.__weftResult = out;
}
