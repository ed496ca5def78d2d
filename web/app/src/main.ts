// The Ttakji web client: every way to play that seed 000 describes, in one
// page served by the gateway itself. The page keeps no game state of its
// own that the server does not have: a game is its snapshot plus the events
// after it, so a reload or a dropped connection resumes where it was.

import {
  AiEngine,
  AiLevel,
  Code,
  Color,
  ColorChoice,
  ConnectError,
  EndReason,
  GameStatus,
  Scoring,
  TablePreset,
  TicketState,
  applyChange,
  clockOffsetMs,
  connect,
  parsePoint,
  pointName,
  refusalOf,
  retryAfterMs,
  type Count,
  type GameEvent,
  type GameSnapshot,
  type GameSummary,
  type LadderEntry,
  type Player,
  type Point,
} from "@ttakji/client";
import { Board } from "./board";
import { after, gtpMoves, movesOfRecord, movesOfSgf, replay, toMoveAt, type Position, type RecordMove } from "./record";
import { LANGUAGES, chooseLanguage, currentLanguage, formatNumber, hasMessage, preferredLanguage, t, useLanguage, type Language } from "./i18n";
import "./style.css";

// ---------------------------------------------------------------- session

interface Session {
  token: string;
  userId: string;
  nickname: string;
  /** Signed in with Google: may play ranked games. */
  google: boolean;
  expiresAtMs: number;
}

const SESSION_KEY = "ttakji.session";
const ATARI_KEY = "ttakji.showAtari";
const THEME_KEY = "ttakji.theme";
const SOUND_KEY = "ttakji.sound";
const CONFIRM_KEY = "ttakji.confirmMoves";
const NUMBERS_KEY = "ttakji.moveNumbers";

/** The player's theme: "light", "dark", or "" to follow the system. */
function applyTheme(theme: string): void {
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}
applyTheme(localStorage.getItem(THEME_KEY) ?? "");

/** Whether moves wait for a second tap: the player's choice, else on for
 * 13×13 and 19×19 on a touch screen, where a point is a fingertip wide. */
function confirmsMoves(boardSize: number): boolean {
  const chosen = localStorage.getItem(CONFIRM_KEY);
  if (chosen !== null) return chosen === "1";
  return boardSize >= 13 && matchMedia("(pointer: coarse)").matches;
}

let audio: AudioContext | undefined;

/** A short wooden click, made on the spot: no sound file to fetch. */
function stoneSound(): void {
  try {
    audio ??= new AudioContext();
    const t = audio.currentTime;
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.type = "triangle";
    osc.frequency.setValueAtTime(900, t);
    osc.frequency.exponentialRampToValueAtTime(300, t + 0.06);
    gain.gain.setValueAtTime(0.4, t);
    gain.gain.exponentialRampToValueAtTime(0.001, t + 0.09);
    osc.connect(gain).connect(audio.destination);
    osc.start(t);
    osc.stop(t + 0.1);
  } catch {
    // No sound here: the title and the vibration still tell.
  }
}

function loadSession(): Session | undefined {
  try {
    const s = JSON.parse(localStorage.getItem(SESSION_KEY) ?? "null") as Session | null;
    if (s && typeof s.token === "string" && s.expiresAtMs > Date.now()) return s;
  } catch {
    // A damaged entry is the same as none.
  }
  return undefined;
}

let session = loadSession();

function saveSession(s: Session | undefined): void {
  session = s;
  if (s) localStorage.setItem(SESSION_KEY, JSON.stringify(s));
  else localStorage.removeItem(SESSION_KEY);
}

const api = connect(location.origin, () => session?.token);

/** What the operator configured for the page (`/config.json`). */
interface PageConfig {
  googleClientId?: string;
}
/** Asked for at once and waited for only by the sign-in page, so a game's board never waits for it. */
const pageConfig: Promise<PageConfig> = fetch("/config.json")
  .then((r) => (r.ok ? (r.json() as Promise<PageConfig>) : {}))
  .catch(() => ({}));

// ---------------------------------------------------------------- helpers

type Child = Node | string | false | null | undefined;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | ((e: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (v === true) el.setAttribute(k, "");
    else if (v !== false) el.setAttribute(k, v);
  }
  for (const c of children) if (c !== false && c !== null && c !== undefined) el.append(c);
  return el;
}

/** Puts `children` (the ones given) in `el` instead of what it held. */
function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren(...children.filter((c): c is Node | string => !!c));
}

/** "Black" or "White", in the page's language. */
function colorName(c: Color): string {
  return t(c === Color.BLACK ? "color.black" : "color.white");
}

/**
 * What went wrong, in the player's language: a refusal by its reason
 * (docs/errors.md), with the values it names and `extra` put in; a reason
 * this page does not know in the server's English.
 */
function describe(e: unknown, extra: Record<string, string> = {}): string {
  if (e instanceof ConnectError) {
    if (e.code === Code.Unavailable) return t("error.unavailable");
    const refusal = refusalOf(e);
    const key = `refusal.${refusal?.reason}`;
    if (refusal && hasMessage(key)) {
      try {
        return t(key, { ...refusal.metadata, ...extra });
      } catch {
        // A value the words need is missing: the server's English says it.
      }
    }
    return e.rawMessage || e.message;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * `fill`, for a panel drawn again while it is used: the control that had
 * the focus (named by its `data-k`) gets it back, without a scroll.
 */
function refill(el: Element, ...children: Child[]): void {
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.k;
  fill(el, ...children);
  if (focused) el.querySelector<HTMLElement>(`[data-k="${focused}"]`)?.focus({ preventScroll: true });
}

/** `text` with `node` where the message put its "\u0000" value (a code shown in bold). */
function withNode(text: string, node: Node): Child[] {
  const [before, after] = text.split("\u0000");
  return [before, node, after];
}

/** The words of a list, as the page's language separates them. */
function listed(items: string[]): string {
  return items.join(t("list.separator"));
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });

/**
 * Calls `f`, retrying for up to 10 s while the server says to (UNAVAILABLE or
 * RESOURCE_EXHAUSTED, after the wait it names). Moves carry their number, so
 * a retried move is applied once.
 */
async function retrying<T>(f: () => Promise<T>): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      // A wait longer than the time left is the caller's to tell the player.
      const again =
        e instanceof ConnectError &&
        (e.code === Code.Unavailable || e.code === Code.ResourceExhausted) &&
        Date.now() + (retryAfterMs(e) ?? 0) < until;
      if (!again) throw e;
      await sleep(Math.min(retryAfterMs(e) ?? 300, 2_000));
    }
  }
}

function unauthenticated(e: unknown): boolean {
  return e instanceof ConnectError && e.code === Code.Unauthenticated;
}

// ---------------------------------------------------------------- screens

const root = document.getElementById("app") as HTMLElement;
/** Stops the streams and timers of the screen on show. */
let leave: () => void = () => {};

function show(title: string, ...children: Child[]): void {
  leave();
  leave = () => {};
  document.title = t("title", { screen: title });
  root.replaceChildren(...children.filter((c): c is Node | string => !!c));
  const heading = root.querySelector<HTMLElement>("h1, h2");
  if (heading) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
}

function onLeave(f: () => void): void {
  const before = leave;
  leave = () => {
    before();
    f();
  };
}

function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  void route();
}

window.addEventListener("popstate", () => void route());

async function route(): Promise<void> {
  const path = location.pathname;
  const game = /^\/g\/([^/]+)$/.exec(path);
  const challenge = /^\/c\/([A-Za-z0-9]+)$/.exec(path);
  if (!session) {
    signInScreen(challenge ? t("signin.invited") : undefined);
    return;
  }
  if (game) return gameScreen(decodeURIComponent(game[1]));
  if (challenge) return joinChallenge(challenge[1]);
  if (path === "/games") return myGamesScreen();
  if (path === "/watch") return watchScreen();
  lobby();
}

// Sign-in: a nickname for a guest, or Google for ranked play.
function signInScreen(why?: string): void {
  const status = h("p", { class: "status", role: "alert" });
  const input = h("input", {
    id: "nickname",
    name: "nickname",
    autocomplete: "nickname",
    required: true,
    minlength: "2",
    maxlength: "20",
    pattern: "[\\p{L}\\p{N}_\\-]{2,20}",
    title: t("signin.nicknameRule"),
  });
  const form = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        status.textContent = "";
        try {
          const r = await retrying(() => api.auth.signInGuest({ nickname: input.value.trim() }));
          saveSession({
            token: r.accessToken,
            userId: r.userId,
            nickname: input.value.trim(),
            google: false,
            expiresAtMs: Number(r.expiresAtUnixMs),
          });
          void route();
        } catch (e) {
          status.textContent = describe(e, { nickname: input.value.trim() });
        }
      },
    },
    h("label", { for: "nickname" }, t("signin.nickname")),
    input,
    h("p", { class: "hint" }, t("signin.hint")),
    h("button", { type: "submit", class: "primary" }, t("signin.guest")),
  );
  const ranked = h("div", {});
  show(
    t("signin.title"),
    h("h1", {}, "Ttakji"),
    h("p", { class: "lead" }, why ?? t("signin.lead")),
    form,
    ranked,
    status,
    h("footer", { class: "site" }, languageChoice(), themeChoice()),
  );
  void pageConfig.then(({ googleClientId }) => {
    if (!googleClientId || !ranked.isConnected) return;
    const google = h("div", { class: "google" });
    ranked.replaceWith(
      h(
        "section",
        { class: "card" },
        h("h2", {}, t("signin.rankedTitle")),
        h("p", {}, t("signin.rankedText")),
        google,
      ),
    );
    googleButton(google, googleClientId, input, status);
  });
}

