// A static file server for tests/browser/bundle.test.mjs: serves one folder
// (the consumer project) on 127.0.0.1 with the types browsers insist on
// (application/wasm for streaming instantiation, text/javascript for modules),
// and records every request's path and status.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
};

/** Resolves with { url, log: [{ path, status }], close() }. */
export function serveFolder(root) {
  const log = [];
  const server = http.createServer((req, res) => {
    let rel;
    try { rel = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { rel = null; }
    const file = rel === null ? null : path.join(root, path.normalize(rel).replace(/^([\\/]*\.\.)+/, ''));
    let status = 404;
    let body = 'not found\n';
    let type = 'text/plain; charset=utf-8';
    if (file && file.startsWith(root)) {
      const f = fs.existsSync(file) && fs.statSync(file).isDirectory() ? path.join(file, 'index.html') : file;
      if (fs.existsSync(f) && fs.statSync(f).isFile()) {
        status = 200;
        body = fs.readFileSync(f);
        type = MIME[path.extname(f)] ?? 'application/octet-stream';
      }
    }
    log.push({ path: rel, status });
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        log,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}
