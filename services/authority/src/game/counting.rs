//! The count of a territory game (seed 001, "Winning and scoring"): after
//! two passes the players agree which stones are dead before the board is
//! counted.
//!
//! - Two passes open the count. The server proposes its own verdict (the
//!   same conservative calculation that counts area games) as the marks.
//! - Either player marks a chain dead or alive; every change of the marks
//!   gives them a new version (the sequence number of the event that made
//!   it) and withdraws both confirmations.
//! - A player confirms the marks of one version. When both have confirmed
//!   the same marks, the board is counted with them: territory, prisoners
//!   and the dead stones taken off.
//! - Either player may go back to play instead, to settle the position on
//!   the board; the player who would have moved after the second pass
//!   moves, and the next two passes open a new count.
//! - A player may resign during the count.
//! - A count stays open for [`COUNTING_SECONDS`]. When the time runs out
//!   before both confirm, the game is counted with the server's own verdict,
//!   whatever the marks say then: neither player can hold the game hostage
//!   by never confirming, and marking the opponent's living stones dead
//!   gains nothing by waiting.
//! - A computer seat confirms whenever the marks are its own verdict.

use baduk::{ByColor, Color, EndReason, Game, Point};

use super::{Event, EventKind, Finished, OnlineGame, Refusal, Step};
use crate::records::{StoredCounting, Write};

/// How long a count stays open, in seconds.
pub const COUNTING_SECONDS: u32 = 300;

/// A count while the players agree on the dead stones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counting {
    /// The stones marked dead, in board order.
    dead: Vec<Point>,
    /// The server's own verdict on this position.
    proposed: Vec<Point>,
    /// The sequence number of the event that last changed the marks.
    version: u32,
    /// Who has confirmed the marks as they are, by colour.
    confirmed: ByColor<bool>,
}

impl Counting {
    /// The stones marked dead, in board order.
    #[must_use]
    pub fn dead(&self) -> &[Point] {
        &self.dead
    }

    /// The server's own verdict, what the count began with.
    #[must_use]
    pub fn proposed(&self) -> &[Point] {
        &self.proposed
    }

    /// The version of the marks a confirmation names.
    #[must_use]
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Whether `color` has confirmed the marks as they are.
    #[must_use]
    pub fn confirmed(&self, color: Color) -> bool {
        self.confirmed[color]
    }

    pub(super) fn stored(&self) -> StoredCounting {
        StoredCounting {
            version: self.version,
            confirmed: [Color::Black, Color::White]
                .into_iter()
                .filter(|&c| self.confirmed(c))
                .collect(),
            dead: self.dead.clone(),
        }
    }

    /// The count again from what was stored, with the server's verdict on
    /// `game`'s position worked out afresh.
    pub(super) fn restored(stored: &StoredCounting, game: &Game) -> Counting {
        let mut confirmed = ByColor::both(false);
        for c in &stored.confirmed {
            confirmed[*c] = true;
        }
        Counting {
            dead: stored.dead.clone(),
            proposed: proposal(game),
            version: stored.version,
            confirmed,
        }
    }
}

/// The server's verdict on `game`'s position, in board order.
fn proposal(game: &Game) -> Vec<Point> {
    let mut proposed = game.dead_stones();
    board_order(&mut proposed);
    proposed
}

/// Points in board order, as marks are kept.
fn board_order(points: &mut Vec<Point>) {
    points.sort_unstable_by_key(|p| (p.row(), p.col()));
    points.dedup();
}

impl OnlineGame {
    /// Whether the game's rules settle dead stones by agreement.
    pub(super) fn counts_by_agreement(&self) -> bool {
        self.meta.rules.dead_stones == baduk::DeadStoneRule::Agreement
    }

    /// The open count, if the players are agreeing on dead stones now
    /// (a game that ends closes its count).
    #[must_use]
    pub fn counting(&self) -> Option<&Counting> {
        self.counting.as_ref()
    }

    /// Opens a count on `self` (just after the second pass), at event `seq`.
    pub(super) fn open_count(&mut self, now: i64) {
        let proposed = proposal(&self.game);
        self.seq += 1;
        self.counting = Some(Counting {
            dead: proposed.clone(),
            proposed,
            version: u32::try_from(self.seq).unwrap_or(u32::MAX),
            confirmed: ByColor::both(false),
        });
        self.computer_confirms();
        self.deadline = Some(now + i64::from(COUNTING_SECONDS) * 1000);
        self.draw_offer = None;
    }

    /// A computer seat, or the computer standing in for a player, confirms
    /// the marks when they are its own verdict.
    pub(super) fn computer_confirms(&mut self) {
        let Some(counting) = self.counting.as_mut() else {
            return;
        };
        for color in [Color::Black, Color::White] {
            let computer = self.meta.seat(color).ai.is_some() || self.stand_ins[color];
            if computer && counting.dead == counting.proposed {
                counting.confirmed[color] = true;
            }
        }
    }

    /// The player of `user_id` in a game whose count is open.
    fn counting_player(&self, user_id: &str) -> Result<(Color, &Counting), Refusal> {
        let color = self.player(user_id)?;
        if let Some(finished) = &self.finished {
            return Err(Refusal::GameOver {
                game_id: self.meta.id.to_string(),
                reason: finished.reason,
            });
        }
        match &self.counting {
            Some(counting) => Ok((color, counting)),
            None => Err(Refusal::NotCounting),
        }
    }

