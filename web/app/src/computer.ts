// The computer's player for games whose engine runs in this page: the
// WebAssembly engine (crates/baduk-wasm) in a dedicated Web Worker
// (web/engine/worker.mjs), so the page never waits on it. This module, the
// Worker and the engine are loaded only when such a game needs them.

/** What the engine is asked: the game so far and whose move it is. */
export interface Think {
  level: "easy" | "normal" | "hard";
  /** A 64-bit seed in decimal: the same position and seed give the same move. */
  seed: string;
  size: number;
  komi: number;
  rules: string;
  /** Every move so far, as GTP names them: [["b", "E5"], ["w", "pass"]]. */
  moves: [string, string][];
  toMove: "b" | "w";
}

/** What the engine decided: a point ("E5"), "pass" or "resign". */
export interface Thought {
  move: string;
  playouts: number;
  ms: number;
}

interface Pending {
  resolve: (t: Thought) => void;
  reject: (e: Error) => void;
}

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(message: string): void {
  worker?.terminate();
  worker = undefined;
  for (const p of pending.values()) p.reject(new Error(message));
  pending.clear();
}

function engineWorker(): Worker {
  if (worker) return worker;
  if (typeof WebAssembly !== "object") throw new Error("this browser has no WebAssembly");
  const w = new Worker(new URL("../../engine/worker.mjs", import.meta.url), { type: "module" });
  w.onmessage = ({ data }: MessageEvent) => {
    const p = pending.get(data.id);
    if (!p) return;
    pending.delete(data.id);
    if (data.error) p.reject(new Error(data.error));
    else p.resolve({ move: data.move, playouts: data.playouts, ms: data.ms });
  };
  w.onerror = (e) => {
    e.preventDefault();
    failAll(e.message || "the engine's worker could not start");
  };
  worker = w;
  return w;
}

/** The engine's move for `t`; rejects when the engine cannot run here. */
export function think(t: Think): Promise<Thought> {
  return new Promise((resolve, reject) => {
    try {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      engineWorker().postMessage({ id, think: t });
    } catch (e) {
      reject(e instanceof Error ? e : new Error(String(e)));
    }
  });
}

const STOPPED = "the engine was stopped";

/** Stops the engine's search: the game left, or its position is gone. */
export function stop(): void {
  failAll(STOPPED);
}

/** Whether `e` is a search's end by `stop`. */
export function stopped(e: unknown): boolean {
  return e instanceof Error && e.message === STOPPED;
}

const COLUMNS = "ABCDEFGHJKLMNOPQRST";

/** The moves of a game record the server wrote, as GTP names them. */
export function movesOfSgf(sgf: string, size: number): [string, string][] {
  const moves: [string, string][] = [];
  for (const m of sgf.matchAll(/;([BW])\[([a-s]{2})?\]/g)) {
    const color = m[1] === "B" ? "b" : "w";
    const at = m[2];
    if (!at) {
      moves.push([color, "pass"]);
      continue;
    }
    const column = at.charCodeAt(0) - 97;
    const fromTop = at.charCodeAt(1) - 97;
    moves.push([color, `${COLUMNS[column]}${size - fromTop}`]);
  }
  return moves;
}
