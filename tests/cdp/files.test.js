// Files in and out through the CDP facade, with unmodified puppeteer-core and
// playwright-core: uploads through a file input (set directly, and through
// an intercepted file chooser) and downloads (saved where the client asked).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { chromium } from 'playwright-core';
import { assertCleanStop, startApp, waitFor } from './lib/app.js';
import { servePages } from './lib/pages.js';

let app;
let site;
let files;

before(async () => {
  site = await servePages();
  app = await startApp();
  files = path.join(app.root, 'files');
  fs.mkdirSync(files);
  fs.writeFileSync(path.join(files, 'one.txt'), 'first file\nmore\n');
  fs.writeFileSync(path.join(files, 'two.csv'), 'a,b\n1,2\n');
});

after(async () => {
  const stopped = await app?.stop();
  await site?.close();
  assertCleanStop(app, stopped);
});

const chosen = (page) => page.$eval('#chosen', (e) => e.textContent);

test('Puppeteer: uploadFile on the input, and waitForFileChooser + accept', async () => {
  const browser = await puppeteer.connect({ browserWSEndpoint: await app.wsEndpoint(), defaultViewport: null });
  try {
    const page = await browser.newPage();
    await page.goto(`${site.a}/upload`, { waitUntil: 'load' });
    const input = await page.$('#files');
    await input.uploadFile(path.join(files, 'one.txt'), path.join(files, 'two.csv'));
    await waitFor('both files chosen', async () => (await chosen(page)) === 'one.txt 16 first file\ntwo.csv 8 a,b');

    const [chooser] = await Promise.all([page.waitForFileChooser({ timeout: 10000 }), page.click('#files')]);
    assert.equal(chooser.isMultiple(), true);
    await chooser.accept([path.join(files, 'two.csv')]);
    await waitFor('the chooser\'s file chosen', async () => (await chosen(page)) === 'two.csv 8 a,b');
    await page.close();
  } finally {
    await browser.disconnect();
  }
});

test('Puppeteer: a download is saved where Browser.setDownloadBehavior says, with its progress events', async () => {
  const browser = await puppeteer.connect({ browserWSEndpoint: await app.wsEndpoint(), defaultViewport: null });
  try {
    const into = path.join(app.root, 'puppeteer-downloads');
    fs.mkdirSync(into);
    const cdp = await browser.target().createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: into, eventsEnabled: true });
    const begun = new Promise((resolve) => cdp.on('Browser.downloadWillBegin', resolve));
    const done = new Promise((resolve) => cdp.on('Browser.downloadProgress', (e) => e.state === 'completed' && resolve(e)));
    const page = await browser.newPage();
    await page.goto(`${site.a}/download`, { waitUntil: 'load' });
    await page.click('#get');
    const will = await begun;
    assert.equal(will.suggestedFilename, 'report.txt');
    assert.equal(will.url, `${site.a}/report.txt`);
    const end = await done;
    assert.equal(end.guid, will.guid);
    assert.equal(end.receivedBytes, 26);
    await waitFor('the saved file', () => fs.existsSync(path.join(into, 'report.txt')), 10000);
    assert.equal(fs.readFileSync(path.join(into, 'report.txt'), 'utf8'), 'quarterly report\nline two\n');
    await page.close();
    await cdp.detach();
  } finally {
    await browser.disconnect();
  }
});

test('Playwright: setInputFiles, the filechooser event, and a download saved with saveAs', async () => {
  const browser = await chromium.connectOverCDP(await app.wsEndpoint());
  try {
    const context = browser.contexts()[0];
    const page = await context.newPage();
    await page.goto(`${site.a}/upload`);
    await page.setInputFiles('#files', [path.join(files, 'one.txt')]);
    await waitFor('the file chosen', async () => (await page.textContent('#chosen')) === 'one.txt 16 first file');

    const [chooser] = await Promise.all([page.waitForEvent('filechooser', { timeout: 10000 }), page.click('#files')]);
    assert.equal(chooser.isMultiple(), true);
    await chooser.setFiles([path.join(files, 'one.txt'), path.join(files, 'two.csv')]);
    await waitFor('both files chosen', async () => (await page.textContent('#chosen')) === 'one.txt 16 first file\ntwo.csv 8 a,b');

    await page.goto(`${site.a}/download`);
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 15000 }), page.click('#get')]);
    assert.equal(download.suggestedFilename(), 'report.txt');
    assert.equal(download.url(), `${site.a}/report.txt`);
    const saved = path.join(app.root, 'saved-by-playwright.txt');
    await download.saveAs(saved);
    assert.equal(fs.readFileSync(saved, 'utf8'), 'quarterly report\nline two\n');
    assert.equal(await download.failure(), null);
    await page.close();
  } finally {
    await browser.close();
  }
});