    /// A player marks the chain at (`column`, `row`) dead or alive. Marking
    /// it as it already is answers as before and changes nothing.
    ///
    /// # Errors
    /// When the caller is not a player, no count is open, or there is no
    /// stone at the point.
    pub fn mark_dead(
        &self,
        user_id: &str,
        column: u32,
        row: u32,
        dead: bool,
        now: i64,
    ) -> Result<Step, Refusal> {
        let point = self.point(column, row)?;
        let (color, counting) = self.counting_player(user_id)?;
        let board = self.game.board();
        let v = board.vertex(point);
        if board.color_at(v).is_none() {
            return Err(Refusal::NoStoneToMark { point });
        }
        let mut chain: Vec<Point> = board.chain_stones(v).map(|s| board.point(s)).collect();
        board_order(&mut chain);
        let mut marks = counting.dead.clone();
        if dead {
            marks.extend_from_slice(&chain);
            board_order(&mut marks);
        } else {
            marks.retain(|p| !chain.contains(p));
        }
        if marks == counting.dead {
            return Ok(Step::unchanged(None, now));
        }
        let mut next = self.clone();
        next.seq += 1;
        if let Some(c) = next.counting.as_mut() {
            c.dead = marks;
            c.version = u32::try_from(next.seq).unwrap_or(u32::MAX);
            c.confirmed = ByColor::both(false);
        }
        next.computer_confirms();
        let event = Event {
            seq: next.seq,
            at: now,
            kind: EventKind::DeadStonesMarked {
                by: color,
                stones: chain,
                dead,
            },
        };
        let write = next.standing(Write::default());
        Ok(Step::one_event(next, write, event))
    }

    /// A player confirms the marks of `version`; once both have, the game
    /// is counted with them. A confirmation repeated, or repeated after the
    /// count it ended, answers as before.
    ///
    /// # Errors
    /// When the caller is not a player, no count is open, or the marks
    /// have changed since `version`.
    pub fn confirm_count(&self, user_id: &str, version: u32, now: i64) -> Result<Step, Refusal> {
        if let Some(Finished {
            reason: EndReason::TwoPasses,
            ..
        }) = &self.finished
            && self.counts_by_agreement()
            && self.meta.color_of(user_id).is_some()
        {
            return Ok(Step::unchanged(None, now));
        }
        let (color, counting) = self.counting_player(user_id)?;
        if version != counting.version {
            return Err(Refusal::MarksChanged {
                asked: version,
                now: counting.version,
            });
        }
        if counting.confirmed(color) {
            return Ok(Step::unchanged(None, now));
        }
        let mut next = self.clone();
        next.seq += 1;
        let mut events = vec![Event {
            seq: next.seq,
            at: now,
            kind: EventKind::CountConfirmed(color),
        }];
        let mut both = false;
        if let Some(c) = next.counting.as_mut() {
            c.confirmed[color] = true;
            both = c.confirmed == ByColor::both(true);
        }
        let mut write = Write::default();
        if both {
            let (finish, finished) = next.end_now(EndReason::TwoPasses, Some(&counting.dead), now);
            write.finish = Some(finish);
            events.push(finished);
        }
        let write = next.standing(write);
        Ok(Step::change(next, write, events, now, both))
    }

    /// A player leaves the count opened after `move_count` moves and goes
    /// back to play. Asked again once play went on there, it answers as
    /// before.
    ///
    /// # Errors
    /// When the caller is not a player, no count is open, or the count open
    /// is not the one after `move_count` moves.
    pub fn resume_play(&self, user_id: &str, move_count: u32, now: i64) -> Result<Step, Refusal> {
        let played = self.game.move_number();
        if self.counting.is_none()
            && self.is_playing()
            && self.meta.color_of(user_id).is_some()
            && self.game.resumed_after().contains(&move_count)
        {
            return Ok(Step::unchanged(None, now));
        }
        let (color, _) = self.counting_player(user_id)?;
        if move_count as usize != played {
            return Err(Refusal::CountAtAnotherMove {
                played,
                asked: move_count,
            });
        }
        let mut next = self.clone();
        next.game.resume_play().map_err(Refusal::Resume)?;
        next.counting = None;
        next.deadline = (next.meta.seconds_per_move > 0)
            .then(|| now + i64::from(next.meta.seconds_per_move) * 1000);
        next.seq += 1;
        let event = Event {
            seq: next.seq,
            at: now,
            kind: EventKind::PlayResumed(color),
        };
        let write = next.standing(Write::default());
        Ok(Step::one_event(next, write, event))
    }

    /// The count's time ran out: the game is counted with the server's own
    /// verdict.
    pub(super) fn count_timed_out(&self, now: i64) -> Option<Step> {
        let counting = self.counting()?;
        let mut next = self.clone();
        let (finish, event) = next.end_now(EndReason::TwoPasses, Some(&counting.proposed), now);
        let write = next.standing(Write {
            finish: Some(finish),
            ..Write::default()
        });
        Some(Step::change(next, write, vec![event], now, true))
    }
}