interface GoogleId {
  accounts: {
    id: {
      initialize(o: { client_id: string; callback: (r: { credential: string }) => void }): void;
      renderButton(el: HTMLElement, o: Record<string, string>): void;
    };
  };
}

function googleButton(el: HTMLElement, clientId: string, nickname: HTMLInputElement, status: HTMLElement): void {
  const ready = () => {
    const g = (window as unknown as { google?: GoogleId }).google;
    if (!g) return;
    g.accounts.id.initialize({
      client_id: clientId,
      callback: async ({ credential }) => {
        try {
          const r = await retrying(() =>
            api.auth.signInGoogle({ idToken: credential, nickname: nickname.validity.valid ? nickname.value.trim() : "" }),
          );
          saveSession({
            token: r.accessToken,
            userId: r.userId,
            nickname: r.nickname,
            google: true,
            expiresAtMs: Number(r.expiresAtUnixMs),
          });
          void route();
        } catch (e) {
          status.textContent = describe(e, { nickname: nickname.value.trim() });
        }
      },
    });
    g.accounts.id.renderButton(el, { theme: "outline", size: "large", text: "signin_with", locale: currentLanguage() });
  };
  if ((window as unknown as { google?: GoogleId }).google) return ready();
  const script = h("script", { src: `https://accounts.google.com/gsi/client?hl=${currentLanguage()}`, async: true });
  script.addEventListener("load", ready);
  document.head.append(script);
}

function signedOut(message: string): void {
  saveSession(undefined);
  signInScreen(message);
}

// The lobby: every way to start a game, the options and the ladder.
function lobby(message?: string): void {
  const s = session as Session;
  const status = h("p", { class: "status", role: "alert" }, message ?? "");
  const select = (id: string, label: string, options: [string, string][], value: string) =>
    h(
      "div",
      { class: "field" },
      h("label", { for: id }, label),
      h("select", { id, name: id }, ...options.map(([v, t]) => h("option", { value: v, selected: v === value }, t))),
    );
  const sizes = sizeOptions();
  const aiForm = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const f = new FormData(e.target as HTMLFormElement);
        status.textContent = "";
        try {
          const r = await retrying(() =>
            api.games.startAiGame({
              boardSize: Number(f.get("ai-size")),
              level: Number(f.get("ai-level")) as AiLevel,
              color: Number(f.get("ai-color")) as ColorChoice,
              // The computer thinks in this page where it can (the rules
              // page promises it), else on the server.
              engine: pageCanThink() ? AiEngine.CLIENT : AiEngine.SERVER,
            }),
          );
          if (r.game) navigate(`/g/${r.game.gameId}`);
        } catch (e) {
          if (unauthenticated(e)) return signedOut(t("session.expired"));
          status.textContent = describe(e);
        }
      },
    },
    h("h2", {}, t("ai.title")),
    h("p", { class: "hint" }, t("ai.hint")),
    select("ai-size", t("field.boardSize"), sizes, "9"),
    select(
      "ai-level",
      t("ai.level"),
      [
        [String(AiLevel.EASY), t("level.easy")],
        [String(AiLevel.NORMAL), t("level.normal")],
        [String(AiLevel.HARD), t("level.hard")],
      ],
      String(AiLevel.EASY),
    ),
    select(
      "ai-color",
      t("ai.colour"),
      [
        [String(ColorChoice.BLACK), t("ai.black")],
        [String(ColorChoice.WHITE), t("ai.white")],
        [String(ColorChoice.RANDOM), t("ai.random")],
      ],
      String(ColorChoice.BLACK),
    ),
    h("button", { type: "submit", class: "primary" }, t("ai.title")),
  );
  const ranked = h("input", { type: "checkbox", id: "ranked", disabled: !s.google });
  const rankedNote = h("p", { class: "hint" });
  const queueForm = h(
    "form",
    {
      class: "card",
      onsubmit: (e: Event) => {
        e.preventDefault();
        const f = new FormData(e.target as HTMLFormElement);
        queueScreen(Number(f.get("queue-size")), ranked.checked);
      },
    },
    h("h2", {}, t("queue.title")),
    h("p", { class: "hint" }, t("queue.hint")),
    select("queue-size", t("field.boardSize"), sizes, "9"),
    h(
      "div",
      { class: "check" },
      ranked,
      h("label", { for: "ranked" }, t("queue.ranked")),
    ),
    rankedNote,
    h("button", { type: "submit", class: "primary" }, t("queue.find")),
  );
  const code = h("input", {
    id: "code",
    name: "code",
    autocomplete: "off",
    required: true,
    pattern: "[A-Za-z0-9]{6}",
    maxlength: "6",
    title: t("friend.codeRule"),
  });
  // A table's house rules (seed 001): a preset, and any choice changed.
  const tableForm = h(
    "form",
    {
      onsubmit: (e: Event) => {
        e.preventDefault();
        const f = new FormData(e.target as HTMLFormElement);
        const pick = (name: string) => String(f.get(name) ?? "");
        const komi = pick("table-komi");
        const time = pick("table-time");
        const standIn = pick("table-stand-in");
        challengeScreen({
          preset: Number(pick("table-preset")) as TablePreset,
          boardSize: Number(pick("table-size")),
          komi: komi === "" ? undefined : Number(komi),
          scoring: Number(pick("table-scoring")) as Scoring,
          secondsPerMove: time === "" ? undefined : Number(time),
          keepColorsOnRematch: f.get("table-swap") === null,
          computerStandsIn: standIn === "" ? undefined : standIn === "on",
        });
      },
    },
    h(
      "details",
      {},
      h("summary", {}, t("table.houseRules")),
      select(
        "table-preset",
        t("table.startFrom"),
        [
          [String(TablePreset.TTAKJI), t("table.presetTtakji")],
          [String(TablePreset.CLASSIC), t("table.presetClassic")],
        ],
        String(TablePreset.TTAKJI),
      ),
      select("table-size", t("field.boardSize"), [["0", t("table.asPreset")], ...sizes], "0"),
      select(
        "table-scoring",
        t("table.scoring"),
        [
          [String(Scoring.UNSPECIFIED), t("table.asPreset")],
          [String(Scoring.AREA), t("table.area")],
          [String(Scoring.TERRITORY), t("table.territory")],
        ],
        String(Scoring.UNSPECIFIED),
      ),
      select(
        "table-komi",
        t("table.komi"),
        [
          ["", t("table.komiUsual")],
          ["7", formatNumber(7)],
          ["6.5", formatNumber(6.5)],
          ["0", t("table.komiNone")],
        ],
        "",
      ),
      select(
        "table-time",
        t("table.time"),
        [
          ["", t("table.asPreset")],
          ["0", t("table.noLimit")],
          ["30", t("table.seconds", { seconds: 30 })],
          ["60", t("table.seconds", { seconds: 60 })],
        ],
        "",
      ),
      select(
        "table-stand-in",
        t("table.standIn"),
        [
          ["", t("table.asPreset")],
          ["on", t("table.standInOn")],
          ["off", t("table.standInOff")],
        ],
        "",
      ),
      h(
        "div",
        { class: "check" },
        h("input", { type: "checkbox", id: "table-swap", name: "table-swap", checked: true }),
        h("label", { for: "table-swap" }, t("table.swap")),
      ),
    ),
    h("button", { type: "submit", class: "primary" }, t("table.invite")),
  );
  const friendCard = h(
    "section",
    { class: "card" },
    h("h2", {}, t("friend.title")),
    tableForm,
    h(
      "form",
      {
        class: "inline",
        onsubmit: (e: Event) => {
          e.preventDefault();
          navigate(`/c/${code.value.trim().toUpperCase()}`);
        },
      },
      h("label", { for: "code" }, t("friend.code")),
      code,
      h("button", { type: "submit" }, t("friend.join")),
    ),
  );
  const atari = h("input", {
    type: "checkbox",
    id: "show-atari",
    checked: localStorage.getItem(ATARI_KEY) === "1",
    onchange: (e: Event) => localStorage.setItem(ATARI_KEY, (e.target as HTMLInputElement).checked ? "1" : "0"),
  });
  const ladder = h("section", { class: "card ladder" }, h("h2", {}, t("ladder.title")), h("p", {}, t("loading")));
  show(
    t("lobby.title"),
    h(
      "header",
      { class: "top" },
      h("h1", {}, "Ttakji"),
      h(
        "p",
        {},
        `${t("lobby.playingAs", { nickname: s.nickname, google: s.google ? "yes" : "no" })} `,
        h("button", { type: "button", class: "link", onclick: () => signedOut(t("session.signedOut")) }, t("lobby.signOut")),
      ),
      h("nav", { "aria-label": t("nav.label") }, pageLink("/games", t("nav.myGames")), " · ", pageLink("/watch", t("nav.watch"))),
    ),
    status,
    h("div", { class: "cards" }, aiForm, queueForm, friendCard, ladder),
    h(
      "section",
      { class: "card" },
      h("h2", {}, t("options.title")),
      h("div", { class: "check" }, atari, h("label", { for: "show-atari" }, t("options.atari"))),
      languageChoice(),
      themeChoice(),
    ),
  );
  void fillLadder(ladder);
  if (!s.google) {
    // Ranked play needs a Google sign-in: say how to get one, or that this
    // server offers none, instead of a box that cannot be ticked.
    void pageConfig.then(({ googleClientId }) => {
      if (!rankedNote.isConnected) return;
      fill(
        rankedNote,
        googleClientId
          ? h(
              "button",
              { type: "button", class: "link", onclick: () => signedOut(t("session.googleForRanked")) },
              t("ranked.signIn"),
            )
          : t("ranked.unavailable"),
      );
    });
  }
}

