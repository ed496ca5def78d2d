// The move clock in a real browser: the countdown is right on a device
// whose clock is off, and the player who lets it run out loses.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launch, player, myColor, screenshot, PHONE } from "./harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer(["--seconds-per-move", "4", "--ai-after", "60"]);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("the move clock runs out and the player to move loses, on a device with a wrong clock too", async () => {
  const a = await player(browser, server.url, "clock-ada");
  // Ten minutes behind: a countdown from the device's own clock would show 10:04.
  const b = await player(browser, server.url, "clock-bix", { viewport: PHONE, skewMs: -600_000 });
  await a.getByRole("button", { name: "Find an opponent" }).click();
  await b.getByRole("button", { name: "Find an opponent" }).click();
  await a.waitForURL(/\/g\//);
  await b.waitForURL(/\/g\//);
  for (const page of [a, b]) {
    const timer = page.getByRole("timer");
    await timer.waitFor();
    const shown = await timer.textContent();
    const seconds = Number(/^0:(\d\d)$/.exec(shown)?.[1]);
    assert.ok(seconds >= 1 && seconds <= 4, `the countdown shows ${shown}`);
  }
  const blackPage = (await myColor(a)) === "Black" ? a : b;
  const whitePage = blackPage === a ? b : a;
  await screenshot(blackPage, "clock");
  // Black lets the clock run out.
  for (const page of [a, b]) {
    await page.getByRole("heading", { name: "White wins on time" }).waitFor({ timeout: 15_000 });
  }
  await blackPage.getByText("You lost.").waitFor();
  await whitePage.getByText("You won.").waitFor();
  assert.equal(await blackPage.locator(".sgf-result").textContent(), "W+T");
  await a.context().close();
  await b.context().close();
});
