// Soak (issue 7): mixed agent tool calls, Puppeteer traffic over the CDP
// facade, terminal floods and node churn against the real headless app for
// a given time, with RSS, open fds and threads of every process of the app
// sampled after warm-up, every few seconds under load, and at the end; the
// verdicts use the least-squares slope of those samples. See soak/README.md.
//
//   node soak/soak.mjs [SECONDS] [--duration S] [--warmup S] [--sample-every S]
//                      [--app-slope MIB/MIN] [--slope MIB/MIN] [--count-slope N/MIN]
//                      [--threshold PCT] [--fd-slack N] [--samples FILE.csv]
// (or SOAK_DURATION, SOAK_WARMUP, SOAK_SAMPLE_EVERY, SOAK_APP_SLOPE, SOAK_SLOPE,
//  SOAK_COUNT_SLOPE, SOAK_THRESHOLD, SOAK_FD_SLACK, SOAK_SAMPLES)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { assertCleanStop, startApp, waitFor } from '../tests/cdp/lib/app.js';
import { AUTH, servePages } from '../tests/cdp/lib/pages.js';
import { decodePng } from '../tests/cdp/lib/png.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// The CDP suite's clients (installed there without a browser download).
const requireCdp = createRequire(path.join(here, '../tests/cdp/package.json'));
const puppeteer = (await import(pathToFileURL(requireCdp.resolve('puppeteer-core')).href)).default;

// ---------------------------------------------------------------- options

// Slope limits of the verdicts, per minute of the measured part. The app's is
// issue 16's goal for a 30-minute soak; the others allow for what Chromium's
// renderers and the shells do under load (V8 heaps, tmux scrollback) while
// still catching a steady climb. soak/README.md gives the figures behind them.
const DEFAULT_APP_SLOPE = 0.05; // MiB/min, the app's RSS
const DEFAULT_SLOPE = 1.0; // MiB/min, the RSS of every long-lived process but the app, summed
const DEFAULT_COUNT_SLOPE = 0.5; // fds or threads per minute, every long-lived process summed

function options(argv) {
  const env = process.env;
  const num = (v) => (v ? Number(v) : undefined);
  const o = {
    duration: Number(env.SOAK_DURATION || 600),
    warmup: num(env.SOAK_WARMUP),
    sampleEvery: num(env.SOAK_SAMPLE_EVERY),
    appSlope: Number(env.SOAK_APP_SLOPE || DEFAULT_APP_SLOPE),
    slope: Number(env.SOAK_SLOPE || DEFAULT_SLOPE),
    countSlope: Number(env.SOAK_COUNT_SLOPE || DEFAULT_COUNT_SLOPE),
    threshold: Number(env.SOAK_THRESHOLD || 10),
    fdSlack: Number(env.SOAK_FD_SLACK || 20),
  };
  let samplesFile = env.SOAK_SAMPLES || null;
  const names = {
    '--duration': 'duration',
    '--warmup': 'warmup',
    '--sample-every': 'sampleEvery',
    '--app-slope': 'appSlope',
    '--slope': 'slope',
    '--count-slope': 'countSlope',
    '--threshold': 'threshold',
    '--fd-slack': 'fdSlack',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.split('=', 2);
    if (names[flag]) {
      o[names[flag]] = Number(inline ?? argv[++i]);
    } else if (flag === '--samples' && (inline ?? argv[i + 1])) {
      samplesFile = inline ?? argv[++i];
    } else if (/^\d+(\.\d+)?$/.test(a)) {
      o.duration = Number(a);
    } else {
      console.error(`usage: soak.mjs [SECONDS] [--duration S] [--warmup S] [--sample-every S] [--app-slope MIB/MIN] [--slope MIB/MIN] [--count-slope N/MIN] [--threshold PCT] [--fd-slack N] [--samples FILE.csv]`);
      process.exit(2);
    }
  }
  // Warm-up: caches, JIT and pools fill in the first minutes; growth is measured after it.
  o.warmup ??= Math.max(10, o.duration * 0.15);
  // About 60 samples over the measured part, every 2 to 10 s.
  o.sampleEvery ??= Math.min(10, Math.max(2, (o.duration - o.warmup) / 60));
  for (const [k, v] of Object.entries(o)) {
    if (!Number.isFinite(v) || v < 0) {
      console.error(`soak: bad value for ${k}: ${v}`);
      process.exit(2);
    }
  }
  if (o.warmup >= o.duration) {
    console.error(`soak: the warm-up (${o.warmup} s) must be shorter than the run (${o.duration} s)`);
    process.exit(2);
  }
  if (o.sampleEvery <= 0) {
    console.error(`soak: --sample-every must be more than 0 s`);
    process.exit(2);
  }
  return { ...o, samplesFile };
}

const opts = options(process.argv.slice(2));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const elapsed = () => ((Date.now() - t0) / 1000).toFixed(1);
const log = (m) => console.error(`[soak ${elapsed()}s] ${m}`);

