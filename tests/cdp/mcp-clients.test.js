// The browser MCP servers agents really install, unmodified and pinned
// (@playwright/mcp, chrome-devtools-mcp), driven through the official MCP
// TypeScript SDK client: one script of tool calls per server, run against
// Debian's Chromium and against the facade of the real headless app, and the
// two transcripts, normalised (ports, timings, file names), must be equal.
// Each step also checks its own result, so a tool that fails on both sides
// fails the test too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assertCleanStop, startApp } from './lib/app.js';
import { startChromium } from './lib/chromium.js';
import { servePages } from './lib/pages.js';
import { decodePng, near } from './lib/png.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = (name) => path.join(here, 'node_modules', '.bin', name);

/** The viewport every script resizes to first, so both browsers draw the same pixels. */
const VIEW = { width: 640, height: 480 };

/** The viewport's size, and whether the page fits in it (no scrollbar in the screenshots). */
const FITS = '() => [innerWidth, innerHeight, document.documentElement.scrollHeight <= innerHeight]';

/** An MCP session with one browser server on stdio; `call` returns the tool result normalised. */
async function connect(command, args, cwd) {
  const transport = new StdioClientTransport({
    command,
    args,
    cwd,
    // Offline: no usage statistics, no update checks (NOTES-clients.md).
    env: { ...process.env, CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1', CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const client = new Client({ name: 'termsprawl-mcp-clients-test', version: '1' });
  await client.connect(transport);
  return {
    client,
    get stderr() {
      return stderr;
    },
    close: () => client.close(),
  };
}

/** What may differ between two runs of one script: ports, timings, dates, generated file names, the workspace folder. */
function normaliseText(text, pages, dir) {
  return engineNeutral(text)
    .replaceAll(dir, 'WORKSPACE')
    .replaceAll(pages.a, 'http://SITE-A')
    .replaceAll(pages.b, 'http://SITE-B')
    .replace(/^- date:.*$/gm, '- date:DATE')
    .replace(/\d{4}-\d\d-\d\dT\d\d[-:]\d\d[-:]\d\d(?:[-.:]\d+)?Z?/g, 'DATE')
    .replace(/\b\d+(?:\.\d+)?\s?ms\b/g, 'Nms')
    .replace(/\b\d+(?:\.\d+)?µs/g, 'Nµs');
}

/**
 * What the two engines' versions give differently on these pages, not the
 * facade: CEF 132's accessibility tree keeps the trailing space a `<label>`'s
 * text gives its input's name (`textbox "Your name "`), Debian's Chromium 156
 * trims it (only a snapshot line's quoted name is trimmed); and each sends its
 * own version in `user-agent` and its own `sec-ch-ua` brand list.
 */
function engineNeutral(text) {
  return text
    .replace(/^(\s*uid=\S+ [\w-]+ "[^"\n]*?) +"/gm, '$1"')
    .replace(/Chrome\/\d+(?:\.\d+)*/g, 'Chrome/VERSION')
    .replace(/^- sec-ch-ua:.*$/gm, '- sec-ch-ua:BRANDS');
}

/** A tool result as compared: error flag, normalised text, and images as their decoded size. */
function normalise(result, pages, dir) {
  return {
    isError: Boolean(result.isError),
    content: (result.content ?? []).map((c) => {
      if (c.type === 'text') return { text: normaliseText(c.text, pages, dir) };
      if (c.type === 'image') {
        const png = c.mimeType === 'image/png' ? decodePng(Buffer.from(c.data, 'base64')) : null;
        return { image: c.mimeType, size: png ? [png.width, png.height] : null };
      }
      return { type: c.type };
    }),
  };
}

/** All text of a result, for the steps' own checks. */
const textOf = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/** The one PNG image of a result, decoded. */
function imageOf(r) {
  const images = (r.content ?? []).filter((c) => c.type === 'image');
  assert.equal(images.length, 1, `one image in the result: ${textOf(r)}`);
  assert.equal(images[0].mimeType, 'image/png');
  return decodePng(Buffer.from(images[0].data, 'base64'));
}

/** The screenshot of /tools at VIEW: the blue block at the top left, white beside and below it. */
function assertToolsPixels(png, where) {
  assert.deepEqual([png.width, png.height], [VIEW.width, VIEW.height], `${where}: screenshot size`);
  const at = (x, y) => png.pixel(x, y);
  assert.ok(near(at(10, 10), [0, 0, 255]), `${where}: blue at (10,10), got ${at(10, 10)}`);
  assert.ok(near(at(110, 30), [0, 0, 255]), `${where}: blue at (110,30), got ${at(110, 30)}`);
  assert.ok(near(at(300, 20), [255, 255, 255]), `${where}: white at (300,20), got ${at(300, 20)}`);
  assert.ok(near(at(VIEW.width - 5, VIEW.height - 5), [255, 255, 255]), `${where}: white at the bottom right`);
}

/**
 * Runs `steps` through one server session (workspace `dir`): each step is
 * [name, tool, args | (results so far) => args, check(result, results so far)].
 * Returns [{ step, result }] with results normalised.
 */
async function runScript(session, steps, pages, where, dir) {
  const transcript = [];
  const raw = {};
  for (const [name, tool, args, check] of steps) {
    let a;
    try {
      a = typeof args === 'function' ? args(raw) : args;
    } catch (e) {
      e.message = `${where}: step '${name}' (${tool}): its arguments: ${e.message}`;
      throw e;
    }
    let result;
    try {
      result = await session.client.callTool({ name: tool, arguments: a }, undefined, { timeout: 30000 });
    } catch (e) {
      throw new Error(`${where}: step '${name}' (${tool}) threw: ${e.message}\n--- server stderr ---\n${session.stderr}`);
    }
    raw[name] = result;
    try {
      check?.(result, raw);
    } catch (e) {
      e.message = `${where}: step '${name}' (${tool} ${JSON.stringify(a)}): ${e.message}\n--- result ---\n${textOf(result)}`;
      throw e;
    }
    transcript.push({ step: name, result: normalise(result, pages, dir) });
  }
  return transcript;
}

/** The ref / uid of the element `line` matches in a snapshot. */
function refIn(snapshot, pattern, refPattern) {
  const line = textOf(snapshot).split('\n').find((l) => pattern.test(l));
  assert.ok(line, `snapshot has a line matching ${pattern}:\n${textOf(snapshot)}`);
  const m = line.match(refPattern);
  assert.ok(m, `line has a ref: ${line}`);
  return m[1];
}

const ok = (r) => assert.ok(!r.isError, `tool error: ${textOf(r)}`);

const includes = (s) => (r) => {
  assert.ok(!r.isError, `tool error: ${textOf(r)}`);
  assert.ok(textOf(r).includes(s), `result includes ${JSON.stringify(s)}`);
};

/** The file the upload steps choose, in the server's workspace `dir` (playwright-mcp allows no other). */
function uploadFileIn(dir) {
  const file = path.join(dir, 'upload.txt');
  fs.writeFileSync(file, 'uploaded by the test\n');
  return file;
}

/** The 1-based index browser_network_requests printed for the request whose line matches `url`. */
function requestIndex(list, url) {
  const lines = textOf(list).split('\n').filter((l) => /^\d+\. /.test(l));
  const i = lines.findIndex((l) => l.includes(url));
  assert.ok(i >= 0, `a request to ${url} in:\n${textOf(list)}`);
  return Number(lines[i].match(/^(\d+)\./)[1]);
}

/** playwright-mcp's script (its tool names and result shapes). */
function playwrightSteps(pages, dir) {
  const uploadFile = uploadFileIn(dir);
  const ref = (name, from = 'snapshot') => (raw) => refIn(raw[from], name, /\[ref=(\w+)\]/);
  return [
    // Action results carry the page's snapshot as a file link; browser_snapshot returns it inline.
    ['navigate', 'browser_navigate', { url: `${pages.a}/tools` }, includes('Page Title: Tools')],
    ['resize', 'browser_resize', VIEW, ok],
    ['viewport', 'browser_evaluate', { function: FITS }, includes(`[\n  ${VIEW.width},\n  ${VIEW.height},\n  true\n]`)],
    ['snapshot', 'browser_snapshot', {}, includes('button "Press me"')],
    ['click', 'browser_click', (raw) => ({ element: 'Press me', target: ref(/button "Press me"/)(raw) }), ok],
    ['type', 'browser_type', (raw) => ({ element: 'Your name', target: ref(/textbox "Your name/)(raw), text: 'Ada', slowly: true }), ok],
    ['after click and type', 'browser_snapshot', {}, (r) => {
      includes('clicked 1')(r);
      includes('typed Ada')(r);
    }],
    [
      'fill',
      'browser_fill_form',
      (raw) => ({ fields: [{ name: 'Your name', type: 'textbox', target: ref(/textbox "Your name/)(raw), value: 'Grace' }] }),
      ok,
    ],
    ['filled', 'browser_evaluate', { function: "() => document.getElementById('echo').textContent" }, includes('typed Grace')],
    ['evaluate', 'browser_evaluate', { function: "async () => (await fetch('/data.json')).json()" }, includes('"n": 42')],
    ['screenshot', 'browser_take_screenshot', { type: 'png' }, (r) => assertToolsPixels(imageOf(r), 'playwright-mcp')],
    ['console', 'browser_console_messages', { level: 'debug' }, (r) => {
      for (const m of ['tools page log', 'tools page warning', 'tools page error']) includes(m)(r);
    }],
    ['network', 'browser_network_requests', {}, includes('/data.json')],
    ['dialog opens', 'browser_click', (raw) => ({ element: 'Ask me', target: ref(/button "Ask me"/)(raw) }), includes('Who are you?')],
    ['dialog answered', 'browser_handle_dialog', { accept: true, promptText: 'Lovelace' }, ok],
    ['dialog result', 'browser_evaluate', { function: "() => document.getElementById('answer').textContent" }, includes('answer: Lovelace')],
    ['hover', 'browser_hover', (raw) => ({ element: 'Hover me', target: ref(/paragraph .*: Hover me/)(raw) }), ok],
    ['select', 'browser_select_option', (raw) => ({ element: 'Colour', target: ref(/combobox "Colour"/)(raw), values: ['green'] }), ok],
    ['press key', 'browser_press_key', { key: 'x' }, ok],
    ['hovered, picked, pressed', 'browser_snapshot', {}, (r) => {
      for (const m of ['hovered', 'picked green', 'key x']) includes(m)(r);
    }],
    ['file chooser', 'browser_click', (raw) => ({ element: 'Upload', target: ref(/button "Upload"/)(raw) }), includes('File chooser')],
    ['file upload', 'browser_file_upload', { paths: [uploadFile] }, ok],
    ['file chosen', 'browser_wait_for', { text: 'chosen upload.txt' }, ok],
    ['drag', 'browser_drag', (raw) => ({
      startElement: 'Drag me', startTarget: ref(/: Drag me/)(raw), endElement: 'Drop here', endTarget: ref(/: Drop here/)(raw),
    }), ok],
    ['dropped', 'browser_wait_for', { text: 'dropped moved' }, ok],
    ['find', 'browser_find', { text: 'press me' }, includes('Press me')],
    ['network request', 'browser_network_request', (raw) => ({ index: requestIndex(raw.network, '/data.json'), part: 'response-body' }), includes('{"n":42}')],
    ['emulate media', 'browser_emulate_media', { colorScheme: 'dark' }, ok],
    ['dark', 'browser_evaluate', { function: "() => matchMedia('(prefers-color-scheme: dark)').matches" }, includes('true')],
    ['run code', 'browser_run_code_unsafe', { code: 'async (page) => await page.title()' }, includes('Tools')],
    ['navigate away', 'browser_navigate', { url: `${pages.a}/frame-host` }, includes('Page Title: Frame host')],
    ['navigate back', 'browser_navigate_back', {}, includes('Page Title: Tools')],
    ['tab new', 'browser_tabs', { action: 'new', url: `${pages.b}/frame` }, includes('Page Title: Inner')],
    ['tab list', 'browser_tabs', { action: 'list' }, includes('Inner')],
    ['tab select', 'browser_tabs', { action: 'select', index: 0 }, includes('0: (current) [Tools]')],
    ['tab close', 'browser_tabs', { action: 'close', index: 1 }, (r) => {
      assert.ok(!r.isError, textOf(r));
      assert.ok(!textOf(r).includes('Inner'), 'the closed tab is gone');
    }],
    ['tab list after', 'browser_tabs', { action: 'list' }, includes('Tools')],
    ['popup snapshot', 'browser_snapshot', {}, includes('link "Open a popup"')],
    ['popup', 'browser_click', (raw) => ({ element: 'Open a popup', target: ref(/link "Open a popup"/, 'popup snapshot')(raw) }), includes('[Inner]')],
    ['popup listed', 'browser_tabs', { action: 'list' }, includes('1: [Inner]')],
    ['popup closed', 'browser_tabs', { action: 'close', index: 1 }, ok],
  ];
}

/** chrome-devtools-mcp's script: page tools name their page (`pageId`, required by default). */
function devtoolsSteps(pages, dir) {
  const uploadFile = uploadFileIn(dir);
  const uid = (name) => (raw) => refIn(raw.snapshot, name, /uid=(\S+)/);
  // The page list_pages marks as selected, and the one whose URL matches.
  const selected = (raw) => Number(refIn(raw.pages, /\[selected\]/, /^(\d+):/));
  const pageWith = (url) => (raw) => Number(refIn(raw['tab new'], url, /^(\d+):/));
  const on = (args = {}) => (raw) => ({ pageId: selected(raw), ...(typeof args === 'function' ? args(raw) : args) });
  return [
    ['pages', 'list_pages', {}, includes('[selected]')],
    ['navigate', 'navigate_page', on({ type: 'url', url: `${pages.a}/tools` }), includes('/tools')],
    ['resize', 'resize_page', on(VIEW), ok],
    ['viewport', 'evaluate_script', on({ function: FITS }), includes(`[${VIEW.width},${VIEW.height},true]`)],
    ['snapshot', 'take_snapshot', on(), includes('button "Press me"')],
    ['click', 'click', on((raw) => ({ uid: uid(/button "Press me"/)(raw), includeSnapshot: true })), includes('clicked 1')],
    ['fill', 'fill', on((raw) => ({ uid: uid(/textbox "Your name/)(raw), value: 'Ada', includeSnapshot: true })), includes('typed Ada')],
    ['type', 'type_text', on({ text: ' Byron' }), ok],
    ['typed', 'evaluate_script', on({ function: "() => document.getElementById('echo').textContent" }), includes('typed Ada Byron')],
    ['evaluate', 'evaluate_script', on({ function: "async () => (await fetch('/data.json')).json()" }), includes('{"n":42}')],
    ['screenshot', 'take_screenshot', on({ format: 'png' }), (r) => assertToolsPixels(imageOf(r), 'chrome-devtools-mcp')],
    ['console', 'list_console_messages', on(), (r) => {
      for (const m of ['tools page log', 'tools page warning', 'tools page error']) includes(m)(r);
    }],
    ['network', 'list_network_requests', on(), includes('/data.json')],
    ['dialog opens', 'click', on((raw) => ({ uid: uid(/button "Ask me"/)(raw) })), includes('Who are you?')],
    ['dialog answered', 'handle_dialog', on({ action: 'accept', promptText: 'Lovelace' }), ok],
    ['dialog result', 'evaluate_script', on({ function: "() => document.getElementById('answer').textContent" }), includes('answer: Lovelace')],
    ['hover', 'hover', on((raw) => ({ uid: uid(/"Hover me"/)(raw) })), ok],
    ['select', 'fill', on((raw) => ({ uid: uid(/combobox "Colour/)(raw), value: 'Green' })), ok],
    ['press key', 'press_key', on({ key: 'x' }), ok],
    ['hovered, picked, pressed', 'take_snapshot', on(), (r) => {
      for (const m of ['hovered', 'picked green', 'key x']) includes(m)(r);
    }],
    ['file upload', 'upload_file', on((raw) => ({ uid: uid(/button "Upload/)(raw), filePaths: [uploadFile] })), ok],
    ['file chosen', 'wait_for', on({ text: ['chosen upload.txt'] }), ok],
    ['drag', 'drag', on((raw) => ({ from_uid: uid(/"Drag me"/)(raw), to_uid: uid(/"Drop here"/)(raw) })), ok],
    ['dropped', 'wait_for', on({ text: ['dropped moved'] }), ok],
    // The page's own rule only: the user-agent stylesheet's rules are each engine version's own.
    ['css styles', 'get_css_styles', on((raw) => ({ uid: uid(/button "Press me"/)(raw), pageSize: 1 })), includes('color: rgb(1,2,3)')],
    ['heap snapshot', 'take_heapsnapshot', on({ filePath: 'heap.heapsnapshot' }), ok],
    ['trace start', 'performance_start_trace', on({ reload: false, autoStop: false }), ok],
    ['trace stop', 'performance_stop_trace', on({ filePath: 'trace.json' }), ok],
    ['console message', 'get_console_message', on((raw) => ({ msgid: Number(refIn(raw.console, /tools page error/, /msgid=(\d+)/)) })), includes('tools page error')],
    ['network request', 'get_network_request', on((raw) => ({ reqid: Number(refIn(raw.network, /data\.json/, /reqid=(\d+)/)) })), includes('{"n":42}')],
    ['emulate', 'emulate', on({ colorScheme: 'dark' }), ok],
    ['dark', 'evaluate_script', on({ function: "() => matchMedia('(prefers-color-scheme: dark)').matches" }), includes('true')],
    ['navigate away', 'navigate_page', on({ type: 'url', url: `${pages.a}/frame-host` }), includes('/frame-host')],
    ['navigate back', 'navigate_page', on({ type: 'back' }), includes('/tools')],
    ['navigate forward', 'navigate_page', on({ type: 'forward' }), includes('/frame-host')],
    ['reload', 'navigate_page', on({ type: 'reload' }), includes('/frame-host')],
    ['frame content', 'take_snapshot', on(), includes('inner frame content')],
    ['tab new', 'new_page', { url: `${pages.b}/frame` }, includes('/frame')],
    ['tab select', 'select_page', on(), includes('Frame host')],
    ['tab close', 'close_page', (raw) => ({ pageId: pageWith(/\/frame\)/)(raw) }), (r) => {
      ok(r);
      assert.ok(!textOf(r).includes('/frame)'), 'the closed page is gone');
    }],
    ['tab list after', 'list_pages', {}, includes('/frame-host')],
  ];
}

/** The servers, each attached the way NOTES-clients.md says, to a browser WebSocket URL. */
const SERVERS = {
  'playwright-mcp': {
    start: (ws, dir) => connect(bin('playwright-mcp'), ['--cdp-endpoint', ws, '--output-dir', dir], dir),
    steps: playwrightSteps,
  },
  'chrome-devtools-mcp': {
    start: (ws, dir) =>
      connect(bin('chrome-devtools-mcp'), ['--wsEndpoint', ws, '--no-usage-statistics', '--no-performance-crux'], dir),
    steps: devtoolsSteps,
  },
  // A target=_blank link clicked: the new page is announced with the clicker
  // as its opener (Puppeteer's 'popup' event, which chrome-devtools-mcp's
  // "Opened pages" needs); on the facade it is a tab of the clicker's node.
  'chrome-devtools-mcp popup': {
    start: (ws, dir) =>
      connect(bin('chrome-devtools-mcp'), ['--wsEndpoint', ws, '--no-usage-statistics', '--no-performance-crux'], dir),
    steps: (pages) => {
      const uid = (name) => (raw) => refIn(raw.snapshot, name, /uid=(\S+)/);
      const on = (args = {}) => (raw) => ({ pageId: 1, ...(typeof args === 'function' ? args(raw) : args) });
      return [
        ['navigate', 'navigate_page', on({ type: 'url', url: `${pages.a}/tools` }), includes('/tools')],
        ['snapshot', 'take_snapshot', on(), includes('link "Open a popup"')],
        ['popup', 'click', on((raw) => ({ uid: uid(/link "Open a popup"/)(raw) })), includes('## Opened pages')],
        ['popup listed', 'list_pages', {}, includes('/frame)')],
      ];
    },
  },
  // Isolated browser contexts (Target.createBrowserContext): each server's
  // own way of giving an agent separate cookies and storage.
  'playwright-mcp --isolated': {
    start: (ws, dir) => connect(bin('playwright-mcp'), ['--cdp-endpoint', ws, '--isolated', '--output-dir', dir], dir),
    steps: (pages) => [['navigate', 'browser_navigate', { url: `${pages.a}/tools` }, includes('Page Title: Tools')]],
  },
  'chrome-devtools-mcp isolatedContext': {
    start: (ws, dir) =>
      connect(bin('chrome-devtools-mcp'), ['--wsEndpoint', ws, '--no-usage-statistics', '--no-performance-crux'], dir),
    steps: (pages) => [['new page', 'new_page', { url: `${pages.a}/tools`, isolatedContext: 'one' }, includes('isolatedContext=one')]],
  },
};

/** Runs one server's script against one browser; writes the transcript under $MCP_TRANSCRIPTS when set. */
async function transcriptOf(server, browser, ws, pages) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-client-'));
  const session = await SERVERS[server].start(ws, dir);
  try {
    const t = await runScript(session, SERVERS[server].steps(pages, dir), pages, `${server} on ${browser}`, dir);
    if (process.env.MCP_TRANSCRIPTS) {
      fs.mkdirSync(process.env.MCP_TRANSCRIPTS, { recursive: true });
      fs.writeFileSync(path.join(process.env.MCP_TRANSCRIPTS, `${server}.${browser}.json`), JSON.stringify(t, null, 1));
    }
    return t;
  } finally {
    await session.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('browser MCP servers: the facade answers as Chromium does', () => {
  let pages;
  before(async () => (pages = await servePages()));
  after(() => pages?.close());

  // A fresh Chromium and a fresh app for each server: both start from the same state.
  for (const server of Object.keys(SERVERS)) {
    test(`${server}: every step gives the same result on both`, { todo: SERVERS[server].todo }, async () => {
      let reference;
      const chromium = await startChromium();
      try {
        reference = await transcriptOf(server, 'chromium', chromium.ws, pages);
      } finally {
        await chromium.stop();
      }
      const app = await startApp();
      let facade;
      let stopped;
      try {
        // Chromium starts with one about:blank page; a fresh canvas has none, so give it the same one.
        assert.equal((await app.open('about:blank')).status, 200);
        await app.waitForCanvas('one browser node', (b) => b.length === 1);
        facade = await transcriptOf(server, 'facade', await app.wsEndpoint(), pages);
      } finally {
        stopped = await app.stop();
      }
      assertCleanStop(app, stopped);
      for (let i = 0; i < reference.length; i++) {
        assert.deepEqual(facade[i], reference[i], `step '${reference[i].step}' differs (actual: facade, expected: Chromium)`);
      }
      assert.equal(facade.length, reference.length);
    });
  }

  // What both servers' snapshots show as [active]/focused: document.hasFocus() on the
  // first page, a new target's, and after bringToFront, the same on both.
  test('page focus: the first page, a new target and bringToFront as in Chromium', async () => {
    const probe = async (ws) => {
      const browser = await puppeteer.connect({ browserWSEndpoint: ws, defaultViewport: null });
      try {
        const [first] = await browser.pages();
        const seen = { first: await first.evaluate(() => document.hasFocus()) };
        const created = await browser.newPage();
        seen.created = await created.evaluate(() => document.hasFocus());
        await first.bringToFront();
        seen.broughtToFront = await first.evaluate(() => document.hasFocus());
        return seen;
      } finally {
        await browser.disconnect();
      }
    };
    const chromium = await startChromium();
    let reference;
    try {
      reference = await probe(chromium.ws);
    } finally {
      await chromium.stop();
    }
    assert.deepEqual(reference, { first: false, created: true, broughtToFront: true }, 'Chromium as measured');
    const app = await startApp();
    let facade;
    let stopped;
    try {
      assert.equal((await app.open('about:blank')).status, 200);
      await app.waitForCanvas('one browser node', (b) => b.length === 1);
      facade = await probe(await app.wsEndpoint());
    } finally {
      stopped = await app.stop();
    }
    assertCleanStop(app, stopped);
    assert.deepEqual(facade, reference);
  });
});
