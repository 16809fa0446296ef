// The bench's page in headless Chromium, for the tools that drive it
// directly (blocks.mjs, server-cost.mjs): { page, close() }. The page is
// served by server.mjs (cross-origin isolated, with its cross-site frame
// origin) and ready when window.benchReady is set.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from './server.mjs';

export async function openBenchPage(tag) {
  const { chromium } = await import('playwright-core');
  const server = await startBenchServer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `weft-bench-${tag}-`));
  const close = async (browser) => {
    await browser?.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  let browser;
  try {
    browser = await chromium.launchPersistentContext(dir, {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    const page = browser.pages()[0] ?? await browser.newPage();
    page.on('pageerror', (e) => console.log('page error:', e.message));
    await page.goto(`${server.url}/bench/browser/page.html?frame=${encodeURIComponent(server.crossUrl)}`, { waitUntil: 'load' });
    await page.waitForFunction(() => window.benchReady === true);
    return { page, close: () => close(browser) };
  } catch (e) {
    await close(browser);
    throw e;
  }
}
