// The computer's player in a dedicated Web Worker, so the page never waits
// on it: the WebAssembly engine (engine.mjs) thinks here and posts its
// move back. One game at a time; the engine keeps its search tree from one
// move to the next while the game goes on from the moves it saw.
//
// Messages in:  { id, think: { level, seed, size, komi, rules, moves, toMove } }
//   moves: every move so far, as GTP speaks them: [['b', 'E5'], ['w', 'pass'], …];
//   toMove: 'b' or 'w', the computer's colour.
// Messages out: { id, move: 'E5' | 'pass' | 'resign', playouts, ms }
//            or { id, error: 'why' }
import { loadEngine } from './engine.mjs';

const engine = loadEngine(fetch(new URL('./engine.wasm', import.meta.url)));

/** What the engine's session holds now. */
let session = null;

function sameGame(a, b) {
  return a && a.level === b.level && a.seed === b.seed && a.size === b.size && a.komi === b.komi && a.rules === b.rules;
}

function think(e, t) {
  const fresh = !sameGame(session, t) || t.moves.length < session.moves.length
    || session.moves.some((m, i) => m[0] !== t.moves[i][0] || m[1] !== t.moves[i][1]);
  if (fresh) {
    e.start({ level: t.level, seed: BigInt(t.seed) });
    if (t.rules) e.ask(`kata-set-rules ${t.rules}`);
    e.ask(`boardsize ${t.size}`);
    e.ask(`komi ${t.komi}`);
    session = { ...t, moves: [] };
  }
  for (const [color, vertex] of t.moves.slice(session.moves.length)) {
    e.ask(`play ${color} ${vertex}`);
    session.moves.push([color, vertex]);
  }
  const move = e.ask(`reg_genmove ${t.toMove}`).toUpperCase();
  const [, playouts, ms] = /playouts (\d+) ms ([\d.]+)/.exec(e.ask('ttakji-last_search')) ?? [];
  return { move: move === 'RESIGN' ? 'resign' : move === 'PASS' ? 'pass' : move, playouts: Number(playouts), ms: Number(ms) };
}

self.onmessage = async ({ data }) => {
  const { id, think: t } = data;
  try {
    const e = await engine;
    self.postMessage({ id, ...think(e, t) });
  } catch (err) {
    session = null;
    self.postMessage({ id, error: String(err?.message ?? err) });
  }
};
