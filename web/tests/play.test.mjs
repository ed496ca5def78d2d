// The web client in a real browser against a real server: every way to
// play, to the end. `npm test` in web/ (after `cargo build`), as CI does.
import { readFileSync } from "node:fs";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launch, player, point, stones, myColor, screenshot, PHONE } from "./harness.mjs";

let server;
let browser;

before(async () => {
  // Nobody is paired with the computer while two people are queued.
  server = await startServer(["--ai-after", "60"]);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const other = (c) => (c === "Black" ? "White" : "Black");

/** The two pages of one game, Black's first. */
async function byColor(a, b) {
  return (await myColor(a)) === "Black" ? [a, b] : [b, a];
}

test("two players meet in the queue, play to the end and see the same count", async () => {
  const a = await player(browser, server.url, "queue-ann");
  const b = await player(browser, server.url, "queue-bo", { viewport: PHONE });
  await a.getByRole("button", { name: "Find an opponent" }).click();
  await a.getByText(/Waiting \d+ s/).waitFor();
  await screenshot(a, "queue");
  await b.getByRole("button", { name: "Find an opponent" }).click();
  await a.waitForURL(/\/g\//);
  await b.waitForURL(/\/g\//);
  assert.equal(new URL(a.url()).pathname, new URL(b.url()).pathname, "both are in the same game");
  const [black, white] = await byColor(a, b);
  await black.getByText("Your turn").waitFor();
  await point(black, "C3").click();
  await point(white, "C3").and(white.getByRole("button", { name: /black stone, last move/ })).waitFor();
  await point(white, "G7").click();
  await point(black, "G7").and(black.getByRole("button", { name: /white stone, last move/ })).waitFor();
  await screenshot(a, "game");
  await black.getByRole("button", { name: "Pass", exact: true }).click();
  // After the opponent's pass the count shows by itself.
  await white.getByText(/If the game ended now: /).waitFor();
  await white.getByRole("button", { name: "Pass", exact: true }).click();
  const counts = [];
  for (const page of [black, white]) {
    await page.getByRole("heading", { name: "White wins by 7" }).waitFor();
    counts.push(await page.getByText(/^Final count: /).textContent());
  }
  assert.equal(counts[0], counts[1], "both see the same count");
  assert.match(counts[0], /Black 1 – White 8 \(komi 7\)/);
  await white.getByText("You won.").waitFor();
  await black.getByText("You lost.").waitFor();
  await screenshot(a, "result");

  // The record downloads as an SGF file named after the players and the
  // day, and replays to the end: C3, G7, two passes, White by 7.
  const [download] = await Promise.all([
    white.waitForEvent("download"),
    white.getByRole("button", { name: "Download the record (SGF)" }).click(),
  ]);
  const blackName = await black.evaluate(() => JSON.parse(localStorage.getItem("ttakji.session") ?? "{}").nickname);
  const whiteName = blackName === "queue-ann" ? "queue-bo" : "queue-ann";
  assert.match(download.suggestedFilename(), new RegExp(`^${blackName}-vs-${whiteName}-\\d{4}-\\d{2}-\\d{2}\\.sgf$`));
  const record = readFileSync(await download.path(), "utf8");
  const moves = [...record.matchAll(/;([BW])\[([a-z]*)\]/g)].map((m) => `${m[1]}${m[2]}`);
  assert.deepEqual(moves, ["Bcg", "Wgc", "B", "W"], record);
  assert.match(record, /RE\[W\+7\]/);

  // A rematch once both ask: colours swapped.
  const finished = new URL(black.url()).pathname;
  for (const page of [black, white]) await page.getByRole("button", { name: "Rematch (colours swapped)" }).click();
  for (const page of [black, white]) await page.waitForURL((u) => u.pathname.startsWith("/g/") && u.pathname !== finished);
  assert.equal(new URL(black.url()).pathname, new URL(white.url()).pathname, "one new game");
  await black.getByRole("group", { name: "Go board" }).waitFor();
  assert.equal(await myColor(black), "White", "the rematch swaps colours");
  assert.equal(await myColor(white), "Black");
  await a.context().close();
  await b.context().close();
});

test("against the computer, a move and its reply are taken back with undo", async () => {
  const page = await player(browser, server.url, "ai-undo");
  await screenshot(page, "lobby");
  await page.getByLabel("Level").selectOption({ label: "Easy" });
  await page.getByLabel("Your colour").selectOption({ label: "Black (you start)" });
  await page.getByRole("button", { name: "Play the computer" }).click();
  await page.getByRole("group", { name: "Go board" }).waitFor();
  await page.getByText("Your turn").waitFor();
  await point(page, "E5").click();
  await point(page, "E5").and(page.getByRole("button", { name: /black stone/ })).waitFor();
  // The computer's reply comes on the game's stream.
  await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 20_000 });
  await page.getByText("Your turn").waitFor();
  assert.equal(await stones(page, "black"), 1);
  assert.equal(await stones(page, "white"), 1);
  await page.getByRole("button", { name: "Undo" }).click();
  await point(page, "E5").and(page.getByRole("button", { name: "E5, empty" })).waitFor();
  assert.equal(await stones(page, "white"), 0, "the reply went too");
  assert.equal(await stones(page, "black"), 0);
  // By keyboard: the arrow keys move between the points, Enter plays.
  await point(page, "E5").focus();
  await page.keyboard.press("ArrowUp");
  assert.match(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), /^E6, empty/);
  await page.keyboard.press("Enter");
  await point(page, "E6").and(page.getByRole("button", { name: /black stone/ })).waitFor();
  await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 20_000 });
  await page.getByText("Your turn").waitFor();
  // An illegal move gets the rules' reason and changes nothing.
  await point(page, "E6").click();
  await page.getByRole("alert").filter({ hasText: /occupied/ }).waitFor();
  assert.equal(await stones(page, "black"), 1);
  await page.context().close();
});

