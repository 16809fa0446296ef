// The Node contenders: a server side and a client side for each library, over
// an endpoint that is either a MessagePort (EventTarget: MessageChannel port,
// worker parentPort) or a worker_threads Worker (EventEmitter).
// Small call: add({a:1,b:2}) -> 3. Large call: echo of a 64 KiB string.
// weft's and json-rpc-2.0's servers also have fail, which throws the
// library's error with code 5, "five" (server-cost.mjs --answer error).
import * as weft from '../../js/index.js';
import { JSONRPCClient as JrClient, JSONRPCErrorException, JSONRPCServer as JrServer } from 'json-rpc-2.0';
import * as Comlink from 'comlink/dist/esm/comlink.mjs';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { createBirpc } from 'birpc';

// 'weft' is what a user gets with default options on both ends; 'weft
// (pack:true, opt-in)' packs from the first message; 'weft (pack:false)' is
// the plain JSON-RPC mode weft keeps with any other peer.
// 'raw (JSON-RPC objects)' is a second floor, not a peer: the same ping-pong
// carrying JSON-RPC-shaped objects and matching answers by order, no library —
// what cloning the envelope costs by itself.
// 'wasm floor' (a server only, for server-cost.mjs) is a third: the least a
// core of weft's shape, WebAssembly behind JavaScript marshalling, can do
// per request (wasm-floor.mjs).
// 'weft → json-rpc-2.0' is a weft client (default options) calling a
// json-rpc-2.0 server, 'json-rpc-2.0 → weft' the other way round: what weft
// costs against a foreign peer, on either end.
export const CONTENDERS = ['raw', 'raw (JSON-RPC objects)', 'weft', 'weft (pack:true, opt-in)', 'weft (pack:false)', 'weft → json-rpc-2.0', 'json-rpc-2.0 → weft', 'json-rpc-2.0', 'comlink', 'birpc'];
const serverOf = (lib) => (lib.includes(' → ') ? lib.split(' → ')[1] : lib);
const clientOf = (lib) => (lib.includes(' → ') ? lib.split(' → ')[0] : lib);
export const WEFT_ROWS = ['weft', 'weft (pack:true, opt-in)', 'weft (pack:false)'];
const packOf = (lib) => (lib === 'weft' ? undefined : { pack: lib === 'weft (pack:true, opt-in)' });

const isEmitter = (ep) => typeof ep.addEventListener !== 'function';

function onMsg(ep, fn) {
  if (isEmitter(ep)) { ep.on('message', fn); return () => ep.off('message', fn); }
  const l = (ev) => fn(ev.data);
  ep.addEventListener('message', l);
  if (typeof ep.start === 'function') ep.start();
  return () => ep.removeEventListener('message', l);
}

const add = ({ a, b }) => a + b;

