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

/** The most Workers one move is spread over. */
const MAX_WORKERS = 4;

/** How many Workers think: one a core, up to `MAX_WORKERS`. */
export function workerCount(): number {
  const cores = typeof navigator === "object" ? navigator.hardwareConcurrency : 1;
  return Math.max(1, Math.min(MAX_WORKERS, Number.isInteger(cores) ? cores : 1));
}

interface Pending {
  resolve: (answer: Record<string, unknown>) => void;
  reject: (e: Error) => void;
}

let workers: Worker[] = [];
/** How many times the engine was stopped. */
let stops = 0;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(message: string): void {
  for (const w of workers) w.terminate();
  workers = [];
  for (const p of pending.values()) p.reject(new Error(message));
  pending.clear();
}

function startWorker(): Worker {
  const w = new Worker(new URL("../../engine/worker.mjs", import.meta.url), { type: "module" });
  w.onmessage = ({ data }: MessageEvent) => {
    const p = pending.get(data.id);
    if (!p) return;
    pending.delete(data.id);
    if (data.error) p.reject(new Error(data.error));
    else p.resolve(data);
  };
  w.onerror = (e) => {
    e.preventDefault();
    failAll(e.message || "the engine's worker could not start");
  };
  return w;
}

/** The engine, fetched and compiled once for every Worker. */
let compiled: Promise<WebAssembly.Module> | undefined;

async function compileEngine(): Promise<WebAssembly.Module> {
  const response = await fetch(new URL("../../engine/engine.wasm", import.meta.url));
  if (!response.ok) throw new Error(`the engine could not be fetched: HTTP ${response.status}`);
  if (WebAssembly.compileStreaming) return WebAssembly.compileStreaming(response);
  return WebAssembly.compile(await response.arrayBuffer());
}

async function engineWorkers(): Promise<Worker[]> {
  if (workers.length > 0) return workers;
  if (typeof WebAssembly !== "object") throw new Error("this browser has no WebAssembly");
  compiled ??= compileEngine();
  const asked = stops;
  let module: WebAssembly.Module;
  try {
    module = await compiled;
  } catch (e) {
    compiled = undefined;
    throw e;
  }
  // Stopped while the engine compiled: that search is not started.
  if (stops !== asked) throw new Error(STOPPED);
  if (workers.length > 0) return workers;
  workers = Array.from({ length: workerCount() }, startWorker);
  for (const w of workers) w.postMessage({ module });
  return workers;
}

/** Asks Worker `w` one thing; rejects with the engine's error. */
function ask(w: Worker, message: Record<string, unknown>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    w.postMessage({ id, ...message });
  });
}

function thoughtOf(answer: Record<string, unknown>, ms: number): Thought {
  return { move: String(answer.move), playouts: Number(answer.playouts), ms };
}

/** The engine's move for `t`; rejects when the engine cannot run here. On
 * several Workers each searches a tree of the move's playouts, and each
 * decides from all the trees, as the native search does on threads. */
export async function think(t: Think): Promise<Thought> {
  try {
    return await thinkOn(await engineWorkers(), t);
  } catch (e) {
    // An engine that failed is not asked again: the next move starts afresh.
    if (!stopped(e)) failAll(e instanceof Error ? e.message : String(e));
    throw e;
  }
}

async function thinkOn(pool: Worker[], t: Think): Promise<Thought> {
  const start = performance.now();
  if (pool.length === 1) {
    const answer = await ask(pool[0], { think: t });
    return thoughtOf(answer, Number(answer.ms));
  }
  const trees = await Promise.all(pool.map((w, index) => ask(w, { tree: t, index, count: pool.length })));
  const texts = trees.map((tree) => String(tree.tree));
  const moves = await Promise.all(pool.map((w) => ask(w, { decide: t, trees: texts })));
  if (moves.some((m) => m.move !== moves[0].move)) {
    throw new Error("the engine's workers disagree");
  }
  return thoughtOf(moves[0], performance.now() - start);
}

/** A review's reading of one position, for the player to move there. */
export interface Reading {
  /** The chance that the player to move wins, 0 to 1. */
  winrate: number;
  /** Black's expected lead in points, komi counted. */
  lead: number;
  /** The move the engine rates best, then the replies it expects. */
  line: string[];
  playouts: number;
  ms: number;
}

/** A finished game as a review reads it. */
export interface GameRecord {
  size: number;
  komi: number;
  rules: string;
  moves: [string, string][];
}

/**
 * Reads the `positions` of `game` (k: the position after k moves, with
 * the player of move k + 1 to play, the last one with the other side), on
 * every Worker at once, each taking the next position not yet read. `onReading` hears of each as it comes; `stop()` ends the review.
 * The reading is Hard's engine with `playouts` a position.
 */
export async function review(
  game: GameRecord,
  playouts: number,
  positions: number[],
  onReading: (k: number, r: Reading) => void,
): Promise<void> {
  try {
    const pool = await engineWorkers();
    let next = 0;
    await Promise.all(
      pool.map(async (w) => {
        for (let i = next++; i < positions.length; i = next++) {
          const k = positions[i];
          const last = game.moves[k - 1]?.[0];
          const toMove = game.moves[k]?.[0] ?? (last === "b" ? "w" : "b");
          const position = { level: "hard", seed: "1", ...game, moves: game.moves.slice(0, k), toMove };
          const r = await ask(w, { analyse: position, playouts, depth: 6 });
          onReading(k, {
            winrate: Number(r.winrate),
            lead: Number(r.lead),
            line: (r.line as string[]) ?? [],
            playouts: Number(r.playouts),
            ms: Number(r.ms),
          });
        }
      }),
    );
  } catch (e) {
    if (!stopped(e)) failAll(e instanceof Error ? e.message : String(e));
    throw e;
  }
}

const STOPPED = "the engine was stopped";

/** Stops the engine's search: the game left, or its position is gone. */
export function stop(): void {
  stops++;
  failAll(STOPPED);
}

/** Whether `e` is a search's end by `stop`. */
export function stopped(e: unknown): boolean {
  return e instanceof Error && e.message === STOPPED;
}
