// Browser contenders (weft, npm json-rpc-2.0, comlink, raw postMessage floor)
// over a "link": { kind, post(msg), on(fn) -> off, weft(), comlink() }.
import * as weft from '/js/index.js';
import { JSONRPCClient as JrClient, JSONRPCServer as JrServer } from '/gen/json-rpc-2.0.mjs';
import * as Comlink from '/node_modules/comlink/dist/esm/comlink.mjs';

// 'weft' is what a user gets with default options on both ends (two weft
// endpoints pack after their first exchange, js/pack.js); 'weft (pack:false)'
// is the plain mode weft keeps with other libraries. ('weft (pack:true,
// opt-in)' is measured in Node only: it differs from the default only in the
// first exchange.) 'weft → json-rpc-2.0' is a weft client calling a
// json-rpc-2.0 server, 'json-rpc-2.0 → weft' the other way round: weft
// against a foreign peer, on either end.
export const CONTENDERS = ['raw', 'weft', 'weft (pack:true, opt-in)', 'weft (pack:false)', 'weft → json-rpc-2.0', 'json-rpc-2.0 → weft', 'json-rpc-2.0', 'comlink'];
const serverOf = (lib) => (lib.includes(' → ') ? lib.split(' → ')[1] : lib);
const clientOf = (lib) => (lib.includes(' → ') ? lib.split(' → ')[0] : lib);
const optsOf = (lib) => (lib === 'weft' ? undefined : { pack: lib === 'weft (pack:true, opt-in)' });

function listen(target, fn, source, origin) {
  const l = (ev) => { if ((!source || ev.source === source) && (!origin || ev.origin === origin)) fn(ev.data); };
  target.addEventListener('message', l);
  if (typeof target.start === 'function') target.start();
  return () => target.removeEventListener('message', l);
}

/** A MessagePort, a Worker (from the page), the worker's own scope, or a window (iframe/parent). */
export function portLink(port) {
  return { post: (m) => port.postMessage(m), on: (fn) => listen(port, fn), weft: (o) => weft.portTransport(port, o), comlink: () => port };
}
export function workerLink(w) {
  return { post: (m) => w.postMessage(m), on: (fn) => listen(w, fn), weft: (o) => weft.workerTransport(w, o), comlink: () => w };
}
export function selfLink() {
  return { post: (m) => self.postMessage(m), on: (fn) => listen(self, fn), weft: (o) => weft.selfTransport(o), comlink: () => self };
}
/** `origin` is the other window's origin: every contender posts with it as
 *  targetOrigin and accepts only messages from that window and origin. */
export function windowLink(target, origin = location.origin) {
  return {
    post: (m) => target.postMessage(m, origin),
    on: (fn) => listen(window, fn, target, origin),
    weft: (o) => weft.windowTransport(target, window, origin, o),
    comlink: () => Comlink.windowEndpoint(target, window, origin),
    allowedOrigins: [origin],
  };
}

const add = ({ a, b }) => a + b;

export async function serve(lib, link) {
  lib = serverOf(lib);
  switch (lib) {
    case 'raw': return link.on((d) => link.post(typeof d === 'string' ? d : d.a + d.b));
    case 'weft':
    case 'weft (pack:true, opt-in)':
    case 'weft (pack:false)': {
      await weft.ready;
      const s = new weft.JSONRPCServer(link.weft(optsOf(lib)));
      s.method('add', add);
      s.method('echo', ([x]) => x);
      return () => s.destroy();
    }
    case 'json-rpc-2.0': {
      const s = new JrServer();
      s.addMethod('add', add);
      s.addMethod('echo', ([x]) => x);
      return link.on((req) => { if (req && req.jsonrpc) s.receive(req).then((r) => { if (r) link.post(r); }); });
    }
    case 'comlink': Comlink.expose({ add, echo: (x) => x }, link.comlink(), link.allowedOrigins); return () => {};
    default: throw new Error('unknown contender ' + lib);
  }
}

export async function connect(lib, link, big) {
  lib = clientOf(lib);
  switch (lib) {
    case 'raw': {
      const q = [];
      let head = 0;
      const off = link.on((d) => { const r = q[head]; q[head++] = undefined; if (head === q.length) { q.length = 0; head = 0; } r(d); });
      const send = (m) => new Promise((r) => { q.push(r); link.post(m); });
      return { small: () => send({ a: 1, b: 2 }), large: () => send(big), close: off };
    }
    case 'weft':
    case 'weft (pack:true, opt-in)':
    case 'weft (pack:false)': {
      await weft.ready;
      const c = new weft.JSONRPCClient(link.weft(optsOf(lib)));
      return { small: () => c.request('add', { a: 1, b: 2 }), large: () => c.request('echo', [big]), close: () => c.destroy() };
    }
    case 'json-rpc-2.0': {
      const c = new JrClient((req) => { link.post(req); });
      const off = link.on((r) => { if (r && r.jsonrpc) c.receive(r); });
      return { small: () => c.request('add', { a: 1, b: 2 }), large: () => c.request('echo', [big]), close: off };
    }
    case 'comlink': {
      const api = Comlink.wrap(link.comlink());
      return { small: () => api.add({ a: 1, b: 2 }), large: () => api.echo(big), close: () => api[Comlink.releaseProxy]() };
    }
    default: throw new Error('unknown contender ' + lib);
  }
}