/** Serve `lib` on `ep`. `inWorker`: ep is the worker's parentPort. */
export async function serve(lib, ep, inWorker = false) {
  lib = serverOf(lib);
  switch (lib) {
    case 'raw': {
      // The floor: postMessage ping-pong, no envelope.
      const off = onMsg(ep, (d) => ep.postMessage(typeof d === 'string' ? d : d.a + d.b));
      return () => off();
    }
    case 'wasm floor': {
      // Not a peer: the least a core behind marshalling costs (wasm-floor.mjs).
      const { serveFloor } = await import('./wasm-floor.mjs');
      return serveFloor(ep, { add, echo: ([s1]) => s1 });
    }
    case 'raw (JSON-RPC objects)': {
      const off = onMsg(ep, (d) => ep.postMessage(d.method === 'echo'
        ? { jsonrpc: '2.0', result: d.params[0], id: d.id }
        : { jsonrpc: '2.0', result: d.params.a + d.params.b, id: d.id }));
      return () => off();
    }
    case 'weft':
    case 'weft (pack:true, opt-in)':
    case 'weft (pack:false)': {
      await weft.ready;
      const o = packOf(lib);
      const s = new weft.JSONRPCServer(inWorker ? weft.selfTransport(o) : weft.portTransport(ep, o));
      s.method('add', add);
      s.method('echo', ([s1]) => s1);
      s.method('fail', () => { throw new weft.RPCError(5, 'five'); });
      return () => s.destroy();
    }
    case 'json-rpc-2.0': {
      // Its default errorListener logs every error a method throws (fail).
      const s = new JrServer({ errorListener: () => {} });
      s.addMethod('add', add);
      s.addMethod('echo', ([s1]) => s1);
      s.addMethod('fail', () => { throw new JSONRPCErrorException('five', 5); });
      const off = onMsg(ep, (req) => { s.receive(req).then((r) => { if (r) ep.postMessage(r); }); });
      return () => off();
    }
    case 'comlink': {
      Comlink.expose({ add, echo: (s1) => s1 }, isEmitter(ep) || inWorker ? nodeEndpoint(ep) : ep);
      return () => {};
    }
    case 'birpc': {
      let off = () => {};
      createBirpc({ add, echo: (s1) => s1 }, {
        post: (d) => ep.postMessage(d),
        on: (fn) => { off = onMsg(ep, fn); },
      });
      return () => off();
    }
    default: throw new Error('unknown contender ' + lib);
  }
}

/** A client for `lib` on `ep`: { small(), large(), close() }. */
export async function connect(lib, ep, big) {
  lib = clientOf(lib);
  switch (lib) {
    case 'raw': {
      const q = [];
      let head = 0;
      const off = onMsg(ep, (d) => { const r = q[head]; q[head++] = undefined; if (head > 4096 && head === q.length) { q.length = 0; head = 0; } r(d); });
      const send = (m) => new Promise((r) => { q.push(r); ep.postMessage(m); });
      const small = () => send({ a: 1, b: 2 });
      const large = () => send(big);
      return { small, large, close: off };
    }
    case 'raw (JSON-RPC objects)': {
      const q = [];
      let head = 0;
      let id = 0;
      const off = onMsg(ep, (d) => { const r = q[head]; q[head++] = undefined; if (head > 4096 && head === q.length) { q.length = 0; head = 0; } r(d.result); });
      const send = (method, params) => new Promise((r) => { q.push(r); ep.postMessage({ jsonrpc: '2.0', method, params, id: ++id }); });
      return { small: () => send('add', { a: 1, b: 2 }), large: () => send('echo', [big]), close: off };
    }
    case 'weft':
    case 'weft (pack:true, opt-in)':
    case 'weft (pack:false)': {
      await weft.ready;
      const o = packOf(lib);
      const t = isEmitter(ep) ? weft.workerTransport(ep, o) : weft.portTransport(ep, o);
      const c = new weft.JSONRPCClient(t);
      return {
        small: () => c.request('add', { a: 1, b: 2 }),
        large: () => c.request('echo', [big]),
        close: () => c.destroy(),
        client: c,
      };
    }
    case 'json-rpc-2.0': {
      const c = new JrClient((req) => { ep.postMessage(req); });
      const off = onMsg(ep, (r) => c.receive(r));
      return {
        small: () => c.request('add', { a: 1, b: 2 }),
        large: () => c.request('echo', [big]),
        close: off,
      };
    }
    case 'comlink': {
      const api = Comlink.wrap(isEmitter(ep) ? nodeEndpoint(ep) : ep);
      return {
        small: () => api.add({ a: 1, b: 2 }),
        large: () => api.echo(big),
        close: () => api[Comlink.releaseProxy](),
      };
    }
    case 'birpc': {
      let off = () => {};
      const rpc = createBirpc({}, {
        post: (d) => ep.postMessage(d),
        on: (fn) => { off = onMsg(ep, fn); },
        timeout: 120000,
      });
      return {
        small: () => rpc.add({ a: 1, b: 2 }),
        large: () => rpc.echo(big),
        close: () => { off(); rpc.$close?.(); },
      };
    }
    default: throw new Error('unknown contender ' + lib);
  }
}
