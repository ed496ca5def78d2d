#!/usr/bin/env node
// GTP version 2 on stdin/stdout with the WebAssembly engine, the build the
// browser runs: `node web/engine/gtp.mjs [--level easy|normal|hard]
// [--seed N] [--playouts N] [--seconds S]`, after `npm --prefix web ci &&
// npm --prefix web run build`. The same commands as `ttakji gtp`, so a
// match runner or GoGui measures the browser's engine as it measures the
// server's.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { loadEngine } from './engine.mjs';

const usage = 'usage: node web/engine/gtp.mjs [--level easy|normal|hard] [--seed N] [--playouts N] [--seconds S]';

function options(argv) {
  const o = { level: 'normal', seed: undefined, playouts: 0, millis: 0 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value\n${usage}`);
      return v;
    };
    if (flag === '--level') {
      o.level = value().toLowerCase();
    } else if (flag === '--seed') {
      const v = value();
      if (!/^\d+$/.test(v)) throw new Error(`--seed must be a whole number, not ${v}`);
      o.seed = BigInt(v);
    } else if (flag === '--playouts') {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 1) throw new Error(`--playouts must be a whole number above 0`);
      o.playouts = v;
    } else if (flag === '--seconds') {
      const v = Number(value());
      if (!(v > 0)) throw new Error(`--seconds must be a positive number`);
      o.millis = Math.max(1, Math.round(v * 1000));
    } else if (flag === '--help' || flag === '-h') {
      console.log(usage);
      process.exit(0);
    } else {
      throw new Error(`unknown option ${flag}\n${usage}`);
    }
  }
  if (o.seed === undefined) {
    const words = crypto.getRandomValues(new Uint32Array(2));
    o.seed = (BigInt(words[0]) << 32n) | BigInt(words[1]);
  }
  return o;
}

let opts;
let engine;
try {
  opts = options(process.argv.slice(2));
  const wasm = new URL('./engine.wasm', import.meta.url);
  let bytes;
  try {
    bytes = readFileSync(wasm);
  } catch (e) {
    throw new Error(`cannot read ${wasm.pathname} (${e.code}): build it with \`npm --prefix web run build\``);
  }
  engine = await loadEngine(bytes);
  engine.start(opts);
} catch (e) {
  console.error(e.message);
  process.exit(2);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const reply = engine.gtp(line);
  if (reply) process.stdout.write(reply);
  if (engine.ended) break;
}
lines.close();
