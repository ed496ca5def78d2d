// The page in the player's language: the browser's language chooses it, the
// switch changes it and is remembered, a page in Korean shows no English
// from sign-in to a game's result, refusals are said in Korean by their
// reason, and every catalog has the keys of English.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { startServer, launch, point, DESKTOP } from "./harness.mjs";
import { catalogLanguages, checkCatalogs } from "../app/scripts/messages.mjs";

let server;
let browser;

before(async () => {
  // Two people queued meet each other, not the computer.
  server = await startServer(["--ai-after", "60"]);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A page in a fresh browser context whose language is `locale`. */
async function browserIn(locale, path = "/") {
  const context = await browser.newContext({ locale, viewport: DESKTOP, baseURL: server.url });
  const page = await context.newPage();
  await page.goto(path);
  return page;
}

/** A player in a Korean browser, signed in as a guest called `nickname`. */
async function koreanPlayer(nickname) {
  const page = await browserIn("ko-KR");
  await page.getByLabel("닉네임").fill(nickname);
  await page.getByRole("button", { name: "손님으로 두기" }).click();
  await page.getByRole("heading", { name: "컴퓨터와 두기" }).waitFor();
  return page;
}

// Latin words a page in another language may show: names, acronyms, and
// English in its own name in the language switch.
const ALLOWED = new Set(["Ttakji", "Google", "SGF", "Elo", "GTP", "English"]);

/** The colour a Korean page says its player has ("흑" or "백"). */
async function myColor(page) {
  const me = await page.locator(".player .name", { hasText: "(나)" }).textContent({ timeout: 15_000 });
  return me.startsWith("흑") ? "흑" : "백";
}

/** Waits until the line "내 차례" (your turn) shows. */
const myTurn = (page) => page.getByText("내 차례", { exact: true }).waitFor();

/**
 * Every English word the page shows or says: runs of two or more Latin
 * letters in its text (options and screen-reader-only lines too), in
 * accessible names, titles, alt texts and placeholders, and in the tab's
 * title. Single letters (coordinates such as E5, "B+R") pass.
 */
async function englishOn(page) {
  const texts = await page.evaluate(() => {
    const found = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.parentElement?.closest("script, style, noscript, template")) found.push(n.textContent);
    }
    for (const el of document.body.querySelectorAll("*")) {
      for (const a of ["aria-label", "title", "alt", "placeholder"]) {
        const v = el.getAttribute(a);
        if (v) found.push(v);
      }
    }
    return found;
  });
  const words = new Set();
  for (const text of texts) {
    for (const [word] of text.matchAll(/[A-Za-z]{2,}/g)) if (!ALLOWED.has(word)) words.add(`${word} (in “${text.trim().slice(0, 80)}”)`);
  }
  return [...words];
}

async function assertNoEnglish(page, where) {
  assert.deepEqual(await englishOn(page), [], `no English ${where}`);
}

test("the browser's language chooses the page's", async () => {
  for (const [locale, lang, label] of [
    ["ko-KR", "ko", "닉네임"],
    ["ja-JP", "ja", "ニックネーム"],
    ["zh-CN", "zh-Hans", "昵称"],
    ["zh-TW", "zh-Hans", "昵称"],
    ["fr-FR", "en", "Nickname"],
    ["en-GB", "en", "Nickname"],
  ]) {
    const page = await browserIn(locale);
    await page.getByLabel(label).waitFor();
    assert.equal(await page.locator("html").getAttribute("lang"), lang, `${locale} gets ${lang}`);
    assert.equal(await page.locator("html").getAttribute("dir"), "ltr");
    await page.context().close();
  }
  const page = await browserIn("ko-KR");
  await page.getByLabel("닉네임").waitFor();
  assert.equal(await page.title(), "바둑 두기 · Ttakji");
  await assertNoEnglish(page, "on the sign-in page");
  await page.context().close();
});

