// The engine in the browser is the engine on the server: the WebAssembly
// build and the native one (`ttakji gtp`), at one level, one budget and one
// seed, on one thread, choose the same move in every position here.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { loadEngine } from "../engine/engine.mjs";
import { serverBinary } from "./harness.mjs";

const POSITIONS = {
  "the empty board": [],
  "a corner fight": "E5 D3 C4 D4 C3 C2 D5 E4 F4 F3 F5 G3 B2 D2 G4 H4 G5 H5 H6 E3 B1 C5 B5 J6".split(" "),
  "an endgame": "E5 E4 D4 F5 F4 D5 C5 E6 D6 F6 G5 E7 D3 G6 H6 H5 G4 H4 G3 H3 G2 J5 H2 F3 E3 F2 E2 C6 B6 C7 B7 D7 C8".split(" "),
};

/** `ttakji gtp` as a child, answering one command at a time. */
function nativeEngine(args) {
  const child = spawn(serverBinary(), ["gtp", ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  // One command is asked at a time: a blank line ends its reply.
  let waiting = null;
  let reply = [];
  lines.on("line", (line) => {
    if (line !== "") {
      reply.push(line);
      return;
    }
    const text = reply.join("\n");
    reply = [];
    waiting?.(text);
    waiting = null;
  });
  return {
    ask: (command) =>
      new Promise((resolve) => {
        waiting = resolve;
        child.stdin.write(`${command}\n`);
      }),
    close: () => {
      child.stdin.end();
      child.kill();
    },
  };
}

const wasm = readFileSync(new URL("../engine/engine.wasm", import.meta.url));

for (const [level, playouts] of [["easy", 400], ["normal", 1500], ["hard", 3000]]) {
  test(`native and WebAssembly ${level} at ${playouts} playouts play the same moves from the same seeds`, async () => {
    for (const [name, moves] of Object.entries(POSITIONS)) {
      for (const seed of [1, 2]) {
        const native = nativeEngine(["--level", level, "--playouts", String(playouts), "--seed", String(seed)]);
        after(native.close);
        const web = await loadEngine(wasm);
        web.start({ level, playouts, seed: BigInt(seed) });
        const toMove = moves.length % 2 ? "w" : "b";
        for (const [i, v] of moves.entries()) {
          const line = `play ${i % 2 ? "w" : "b"} ${v}`;
          assert.equal((await native.ask(line)).trim(), "=", line);
          web.ask(line);
        }
        // Two moves in a row: the second searches on from the kept tree.
        for (const color of [toMove, toMove === "b" ? "w" : "b"]) {
          const a = await native.ask(`genmove ${color}`);
          const b = web.gtp(`genmove ${color}`).trim();
          assert.equal(b, a.trim(), `${name}, seed ${seed}, ${color}`);
        }
        native.close();
      }
    }
  });
}

test("native and WebAssembly Hard at its own budget choose the same move", async () => {
  const moves = POSITIONS["a corner fight"];
  const native = nativeEngine(["--level", "hard", "--seed", "9"]);
  after(native.close);
  const web = await loadEngine(wasm);
  web.start({ level: "hard", seed: 9n });
  for (const [i, v] of moves.entries()) {
    const line = `play ${i % 2 ? "w" : "b"} ${v}`;
    await native.ask(line);
    web.ask(line);
  }
  const a = (await native.ask("genmove b")).trim();
  const b = web.gtp("genmove b").trim();
  const [, playouts] = /playouts (\d+)/.exec(web.ask("ttakji-last_search"));
  assert.equal(b, a);
  assert.equal((await native.ask("ttakji-last_search")).split(" ms ")[0].replace("= ", ""), `playouts ${playouts}`);
  native.close();
});

test("a move spread over three WebAssembly engines, as over the page's Workers, is the move of native Hard on three threads", async () => {
  for (const [name, moves] of Object.entries(POSITIONS)) {
    const native = nativeEngine(["--level", "hard", "--playouts", "2400", "--threads", "3", "--seed", "5"]);
    after(native.close);
    const hosts = [];
    for (let i = 0; i < 3; i++) {
      const web = await loadEngine(wasm);
      web.start({ level: "hard", playouts: 2400, seed: 5n });
      hosts.push(web);
    }
    const everywhere = async (line) => {
      assert.equal((await native.ask(line)).trim(), "=", line);
      for (const web of hosts) web.ask(line);
    };
    for (const [i, v] of moves.entries()) await everywhere(`play ${i % 2 ? "w" : "b"} ${v}`);
    const toMove = moves.length % 2 ? "w" : "b";
    // Two moves in a row: the second searches on from each host's kept tree.
    for (const color of [toMove, toMove === "b" ? "w" : "b"]) {
      const expected = (await native.ask(`genmove ${color}`)).trim().replace(/^= /, "");
      const trees = hosts.map((web, i) => web.ask(`ttakji-search_tree ${color} ${i} 3`));
      const decided = hosts.map((web) => web.ask(`ttakji-decide_trees ${color} ${trees.join(" ")}`));
      assert.deepEqual(decided, [expected, expected, expected], `${name}, ${color}`);
      if (expected !== "resign") for (const web of hosts) web.ask(`play ${color} ${expected}`);
    }
    native.close();
  }
});

test("a tree that is not one, or an index beyond the count, is refused with why", async () => {
  const web = await loadEngine(wasm);
  web.start({ level: "normal", playouts: 100, seed: 1n });
  assert.match(web.gtp("ttakji-search_tree b 3 3"), /^\? the index must be below the count/);
  assert.match(web.gtp("ttakji-decide_trees b 12/3:4"), /^\? not a tree's summary/);
  assert.equal(web.ask("showboard").includes("X"), false, "nothing was played");
});
