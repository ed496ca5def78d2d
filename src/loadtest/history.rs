//! Every call a load test makes about a game, with when it was sent and
//! when it was answered, and a check that each game's history is
//! linearizable: that some order of its operations, each taking effect at
//! one instant between its call and its answer, explains every answer.
//!
//! The model is one game as its clients see it, its number of moves:
//! - a read (`GetGame`) answers the number of moves at that instant;
//! - move `n` (`PlayMove` naming move number `n`) takes effect when the
//!   game has `n - 1` moves and answers `n`; sent again after it took
//!   effect, it answers the game as it then stands and changes nothing;
//! - a move answered with more moves than its number may have taken
//!   effect at any instant after it was sent (by itself or a call for the
//!   same move before it), and its answer read the game at an instant
//!   between its sending and its answer: a call a gateway retried after
//!   abandoning a try to a stopped authority may be stored by that try
//!   and answered, as it then stands, by the retry;
//! - a refusal the server gave (an illegal move, a wrong number) changed
//!   nothing;
//! - a call whose outcome is unknown (no answer, UNAVAILABLE, a broken
//!   connection) may have taken effect at any instant after it was sent,
//!   or never.
//!
//! A read showing fewer moves than were acknowledged before it was sent
//! (a stale read), an acknowledged move missing from the record read at
//! the end (a lost write) and more moves than were ever sent (a
//! duplicated write) each have no such order. The search is Wing and
//! Gong's, with the memo of Lowe's (as Porcupine and Knossos do it): a
//! partial linearization and the model's state are tried once.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Mutex, PoisonError};

use tokio::time::Instant;

/// What a call did, as its client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Call {
    /// A read answered with the game's number of moves.
    Read { moves: u32 },
    /// Move `number`, answered with the game's number of moves after it.
    Move { number: u32, moves: u32 },
    /// Move `number`, refused by the server: nothing changed.
    Refused { number: u32 },
    /// Move `number` with no answer to go by: it may or may not have
    /// taken effect.
    Unknown { number: u32 },
}

/// One call in a game's history: times in microseconds from the start of
/// the run; `answered` is `None` when the outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Op {
    pub sent_us: u64,
    pub answered_us: Option<u64>,
    pub call: Call,
}

/// Why a game's history is not linearizable: the longest prefix of it
/// (by answer time) that is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The first operation (in answer order) no order explains.
    pub op: Op,
}

/// The state the model moves to from `moves` by `call`, if `call` can
/// take effect then. A call with no answer is placed only where it takes
/// effect: one that never did is simply left out.
fn step(moves: u32, call: Call) -> Option<u32> {
    match call {
        Call::Read { moves: seen } => (moves == seen).then_some(moves),
        Call::Move {
            number,
            moves: seen,
        } => {
            if moves + 1 == number && seen == number {
                Some(number)
            } else if moves >= number && seen == moves {
                Some(moves)
            } else {
                None
            }
        }
        Call::Refused { .. } => Some(moves),
        Call::Unknown { number } => (moves + 1 == number).then_some(number),
    }
}