/** The theme: the system's, or light or dark, remembered. */
function themeChoice(): HTMLElement {
  const current = localStorage.getItem(THEME_KEY) ?? "";
  const select = h(
    "select",
    {
      id: "theme",
      onchange: (e: Event) => {
        const theme = (e.target as HTMLSelectElement).value;
        localStorage.setItem(THEME_KEY, theme);
        applyTheme(theme);
      },
    },
    ...[
      ["", t("theme.system")],
      ["light", t("theme.light")],
      ["dark", t("theme.dark")],
    ].map(([v, name]) => h("option", { value: v, selected: v === current }, name)),
  );
  return h("div", { class: "field" }, h("label", { for: "theme" }, t("theme.label")), select);
}

/**
 * The page's language, each offered in its own name; a choice is
 * remembered and the screen drawn again in it.
 */
function languageChoice(): HTMLElement {
  const current = currentLanguage();
  const select = h(
    "select",
    {
      id: "language",
      onchange: async (e: Event) => {
        await chooseLanguage((e.target as HTMLSelectElement).value as Language);
        void route();
      },
    },
    ...LANGUAGES.map(({ code, name }) => h("option", { value: code, lang: code, selected: code === current }, name)),
  );
  return h("div", { class: "field" }, h("label", { for: "language" }, t("language.label")), select);
}

async function fillLadder(el: HTMLElement): Promise<void> {
  try {
    const r = await retrying(() => api.ladder.getLadder({ boardSize: 9, top: 10 }));
    const table = (rows: LadderEntry[], caption: string) =>
      h(
        "table",
        {},
        h("caption", {}, caption),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", {}, t("ladder.rank")),
            h("th", {}, t("ladder.player")),
            h("th", {}, t("ladder.rating")),
            h("th", {}, t("ladder.games")),
          ),
        ),
        h(
          "tbody",
          {},
          ...rows.map((e) =>
            h(
              "tr",
              { class: e.userId === session?.userId ? "me" : "" },
              h("td", {}, formatNumber(e.rank)),
              h("td", {}, e.userId === session?.userId ? t("ladder.you", { nickname: e.nickname }) : e.nickname),
              // Ratings are written as players know them: 1240, not 1,240.
              h("td", {}, formatNumber(e.rating, { useGrouping: false })),
              h("td", {}, formatNumber(e.games)),
            ),
          ),
        ),
      );
    fill(el,
      h("h2", {}, t("ladder.title")),
      r.top.length ? table(r.top, t("ladder.top")) : h("p", {}, t("ladder.none")),
      r.aroundMe.length
        ? table(r.aroundMe, t("ladder.yourPlace"))
        : h("p", { class: "hint" }, t("ladder.noPlace")),
    );
  } catch (e) {
    el.replaceChildren(h("h2", {}, t("ladder.title")), h("p", {}, describe(e)));
  }
}

// The queue: the wait shown, then the game.
function queueScreen(boardSize: number, ranked: boolean): void {
  const abort = new AbortController();
  let ticketId = "";
  const wait = h("p", { class: "wait", "aria-live": "polite" }, t("queue.joining"));
  const cancel = async () => {
    abort.abort();
    if (ticketId) await api.match.cancelMatch({ ticketId }).catch(() => {});
    lobby();
  };
  show(
    t("queue.screenTitle"),
    h(
      "section",
      { class: "card center" },
      h("h2", {}, t("queue.looking", { size: boardSize })),
      wait,
      h("button", { type: "button", onclick: cancel }, t("cancel")),
    ),
  );
  onLeave(() => abort.abort());
  void (async () => {
    try {
      for await (const r of api.match.findMatch({ boardSize, ranked }, { signal: abort.signal })) {
        const ticket = r.ticket;
        if (!ticket) continue;
        ticketId = ticket.ticketId;
        if (ticket.state === TicketState.MATCHED && ticket.gameId) return navigate(`/g/${ticket.gameId}`);
        if (ticket.state === TicketState.CANCELLED) return lobby(t("queue.left"));
        const seconds = Math.floor(Number(ticket.waitedMs) / 1000);
        wait.textContent = t("queue.waiting", { seconds, players: ticket.waiting });
      }
    } catch (e) {
      if (abort.signal.aborted) return;
      if (unauthenticated(e)) return signedOut(t("session.expired"));
      lobby(describe(e));
    }
  })();
}

// A friend challenge: the link to send, then the game once the friend joins.
/** A table's house rules as a challenge sends them. */
type TableRules = Parameters<typeof api.match.createChallenge>[0]["rules"];

function challengeScreen(rules: TableRules): void {
  const abort = new AbortController();
  const body = h("div", {}, h("p", {}, t("invite.making")));
  show(
    t("invite.title"),
    h(
      "section",
      { class: "card center" },
      h("h2", {}, t("invite.title")),
      body,
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            abort.abort();
            lobby();
          },
        },
        t("cancel"),
      ),
    ),
  );
  onLeave(() => abort.abort());
  void (async () => {
    try {
      for await (const r of api.match.createChallenge({ rules }, { signal: abort.signal })) {
        const c = r.challenge;
        if (!c) continue;
        if (c.gameId) return navigate(`/g/${c.gameId}`);
        // The link is on this server's own address, whatever address the
        // friend's browser reaches it by.
        const link = `${location.origin}/c/${c.code}`;
        const field = h("input", { id: "link", readonly: true, value: link });
        fill(body,
          h("label", { for: "link" }, t("invite.send")),
          field,
          h(
            "button",
            {
              type: "button",
              class: "primary",
              onclick: async (e: Event) => {
                await navigator.clipboard?.writeText(link).catch(() => {});
                (e.target as HTMLButtonElement).textContent = t("invite.copied");
              },
            },
            t("invite.copy"),
          ),
          h("p", {}, ...withNode(t("invite.code", { code: "\u0000" }), h("strong", { class: "code" }, c.code))),
          h("p", { class: "wait", "aria-live": "polite" }, t("invite.waiting")),
        );
      }
    } catch (e) {
      if (abort.signal.aborted) return;
      if (unauthenticated(e)) return signedOut(t("session.expired"));
      lobby(describe(e));
    }
  })();
}

async function joinChallenge(code: string): Promise<void> {
  show(t("join.title"), h("section", { class: "card center" }, h("h2", {}, t("join.heading"))));
  try {
    const r = await retrying(() => api.match.acceptChallenge({ code }));
    if (r.game) navigate(`/g/${r.game.gameId}`, true);
  } catch (e) {
    if (unauthenticated(e)) return signedOut(t("session.expired"));
    history.replaceState(null, "", "/");
    lobby(t("join.failed", { why: describe(e) }));
  }
}

// ---------------------------------------------------------------- lists of games

/** A link to another screen of the page, followed without a reload. */
function pageLink(path: string, text: string): HTMLAnchorElement {
  return h(
    "a",
    {
      href: path,
      onclick: (e: Event) => {
        e.preventDefault();
        navigate(path);
      },
    },
    text,
  );
}

/** A game in a list: who played whom, how, the result or the moves so far, and when. */
function summaryItem(g: GameSummary): HTMLElement {
  const me = g.yourColor;
  const title =
    me === Color.UNSPECIFIED
      ? t("games.pair", { black: playerName(g.black), white: playerName(g.white) })
      : t("games.against", { opponent: playerName(me === Color.BLACK ? g.white : g.black), color: colorName(me) });
  const when = new Date(Number(g.finishedAtUnixMs) || Number(g.createdAtUnixMs));
  const details = [
    t("size", { size: g.boardSize }),
    t(g.ranked ? "games.ranked" : g.againstComputer ? "games.computer" : "games.free"),
    g.ladderRating > 0 && !g.againstComputer && me === Color.UNSPECIFIED
      ? t("games.rating", { rating: formatNumber(g.ladderRating, { useGrouping: false }) })
      : "",
    t("games.moves", { moves: g.moveCount }),
    g.status === GameStatus.PLAYING ? t("games.playing") : resultInWords(g),
    when.toLocaleDateString(currentLanguage(), { year: "numeric", month: "short", day: "numeric" }),
  ];
  return h("li", {}, pageLink(`/g/${g.gameId}`, title), h("p", { class: "hint" }, details.filter(Boolean).join(" · ")));
}

/** A list of games, a page at a time, with a button for the next. */
function gameList(
  empty: string,
  page: (token: string) => Promise<{ games: GameSummary[]; nextPageToken: string }>,
): HTMLElement {
  const list = h("ol", { class: "games" });
  const status = h("p", { class: "status", role: "alert" });
  const more = h("button", { type: "button", hidden: true }, t("games.more"));
  const section = h("div", { "aria-busy": "true" }, list, status, more);
  let token = "";
  const next = async () => {
    more.disabled = true;
    try {
      const r = await retrying(() => page(token));
      list.append(...r.games.map(summaryItem));
      token = r.nextPageToken;
      more.hidden = token === "";
      if (list.childElementCount === 0) status.textContent = empty;
    } catch (e) {
      if (unauthenticated(e)) return signedOut(t("session.expired"));
      status.textContent = describe(e);
    } finally {
      more.disabled = false;
      section.removeAttribute("aria-busy");
    }
  };
  more.addEventListener("click", () => void next());
  void next();
  return section;
}

