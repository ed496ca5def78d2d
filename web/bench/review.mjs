// How long the page's review of a finished 9×9 game of 60 moves takes in
// Chromium: on this machine's CPU, and slowed 4× as Lighthouse slows a
// phone. The game is the first 60 moves of a GNU Go game from the
// dead-stone corpus (017), played between two pages and then resigned.
// `npm run bench:review` (TTAKJI_BIN: a release build is best).
import { readFileSync } from "node:fs";
import { launch, player, point, startServer } from "../tests/harness.mjs";

const server = await startServer();
const browser = await launch();
const record = readFileSync(new URL("../../crates/baduk/tests/data/gnugo-finished/017.sgf", import.meta.url), "utf8");
const moves = [...record.matchAll(/;[BW]\[([a-i]{2})\]/g)].slice(0, 60).map(([, at]) => `${"ABCDEFGHJ"[at.charCodeAt(0) - 97]}${9 - (at.charCodeAt(1) - 97)}`);

const host = await player(browser, server.url, "bench-host");
await host.getByRole("button", { name: "Invite a friend by link" }).click();
const link = await host.getByLabel("Send this link to your friend").inputValue();
const friend = await player(browser, server.url, "bench-friend", { path: new URL(link).pathname });
for (const page of [host, friend]) await page.waitForURL(/\/g\//);
await host.getByText(/Your turn|to move/).first().waitFor();
const hostIsBlack = (await host.getByText("Your turn").count()) > 0;
const [black, white] = hostIsBlack ? [host, friend] : [friend, host];
for (const [i, at] of moves.entries()) {
  const page = i % 2 === 0 ? black : white;
  await page.getByText("Your turn").waitFor();
  await point(page, at).click();
  await page.getByRole("button", { name: new RegExp(`^${at}, (black|white) stone, last move`) }).waitFor();
}
await black.getByText("Your turn").waitFor();
await black.getByRole("button", { name: "Resign" }).click();
await black.getByRole("button", { name: "Really resign?" }).click();
await white.getByRole("button", { name: "Review this game" }).waitFor();

const game = new URL(white.url()).pathname;
// Each run in a fresh browser context whose CPU is slowed before the page
// loads, so that its Workers start slowed too.
for (const rate of [1, 4]) {
  const page = await player(browser, server.url, `bench-rate-${rate}`);
  await page.getByRole("heading", { name: "Play the computer" }).waitFor();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setCPUThrottlingRate", { rate });
  await page.goto(game);
  await page.getByRole("button", { name: "Review this game" }).click();
  const start = Date.now();
  const took = await page.getByText(/^Reviewed in /).textContent({ timeout: 900_000 });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  console.log(`review of 60 moves (61 positions, 3000 playouts each), CPU ${rate === 1 ? "as is" : `slowed ${rate}×`}, ${cores} cores: ${((Date.now() - start) / 1000).toFixed(1)} s (the page says: ${took})`);
  await page.context().close();
}

await browser.close();
await server.stop();
