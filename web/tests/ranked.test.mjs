// Ranked play in a real browser: Google sign-in, a ranked game from the
// queue, and the 9×9 leaderboard with the player's own place.
//
// The server checks every ID token for real (RS256 against a key set it
// fetches, our client id as audience, Google's issuer). What cannot run
// here is Google's own sign-in script (accounts.google.com is out of
// reach), so each page gets a stand-in for `google.accounts.id` that hands
// the page an ID token signed with a key of this test's own, whose key set
// the server is pointed at (--google-jwks-url).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { generateKeyPairSync, sign } from "node:crypto";
import { startServer, launch, myColor, player, screenshot, PHONE, DESKTOP } from "./harness.mjs";

const CLIENT_ID = "ttakji-web-test.apps.googleusercontent.com";
const KID = "browser-test-key";
const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });

let jwks;
let server;
let browser;

before(async () => {
  const jwk = { ...publicKey.export({ format: "jwk" }), kid: KID, alg: "RS256", use: "sig" };
  jwks = createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=3600" });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise((ok) => jwks.listen(0, "127.0.0.1", ok));
  const url = `http://127.0.0.1:${jwks.address().port}/certs`;
  server = await startServer(["--google-client-id", CLIENT_ID, "--google-jwks-url", url, "--ai-after", "60"]);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  jwks?.close();
});

const b64url = (data) => Buffer.from(data).toString("base64url");

/** An ID token as Google's sign-in gives a page, for the account `sub`. */
function idToken(sub, name) {
  const now = Math.floor(Date.now() / 1000);
  const head = b64url(JSON.stringify({ alg: "RS256", kid: KID, typ: "JWT" }));
  const body = b64url(
    JSON.stringify({ iss: "https://accounts.google.com", aud: CLIENT_ID, sub, name, iat: now, exp: now + 3600 }),
  );
  const signature = sign("RSA-SHA256", Buffer.from(`${head}.${body}`), privateKey).toString("base64url");
  return `${head}.${body}.${signature}`;
}

/** A player who signs in with Google (as `nickname`) on the sign-in page. */
async function googlePlayer(sub, nickname, viewport) {
  const context = await browser.newContext({ viewport, baseURL: server.url });
  const page = await context.newPage();
  await page.addInitScript((token) => {
    let options;
    window.google = {
      accounts: {
        id: {
          initialize(o) {
            options = o;
          },
          renderButton(el) {
            const b = document.createElement("button");
            b.type = "button";
            b.textContent = "Sign in with Google";
            b.onclick = () => options.callback({ credential: token });
            el.append(b);
          },
        },
      },
    };
  }, idToken(sub, `Player ${sub}`));
  await page.goto("/");
  await page.getByLabel("Nickname").fill(nickname);
  await page.getByRole("heading", { name: "Ranked games" }).waitFor();
  await page.getByRole("button", { name: "Sign in with Google" }).click();
  await page.getByText(`Playing as ${nickname} (signed in)`).waitFor();
  return page;
}

test("two players signed in with Google play a ranked game and find themselves on the leaderboard", async () => {
  const a = await googlePlayer("1001", "ranked-ana", DESKTOP);
  const b = await googlePlayer("1002", "ranked-ben", PHONE);
  for (const page of [a, b]) {
    await page.getByLabel("Ranked game").check();
    await page.getByRole("button", { name: "Find an opponent" }).click();
  }
  await a.waitForURL(/\/g\//);
  await b.waitForURL(/\/g\//);
  const [black, white] = (await myColor(a)) === "Black" ? [a, b] : [b, a];
  await black.getByRole("button", { name: "Resign" }).click();
  await black.getByRole("button", { name: "Really resign?" }).click();
  for (const page of [black, white]) {
    await page.getByRole("heading", { name: "White wins by resignation" }).waitFor();
    await page.getByText("Ranked: your rating has been updated.").waitFor();
  }
  const winner = white === a ? "ranked-ana" : "ranked-ben";
  const loser = winner === "ranked-ana" ? "ranked-ben" : "ranked-ana";
  for (const page of [white, black]) {
    // The rating is applied from the finished game: look until it is there.
    for (let i = 0; i < 50; i++) {
      await page.goto("/");
      const top = page.getByRole("table", { name: "Top players" });
      if (await top.waitFor({ timeout: 2_000 }).then(() => true, () => false)) {
        if ((await top.getByRole("row").count()) === 3) break;
      }
      await page.waitForTimeout(200);
    }
    const rows = page.getByRole("table", { name: "Top players" }).getByRole("row");
    assert.deepEqual(
      (await rows.allTextContents()).slice(1).map((r) => r.replace(" (you)", "")),
      [`1${winner}12201`, `2${loser}11801`],
      "the winner gained what the loser lost (K 40 for a first game)",
    );
    const me = page.getByRole("table", { name: "Your place" }).locator("tr.me");
    assert.match(await me.textContent(), /\(you\)/, "the player's own place is marked");
  }
  await screenshot(white, "leaderboard");
  await a.context().close();
  await b.context().close();
});

test("a guest is offered the Google sign-in for ranked play, which leads to it", async () => {
  const page = await player(browser, server.url, "ranked-guest");
  await page.getByRole("button", { name: "Sign in with Google to play ranked" }).click();
  await page.getByText("Sign in with Google to play ranked games.").waitFor();
  // The sign-in page, with its Google section (the button itself comes
  // from Google's script).
  await page.getByRole("heading", { name: "Ranked games" }).waitFor();
  await page.context().close();
});