/** The board sizes offered, each with its name ("9×9"). */
function sizeOptions(): [string, string][] {
  return ["9", "13", "19"].map((n) => [n, t("size", { size: n })]);
}

/** A screen of games: its title, a way back to the lobby, and a card with a hint and the list. */
function listScreen(title: string, hint: string, ...body: Child[]): void {
  show(
    title,
    h("header", { class: "top" }, h("h1", {}, title), h("p", {}, pageLink("/", t("game.backToLobby")))),
    h("section", { class: "card" }, h("p", { class: "hint" }, hint), ...body),
  );
}

// My games: every game the player played, newest first, each opening its record.
function myGamesScreen(): void {
  listScreen(
    t("games.myTitle"),
    t("games.myHint"),
    gameList(t("games.noneMine"), (pageToken) => api.games.listMyGames({ pageSize: 20, pageToken })),
  );
}

// Live games: games being played now, the ladder's strongest first, to watch.
function watchScreen(): void {
  const sizes: [string, string][] = [["0", t("games.allSizes")], ...sizeOptions()];
  const holder = h("div", {});
  const list = (boardSize: number) =>
    fill(holder, gameList(t("games.noneLive"), (pageToken) => api.games.listLiveGames({ pageSize: 20, pageToken, boardSize })));
  const select = h(
    "select",
    { id: "watch-size", onchange: (e: Event) => list(Number((e.target as HTMLSelectElement).value)) },
    ...sizes.map(([v, name]) => h("option", { value: v }, name)),
  );
  listScreen(
    t("games.liveTitle"),
    t("games.liveHint"),
    h("div", { class: "field" }, h("label", { for: "watch-size" }, t("field.boardSize")), select),
    holder,
  );
  list(0);
}

// ---------------------------------------------------------------- the game

const isAi = (p?: Player) => !!p && p.aiLevel !== AiLevel.UNSPECIFIED;

/** Whether this browser can run the computer's engine (WebAssembly in a Worker). */
const pageCanThink = () => typeof WebAssembly === "object" && typeof Worker === "function";

const LEVEL_NAMES: Partial<Record<AiLevel, "easy" | "normal" | "hard">> = {
  [AiLevel.EASY]: "easy",
  [AiLevel.NORMAL]: "normal",
  [AiLevel.HARD]: "hard",
};

/** A player's name: the computer's by its level in the page's language ("Easy AI"), a person's nickname. */
function playerName(p: Player | undefined): string {
  if (!p) return "?";
  if (!isAi(p)) return p.nickname;
  const level = p.aiLevel === AiLevel.HARD ? "level.hard" : p.aiLevel === AiLevel.EASY ? "level.easy" : "level.normal";
  return t("player.computer", { level: t(level) });
}

/** The page's engine (./computer), once a game has needed it. */
let computerModule: typeof import("./computer") | undefined;

/**
 * Whether this document is being left (a reload, a link away): its engine's
 * Workers are stopped under it then, which is no reason to have the server
 * think instead. A page brought back from the back-forward cache is here again.
 */
let unloading = false;
window.addEventListener("pagehide", () => {
  unloading = true;
});
window.addEventListener("pageshow", () => {
  unloading = false;
});

