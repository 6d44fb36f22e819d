// termsprawl diff vs odiff and pixelmatch, run by bench/diff/run with two
// screenshots: wall time of each tool's whole process (decode both PNGs,
// compare, encode and write the diff PNG), interleaved, medians, ratios; then
// the changed-pixel counts of all three on the screenshots and on generated
// pairs. Not a test: nothing here asserts a time.
//
// odiff is timed as its native binary (what odiff-bin's node launcher spawns),
// so node's start-up is not charged to it; pixelmatch's CLI is node itself.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(repo, 'tests/cdp/package.json'));
const { PNG } = require('pngjs');
const odiffBin = require('odiff-bin/binary.js').findBinary();
const pixelmatchBin = path.join(path.dirname(require.resolve('pixelmatch/package.json')), 'bin/pixelmatch');
const ours = process.env.TERMSPRAWL_BIN;
const RUNS = Number(process.env.RUNS || 15);
const [a, b, work] = process.argv.slice(2);

/** The command line of each tool; `aa` asks it to leave anti-aliasing pixels out. */
const tools = {
  termsprawl: (x, y, out, aa) => [ours, ['diff', x, y, '-o', out, ...(aa ? ['--ignore-antialiasing'] : [])]],
  odiff: (x, y, out, aa) => [odiffBin, [x, y, out, ...(aa ? ['--antialiasing'] : [])]],
  // pixelmatch's CLI: image1 image2 diff threshold includeAA
  pixelmatch: (x, y, out, aa) => [process.execPath, [pixelmatchBin, x, y, out, '0.1', aa ? 'false' : 'true']],
};

/** Changed pixels from a tool's stdout. */
const counts = {
  termsprawl: (s) => Number(/: (\d+) of \d+ pixels/.exec(s)?.[1]),
  odiff: (s) => (/identical/.test(s) ? 0 : Number(/Found (\d+) different/.exec(s)?.[1])),
  pixelmatch: (s) => Number(/different pixels: (\d+)/.exec(s)?.[1]),
};

function run(tool, x, y, aa) {
  const [cmd, args] = tools[tool](x, y, path.join(work, `${tool}-diff.png`), aa);
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error || r.status === null || (tool === 'termsprawl' && r.status > 1)) {
    throw new Error(`${tool} failed: ${r.error ?? r.status} ${r.stderr}`);
  }
  return { ms, count: counts[tool](r.stdout + r.stderr) };
}

