// What every browser test starts with: Debian's Chromium, headless, on a
// fresh profile; and a page server for tests that write their own pages.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * Launches Chromium on a profile of its own (playwright passes it as
 * --user-data-dir); `close()` ends it and removes the profile. `options` go
 * to launchPersistentContext (a viewport, say).
 */
export async function launchChromium(options = {}) {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} missing: apt-get install -y chromium`);
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-chromium-'));
  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
    ...options,
  });
  browser.closeAll = async () => {
    try { await browser.close(); } catch { /* already gone */ }
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return browser;
}

/**
 * An HTTP server (not yet listening) for `pages` (path → HTML text) and the
 * package's own files under /js/ and /dist/, as a web developer serves them.
 * Fails at once if the WebAssembly is not built.
 */
export function pageServer(pages) {
  assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'weft.wasm')), 'dist/weft.wasm missing: run bash scripts/build-wasm.sh');
  return http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x').pathname;
    let body = pages[url];
    let type = 'text/html; charset=utf-8';
    if (body === undefined && /^\/(js|dist)\/[\w/.-]+$/.test(url) && !url.includes('..')) {
      const f = path.join(ROOT, url);
      if (fs.existsSync(f) && fs.statSync(f).isFile()) {
        body = fs.readFileSync(f);
        type = url.endsWith('.wasm') ? 'application/wasm' : 'text/javascript; charset=utf-8';
      }
    }
    if (body === undefined) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
  });
}

/** Stops `server` (a pageServer), open connections included. */
export async function stopServer(server) {
  if (!server) return;
  server.closeAllConnections?.();
  await new Promise((r) => server.close(() => r()));
}
