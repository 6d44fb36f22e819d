// The facade's and the agent server's boundaries, probed from outside the real headless app.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import WebSocket from 'ws';
import { assertCleanStop, startApp, waitFor } from './lib/app.js';

let app;

before(async () => {
  app = await startApp();
});

after(async () => {
  const stopped = await app?.stop();
  assertCleanStop(app, stopped);
});

/** One raw HTTP request (fetch would not let us set Host or read every status). */
function request(port, path, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      let data = '';
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    });
    req.on('error', (e) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve({ status: 'reset', body: '' }) : reject(e)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Opens a WebSocket and reports how it ended: { opened, status (refused upgrade), code (close) }. */
function wsOutcome(url, headers = {}) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    let opened = false;
    let got = [];
    ws.on('open', () => {
      opened = true;
      ws.send(JSON.stringify({ id: 1, method: 'Target.getTargets' }));
    });
    ws.on('message', (m) => got.push(String(m)));
    ws.on('unexpected-response', (_req, res) => {
      resolve({ opened, status: res.statusCode, messages: got });
      ws.terminate();
    });
    ws.on('close', (code) => resolve({ opened, code, messages: got }));
    ws.on('error', () => {});
  });
}

test('discovery file: 0600, the token is 64 hex, the cdp URL is loopback, stdout never shows the token', async () => {
  // The file is written when the servers start; the endpoints are printed just after.
  await waitFor('the endpoints on stdout', () => app.output.includes('browser agent server'));
  const mode = fs.statSync(app.discoveryPath).mode & 0o777;
  assert.equal(mode, 0o600);
  assert.match(app.token, /^[0-9a-f]{64}$/);
  assert.match(app.cdp, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(!app.output.includes(app.token), 'the token is not printed');
  assert.ok(app.output.includes(app.cdp), 'the facade URL is printed');
});

test('both servers listen on 127.0.0.1 only', () => {
  const listening = fs
    .readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[3] === '0A')
    .map((f) => f[1]);
  for (const port of [app.cdpPort, Number(new URL(app.agent).port)]) {
    const hex = port.toString(16).toUpperCase().padStart(4, '0');
    const mine = listening.filter((a) => a.endsWith(`:${hex}`));
    assert.deepEqual(mine, [`0100007F:${hex}`], `port ${port} bound to loopback only`);
  }
});

test('every facade HTTP path needs the token (401), then answers', async () => {
  // Everything under /json is token-gated (Chrome's /json/new and /json/close included); other paths are simply unknown.
  const paths = ['/json/version', '/json/version/', '/json/list', '/json', '/json/protocol', '/json/new?about:blank', '/json/close/x', '/'];
  for (const path of paths) {
    const r = await request(app.cdpPort, path);
    assert.equal(r.status, path === '/' ? 404 : 401, `${path} without a token`);
    const wrong = await request(app.cdpPort, path, { headers: { authorization: `Bearer ${'0'.repeat(64)}` } });
    assert.equal(wrong.status, path === '/' ? 404 : 401, `${path} with a wrong token`);
  }
  const bearer = { authorization: `Bearer ${app.token}` };
  for (const path of ['/json/version', '/json/version/']) {
    const r = await request(app.cdpPort, path, { headers: bearer });
    assert.equal(r.status, 200, path);
    const v = JSON.parse(r.body);
    assert.match(v.Browser, /^Chrome\/131\./);
    assert.ok(v.webSocketDebuggerUrl.startsWith(`ws://127.0.0.1:${app.cdpPort}/devtools/browser/`));
    assert.ok(v.webSocketDebuggerUrl.endsWith(`?token=${app.token}`));
  }
  const q = await request(app.cdpPort, `/json/list?token=${app.token}`);
  assert.equal(q.status, 200);
  assert.ok(Array.isArray(JSON.parse(q.body)));
});

test('every agent server path needs the Bearer token (401)', async () => {
  const port = Number(new URL(app.agent).port);
  for (const [method, path] of [['GET', '/info'], ['POST', '/open'], ['GET', '/nope'], ['GET', '/']]) {
    assert.equal((await request(port, path, { method })).status, 401, `${method} ${path}`);
    assert.equal((await request(port, path, { method, headers: { authorization: `Bearer ${'f'.repeat(64)}` } })).status, 401);
  }
  const info = await request(port, '/info', { headers: { authorization: `Bearer ${app.token}` } });
  assert.equal(info.status, 200);
  assert.deepEqual(JSON.parse(info.body), { ok: true, cdp: app.cdp, open: { method: 'POST', path: '/open', url: app.openUrl } });
  assert.equal((await request(port, '/nope', { headers: { authorization: `Bearer ${app.token}` } })).status, 404);
});

