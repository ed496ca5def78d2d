// How long a player waits for a board they can play on, on loopback:
// from the start of the page's navigation to the moment the board of a game
// in progress shows its stones (a reload mid-game, or a shared game link,
// with an empty browser cache and with a warm one), and to the lobby's
// first button. Also the sizes of the embedded page. `npm run bench` in
// web/, after `cargo build --release` (TTAKJI_BIN picks another build).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { startServer, launch, player, point } from "../tests/harness.mjs";

const RUNS = Number(process.env.RUNS ?? 20);
const dist = new URL("../app/dist/", import.meta.url).pathname;

function sizes() {
  let plain = 0;
  let gzip = 0;
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".gz")) gzip += statSync(path).size;
      else plain += statSync(path).size;
    }
  };
  walk(dist);
  return { plain, gzip };
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (x) => `${x.toFixed(0)} ms`;

// Each page notes the moment (performance.now(), from its navigation's
// start) that the DOM first shows a game's board with its stones, and the
// lobby's first button, as the change that makes it happens.
function watchForReady() {
  const seen = (window.__ready = {});
  new MutationObserver(() => {
    const now = performance.now();
    if (!seen.board && document.querySelector('[aria-label="Go board"] button[aria-label^="E5, black stone"]')) {
      seen.board = now;
    }
    if (!seen.lobby && [...document.querySelectorAll("button")].some((b) => b.textContent === "Play the computer")) {
      seen.lobby = now;
    }
  }).observe(document, { subtree: true, childList: true, attributes: true });
}

/** Milliseconds from the start of navigating to `path` until the page shows `what`. */
async function timeTo(page, path, what) {
  await page.goto(path, { waitUntil: "commit" });
  const at = await page.waitForFunction((w) => window.__ready?.[w], what, { timeout: 30_000 });
  return at.jsonValue();
}

const server = await startServer();
const browser = await launch();
try {
  const first = await player(browser, server.url, "bench-ben");
  await first.getByRole("button", { name: "Play the computer" }).click();
  await point(first, "E5").click();
  await first.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 30_000 });
  const game = new URL(first.url()).pathname;
  const state = await first.context().storageState();
  const cold = [];
  const warm = [];
  const lobby = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ baseURL: server.url, storageState: state });
    await context.addInitScript(watchForReady);
    const page = await context.newPage();
    cold.push(await timeTo(page, game, "board"));
    warm.push(await timeTo(page, game, "board"));
    lobby.push(await timeTo(page, "/", "lobby"));
    await context.close();
  }
  const { plain, gzip } = sizes();
  console.log(`page as embedded: ${(plain / 1024).toFixed(1)} KiB, gzipped ${(gzip / 1024).toFixed(1)} KiB`);
  for (const [what, xs] of [
    ["a game's board, empty cache", cold],
    ["a game's board, warm cache", warm],
    ["the lobby, warm cache", lobby],
  ]) {
    console.log(`${what}: median ${ms(quantile(xs, 0.5))}, p90 ${ms(quantile(xs, 0.9))}, worst ${ms(Math.max(...xs))} (${xs.length} loads)`);
  }
} finally {
  await browser.close();
  await server.stop();
}