test("a friend joins by the link, a reload and a server killed mid-game resume it, and a draw is agreed", async () => {
  const host = await player(browser, server.url, "host-hana");
  await host.getByRole("button", { name: "Invite a friend by link" }).click();
  const link = await host.getByLabel("Send this link to your friend").inputValue();
  assert.match(link, new RegExp(`^${server.url}/c/[A-Z0-9]{6}$`), "a link on the server's own address");
  await screenshot(host, "invite");
  const context = await browser.newContext({ viewport: PHONE });
  const friend = await context.newPage();
  await friend.goto(link);
  await friend.getByText("A friend invited you").waitFor();
  await screenshot(friend, "sign-in");
  await friend.getByLabel("Nickname").fill("friend-fei");
  await friend.getByRole("button", { name: "Play as a guest" }).click();
  await friend.waitForURL(/\/g\//);
  await host.waitForURL(/\/g\//);
  assert.equal(new URL(friend.url()).pathname, new URL(host.url()).pathname);
  await friend.getByText(/host-hana/).first().waitFor();
  await host.getByText(/friend-fei/).first().waitFor();
  const [black, white] = await byColor(host, friend);
  await point(black, "D4").click();
  await point(white, "D4").and(white.getByRole("button", { name: /black stone/ })).waitFor();

  // Reload in the middle of the game: the page comes back to it.
  await white.reload();
  await point(white, "D4").and(white.getByRole("button", { name: /black stone, last move/ })).waitFor();
  await white.getByText("Your turn").waitFor();
  await point(white, "F6").click();
  await point(black, "F6").and(black.getByRole("button", { name: /white stone, last move/ })).waitFor();
  // The reloaded page still hears the opponent.
  await point(black, "C7").click();
  await point(white, "C7").and(white.getByRole("button", { name: /black stone, last move/ })).waitFor();
  // The server killed mid-game and started again: both pages carry on.
  await point(white, "E3").click();
  await point(black, "E3").and(black.getByRole("button", { name: /white stone, last move/ })).waitFor();
  await server.kill();
  await black.getByText("Reconnecting…").waitFor();
  await server.restart();
  await black.getByText("Your turn").waitFor();
  await point(black, "G3").click();
  await point(white, "G3").and(white.getByRole("button", { name: /black stone, last move/ })).waitFor();
  assert.equal(await stones(white, "black"), 3, "no move was lost");

  // A draw offered, declined, offered again and accepted.
  await white.getByRole("button", { name: "Offer a draw" }).click();
  await black.getByText("Your opponent offers a draw.").waitFor();
  await black.getByRole("button", { name: "Decline" }).click();
  await white.getByText("Your draw offer was declined.").waitFor();
  await white.getByRole("button", { name: "Offer a draw" }).click();
  await black.getByRole("button", { name: "Accept the draw" }).click();
  for (const page of [black, white]) await page.getByRole("heading", { name: "A draw by agreement" }).waitFor();
  await host.context().close();
  await context.close();
});

test("a host sets house rules for a table and the friend plays under them", async () => {
  const host = await player(browser, server.url, "host-hiro");
  await host.getByText("House rules").click();
  await host.getByLabel("Start from").selectOption({ label: "Classic: 19×19, territory, komi 6.5, no time limit" });
  await host.locator("#table-size").selectOption("13");
  await host.getByLabel("Komi for White").selectOption({ label: "None (an equal count is a draw)" });
  await host.getByLabel("Swap who plays Black on every rematch").uncheck();
  await screenshot(host, "house-rules");
  await host.getByRole("button", { name: "Invite a friend by link" }).click();
  const link = await host.getByLabel("Send this link to your friend").inputValue();
  const friend = await player(browser, server.url, "friend-fumi", { path: new URL(link).pathname });
  for (const page of [host, friend]) {
    await page.waitForURL(/\/g\//);
    await page.getByText("13×13 · territory scoring · no komi · no time limit").waitFor();
    assert.equal(await page.getByRole("group", { name: "Go board" }).getByRole("button").count(), 169);
    assert.equal(await page.getByRole("timer").count(), 0, "no clock");
  }
  const [black] = await byColor(host, friend);
  await black.getByRole("button", { name: "Resign" }).click();
  await black.getByRole("button", { name: "Really resign?" }).click();
  for (const page of [host, friend]) await page.getByRole("button", { name: "Rematch (same colours)" }).waitFor();
  await host.context().close();
  await friend.context().close();
});

test("a territory game's dead stones are marked, disputed and confirmed on both pages", async () => {
  const host = await player(browser, server.url, "host-kaz");
  await host.getByText("House rules").click();
  await host.getByLabel("Start from").selectOption({ label: "Classic: 19×19, territory, komi 6.5, no time limit" });
  await host.locator("#table-size").selectOption("9");
  await host.getByRole("button", { name: "Invite a friend by link" }).click();
  const link = await host.getByLabel("Send this link to your friend").inputValue();
  const friend = await player(browser, server.url, "friend-kei", { path: new URL(link).pathname });
  for (const page of [host, friend]) await page.waitForURL(/\/g\//);
  const [black, white] = await byColor(host, friend);
  await black.getByText("Your turn").waitFor();
  await point(black, "D5").click();
  await white.getByText("Your turn").waitFor();
  await point(white, "F5").click();
  await black.getByText("Your turn").waitFor();
  await black.getByRole("button", { name: "Pass", exact: true }).click();
  await white.getByText("Your turn").waitFor();
  await white.getByRole("button", { name: "Pass", exact: true }).click();
  for (const page of [black, white]) await page.getByText("Counting: agree on the dead stones").waitFor();
  // White marks Black's stone dead; Black sees it crossed as it is made.
  await point(white, "D5").click();
  await point(black, "D5").and(black.getByRole("button", { name: /black stone, dead/ })).waitFor();
  await black.getByText("White marked 1 stone dead.").waitFor();
  await screenshot(black, "counting");
  // Black disagrees and goes back to play; the next two passes count again.
  await black.getByRole("button", { name: "Back to play" }).click();
  await black.getByText("Your turn").waitFor();
  await black.getByRole("button", { name: "Pass", exact: true }).click();
  await white.getByText("Your turn").waitFor();
  await white.getByRole("button", { name: "Pass", exact: true }).click();
  for (const page of [black, white]) {
    await page.getByText("Counting: agree on the dead stones").waitFor();
    await page.getByRole("button", { name: "Confirm dead stones" }).click();
  }
  // Nothing is dead and the open board is nobody's: komi decides.
  for (const page of [black, white]) {
    await page.getByRole("heading", { name: "White wins by 6.5" }).waitFor();
    await page.getByText(/^Final count: Black 0 – White 6.5 \(komi 6.5\)/).waitFor();
  }
  await host.context().close();
  await friend.context().close();
});