// Tokens must never reach the output, whatever an error message carries.
const secrets = [];
const redact = (s) => secrets.reduce((acc, t) => (t ? acc.split(t).join('<token>') : acc), String(s));

// ---------------------------------------------------------------- bookkeeping

const errors = [];
function recordError(source, e) {
  const message = redact(e?.message ?? e);
  errors.push({ at: elapsed(), source, message });
  log(`ERROR ${source}: ${message}`);
}

/** A check of this script failed (as opposed to an exception from a library). */
class SoakFailure extends Error {}
function check(cond, what) {
  if (!cond) throw new SoakFailure(what);
}

/** Count and latency of every kind of action, for the report. */
const stats = new Map();
async function timed(name, f) {
  const s = stats.get(name) ?? { n: 0, total: 0, max: 0 };
  stats.set(name, s);
  const start = performance.now();
  try {
    return await f();
  } finally {
    const ms = performance.now() - start;
    s.n++;
    s.total += ms;
    s.max = Math.max(s.max, ms);
  }
}

// ---------------------------------------------------------------- agent tool client

/** `POST /call` the way termsprawl-ctl does (tool-server/src/client.rs), on a kept-alive connection. */
class Tools {
  constructor(dataDir, node) {
    const state = path.join(dataDir, 'agent-tools');
    this.url = JSON.parse(fs.readFileSync(path.join(state, 'endpoint.json'), 'utf8')).url;
    this.token = JSON.parse(fs.readFileSync(path.join(state, 'sessions', `${node}.json`), 'utf8')).token;
    secrets.push(this.token);
  }

  async call(operation, args) {
    return timed(`tool ${operation}`, async () => {
      const body = JSON.stringify(args === undefined ? { operation } : { operation, args });
      let r;
      try {
        r = await fetch(`${this.url}/call`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
          body,
          // browser_open/navigate wait for the page to load; nothing here should take a minute.
          signal: AbortSignal.timeout(60000),
        });
      } catch (e) {
        throw new SoakFailure(`${operation}: request failed: ${e.cause?.message ?? e.message}`);
      }
      const text = await r.text();
      let envelope;
      try {
        envelope = JSON.parse(text);
      } catch {
        throw new SoakFailure(`${operation}: HTTP ${r.status}, body is not JSON: ${text.slice(0, 200)}`);
      }
      if (r.status !== 200 || envelope.ok !== true) {
        throw new SoakFailure(`${operation} ${JSON.stringify(args ?? {}).slice(0, 200)}: HTTP ${r.status}: ${envelope.error ?? text.slice(0, 200)}`);
      }
      return envelope.value;
    });
  }
}

// ---------------------------------------------------------------- processes

function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** pid -> { ppid, comm } for every process. */
function processTable() {
  const table = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readText(`/proc/${name}/stat`);
    if (!stat) continue;
    // comm may hold spaces or parentheses; the fields after the last ')' do not.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    table.set(Number(name), { ppid, comm });
  }
  return table;
}

const cmdline = (pid) => (readText(`/proc/${pid}/cmdline`) ?? '').split('\0').filter(Boolean);

function threadNames(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).map((t) => (readText(`/proc/${pid}/task/${t}/comm`) ?? '').trim());
  } catch {
    return [];
  }
}

function withDescendants(roots, table) {
  const set = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, { ppid }] of table) {
      if (set.has(ppid) && !set.has(pid)) {
        set.add(pid);
        grew = true;
      }
    }
  }
  return set;
}

let appPid = 0;

/**
 * The tmux server of the app's terminals: it daemonises, so it is no
 * descendant of the app and is found by its socket in argv (as
 * app/tests/hardening.rs does). The app's own `tmux -S … start-server`
 * client has the same argv but stays the app's child.
 */
function tmuxServers(dataDir, table) {
  const sock = path.join(dataDir, 'tmux', 'termsprawl.sock');
  return [...table.keys()].filter((pid) => table.get(pid).ppid !== appPid && cmdline(pid).includes(sock));
}

/** What a process of the tree is, for grouping: app, Chromium helper by type, tmux, shells. */
function role(pid, table, tmux, underTmux) {
  if (pid === appPid) return 'app';
  if (tmux.has(pid)) return 'tmux server';
  const { comm, ppid } = table.get(pid);
  if (underTmux.has(pid)) return `under tmux: ${comm}`;
  if (comm.startsWith('tmux')) return 'tmux client';
  const argv = cmdline(pid);
  const type = argv.find((a) => a.startsWith('--type='))?.slice(7);
  if (!type) return comm;
  if (type === 'utility') {
    const sub = argv.find((a) => a.startsWith('--utility-sub-type='))?.slice(19) ?? '';
    return `utility ${sub.split('.').pop()}`.trim();
  }
  if (type !== 'zygote') return type;
  if (ppid === appPid) return 'zygote';
  // Zygote-forked helpers keep the zygote's argv; their threads say what they are
  // (as cef-bridge's engine tests and app/tests/hardening.rs tell them apart).
  const threads = threadNames(pid);
  if (threads.includes('VizCompositorTh')) return 'gpu';
  if (threads.includes('Compositor')) return 'renderer';
  return 'zygote child (other)';
}

