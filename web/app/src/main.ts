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
  clockOffsetMs,
  colorName,
  connect,
  parsePoint,
  pointName,
  resultInWords,
  retryAfterMs,
  type Count,
  type GameEvent,
  type GameSnapshot,
  type LadderEntry,
  type Player,
  type Point,
} from "@ttakji/client";
import { Board } from "./board";
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

/** What went wrong, in the server's words. */
function describe(e: unknown): string {
  if (e instanceof ConnectError) {
    if (e.code === Code.Unavailable) return "The server can't be reached right now. Trying again…";
    return e.rawMessage || e.message;
  }
  return e instanceof Error ? e.message : String(e);
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
  document.title = `${title} · Ttakji`;
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
    signInScreen(challenge ? "A friend invited you to a game of Go. Choose a nickname to join." : undefined);
    return;
  }
  if (game) return gameScreen(decodeURIComponent(game[1]));
  if (challenge) return joinChallenge(challenge[1]);
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
    title: "2 to 20 letters, digits, - or _",
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
          status.textContent =
            e instanceof ConnectError && e.code === Code.AlreadyExists
              ? `“${input.value.trim()}” is taken: choose another nickname.`
              : describe(e);
        }
      },
    },
    h("label", { for: "nickname" }, "Nickname"),
    input,
    h("p", { class: "hint" }, "2 to 20 letters, digits, - or _."),
    h("button", { type: "submit", class: "primary" }, "Play as a guest"),
  );
  const ranked = h("div", {});
  show(
    "Play Go",
    h("h1", {}, "Ttakji"),
    h("p", { class: "lead" }, why ?? "Play Go (baduk) against the computer, a random opponent or a friend."),
    form,
    ranked,
    status,
    h("footer", { class: "site" }, themeChoice()),
  );
  void pageConfig.then(({ googleClientId }) => {
    if (!googleClientId || !ranked.isConnected) return;
    const google = h("div", { class: "google" });
    ranked.replaceWith(
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Ranked games"),
        h("p", {}, "Sign in with Google to play ranked games and join the 9×9 leaderboard."),
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
          status.textContent = describe(e);
        }
      },
    });
    g.accounts.id.renderButton(el, { theme: "outline", size: "large", text: "signin_with" });
  };
  if ((window as unknown as { google?: GoogleId }).google) return ready();
  const script = h("script", { src: "https://accounts.google.com/gsi/client", async: true });
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
  const sizes: [string, string][] = [
    ["9", "9×9"],
    ["13", "13×13"],
    ["19", "19×19"],
  ];
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
          if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
          status.textContent = describe(e);
        }
      },
    },
    h("h2", {}, "Play the computer"),
    h("p", { class: "hint" }, "No clock, and you may undo."),
    select("ai-size", "Board size", sizes, "9"),
    select(
      "ai-level",
      "Level",
      [
        [String(AiLevel.EASY), "Easy"],
        [String(AiLevel.NORMAL), "Normal"],
        [String(AiLevel.HARD), "Hard"],
      ],
      String(AiLevel.EASY),
    ),
    select(
      "ai-color",
      "Your colour",
      [
        [String(ColorChoice.BLACK), "Black (you start)"],
        [String(ColorChoice.WHITE), "White"],
        [String(ColorChoice.RANDOM), "Random"],
      ],
      String(ColorChoice.BLACK),
    ),
    h("button", { type: "submit", class: "primary" }, "Play the computer"),
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
    h("h2", {}, "Play a random opponent"),
    h("p", { class: "hint" }, "30 seconds a move. If nobody is free after a short wait, you play the computer."),
    select("queue-size", "Board size", sizes, "9"),
    h(
      "div",
      { class: "check" },
      ranked,
      h("label", { for: "ranked" }, "Ranked game"),
    ),
    rankedNote,
    h("button", { type: "submit", class: "primary" }, "Find an opponent"),
  );
  const code = h("input", {
    id: "code",
    name: "code",
    autocomplete: "off",
    required: true,
    pattern: "[A-Za-z0-9]{6}",
    maxlength: "6",
    title: "the six letters and digits your friend sent",
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
      h("summary", {}, "House rules"),
      select(
        "table-preset",
        "Start from",
        [
          [String(TablePreset.TTAKJI), "Ttakji: 9×9, area, komi 7, 30 s a move"],
          [String(TablePreset.CLASSIC), "Classic: 19×19, territory, komi 6.5, no time limit"],
        ],
        String(TablePreset.TTAKJI),
      ),
      select("table-size", "Board size", [["0", "As the preset"], ...sizes], "0"),
      select(
        "table-scoring",
        "Scoring",
        [
          [String(Scoring.UNSPECIFIED), "As the preset"],
          [String(Scoring.AREA), "Area (stones and surrounded points)"],
          [String(Scoring.TERRITORY), "Territory (Japanese: territory and prisoners)"],
        ],
        String(Scoring.UNSPECIFIED),
      ),
      select(
        "table-komi",
        "Komi for White",
        [
          ["", "Usual for the scoring (area 7, territory 6.5)"],
          ["7", "7"],
          ["6.5", "6.5"],
          ["0", "None (an equal count is a draw)"],
        ],
        "",
      ),
      select(
        "table-time",
        "Time for each move",
        [
          ["", "As the preset"],
          ["0", "No limit"],
          ["30", "30 seconds"],
          ["60", "60 seconds"],
        ],
        "",
      ),
      select(
        "table-stand-in",
        "If a player drops",
        [
          ["", "As the preset"],
          ["on", "The computer plays for them until they return"],
          ["off", "Nobody plays for them (their clock runs)"],
        ],
        "",
      ),
      h(
        "div",
        { class: "check" },
        h("input", { type: "checkbox", id: "table-swap", name: "table-swap", checked: true }),
        h("label", { for: "table-swap" }, "Swap who plays Black on every rematch"),
      ),
    ),
    h("button", { type: "submit", class: "primary" }, "Invite a friend by link"),
  );
  const friendCard = h(
    "section",
    { class: "card" },
    h("h2", {}, "Play a friend"),
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
      h("label", { for: "code" }, "Friend's code"),
      code,
      h("button", { type: "submit" }, "Join"),
    ),
  );
  const atari = h("input", {
    type: "checkbox",
    id: "show-atari",
    checked: localStorage.getItem(ATARI_KEY) === "1",
    onchange: (e: Event) => localStorage.setItem(ATARI_KEY, (e.target as HTMLInputElement).checked ? "1" : "0"),
  });
  const ladder = h("section", { class: "card ladder" }, h("h2", {}, "9×9 leaderboard"), h("p", {}, "Loading…"));
  show(
    "Lobby",
    h(
      "header",
      { class: "top" },
      h("h1", {}, "Ttakji"),
      h(
        "p",
        {},
        `Playing as ${s.nickname}${s.google ? " (signed in)" : " (guest)"} `,
        h("button", { type: "button", class: "link", onclick: () => signedOut("Signed out.") }, "Sign out"),
      ),
    ),
    status,
    h("div", { class: "cards" }, aiForm, queueForm, friendCard, ladder),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Options"),
      h("div", { class: "check" }, atari, h("label", { for: "show-atari" }, "Mark stones in atari")),
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
              { type: "button", class: "link", onclick: () => signedOut("Sign in with Google to play ranked games.") },
              "Sign in with Google to play ranked",
            )
          : "Ranked games need a Google sign-in, which this server does not offer.",
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
      ["", "As the system"],
      ["light", "Light"],
      ["dark", "Dark"],
    ].map(([v, t]) => h("option", { value: v, selected: v === current }, t)),
  );
  return h("div", { class: "field" }, h("label", { for: "theme" }, "Theme"), select);
}

