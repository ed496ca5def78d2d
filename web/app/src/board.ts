// The Go board: a grid of buttons, one per point, drawn with CSS.
//
// Each point is a real <button> in the page's tab order (one at a time:
// arrow keys move between points, Enter or Space plays), and its
// accessible name says the coordinate and what is there in the page's
// language ("D5, empty", "E4, white stone, last move"), so the board can be
// played by keyboard and with a screen reader as well as by touch and mouse.

import { Color, pointName, type Point } from "@ttakji/client";
import { t } from "./i18n";

export interface BoardView {
  size: number;
  /** Row by row from the bottom-left, as GameSnapshot.stones. */
  stones: Color[];
  lastMove?: Point;
  /** Points the side to move may not play because of ko. */
  ko: Point[];
  /** Stones the count takes off as dead. */
  dead: Point[];
  /** Stones to ring as in atari (their group has one liberty left). */
  atari: Point[];
  /** A move shown and waiting for a second tap, in `pendingColor`. */
  pending?: Point;
  pendingColor?: Color;
  /** Text on points, by index: a move's number on its stone, or a line of
   * play; with a colour, drawn as a see-through stone of it. */
  labels?: Map<number, { text: string; color?: Color }>;
  /** The points a count gives each side as territory. */
  territory?: { black: Point[]; white: Point[] };
}

/** Whether (row, column) is a star point: the corners' and the centre, and the sides' on 19×19. */
function isStar(r: number, c: number, n: number): boolean {
  const edge = n < 13 ? 2 : 3;
  const lines = [edge, (n - 1) / 2, n - 1 - edge];
  const centre = (n - 1) / 2;
  if (!lines.includes(r) || !lines.includes(c)) return false;
  return n >= 19 || (r !== centre && c !== centre) || (r === centre && c === centre);
}

export class Board {
  readonly element: HTMLElement;
  private grid: HTMLElement;
  private points: HTMLButtonElement[] = [];
  private size = 0;
  private focused = 0;

  constructor(private onPlay: (p: Point) => void) {
    this.element = document.createElement("div");
    this.element.className = "board-wrap";
    this.grid = document.createElement("div");
    this.grid.className = "board";
    this.grid.setAttribute("role", "group");
    this.grid.setAttribute("aria-label", t("board.label"));
    this.grid.addEventListener("keydown", (e) => this.key(e));
  }

  /** Draws `view`, keeping the buttons (and so the keyboard focus) of the same size. */
  update(view: BoardView): void {
    if (view.size !== this.size) this.build(view.size);
    const n = view.size;
    const at = (p: Point) => p.row * n + p.column;
    const last = view.lastMove ? at(view.lastMove) : -1;
    const ko = new Set(view.ko.map(at));
    const dead = new Set(view.dead.map(at));
    const atari = new Set(view.atari.map(at));
    const pending = view.pending ? at(view.pending) : -1;
    const territoryBlack = new Set(view.territory?.black.map(at));
    const territoryWhite = new Set(view.territory?.white.map(at));
    for (let i = 0; i < n * n; i++) {
      const b = this.points[i];
      const c = view.stones[i] ?? Color.UNSPECIFIED;
      const what: string[] = [t(c === Color.BLACK ? "board.black" : c === Color.WHITE ? "board.white" : "board.empty")];
      if (i === last) what.push(t("board.last"));
      if (ko.has(i)) what.push(t("board.ko"));
      if (dead.has(i)) what.push(t("board.dead"));
      if (atari.has(i)) what.push(t("board.atari"));
      if (i === pending) what.push(t("board.pending"));
      if (territoryBlack.has(i)) what.push(t("board.territory", { color: "black" }));
      if (territoryWhite.has(i)) what.push(t("board.territory", { color: "white" }));
      const label = view.labels?.get(i);
      if (label) what.push(t(label.color === undefined ? "board.number" : "board.suggested", { text: label.text }));
      b.setAttribute("aria-label", t("board.point", { point: pointName(pointAt(i, n)), what: what.join(t("list.separator")) }));
      b.classList.toggle("b", c === Color.BLACK);
      b.classList.toggle("w", c === Color.WHITE);
      b.classList.toggle("last", i === last);
      b.classList.toggle("ko", ko.has(i));
      b.classList.toggle("dead", dead.has(i));
      b.classList.toggle("atari", atari.has(i));
      b.classList.toggle("pending", i === pending && c === Color.UNSPECIFIED);
      b.classList.toggle("pb", i === pending && view.pendingColor === Color.BLACK);
      b.classList.toggle("pw", i === pending && view.pendingColor === Color.WHITE);
      b.classList.toggle("tb", territoryBlack.has(i));
      b.classList.toggle("tw", territoryWhite.has(i));
      const stone = b.firstElementChild as HTMLElement;
      stone.textContent = label?.text ?? "";
      b.classList.toggle("lbl", !!label);
      b.classList.toggle("hb", label?.color === Color.BLACK && c === Color.UNSPECIFIED);
      b.classList.toggle("hw", label?.color === Color.WHITE && c === Color.UNSPECIFIED);
    }
  }

