// What a player meets on a phone: a board that stays where it is, a
// layout that fits a phone held sideways, moves confirmed by a second tap,
// notices of their turn, the opponent's moves read out, and a dark theme
// in which the board keeps its contrast.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, myColor, player, point, startServer } from "./harness.mjs";

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

/** The commonest Android width, and a phone held sideways. */
const NARROW = { width: 360, height: 740 };
const SIDEWAYS = { width: 740, height: 360 };

async function boardBox(page) {
  const box = await page.locator(".board").boundingBox();
  return box && { x: Math.round(box.x), y: Math.round(box.y), width: Math.round(box.width) };
}

/** Two players on 360 px phones who met in the 9×9 queue: Black's page first. */
async function queuedPair(a, b) {
  const pa = await player(browser, server.url, a, { viewport: NARROW, touch: true });
  const pb = await player(browser, server.url, b, { viewport: NARROW, touch: true });
  await pa.getByRole("button", { name: "Find an opponent" }).click();
  await pa.getByText(/Waiting \d+ s/).waitFor();
  await pb.getByRole("button", { name: "Find an opponent" }).click();
  await pa.waitForURL(/\/g\//);
  await pb.waitForURL(/\/g\//);
  return (await myColor(pa)) === "Black" ? [pa, pb] : [pb, pa];
}

test("on a 360 px phone the board does not move over ten moves and the clock's ticks, and the turn is noticed and read out", async () => {
  const [black, white] = await queuedPair("still-ann", "still-bo");
  await black.getByText("Your turn").waitFor();
  const start = { black: await boardBox(black), white: await boardBox(white) };
  const moves = ["C3", "G7", "C7", "G3", "E5", "D4", "F6", "E3", "E7", "C5"];
  for (const [i, at] of moves.entries()) {
    const [me, them] = i % 2 === 0 ? [black, white] : [white, black];
    if (i === 2) {
      // Out of turn: a line says so, and goes once the turn has passed.
      await point(them, "J9").click();
      await them.getByRole("alert").getByText("It is Black's turn.").waitFor();
    }
    await point(me, at).click();
    const color = i % 2 === 0 ? "black" : "white";
    await point(them, at).and(them.getByRole("button", { name: new RegExp(`${color} stone, last move`) })).waitFor();
    // Their turn now: the tab says so, and a screen reader hears the move.
    await them.getByText("Your turn").waitFor();
    assert.equal(await them.title(), "Your turn · Ttakji");
    assert.notEqual(await me.title(), "Your turn · Ttakji");
    const heard = await them.locator(".sr-only[aria-live]").textContent();
    assert.match(heard, new RegExp(`^${color === "black" ? "Black" : "White"} played ${at}\\. \\d+ seconds left\\.$`), heard);
    if (i === 2) assert.equal(await them.locator(".status").textContent(), "", "the stale line is gone");
    assert.deepEqual(await boardBox(black), start.black, `Black's board after move ${i + 1}`);
    assert.deepEqual(await boardBox(white), start.white, `White's board after move ${i + 1}`);
  }
  // The clock ticks a second or two: still nothing moves.
  await black.waitForTimeout(1_500);
  assert.deepEqual(await boardBox(black), start.black);
  assert.deepEqual(await boardBox(white), start.white);
  await black.context().close();
  await white.context().close();
});

test("a phone held sideways has the board beside the controls, with no scrolling", async () => {
  const page = await player(browser, server.url, "sideways", { viewport: SIDEWAYS, touch: true });
  await page.getByLabel("Level").selectOption({ label: "Easy" });
  await page.getByRole("button", { name: "Play the computer" }).click();
  await page.getByText("Your turn").waitFor();
  const board = await page.locator(".board-wrap").boundingBox();
  const pass = await page.getByRole("button", { name: "Pass", exact: true }).boundingBox();
  assert.ok(board.y >= 0 && board.y + board.height <= SIDEWAYS.height, `the board fits the height: ${JSON.stringify(board)}`);
  assert.ok(pass.x >= board.x + board.width, "the controls are beside the board");
  assert.ok(pass.y + pass.height <= SIDEWAYS.height, "the controls are on screen");
  const scroll = await page.evaluate(() => document.documentElement.scrollHeight - innerHeight);
  assert.ok(scroll <= 0, `nothing to scroll (${scroll} px more)`);
  await page.context().close();
});

test("with move confirmation, the first tap shows the stone and only the second plays it; on 13×13 on a touch screen it is on by itself", async () => {
  const page = await player(browser, server.url, "confirm", { viewport: NARROW, touch: true });
  await page.getByLabel("Board size").first().selectOption({ label: "13×13" });
  await page.getByLabel("Level").selectOption({ label: "Easy" });
  await page.getByRole("button", { name: "Play the computer" }).click();
  await page.getByText("Your turn").waitFor();
  assert.equal(await page.getByLabel("Confirm moves (tap twice)").isChecked(), true, "on by default for 13×13 on touch");
  await point(page, "D4").tap();
  await page.getByRole("button", { name: "D4, empty, your move, tap again to play" }).waitFor();
  await page.waitForTimeout(500);
  assert.equal(await page.getByText("Your turn").count(), 1, "the first tap sent nothing");
  assert.equal(await page.locator(".pt.b").count(), 0);
  // Another point moves the shown stone; a second tap on it plays.
  await point(page, "K10").tap();
  await page.getByRole("button", { name: "K10, empty, your move, tap again to play" }).waitFor();
  assert.equal(await page.locator(".pt.pending").count(), 1);
  await point(page, "K10").tap();
  await page.getByRole("button", { name: /^K10, black stone/ }).waitFor();
  // Off: one tap plays.
  await page.getByLabel("Confirm moves (tap twice)").uncheck();
  await page.getByText("Your turn").waitFor({ timeout: 30_000 });
  await point(page, "D10").tap();
  await page.getByRole("button", { name: /^D10, black stone/ }).waitFor();
  await page.context().close();
});

/** WCAG's contrast ratio between two CSS colours. */
function contrast(a, b) {
  const lum = (css) => {
    const [r, g, bl] = css.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

test("dark mode follows the system and the switch, and the board keeps its contrast", async () => {
  const looks = {};
  for (const scheme of ["light", "dark"]) {
    const page = await player(browser, server.url, `theme-${scheme}`, { viewport: NARROW, colorScheme: scheme });
    await page.getByLabel("Level").selectOption({ label: "Easy" });
    await page.getByRole("button", { name: "Play the computer" }).click();
    await page.getByText("Your turn").waitFor();
    await point(page, "E5").click();
    await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 30_000 });
    looks[scheme] = await page.evaluate(() => {
      const style = (sel, pseudo) => getComputedStyle(document.querySelector(sel), pseudo);
      return {
        page: getComputedStyle(document.documentElement).backgroundColor,
        text: getComputedStyle(document.documentElement).color,
        wood: style(".board-wrap").backgroundColor,
        line: style(".pt", "::before").backgroundColor,
        // A stone's body is a gradient: its own darkest or lightest stop.
        black: "rgb(0, 0, 0)",
        white: "rgb(213, 213, 213)",
        blackShown: style(".pt.b > span").backgroundImage,
        whiteShown: style(".pt.w > span").backgroundImage,
      };
    });
    await page.context().close();
  }
  const { light, dark } = looks;
  assert.ok(contrast(dark.page, "rgb(255, 255, 255)") > 10, `the dark page is dark: ${dark.page}`);
  for (const [scheme, l] of Object.entries(looks)) {
    assert.ok(contrast(l.text, l.page) >= 7, `${scheme}: text on the page ${contrast(l.text, l.page).toFixed(1)}:1`);
    assert.ok(contrast(l.line, l.wood) >= 4.5, `${scheme}: lines on the board ${contrast(l.line, l.wood).toFixed(1)}:1`);
    assert.ok(contrast(l.black, l.wood) >= 7, `${scheme}: black stones on the board`);
    assert.ok(contrast(l.white, l.wood) >= 1.3 && contrast(l.white, l.black) >= 10, `${scheme}: white stones`);
  }
  // The stones are drawn alike in both, and the board's contrast is within a tenth.
  assert.equal(dark.blackShown, light.blackShown);
  assert.equal(dark.whiteShown, light.whiteShown);
  const ratio = contrast(dark.line, dark.wood) / contrast(light.line, light.wood);
  assert.ok(ratio > 0.9 && ratio < 1.1, `the board's contrast in dark is ${ratio.toFixed(2)} of light`);
  // The switch overrides the system, and is remembered.
  const page = await player(browser, server.url, "theme-switch", { viewport: NARROW, colorScheme: "light" });
  await page.getByLabel("Theme").selectOption({ label: "Dark" });
  await page.reload();
  await page.getByLabel("Theme").waitFor();
  const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  assert.ok(contrast(bg, "rgb(255, 255, 255)") > 10, `dark after the switch and a reload: ${bg}`);
  await page.context().close();
});

test("without a Google sign-in configured, the lobby says ranked play is not offered here instead of leading nowhere", async () => {
  const page = await player(browser, server.url, "no-ranked", { viewport: NARROW });
  await page.getByText("Ranked games need a Google sign-in, which this server does not offer.").waitFor();
  assert.equal(await page.getByLabel("Ranked game").isDisabled(), true);
  await page.context().close();
});
