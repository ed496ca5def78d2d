// What the browser tests share: a real `ttakji serve` process on free
// ports with its own SQLite file, Debian's Chromium driven by
// playwright-core, and players who sign in through the page.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync, rmSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const here = new URL(".", import.meta.url).pathname;
const repo = resolve(here, "../..");

/** The server binary: TTAKJI_BIN, or the debug build in CARGO_TARGET_DIR (or target/). */
export function serverBinary() {
  if (process.env.TTAKJI_BIN) return process.env.TTAKJI_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? join(repo, "target");
  return join(target, "debug", "ttakji");
}

/** A loopback port nobody listens on now. */
async function freePort() {
  const probe = createServer();
  await new Promise((ok) => probe.listen(0, "127.0.0.1", ok));
  const { port } = probe.address();
  await new Promise((ok) => probe.close(ok));
  return port;
}

/**
 * Starts `ttakji serve` on loopback, its page on a port of its own and the
 * rest on free ports; resolves with the page's address, and ways to stop
 * it, kill it (SIGKILL) and start it again on the same address and files.
 */
export async function startServer(extra = []) {
  const dir = mkdtempSync(join(tmpdir(), "ttakji-web-"));
  const port = await freePort();
  const args = [
    "serve",
    "--listen", `127.0.0.1:${port}`,
    "--authority-listen", "127.0.0.1:0",
    "--matchmaker-listen", "127.0.0.1:0",
    "--ratings-listen", "127.0.0.1:0",
    "--metrics-listen", "127.0.0.1:0",
    "--database-url", `sqlite://${join(dir, "ttakji.db")}`,
    "--token-key-file", join(dir, "token.key"),
    "--limits-exempt", "127.0.0.1",
    ...extra,
  ];
  let child;
  let metricsUrl;
  const run = async () => {
    child = spawn(serverBinary(), args, {
      stdio: ["ignore", "pipe", process.env.TEST_LOG ? "inherit" : "ignore"],
    });
    const lines = createInterface({ input: child.stdout });
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error("ttakji serve did not say where it listens in 60 s")), 60_000);
      child.once("error", (e) => fail(new Error(`starting ${serverBinary()}: ${e.message} (build it with cargo build)`)));
      child.once("exit", (code) => fail(new Error(`ttakji serve exited (${code}) before listening`)));
      lines.on("line", (line) => {
        const m = /^listening gateway=(\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          metricsUrl = /metrics=(\S+)/.exec(line)?.[1];
          ok(`http://${m[1]}`);
        }
      });
    });
  };
  const ended = (signal) => {
    const c = child;
    if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
    const exit = new Promise((ok) => c.once("exit", ok));
    c.kill(signal);
    return exit;
  };
  const url = await run();
  return {
    url,
    /** The server process's CPU time so far, in seconds (Linux). */
    cpuSeconds() {
      const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ");
      return (Number(fields[11]) + Number(fields[12])) / 100;
    },
    /**
     * The sum of the series of metric `name` on the server's `/metrics`
     * whose labels include `labels` (`engine="client"`); 0 when none.
     */
    async metric(name, labels = "") {
      const page = await (await fetch(`http://${metricsUrl}/metrics`)).text();
      let sum = 0;
      for (const line of page.split("\n")) {
        const m = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
        if (m && m[1] === name && (m[2] ?? "").includes(labels)) sum += Number(m[3]);
      }
      return sum;
    },
    /** SIGKILL, as a machine dying does. */
    kill: () => ended("SIGKILL"),
    /** Starts it again on the same address, database and token key. */
    restart: run,
    async stop() {
      await ended("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's Chromium (a browser download is not possible here). */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    // English unless a test gives its context another locale.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--lang=en-US"],
  });
}

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 860 };

/** A new player in a fresh browser context, signed in as a guest called `nickname`. */
export async function player(browser, url, nickname, { viewport = DESKTOP, path = "/", skewMs = 0, touch = false, colorScheme } = {}) {
  // `touch`: a phone's touch screen (coarse pointer, no hover).
  const context = await browser.newContext({ viewport, baseURL: url, hasTouch: touch, isMobile: touch, colorScheme });
  const page = await context.newPage();
  if (skewMs) {
    // A device whose clock is off by skewMs.
    await page.addInitScript((skew) => {
      const now = Date.now.bind(Date);
      Date.now = () => now() + skew;
    }, skewMs);
  }
  await page.goto(path);
  await page.getByLabel("Nickname").fill(nickname);
  await page.getByRole("button", { name: "Play as a guest" }).click();
  return page;
}

/** The button of the point called `name` ("D5"). */
export function point(page, name) {
  return page.getByRole("button", { name: new RegExp(`^${name},`) });
}

/** How many stones of `color` ("black" or "white") the board shows. */
export async function stones(page, color) {
  return page.getByRole("group", { name: "Go board" }).getByRole("button", { name: new RegExp(`, ${color} stone`) }).count();
}

/** The colour the page says its player has ("Black" or "White"). */
export async function myColor(page) {
  const me = await page.locator(".player .name", { hasText: "(you)" }).textContent({ timeout: 15_000 });
  return me.startsWith("Black") ? "Black" : "White";
}

/**
 * When TTAKJI_SCREENSHOTS is set, saves the page as docs/screenshots/<name>-phone.png
 * and <name>-desktop.png, at both sizes whatever its own.
 */
export async function screenshot(page, name) {
  if (!process.env.TTAKJI_SCREENSHOTS) return;
  const dir = join(repo, "docs", "screenshots");
  mkdirSync(dir, { recursive: true });
  const own = page.viewportSize();
  for (const [size, viewport] of [["phone", PHONE], ["desktop", DESKTOP]]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(100);
    await page.screenshot({ path: join(dir, `${name}-${size}.png`), fullPage: true });
  }
  await page.setViewportSize(own);
}
