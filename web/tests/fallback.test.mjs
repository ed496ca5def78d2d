// The queue's fallback in a real browser: a player nobody fits is given
// the computer after the wait, and the page says how long they waited.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launch, player, myColor } from "./harness.mjs";

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

test("a player alone in the queue is shown the wait, then plays the computer", async () => {
  const page = await player(browser, server.url, "alone-al");
  await page.getByRole("button", { name: "Find an opponent" }).click();
  await page.getByText("Waiting 1 s · 1 player in the queue").waitFor();
  await page.waitForURL(/\/g\//);
  const opponent = (await myColor(page)) === "Black" ? "White" : "Black";
  const seat = await page.locator(".player .name", { hasText: `${opponent}:` }).textContent();
  assert.match(seat, /AI$/, `the computer took the other seat (${seat})`);
  await page.context().close();
});
