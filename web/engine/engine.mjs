// The WebAssembly engine's loader, for the browser's Worker and for Node:
// the rules and the computer player (crates/baduk-wasm), spoken in GTP.
// No binding generator: the engine exports five functions and imports a
// clock (see crates/baduk-wasm/src/lib.rs).

const LEVELS = { easy: 0, normal: 1, hard: 2 };

/** Instantiates the engine from a fetch Response (streamed where the
 * server sends application/wasm), from the module's bytes, or from a
 * compiled WebAssembly.Module (which a page compiles once and hands to
 * each of its Workers). */
export async function loadEngine(source) {
  const imports = { env: { now_ms: () => performance.now() } };
  const response = await source;
  let instance;
  if (response instanceof WebAssembly.Module) {
    instance = await WebAssembly.instantiate(response, imports);
  } else if (typeof Response !== 'undefined' && response instanceof Response) {
    if (!response.ok) {
      throw new Error(`the engine could not be fetched: HTTP ${response.status}`);
    }
    if (WebAssembly.instantiateStreaming) {
      ({ instance } = await WebAssembly.instantiateStreaming(response, imports));
    } else {
      ({ instance } = await WebAssembly.instantiate(await response.arrayBuffer(), imports));
    }
  } else {
    ({ instance } = await WebAssembly.instantiate(response, imports));
  }
  return new Engine(instance.exports);
}

/** One engine instance: one GTP session at a time. */
export class Engine {
  #exports;
  #encoder = new TextEncoder();
  #decoder = new TextDecoder();

  constructor(exports) {
    this.#exports = exports;
  }

  /** Starts a fresh session (an empty 9×9 board under Ttakji's rules) at
   * `level` ('easy', 'normal' or 'hard') with a 64-bit `seed` (a BigInt
   * or a number), and optionally a playout budget and a time cap a move
   * in milliseconds in place of the level's. */
  start({ level = 'normal', seed = 0n, playouts = 0, millis = 0 } = {}) {
    const code = LEVELS[level];
    if (code === undefined) {
      throw new Error(`unknown level \`${level}\` (easy, normal or hard)`);
    }
    const s = BigInt.asUintN(64, BigInt(seed));
    this.#exports.engine_new(
      code,
      Number(s >> 32n),
      Number(s & 0xffffffffn),
      playouts >>> 0,
      millis >>> 0,
    );
  }

  /** Runs one GTP line; returns the reply as GTP prints it (`=…` or `?…`
   * and a blank line), '' for a line with no command. */
  gtp(line) {
    const bytes = this.#encoder.encode(line);
    const at = this.#exports.engine_input(bytes.length);
    new Uint8Array(this.#exports.memory.buffer, at, bytes.length).set(bytes);
    const n = this.#exports.engine_gtp(bytes.length);
    const out = this.#exports.engine_output();
    return this.#decoder.decode(new Uint8Array(this.#exports.memory.buffer, out, n));
  }

  /** Runs a command and returns its answer's text, or throws its error. */
  ask(line) {
    const reply = this.gtp(line).trim();
    if (reply.startsWith('?')) {
      throw new Error(`${line}: ${reply.slice(1).trim()}`);
    }
    return reply.slice(1).trim();
  }

  /** Whether the last command was `quit`. */
  get ended() {
    return this.#exports.engine_ended() === 1;
  }
}
