// How long a player waits for the computer's first move in the page, from
// the click on their own: with an empty browser cache (the engine fetched
// and compiled) and a warm one, on this machine's CPU and slowed 4× as
// Lighthouse slows a phone; and each level's time a move after that, on
// one Worker and on the page's own count (one a core, up to four), in one
// run. `npm run bench:first-move` (TTAKJI_BIN: a release build is best).
import { launch, player, point, startServer } from "../tests/harness.mjs";

const RUNS = Number(process.env.RUNS ?? 3);
const server = await startServer();
const browser = await launch();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function slow(page, rate) {
  if (rate > 1) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate });
  }
}

/** Milliseconds from clicking `mine` (or, if the computer took it, the
 * first empty point of a few others) to the computer's stone number `n`. */
async function reply(page, mine, n) {
  let at = mine;
  for (const other of [mine, "D6", "F4", "D4", "F6", "G5"]) {
    if (await page.getByRole("button", { name: new RegExp(`^${other}, empty`) }).count()) {
      at = other;
      break;
    }
  }
  const start = await page.evaluate(() => performance.now());
  await point(page, at).click();
  await page.waitForFunction((k) => document.querySelectorAll('[aria-label*="white stone"]').length >= k, n, { timeout: 120_000 });
  await page.getByText("Your turn").waitFor();
  return (await page.evaluate(() => performance.now())) - start;
}

async function newGame(page, level) {
  await page.goto("/");
  await page.getByLabel("Level").selectOption({ label: level });
  await page.getByLabel("Your colour").selectOption({ label: "Black (you start)" });
  await page.getByRole("button", { name: "Play the computer" }).click();
  await page.getByText("Your turn").waitFor();
}

const device = await (async () => {
  const page = await browser.newPage();
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  await page.close();
  return cores;
})();

for (const [rate, cores] of [[1, 1], [1, device], [4, 1], [4, device]]) {
  const cold = [];
  const warm = [];
  const perMove = { Easy: [], Normal: [], Hard: [] };
  for (let run = 0; run < RUNS; run++) {
    const page = await player(browser, server.url, `first-${rate}-${cores}-${run}`);
    // As many Workers as the page would run on a device with `cores` cores.
    await page.addInitScript((n) => Object.defineProperty(navigator, "hardwareConcurrency", { get: () => n }), cores);
    await page.getByLabel("Level").waitFor();
    await slow(page, rate);
    await newGame(page, "Easy");
    cold.push(await reply(page, "E5", 1));
    await newGame(page, "Easy");
    warm.push(await reply(page, "E5", 1));
    for (const level of Object.keys(perMove)) {
      await newGame(page, level);
      await reply(page, "E5", 1);
      perMove[level].push(await reply(page, "C3", 2), await reply(page, "G7", 3));
    }
    await page.context().close();
  }
  const ms = (x) => `${Math.round(x).toLocaleString("en")} ms`;
  const workers = `${Math.min(cores, 4)} Worker${cores > 1 ? "s" : ""}`;
  console.log(`CPU ${rate === 1 ? "as is" : `${rate}× slower`}, ${workers}: first computer move (Easy) cold cache ${ms(median(cold))}, warm ${ms(median(warm))}; ` +
    Object.entries(perMove).map(([l, xs]) => `${l} ${ms(median(xs))} a move`).join(", ") + ` (medians of ${RUNS} runs)`);
}
// The server's CPU for a whole game against Hard: thought in the page, and
// thought on the server (the page's engine blocked, so the server thinks).
for (const where of ["in the page", "on the server"]) {
  const page = await player(browser, server.url, `cost-${where.length}`);
  await page.getByLabel("Level").waitFor();
  if (where === "on the server") await page.route("**/*.wasm", (r) => r.abort("blockedbyclient"));
  const before = server.cpuSeconds();
  await newGame(page, "Hard");
  let moves = 0;
  for (const mine of ["C3", "G7", "C7", "G3", "E5", "D4", "F6", "E3", "E7", "C5", "G5", "D6", "F4"]) {
    const empty = await page.getByRole("button", { name: new RegExp(`^${mine}, empty`) }).count();
    if (!empty) continue;
    await point(page, mine).click();
    moves++;
    await Promise.race([
      page.waitForFunction((k) => document.querySelectorAll('[aria-label*="white stone"]').length >= k || document.body.textContent.includes("The game is over"), 0, { timeout: 120_000 }),
    ]);
    await page.getByText("Your turn").or(page.getByText("The game is over")).first().waitFor({ timeout: 120_000 });
    if (await page.getByText("The game is over").count()) break;
  }
  const cpu = server.cpuSeconds() - before;
  console.log(`Hard, the computer thinking ${where}: the server's CPU ${cpu.toFixed(2)} s over ${moves} of the player's moves and their replies`);
  await page.context().close();
}
await browser.close();
await server.stop();