async function fillLadder(el: HTMLElement): Promise<void> {
  try {
    const r = await retrying(() => api.ladder.getLadder({ boardSize: 9, top: 10 }));
    const table = (rows: LadderEntry[], caption: string) =>
      h(
        "table",
        {},
        h("caption", {}, caption),
        h("thead", {}, h("tr", {}, h("th", {}, "Rank"), h("th", {}, "Player"), h("th", {}, "Rating"), h("th", {}, "Games"))),
        h(
          "tbody",
          {},
          ...rows.map((e) =>
            h(
              "tr",
              { class: e.userId === session?.userId ? "me" : "" },
              h("td", {}, String(e.rank)),
              h("td", {}, e.nickname + (e.userId === session?.userId ? " (you)" : "")),
              h("td", {}, String(e.rating)),
              h("td", {}, String(e.games)),
            ),
          ),
        ),
      );
    fill(el,
      h("h2", {}, "9×9 leaderboard"),
      r.top.length ? table(r.top, "Top players") : h("p", {}, "No ranked games yet."),
      r.aroundMe.length
        ? table(r.aroundMe, "Your place")
        : h("p", { class: "hint" }, "Play a ranked game to get a place on the ladder."),
    );
  } catch (e) {
    el.replaceChildren(h("h2", {}, "9×9 leaderboard"), h("p", {}, describe(e)));
  }
}

