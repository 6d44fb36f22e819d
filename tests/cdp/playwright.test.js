// Unmodified playwright-core (connectOverCDP) against the CDP facade of the real headless app.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { assertCleanStop, startApp, waitFor } from './lib/app.js';
import { servePages } from './lib/pages.js';
import { decodePng, near } from './lib/png.js';

let app;
let site;
let browser;
let context;
let page;
let pageNode;

before(async () => {
  site = await servePages();
  app = await startApp();
});

after(async () => {
  if (browser?.isConnected()) await browser.close();
  const stopped = await app?.stop();
  await site?.close();
  assertCleanStop(app, stopped);
});

test('connects over http with the token in the query (Browser.setDownloadBehavior must not fail it)', async () => {
  browser = await chromium.connectOverCDP(`${app.cdp}/?token=${app.token}`);
  assert.ok(browser.isConnected());
  assert.match(browser.version(), /^131\./);
  assert.equal(browser.contexts().length, 1, 'one default context');
  context = browser.contexts()[0];
  assert.deepEqual(context.pages(), []);
});

test('a node opened through the agent server appears in the default context', async () => {
  const url = `${site.a}/`;
  const appeared = context.waitForEvent('page', { timeout: 15000 });
  assert.equal((await app.open(url)).status, 200);
  const p = await appeared;
  await p.waitForLoadState('load');
  assert.equal(p.url(), url);
  assert.equal(await p.title(), 'Home');
  await app.waitForCanvas('the opened node', (nodes) => nodes.length === 1 && nodes[0].url === url);
});

test('newPage opens a browser node on the canvas', async () => {
  const before = app.canvasBrowsers().map((n) => n.id);
  page = await context.newPage();
  const added = await app.waitForCanvas('a new browser node', (nodes) => nodes.find((n) => !before.includes(n.id)));
  pageNode = added.id;
  assert.equal(context.pages().length, 2);
});

test('goto, evaluate, click, fill and waitForSelector', async () => {
  const response = await page.goto(`${site.a}/`);
  assert.equal(response.status(), 200);
  assert.equal(await page.evaluate('1+1'), 2);
  assert.equal(await page.evaluate(() => document.title), 'Home');
  await page.click('#btn');
  assert.equal(await page.textContent('#out'), 'clicked 1');
  await page.fill('#name', 'filled by playwright');
  assert.equal(await page.textContent('#echo'), 'filled by playwright');
  await page.locator('#name').pressSequentially('!');
  assert.equal(await page.inputValue('#name'), 'filled by playwright!');
  const late = await page.waitForSelector('#late', { timeout: 10000 });
  assert.equal(await late.textContent(), 'late arrival');
});

test('screenshot decodes to the viewport size with the right pixels', async () => {
  await page.setViewportSize({ width: 800, height: 600 });
  await page.goto(`${site.a}/colours`);
  const png = decodePng(await page.screenshot());
  assert.equal(png.width, 800);
  assert.equal(png.height, 600);
  assert.ok(near(png.pixel(10, 10), [0, 0, 255]), `blue box at (10,10), got ${png.pixel(10, 10)}`);
  assert.ok(near(png.pixel(210, 160), [255, 0, 0]), `red page at (210,160), got ${png.pixel(210, 160)}`);
  assert.ok(near(png.pixel(799, 599), [255, 0, 0]), `red page at (799,599), got ${png.pixel(799, 599)}`);
});

test('pages stay visible and animating when another is opened or brought to front, as Playwright has them in Chromium (focus emulation)', async () => {
  const other = await page.context().newPage();
  const state = async (p) => p.evaluate(() => document.visibilityState);
  const animates = (p) => p.evaluate(() => new Promise((r) => {
    const t = setTimeout(() => r(false), 1000);
    requestAnimationFrame(() => { clearTimeout(t); r(true); });
  }));
  assert.deepEqual([await state(page), await state(other)], ['visible', 'visible']);
  assert.deepEqual([await animates(page), await animates(other)], [true, true]);
  await page.bringToFront();
  assert.deepEqual([await state(page), await state(other)], ['visible', 'visible']);
  await other.close();
});

