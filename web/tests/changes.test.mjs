// applyChange in @ttakji/client: a stream watched with `changes: true`
// sends the game whole once, then what each event changed; applying a
// change gives the event's game and leaves the one before as it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import {
  Color,
  GameChangeSchema,
  GameSnapshotSchema,
  StoneChangeSchema,
  applyChange,
} from "@ttakji/client";

function empty() {
  return create(GameSnapshotSchema, {
    gameId: "g1",
    boardSize: 9,
    stones: new Array(81).fill(Color.UNSPECIFIED),
    toMove: Color.BLACK,
    clock: { secondsPerMove: 30, deadlineUnixMs: 1000n },
  });
}

test("a move's change places its stone and sets the fields it names, and only those", () => {
  const before = empty();
  const change = create(GameChangeSchema, {
    // D5: column 3, row 4.
    stones: [create(StoneChangeSchema, { point: { column: 3, row: 4 }, color: Color.BLACK })],
    // to_move (9), move_count (10), clock (17) with no value: gone.
    fields: [9, 10, 17],
    values: create(GameSnapshotSchema, { toMove: Color.WHITE, moveCount: 1, ranked: true }),
  });
  const after = applyChange(before, change);
  assert.equal(after.stones[4 * 9 + 3], Color.BLACK);
  assert.equal(after.toMove, Color.WHITE);
  assert.equal(after.moveCount, 1);
  assert.equal(after.clock, undefined, "a field named but unset goes back to its default");
  assert.equal(after.ranked, false, "a field not named is left alone");
  assert.equal(after.gameId, "g1");
  assert.equal(before.stones[4 * 9 + 3], Color.UNSPECIFIED, "the game before is left as it was");
  assert.equal(before.toMove, Color.BLACK);
  assert.equal(before.clock?.deadlineUnixMs, 1000n);
});

test("a change that does not fit the game is refused", () => {
  const before = empty();
  const off = create(GameChangeSchema, {
    stones: [create(StoneChangeSchema, { point: { column: 9, row: 0 }, color: Color.WHITE })],
  });
  assert.throws(() => applyChange(before, off), /off the board/);
  // Field 8 is the stones, which a change sends point by point; 99 is none.
  for (const field of [8, 99]) {
    assert.throws(() => applyChange(before, create(GameChangeSchema, { fields: [field] })), /field/);
  }
});
