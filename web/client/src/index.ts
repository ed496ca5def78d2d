// @ttakji/client: the Ttakji API for TypeScript apps, over gRPC-web.
//
// The messages and service descriptors are generated from proto/ (src/gen,
// `npm run generate`); this file adds what every client needs around them:
// a transport that carries the player's token, the four public services,
// and the names players use for points and results.

import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { AuthService, GameService, LadderService, MatchService } from "./gen/ttakji/v1/api_pb.js";
import { clone, create } from "@bufbuild/protobuf";
import {
  Color,
  EndReason,
  GameSnapshotSchema,
  type GameChange,
  type GameSnapshot,
  type Point,
} from "./gen/ttakji/v1/game_pb.js";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

export * from "./gen/ttakji/v1/api_pb.js";
export * from "./gen/ttakji/v1/game_pb.js";
export * from "./gen/ttakji/v1/matchmaker_pb.js";
export * from "./gen/ttakji/v1/ratings_pb.js";
export * from "./gen/google/rpc/error_details_pb.js";
export { Code, ConnectError };

/** The public services of one Ttakji server. */
export interface Ttakji {
  auth: Client<typeof AuthService>;
  games: Client<typeof GameService>;
  match: Client<typeof MatchService>;
  ladder: Client<typeof LadderService>;
}

/**
 * Clients for the server at `baseUrl` (`https://play.example`, or
 * `location.origin` for a page the server itself serves). `token` is asked
 * before every call, so a new sign-in takes effect at once.
 */
export function connect(baseUrl: string, token: () => string | undefined): Ttakji {
  const bearer: Interceptor = (next) => (req) => {
    const t = token();
    if (t) req.header.set("authorization", `Bearer ${t}`);
    return next(req);
  };
  const transport = createGrpcWebTransport({
    baseUrl,
    useBinaryFormat: true,
    interceptors: [bearer],
  });
  return {
    auth: createClient(AuthService, transport),
    games: createClient(GameService, transport),
    match: createClient(MatchService, transport),
    ladder: createClient(LadderService, transport),
  };
}

/**
 * Why the server refused a call, as a program reads it: the ErrorInfo in the
 * status details, with a stable `reason` (docs/errors.md) and the values its
 * message names (`point`: "E5"). Undefined for an error that carries none
 * (a network failure, a stream cut off).
 */
export function refusalOf(e: unknown): { reason: string; metadata: Record<string, string> } | undefined {
  if (!(e instanceof ConnectError)) return undefined;
  const info = e.findDetails(ErrorInfoSchema)[0];
  return info && info.reason ? { reason: info.reason, metadata: { ...info.metadata } } : undefined;
}

/** Milliseconds to wait before retrying, when the server said (`ttakji-retry-after-ms`). */
export function retryAfterMs(e: unknown): number | undefined {
  if (!(e instanceof ConnectError)) return undefined;
  const v = e.metadata.get("ttakji-retry-after-ms");
  const ms = v === null ? NaN : Number(v);
  return Number.isFinite(ms) ? ms : undefined;
}

const COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";

/** A point as players name it: column letters skip I, rows count from the bottom ("D5"). */
export function pointName(p: Point): string {
  return `${COLUMNS[p.column] ?? "?"}${p.row + 1}`;
}

/** The point a name like "D5" stands for on a board of `size`, or undefined. */
export function parsePoint(name: string, size: number): Point | undefined {
  const m = /^([A-HJ-Z])(\d{1,2})$/i.exec(name.trim());
  if (!m) return undefined;
  const column = COLUMNS.indexOf(m[1].toUpperCase());
  const row = Number(m[2]) - 1;
  if (column < 0 || column >= size || row < 0 || row >= size) return undefined;
  return { column, row } as Point;
}

/** "Black" or "White". */
export function colorName(c: Color): string {
  return c === Color.BLACK ? "Black" : c === Color.WHITE ? "White" : "Nobody";
}

/**
 * The result in words: "White wins by 2.5", "Black wins by resignation",
 * "White wins on time", "Jigo (a draw on the board)", "A draw by agreement".
 */
export function resultInWords(game: GameSnapshot): string {
  const r = game.result;
  if (!r) return "";
  const winner = colorName(r.winner);
  switch (r.reason) {
    case EndReason.RESIGNATION:
      return `${winner} wins by resignation`;
    case EndReason.TIMEOUT:
      return `${winner} wins on time`;
    case EndReason.DRAW_AGREED:
      return "A draw by agreement";
    default:
      if (r.winner === Color.UNSPECIFIED) return "Jigo (a draw on the board)";
      return `${winner} wins by ${r.count?.margin ?? ""}`;
  }
}

/**
 * The server's clock minus this device's, from a snapshot just received:
 * add it to `Date.now()` before comparing with `clock.deadlineUnixMs`, so the
 * countdown is right on a device whose clock is off.
 */
export function clockOffsetMs(game: GameSnapshot, receivedAtMs = Date.now()): number | undefined {
  const server = Number(game.serverTimeUnixMs);
  return server > 0 ? server - receivedAtMs : undefined;
}

/**
 * The game after an event, from the game before it and the event's change
 * (a stream watched with `changes: true` sends the game whole once, then
 * only what each event changed). `game` is left as it was. Throws when the
 * change does not fit the game: watch again from the last event seq kept.
 */
export function applyChange(game: GameSnapshot, change: GameChange): GameSnapshot {
  const next = clone(GameSnapshotSchema, game);
  const values = change.values ?? create(GameSnapshotSchema);
  const fields = next as unknown as Record<string, unknown>;
  const from = values as unknown as Record<string, unknown>;
  for (const number of change.fields) {
    const field = GameSnapshotSchema.fields.find((f) => f.number === number);
    if (!field || field.localName === "stones") throw new Error(`the change names field ${number}, which a game does not have`);
    fields[field.localName] = from[field.localName];
  }
  const size = next.boardSize;
  for (const s of change.stones) {
    const p = s.point;
    if (!p || p.column >= size || p.row >= size) throw new Error("the change puts a stone off the board");
    next.stones[p.row * size + p.column] = s.color;
  }
  return next;
}