test('cookies both ways through the context', async () => {
  await page.goto(`${site.a}/cookies`);
  const fromServer = (await context.cookies(site.a)).find((c) => c.name === 'from_server');
  assert.equal(fromServer?.value, 'server-value');
  await context.addCookies([{ name: 'pw_client', value: 'pw-value', url: site.a }]);
  await page.reload();
  assert.match(await page.textContent('#sent'), /pw_client=pw-value/);
  await context.clearCookies();
  assert.deepEqual((await context.cookies(site.a)).filter((c) => c.name === 'pw_client'), []);
});

test('newCDPSession sends raw commands to the page', async () => {
  const session = await context.newCDPSession(page);
  const r = await session.send('Runtime.evaluate', { expression: '6*7', returnByValue: true });
  assert.equal(r.result.value, 42);
  await session.detach();
  assert.equal(await page.evaluate('5+5'), 10);
});

test('a cross-origin iframe is reachable', async () => {
  await page.goto(`${site.a}/frame-host`);
  const inner = page.frameLocator('#f').locator('#inner');
  assert.equal(await inner.textContent({ timeout: 10000 }), 'inner frame content');
  await page.frameLocator('#f').locator('#ib').click();
  assert.equal(await page.frameLocator('#f').locator('#ib').textContent(), 'pressed');
  const frame = await waitFor('the cross-site frame', () => page.frames().find((f) => f.url().startsWith(site.b)));
  assert.equal(await frame.evaluate(() => location.host), new URL(site.b).host);
});

test('browser.close() only disconnects (the app and its nodes stay); reconnecting over ws with a Bearer header', async () => {
  await browser.close();
  assert.equal(browser.isConnected(), false);
  assert.equal(app.proc.exitCode, null, 'the app keeps running');
  assert.equal(app.canvasBrowsers().length, 2, 'the nodes stay');
  const ws = (await app.wsEndpoint()).replace(/\?token=.*/, '');
  browser = await chromium.connectOverCDP(ws, { headers: { Authorization: `Bearer ${app.token}` } });
  context = browser.contexts()[0];
  await waitFor('both pages', () => context.pages().length === 2);
  page = context.pages().find((p) => p.url().startsWith(`${site.a}/frame-host`));
  assert.ok(page, 'the frame-host page is still there');
  assert.equal(await page.evaluate('1+1'), 2);
  await page.goto(`${site.a}/?mine`);
  await page.click('#btn');
  assert.equal(await page.textContent('#out'), 'clicked 1');
});

test('a second client evicts the first', async () => {
  const first = browser;
  const gone = new Promise((r) => first.once('disconnected', r));
  const second = await chromium.connectOverCDP(app.cdp, { headers: { Authorization: `Bearer ${app.token}` } });
  await gone;
  assert.equal(first.isConnected(), false);
  browser = second;
  context = browser.contexts()[0];
  page = await waitFor('my page', () => context.pages().find((p) => p.url() === `${site.a}/?mine`));
  assert.equal(await page.evaluate('2+2'), 4);
});

test('dialogs wait for page.on("dialog"): confirm accepted and dismissed, prompt text returned', async () => {
  const seen = [];
  const handler = async (d) => {
    seen.push([d.type(), d.message(), d.defaultValue()]);
    if (d.type() === 'prompt') await d.accept('typed here');
    else if (d.message() === 'yes?') await d.accept();
    else await d.dismiss();
  };
  page.on('dialog', handler);
  try {
    assert.equal(await page.evaluate(() => confirm('yes?')), true);
    assert.equal(await page.evaluate(() => confirm('no?')), false);
    assert.equal(await page.evaluate(() => prompt('name?', 'def')), 'typed here');
  } finally {
    page.off('dialog', handler);
  }
  assert.deepEqual(seen, [['confirm', 'yes?', ''], ['confirm', 'no?', ''], ['prompt', 'name?', 'def']]);
});

test('setViewportSize ends with the page at the asked size; window bounds read', async () => {
  await page.setViewportSize({ width: 640, height: 480 });
  assert.deepEqual(await page.evaluate(() => [window.innerWidth, window.innerHeight]), [640, 480]);
  const cdp = await context.newCDPSession(page);
  const { windowId, bounds } = await cdp.send('Browser.getWindowForTarget');
  assert.equal(bounds.windowState, 'normal');
  const read = await cdp.send('Browser.getWindowBounds', { windowId });
  assert.ok(read.bounds.width >= 640 && read.bounds.height >= 480, JSON.stringify(read.bounds));
  await cdp.detach();
});

