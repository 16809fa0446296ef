// A tiny read-only loopback server for the browser rows: the page, worker and
// iframe under /bench/browser/, weft (/js/, /dist/), comlink's ESM build, and
// npm json-rpc-2.0 (CommonJS) wrapped into one ES module at /gen/json-rpc-2.0.mjs.
// Two listeners serve the same files: the page's origin http://127.0.0.1:P and,
// for the cross-site iframe, http://localhost:Q (another host, so another site:
// Chromium puts that frame in its own renderer process).
// With { control: true } the page's origin also serves /ctl/, the channel a
// page opened with ?driver=http takes its calls from (page.mjs), for a
// Chromium without a debugging connection (open.mjs).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ALLOWED = ['/js/', '/dist/', '/bench/browser/', '/bench/lib/', '/node_modules/comlink/dist/esm/'];
const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.map': 'application/json' };

function jsonRpc2Module() {
  const dir = path.join(ROOT, 'node_modules/json-rpc-2.0/dist');
  const mods = fs.readdirSync(dir).filter((f) => f.endsWith('.js'))
    .map((f) => `${JSON.stringify('./' + f.slice(0, -3))}: function (module, exports, require) {\n${fs.readFileSync(path.join(dir, f), 'utf8')}\n}`);
  return `// generated from node_modules/json-rpc-2.0/dist by bench/browser/server.mjs
const defs = {${mods.join(',\n')}};
const cache = {};
function req(name) {
  name = name.replace(/\\.js$/, '');
  if (cache[name]) return cache[name].exports;
  const module = { exports: {} };
  cache[name] = module;
  defs[name].call(module.exports, module, module.exports, req);
  return module.exports;
}
const m = req('./index');
export const { JSONRPCClient, JSONRPCServer, JSONRPCServerAndClient } = m;
export default m;
`;
}

function handler(gen, corp, control) {
  return (req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (control && p.startsWith('/ctl/')) return control.serve(p, req, res);
    const send = (code, type, body) => { res.writeHead(code, {
      'Content-Type': type,
      'Cache-Control': 'no-store',
      // Cross-origin isolation: performance.now() gets 5 µs resolution instead of 100 µs.
      // A COEP require-corp page may embed the cross-site frame only if the frame's
      // response opts in (CORP cross-origin) and is itself COEP require-corp.
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': corp,
    }); res.end(body); };
    if (p === '/gen/json-rpc-2.0.mjs') return send(200, 'text/javascript', gen);
    if (p.includes('..') || !ALLOWED.some((a) => p.startsWith(a))) return send(404, 'text/plain', 'not found\n');
    fs.readFile(path.join(ROOT, p), (err, data) => {
      if (err) return send(404, 'text/plain', 'not found\n');
      send(200, MIME[path.extname(p)] ?? 'application/octet-stream', data);
    });
  };
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

// Calls for the page, one at a time: GET /ctl/next answers the next one
// ({ id, name, args }) when there is one; POST /ctl/done brings back
// { id, value } or { id, error }.
function controlChannel() {
  const queue = [];
  const waiting = new Map();  // id -> { resolve, reject }
  let poll = null;
  let next = 1;
  const hand = () => {
    if (!poll || !queue.length) return;
    const res = poll;
    poll = null;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(queue.shift()));
  };
  return {
    call(name, args) {
      const id = next++;
      queue.push({ id, name, args });
      hand();
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    serve(p, req, res) {
      if (p === '/ctl/next') { poll = res; hand(); return; }
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        res.writeHead(204).end();
        const m = JSON.parse(body);
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        if ('error' in m) w?.reject(new Error(`page: ${m.error}`)); else w?.resolve(m.value);
      });
    },
    close() {
      poll?.destroy();
      for (const w of waiting.values()) w.reject(new Error('bench server closed'));
    },
  };
}

/**
 * { url: the page's origin, crossUrl: the cross-site frame's origin, close(),
 *   call(name, ...args) with { control: true }: window[name](...args) in the
 *   page opened with ?driver=http, its JSON result }
 */
export async function startBenchServer({ control = false } = {}) {
  const gen = jsonRpc2Module();
  const ctl = control ? controlChannel() : null;
  const main = http.createServer(handler(gen, 'same-origin', ctl));
  const cross = http.createServer(handler(gen, 'cross-origin'));
  const [p1, p2] = [await listen(main), await listen(cross)];
  // localhost resolves to loopback inside Chromium; the listener is on 127.0.0.1.
  return {
    url: `http://127.0.0.1:${p1}`,
    crossUrl: `http://localhost:${p2}`,
    call: ctl ? (name, ...args) => ctl.call(name, args) : undefined,
    close: () => {
      ctl?.close();
      return Promise.all([main, cross].map((s) => new Promise((r) => { s.close(r); s.closeAllConnections?.(); })));
    },
  };
}