test("the language switch changes the page's language and is remembered", async () => {
  const page = await browserIn("en-US");
  await page.getByLabel("Nickname").waitFor();
  const choice = page.getByLabel("Language");
  assert.deepEqual(
    await choice.locator("option").allTextContents(),
    ["English", "한국어", "日本語", "简体中文"],
    "each language in its own name",
  );
  await choice.selectOption({ label: "日本語" });
  await page.getByLabel("ニックネーム").waitFor();
  assert.equal(await page.locator("html").getAttribute("lang"), "ja");
  await page.reload();
  await page.getByLabel("ニックネーム").waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("ttakji.language")), "ja");
  // Signed in, the lobby offers the switch too, and a reload keeps it.
  await page.getByLabel("ニックネーム").fill("switch-sam");
  await page.getByRole("button", { name: "ゲストで打つ" }).click();
  await page.getByLabel("言語").selectOption({ label: "한국어" });
  await page.getByRole("heading", { name: "컴퓨터와 두기" }).waitFor();
  await page.reload();
  await page.getByRole("heading", { name: "컴퓨터와 두기" }).waitFor();
  assert.equal(await page.locator("html").getAttribute("lang"), "ko");
  await page.getByLabel("언어").selectOption({ label: "English" });
  await page.getByRole("heading", { name: "Play the computer" }).waitFor();
  assert.equal(await page.locator("html").getAttribute("lang"), "en");
  await page.context().close();
});