// The queue: the wait shown, then the game.
function queueScreen(boardSize: number, ranked: boolean): void {
  const abort = new AbortController();
  let ticketId = "";
  const wait = h("p", { class: "wait", "aria-live": "polite" }, "Joining the queue…");
  const cancel = async () => {
    abort.abort();
    if (ticketId) await api.match.cancelMatch({ ticketId }).catch(() => {});
    lobby();
  };
  show(
    "Finding an opponent",
    h(
      "section",
      { class: "card center" },
      h("h2", {}, `Looking for an opponent (${boardSize}×${boardSize})`),
      wait,
      h("button", { type: "button", onclick: cancel }, "Cancel"),
    ),
  );
  onLeave(() => abort.abort());
  void (async () => {
    try {
      for await (const r of api.match.findMatch({ boardSize, ranked }, { signal: abort.signal })) {
        const t = r.ticket;
        if (!t) continue;
        ticketId = t.ticketId;
        if (t.state === TicketState.MATCHED && t.gameId) return navigate(`/g/${t.gameId}`);
        if (t.state === TicketState.CANCELLED) return lobby("You left the queue.");
        const seconds = Math.floor(Number(t.waitedMs) / 1000);
        wait.textContent = `Waiting ${seconds} s · ${t.waiting} ${t.waiting === 1 ? "player" : "players"} in the queue`;
      }
    } catch (e) {
      if (abort.signal.aborted) return;
      if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
      lobby(describe(e));
    }
  })();
}

// A friend challenge: the link to send, then the game once the friend joins.
/** A table's house rules as a challenge sends them. */
type TableRules = Parameters<typeof api.match.createChallenge>[0]["rules"];

function challengeScreen(rules: TableRules): void {
  const abort = new AbortController();
  const body = h("div", {}, h("p", {}, "Making a link…"));
  show(
    "Invite a friend",
    h(
      "section",
      { class: "card center" },
      h("h2", {}, "Invite a friend"),
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
        "Cancel",
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
          h("label", { for: "link" }, "Send this link to your friend"),
          field,
          h(
            "button",
            {
              type: "button",
              class: "primary",
              onclick: async (e: Event) => {
                await navigator.clipboard?.writeText(link).catch(() => {});
                (e.target as HTMLButtonElement).textContent = "Link copied";
              },
            },
            "Copy the link",
          ),
          h("p", {}, "Or tell them the code ", h("strong", { class: "code" }, c.code), "."),
          h("p", { class: "wait", "aria-live": "polite" }, "Waiting for your friend to join…"),
        );
      }
    } catch (e) {
      if (abort.signal.aborted) return;
      if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
      lobby(describe(e));
    }
  })();
}

