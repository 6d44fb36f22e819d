// Brings every page of a browser to front in turn, HOLD_MS each (default
// 3000), then disconnects: the memory part's "each page seen once" case,
// where Chromium keeps the frames of tabs it showed. Not a test.
// Usage: node bench/scale/front-each.mjs WS_ENDPOINT
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(repo, 'tests/cdp/package.json'));
const puppeteer = require('puppeteer-core');

const ws = process.argv[2];
if (!ws) {
  console.error('usage: node bench/scale/front-each.mjs WS_ENDPOINT');
  process.exit(2);
}
const hold = Number(process.env.HOLD_MS || 3000);
const browser = await puppeteer.connect({ browserWSEndpoint: ws, defaultViewport: null });
const pages = await browser.pages();
for (const page of pages) {
  await page.bringToFront();
  await new Promise((resolve) => setTimeout(resolve, hold));
}
const states = await Promise.all(pages.map((p) => p.evaluate(() => document.visibilityState)));
if (states.filter((s) => s === 'visible').length !== 1) {
  console.error(`expected one visible page after the round, got ${states.join(' ')}`);
  process.exit(1);
}
await browser.disconnect();
