// The computer thinks in the page: the WebAssembly engine in a Web Worker,
// loaded only for a game against the computer, whose moves the page plays
// for it. The server checks and records them and never thinks for it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, player, point, startServer, stones } from "./harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The server's thinking so far: how many moves its engine has thought. */
const serverThinks = () => server.metric("ttakji_ai_think_seconds_count");

async function startAgainst(page, level) {
  await page.getByLabel("Level").selectOption({ label: level });
  await page.getByLabel("Your colour").selectOption({ label: "Black (you start)" });
  await page.getByRole("button", { name: "Play the computer" }).click();
  await page.getByRole("group", { name: "Go board" }).waitFor();
  await page.getByText("Your turn").waitFor();
}

/** The board's size and what each point holds, from the page. */
async function emptyPoints(page) {
  return page
    .getByRole("group", { name: "Go board" })
    .getByRole("button", { name: /, empty/ })
    .evaluateAll((buttons) => buttons.map((b) => b.getAttribute("aria-label").split(",")[0]));
}

/** Plays Black's turns from `moves` (the first still empty), then passes, until the game ends. */
async function playToTheEnd(page, moves) {
  for (let turn = 0; turn < 200; turn++) {
    const state = await Promise.race([
      page.getByText("Your turn").waitFor({ timeout: 120_000 }).then(() => "turn"),
      page.getByText("The game is over").waitFor({ timeout: 120_000 }).then(() => "over"),
    ]);
    if (state === "over") return;
    const empty = new Set(await emptyPoints(page));
    const next = moves.find((m) => empty.has(m));
    const before = await page.locator("p.turn").textContent();
    if (next) {
      moves.splice(moves.indexOf(next), 1);
      await point(page, next).click();
    } else {
      await page.getByRole("button", { name: "Pass", exact: true }).click();
    }
    // The move went in (or was refused and another is tried).
    await page.waitForFunction((b) => document.querySelector("p.turn")?.textContent !== b || document.querySelector("[role=alert]")?.textContent, before, { timeout: 10_000 }).catch(() => {});
  }
  assert.fail("the game did not end in 200 turns");
}

for (const level of ["Easy", "Normal", "Hard"]) {
  test(`a whole 9x9 game against ${level} is thought in the page, and the server thinks for none of it`, async () => {
    const thought = await serverThinks();
    const clientGames = await server.metric("ttakji_ai_games_started_total", 'engine="client"');
    const page = await player(browser, server.url, `whole-${level.toLowerCase()}`);
    const engine = [];
    page.on("request", (r) => {
      if (r.url().endsWith(".wasm")) engine.push(r.url());
    });
    const workers = [];
    page.on("worker", (w) => workers.push(w.url()));
    assert.equal(engine.length, 0, "the lobby loads no engine");
    await startAgainst(page, level);
    assert.equal(await server.metric("ttakji_ai_games_started_total", 'engine="client"'), clientGames + 1);
    await playToTheEnd(page, ["C3", "G7", "C7", "G3", "E5", "D4", "F6", "E3", "E7", "C5", "G5", "D6", "F4"]);
    await page.getByRole("region", { name: "Result" }).or(page.locator(".after h3")).first().waitFor();
    assert.ok((await stones(page, "white")) > 0, "the computer played");
    assert.equal(engine.length, 1, "the engine was fetched once");
    // One Worker a core, up to four, each searching a tree of every move.
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    assert.equal(workers.length, Math.min(Math.max(cores, 1), 4), `Workers on ${cores} cores`);
    assert.match(engine[0], /\/assets\/engine-[\w-]+\.wasm$/, "under a content-hashed name");
    assert.equal(await serverThinks(), thought, "the server's engine did not move");
    await page.context().close();
  });
}

test("a reload while the computer is to move has the page think and play", async () => {
  const thought = await serverThinks();
  const page = await player(browser, server.url, "reload-hard");
  await startAgainst(page, "Hard");
  await point(page, "E5").click();
  await point(page, "E5").and(page.getByRole("button", { name: /black stone/ })).waitFor();
  await page.reload();
  await page.getByRole("group", { name: "Go board" }).waitFor();
  await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 60_000 });
  await page.getByText("Your turn").waitFor();
  assert.equal(await stones(page, "white"), 1, "one reply, not two");
  assert.equal(await serverThinks(), thought);
  await page.context().close();
});

test("undo takes back the move and the page's reply", async () => {
  const page = await player(browser, server.url, "undo-client");
  await startAgainst(page, "Normal");
  await point(page, "E5").click();
  await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 30_000 });
  await page.getByText("Your turn").waitFor();
  await page.getByRole("button", { name: "Undo" }).click();
  await point(page, "E5").and(page.getByRole("button", { name: "E5, empty" })).waitFor();
  assert.equal(await stones(page, "white"), 0);
  await point(page, "D4").click();
  await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 30_000 });
  assert.equal(await stones(page, "black"), 1);
  assert.equal(await stones(page, "white"), 1);
  await page.context().close();
});

test("when the engine cannot load, the server thinks instead and the page says so", async () => {
  const thought = await serverThinks();
  const page = await player(browser, server.url, "blocked-engine");
  await page.route("**/*.wasm", (route) => route.abort("blockedbyclient"));
  await startAgainst(page, "Easy");
  await point(page, "E5").click();
  await page.getByText(/The computer could not start in this browser .*: it thinks on the server instead\./).waitFor({ timeout: 30_000 });
  await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 30_000 });
  await page.getByText("Your turn").waitFor();
  assert.ok((await serverThinks()) > thought, "the server's engine thought");
  await page.context().close();
});

test("the page does not freeze while the computer thinks: no main-thread task over 50 ms", async () => {
  const page = await player(browser, server.url, "no-freeze");
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: "longtask", buffered: true });
  });
  // Signed in before the reload, which would otherwise cut the sign-in off.
  await page.getByLabel("Level").waitFor();
  await page.reload();
  await startAgainst(page, "Hard");
  // The first move loads the engine; the second is thought by a warm one.
  for (const [mine, n] of [["E5", 1], ["C3", 2]]) {
    if ((await emptyPoints(page)).includes(mine)) await point(page, mine).click();
    else await page.getByRole("button", { name: "Pass", exact: true }).click();
    await page.waitForFunction((k) => document.querySelectorAll('[aria-label*="white stone"]').length >= k, n, { timeout: 60_000 });
    await page.getByText("Your turn").waitFor();
  }
  const since = await page.evaluate(() => performance.now());
  await point(page, "G7").click();
  const clicked = await page.evaluate(() => performance.now());
  await page.waitForFunction(() => document.querySelectorAll('[aria-label*="white stone"]').length >= 3, null, { timeout: 60_000 });
  const done = await page.evaluate(() => performance.now());
  const long = await page.evaluate((t) => window.__longTasks.filter((x) => x.start >= t), since);
  assert.ok(done - clicked > 200, `the computer thought for a while (${Math.round(done - clicked)} ms)`);
  assert.deepEqual(long, [], "no long task on the page's thread while Hard thought");
  await page.context().close();
});
