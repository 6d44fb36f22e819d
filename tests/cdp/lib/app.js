// Starts the real headless termsprawl with the CDP facade on, in throwaway
// directories, and reads what an agent would read: browser-agent.json.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The binary under test: $TERMSPRAWL_BIN, else <target dir>/debug/termsprawl. */
export function binary() {
  if (process.env.TERMSPRAWL_BIN) return process.env.TERMSPRAWL_BIN;
  const target = process.env.CARGO_TARGET_DIR ? path.resolve(repo, process.env.CARGO_TARGET_DIR) : path.join(repo, 'target');
  return path.join(target, 'debug', 'termsprawl');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` (sync or async) until it returns a truthy value; throws `what` after `ms`. */
export async function waitFor(what, probe, ms = 15000, every = 50) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(every);
  }
}

/** A running headless app. */
export class App {
  constructor(proc, root, dataDir, projectDir, discovery) {
    this.proc = proc;
    this.root = root;
    this.dataDir = dataDir;
    this.projectDir = projectDir;
    this.discoveryPath = path.join(dataDir, 'browser-agent.json');
    this.token = discovery.token;
    this.cdp = discovery.cdp; // http://127.0.0.1:<port>
    this.agent = `http://127.0.0.1:${discovery.port}`;
    this.openUrl = discovery.open.url;
  }

  get cdpPort() {
    return Number(new URL(this.cdp).port);
  }

  /** The facade's browser WebSocket URL (token included), from authenticated discovery. */
  async wsEndpoint() {
    const r = await fetch(`${this.cdp}/json/version`, { headers: { authorization: `Bearer ${this.token}` } });
    if (r.status !== 200) throw new Error(`/json/version answered ${r.status}`);
    return (await r.json()).webSocketDebuggerUrl;
  }

  /** Browser nodes in the active project's saved canvas (autosaved within ~2 s of a change). */
  canvasBrowsers() {
    const file = path.join(this.projectDir, '.termsprawl', 'canvas.json');
    let layout;
    try {
      layout = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      return [];
    }
    return layout.nodes
      .filter((n) => n.kind?.type === 'browser')
      .map((n) => ({ id: n.id, url: n.kind.tabs.find((t) => t.id === n.kind.active_tab)?.url }));
  }

  /** Waits until the saved canvas satisfies `pred(browsers)`. */
  async waitForCanvas(what, pred) {
    try {
      return await waitFor(`canvas: ${what}`, () => pred(this.canvasBrowsers()), 20000, 100);
    } catch (e) {
      e.message += ` (canvas browsers: ${JSON.stringify(this.canvasBrowsers())})`;
      throw e;
    }
  }

  /** POST /open on the agent server. */
  async open(url) {
    const r = await fetch(this.openUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    return { status: r.status, body: await r.json() };
  }

  /** SIGTERM, wait for a clean exit, then remove the directories. Returns the exit code. */
  async stop() {
    const exitedEarly = this.proc.exitCode !== null || this.proc.signalCode !== null;
    if (!exitedEarly) {
      const exited = new Promise((r) => this.proc.once('exit', r));
      this.proc.kill('SIGTERM');
      const t = setTimeout(() => this.proc.kill('SIGKILL'), 30000);
      await exited;
      clearTimeout(t);
    }
    const fileLeft = fs.existsSync(this.discoveryPath);
    // Chromium helpers may still be flushing the profile for a moment after the app exits.
    fs.rmSync(this.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    return { code: this.proc.exitCode, signal: this.proc.signalCode, fileLeft, exitedEarly };
  }
}

/** Asserts what every suite's teardown expects: the app ran to the end, exited 0 on SIGTERM and removed its discovery file. */
export function assertCleanStop(app, stopped) {
  const tail = `\n--- app output (tail) ---\n${app?.output.slice(-3000)}`;
  assert.equal(stopped?.exitedEarly, false, `the app was still running when the suite ended${tail}`);
  assert.equal(stopped?.code, 0, `the app exits cleanly on SIGTERM${tail}`);
  assert.equal(stopped?.fileLeft, false, `browser-agent.json is removed on exit${tail}`);
}

/**
 * Starts `termsprawl --headless --cdp` and waits for browser-agent.json.
 * `args` are appended to the command line (e.g. `--agent agent-1`), `env`
 * entries override the inherited environment.
 */
export async function startApp({ cdp = true, args: extraArgs = [], env = {} } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'termsprawl-cdp-'));
  const dataDir = path.join(root, 'data');
  const projectDir = path.join(root, 'p');
  const runtimeDir = path.join(root, 'run');
  fs.mkdirSync(runtimeDir, { mode: 0o700 });
  const args = ['--headless', '--data-dir', dataDir, '--project', projectDir];
  if (cdp) args.push('--cdp');
  args.push(...extraArgs);
  const proc = spawn(binary(), args, {
    env: { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR || runtimeDir, RUST_LOG: process.env.RUST_LOG || 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Chromium is chatty on stderr (D-Bus is absent here); keep the rest, and only the tail, for failure reports.
  const keep = (d) => {
    const lines = String(d).split('\n').filter((l) => !/bus\.cc|object_proxy\.cc|dbus/i.test(l));
    output = (output + lines.join('\n')).slice(-20000);
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  proc.once('exit', (code, signal) => (output += `\n[termsprawl exited: code ${code}, signal ${signal}]\n`));
  const file = path.join(dataDir, 'browser-agent.json');
  let discovery;
  try {
    discovery = await waitFor('browser-agent.json', () => {
      if (proc.exitCode !== null) throw new Error(`termsprawl exited with ${proc.exitCode}:\n${output}`);
      try {
        return JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch {
        return null;
      }
    }, 60000);
  } catch (e) {
    proc.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
    throw e;
  }
  const app = new App(proc, root, dataDir, projectDir, discovery);
  Object.defineProperty(app, 'output', { get: () => output });
  return app;
}