test('browser.newContext() is isolated: its own cookies and storage, its pages never saved, all gone on close', async () => {
  const isolated = await browser.newContext();
  const inside = await isolated.newPage();
  await inside.goto(`${site.a}/?isolated`);
  await isolated.addCookies([{ name: 'iso_cookie', value: 'iso', url: site.a }]);
  await inside.evaluate(() => localStorage.setItem('who', 'isolated'));
  assert.deepEqual((await isolated.cookies(site.a)).map((c) => c.name), ['iso_cookie']);
  assert.deepEqual((await context.cookies(site.a)).filter((c) => c.name === 'iso_cookie'), [], 'the default context does not see it');
  await page.goto(`${site.a}/?after`);
  assert.equal(await page.evaluate(() => localStorage.getItem('who')), null, 'nor its storage');
  // Saves are in order: once the default page's new URL is saved, the isolated page would be there if it were ever saved.
  await app.waitForCanvas('the default page saved', (nodes) => nodes.some((n) => n.url?.endsWith('/?after')));
  assert.ok(!app.canvasBrowsers().some((n) => n.url?.includes('?isolated')), JSON.stringify(app.canvasBrowsers()));
  await isolated.close();
  assert.ok(inside.isClosed());
  // A fresh context starts empty.
  const fresh = await browser.newContext();
  const freshPage = await fresh.newPage();
  await freshPage.goto(`${site.a}/`);
  assert.deepEqual(await fresh.cookies(site.a), []);
  assert.equal(await freshPage.evaluate(() => localStorage.getItem('who')), null);
  await fresh.close();
  assert.equal(browser.contexts().length, 1);
});

test('newContext({ permissions, geolocation }): its pages of every site get the position; clearPermissions and the default context ask', async () => {
  const state = (p) => p.evaluate(async () => (await navigator.permissions.query({ name: 'geolocation' })).state);
  const where = (p) => p.evaluate(() => new Promise((resolve) => {
    navigator.geolocation.getCurrentPosition((pos) => resolve([pos.coords.latitude, pos.coords.longitude]), (e) => resolve(e.code), { timeout: 5000 });
  }));
  // Permissions for every site: the context is the client's own.
  const located = await browser.newContext({ permissions: ['geolocation'], geolocation: { latitude: 48.85, longitude: 2.35 } });
  const one = await located.newPage();
  await one.goto(`${site.a}/`);
  assert.equal(await state(one), 'granted');
  assert.deepEqual(await where(one), [48.85, 2.35]);
  const two = await located.newPage();
  await two.goto(`${site.b}/`);
  assert.equal(await state(two), 'granted', 'a site loaded after the grant has it too');
  assert.equal(await state(page), 'prompt', 'the default context is not widened');
  await located.clearPermissions();
  assert.equal(await state(one), 'prompt');
  await two.reload();
  assert.equal(await state(two), 'prompt', 'and stays cleared across loads');
  // The default context takes a grant for an origin, and refuses one for every site.
  await context.grantPermissions(['geolocation'], { origin: site.a });
  assert.equal(await state(page), 'granted');
  await context.clearPermissions();
  assert.equal(await state(page), 'prompt');
  await assert.rejects(context.grantPermissions(['geolocation']), /only for an origin/);
  await located.close();
});

test("service workers reach their own context: the serviceworker event, evaluate, and none in another context", async () => {
  const isolated = await browser.newContext();
  const inside = await isolated.newPage();
  const seen = isolated.waitForEvent('serviceworker');
  await inside.goto(`${site.a}/workers`);
  const worker = await seen;
  assert.equal(new URL(worker.url()).pathname, '/sw.js');
  assert.equal(await worker.evaluate(() => self.hello), 'from the service worker');
  assert.deepEqual(isolated.serviceWorkers(), [worker]);
  assert.ok(!context.serviceWorkers().includes(worker), 'the default context does not get it');
  await isolated.close();
});

test('page.close removes the node from the canvas', async () => {
  await page.close();
  await app.waitForCanvas("the closed page's node is gone", (nodes) => !nodes.some((n) => n.id === pageNode) && nodes.length === 1);
  assert.equal(context.pages().length, 1);
});
