// Writes a gzipped copy beside every text file of dist/ (`name.gz`), which
// the gateway sends to browsers that take gzip. Deterministic: the same
// build gives the same bytes, so CI can compare it with the committed one.
import { gzipSync } from "node:zlib";
import { readdirSync, readFileSync, writeFileSync, statSync } from "node:fs";
import { join } from "node:path";

const dist = new URL("../dist/", import.meta.url).pathname;
let plain = 0;
let zipped = 0;
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.(html|js|css|svg|json|wasm)$/.test(name)) {
      const data = readFileSync(path);
      const gz = gzipSync(data, { level: 9 });
      writeFileSync(`${path}.gz`, gz);
      plain += data.length;
      zipped += gz.length;
    }
  }
}
walk(dist);
console.log(`gzipped the page: ${plain} bytes → ${zipped} bytes`);