test("a page in Korean shows no English, against the computer and online, to the result", async () => {
  const page = await koreanPlayer("바둑이");
  await page.getByText("대국 규칙").click();
  await assertNoEnglish(page, "in the lobby");
  await page.getByLabel("수준").selectOption({ label: "쉬움" });
  await page.getByLabel("내 돌 색").selectOption({ label: "흑 (먼저 둠)" });
  await page.getByRole("button", { name: "컴퓨터와 두기" }).click();
  await page.getByRole("group", { name: "바둑판" }).waitFor();
  await myTurn(page);
  assert.equal(await page.title(), "내 차례 · Ttakji");
  await point(page, "E5").click();
  await page.getByRole("button", { name: /^E5, 흑돌/ }).waitFor();
  await page.getByRole("button", { name: /백돌, 마지막 수/ }).waitFor({ timeout: 30_000 });
  await myTurn(page);
  // A move on an occupied point goes to the server, which refuses it by
  // its reason (ILLEGAL_MOVE_OCCUPIED, point E5): said in Korean.
  await point(page, "E5").click();
  await page.getByRole("alert").filter({ hasText: "E5에는 이미 돌이 있습니다." }).waitFor();
  assert.equal(await page.getByRole("group", { name: "바둑판" }).getByRole("button", { name: /, 흑돌/ }).count(), 1);
  await page.getByRole("button", { name: "지금 계가" }).click();
  await page.getByText(/^지금 끝나면: 흑 \d+ – 백 [\d.]+ \(덤 7\)$/).waitFor();
  await assertNoEnglish(page, "in a game against the computer");
  await page.getByRole("button", { name: "기권" }).click();
  await page.getByRole("button", { name: "정말 기권할까요?" }).click();
  await page.getByRole("heading", { name: "백 불계승" }).waitFor();
  await page.getByText("졌습니다.").waitFor();
  await assertNoEnglish(page, "after a game against the computer");
  await page.getByRole("button", { name: "대기실로 돌아가기" }).click();

  // Online: two Korean players meet in the queue and pass to the count.
  const other = await koreanPlayer("돌잡이");
  await page.getByRole("button", { name: "상대 찾기" }).click();
  await page.getByText(/^\d+초째 대기 중 · 대기열에 \d+명$/).waitFor();
  await assertNoEnglish(page, "in the queue");
  await other.getByRole("button", { name: "상대 찾기" }).click();
  await page.waitForURL(/\/g\//);
  await other.waitForURL(/\/g\//);
  const [black, white] = (await myColor(page)) === "흑" ? [page, other] : [other, page];
  await myTurn(black);
  await point(black, "C3").click();
  await white.getByRole("button", { name: /^C3, 흑돌, 마지막 수/ }).waitFor();
  // The opponent's move is read out, with the clock.
  await white.getByText(/^흑이 C3에 두었습니다\. \d+초 남음\.$/).waitFor({ state: "attached" });
  await assertNoEnglish(white, "in an online game");
  await point(white, "G7").click();
  await black.getByRole("button", { name: /^G7, 백돌, 마지막 수/ }).waitFor();
  await black.getByRole("button", { name: "패스", exact: true }).click();
  await white.getByText("흑이 패스했습니다. 나도 패스하면 이 계가로 대국이 끝납니다.").waitFor();
  await white.getByText(/^지금 끝나면: 흑 1 – 백 8 \(덤 7\)$/).waitFor();
  await assertNoEnglish(white, "after the opponent's pass");
  await white.getByRole("button", { name: "패스", exact: true }).click();
  for (const p of [black, white]) {
    await p.getByRole("heading", { name: "백 7집 승" }).waitFor();
    await p.getByText("최종 계가: 흑 1 – 백 8 (덤 7)").waitFor();
    await p.getByRole("button", { name: "재대국 (흑백 교대)" }).waitFor();
    await assertNoEnglish(p, "after an online game");
  }
  await white.getByText("이겼습니다.").waitFor();
  await black.getByText("졌습니다.").waitFor();

  // A nickname someone has is refused by its reason, in Korean.
  const late = await browserIn("ko-KR");
  await late.getByLabel("닉네임").fill("바둑이");
  await late.getByRole("button", { name: "손님으로 두기" }).click();
  await late.getByRole("alert").filter({ hasText: "“바둑이”은(는) 이미 쓰이고 있습니다. 다른 닉네임을 고르세요." }).waitFor();
  for (const p of [page, other, late]) await p.context().close();
});

test("pages in Japanese and Simplified Chinese show no English in a game against the computer", async () => {
  const words = {
    "ja-JP": {
      nickname: "ニックネーム",
      guest: "ゲストで打つ",
      computer: "コンピューターと打つ",
      board: "碁盤",
      black: "黒石",
      turn: "あなたの番",
      occupied: "E5にはすでに石があります。",
      count: /^いま終局すると：黒 \d+ – 白 [\d.]+（コミ7目）$/,
      resign: "投了",
      really: "本当に投了しますか？",
      result: "白の中押し勝ち",
      name: "碁打ち",
    },
    "zh-CN": {
      nickname: "昵称",
      guest: "以游客身份下棋",
      computer: "和电脑下",
      board: "棋盘",
      black: "黑子",
      turn: "轮到你了",
      occupied: "E5已经有棋子了。",
      count: /^如果现在终局：黑 \d+ – 白 [\d.]+（贴7目）$/,
      resign: "认输",
      really: "确定认输？",
      result: "白中盘胜",
      name: "棋手甲",
    },
  };
  // Points are named as in Korean and English, then the language's own comma.
  const at = (page, name) => page.getByRole("button", { name: new RegExp(`^${name}[、，]`) });
  for (const [locale, w] of Object.entries(words)) {
    const page = await browserIn(locale);
    await page.getByLabel(w.nickname).fill(w.name);
    await page.getByRole("button", { name: w.guest }).click();
    await page.getByRole("button", { name: w.computer }).click();
    await page.getByRole("group", { name: w.board }).waitFor();
    await page.getByText(w.turn, { exact: true }).waitFor();
    await at(page, "E5").click();
    await page.getByRole("button", { name: new RegExp(`^E5.${w.black}`) }).waitFor();
    await page.getByText(w.turn, { exact: true }).waitFor({ timeout: 30_000 });
    await at(page, "E5").click();
    await page.getByRole("alert").filter({ hasText: w.occupied }).waitFor();
    await page.locator(".controls button").nth(2).click();
    await page.getByText(w.count).waitFor();
    await assertNoEnglish(page, `in a game in ${locale}`);
    await page.getByRole("button", { name: w.resign }).click();
    await page.getByRole("button", { name: w.really }).click();
    await page.getByRole("heading", { name: w.result }).waitFor();
    await assertNoEnglish(page, `after a game in ${locale}`);
    await page.context().close();
  }
});

test("every catalog has exactly the keys of English, and every message parses", () => {
  const keys = (language) =>
    Object.keys(JSON.parse(readFileSync(new URL(`../app/src/i18n/${language}.json`, import.meta.url), "utf8"))).sort();
  const languages = catalogLanguages();
  assert.deepEqual(languages, ["en", "ja", "ko", "zh-Hans"]);
  for (const language of languages) assert.deepEqual(keys(language), keys("en"), `${language}.json has en.json's keys`);
  assert.deepEqual(checkCatalogs(), []);
});
