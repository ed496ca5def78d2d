// Lighthouse's phone scores for the first page a new player sees (`/`),
// for the lobby of a signed-in one, and for a game against the computer
// in which the page's engine has already played: the engine is loaded
// only for such a game, so the first two never fetch it. The signed-in
// pages are measured again in the dark theme and in Korean.
// `npm run bench:lighthouse` (TTAKJI_BIN: a release build is best). Lighthouse
// is not one of the project's dependencies: install it beside them first
// with `npm --prefix web install --no-save lighthouse`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { point, startServer } from "../tests/harness.mjs";

let lighthouse;
try {
  ({ default: lighthouse } = await import("lighthouse"));
} catch {
  console.error("Lighthouse is not installed: npm --prefix web install --no-save lighthouse");
  process.exit(2);
}

const PORT = 9333;
const server = await startServer();
const profile = mkdtempSync(join(tmpdir(), "ttakji-lighthouse-"));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: [`--remote-debugging-port=${PORT}`],
});

async function audit(name, url, keepStorage) {
  const { lhr } = await lighthouse(url, {
    port: PORT,
    output: "json",
    logLevel: "error",
    onlyCategories: ["performance", "accessibility", "best-practices", "seo"],
    disableStorageReset: keepStorage,
  });
  const scores = Object.values(lhr.categories).map((c) => `${c.title} ${Math.round(c.score * 100)}`);
  const wasm = lhr.audits["network-requests"].details.items.filter((r) => r.url.endsWith(".wasm")).length;
  const metric = (id) => lhr.audits[id].displayValue;
  // What cost points outside performance, where a failure is a finding.
  const failed = Object.values(lhr.categories)
    .filter((c) => c.id !== "performance")
    .flatMap((c) => c.auditRefs.filter((r) => r.weight > 0 && lhr.audits[r.id].score !== null && lhr.audits[r.id].score < 1).map((r) => r.id));
  if (failed.length) console.log(`  failed: ${failed.join(", ")}`);
  console.log(`${name}: ${scores.join(", ")}; FCP ${metric("first-contentful-paint")}, LCP ${metric("largest-contentful-paint")}, TBT ${metric("total-blocking-time")}, CLS ${metric("cumulative-layout-shift")}; engine fetched ${wasm}×`);
}

// A new player's first page: nothing stored.
await audit("/ (new player)", `${server.url}/`, false);

// Sign in and play a move against Hard, which the page's engine answers.
const page = browser.pages()[0] ?? (await browser.newPage());
await page.goto(`${server.url}/`);
await page.getByLabel("Nickname").fill("lighthouse");
await page.getByRole("button", { name: "Play as a guest" }).click();
await page.getByLabel("Level").selectOption({ label: "Hard" });
await page.getByRole("button", { name: "Play the computer" }).click();
await page.getByText(/Your turn|to move/).first().waitFor();
if (await page.getByText("Your turn").count()) await point(page, "E5").click();
await page.getByRole("button", { name: /white stone, last move/ }).waitFor({ timeout: 60_000 });
await page.getByText("Your turn").waitFor();
const game = page.url();

// A game the computer (Black) is to move in: the engine held back here,
// so that the audited load is the one that fetches it and thinks.
await page.route("**/*.wasm", () => {});
await page.goto(`${server.url}/`);
await page.getByLabel("Level").selectOption({ label: "Hard" });
await page.getByLabel("Your colour").selectOption({ label: "White" });
await page.getByRole("button", { name: "Play the computer" }).click();
await page.getByRole("group", { name: "Go board" }).waitFor();
const thinking = page.url();
await page.goto("about:blank");

await audit("/ (signed in)", `${server.url}/`, true);
await audit("a game against Hard, the player to move", game, true);
await audit("a game against Hard, the computer to move (engine loaded and thinking)", thinking, true);

// The same pages in the dark theme, chosen with the page's switch.
await page.goto(`${server.url}/`);
await page.getByLabel("Theme").selectOption({ label: "Dark" });
await page.goto("about:blank");
await audit("/ (signed in, dark)", `${server.url}/`, true);
await audit("a game against Hard, the player to move (dark)", game, true);

// And in Korean, chosen with the language switch, in the light theme.
await page.goto(`${server.url}/`);
await page.getByLabel("Theme").selectOption({ label: "Light" });
await page.getByLabel("Language").selectOption({ label: "한국어" });
await page.goto("about:blank");
await audit("/ (signed in, Korean)", `${server.url}/`, true);
await audit("a game against Hard, the player to move (Korean)", game, true);

await browser.close();
await server.stop();
rmSync(profile, { recursive: true, force: true });
