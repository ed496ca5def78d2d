// After the game and around it, in a real browser against a real server:
// the move list and its keys, the SGF, the territory, the review by the
// page's engine, my games, and watching a live game from another browser.
import { readFileSync } from "node:fs";
import sgf from "@sabaki/sgf";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launch, player, point, stones, myColor, screenshot } from "./harness.mjs";

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

/** A friend game between two new players, on their two pages, Black's first. */
async function friendGame(hostName, friendName) {
  const host = await player(browser, server.url, hostName);
  await host.getByRole("button", { name: "Invite a friend by link" }).click();
  const link = await host.getByLabel("Send this link to your friend").inputValue();
  const friend = await player(browser, server.url, friendName, { path: new URL(link).pathname });
  for (const page of [host, friend]) await page.waitForURL(/\/g\//);
  return (await myColor(host)) === "Black" ? [host, friend] : [friend, host];
}

/** Plays `moves` in turn, Black first, each seen on the other page before the next. */
async function playMoves(black, white, moves) {
  for (const [i, name] of moves.entries()) {
    const [mover, other] = i % 2 === 0 ? [black, white] : [white, black];
    const color = i % 2 === 0 ? "black" : "white";
    await mover.getByText("Your turn").waitFor();
    await point(mover, name).click();
    await point(other, name).and(other.getByRole("button", { name: new RegExp(`${color} stone, last move`) })).waitFor();
  }
}

// Black takes White's D5 with D6, the seventh move.
const MOVES = ["E5", "D5", "C5", "E4", "D4", "F5", "D6"];

/** The stones of an SGF record replayed, by point name: an independent check of the page's replay. */
function replaySgf(sgf, size) {
  const cols = "ABCDEFGHJ";
  const board = new Map();
  const name = (c, r) => `${cols[c]}${r + 1}`;
  const around = (c, r) => [[c - 1, r], [c + 1, r], [c, r - 1], [c, r + 1]].filter(([x, y]) => x >= 0 && y >= 0 && x < size && y < size);
  const chain = (c, r) => {
    const color = board.get(name(c, r));
    const seen = new Set([name(c, r)]);
    const todo = [[c, r]];
    let free = false;
    while (todo.length) {
      const [x, y] = todo.pop();
      for (const [u, v] of around(x, y)) {
        const s = board.get(name(u, v));
        if (!s) free = true;
        else if (s === color && !seen.has(name(u, v))) {
          seen.add(name(u, v));
          todo.push([u, v]);
        }
      }
    }
    return { seen, free };
  };
  for (const m of sgf.matchAll(/;([BW])\[([a-i]{2})?\]/g)) {
    if (!m[2]) continue;
    const c = m[2].charCodeAt(0) - 97;
    const r = size - 1 - (m[2].charCodeAt(1) - 97);
    board.set(name(c, r), m[1]);
    for (const [u, v] of around(c, r)) {
      const s = board.get(name(u, v));
      if (s && s !== m[1]) {
        const { seen, free } = chain(u, v);
        if (!free) for (const p of seen) board.delete(p);
      }
    }
  }
  return board;
}

test("a finished game steps back to move 1 and forward again, by buttons and keys, and its SGF replays to the end", async () => {
  const [black, white] = await friendGame("rec-ana", "rec-ben");
  await playMoves(black, white, MOVES);
  // The move list follows the game as it is played.
  await white.getByRole("list", { name: "Moves of the game" }).getByRole("button").nth(6).waitFor();
  await white.getByText("Your turn").waitFor();
  await white.getByRole("button", { name: "Pass", exact: true }).click();
  await black.getByText("Your turn").waitFor();
  await black.getByRole("button", { name: "Pass", exact: true }).click();
  await black.getByRole("heading", { name: /wins/ }).waitFor();

  // The count marks each side's territory on the board, or says none is.
  const marked = await black.getByRole("button", { name: /territory/ }).count();
  const legend = await black.getByText("Small squares on the board mark each side's territory.").count();
  assert.equal(legend > 0, marked > 0, "the legend shows when the board marks territory");

  // Back to the start, then move 1, by the buttons.
  await black.getByRole("button", { name: "First move" }).click();
  await black.getByText("Start, before any move (9 moves in all)").waitFor();
  assert.equal(await stones(black, "black") + (await stones(black, "white")), 0, "the board is empty at the start");
  await black.getByRole("button", { name: "Next move" }).click();
  await black.getByText("Move 1 of 9: Black E5").waitFor();
  assert.equal(await stones(black, "black"), 1);
  assert.equal(await stones(black, "white"), 0);
  // Move 6 has White's D5 on the board; move 7 takes it.
  for (let k = 2; k <= 6; k++) await black.keyboard.press("ArrowRight");
  await black.getByText("Move 6 of 9: White F5").waitFor();
  await point(black, "D5").and(black.getByRole("button", { name: /white stone/ })).waitFor();
  await black.keyboard.press("ArrowRight");
  await black.getByText("Move 7 of 9: Black D6").waitFor();
  await point(black, "D5").and(black.getByRole("button", { name: /empty/ })).waitFor();
  assert.equal(await stones(black, "white"), 2, "E4 and F5 are left");
  // Move numbers on the stones, as an option.
  await black.getByLabel("Show move numbers").check();
  await point(black, "D6").and(black.getByRole("button", { name: /move 7/ })).waitFor();
  await screenshot(black, "record");
  await black.keyboard.press("Home");
  await black.getByText(/^Start, before any move/).waitFor();
  await black.keyboard.press("End");
  await black.getByText("Move 9 of 9: Black pass").waitFor();
  assert.equal(await stones(black, "black"), 4);

  // The SGF downloads and replays to the board the game ended with.
  const [download] = await Promise.all([black.waitForEvent("download"), black.getByRole("button", { name: "Download the record (SGF)" }).click()]);
  const record = readFileSync(await download.path(), "utf8");
  const board = replaySgf(record, 9);
  // An outside reader, Sabaki's SGF parser, reads its board, komi, rules
  // (KataGo's rule string for Ttakji's rules) and all nine moves.
  const [root] = sgf.parse(record);
  assert.deepEqual([root.data.SZ, root.data.KM, root.data.RU], [["9"], ["7"], ["koPOSITIONALscoreAREAtaxNONEsui0"]]);
  let moves = 0;
  for (let node = root.children[0]; node; node = node.children[0]) moves += node.data.B || node.data.W ? 1 : 0;
  assert.equal(moves, 9);
  const shown = new Map();
  for (const color of ["black", "white"]) {
    for (const b of await black.getByRole("group", { name: "Go board" }).getByRole("button", { name: new RegExp(`, ${color} stone`) }).all()) {
      shown.set((await b.getAttribute("aria-label")).split(",")[0], color === "black" ? "B" : "W");
    }
  }
  assert.deepEqual([...board.entries()].sort(), [...shown.entries()].sort());

  // Both players find the game in their list at once, and it opens its record.
  for (const [page, color] of [[black, "Black"], [white, "White"]]) {
    await page.goto("/games");
    const entry = page.getByRole("link", { name: new RegExp(`^Against rec-(ana|ben), you played ${color}$`) }).first();
    await entry.waitFor({ timeout: 10_000 }).catch(async () => {
      assert.fail(`no game as ${color} in the list: ${await page.locator("main").innerText()}`);
    });
    // The result is the game's, with its margin.
    await page.getByText(/ · (Black|White) wins by \d+(\.5)? · /).waitFor();
    await entry.click();
    await page.waitForURL(/\/g\//);
    await page.getByRole("list", { name: "Moves of the game" }).getByRole("button").nth(8).waitFor();
  }
  await black.context().close();
  await white.context().close();
});

test("the computer reviews a finished game in the page: a graph, its words, and a better move on the board", async () => {
  const [black, white] = await friendGame("rev-cho", "rev-dae");
  await playMoves(black, white, MOVES);
  await white.getByText("Your turn").waitFor();
  await white.getByRole("button", { name: "Resign" }).click();
  await white.getByRole("button", { name: "Really resign?" }).click();
  await black.getByRole("heading", { name: "Black wins by resignation" }).waitFor();
  await black.getByText("about amateur dan strength on 9×9", { exact: false }).waitFor();
  await black.getByRole("button", { name: "Review this game" }).click();
  await black.getByText(/^Reviewed in /).waitFor({ timeout: 120_000 });
  await black.getByRole("figure").getByText("Black's chances to win, move by move").waitFor();
  assert.ok((await black.getByRole("list", { name: "Biggest swings" }).getByRole("listitem").count()) >= 3);
  // White let D5 be taken: the review finds a better move for White.
  const mistake = black.getByRole("button", { name: /^Move \d+ at [A-J]\d: lost \d+%; better / }).first();
  await mistake.waitFor();
  const better = /better ([A-J]\d+|pass)/.exec(await mistake.textContent())[1];
  await mistake.click();
  await black.getByText(/^Better line shown, numbered: /).waitFor();
  await point(black, better).and(black.getByRole("button", { name: /suggested move 1/ })).waitFor();
  await screenshot(black, "review");
  await black.context().close();
  await white.context().close();
});

test("a third browser finds a live game in the list and watches a move arrive", async () => {
  const [black, white] = await friendGame("live-eun", "live-fay");
  await playMoves(black, white, ["C3", "G7"]);
  const watcher = await player(browser, server.url, "watch-gil");
  await watcher.getByRole("link", { name: "Watch live games" }).click();
  await watcher.getByLabel("Board size").selectOption({ label: "9×9" });
  // Who plays Black is drawn: either may be named first.
  await watcher.getByRole("link", { name: /^live-(eun|fay) \(Black\) vs live-(eun|fay) \(White\)$/ }).click();
  await watcher.waitForURL(/\/g\//);
  await point(watcher, "G7").and(watcher.getByRole("button", { name: /white stone, last move/ })).waitFor();
  assert.equal(await watcher.getByRole("button", { name: "Pass", exact: true }).count(), 0, "a spectator has no controls to play");
  await point(black, "E5").click();
  await point(watcher, "E5").and(watcher.getByRole("button", { name: /black stone, last move/ })).waitFor();
  await watcher.getByText("Move 3 of 3: Black E5").waitFor();
  for (const page of [black, white, watcher]) await page.context().close();
});