/**
 * The kinds of mapping the app's RSS is split into, for telling glibc's main
 * arena (where the libcef UI thread's allocations land) from the other
 * arenas, the libraries' pages and shared memory.
 */
const MAPPING_KINDS = [
  ['heap', '[heap] (glibc main arena)'],
  ['anon', 'anonymous (other arenas, mmaps, thread stacks)'],
  ['file', 'file-backed (libcef and the other libraries)'],
  ['shmem', 'shared memory (memfd, /dev/shm)'],
  ['other', 'other ([stack], [vdso], …)'],
];

function mappingKind(name) {
  if (name === '[heap]') return 'heap';
  if (name === '') return 'anon';
  if (name.startsWith('/memfd:') || name.startsWith('/dev/shm/') || name.startsWith('/SYSV')) return 'shmem';
  if (name.startsWith('[')) return 'other';
  return 'file';
}

/** RSS (kB) of one process by mapping kind, from /proc/PID/smaps; null when it is gone. */
function rssByMapping(pid) {
  const smaps = readText(`/proc/${pid}/smaps`);
  if (smaps === null) return null;
  const out = Object.fromEntries(MAPPING_KINDS.map(([k]) => [k, 0]));
  let kind = 'anon';
  for (const line of smaps.split('\n')) {
    const head = line.match(/^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/);
    if (head) kind = mappingKind(head[1].trim());
    else if (line.startsWith('Rss:')) out[kind] += Number(line.split(/\s+/)[1]);
  }
  return out;
}

function statusField(status, name) {
  const m = status?.match(new RegExp(`^${name}:\\s+(\\d+)`, 'm'));
  return m ? Number(m[1]) : null;
}

