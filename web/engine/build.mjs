// Builds the WebAssembly engine (crates/baduk-wasm) for the browser and
// Node and puts it beside this file as engine.wasm: `npm run build` runs
// this first. Needs the rustup target: `rustup target add
// wasm32-unknown-unknown`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const target = process.env.CARGO_TARGET_DIR ?? join(root, 'target');
const args = [
  'build',
  '--profile', 'wasm',
  '--target', 'wasm32-unknown-unknown',
  '-p', 'baduk-wasm',
  '--locked',
];
execFileSync('cargo', args, { cwd: root, stdio: 'inherit' });
mkdirSync(here, { recursive: true });
copyFileSync(join(target, 'wasm32-unknown-unknown', 'wasm', 'baduk_wasm.wasm'), join(here, 'engine.wasm'));
console.log('engine.wasm built');
