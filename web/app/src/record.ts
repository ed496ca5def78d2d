// A game's record in the page: its moves read from the SGF the server
// writes, and the position after any of them, replayed here (captures
// included) so that stepping through a game asks the server nothing.

import { Color, type Point } from "@ttakji/client";

const COLUMNS = "ABCDEFGHJKLMNOPQRST";

/** One move of a record: a point, or a pass. */
export interface RecordMove {
  color: Color;
  point?: Point;
}

/** The moves of a game record the server wrote. */
export function movesOfRecord(sgf: string, size: number): RecordMove[] {
  const moves: RecordMove[] = [];
  for (const m of sgf.matchAll(/;([BW])\[([a-s]{2})?\]/g)) {
    const color = m[1] === "B" ? Color.BLACK : Color.WHITE;
    const at = m[2];
    if (!at) {
      moves.push({ color });
      continue;
    }
    const column = at.charCodeAt(0) - 97;
    const row = size - 1 - (at.charCodeAt(1) - 97);
    if (column < size && row >= 0) moves.push({ color, point: { column, row } as Point });
  }
  return moves;
}

/** The moves as GTP names them: [["b", "E5"], ["w", "pass"]]. */
export function gtpMoves(moves: RecordMove[]): [string, string][] {
  return moves.map((m) => [
    m.color === Color.BLACK ? "b" : "w",
    m.point ? `${COLUMNS[m.point.column]}${m.point.row + 1}` : "pass",
  ]);
}

/** The moves of a game record the server wrote, as GTP names them. */
export function movesOfSgf(sgf: string, size: number): [string, string][] {
  return gtpMoves(movesOfRecord(sgf, size));
}

/** A position of the record: the stones (row by row from A1) and the
 * stones each side has taken so far. */
export interface Position {
  stones: Color[];
  blackCaptures: number;
  whiteCaptures: number;
}

/**
 * Every position of the game: before any move, then after each. A stone
 * that leaves its own chain without liberties takes it off (suicide, where
 * the rules allow it); the server refused any move the rules forbid.
 */
export function replay(size: number, moves: RecordMove[]): Position[] {
  const positions = [start(size)];
  for (const m of moves) positions.push(after(positions[positions.length - 1], m, size));
  return positions;
}

/** The empty board. */
export function start(size: number): Position {
  return { stones: new Array<Color>(size * size).fill(Color.UNSPECIFIED), blackCaptures: 0, whiteCaptures: 0 };
}

/** The position after move `m` is played in `at`. */
export function after(at: Position, m: RecordMove, size: number): Position {
  if (!m.point) return at;
  const stones = at.stones.slice();
  const i = m.point.row * size + m.point.column;
  stones[i] = m.color;
  const other = m.color === Color.BLACK ? Color.WHITE : Color.BLACK;
  let taken = 0;
  for (const n of neighbours(i, size)) {
    if (stones[n] === other) taken += takeIfDead(stones, n, size);
  }
  // A suicide takes the player's own chain.
  const lost = taken === 0 ? takeIfDead(stones, i, size) : 0;
  return {
    stones,
    blackCaptures: at.blackCaptures + (m.color === Color.BLACK ? taken : lost),
    whiteCaptures: at.whiteCaptures + (m.color === Color.WHITE ? taken : lost),
  };
}

/** Whose turn it is after `k` of `moves`: the player of the next, or after the last, the other side. */
export function toMoveAt(moves: RecordMove[], k: number): Color {
  return moves[k]?.color ?? (moves[k - 1]?.color === Color.BLACK ? Color.WHITE : Color.BLACK);
}

function neighbours(i: number, size: number): number[] {
  const r = Math.floor(i / size);
  const c = i % size;
  const out: number[] = [];
  if (r > 0) out.push(i - size);
  if (r < size - 1) out.push(i + size);
  if (c > 0) out.push(i - 1);
  if (c < size - 1) out.push(i + 1);
  return out;
}

/** Takes the chain on `i` off if it has no liberty; how many stones went. */
function takeIfDead(stones: Color[], i: number, size: number): number {
  const color = stones[i];
  const chain = [i];
  const seen = new Set(chain);
  for (let k = 0; k < chain.length; k++) {
    for (const n of neighbours(chain[k], size)) {
      if (stones[n] === Color.UNSPECIFIED) return 0;
      if (stones[n] === color && !seen.has(n)) {
        seen.add(n);
        chain.push(n);
      }
    }
  }
  for (const s of chain) stones[s] = Color.UNSPECIFIED;
  return chain.length;
}