/** One snapshot of every process of the app: pid -> { role, rss (kB), fds, threads }. */
function snapshot(dataDir) {
  const table = processTable();
  const tmux = new Set(tmuxServers(dataDir, table));
  const underTmux = withDescendants([...tmux], table);
  for (const p of tmux) underTmux.delete(p);
  const pids = new Set([...withDescendants([appPid], table), ...tmux, ...underTmux]);
  const procs = new Map();
  for (const pid of pids) {
    const status = readText(`/proc/${pid}/status`);
    let fds = null;
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`).length;
    } catch {}
    if (status === null || fds === null) continue; // exited meanwhile
    const p = { role: role(pid, table, tmux, underTmux), rss: statusField(status, 'VmRSS') ?? 0, fds, threads: statusField(status, 'Threads') ?? 0 };
    if (pid === appPid) p.mappings = rssByMapping(pid);
    procs.set(pid, p);
  }
  return procs;
}

function byRole(procs) {
  const roles = new Map();
  for (const p of procs.values()) {
    const r = roles.get(p.role) ?? { n: 0, rss: 0, fds: 0, threads: 0 };
    r.n++;
    r.rss += p.rss;
    r.fds += p.fds;
    r.threads += p.threads;
    roles.set(p.role, r);
  }
  return roles;
}

const total = (roles) => [...roles.values()].reduce((a, r) => ({ n: a.n + r.n, rss: a.rss + r.rss, fds: a.fds + r.fds, threads: a.threads + r.threads }), { n: 0, rss: 0, fds: 0, threads: 0 });
const growth = (a, b) => (a > 0 ? ((b - a) / a) * 100 : b > 0 ? Infinity : 0);
const mib = (kb) => (kb / 1024).toFixed(1);
const pct = (g) => (Number.isFinite(g) ? `${g >= 0 ? '+' : ''}${g.toFixed(1)}%` : 'new');

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')).join('\n');
}

/**
 * Least-squares slope of `ys` against `ts` (in y per unit of t) and its
 * standard error; null with fewer than three points.
 */
function fit(ts, ys) {
  const n = ts.length;
  if (n < 3) return null;
  const mt = ts.reduce((a, t) => a + t, 0) / n;
  const my = ys.reduce((a, y) => a + y, 0) / n;
  let stt = 0;
  let sty = 0;
  for (let i = 0; i < n; i++) {
    stt += (ts[i] - mt) ** 2;
    sty += (ts[i] - mt) * (ys[i] - my);
  }
  if (stt === 0) return null;
  const slope = sty / stt;
  const residual = ys.reduce((a, y, i) => a + (y - (my + slope * (ts[i] - mt))) ** 2, 0);
  return { slope, se: Math.sqrt(residual / (n - 2) / stt) };
}

/**
 * Slopes per role over the samples, per minute: RSS (MiB), fds and threads
 * summed over the role's long-lived processes, those in both quiet samples
 * (a churned node's processes come and go and would only add noise; that
 * they are gone is what the total RSS growth checks). A sample that misses
 * one of them (it was read as it changed) is left out for that role.
 */
function slopes(start, end, samples) {
  const lasting = [...start.keys()].filter((pid) => end.has(pid));
  const roles = new Map();
  for (const pid of lasting) {
    const r = start.get(pid).role;
    roles.set(r, [...(roles.get(r) ?? []), pid]);
  }
  roles.set('TOTAL', lasting);
  roles.set('TOTAL but app', lasting.filter((pid) => start.get(pid).role !== 'app'));
  const t0 = samples[0]?.t ?? 0;
  const out = new Map();
  for (const [r, pids] of roles) {
    const ts = [];
    const ys = { rss: [], fds: [], threads: [] };
    for (const { t, procs } of samples) {
      if (!pids.every((pid) => procs.has(pid))) continue;
      ts.push((t - t0) / 60000);
      for (const k of ['rss', 'fds', 'threads']) ys[k].push(pids.reduce((a, pid) => a + procs.get(pid)[k], 0) / (k === 'rss' ? 1024 : 1));
    }
    out.set(r, { n: pids.length, samples: ts.length, rss: fit(ts, ys.rss), fds: fit(ts, ys.fds), threads: fit(ts, ys.threads) });
  }
  return out;
}

const per = (f, digits) => (f ? `${f.slope >= 0 ? '+' : ''}${f.slope.toFixed(digits)}±${f.se.toFixed(digits)}` : '-');

function report(start, end, samples) {
  const a = byRole(start);
  const b = byRole(end);
  const fits = slopes(start, end, samples);
  const names = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => (x === 'app' ? -1 : y === 'app' ? 1 : x.localeCompare(y)));
  const none = { n: 0, rss: 0, fds: 0, threads: 0 };
  const nofit = { n: 0 };
  const rows = [['role', 'procs', 'kept', 'RSS MiB start', 'end', 'growth', 'MiB/min', 'fds start', 'end', '/min', 'threads start', 'end', '/min']];
  const row = (name, s, e, f) => [name, `${s.n}→${e.n}`, f.n, mib(s.rss), mib(e.rss), pct(growth(s.rss, e.rss)), per(f.rss, 3), s.fds, e.fds, per(f.fds, 2), s.threads, e.threads, per(f.threads, 2)];
  for (const n of names) rows.push(row(n, a.get(n) ?? none, b.get(n) ?? none, fits.get(n) ?? nofit));
  const app = (m) => new Map([...m].filter(([r]) => r !== 'app'));
  rows.push(row('TOTAL but app', total(app(a)), total(app(b)), fits.get('TOTAL but app')));
  rows.push(row('TOTAL', total(a), total(b), fits.get('TOTAL')));
  // Every process too: which one of a role grew (a process seen once is one that came or went).
  const each = [['pid', 'role', 'RSS MiB start', 'end', 'growth', 'fds start', 'end']];
  const pids = [...new Set([...start.keys(), ...end.keys()])];
  const roleOf = (pid) => (start.get(pid) ?? end.get(pid)).role;
  pids.sort((x, y) => roleOf(x).localeCompare(roleOf(y)) || x - y);
  for (const pid of pids) {
    const s = start.get(pid);
    const e = end.get(pid);
    each.push([pid, roleOf(pid), s ? mib(s.rss) : '-', e ? mib(e.rss) : '-', s && e ? pct(growth(s.rss, e.rss)) : '', s?.fds ?? '-', e?.fds ?? '-']);
  }
  const span = samples.length > 1 ? (samples.at(-1).t - samples[0].t) / 60000 : 0;
  const head = `${samples.length} samples over ${span.toFixed(1)} min; slopes (least squares ± standard error) over each role's kept processes, those in both quiet samples`;
  return { text: `${head}\n\n${table(rows)}\n\n${appByMapping(start, end, samples)}\n\n${table(each)}`, app: [a.get('app') ?? none, b.get('app') ?? none], total: [total(a), total(b)], fits };
}

/** The app's RSS by mapping kind: the two quiet samples and the slope over every sample. */
function appByMapping(start, end, samples) {
  const of = (procs) => procs.get(appPid)?.mappings ?? null;
  const t0 = samples[0]?.t ?? 0;
  const kept = samples.filter(({ procs }) => of(procs) !== null);
  const ts = kept.map(({ t }) => (t - t0) / 60000);
  const rows = [['app RSS by mapping', 'MiB start', 'end', 'MiB/min']];
  for (const [k, label] of MAPPING_KINDS) {
    const f = fit(ts, kept.map(({ procs }) => of(procs)[k] / 1024));
    rows.push([label, of(start) ? mib(of(start)[k]) : '-', of(end) ? mib(of(end)[k]) : '-', per(f, 3)]);
  }
  return table(rows);
}

/** The samples as CSV, one line per process per sample, for plotting or a second look. */
function samplesCsv(samples) {
  const t0 = samples[0]?.t ?? 0;
  const kinds = MAPPING_KINDS.map(([k]) => k);
  const lines = [['seconds,pid,role,rss_kib,fds,threads', ...kinds.map((k) => `${k}_kib`)].join(',')];
  for (const { t, procs } of samples) {
    for (const [pid, p] of procs) {
      const byKind = kinds.map((k) => p.mappings?.[k] ?? '');
      lines.push([((t - t0) / 1000).toFixed(1), pid, JSON.stringify(p.role), p.rss, p.fds, p.threads, ...byKind].join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- traffic

/** Lets the traffic loops be paused between iterations, so samples are taken on a quiet app. */
class Gate {
  constructor() {
    this.paused = null;
    this.busy = 0;
    this.stopping = false;
    this.stopped = new Promise((r) => (this.onStop = r));
  }
  stop() {
    this.stopping = true;
    this.onStop();
    this.resume();
  }
  /** Sleeps `ms`, or less when the run is stopped. */
  sleep(ms) {
    return Promise.race([sleep(ms), this.stopped]);
  }
  pause() {
    let release;
    this.paused = new Promise((r) => (release = r));
    this.release = release;
  }
  resume() {
    const release = this.release;
    this.paused = null;
    release?.();
  }
  async loop(name, pauseMs, iteration) {
    for (let i = 0; !this.stopping; i++) {
      while (this.paused) await this.paused;
      if (this.stopping) break;
      this.busy++;
      try {
        await timed(name, () => iteration(i));
      } catch (e) {
        recordError(name, e);
        await sleep(1000); // don't turn a persistent failure into a flood of them
      } finally {
        this.busy--;
      }
      await sleep(pauseMs);
    }
  }
  async idle() {
    await waitFor('the traffic loops to finish their iteration', () => this.busy === 0, 180000, 100);
  }
}

const marker = (what, n) => ({ cmd: `printf '${what}-%s-done\\n' ${n}`, text: `${what}-${n}-done` });

async function waitTerminal(tools, nodeId, text, ms = 120000) {
  return waitFor(`"${text}" in terminal ${nodeId}`, async () => {
    const r = await tools.call('terminal_read', { nodeId, maxChars: 2000 });
    return typeof r.text === 'string' && r.text.includes(text) ? r : null;
  }, ms, 250);
}

async function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'termsprawl-soak-'));
  const home = path.join(root, 'home');
  fs.mkdirSync(home);
  let site;
  let app;
  let browser;
  let progress;
  let loops = [];
  const gate = new Gate();
  let interrupted = false;
  const onSignal = (sig) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    recordError('soak', new SoakFailure(`interrupted by ${sig}`));
    gate.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const result = { start: null, end: null, samples: [] };
  try {
    site = await servePages();
    // A private HOME: the shells' history and rc files stay out of the user's.
    // No desktop: terminal_external runs in canvas nodes, never in real terminal windows.
    app = await startApp({ args: ['--agent', 'agent-1', '--agent-browser-control'], env: { HOME: home, SHELL: '/bin/bash', DISPLAY: '', WAYLAND_DISPLAY: '' } });
    secrets.push(app.token);
    appPid = app.proc.pid;
    await waitFor('the agent-1 tool session', () => fs.existsSync(path.join(app.dataDir, 'agent-tools', 'sessions', 'agent-1.json')), 30000);
    const tools = new Tools(app.dataDir, 'agent-1');
    log(`app pid ${appPid} up; duration ${opts.duration} s, warm-up ${opts.warmup} s, a sample every ${opts.sampleEvery} s; limits: app RSS slope ${opts.appSlope} MiB/min, the rest ${opts.slope} MiB/min, fds and threads ${opts.countSlope}/min, total RSS growth ${opts.threshold}%, fd slack ${opts.fdSlack}`);

    const connect = () => puppeteer.connect({ browserURL: `${app.cdp}/?token=${app.token}`, defaultViewport: { width: 800, height: 600 }, protocolTimeout: 60000 });
    browser = await connect();

    // The long-lived nodes: the same set is open at both samples.
    const agentBrowser = (await tools.call('browser_open', { url: `${site.a}/` })).nodeId;
    const plainTerm = (await tools.call('terminal_open', { title: 'soak shell' })).nodeId;
    const floodTerm = (await tools.call('terminal_open', { title: 'soak flood' })).nodeId;
    const sticky = (await tools.call('sticky_open', { text: 'soak: long-lived sticky' })).nodeId;
    let page = await browser.newPage();
    await page.goto(`${site.a}/`);
    // The facade notices nodes opened through the tool server by polling (~0.5 s).
    const baseline = { nodes: (await tools.call('canvas_list', {})).map((n) => n.id).sort().join(','), pages: 2 };
    await waitFor('the long-lived browser nodes as pages', async () => (await browser.pages()).length === baseline.pages, 20000, 100);

    // -- tool calls: a round of everything an agent does, read-mostly.
    const tool = async (i) => {
      const list = await tools.call('canvas_list', {});
      check(Array.isArray(list) && list.some((n) => n.id === sticky), 'canvas_list lists the long-lived sticky');
      const info = await tools.call('session_info', {});
      check(info.identity?.nodeId === 'agent-1', 'session_info names agent-1');
      await tools.call('agent_status', {});
      const browsers = await tools.call('browser_list', {});
      check(browsers.some((b) => b.nodeId === agentBrowser && b.owner === 'agent-1'), 'browser_list shows the owned browser');
      const read = await tools.call('terminal_read', { nodeId: plainTerm, maxChars: 4000 });
      check(typeof read.text === 'string', 'terminal_read returns text');
      if (i % 5 === 0) await tools.call('terminal_submit', { nodeId: plainTerm, text: `printf 'tick %s\\n' ${i}` });
      await tools.call('canvas_move', { nodeId: sticky, x: 2000 + (i % 50) * 10, y: (i % 7) * 30 });
      await tools.call('canvas_resize', { nodeId: sticky, width: 200 + (i % 5) * 20, height: 150 + (i % 3) * 20 });
      await tools.call('canvas_select', { nodeIds: [sticky, plainTerm] });
      const nav = i % 2 ? `${site.a}/?nav=${i}` : `${site.b}/?nav=${i}`;
      const loaded = await tools.call('browser_navigate', { nodeId: agentBrowser, url: nav });
      check(loaded.url === nav, `browser_navigate loaded ${nav} (got ${loaded.url})`);
      const inspected = await tools.call('browser_inspect', { nodeId: agentBrowser, maxChars: 2000 });
      check(inspected.title === 'Home', `browser_inspect reads the page (title ${inspected.title})`);
      await tools.call('browser_click', { nodeId: agentBrowser, selector: '#btn' });
      await tools.call('browser_type', { nodeId: agentBrowser, selector: '#name', text: `soak ${i}` });
      if (i % 4 === 0) {
        const shot = await tools.call('browser_screenshot', { nodeId: agentBrowser });
        check(shot.mimeType === 'image/png' && shot.data?.length > 100, 'browser_screenshot returns a PNG');
      }
      if (i % 10 === 0) await tools.call('guide_read', { topic: 'terminal' });
    };

    // -- Puppeteer: navigation, evaluation, input, screenshots, short-lived pages.
    const pptrRound = async (i, at) => {
      if (!browser.connected) {
        recordError('puppeteer', new SoakFailure('the CDP connection dropped; reconnecting'));
        browser = await connect();
        page = (await browser.pages()).find((p) => p.url().startsWith(site.a) && !p.url().includes('churn')) ?? (await browser.newPage());
      }
      const url = `${site.a}/?p=${i}`;
      at('goto');
      const res = await page.goto(url, { waitUntil: 'load' });
      check(res?.status() === 200, `goto ${url}: status ${res?.status()}`);
      at('evaluate');
      check((await page.evaluate('6*7')) === 42, 'evaluate 6*7');
      at('click');
      await page.click('#btn');
      at('$eval');
      check((await page.$eval('#out', (e) => e.textContent)) === 'clicked 1', 'the click landed');
      at('type');
      await page.type('#name', 'soak');
      if (i % 3 === 0) {
        at('goto /colours');
        await page.goto(`${site.a}/colours`);
        at('screenshot');
        const png = decodePng(Buffer.from(await page.screenshot({ type: 'png' })));
        check(png.width === 800 && png.height === 600, `screenshot is 800x600 (got ${png.width}x${png.height})`);
      }
      if (i % 4 === 3) {
        // Issue 13's dropped connection: page.authenticate() (Fetch with handleAuthRequests, the
        // challenge answered with Fetch.continueWithAuth), then a new target right after it.
        at('authenticate');
        await page.authenticate({ username: AUTH[0], password: AUTH[1] });
        const signed = await page.goto(`${site.a}/auth?p=${i}`);
        check(signed?.status() === 200, `goto /auth with credentials: status ${signed?.status()}`);
        await page.authenticate(null);
        at('newPage after auth');
        const next = await browser.newPage();
        try {
          at('evaluate in the new page');
          check((await next.evaluate('6*7')) === 42, 'the page created after the auth flow works');
        } finally {
          await next.close();
        }
      }
      if (i % 4 === 1) {
        // A short-lived page with a cross-site iframe (its own renderer): churn through the facade.
        at('newPage for the frame host');
        const extra = await browser.newPage();
        try {
          at('goto /frame-host');
          await extra.goto(`${site.a}/frame-host`);
          const frame = await waitFor('the cross-site frame', () => extra.frames().find((f) => f.url().startsWith(site.b)), 15000);
          at('waitForSelector in the frame');
          await frame.waitForSelector('#inner', { timeout: 15000 });
        } finally {
          await extra.close();
        }
      }
    };

    // The step a round failed in goes with its error (a protocol timeout names only the CDP method).
    const pptr = async (i) => {
      let step = 'reconnect';
      try {
        await pptrRound(i, (name) => (step = name));
      } catch (e) {
        e.message = `${e.message} (at ${step}, round ${i})`;
        throw e;
      }
    };

    // -- terminal floods in a long-lived terminal, each read back once done.
    const floods = [
      { cmd: 'seq 1 300000', last: '300000' },
      { cmd: 'yes soak | head -c 20000000', last: 'soak' },
      { cmd: 'head -c 3000000 /dev/urandom | base64 -w 200', last: null },
      { cmd: 'ls -laR --color=always /usr/share 2>/dev/null | head -c 5000000', last: null },
    ];
    const flood = async (i) => {
      const f = floods[i % floods.length];
      const m = marker('flood', i);
      await tools.call('terminal_submit', { nodeId: floodTerm, text: `${f.cmd}; ${m.cmd}` });
      await waitTerminal(tools, floodTerm, m.text, 180000);
      const back = await tools.call('terminal_read', { nodeId: floodTerm, maxChars: 100000 });
      check(back.text.length > 1000, `the flood's output reads back (${back.text.length} chars)`);
      if (f.last) check(back.text.includes(`${f.last}\n${m.text}`), `the flood ends with ${f.last}`);
    };

    // -- node churn: terminals and browsers opened, used and closed.
    const churn = async (i) => {
      if (i % 2 === 0) {
        const m = marker('churn', i);
        const opened = i % 6 === 0
          ? await tools.call('terminal_external', { command: `seq 1 20000; ${m.cmd}; sleep 600`, title: `churn ${i}` })
          : await tools.call('terminal_open', { command: `seq 1 20000; ${m.cmd}`, title: `churn ${i}` });
        try {
          await waitTerminal(tools, opened.nodeId, m.text, 60000);
        } finally {
          await tools.call('terminal_close', { nodeId: opened.nodeId });
        }
        await waitFor(`terminal ${opened.nodeId} to leave the canvas`, async () => !(await tools.call('canvas_list', {})).some((n) => n.id === opened.nodeId), 20000, 200);
      } else {
        const url = `${site.b}/?churn=${i}`;
        const opened = await tools.call('browser_open', { url });
        check(opened.loaded === true, `browser_open ${url} loaded`);
        try {
          const seen = await tools.call('browser_inspect', { nodeId: opened.nodeId, maxChars: 500 });
          check(seen.url === url, `browser_inspect of the churned browser (url ${seen.url})`);
        } finally {
          // The catalogue has no browser close; a CDP client closes pages.
          const target = await browser.waitForTarget((t) => t.url() === url, { timeout: 20000 });
          await (await target.page()).close();
        }
        await waitFor(`browser ${opened.nodeId} to leave the canvas`, async () => !(await tools.call('browser_list', {})).some((b) => b.nodeId === opened.nodeId), 20000, 200);
      }
    };

    const settle = async (what) => {
      gate.pause();
      await gate.idle();
      try {
        await waitFor(`${what}: only the long-lived nodes`, async () => (await tools.call('canvas_list', {})).map((n) => n.id).sort().join(',') === baseline.nodes, 30000, 250);
        await waitFor(`${what}: only the long-lived pages`, async () => (await browser.pages()).length === baseline.pages, 30000, 250);
      } catch (e) {
        const pages = (await browser.pages().catch(() => [])).map((p) => p.url());
        const targets = browser.targets().map((t) => `${t.type()} ${t.url()}`);
        const nodes = await tools.call('browser_list', {}).catch(() => []);
        e.message += ` (pages: ${JSON.stringify(pages)}; targets: ${JSON.stringify(targets)}; browser nodes: ${JSON.stringify(nodes.map((n) => [n.nodeId, n.url]))})`;
        recordError('settle', e);
      }
      // Closed pages' renderers exit a moment later: wait until the process set holds still.
      await sleep(3000);
      let last = '';
      let same = 0;
      const until = Date.now() + 20000;
      while (same < 4 && Date.now() < until) {
        const now = [...snapshot(app.dataDir).keys()].sort().join(',');
        same = now === last ? same + 1 : 0;
        last = now;
        await sleep(500);
      }
      return snapshot(app.dataDir);
    };

    // Four clients side by side, each pausing between rounds so that a 2-core
    // machine keeps some room (the app and Chromium do the real work).
    loops = [
      gate.loop('round of tool calls', 200, tool),
      gate.loop('puppeteer round', 300, pptr),
      gate.loop('terminal flood', 1000, flood),
      gate.loop('node churn', 400, churn),
    ];

    let lastLog = 0;
    progress = setInterval(() => {
      // Under load, every few seconds: after the first quiet sample these are the slopes' points.
      const now = snapshot(app.dataDir);
      if (result.start && !result.end) result.samples.push({ t: Date.now(), procs: now });
      if (Date.now() - lastLog < 30000) return;
      lastLog = Date.now();
      const n = (prefix) => [...stats].filter(([k]) => k.startsWith(prefix)).reduce((a, [, s]) => a + s.n, 0);
      const appNow = [...now.values()].find((p) => p.role === 'app');
      log(`${n('tool ')} tool calls, ${n('puppeteer')} puppeteer rounds, ${n('terminal flood')} floods, ${n('node churn')} churns, ${errors.length} errors; RSS app ${mib(appNow?.rss ?? 0)} MiB, total ${mib(total(byRole(now)).rss)} MiB`);
    }, opts.sampleEvery * 1000);

    // Traffic time excludes the pauses taken to sample.
    await gate.sleep(opts.warmup * 1000);
    if (!gate.stopping) {
      log('warm-up over: quiescing for the first sample');
      result.start = await settle('first sample');
      result.samples.push({ t: Date.now(), procs: result.start });
      log(`first sample: ${result.start.size} processes, ${mib(total(byRole(result.start)).rss)} MiB`);
      gate.resume();
      await gate.sleep((opts.duration - opts.warmup) * 1000);
    }
    if (!gate.stopping) {
      log('traffic over: quiescing for the last sample');
      clearInterval(progress);
      result.end = await settle('last sample');
      result.samples.push({ t: Date.now(), procs: result.end });
      log(`last sample: ${result.end.size} processes, ${mib(total(byRole(result.end)).rss)} MiB`);
    }
    gate.stop();
    await Promise.all(loops);
  } catch (e) {
    recordError('soak', e);
    gate.stop();
  } finally {
    clearInterval(progress);
    if (browser?.connected) await browser.disconnect().catch(() => {});
    if (app) {
      const tmuxPids = tmuxServers(app.dataDir, processTable());
      const stopped = await app.stop();
      try {
        assertCleanStop(app, stopped);
      } catch (e) {
        recordError('app stop', e);
      }
      // The tmux server outlives the app by design (terminal persistence); this run's is ended here.
      const sock = path.join(app.dataDir, 'tmux', 'termsprawl.sock');
      const ended = [];
      for (const pid of tmuxPids) {
        try {
          if (cmdline(pid).includes(sock)) {
            process.kill(pid, 'SIGTERM');
            ended.push(pid);
          }
        } catch {} // already gone
      }
      // Its shells write their history into the run's HOME as they hang up:
      // wait for the server to be gone before removing the folder under them.
      for (let i = 0; i < 50 && ended.some((pid) => fs.existsSync(`/proc/${pid}`)); i++) await sleep(100);
    }
    await Promise.allSettled(loops);
    await site?.close();
    // A shell still finishing its history file makes rmdir meet ENOTEMPTY: retried.
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
  return result;
}

const { start, end, samples } = await main();
const verdicts = [];
console.log(`\nsoak: ${opts.duration} s of traffic (warm-up ${opts.warmup} s), sampled quiet after warm-up and at the end, and every ${opts.sampleEvery} s under load between`);
if (opts.samplesFile && samples.length) {
  fs.writeFileSync(opts.samplesFile, samplesCsv(samples));
  console.log(`samples written to ${opts.samplesFile}`);
}
if (start && end) {
  const r = report(start, end, samples);
  console.log(`\n${r.text}\n`);
  const totalGrowth = growth(r.total[0].rss, r.total[1].rss);
  const fdGrowth = r.app[1].fds - r.app[0].fds;
  // No fit (too few samples) cannot show flatness: it fails. `margin` standard
  // errors are allowed for counts, whose load-time swings (connections, PTYs of
  // churned nodes) are whole fds: a climb the samples show for sure still fails.
  const slopeVerdict = (name, f, limit, unit, digits, margin = 0) => {
    const ok = f != null && f.slope - margin * f.se <= limit;
    const allowed = margin ? ` + ${margin} s.e.` : '';
    verdicts.push([ok, `${name} ${f ? per(f, digits) : 'not measured'} ${unit} (limit ≤ ${limit}${allowed})`]);
  };
  const appFit = r.fits.get('app') ?? {};
  const rest = r.fits.get('TOTAL but app') ?? {};
  slopeVerdict('app RSS slope', appFit.rss, opts.appSlope, 'MiB/min', 3);
  slopeVerdict('RSS slope of the other kept processes', rest.rss, opts.slope, 'MiB/min', 3);
  for (const k of ['fds', 'threads']) slopeVerdict(`${k} slope of all kept processes`, r.fits.get('TOTAL')?.[k], opts.countSlope, '/min', 2, 2);
  verdicts.push([totalGrowth < opts.threshold, `total RSS growth ${pct(totalGrowth)}, every process (limit < ${opts.threshold}%)`]);
  verdicts.push([fdGrowth <= opts.fdSlack, `app fds ${r.app[0].fds} → ${r.app[1].fds} (limit +${opts.fdSlack})`]);
} else {
  verdicts.push([false, `no ${start ? 'last' : 'first'} sample: the run was cut short`]);
}
const rows = [['action', 'count', 'mean ms', 'max ms']];
for (const [k, s] of [...stats].sort(([a], [b]) => a.localeCompare(b))) rows.push([k, s.n, (s.total / s.n).toFixed(0), s.max.toFixed(0)]);
console.log(`${table(rows)}\n`);
verdicts.push([errors.length === 0, `${errors.length} errors`]);
for (const e of errors) console.log(`  error at ${e.at}s [${e.source}]: ${e.message}`);
for (const [ok, what] of verdicts) console.log(`${ok ? 'PASS' : 'FAIL'}  ${what}`);
process.exitCode = verdicts.every(([ok]) => ok) ? 0 : 1;