test('a foreign Host is refused (403) on both servers; loopback names are accepted', async () => {
  const auth = { authorization: `Bearer ${app.token}` };
  const agentPort = Number(new URL(app.agent).port);
  for (const host of ['evil.example', `evil.example:${app.cdpPort}`, '127.0.0.1:1', `0.0.0.0:${app.cdpPort}`]) {
    assert.equal((await request(app.cdpPort, '/json/version', { headers: { ...auth, host } })).status, 403, host);
  }
  for (const host of [`127.0.0.1:${app.cdpPort}`, `localhost:${app.cdpPort}`, `[::1]:${app.cdpPort}`]) {
    assert.equal((await request(app.cdpPort, '/json/version', { headers: { ...auth, host } })).status, 200, host);
  }
  assert.equal((await request(agentPort, '/info', { headers: { ...auth, host: 'evil.example' } })).status, 403);
  assert.equal((await request(agentPort, '/info', { headers: { ...auth, host: `localhost:${agentPort}` } })).status, 200);
});

test('WebSocket: no or wrong token → closed with 4001 before any CDP message; any Origin → 403', async () => {
  const base = (await app.wsEndpoint()).replace(/\?token=.*/, '');
  const none = await wsOutcome(base);
  assert.equal(none.code, 4001);
  assert.deepEqual(none.messages, []);
  const wrong = await wsOutcome(`${base}?token=${'a'.repeat(64)}`);
  assert.equal(wrong.code, 4001);
  assert.deepEqual(wrong.messages, []);
  const origin = await wsOutcome(`${base}?token=${app.token}`, { origin: 'http://127.0.0.1' });
  assert.equal(origin.status, 403);
  assert.equal(origin.opened, false);
  const good = new WebSocket(`${base}?token=${app.token}`, { perMessageDeflate: false });
  const reply = await new Promise((resolve, reject) => {
    good.on('open', () => good.send(JSON.stringify({ id: 7, method: 'Browser.getVersion' })));
    good.on('message', (m) => resolve(JSON.parse(String(m))));
    good.on('error', reject);
  });
  assert.equal(reply.id, 7);
  assert.match(reply.result.product, /^Chrome\/131\./);
  // Unsupported browser-level methods get a CDP error, and unknown sessions the standard one.
  const ask = (msg) =>
    new Promise((resolve) => {
      good.once('message', (m) => resolve(JSON.parse(String(m))));
      good.send(JSON.stringify(msg));
    });
  const unsupported = await ask({ id: 8, method: 'SystemInfo.getProcessInfo' });
  assert.equal(unsupported.id, 8);
  assert.ok(unsupported.error, 'an error, not silence');
  const lost = await ask({ id: 9, method: 'Runtime.evaluate', params: { expression: '1' }, sessionId: 'NOPE' });
  assert.deepEqual([lost.id, lost.sessionId, lost.error?.message], [9, 'NOPE', 'Session with given id not found.']);
  // Browser.close ends this client's connection, never the app.
  const closed = new Promise((r) => good.once('close', r));
  const bye = await ask({ id: 10, method: 'Browser.close' });
  assert.deepEqual([bye.id, bye.result], [10, {}]);
  await closed;
  assert.equal(app.proc.exitCode, null, 'the app keeps running');
  assert.equal((await request(app.cdpPort, `/json/version?token=${app.token}`)).status, 200);
});

test('POST /open: bodies over 256 KiB are refused, refused URLs get 400, empty bodies open about:blank', async () => {
  const port = Number(new URL(app.agent).port);
  const auth = { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' };
  const big = JSON.stringify({ url: `http://127.0.0.1/${'a'.repeat(256 * 1024)}` });
  const tooBig = await request(port, '/open', { method: 'POST', headers: auth, body: big });
  assert.ok(tooBig.status === 413 || tooBig.status === 'reset', `got ${tooBig.status}`);
  for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'chrome://settings', 'data:text/html,x']) {
    const r = await request(port, '/open', { method: 'POST', headers: auth, body: JSON.stringify({ url }) });
    assert.deepEqual([r.status, JSON.parse(r.body).error], [400, 'denied url'], url);
  }
  assert.equal(app.canvasBrowsers().length, 0, 'nothing was opened by refused requests');
  const blank = await request(port, '/open', { method: 'POST', headers: auth, body: '' });
  assert.equal(blank.status, 200);
  assert.deepEqual(JSON.parse(blank.body), { ok: true, url: 'about:blank' });
  await app.waitForCanvas('the about:blank node', (nodes) => nodes.length === 1 && nodes[0].url === 'about:blank');
});