/// Checks one game's history against the model, from a game with no
/// moves.
///
/// # Errors
/// The first operation no order explains.
pub fn check(ops: &[Op]) -> Result<(), Violation> {
    // A move answered with the game as it then stands: a move that may
    // have taken effect, and a read.
    let ops: Vec<Op> = ops
        .iter()
        .flat_map(|&op| match op.call {
            Call::Move { number, moves } if moves > number => vec![
                Op {
                    answered_us: None,
                    call: Call::Unknown { number },
                    ..op
                },
                Op {
                    call: Call::Read { moves },
                    ..op
                },
            ],
            _ => vec![op],
        })
        .collect();
    let ops = ops.as_slice();
    // Answered operations must all be placed; unknown ones may be left out.
    let answered: Vec<usize> = {
        let mut order: Vec<usize> = (0..ops.len())
            .filter(|&i| ops[i].answered_us.is_some())
            .collect();
        order.sort_by_key(|&i| ops[i].answered_us);
        order
    };
    // The longest prefix (in answer order) that is linearizable names the
    // culprit: the operation after it.
    if search(ops, &answered).is_ok() {
        return Ok(());
    }
    let (mut good, mut bad) = (0, answered.len());
    while bad - good > 1 {
        let mid = usize::midpoint(good, bad);
        let prefix: Vec<Op> = answered[..mid]
            .iter()
            .map(|&i| ops[i])
            .chain(ops.iter().copied().filter(|o| o.answered_us.is_none()))
            .collect();
        let order: Vec<usize> = (0..mid).collect();
        if search(&prefix, &order).is_ok() {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Err(Violation {
        op: ops[answered[bad - 1]],
    })
}

/// Whether some order of `ops` that places every operation in `must`
/// explains every answer.
fn search(ops: &[Op], must: &[usize]) -> Result<(), ()> {
    let words = ops.len().div_ceil(64);
    let mut placed = vec![0u64; words];
    let mut seen: HashSet<(Vec<u64>, u32)> = HashSet::new();
    let required: Vec<u64> = {
        let mut bits = vec![0u64; words];
        for &i in must {
            bits[i / 64] |= 1 << (i % 64);
        }
        bits
    };
    if place(ops, &required, &mut placed, 0, &mut seen) {
        Ok(())
    } else {
        Err(())
    }
}

fn is_set(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1 << (i % 64)) != 0
}

/// Depth-first: places one more operation, any that was sent before every
/// unplaced answered operation was answered, where it can take effect.
fn place(
    ops: &[Op],
    required: &[u64],
    placed: &mut Vec<u64>,
    moves: u32,
    seen: &mut HashSet<(Vec<u64>, u32)>,
) -> bool {
    if required.iter().zip(placed.iter()).all(|(r, p)| r & !p == 0) {
        return true;
    }
    if !seen.insert((placed.clone(), moves)) {
        return false;
    }
    // The earliest answer among the operations not yet placed: whatever is
    // placed next was sent before it.
    let horizon = (0..ops.len())
        .filter(|&i| !is_set(placed, i) && is_set(required, i))
        .filter_map(|i| ops[i].answered_us)
        .min()
        .unwrap_or(u64::MAX);
    for i in 0..ops.len() {
        if is_set(placed, i) || ops[i].sent_us > horizon {
            continue;
        }
        if let Some(next) = step(moves, ops[i].call) {
            placed[i / 64] |= 1 << (i % 64);
            let done = place(ops, required, placed, next, seen);
            placed[i / 64] &= !(1 << (i % 64));
            if done {
                return true;
            }
        }
    }
    false
}

/// A move recorded as sent, whose outcome is filled in when it comes.
#[derive(Debug)]
pub struct Sent {
    game_id: String,
    index: usize,
}

/// The histories of a run's games, recorded as the calls are made.
#[derive(Debug)]
pub struct Histories {
    start: Instant,
    games: Mutex<BTreeMap<String, Vec<Op>>>,
}

impl Histories {
    #[must_use]
    pub fn new() -> Histories {
        Histories {
            start: Instant::now(),
            games: Mutex::new(BTreeMap::new()),
        }
    }

    /// Microseconds since the start of the run.
    #[must_use]
    pub fn now_us(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Records a move about `game_id` as it is sent: its outcome stays
    /// unknown until [`Histories::answered`] says (a call cut off by the
    /// end of the run may still have taken effect).
    pub fn sent(&self, game_id: &str, number: u32) -> Sent {
        let sent_us = self.now_us();
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        let ops = games.entry(game_id.to_owned()).or_default();
        ops.push(Op {
            sent_us,
            answered_us: None,
            call: Call::Unknown { number },
        });
        Sent {
            game_id: game_id.to_owned(),
            index: ops.len() - 1,
        }
    }

    /// What the call recorded by [`Histories::sent`] came to (`Unknown`:
    /// no answer to go by).
    pub fn answered(&self, sent: &Sent, call: Call) {
        let answered_us = (!matches!(call, Call::Unknown { .. })).then(|| self.now_us());
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(op) = games
            .get_mut(&sent.game_id)
            .and_then(|ops| ops.get_mut(sent.index))
        {
            op.answered_us = answered_us;
            op.call = call;
        }
    }

    /// Records a read of `game_id` sent at `sent_us` and answered now.
    pub fn read(&self, game_id: &str, sent_us: u64, moves: u32) {
        let answered_us = Some(self.now_us());
        self.games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(game_id.to_owned())
            .or_default()
            .push(Op {
                sent_us,
                answered_us,
                call: Call::Read { moves },
            });
    }

    /// The games recorded.
    #[must_use]
    pub fn game_ids(&self) -> Vec<String> {
        self.games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    /// Every game's history, by game id.
    #[must_use]
    pub fn all(&self) -> Vec<(String, Vec<Op>)> {
        self.games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(id, ops)| (id.clone(), ops.clone()))
            .collect()
    }

    /// The number of games and calls recorded.
    #[must_use]
    pub fn size(&self) -> (usize, usize) {
        let games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        (games.len(), games.values().map(Vec::len).sum())
    }
}

impl Default for Histories {
    fn default() -> Self {
        Histories::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(sent_us: u64, answered_us: u64, call: Call) -> Op {
        Op {
            sent_us,
            answered_us: Some(answered_us),
            call,
        }
    }

    fn unknown(sent_us: u64, number: u32) -> Op {
        Op {
            sent_us,
            answered_us: None,
            call: Call::Unknown { number },
        }
    }

    fn mv(number: u32, moves: u32) -> Call {
        Call::Move { number, moves }
    }

    fn read(moves: u32) -> Call {
        Call::Read { moves }
    }

    #[test]
    fn a_legal_concurrent_history_passes() {
        let ops = [
            op(0, 10, mv(1, 1)),
            // A read overlapping move 2 may see it or not.
            op(15, 40, read(1)),
            op(20, 30, mv(2, 2)),
            op(25, 35, read(2)),
            // A retry of move 2 answers the game as it stands.
            op(50, 60, mv(2, 3)),
            op(45, 55, mv(3, 3)),
            op(70, 80, Call::Refused { number: 9 }),
            op(90, 100, read(3)),
        ];
        assert_eq!(check(&ops), Ok(()));
    }

    #[test]
    fn a_move_with_no_answer_may_have_taken_effect_or_not() {
        let taken = [op(0, 10, mv(1, 1)), unknown(20, 2), op(50, 60, read(2))];
        assert_eq!(check(&taken), Ok(()));
        let not_taken = [op(0, 10, mv(1, 1)), unknown(20, 2), op(50, 60, read(1))];
        assert_eq!(check(&not_taken), Ok(()));
        // But not both, one after the other.
        let both = [
            op(0, 10, mv(1, 1)),
            unknown(20, 2),
            op(50, 60, read(2)),
            op(70, 80, read(1)),
        ];
        assert_eq!(check(&both).map_err(|v| v.op.sent_us), Err(70));
    }

    /// Move 2 is stored by a try its gateway abandoned (an authority
    /// stopped right after storing it), the opponent sees it and plays
    /// move 3, and the gateway's retry of move 2 answers the game as it
    /// then stands.
    #[test]
    fn a_move_stored_by_one_try_and_answered_by_another_passes() {
        let ops = [
            op(0, 10, mv(1, 1)),
            op(20, 1_200, mv(2, 3)),
            op(1_050, 1_060, read(2)),
            op(1_070, 1_080, mv(3, 3)),
            op(1_300, 1_310, read(3)),
        ];
        assert_eq!(check(&ops), Ok(()));
        // Its answer is still a read: not older than what was acknowledged
        // before it was sent.
        let stale = [
            op(0, 10, mv(1, 1)),
            op(20, 30, mv(2, 2)),
            op(40, 50, mv(3, 3)),
            op(60, 70, mv(2, 2)),
        ];
        assert_eq!(check(&stale).map_err(|v| v.op.sent_us), Err(60));
    }

    #[test]
    fn a_stale_read_is_caught() {
        let ops = [
            op(0, 10, mv(1, 1)),
            op(20, 30, mv(2, 2)),
            // Sent after move 2 was acknowledged, it shows the game before.
            op(40, 50, read(1)),
        ];
        assert_eq!(check(&ops).map_err(|v| v.op.call), Err(read(1)));
    }

    #[test]
    fn a_lost_write_is_caught() {
        let ops = [
            op(0, 10, mv(1, 1)),
            op(20, 30, mv(2, 2)),
            // The record read at the end has one move.
            op(100, 110, read(1)),
        ];
        assert_eq!(check(&ops).map_err(|v| v.op.sent_us), Err(100));
    }

    #[test]
    fn a_duplicated_write_is_caught() {
        let ops = [
            op(0, 10, mv(1, 1)),
            // Move 2 applied twice: the game has three moves, and no one
            // sent a third.
            op(20, 30, mv(2, 2)),
            op(40, 50, read(3)),
        ];
        assert_eq!(check(&ops).map_err(|v| v.op.call), Err(read(3)));
    }

    #[test]
    fn long_histories_are_checked_quickly() {
        // 400 moves, each overlapping a read and an unknown retry.
        let mut ops = Vec::new();
        for n in 1..=400u32 {
            let t = u64::from(n) * 100;
            ops.push(op(t, t + 60, mv(n, n)));
            ops.push(op(t + 30, t + 90, read(n)));
            ops.push(unknown(t + 10, n));
        }
        assert_eq!(check(&ops), Ok(()));
    }

    #[test]
    fn recorded_histories_are_checked_per_game() {
        let histories = Histories::new();
        let first = histories.sent("a", 1);
        histories.read("b", 0, 0);
        // A move cut off before its answer may have taken effect.
        histories.sent("b", 1);
        histories.read("b", histories.now_us(), 1);
        histories.answered(&first, mv(1, 1));
        std::thread::sleep(std::time::Duration::from_millis(2));
        let sent = histories.now_us();
        histories.read("a", sent, 0);
        let bad: Vec<String> = histories
            .all()
            .into_iter()
            .filter(|(_, ops)| check(ops).is_err())
            .map(|(id, _)| id)
            .collect();
        assert_eq!(bad, ["a"]);
        assert_eq!(histories.size(), (2, 5));
    }
}