async function joinChallenge(code: string): Promise<void> {
  show("Joining", h("section", { class: "card center" }, h("h2", {}, "Joining your friend's game…")));
  try {
    const r = await retrying(() => api.match.acceptChallenge({ code }));
    if (r.game) navigate(`/g/${r.game.gameId}`, true);
  } catch (e) {
    if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
    history.replaceState(null, "", "/");
    lobby(`That link did not work: ${describe(e)}`);
  }
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

/** The page's engine (./computer), once a game has needed it. */
let computerModule: typeof import("./computer") | undefined;

/** A fresh 64-bit seed for the computer's search, in decimal. */
function randomSeed(): string {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** "19×19 · territory scoring · komi 6.5 · no time limit". */
function rulesInWords(g: GameSnapshot): string {
  const n = g.boardSize;
  const scoring = g.scoring === Scoring.TERRITORY ? "territory scoring" : "area scoring";
  const komi = g.komi === 0 ? "no komi" : `komi ${g.komi}`;
  const time = g.secondsPerMove > 0 ? `${g.secondsPerMove} s a move` : "no time limit";
  const standIn = g.computerStandsIn ? " · the computer plays for a player who drops" : "";
  return `${n}×${n} · ${scoring} · ${komi} · ${time}${standIn}`;
}

async function gameScreen(gameId: string): Promise<void> {
  show("Game", h("p", { class: "card center" }, "Loading the game…"));
  let first: GameSnapshot | undefined;
  try {
    first = (await retrying(() => api.games.getGame({ gameId }))).game;
  } catch (e) {
    if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
    return lobby(`That game could not be opened: ${describe(e)}`);
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

  constructor(game: GameSnapshot) {
    this.game = game;
    this.took(game);
  }

  mount(): void {
    show(
      "Game",
      h("h2", { class: "sr-only" }, "Game"),
      h(
        "div",
        { class: "game" },
        h("div", { class: "side" }, this.players, this.turn, h("p", { class: "hint rules" }, rulesInWords(this.game))),
        this.board.element,
        h("div", { class: "side" }, this.controls, this.status, this.notice, this.after, this.count, this.prefs()),
      ),
      this.announce,
    );
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
    if (kind?.case === "movePlayed" && kind.value.move && kind.value.move.color !== this.mine) {
      this.announce.textContent = this.moveInWords(kind.value.move.color, kind.value.move.point, kind.value.move.captured.length);
    }
    if (kind?.case === "movePlayed" && !kind.value.move?.point && kind.value.move?.color !== this.mine && g.scorePreview) {
      this.status.textContent = `${colorName(kind.value.move?.color ?? Color.UNSPECIFIED)} passed. Passing too ends the game with this count.`;
    }
    if (kind?.case === "drawDeclined" && kind.value.by !== this.mine) this.status.textContent = "Your draw offer was declined.";
    if (kind?.case === "countingStarted") {
      this.status.textContent = "Both passed. Agree on the dead stones: press a group to mark it dead or alive, then confirm.";
    }
    if (kind?.case === "deadStonesMarked" && kind.value.by !== this.mine) {
      const n = kind.value.stones.length;
      this.status.textContent = `${colorName(kind.value.by)} marked ${n} ${n === 1 ? "stone" : "stones"} ${kind.value.dead ? "dead" : "alive"}.`;
    }
    if (kind?.case === "countConfirmed" && kind.value.by !== this.mine) {
      this.status.textContent = `${colorName(kind.value.by)} confirmed these dead stones.`;
    }
    if (kind?.case === "standInSeated") {
      const who = kind.value.color === this.mine ? "You were" : `${colorName(kind.value.color)} is`;
      this.status.textContent = `${who} away: the computer plays the seat until ${kind.value.color === this.mine ? "you return" : "they return"}.`;
    }
    if (kind?.case === "standInLeft" && kind.value.color !== this.mine) {
      this.status.textContent = `${colorName(kind.value.color)} is back and plays again.`;
    }
    if (kind?.case === "playResumed") {
      this.status.textContent = `${kind.value.by === this.mine ? "You" : colorName(kind.value.by)} went back to play: settle it on the board, then pass again.`;
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
        const events = api.games.watchGame(
          { gameId: this.game.gameId, afterSeq: this.game.eventSeq },
          // Connected again: say whose turn it is instead of "Reconnecting…".
          { signal: stream.signal, onHeader: () => this.drawPlayers() },
        );
        for await (const r of events) {
          backoff = 250;
          const event = r.event;
          if (event?.snapshot && this.took(event.snapshot, event)) this.draw();
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
        if (!restarted && unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
      } finally {
        this.abort.signal.removeEventListener("abort", stop);
      }
      if (restarted) continue;
      // What happened while the stream was down comes first on the next one.
      this.turn.textContent = "Reconnecting…";
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
      if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
      this.status.textContent = describe(e);
    } finally {
      this.busy = false;
      this.draw();
    }
  }

  private play(point: Point): void {
    if (!this.playing) return;
    const counting = this.game.counting;
    if (counting) {
      if (this.mine === Color.UNSPECIFIED) return;
      const stone = this.game.stones[point.row * this.game.boardSize + point.column];
      if (stone === Color.UNSPECIFIED) {
        this.status.textContent = "Press a stone to mark its group dead or alive.";
        return;
      }
      const marked = counting.deadStones.some((p) => p.column === point.column && p.row === point.row);
      const { gameId } = this.game;
      void this.act(() => api.games.markDeadStones({ gameId, point, dead: !marked }));
      return;
    }
    if (this.game.toMove !== this.mine) {
      this.status.textContent = `It is ${colorName(this.game.toMove)}'s turn.`;
      return;
    }
    if (confirmsMoves(this.game.boardSize)) {
      const p = this.pending;
      if (!p || p.column !== point.column || p.row !== point.row) {
        // The first tap shows the stone; a second on it plays it.
        this.pending = point;
        this.status.textContent = "";
        this.announce.textContent = `${pointName(point)}: tap again to play there.`;
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
    const what = point ? `${colorName(color)} played ${pointName(point)}` : `${colorName(color)} passed`;
    const took = captured > 0 ? `, capturing ${captured} ${captured === 1 ? "stone" : "stones"}` : "";
    const clock = this.game.clock;
    const left = clock && this.playing && this.game.toMove === this.mine
      ? ` ${Math.max(0, Math.ceil((Number(clock.deadlineUnixMs) - (Date.now() + this.offsetMs)) / 1000))} seconds left.`
      : "";
    return `${what}${took}.${left}`;
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
      { class: "prefs", role: "group", "aria-label": "Settings" },
      h("div", { class: "check" }, confirm, h("label", { for: "confirm-moves" }, "Confirm moves (tap twice)")),
      h("div", { class: "check" }, sound, h("label", { for: "stone-sound" }, "Sound on my turn")),
    );
  }

  private draw(): void {
    const g = this.game;
    const shownCount = g.counting?.count ?? (this.playing ? this.preview : g.result?.count);
    this.board.update({
      size: g.boardSize,
      stones: g.stones,
      lastMove: g.lastMove?.point,
      ko: this.playing ? g.koForbidden : [],
      dead: shownCount?.deadStones ?? [],
      atari: localStorage.getItem(ATARI_KEY) === "1" ? g.inAtari : [],
      pending: this.playing && !g.counting && g.toMove === this.mine ? this.pending : undefined,
      pendingColor: this.mine,
    });
    this.noticeTurn();
    this.drawPlayers();
    this.drawControls();
    this.drawCount(shownCount);
    this.drawAfter();
    void this.thinkIfComputerToMove();
  }

  /** Tells the player their turn has come: the tab's title, and where
   * the device can, the stone sound (if chosen) and a short vibration. */
  private noticeTurn(): void {
    const g = this.game;
    const myTurn = this.playing && !g.counting && this.mine !== Color.UNSPECIFIED && g.toMove === this.mine;
    document.title = myTurn ? "Your turn · Ttakji" : g.counting ? "Counting · Ttakji" : "Game · Ttakji";
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
    const current = () => this.thinkingAt === key && !this.abort.signal.aborted;
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
        moves: computer.movesOfSgf(sgf, boardSize),
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
      if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
      // The game moved on meanwhile (an undo): its next snapshot decides.
      if (current()) this.status.textContent = describe(e);
    } finally {
      if (this.thinkingAt === key) this.thinkingAt = undefined;
    }
    this.draw();
  }

  /** The page's engine cannot run: the server thinks for the computer, with a notice. */
  private async thinkOnTheServer(why: string): Promise<void> {
    const { gameId } = this.game;
    this.notice.textContent = `The computer could not start in this browser (${why}): it thinks on the server instead.`;
    try {
      const r = await retrying(() => api.games.setAiEngine({ gameId, engine: AiEngine.SERVER }));
      if (r.game) this.took(r.game);
    } catch (e) {
      if (unauthenticated(e)) return signedOut("Your sign-in has expired: choose a nickname again.");
      this.notice.textContent = `The computer could not start in this browser (${why}), and the server cannot think for it now: ${describe(e)}`;
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
          `${colorName(c)}: ${p?.nickname ?? "?"}${c === this.mine ? " (you)" : ""}`,
          p?.computerStandingIn ? " · the computer plays for them" : "",
          c !== this.mine && this.mine !== Color.UNSPECIFIED && !isAi(p) && !this.opponentHere ? " · away" : "",
        ),
        h("span", { class: "captures" }, `${captures} captured`),
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
      this.turn.textContent = "Counting: agree on the dead stones";
    } else if (this.playing) {
      this.turn.textContent =
        g.toMove === this.mine ? "Your turn" : `${colorName(g.toMove)} to move${isAi(this.opponent) ? " (thinking…)" : ""}`;
    } else {
      this.turn.textContent = "The game is over";
    }
    this.drawClock();
  }

  private drawClock(): void {
    const counting = this.game.counting;
    const countTime = this.controls.querySelector<HTMLElement>(".count-time");
    if (counting && countTime) {
      const ms = Math.max(0, Number(counting.deadlineUnixMs) - (Date.now() + this.offsetMs));
      const s = Math.ceil(ms / 1000);
      countTime.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left; then the server's own count decides.`;
    }
    const el = this.players.querySelector<HTMLElement>(".clock[role=timer]");
    const clock = this.game.clock;
    if (!el || !clock) return;
    const left = Math.max(0, Number(clock.deadlineUnixMs) - (Date.now() + this.offsetMs));
    const seconds = Math.ceil(left / 1000);
    el.textContent = `0:${String(seconds).padStart(2, "0")}`;
    el.setAttribute("aria-label", `${seconds} seconds left`);
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
      this.resignArmed ? "Really resign?" : "Resign",
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
          { class: "counting", role: "group", "aria-label": "Dead stones" },
          h("p", {}, "Press a group to mark it dead (crossed) or alive. The game is counted when you both confirm the same marks."),
          h("p", { class: "hint" }, `You: ${mineDone ? "confirmed" : "not yet"} · Opponent: ${theirsDone ? "confirmed" : "not yet"}`),
          h("p", { class: "hint count-time" }),
          button(
            mineDone ? "Confirmed" : "Confirm dead stones",
            () => void this.act(() => api.games.confirmCount({ gameId: g.gameId, marksVersion })),
            !mineDone,
            "primary",
          ),
          button("Back to play", () => void this.act(() => api.games.resumePlay({ gameId: g.gameId, afterMove }))),
        ),
        resign,
      );
      this.drawClock();
      return;
    }
    const offeredBy = g.drawOfferedBy;
    fill(this.controls,
      button(
        "Pass",
        () => void this.act(() => api.games.pass({ gameId: g.gameId, moveNumber: g.moveCount + 1 })),
        myTurn,
      ),
      againstAi &&
        button(
          "Undo",
          () => void this.act(() => api.games.undoMove({ gameId: g.gameId, moveCount: g.moveCount })),
          g.undoAllowed,
        ),
      button("Count now", () => void this.askCount()),
      !againstAi &&
        offeredBy === Color.UNSPECIFIED &&
        button("Offer a draw", () => void this.act(() => api.games.offerDraw({ gameId: g.gameId }))),
      !againstAi && offeredBy === mine && h("span", { class: "note" }, "You offered a draw."),
      !againstAi &&
        offeredBy !== Color.UNSPECIFIED &&
        offeredBy !== mine &&
        h(
          "div",
          { class: "offer", role: "group", "aria-label": "Draw offer" },
          h("span", {}, "Your opponent offers a draw."),
          button("Accept the draw", () => void this.act(() => api.games.answerDraw({ gameId: g.gameId, accept: true }))),
          button("Decline", () => void this.act(() => api.games.answerDraw({ gameId: g.gameId, accept: false }))),
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
      h("p", {}, `${this.game.counting ? "With these marks: " : this.playing ? "If the game ended now: " : "Final count: "}${count.summary}`),
      dead > 0 &&
        h("p", { class: "hint" }, `${dead} dead ${dead === 1 ? "stone is" : "stones are"} taken off (crossed on the board).`),
      count.uncertain.length > 0 &&
        h(
          "p",
          { class: "hint uncertain" },
          `Counted alive only because the count is not sure: ${count.uncertain
            .map((g) => `${pointName(g.stones[0])}${g.stones.length > 1 ? ` (${g.stones.length} stones)` : ""}`)
            .join(", ")}. Capture ${count.uncertain.length === 1 ? "it" : "them"} before passing to have ${count.uncertain.length === 1 ? "it" : "them"} taken off.`,
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
    const reason =
      g.result.reason === EndReason.MOVE_CAP ? " (the move limit was reached)" : "";
    fill(this.after,
      h(
        "section",
        { class: "result", "aria-label": "Result" },
        h("h3", {}, words + reason),
        h("p", { class: "sgf-result" }, g.result.text === "0" ? "Jigo" : g.result.text),
        won && h("p", {}, "You won."),
        lost && h("p", {}, "You lost."),
        g.ranked && h("p", { class: "hint" }, "Ranked: your rating has been updated."),
      ),
      human &&
        this.mine !== Color.UNSPECIFIED &&
        h(
          "button",
          { type: "button", class: "primary", disabled: this.rematching, onclick: () => void this.rematch() },
          this.rematching
            ? "Waiting for your opponent to agree…"
            : g.keepColorsOnRematch
              ? "Rematch (same colours)"
              : "Rematch (colours swapped)",
        ),
      h("button", { type: "button", onclick: () => navigate("/") }, "Back to the lobby"),
    );
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

void route();