const median = (xs) => {
  const s = [...xs].sort((p, q) => p - q);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

console.log(`== wall time, 1920x1080 screenshot pair, ${RUNS} interleaved runs each ==`);
for (const aa of [false, true]) {
  const times = { termsprawl: [], odiff: [], pixelmatch: [] };
  const names = Object.keys(times);
  for (const n of names) run(n, a, b, aa); // warm the page cache
  for (let i = 0; i < RUNS; i++) {
    // Rotate the order so no tool always runs right after another.
    for (let k = 0; k < names.length; k++) {
      const n = names[(i + k) % names.length];
      times[n].push(run(n, a, b, aa).ms);
    }
  }
  const med = Object.fromEntries(names.map((n) => [n, median(times[n])]));
  console.log(aa ? 'anti-aliasing left out (--ignore-antialiasing / --antialiasing / includeAA=false):' : 'anti-aliasing counted (defaults of termsprawl and odiff; pixelmatch includeAA=true):');
  for (const n of names) console.log(`  ${n.padEnd(15)} median ${med[n].toFixed(1).padStart(7)} ms   (min ${Math.min(...times[n]).toFixed(1)}, max ${Math.max(...times[n]).toFixed(1)})`);
  console.log(`  ratio termsprawl/odiff: ${(med.termsprawl / med.odiff).toFixed(3)}   termsprawl/pixelmatch: ${(med.termsprawl / med.pixelmatch).toFixed(3)}`);
}

// ---- generated pairs for the count comparison
function writePng(file, w, h, fill) {
  const png = new PNG({ width: w, height: h });
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const [r, g, bl, al] = fill(x, y);
      const i = (y * w + x) * 4;
      png.data[i] = r; png.data[i + 1] = g; png.data[i + 2] = bl; png.data[i + 3] = al ?? 255;
    }
  }
  fs.writeFileSync(file, PNG.sync.write(png));
  return file;
}
let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const disc = (cx, cy, r) => (x, y) => { // coverage of a disc, 4x4 supersampled
  let inside = 0;
  for (let sy = 0; sy < 4; sy++) for (let sx = 0; sx < 4; sx++) {
    const dx = x + (sx + 0.5) / 4 - cx, dy = y + (sy + 0.5) / 4 - cy;
    inside += dx * dx + dy * dy <= r * r;
  }
  return inside / 16;
};
const W = 400, H = 300;
const noise = Array.from({ length: W * H }, () => [rand() * 256 | 0, rand() * 256 | 0, rand() * 256 | 0]);
const touched = new Map(Array.from({ length: 600 }, () => [(rand() * W * H) | 0, (rand() * 60 - 30) | 0]));
const clamp = (v) => Math.max(0, Math.min(255, v));
const pairs = [
  ['screenshots 1920x1080', a, b],
  ['noise, 600 pixels nudged', writePng(path.join(work, 'n1.png'), W, H, (x, y) => noise[y * W + x]),
    writePng(path.join(work, 'n2.png'), W, H, (x, y) => { const d = touched.get(y * W + x) ?? 0; return noise[y * W + x].map((c) => clamp(c + d)); })],
  ['rectangle moved 1px', writePng(path.join(work, 'r1.png'), W, H, (x, y) => (x >= 50 && x < 250 && y >= 40 && y < 200 ? [30, 90, 200] : [255, 255, 255])),
    writePng(path.join(work, 'r2.png'), W, H, (x, y) => (x >= 51 && x < 251 && y >= 40 && y < 200 ? [30, 90, 200] : [255, 255, 255]))],
  ['anti-aliased discs shifted 0.3px', writePng(path.join(work, 'd1.png'), W, H, (x, y) => { const c = 255 - 255 * Math.max(disc(100, 150, 60)(x, y), disc(280, 150, 80)(x, y)); return [c, c, c]; }),
    writePng(path.join(work, 'd2.png'), W, H, (x, y) => { const c = 255 - 255 * Math.max(disc(100.3, 150, 60)(x, y), disc(280.3, 150.2, 80)(x, y)); return [c, c, c]; })],
  ['gradient, band brightened', writePng(path.join(work, 'g1.png'), W, H, (x) => [x * 255 / W | 0, 128, 255 - (x * 255 / W | 0)]),
    writePng(path.join(work, 'g2.png'), W, H, (x, y) => { const d = y < 100 ? 2 : y < 200 ? 12 : 40; return [clamp((x * 255 / W | 0) + d), 128, 255 - (x * 255 / W | 0)]; })],
  ['half-transparent overlay', writePng(path.join(work, 't1.png'), W, H, (x, y) => [200, 40, 40, (x + y) % 256]),
    writePng(path.join(work, 't2.png'), W, H, (x, y) => [200, 40, 40, clamp(((x + y) % 256) + (x % 3 === 0 ? 25 : 0))])],
];

const counted = ['termsprawl', 'odiff', 'pixelmatch'];
console.log('\n== changed pixels (threshold 0.1): termsprawl / odiff / pixelmatch ==');
console.log('  pixelmatch 8 measures colour by OKLab HyAB, termsprawl and odiff by YIQ: expect them apart near the threshold.');
for (const [name, x, y] of pairs) {
  const row = [false, true].map((aa) => counted.map((n) => run(n, x, y, aa).count).join(' / '));
  console.log(`  ${name.padEnd(34)} AA counted: ${row[0].padEnd(22)} AA left out: ${row[1]}`);
}