  private build(n: number): void {
    this.size = n;
    this.element.replaceChildren();
    this.grid.replaceChildren();
    this.grid.style.setProperty("--n", String(n));
    this.points = [];
    const columns = document.createElement("div");
    columns.className = "coords columns";
    columns.setAttribute("aria-hidden", "true");
    const rows = document.createElement("div");
    rows.className = "coords rows";
    rows.setAttribute("aria-hidden", "true");
    for (let c = 0; c < n; c++) {
      const s = document.createElement("span");
      s.textContent = pointName({ column: c, row: 0 } as Point).replace(/\d+$/, "");
      columns.append(s);
    }
    for (let r = n - 1; r >= 0; r--) {
      const s = document.createElement("span");
      s.textContent = String(r + 1);
      rows.append(s);
    }
    // The top row first, so the tab and reading order is the board as seen.
    const buttons: HTMLButtonElement[] = new Array(n * n);
    for (let r = n - 1; r >= 0; r--) {
      for (let c = 0; c < n; c++) {
        const i = r * n + c;
        const b = document.createElement("button");
        b.type = "button";
        b.className = "pt";
        b.dataset.point = pointName({ column: c, row: r } as Point);
        if (r === 0) b.classList.add("bottom");
        if (r === n - 1) b.classList.add("top");
        if (c === 0) b.classList.add("left");
        if (c === n - 1) b.classList.add("right");
        if (isStar(r, c, n)) b.classList.add("star");
        b.tabIndex = -1;
        b.append(document.createElement("span"));
        b.addEventListener("click", () => {
          this.focus(i, false);
          this.onPlay({ column: c, row: r } as Point);
        });
        buttons[i] = b;
        this.grid.append(b);
      }
    }
    this.points = buttons;
    this.focused = Math.floor((n * n) / 2);
    this.points[this.focused].tabIndex = 0;
    this.element.append(document.createElement("span"), columns, rows, this.grid);
  }

  private focus(i: number, move: boolean): void {
    this.points[this.focused].tabIndex = -1;
    this.focused = i;
    this.points[i].tabIndex = 0;
    if (move) this.points[i].focus();
  }

  private key(e: KeyboardEvent): void {
    const n = this.size;
    const r = Math.floor(this.focused / n);
    const c = this.focused % n;
    const to: Record<string, [number, number]> = {
      ArrowUp: [r + 1, c],
      ArrowDown: [r - 1, c],
      ArrowLeft: [r, c - 1],
      ArrowRight: [r, c + 1],
      Home: [r, 0],
      End: [r, n - 1],
    };
    const next = to[e.key];
    if (!next) return;
    e.preventDefault();
    const [nr, nc] = next;
    if (nr >= 0 && nr < n && nc >= 0 && nc < n) this.focus(nr * n + nc, true);
  }
}

function pointAt(i: number, n: number): Point {
  return { column: i % n, row: Math.floor(i / n) } as Point;
}
