// The queue's fallback in a real browser: a player nobody fits is given
// the computer after the wait, and the page says how long they waited.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launch, player, point, myColor } from "./harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer(["--ai-after", "2"]);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("a player alone in the 13×13 queue is shown the wait, then plays the computer on 13×13", async () => {
  const page = await player(browser, server.url, "alone-al");
  // The 13×13 pool, with the computer as its fallback too.
  await page.locator("#queue-size").selectOption("13");
  await page.getByRole("button", { name: "Find an opponent" }).click();
  await page.getByRole("heading", { name: "Looking for an opponent (13×13)" }).waitFor();
  await page.getByText("Waiting 1 s · 1 player in the queue").waitFor();
  await page.waitForURL(/\/g\//);
  const opponent = (await myColor(page)) === "Black" ? "White" : "Black";
  const seat = await page.locator(".player .name", { hasText: `${opponent}:` }).textContent();
  assert.match(seat, /AI$/, `the computer took the other seat (${seat})`);
  const board = page.getByRole("group", { name: "Go board" });
  assert.equal(await board.getByRole("button").count(), 169, "a 13×13 board");
  await point(page, "N13").waitFor();
  await page.context().close();
});
