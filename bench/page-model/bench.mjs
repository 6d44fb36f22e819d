// browser_inspect (termsprawl) vs browser_snapshot (@playwright/mcp over the
// app's CDP facade) on the same six documentation pages, in one run of one
// app. Prints per page: cl100k tokens of what an MCP client receives from
// each, their ratio, and how many visible interactive elements termsprawl
// lists (following `page` to the end) against a count made independently,
// in every frame, through playwright-core.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(repo, 'tests/cdp/package.json'));
const { chromium } = require('playwright-core');
const { getEncoding } = require('js-tiktoken');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { startApp, waitFor } = await import(path.join(repo, 'tests/cdp/lib/app.js'));

const ROOTS = { py: '/usr/share/doc/python3/html', rust: '/usr/share/doc/rust-doc/html' };
const PAGES = [
  'py/tutorial/index.html',
  'py/library/stdtypes.html',
  'py/library/functions.html',
  'rust/book/ch01-00-getting-started.html',
  'rust/std/vec/struct.Vec.html',
  'rust/std/collections/struct.HashMap.html',
];
const TYPES = { '.html': 'text/html', '.css': 'text/css', '.js': 'text/javascript', '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf' };

/** Serves the two documentation trees read-only on 127.0.0.1. */
async function serveDocs() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const [, top, ...rest] = decodeURIComponent(url.pathname).split('/');
    const root = ROOTS[top];
    const file = root && path.resolve(root, rest.join('/'));
    if (!file || !file.startsWith(root + '/') || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

/** `POST /call` as termsprawl-ctl does; what an MCP client receives is the value as JSON text (tool-server's tool_result). */
class Tools {
  constructor(dataDir, node) {
    const state = path.join(dataDir, 'agent-tools');
    this.url = JSON.parse(fs.readFileSync(path.join(state, 'endpoint.json'), 'utf8')).url;
    this.token = JSON.parse(fs.readFileSync(path.join(state, 'sessions', `${node}.json`), 'utf8')).token;
  }
  async call(operation, args) {
    const r = await fetch(`${this.url}/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ operation, args }),
      signal: AbortSignal.timeout(120000),
    });
    const envelope = await r.json();
    if (envelope.ok !== true) throw new Error(`${operation}: ${JSON.stringify(envelope).slice(0, 300)}`);
    return envelope.value;
  }
}

// Independent count of visible interactive elements in one frame: the same
// definition (rendered, with a box, reachable by scrolling), its own code.
const COUNT = `(() => {
  const sel = 'a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,iframe,frame,[onclick],[contenteditable=""],[contenteditable=true],[tabindex]:not([tabindex="-1"]),[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=menuitemcheckbox],[role=menuitemradio],[role=option],[role=switch],[role=textbox],[role=combobox],[role=searchbox],[role=slider],[role=spinbutton],[role=treeitem]';
  const all = [];
  const walk = (root) => { for (const el of root.querySelectorAll('*')) { all.push(el); if (el.shadowRoot) walk(el.shadowRoot); } };
  walk(document);
  const w = Math.max(document.documentElement.scrollWidth, innerWidth), h = Math.max(document.documentElement.scrollHeight, innerHeight);
  let visible = 0, offPage = 0;
  for (const el of all) {
    if (!el.matches(sel) || !el.checkVisibility({checkVisibilityCSS: true})) continue;
    const r = el.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) continue;
    const x = r.x + scrollX, y = r.y + scrollY;
    if (x + r.width <= 0 || y + r.height <= 0 || x >= w || y >= h) offPage++; else visible++;
  }
  return {visible, offPage};
})()`;

const enc = getEncoding('cl100k_base');
const tokens = (s) => enc.encode(s).length;
const mcpText = (result) => (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

const { server, base } = await serveDocs();
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'page-model-bench-'));
const app = await startApp({ args: ['--agent', 'agent-1', '--agent-browser-control'], env: { HOME: home, DISPLAY: '', WAYLAND_DISPLAY: '' } });
let mcp;
let browser;
try {
  await waitFor('the agent-1 tool session', () => fs.existsSync(path.join(app.dataDir, 'agent-tools', 'sessions', 'agent-1.json')), 30000);
  const tools = new Tools(app.dataDir, 'agent-1');
  // First termsprawl and the independent count (playwright-core), then playwright-mcp.
  browser = await chromium.connectOverCDP(`${app.cdp}/?token=${app.token}`);

  let nodeId;
  const rows = [];
  for (const rel of PAGES) {
    const url = `${base}/${rel}`;
    if (!nodeId) nodeId = (await tools.call('browser_open', { url })).nodeId;
    else await tools.call('browser_navigate', { nodeId, url });
    const first = await tools.call('browser_inspect', { nodeId });
    const ours = tokens(JSON.stringify(first));
    // Every page of elements, to count what is addressable at all.
    let listed = first.elements.split('\n').filter(Boolean).length;
    let allTokens = ours;
    const pages = Number(/of (\d+)$/.exec(first.more?.split(';')[1] || '')?.[1] || 1);
    for (let p = 2; p <= pages; p++) {
      const next = await tools.call('browser_inspect', { nodeId, page: p });
      listed += next.elements.split('\n').filter(Boolean).length;
      allTokens += tokens(JSON.stringify(next));
    }
    // Count independently in the app's page (every frame).
    const page = await waitFor(`${url} in playwright-core`, () => browser.contexts().flatMap((c) => c.pages()).find((p) => p.url() === url), 20000).catch((e) => {
      throw new Error(`${e.message}; pages: ${browser.contexts().flatMap((c) => c.pages()).map((p) => p.url())}`);
    });
    let visible = 0;
    let offPage = 0;
    for (const f of page.frames()) {
      // A frame that cannot be counted fails the run: counting it as 0 would flatter the ratio.
      const c = await f.evaluate(COUNT).catch((e) => {
        throw new Error(`counting the elements of frame ${f.url() || '(no url)'} of ${url} failed: ${e.message}`);
      });
      visible += c.visible;
      offPage += c.offPage;
    }
    rows.push({ page: rel, url, termsprawl: ours, listed, visible, offPage, pages, allTokens });
    console.error(`[bench] ${rel}: ${ours} tokens, ${listed}/${visible} listed`);
  }
  await browser.close();
  browser = undefined;
  const bin = path.join(repo, 'tests/cdp/node_modules/.bin/playwright-mcp');
  mcp = new Client({ name: 'page-model-bench', version: '1' });
  // Its snapshots and console logs go to the run's temporary HOME, not the checkout.
  const outputs = path.join(home, 'playwright-mcp');
  await mcp.connect(new StdioClientTransport({ command: bin, args: ['--cdp-endpoint', `${app.cdp}/?token=${app.token}`, '--output-dir', outputs], env: { ...process.env, HOME: home }, stderr: 'ignore' }));
  for (const r of rows) {
    await mcp.callTool({ name: 'browser_navigate', arguments: { url: r.url } });
    r.playwright = tokens(mcpText(await mcp.callTool({ name: 'browser_snapshot', arguments: {} })));
    r.ratio = r.termsprawl / r.playwright;
    console.error(`[bench] ${r.page}: playwright-mcp ${r.playwright} tokens`);
  }
  const pad = (s, n) => String(s).padStart(n);
  console.log(`${'page'.padEnd(42)} ${pad('ours', 7)} ${pad('pw-mcp', 7)} ${pad('ratio', 6)}  listed/visible (off-page)  pages  all-pages tokens`);
  for (const r of rows) {
    console.log(`${r.page.padEnd(42)} ${pad(r.termsprawl, 7)} ${pad(r.playwright, 7)} ${pad(r.ratio.toFixed(2), 6)}  ${pad(`${r.listed}/${r.visible}`, 11)} ${pad(`(${r.offPage})`, 7)} ${pad(r.pages, 12)} ${pad(r.allTokens, 10)}`);
  }
  const sum = (k) => rows.reduce((a, r) => a + r[k], 0);
  console.log(`${'set'.padEnd(42)} ${pad(sum('termsprawl'), 7)} ${pad(sum('playwright'), 7)} ${pad((sum('termsprawl') / sum('playwright')).toFixed(2), 6)}  ${pad(`${sum('listed')}/${sum('visible')}`, 11)}`);
  const worst = Math.max(...rows.map((r) => r.ratio));
  const ok = worst <= 1 / 3 && sum('termsprawl') / sum('playwright') <= 1 / 5 && rows.every((r) => r.listed >= r.visible);
  console.log(`goal (each ≤ 0.33, set ≤ 0.20, every visible element listed): ${ok ? 'met' : 'NOT met'}`);
  // Exit status says it too, so a script or CI step can rely on it (set here: cleanup runs first).
  if (!ok) process.exitCode = 1;
} finally {
  await browser?.close().catch(() => {});
  await mcp?.close().catch(() => {});
  await app.stop();
  server.close();
  fs.rmSync(home, { recursive: true, force: true });
}
