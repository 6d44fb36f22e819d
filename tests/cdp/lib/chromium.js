// Debian's Chromium started for automation (headless, a real DevTools port on
// 127.0.0.1, a throwaway profile): the reference the facade is compared with.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A running Chromium: `ws` is its browser WebSocket URL, `http` its DevTools HTTP origin. */
export async function startChromium({ width = 800, height = 600 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdp-chromium-'));
  const args = ['--headless', '--remote-debugging-port=0', `--user-data-dir=${dir}`, '--no-first-run', '--no-default-browser-check',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', `--window-size=${width},${height}`, 'about:blank'];
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  // Its own process group, so stop() can end the helpers that outlive the browser process.
  const proc = spawn(process.env.CHROMIUM || 'chromium', args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const ws = await new Promise((resolve, reject) => {
    let err = '';
    const t = setTimeout(() => reject(new Error(`chromium did not start:\n${err}`)), 30000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    proc.once('exit', (c) => {
      clearTimeout(t);
      reject(new Error(`chromium exited with ${c}:\n${err}`));
    });
  }).catch((e) => {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  return {
    ws,
    http: ws.replace(/^ws:\/\/([^/]+)\/.*/, 'http://$1'),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    },
  };
}