/** A fresh 64-bit seed for the computer's search, in decimal. */
function randomSeed(): string {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** "19×19 · territory scoring · komi 6.5 · no time limit". */
function rulesInWords(g: GameSnapshot): string {
  return [
    t("size", { size: g.boardSize }),
    t(g.scoring === Scoring.TERRITORY ? "rules.territory" : "rules.area"),
    g.komi === 0 ? t("rules.noKomi") : t("rules.komi", { komi: g.komi }),
    g.secondsPerMove > 0 ? t("rules.time", { seconds: g.secondsPerMove }) : t("rules.noTime"),
    g.computerStandsIn && t("rules.standIn"),
  ]
    .filter(Boolean)
    .join(" · ");
}

/** A count in words: "Black 41 – White 47 (komi 7)", White's points with komi. */
function countInWords(c: Count): string {
  return t("count.summary", { black: c.blackPoints, white: c.whitePoints + c.komi, komi: c.komi });
}

/**
 * The result in words: "White wins by 2.5", "Black wins by resignation",
 * "White wins on time", "Jigo (a draw on the board)", "A draw by agreement".
 */
function resultInWords(game: Pick<GameSnapshot, "result">): string {
  const r = game.result;
  if (!r) return "";
  const color = colorName(r.winner);
  switch (r.reason) {
    case EndReason.RESIGNATION:
      return t("result.resignation", { color });
    case EndReason.TIMEOUT:
      return t("result.time", { color });
    case EndReason.DRAW_AGREED:
      return t("result.agreed");
    default:
      if (r.winner === Color.UNSPECIFIED) return t("result.jigo");
      // A listed game's result has no count: its margin is in the SGF form ("B+3.5").
      return t("result.points", { color, margin: r.count?.margin ?? Number(/\+([\d.]+)$/.exec(r.text)?.[1] ?? 0) });
  }
}

async function gameScreen(gameId: string): Promise<void> {
  show(t("game.title"), h("p", { class: "card center" }, t("game.loading")));
  let first: GameSnapshot | undefined;
  try {
    first = (await retrying(() => api.games.getGame({ gameId }))).game;
  } catch (e) {
    if (unauthenticated(e)) return signedOut(t("session.expired"));
    return lobby(t("game.openFailed", { why: describe(e) }));
  }
  if (first) new GameView(first).mount();
}

class GameView {
  private game: GameSnapshot;
  private offsetMs = 0;
  private busy = false;
  /** The count shown: asked for, or sent after the opponent's pass. */
  private preview?: Count;
  private abort = new AbortController();
  /** The current WatchGame stream's: aborting it starts the stream again. */
  private stream?: AbortController;
  private board = new Board((p) => void this.play(p));
  private players = h("div", { class: "players" });
  private turn = h("p", { class: "turn", "aria-live": "polite" });
  private status = h("p", { class: "status", role: "alert" });
  private controls = h("div", { class: "controls" });
  private count = h("div", { class: "count", "aria-live": "polite" });
  private after = h("div", { class: "after" });
  private resignArmed = false;
  private rematching = false;
  private opponentHere = true;
  /** Says where the computer thinks when that is not where it was asked to. */
  private notice = h("p", { class: "hint notice", role: "status" });
  /** Announces the opponent's moves to screen readers. */
  private announce = h("p", { class: "sr-only", "aria-live": "polite" });
  /** A move shown and waiting for its second tap, with move confirmation on. */
  private pending?: Point;
  /** Whether it was this player's turn when the page last drew (unknown before the first). */
  private wasMyTurn?: boolean;
  /** The position (move count and event) the page is playing the computer's move in. */
  private thinkingAt?: string;
  /** Whether the engine is thinking now (a stale search is stopped). */
  private engineBusy = false;
  private readonly seed = randomSeed();
  /** The game's moves and the position after each, once read (GetSgf). */
  private record?: { moves: RecordMove[]; positions: Position[] };
  private readingRecord = false;
  /** The move looked back at; undefined for the game as it stands. */
  private viewing?: number;
  /** A line of play drawn from the position looked back at: the review's better move and its replies. */
  private line?: string[];
  private recordPanel = h("section", { class: "record card", "aria-label": t("record.label"), hidden: true });
  private reviewPanel = h("section", { class: "review card", "aria-label": t("review.label"), hidden: true });
  /** The review's readings, by position; `reviewing` while it runs. */
  private readings: (import("./computer").Reading | undefined)[] = [];
  private review: "none" | "running" | "stopped" | "done" = "none";

  constructor(game: GameSnapshot) {
    this.game = game;
    this.took(game);
  }

  mount(): void {
    show(
      t("game.title"),
      h("h2", { class: "sr-only" }, t("game.title")),
      h(
        "div",
        { class: "game" },
        h("div", { class: "side" }, this.players, this.turn, h("p", { class: "hint rules" }, rulesInWords(this.game))),
        this.board.element,
        h(
          "div",
          { class: "side" },
          this.controls,
          this.status,
          this.notice,
          this.after,
          this.count,
          this.prefs(),
          this.recordPanel,
          this.reviewPanel,
        ),
      ),
      this.announce,
    );
    // ← → Home End step through the record, wherever the focus is but on
    // the board (whose arrows move between points) and in a field.
    const keys = (e: KeyboardEvent) => {
      const n = this.record?.moves.length;
      const target = e.target as Element | null;
      if (n === undefined || e.altKey || e.ctrlKey || e.metaKey || target?.closest(".board, input:not([type=\"checkbox\"]), select, textarea")) return;
      const at = this.viewing ?? n;
      const to = ({ ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: n } as Record<string, number>)[e.key];
      if (to === undefined) return;
      e.preventDefault();
      this.view(to);
    };
    document.addEventListener("keydown", keys);
    onLeave(() => document.removeEventListener("keydown", keys));
    const tick = setInterval(() => this.drawClock(), 250);
    const again = () => this.stream?.abort();
    const shown = () => document.visibilityState === "visible" && again();
    window.addEventListener("online", again);
    document.addEventListener("visibilitychange", shown);
    onLeave(() => {
      clearInterval(tick);
      window.removeEventListener("online", again);
      document.removeEventListener("visibilitychange", shown);
      this.abort.abort();
      if (this.engineBusy) computerModule?.stop();
    });
    this.draw();
    void this.watch();
  }

  private get mine(): Color {
    return this.game.yourColor;
  }

  private get opponent(): Player | undefined {
    return this.mine === Color.BLACK ? this.game.white : this.game.black;
  }

  private get playing(): boolean {
    return this.game.status === GameStatus.PLAYING;
  }

  /** Keeps a snapshot if it is not older than the one shown. */
  private took(g: GameSnapshot, event?: GameEvent): boolean {
    if (g.eventSeq < this.game.eventSeq) return false;
    const offset = clockOffsetMs(g);
    if (offset !== undefined) this.offsetMs = offset;
    const moved = g.moveCount !== this.game.moveCount || g.status !== this.game.status;
    const wasCounting = !!this.game.counting;
    this.game = g;
    // A line about the position before (a refusal, a pass, a mark) has
    // served once the game moved on; the event below may say something new.
    if (moved || wasCounting !== !!g.counting) {
      this.status.textContent = "";
      this.pending = undefined;
    }
    if (g.scorePreview) this.preview = g.scorePreview;
    else if (moved) this.preview = undefined;
    const kind = event?.kind;
    const record = this.record;
    if (kind?.case === "movePlayed" && kind.value.move && record && record.moves.length === g.moveCount - 1) {
      const move = { color: kind.value.move.color, point: kind.value.move.point };
      record.moves.push(move);
      record.positions.push(after(record.positions[record.positions.length - 1], move, g.boardSize));
    }
    if (kind?.case === "movePlayed" && kind.value.move && kind.value.move.color !== this.mine) {
      this.announce.textContent = this.moveInWords(kind.value.move.color, kind.value.move.point, kind.value.move.captured.length);
    }
    if (kind?.case === "movePlayed" && !kind.value.move?.point && kind.value.move?.color !== this.mine && g.scorePreview) {
      this.status.textContent = t("status.passed", { color: colorName(kind.value.move?.color ?? Color.UNSPECIFIED) });
    }
    if (kind?.case === "drawDeclined" && kind.value.by !== this.mine) this.status.textContent = t("status.drawDeclined");
    if (kind?.case === "countingStarted") this.status.textContent = t("status.countingStarted");
    if (kind?.case === "deadStonesMarked" && kind.value.by !== this.mine) {
      this.status.textContent = t("status.marked", {
        color: colorName(kind.value.by),
        stones: kind.value.stones.length,
        dead: kind.value.dead ? "yes" : "no",
      });
    }
    if (kind?.case === "countConfirmed" && kind.value.by !== this.mine) {
      this.status.textContent = t("status.confirmed", { color: colorName(kind.value.by) });
    }
    if (kind?.case === "standInSeated") {
      this.status.textContent =
        kind.value.color === this.mine ? t("status.standInYou") : t("status.standIn", { color: colorName(kind.value.color) });
    }
    if (kind?.case === "standInLeft" && kind.value.color !== this.mine) {
      this.status.textContent = t("status.standInLeft", { color: colorName(kind.value.color) });
    }
    if (kind?.case === "playResumed") {
      this.status.textContent =
        kind.value.by === this.mine ? t("status.resumedYou") : t("status.resumed", { color: colorName(kind.value.by) });
    }
    return true;
  }

  /**
   * The game's events from the last one seen, until it ends: again after
   * every drop, and at once when the device is back online or the page is
   * shown again (a connection may have died without a word meanwhile).
   */
  private async watch(): Promise<void> {
    let backoff = 250;
    while (!this.abort.signal.aborted) {
      const stream = new AbortController();
      this.stream = stream;
      const stop = () => stream.abort();
      this.abort.signal.addEventListener("abort", stop);
      let restarted = false;
      try {
        // The stream sends the game whole once, then what each event
        // changed in the game it sent last.
        const events = api.games.watchGame(
          { gameId: this.game.gameId, afterSeq: this.game.eventSeq, changes: true },
          // Connected again: say whose turn it is instead of "Reconnecting…".
          { signal: stream.signal, onHeader: () => this.drawPlayers() },
        );
        let shown: GameSnapshot | undefined;
        for await (const r of events) {
          backoff = 250;
          const event = r.event;
          if (event?.snapshot) shown = event.snapshot;
          else if (event?.change) {
            if (!shown) throw new Error("a change before the game it changes");
            shown = applyChange(shown, event.change);
          }
          if (event && shown && this.took(shown, event)) this.draw();
          const p = r.presence;
          if (p && p.userId && p.userId === this.opponent?.userId) {
            this.opponentHere = p.connected;
            this.drawPlayers();
          }
        }
        if (!this.playing) return;
      } catch (e) {
        if (this.abort.signal.aborted) return;
        restarted = stream.signal.aborted;
        if (!restarted && unauthenticated(e)) return signedOut(t("session.expired"));
      } finally {
        this.abort.signal.removeEventListener("abort", stop);
      }
      if (restarted) continue;
      // What happened while the stream was down comes first on the next one.
      this.turn.textContent = t("turn.reconnecting");
      await sleep(backoff, this.abort.signal);
      backoff = Math.min(backoff * 2, 5_000);
    }
  }

  private async act(f: () => Promise<{ game?: GameSnapshot }>): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.status.textContent = "";
    try {
      const r = await retrying(f);
      if (r.game) this.took(r.game);
    } catch (e) {
      if (unauthenticated(e)) return signedOut(t("session.expired"));
      this.status.textContent = describe(e);
    } finally {
      this.busy = false;
      this.draw();
    }
  }

  private play(point: Point): void {
    if (this.viewing !== undefined) {
      if (this.playing) this.status.textContent = t("record.lookingBack");
      return;
    }
    if (!this.playing) return;
    const counting = this.game.counting;
    if (counting) {
      if (this.mine === Color.UNSPECIFIED) return;
      const stone = this.game.stones[point.row * this.game.boardSize + point.column];
      if (stone === Color.UNSPECIFIED) {
        this.status.textContent = t("status.pressStone");
        return;
      }
      const marked = counting.deadStones.some((p) => p.column === point.column && p.row === point.row);
      const { gameId } = this.game;
      void this.act(() => api.games.markDeadStones({ gameId, point, dead: !marked }));
      return;
    }
    if (this.game.toMove !== this.mine) {
      this.status.textContent = t("status.notYourTurn", { color: colorName(this.game.toMove) });
      return;
    }
    if (confirmsMoves(this.game.boardSize)) {
      const p = this.pending;
      if (!p || p.column !== point.column || p.row !== point.row) {
        // The first tap shows the stone; a second on it plays it.
        this.pending = point;
        this.status.textContent = "";
        this.announce.textContent = t("announce.tapAgain", { point: pointName(point) });
        this.draw();
        return;
      }
    }
    this.pending = undefined;
    const { gameId, moveCount } = this.game;
    void this.act(() => api.games.playMove({ gameId, moveNumber: moveCount + 1, point }));
  }

  /** "White played D5, capturing 2 stones. 28 seconds left." */
  private moveInWords(color: Color, point: Point | undefined, captured: number): string {
    const who = colorName(color);
    const what = !point
      ? t("announce.passed", { color: who })
      : captured > 0
        ? t("announce.capturing", { color: who, point: pointName(point), stones: captured })
        : t("announce.played", { color: who, point: pointName(point) });
    const clock = this.game.clock;
    if (!clock || !this.playing || this.game.toMove !== this.mine) return what;
    const seconds = Math.max(0, Math.ceil((Number(clock.deadlineUnixMs) - (Date.now() + this.offsetMs)) / 1000));
    return `${what} ${t("clock.left", { seconds })}.`;
  }

  /** The player's choices for this page: move confirmation and the stone sound. */
  private prefs(): HTMLElement {
    const confirm = h("input", {
      type: "checkbox",
      id: "confirm-moves",
      checked: confirmsMoves(this.game.boardSize),
      onchange: (e: Event) => {
        localStorage.setItem(CONFIRM_KEY, (e.target as HTMLInputElement).checked ? "1" : "0");
        this.pending = undefined;
        this.draw();
      },
    });
    const sound = h("input", {
      type: "checkbox",
      id: "stone-sound",
      checked: localStorage.getItem(SOUND_KEY) === "1",
      onchange: (e: Event) => {
        const on = (e.target as HTMLInputElement).checked;
        localStorage.setItem(SOUND_KEY, on ? "1" : "0");
        if (on) stoneSound();
      },
    });
    return h(
      "div",
      { class: "prefs", role: "group", "aria-label": t("prefs.label") },
      h("div", { class: "check" }, confirm, h("label", { for: "confirm-moves" }, t("prefs.confirm"))),
      h("div", { class: "check" }, sound, h("label", { for: "stone-sound" }, t("prefs.sound"))),
      languageChoice(),
    );
  }

  private draw(): void {
    const g = this.game;
    const shownCount = g.counting?.count ?? (this.playing ? this.preview : g.result?.count);
    if (!this.record || this.record.moves.length !== g.moveCount) void this.readRecord();
    const record = this.record;
    if (this.viewing !== undefined && record) {
      const k = Math.min(this.viewing, record.moves.length);
      this.board.update({
        size: g.boardSize,
        stones: record.positions[k].stones,
        lastMove: record.moves[k - 1]?.point,
        ko: [],
        dead: [],
        atari: [],
        labels: this.line ? this.lineLabels(k, this.line) : this.moveNumbers(k),
      });
    } else {
      this.board.update({
        size: g.boardSize,
        stones: g.stones,
        lastMove: g.lastMove?.point,
        ko: this.playing ? g.koForbidden : [],
        dead: shownCount?.deadStones ?? [],
        atari: localStorage.getItem(ATARI_KEY) === "1" ? g.inAtari : [],
        pending: this.playing && !g.counting && g.toMove === this.mine ? this.pending : undefined,
        pendingColor: this.mine,
        labels: this.moveNumbers(record?.moves.length ?? 0),
        territory: shownCount && { black: shownCount.blackTerritory, white: shownCount.whiteTerritory },
      });
    }
    this.drawRecord();
    this.drawReview();
    this.noticeTurn();
    this.drawPlayers();
    this.drawControls();
    this.drawCount(shownCount);
    this.drawAfter();
    void this.thinkIfComputerToMove();
  }

  /** Reads the game's record (again, if the game went back: an undo). */
  private async readRecord(): Promise<void> {
    if (this.readingRecord) return;
    this.readingRecord = true;
    const { gameId, boardSize } = this.game;
    try {
      const { sgf } = await retrying(() => api.games.getSgf({ gameId }));
      const moves = movesOfRecord(sgf, boardSize);
      this.record = { moves, positions: replay(boardSize, moves) };
      if (this.viewing !== undefined && this.viewing >= moves.length) this.viewing = undefined;
    } catch {
      // The record waits for the next change of the game; play goes on.
      return;
    } finally {
      this.readingRecord = false;
    }
    if (this.record.moves.length === this.game.moveCount) this.draw();
  }

  /** Looks at the position after `k` moves; the last is the game as it stands. */
  private view(k: number | undefined, line?: string[]): void {
    const n = this.record?.moves.length ?? 0;
    this.line = line;
    this.viewing = k === undefined || (k >= n && !line) ? undefined : Math.max(0, Math.min(k, n));
    this.draw();
  }

  /** The number of each stone on the board after `k` moves, when the player shows them. */
  private moveNumbers(k: number): Map<number, { text: string }> | undefined {
    const r = this.record;
    if (!r || localStorage.getItem(NUMBERS_KEY) !== "1") return undefined;
    const n = this.game.boardSize;
    const stones = r.positions[k]?.stones ?? [];
    const labels = new Map<number, { text: string }>();
    r.moves.slice(0, k).forEach((m, j) => {
      if (!m.point) return;
      const i = m.point.row * n + m.point.column;
      if (stones[i] === m.color) labels.set(i, { text: String(j + 1) });
    });
    // A point played again after a capture shows its last stone's number.
    for (const [i] of labels) if (stones[i] === Color.UNSPECIFIED) labels.delete(i);
    return labels;
  }

  /** A line of play from the position after `k` moves, numbered from 1. */
  private lineLabels(k: number, line: string[]): Map<number, { text: string; color: Color }> {
    const r = this.record;
    const n = this.game.boardSize;
    const labels = new Map<number, { text: string; color: Color }>();
    let color = toMoveAt(r?.moves ?? [], k);
    line.forEach((name, j) => {
      const p = parsePoint(name, n);
      if (p && !labels.has(p.row * n + p.column)) labels.set(p.row * n + p.column, { text: String(j + 1), color });
      color = color === Color.BLACK ? Color.WHITE : Color.BLACK;
    });
    return labels;
  }

  /** "Move 12 of 40: Black D4" (or the start). */
  private whereInWords(k: number): string {
    const r = this.record;
    const n = r?.moves.length ?? 0;
    const m = r?.moves[k - 1];
    if (!m) return t("record.start", { moves: n });
    return t("record.at", { move: k, moves: n, color: colorName(m.color), point: m.point ? pointName(m.point) : t("record.pass") });
  }

  /** The move list and the controls that step through it. */
  private drawRecord(): void {
    const r = this.record;
    this.recordPanel.hidden = !r;
    if (!r) return;
    const n = r.moves.length;
    const at = this.viewing ?? n;
    const step = (k: string, label: string, name: string, to: number, enabled: boolean) =>
      h("button", { type: "button", "data-k": k, "aria-label": name, title: name, disabled: !enabled, onclick: () => this.view(to) }, label);
    const numbers = h("input", {
      type: "checkbox",
      id: "move-numbers",
      "data-k": "numbers",
      checked: localStorage.getItem(NUMBERS_KEY) === "1",
      onchange: (e: Event) => {
        localStorage.setItem(NUMBERS_KEY, (e.target as HTMLInputElement).checked ? "1" : "0");
        this.draw();
      },
    });
    const slider = h("input", {
      type: "range",
      id: "move-slider",
      "data-k": "slider",
      min: "0",
      max: String(n),
      value: String(at),
      "aria-valuetext": this.whereInWords(at),
      oninput: (e: Event) => this.view(Number((e.target as HTMLInputElement).value)),
    });
    const short = (c: Color) => t(c === Color.BLACK ? "record.b" : "record.w");
    refill(
      this.recordPanel,
      h("h3", {}, t("record.title")),
      h(
        "div",
        { class: "steps", role: "toolbar", "aria-label": t("record.steps") },
        step("first", "⏮", t("record.first"), 0, at > 0),
        step("previous", "◀", t("record.previous"), at - 1, at > 0),
        step("next", "▶", t("record.next"), at + 1, at < n),
        step("last", "⏭", t("record.last"), n, at < n),
      ),
      h("label", { for: "move-slider", class: "sr-only" }, t("record.jump")),
      slider,
      h("p", { class: "at", "aria-live": "polite" }, this.whereInWords(at)),
      this.viewing !== undefined &&
        this.playing &&
        h("button", { type: "button", class: "primary", "data-k": "present", onclick: () => this.view(undefined) }, t("record.backToGame")),
      this.line && h("p", { class: "hint" }, t("review.lineShown", { line: this.line.join(" ") })),
      h("div", { class: "check" }, numbers, h("label", { for: "move-numbers" }, t("record.numbers"))),
      h(
        "ol",
        { class: "moves", "aria-label": t("record.moves") },
        ...r.moves.map((m, i) =>
          h(
            "li",
            {},
            h(
              "button",
              {
                type: "button",
                class: "link",
                "data-k": `m${i + 1}`,
                "aria-current": i + 1 === at ? "step" : false,
                onclick: () => this.view(i + 1),
              },
              `${formatNumber(i + 1)}. ${short(m.color)} ${m.point ? pointName(m.point) : t("record.pass")}`,
            ),
          ),
        ),
      ),
    );
    // The list scrolls to the move shown; the page never does, so the board stays still.
    const list = this.recordPanel.querySelector<HTMLElement>("ol.moves");
    const current = list?.querySelector<HTMLElement>('[aria-current="step"]');
    if (list && current) {
      const top = current.offsetTop;
      if (top < list.scrollTop || top + current.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = top - list.clientHeight / 2;
      }
    } else if (list && at === n) {
      list.scrollTop = list.scrollHeight;
    }
  }

  /** Black's chance to win in position `k` as the review read it, or at the end of a counted game. */
  private blackChance(k: number): number | undefined {
    const r = this.record;
    const reading = this.readings[k];
    if (!r) return undefined;
    if (!reading) {
      if (k !== r.moves.length || !this.endedByPasses()) return undefined;
      const winner = this.game.result?.winner;
      return winner === Color.BLACK ? 1 : winner === Color.WHITE ? 0 : 0.5;
    }
    return toMoveAt(r.moves, k) === Color.BLACK ? reading.winrate : 1 - reading.winrate;
  }

  /** Whether the record ends in two passes: the engine reads no position after those. */
  private endedByPasses(at?: number): boolean {
    const moves = this.record?.moves ?? [];
    const k = at ?? moves.length;
    return k >= 2 && !moves[k - 1].point && !moves[k - 2].point;
  }

  /** The positions a review reads: every one but those after two passes (a game the engine sees as over). */
  private reviewPositions(): number[] {
    const n = this.record?.moves.length ?? 0;
    return Array.from({ length: n + 1 }, (_, k) => k).filter((k) => !this.endedByPasses(k));
  }

  private async runReview(): Promise<void> {
    const r = this.record;
    if (!r || this.review === "running") return;
    const g = this.game;
    const n = r.moves.length;
    const positions = this.reviewPositions();
    this.readings = new Array(n + 1).fill(undefined);
    this.review = "running";
    this.reviewStarted = performance.now();
    this.drawReview();
    const playouts = g.boardSize <= 9 ? 3000 : g.boardSize <= 13 ? 1500 : 800;
    try {
      const computer = await import("./computer");
      computerModule = computer;
      this.engineBusy = true;
      await computer.review(
        { size: g.boardSize, komi: g.komi, rules: g.ruleset, moves: gtpMoves(r.moves) },
        playouts,
        positions,
        (k, reading) => {
          this.readings[k] = reading;
          this.drawReview();
        },
      );
      this.review = "done";
      this.reviewMs = performance.now() - this.reviewStarted;
    } catch (e) {
      this.review = "stopped";
      if (!computerModule?.stopped(e)) this.status.textContent = t("review.failed", { why: e instanceof Error ? e.message : String(e) });
    } finally {
      this.engineBusy = false;
    }
    this.drawReview();
  }

  private reviewStarted = 0;
  /** How long the last whole review took, in ms. */
  private reviewMs = 0;

  /** The moves that lost the most for `color`: its number, the chance it lost, the better move and its line. */
  private mistakes(color: Color): { move: number; loss: number; played: string; line: string[] }[] {
    const r = this.record;
    if (!r) return [];
    const found: { move: number; loss: number; played: string; line: string[] }[] = [];
    for (let k = 0; k < r.moves.length; k++) {
      const m = r.moves[k];
      const before = this.blackChance(k);
      const after = this.blackChance(k + 1);
      const line = this.readings[k]?.line ?? [];
      if (m.color !== color || before === undefined || after === undefined || line.length === 0) continue;
      const loss = color === Color.BLACK ? before - after : after - before;
      const played = m.point ? pointName(m.point) : "pass";
      if (loss >= 0.05 && line[0].toUpperCase() !== played.toUpperCase()) found.push({ move: k + 1, loss, played, line });
    }
    return found.sort((a, b) => b.loss - a.loss).slice(0, 3);
  }

  /** The review: a button, then its progress, then the graph and the biggest mistakes. */
  private drawReview(): void {
    const r = this.record;
    const offered = !this.playing && !!r && r.moves.length > 0 && pageCanThink();
    this.reviewPanel.hidden = !offered;
    if (!offered || !r) return;
    const read = this.readings.filter(Boolean).length;
    const total = this.reviewPositions().length;
    const start = h(
      "button",
      { type: "button", class: "primary", "data-k": "review", onclick: () => void this.runReview() },
      t(this.review === "none" ? "review.start" : "review.again"),
    );
    const parts: Child[] = [h("h3", {}, t("review.title")), h("p", { class: "hint" }, t("review.honest"))];
    if (this.review === "running") {
      parts.push(
        h("progress", { max: String(total), value: String(read), "aria-label": t("review.progressLabel") }),
        h("p", { "aria-live": "polite" }, t("review.progress", { read, total })),
        h("button", { type: "button", "data-k": "stop", onclick: () => computerModule?.stop() }, t("review.stop")),
      );
    } else {
      parts.push(start);
      if (this.review === "stopped") parts.push(h("p", { class: "hint" }, t("review.stopped", { read, total })));
      if (this.review === "done") parts.push(h("p", { class: "hint" }, t("review.took", { seconds: Math.round(this.reviewMs / 100) / 10 })));
    }
    if (read > 0) parts.push(this.graph(), ...this.mistakeLists());
    refill(this.reviewPanel, ...parts);
  }

  /** Black's chances move by move, as a line over the game; its words are the list of the biggest swings. */
  private graph(): HTMLElement {
    const n = this.record?.moves.length ?? 0;
    const points: string[] = [];
    for (let k = 0; k <= n; k++) {
      const b = this.blackChance(k);
      if (b !== undefined) points.push(`${k},${(100 * (1 - b)).toFixed(1)}`);
    }
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", `0 0 ${Math.max(n, 1)} 100`);
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("class", "chances");
    svg.setAttribute("aria-hidden", "true");
    const mid = document.createElementNS(svg.namespaceURI, "line");
    for (const [k, v] of Object.entries({ x1: "0", y1: "50", x2: String(n), y2: "50", class: "even" })) mid.setAttribute(k, v);
    const line = document.createElementNS(svg.namespaceURI, "polyline");
    line.setAttribute("points", points.join(" "));
    line.setAttribute("class", "black-chance");
    svg.append(mid, line);
    const swings: { k: number; from: number; to: number }[] = [];
    for (let k = 0; k < n; k++) {
      const from = this.blackChance(k);
      const to = this.blackChance(k + 1);
      if (from !== undefined && to !== undefined) swings.push({ k: k + 1, from, to });
    }
    swings.sort((a, b) => Math.abs(b.to - b.from) - Math.abs(a.to - a.from));
    const pct = (x: number) => formatNumber(x, { style: "percent", maximumFractionDigits: 0 });
    return h(
      "figure",
      { class: "graph" },
      h("figcaption", {}, t("review.graphTitle")),
      svg,
      h(
        "ol",
        { class: "swings", "aria-label": t("review.swings") },
        ...swings.slice(0, 5).map((s) => h("li", {}, t("review.swing", { move: s.k, from: pct(s.from), to: pct(s.to) }))),
      ),
    );
  }

  private mistakeLists(): HTMLElement[] {
    const pct = (x: number) => formatNumber(x, { style: "percent", maximumFractionDigits: 0 });
    return [Color.BLACK, Color.WHITE].map((color) => {
      const found = this.mistakes(color);
      return h(
        "section",
        { class: "mistakes" },
        h("h4", {}, t("review.mistakesOf", { color: colorName(color) })),
        found.length === 0
          ? h("p", { class: "hint" }, t("review.noMistakes"))
          : h(
              "ol",
              {},
              ...found.map((m) =>
                h(
                  "li",
                  {},
                  h(
                    "button",
                    { type: "button", class: "link", "data-k": `x${m.move}`, onclick: () => this.view(m.move - 1, m.line) },
                    t("review.mistake", { move: m.move, played: m.played, loss: pct(m.loss), better: m.line[0] }),
                  ),
                ),
              ),
            ),
      );
    });
  }

  /** Tells the player their turn has come: the tab's title, and where
   * the device can, the stone sound (if chosen) and a short vibration. */
  private noticeTurn(): void {
    const g = this.game;
    const myTurn = this.playing && !g.counting && this.mine !== Color.UNSPECIFIED && g.toMove === this.mine;
    document.title = t("title", {
      screen: t(myTurn ? "game.yourTurnTitle" : g.counting ? "game.counting" : "game.title"),
    });
    // Only a turn that came while the page was open is announced (not the
    // one a reload finds), and only after the player has touched the page:
    // browsers refuse sound and vibration before that.
    const touched = navigator.userActivation?.hasBeenActive ?? true;
    if (myTurn && this.wasMyTurn === false && touched) {
      if (localStorage.getItem(SOUND_KEY) === "1") stoneSound();
      navigator.vibrate?.(60);
    }
    this.wasMyTurn = myTurn;
  }

  /** The computer's seat, when this page thinks for it. */
  private get pageThinks(): boolean {
    const o = this.opponent;
    return this.mine !== Color.UNSPECIFIED && isAi(o) && o?.aiEngine === AiEngine.CLIENT;
  }

  /**
   * When the computer whose engine runs in this page is to move: loads the
   * engine (the first time), thinks in its Worker and plays its move. A
   * position that changed meanwhile (an undo) is thought about afresh;
   * an engine that cannot run here hands the thinking to the server.
   */
  private async thinkIfComputerToMove(): Promise<void> {
    const g = this.game;
    const key = `${g.moveCount}:${g.eventSeq}`;
    const due = this.playing && !g.counting && this.pageThinks && g.toMove !== this.mine;
    if (!due || this.thinkingAt !== key) {
      // A search for a position gone (an undo) is stopped.
      if (this.engineBusy) computerModule?.stop();
    }
    if (!due) {
      this.thinkingAt = undefined;
      return;
    }
    if (this.thinkingAt === key) return;
    this.thinkingAt = key;
    const current = () => this.thinkingAt === key && !this.abort.signal.aborted && !unloading;
    const { gameId, boardSize } = g;
    let thought: import("./computer").Thought;
    try {
      const computer = await import("./computer");
      computerModule = computer;
      const { sgf } = await retrying(() => api.games.getSgf({ gameId }));
      if (!current()) return;
      this.engineBusy = true;
      thought = await computer.think({
        level: LEVEL_NAMES[this.opponent?.aiLevel ?? AiLevel.NORMAL] ?? "normal",
        seed: this.seed,
        size: boardSize,
        komi: g.komi,
        rules: g.ruleset,
        moves: movesOfSgf(sgf, boardSize),
        toMove: g.toMove === Color.BLACK ? "b" : "w",
      });
    } catch (e) {
      if (!current()) return;
      this.thinkingAt = undefined;
      // Stopped for a position that was gone by then: think again.
      if (computerModule?.stopped(e)) return this.draw();
      return this.thinkOnTheServer(e instanceof Error ? e.message : String(e));
    } finally {
      this.engineBusy = false;
    }
    if (!current()) return;
    const moveNumber = g.moveCount + 1;
    try {
      const r =
        thought.move === "resign"
          ? await retrying(() => api.games.resign({ gameId, forComputer: true }))
          : thought.move === "pass"
            ? await retrying(() => api.games.pass({ gameId, moveNumber, forComputer: true }))
            : await retrying(() =>
                api.games.playMove({ gameId, moveNumber, point: parsePoint(thought.move, boardSize), forComputer: true }),
              );
      if (r.game) this.took(r.game);
    } catch (e) {
      if (unauthenticated(e)) return signedOut(t("session.expired"));
      // The game moved on meanwhile (an undo): its next snapshot decides.
      if (current()) this.status.textContent = describe(e);
    } finally {
      if (this.thinkingAt === key) this.thinkingAt = undefined;
    }
    this.draw();
  }

  /** The page's engine cannot run: the server thinks for the computer, with a notice. */
  private async thinkOnTheServer(why: string): Promise<void> {
    if (unloading) return;
    const { gameId } = this.game;
    this.notice.textContent = t("notice.serverThinks", { why });
    try {
      const r = await retrying(() => api.games.setAiEngine({ gameId, engine: AiEngine.SERVER }));
      if (r.game) this.took(r.game);
    } catch (e) {
      if (unauthenticated(e)) return signedOut(t("session.expired"));
      this.notice.textContent = t("notice.serverCannot", { why, error: describe(e) });
    }
    this.draw();
  }

  private drawPlayers(): void {
    const g = this.game;
    const seat = (c: Color, p: Player | undefined, captures: number) =>
      h(
        "div",
        { class: `player ${c === Color.BLACK ? "black" : "white"}${g.toMove === c ? " to-move" : ""}` },
        h("span", { class: "swatch", "aria-hidden": "true" }),
        h(
          "span",
          { class: "name" },
          t(c === this.mine ? "player.seatYou" : "player.seat", { color: colorName(c), nickname: playerName(p) }),
          p?.computerStandingIn ? t("player.standIn") : "",
          c !== this.mine && this.mine !== Color.UNSPECIFIED && !isAi(p) && !this.opponentHere ? t("player.away") : "",
        ),
        h("span", { class: "captures" }, t("player.captures", { captures })),
        // Both seats keep a clock's room, the one not running empty, so
        // the lines never re-wrap as the turn passes.
        g.clock && this.playing
          ? g.toMove === c
            ? h("span", { class: "clock", role: "timer", "data-color": String(c) })
            : h("span", { class: "clock", "aria-hidden": "true" })
          : null,
      );
    this.players.replaceChildren(
      seat(Color.BLACK, g.black, g.blackCaptures),
      seat(Color.WHITE, g.white, g.whiteCaptures),
    );
    if (g.counting) {
      this.turn.textContent = t("turn.counting");
    } else if (this.playing) {
      this.turn.textContent =
        g.toMove === this.mine
          ? t("turn.yours")
          : t(isAi(this.opponent) ? "turn.thinking" : "turn.toMove", { color: colorName(g.toMove) });
    } else {
      this.turn.textContent = t("turn.over");
    }
    this.drawClock();
  }

  private drawClock(): void {
    const counting = this.game.counting;
    const countTime = this.controls.querySelector<HTMLElement>(".count-time");
    if (counting && countTime) {
      const ms = Math.max(0, Number(counting.deadlineUnixMs) - (Date.now() + this.offsetMs));
      const s = Math.ceil(ms / 1000);
      countTime.textContent = t("clock.countLeft", { time: `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` });
    }
    const el = this.players.querySelector<HTMLElement>(".clock[role=timer]");
    const clock = this.game.clock;
    if (!el || !clock) return;
    const left = Math.max(0, Number(clock.deadlineUnixMs) - (Date.now() + this.offsetMs));
    const seconds = Math.ceil(left / 1000);
    el.textContent = `0:${String(seconds).padStart(2, "0")}`;
    el.setAttribute("aria-label", t("clock.left", { seconds }));
    el.classList.toggle("low", seconds <= 10);
  }

  private drawControls(): void {
    const g = this.game;
    const mine = this.mine;
    if (!this.playing || mine === Color.UNSPECIFIED) {
      this.controls.replaceChildren();
      return;
    }
    const myTurn = g.toMove === mine;
    const againstAi = isAi(this.opponent);
    const button = (label: string, onclick: () => void, enabled = true, extra = "") =>
      h("button", { type: "button", class: extra, disabled: !enabled || this.busy, onclick }, label);
    const resign = button(
      t(this.resignArmed ? "controls.reallyResign" : "controls.resign"),
      () => {
        if (!this.resignArmed) {
          this.resignArmed = true;
          this.drawControls();
          setTimeout(() => {
            this.resignArmed = false;
            this.drawControls();
          }, 4_000);
          return;
        }
        this.resignArmed = false;
        void this.act(() => api.games.resign({ gameId: g.gameId }));
      },
      true,
      "danger",
    );
    const counting = g.counting;
    if (counting) {
      const mineDone = mine === Color.BLACK ? counting.blackConfirmed : counting.whiteConfirmed;
      const theirsDone = mine === Color.BLACK ? counting.whiteConfirmed : counting.blackConfirmed;
      const { marksVersion, afterMove } = counting;
      fill(this.controls,
        h(
          "div",
          { class: "counting", role: "group", "aria-label": t("counting.label") },
          h("p", {}, t("counting.help")),
          h("p", { class: "hint" }, t("counting.state", { mine: mineDone ? "yes" : "no", theirs: theirsDone ? "yes" : "no" })),
          h("p", { class: "hint count-time" }),
          button(
            t(mineDone ? "counting.confirmed" : "counting.confirm"),
            () => void this.act(() => api.games.confirmCount({ gameId: g.gameId, marksVersion })),
            !mineDone,
            "primary",
          ),
          button(t("counting.back"), () => void this.act(() => api.games.resumePlay({ gameId: g.gameId, afterMove }))),
        ),
        resign,
      );
      this.drawClock();
      return;
    }
    const offeredBy = g.drawOfferedBy;
    fill(this.controls,
      button(
        t("controls.pass"),
        () => void this.act(() => api.games.pass({ gameId: g.gameId, moveNumber: g.moveCount + 1 })),
        myTurn,
      ),
      againstAi &&
        button(
          t("controls.undo"),
          () => void this.act(() => api.games.undoMove({ gameId: g.gameId, moveCount: g.moveCount })),
          g.undoAllowed,
        ),
      button(t("controls.countNow"), () => void this.askCount()),
      !againstAi &&
        offeredBy === Color.UNSPECIFIED &&
        button(t("draw.offer"), () => void this.act(() => api.games.offerDraw({ gameId: g.gameId }))),
      !againstAi && offeredBy === mine && h("span", { class: "note" }, t("draw.offered")),
      !againstAi &&
        offeredBy !== Color.UNSPECIFIED &&
        offeredBy !== mine &&
        h(
          "div",
          { class: "offer", role: "group", "aria-label": t("draw.label") },
          h("span", {}, t("draw.theyOffer")),
          button(t("draw.accept"), () => void this.act(() => api.games.answerDraw({ gameId: g.gameId, accept: true }))),
          button(t("draw.decline"), () => void this.act(() => api.games.answerDraw({ gameId: g.gameId, accept: false }))),
        ),
      resign,
    );
  }

  private async askCount(): Promise<void> {
    try {
      const r = await retrying(() => api.games.getScorePreview({ gameId: this.game.gameId }));
      this.preview = r.count;
      this.draw();
    } catch (e) {
      this.status.textContent = describe(e);
    }
  }

  private drawCount(count: Count | undefined): void {
    if (!count) {
      this.count.replaceChildren();
      return;
    }
    const dead = count.deadStones.length;
    fill(this.count,
      h(
        "p",
        {},
        t(this.game.counting ? "count.withMarks" : this.playing ? "count.ifEnded" : "count.final", {
          summary: countInWords(count),
        }),
      ),
      dead > 0 && h("p", { class: "hint" }, t("count.dead", { stones: dead })),
      count.blackTerritory.length + count.whiteTerritory.length > 0 && h("p", { class: "hint" }, t("count.marks")),
      count.uncertain.length > 0 &&
        h(
          "p",
          { class: "hint uncertain" },
          t("count.uncertain", {
            count: count.uncertain.length,
            groups: listed(
              count.uncertain.map((g) =>
                g.stones.length > 1
                  ? t("count.group", { point: pointName(g.stones[0]), stones: g.stones.length })
                  : pointName(g.stones[0]),
              ),
            ),
          }),
        ),
    );
  }

  private drawAfter(): void {
    const g = this.game;
    if (this.playing || !g.result) {
      this.after.replaceChildren();
      return;
    }
    const words = resultInWords(g);
    const won = g.result.winner !== Color.UNSPECIFIED && g.result.winner === this.mine;
    const lost = g.result.winner !== Color.UNSPECIFIED && this.mine !== Color.UNSPECIFIED && !won;
    const human = !isAi(g.black) && !isAi(g.white);
    fill(this.after,
      h(
        "section",
        { class: "result", "aria-label": t("result.label") },
        h("h3", {}, g.result.reason === EndReason.MOVE_CAP ? t("result.moveCap", { result: words }) : words),
        h("p", { class: "sgf-result" }, g.result.text === "0" ? t("result.sgfJigo") : g.result.text),
        won && h("p", {}, t("result.won")),
        lost && h("p", {}, t("result.lost")),
        g.ranked && h("p", { class: "hint" }, t("result.ranked")),
      ),
      human &&
        this.mine !== Color.UNSPECIFIED &&
        h(
          "button",
          { type: "button", class: "primary", disabled: this.rematching, onclick: () => void this.rematch() },
          t(this.rematching ? "rematch.waiting" : g.keepColorsOnRematch ? "rematch.same" : "rematch.swapped"),
        ),
      h("button", { type: "button", onclick: () => void this.downloadSgf() }, t("result.downloadSgf")),
      h("button", { type: "button", onclick: () => navigate("/") }, t("game.backToLobby")),
    );
  }

  /** The game's record as a file named after who played and when. */
  private async downloadSgf(): Promise<void> {
    const g = this.game;
    try {
      const { sgf } = await retrying(() => api.games.getSgf({ gameId: g.gameId }));
      const when = new Date(Number(g.finishedAtUnixMs) || Date.now()).toISOString().slice(0, 10);
      const name = (p?: { nickname: string }) =>
        (p?.nickname ?? "").replace(/[^\p{L}\p{N}_-]+/gu, "_").replace(/^_+|_+$/g, "") || "player";
      const link = h("a", {
        href: URL.createObjectURL(new Blob([sgf], { type: "application/x-go-sgf" })),
        download: `${name(g.black)}-vs-${name(g.white)}-${when}.sgf`,
      }) as HTMLAnchorElement;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (e) {
      this.status.textContent = describe(e);
    }
  }

  private async rematch(): Promise<void> {
    this.rematching = true;
    this.drawAfter();
    try {
      for await (const r of api.match.rematch({ gameId: this.game.gameId }, { signal: this.abort.signal })) {
        if (r.newGameId) return navigate(`/g/${r.newGameId}`);
      }
    } catch (e) {
      if (this.abort.signal.aborted) return;
      this.status.textContent = describe(e);
    }
    this.rematching = false;
    this.drawAfter();
  }
}

// ---------------------------------------------------------------- start

// English is in this script; another language's words come first.
void useLanguage(preferredLanguage())
  .catch(() => useLanguage("en"))
  .then(route);
