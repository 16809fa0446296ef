// A tiny read-only loopback server for the browser rows: the page, worker and
// iframe under /bench/browser/, weft (/js/, /dist/), comlink's ESM build, and
// npm json-rpc-2.0 (CommonJS) wrapped into one ES module at /gen/json-rpc-2.0.mjs.
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

export function startBenchServer() {
  const gen = jsonRpc2Module();
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const send = (code, type, body) => { res.writeHead(code, {
      'Content-Type': type,
      'Cache-Control': 'no-store',
      // Cross-origin isolation: performance.now() gets 5 µs resolution instead of 100 µs.
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
    }); res.end(body); };
    if (p === '/gen/json-rpc-2.0.mjs') return send(200, 'text/javascript', gen);
    if (p.includes('..') || !ALLOWED.some((a) => p.startsWith(a))) return send(404, 'text/plain', 'not found\n');
    fs.readFile(path.join(ROOT, p), (err, data) => {
      if (err) return send(404, 'text/plain', 'not found\n');
      send(200, MIME[path.extname(p)] ?? 'application/octet-stream', data);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}
