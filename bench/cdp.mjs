// The same Puppeteer and Playwright script against termsprawl's CDP facade and
// against Debian's chromium --headless --remote-debugging-port=0, in one run
// on one machine: evaluate('1+1') p50/p99, 800x600 screenshot median, connect
// median, newPage+close median. Prints the figures and facade/chromium ratios.
// Not a test: nothing here asserts a time.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(repo, 'tests/cdp/package.json'));
const puppeteer = require('puppeteer-core');
const { chromium } = require('playwright-core');
const { startApp } = await import(path.join(repo, 'tests/cdp/lib/app.js'));
const { servePages } = await import(path.join(repo, 'tests/cdp/lib/pages.js'));
const { startChromium: startBrowser } = await import(path.join(repo, 'tests/cdp/lib/chromium.js'));

const N_EVAL = Number(process.env.N_EVAL || 1000);
const N_SHOT = Number(process.env.N_SHOT || 30);
const N_CONNECT = Number(process.env.N_CONNECT || 10);
const N_NEWPAGE = Number(process.env.N_NEWPAGE || 10);
const VIEWPORT = { width: 800, height: 600 };

const now = () => Number(process.hrtime.bigint()) / 1e6;
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs) => pct(xs, 50);

async function timed(n, f) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = now();
    await f(i);
    out.push(now() - t);
  }
  return out;
}

/** Debian's chromium with a real DevTools port, in a throwaway profile (tests/cdp/lib/chromium.js). */
async function startChromium() {
  const c = await startBrowser();
  return { name: 'chromium', ws: async () => c.ws, http: c.http, headers: {}, stop: () => c.stop() };
}

async function startFacade() {
  const app = await startApp();
  // Discovery once, outside the timings (the chromium side has its URL from stderr).
  const ws = await app.wsEndpoint();
  return {
    name: 'facade',
    ws: async () => ws,
    http: `${app.cdp}/?token=${app.token}`,
    headers: { Authorization: `Bearer ${app.token}` },
    stop: async () => {
      appCpu = cpuSeconds(app.proc.pid);
      return app.stop();
    },
  };
}

// utime + stime of a process, in seconds (what the app's main process spent over the run).
let appCpu = null;
function cpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

const clients = {
  puppeteer: {
    connect: async (t) => puppeteer.connect({ browserWSEndpoint: await t.ws(), defaultViewport: VIEWPORT }),
    disconnect: (b) => b.disconnect(),
    newPage: async (b) => b.newPage(),
    viewport: async () => {},
  },
  playwright: {
    connect: async (t) => chromium.connectOverCDP(await t.ws()),
    // Over CDP, Playwright's close() only drops the connection (no Browser.close).
    disconnect: (b) => b.close(),
    newPage: async (b) => b.contexts()[0].newPage(),
    viewport: async (p) => p.setViewportSize(VIEWPORT),
  },
};

async function measure(target, clientName, site) {
  const c = clients[clientName];
  const r = {};
  const connects = await timed(N_CONNECT, async () => {
    const b = await c.connect(target);
    await c.disconnect(b);
  });
  r.connect = median(connects);
  const b = await c.connect(target);
  const page = await c.newPage(b);
  await c.viewport(page);
  await page.goto(`${site.a}/colours`);
  for (let i = 0; i < 50; i++) await page.evaluate('1+1'); // warm-up
  const evals = await timed(N_EVAL, () => page.evaluate('1+1'));
  r.evalP50 = pct(evals, 50);
  r.evalP99 = pct(evals, 99);
  await page.screenshot();
  const shots = await timed(N_SHOT, async () => {
    const png = await page.screenshot({ type: 'png' });
    if (png.readUInt32BE(16) !== VIEWPORT.width || png.readUInt32BE(20) !== VIEWPORT.height) throw new Error(`screenshot is not 800x600 on ${target.name}`);
  });
  r.shot = median(shots);
  await page.close();
  const opens = await timed(N_NEWPAGE, async () => {
    const p = await c.newPage(b);
    await p.close();
  });
  r.newPage = median(opens);
  await c.disconnect(b);
  return r;
}

const site = await servePages();
const targets = [await startFacade(), await startChromium()];
const results = {};
try {
  for (const client of Object.keys(clients)) {
    for (const t of targets) {
      process.stderr.write(`[bench] ${client} → ${t.name}\n`);
      results[`${client}/${t.name}`] = await measure(t, client, site);
    }
  }
} finally {
  for (const t of targets) await t.stop();
  await site.close();
}

const fmt = (x) => x.toFixed(2).padStart(8);
const rows = [['evaluate p50', 'evalP50'], ['evaluate p99', 'evalP99'], ['screenshot 800x600 median', 'shot'], ['connect median', 'connect'], ['newPage+close median', 'newPage']];
console.log(`n: evaluate ${N_EVAL}, screenshot ${N_SHOT}, connect ${N_CONNECT}, newPage ${N_NEWPAGE}; times in ms`);
for (const client of Object.keys(clients)) {
  console.log(`\n${client}${' '.repeat(27 - client.length)}   facade chromium    ratio`);
  for (const [label, key] of rows) {
    const f = results[`${client}/facade`][key];
    const c = results[`${client}/chromium`][key];
    console.log(`  ${label.padEnd(27)}${fmt(f)}${fmt(c)}   ${(f / c).toFixed(2)}x`);
  }
}
console.log('\ngoals: evaluate <= 1.1x, screenshot <= 1.2x');
if (appCpu !== null) console.log(`\napp main process: ${appCpu.toFixed(2)} CPU s over the whole run (both clients against the facade)`);
