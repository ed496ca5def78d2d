// How fast the WebAssembly engine searches against the native one, in one
// run on one machine: playouts a second of each level's search, natively
// (`ttakji gtp`), in Node and in Chromium, with SIMD and without, and the
// time a move of each level takes, on a desktop CPU and slowed 4× as
// Lighthouse slows a phone. `npm run bench:engine` (needs a release build:
// TTAKJI_BIN or target/release/ttakji, and `npm run build`).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { loadEngine } from '../engine/engine.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const engineDir = join(here, '..', 'engine');
const native = process.env.TTAKJI_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'release', 'ttakji');
const ROUNDS = Number(process.env.ROUNDS ?? 3);

// A middle-game position (a Hard game's first 24 moves) and the empty board.
const MIDGAME = 'E5 D3 C4 D4 C3 C2 D5 E4 F4 F3 F5 G3 B2 D2 G4 H4 G5 H5 H6 E3 B1 C5 B5 J6'.split(' ');
const POSITIONS = [[], MIDGAME];
const setup = (moves) => moves.map((v, i) => `play ${i % 2 ? 'w' : 'b'} ${v}`);
const toMove = (moves) => (moves.length % 2 ? 'w' : 'b');
// A fixed search, no early stop: the rate, not the time management.
const SEARCH = { easy: 400, normal: 3000, hard: 20000 };

// The engine with 128-bit SIMD, built beside the shipped one (without:
// SIMD gained nothing measurable here, and older browsers lack it).
function buildSimd() {
  const target = join(root, 'target', 'wasm-simd');
  execFileSync('cargo', ['build', '--profile', 'wasm', '--target', 'wasm32-unknown-unknown', '-p', 'baduk-wasm', '--locked'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CARGO_TARGET_DIR: target, CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS: '-C target-feature=+simd128' },
  });
  copyFileSync(join(target, 'wasm32-unknown-unknown', 'wasm', 'baduk_wasm.wasm'), join(engineDir, 'engine-simd.wasm'));
}

function stats(reply) {
  const [, playouts, ms] = /playouts (\d+) ms ([\d.]+)/.exec(reply);
  return { playouts: Number(playouts), ms: Number(ms) };
}

/** Runs the searches through `gtp(line) -> Promise<reply>`; per level, the
 * summed playouts and milliseconds. */
async function measure(gtp) {
  const out = {};
  for (const [level, playouts] of Object.entries(SEARCH)) {
    let n = 0;
    let ms = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const moves of POSITIONS) {
        await gtp(`ttakji-start ${level} ${playouts} ${r + 1}`);
        for (const line of setup(moves)) await gtp(line);
        await gtp(`reg_genmove ${toMove(moves)}`);
        const s = stats(await gtp('ttakji-last_search'));
        n += s.playouts;
        ms += s.ms;
      }
    }
    out[level] = { rate: (n / ms) * 1000 };
  }
  return out;
}

/** The native engine: one `ttakji gtp` process per level and seed. */
async function nativeGtp() {
  let child = null;
  let pending = null;
  let buffer = '';
  const send = (line) => new Promise((resolve) => {
    pending = resolve;
    child.stdin.write(`${line}\n`);
  });
  return async (line) => {
    const start = /^ttakji-start (\w+) (\d+) (\d+)$/.exec(line);
    if (start) {
      child?.stdin.end();
      child = spawn(native, ['gtp', '--level', start[1], '--playouts', start[2], '--seed', start[3], '--tune', 'time_extension=0'], { stdio: ['pipe', 'pipe', 'inherit'] });
      buffer = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d) => {
        buffer += d;
        const end = buffer.indexOf('\n\n');
        if (end >= 0 && pending) {
          const reply = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const p = pending;
          pending = null;
          p(reply);
        }
      });
      return '=';
    }
    return send(line);
  };
}

function wasmGtp(engine) {
  return async (line) => {
    const start = /^ttakji-start (\w+) (\d+) (\d+)$/.exec(line);
    if (start) {
      engine.start({ level: start[1], playouts: Number(start[2]), seed: BigInt(start[3]) });
      engine.ask('ttakji-tune time_extension=0');
      return '=';
    }
    return engine.gtp(line);
  };
}

function serveEngineDir() {
  const server = createServer((req, res) => {
    const name = new URL(req.url, 'http://x').pathname.slice(1) || 'index.html';
    if (name === 'index.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<!doctype html><title>engine</title>');
    }
    try {
      const body = readFileSync(join(engineDir, name));
      const type = name.endsWith('.wasm') ? 'application/wasm' : 'text/javascript';
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Each level's searches in Chromium, at `throttle`× slower CPU. */
async function inChromium(browser, base, wasmName, throttle) {
  const page = await browser.newPage();
  await page.goto(`${base}/index.html`);
  if (throttle > 1) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
  }
  const result = await page.evaluate(async ({ wasmName, SEARCH, POSITIONS, ROUNDS }) => {
    const { loadEngine } = await import('/engine.mjs');
    const engine = await loadEngine(fetch(`/${wasmName}`));
    const out = {};
    for (const [level, playouts] of Object.entries(SEARCH)) {
      let n = 0;
      let ms = 0;
      for (let r = 0; r < ROUNDS; r++) {
        for (const moves of POSITIONS) {
          engine.start({ level, playouts, seed: BigInt(r + 1) });
          engine.ask('ttakji-tune time_extension=0');
          moves.forEach((v, i) => engine.ask(`play ${i % 2 ? 'w' : 'b'} ${v}`));
          engine.ask(`reg_genmove ${moves.length % 2 ? 'w' : 'b'}`);
          const [, p, t] = /playouts (\d+) ms ([\d.]+)/.exec(engine.ask('ttakji-last_search'));
          n += Number(p);
          ms += Number(t);
        }
      }
      out[level] = { rate: (n / ms) * 1000 };
    }
    return out;
  }, { wasmName, SEARCH, POSITIONS, ROUNDS });
  await page.close();
  return result;
}

function table(rows) {
  const levels = Object.keys(SEARCH);
  const base = rows[0][1];
  console.log(`| engine | ${levels.map((l) => `${l} playouts/s (× native)`).join(' | ')} |`);
  console.log(`|---|${levels.map(() => '---').join('|')}|`);
  for (const [name, r] of rows) {
    console.log(`| ${name} | ${levels.map((l) => `${Math.round(r[l].rate).toLocaleString('en')} (${(r[l].rate / base[l].rate).toFixed(2)})`).join(' | ')} |`);
  }
}

buildSimd();
const rows = [];
rows.push(['native (ttakji gtp)', await measure(await nativeGtp())]);
rows.push(['WASM, Node', await measure(wasmGtp(await loadEngine(readFileSync(join(engineDir, 'engine.wasm')))))]);
rows.push(['WASM SIMD, Node', await measure(wasmGtp(await loadEngine(readFileSync(join(engineDir, 'engine-simd.wasm')))))]);
const server = await serveEngineDir();
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking'],
});
rows.push(['WASM, Chromium', await inChromium(browser, base, 'engine.wasm', 1)]);
rows.push(['WASM SIMD, Chromium', await inChromium(browser, base, 'engine-simd.wasm', 1)]);
rows.push(['WASM, Chromium, CPU 4× slower', await inChromium(browser, base, 'engine.wasm', 4)]);
await browser.close();
server.close();
table(rows);
