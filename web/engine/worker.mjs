// The computer's player in a dedicated Web Worker, so the page never waits
// on it: the WebAssembly engine (engine.mjs) thinks here and posts its
// move back. One game at a time; the engine keeps its search tree from one
// move to the next while the game goes on from the moves it saw.
//
// On a device with several cores the page runs several such Workers and
// spreads each move over them as the native search spreads it over
// threads: each searches one tree of the move's playouts, and each then
// decides from all the trees, alike (crates/baduk-ai's search_tree and
// decide_from_trees).
//
// The page compiles the engine once and hands the compiled module to each
// Worker in its first message, { module }, so it is fetched and compiled
// once however many Workers think.
//
// Messages in, `game` being { level, seed, size, komi, rules, moves, toMove }
// (moves: every move so far, as GTP speaks them: [['b', 'E5'], ['w', 'pass'], …];
// toMove: 'b' or 'w', the computer's colour):
//   { id, think: game }                    the move, on this Worker alone;
//   { id, tree: game, index, count }       tree `index` of `count`;
//   { id, decide: game, trees: [text, …] } the move from every tree;
//   { id, analyse: game, playouts, depth } a review's reading of the
//                                          position, toMove to play.
// Messages out: { id, move: 'E5' | 'pass' | 'resign', playouts, ms }
//            or { id, tree: text, ms }
//            or { id, winrate, lead, line: ['E5', …], playouts, ms }
//            or { id, error: 'why' }
import { loadEngine } from './engine.mjs';

/** The engine, once the page has sent its module. */
let engine;

/** What the engine's session holds now. */
let session = null;

function sameGame(a, b) {
  return a && a.level === b.level && a.seed === b.seed && a.size === b.size && a.komi === b.komi && a.rules === b.rules;
}

/** Brings the engine's session to the game `t`: a fresh session where the
 * game is another or went back, else only the moves it has not seen. */
function sync(e, t) {
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
}

function decided(e, move) {
  const m = move.toUpperCase();
  const [, playouts, ms] = /playouts (\d+) ms ([\d.]+)/.exec(e.ask('ttakji-last_search')) ?? [];
  return { move: m === 'RESIGN' ? 'resign' : m === 'PASS' ? 'pass' : m, playouts: Number(playouts), ms: Number(ms) };
}

function answer(e, data) {
  if (data.think) {
    sync(e, data.think);
    return decided(e, e.ask(`reg_genmove ${data.think.toMove}`));
  }
  if (data.tree) {
    sync(e, data.tree);
    const start = performance.now();
    const tree = e.ask(`ttakji-search_tree ${data.tree.toMove} ${data.index} ${data.count}`);
    return { tree, ms: performance.now() - start };
  }
  if (data.decide) {
    sync(e, data.decide);
    return decided(e, e.ask(`ttakji-decide_trees ${data.decide.toMove} ${data.trees.join(' ')}`));
  }
  if (data.analyse) {
    sync(e, data.analyse);
    const start = performance.now();
    const text = e.ask(`ttakji-analyse ${data.analyse.toMove} ${data.playouts} ${data.depth}`);
    const m = /^winrate ([\d.]+) lead (-?[\d.]+) playouts (\d+) line ?(.*)$/.exec(text.trim());
    if (!m) throw new Error(`the engine's reading is not one: ${text}`);
    return {
      winrate: Number(m[1]),
      lead: Number(m[2]),
      playouts: Number(m[3]),
      line: m[4].split(' ').filter(Boolean),
      ms: performance.now() - start,
    };
  }
  throw new Error('the engine was asked nothing it knows');
}

self.onmessage = async ({ data }) => {
  if (data.module) {
    engine = loadEngine(data.module);
    // A module that does not instantiate is reported with the first question.
    engine.catch(() => {});
    return;
  }
  try {
    if (!engine) throw new Error('the engine was not given its module');
    const e = await engine;
    self.postMessage({ id: data.id, ...answer(e, data) });
  } catch (err) {
    session = null;
    self.postMessage({ id: data.id, error: String(err?.message ?? err) });
  }
};
