//! The computer stands in for a player who is away (seed 001, "If someone
//! drops mid-game"), at tables that allow it.
//!
//! - A gateway reports when a player's last connection to the game closes
//!   (or their gateway falls silent) and when they connect again; any action
//!   of the player counts as being here too.
//! - A player away for longer than the grace period has their seat played
//!   by the computer, at [`STAND_IN_LEVEL`], from then on: it moves when the
//!   seat is to move, and confirms a count whose marks are its own verdict.
//!   It never resigns for the player: where it would, it passes.
//! - Only while the opponent is here: a game both players have left waits
//!   for them (the computer does not finish it against itself), and the
//!   seat of the one still away is taken once the other comes back.
//! - The player takes the seat back by coming back; a decision the computer
//!   was making for the seat is dropped.
//! - The moves it played are marked in the record (`by_stand_in`, and a
//!   comment in the SGF).
//! - Ranked games never have a stand-in: seed 000's rule holds there, the
//!   clock runs and running out loses. The clock runs for the computer too.

use baduk::Color;
use baduk_ai::Level;

use super::{Event, EventKind, OnlineGame, Refusal, Step};
use crate::records::Write;

/// How the computer plays a seat it stands in for.
pub const STAND_IN_LEVEL: Level = Level::Normal;

impl OnlineGame {
    /// Whether the computer plays `color`'s seat now, for a player who is away.
    #[must_use]
    pub fn stood_in(&self, color: Color) -> bool {
        self.is_playing() && self.stand_ins[color]
    }

    /// Whether move `number` (from 1) was played by the computer standing in.
    #[must_use]
    pub fn by_stand_in(&self, number: usize) -> bool {
        u32::try_from(number).is_ok_and(|n| self.stand_in_moves.contains(&n))
    }

    /// Whether `user_id` is a player whose presence would change the game
    /// if they were reported here.
    #[must_use]
    pub fn missed(&self, user_id: &str) -> bool {
        self.meta.stand_in
            && self.is_playing()
            && self
                .meta
                .color_of(user_id)
                .is_some_and(|c| self.away[c].is_some() || self.stand_ins[c])
    }

    /// A player's connection as a gateway reports it: away from `now`, or
    /// here again (which gives the seat back if the computer holds it).
    /// Changes nothing at tables without a stand-in, or after the end.
    ///
    /// # Errors
    /// When `user_id` is not a player of the game.
    pub fn presence(&self, user_id: &str, connected: bool, now: i64) -> Result<Step, Refusal> {
        let color = self.player(user_id)?;
        if !self.meta.stand_in || !self.is_playing() {
            return Ok(Step::unchanged(None, now));
        }
        let mut next = self.clone();
        let mut events = Vec::new();
        if connected {
            next.away[color] = None;
            if next.stand_ins[color] {
                next.stand_ins[color] = false;
                // A decision the computer was making for the seat is dropped.
                next.generation += 1;
                next.seq += 1;
                events.push(Event {
                    seq: next.seq,
                    at: now,
                    kind: EventKind::StandInLeft(color),
                });
            }
        } else if next.away[color].is_none() {
            next.away[color] = Some(now);
        }
        if next.away == self.away && next.stand_ins == self.stand_ins {
            return Ok(Step::unchanged(None, now));
        }
        let write = next.standing(Write::default());
        Ok(Step::change(next, write, events, now, false))
    }

    /// When the computer is next due to take a seat: a player away for
    /// `grace_ms` whose seat it does not hold yet.
    #[must_use]
    pub fn stand_in_due(&self, grace_ms: i64) -> Option<i64> {
        if !self.meta.stand_in || !self.is_playing() {
            return None;
        }
        [Color::Black, Color::White]
            .into_iter()
            .filter(|&c| self.may_stand_in(c))
            .filter_map(|c| self.away[c].map(|t| t.saturating_add(grace_ms)))
            .min()
    }

    /// Whether the computer may take `color`'s seat: a person's seat it does
    /// not hold yet, with the opponent here to play against.
    fn may_stand_in(&self, color: Color) -> bool {
        !self.stand_ins[color]
            && self.meta.seat(color).ai.is_none()
            && self.away[color.opponent()].is_none()
    }

    /// The computer takes the seats whose players have been away for
    /// `grace_ms` at `now`; `None` when none is due.
    #[must_use]
    pub fn seat_stand_ins(&self, now: i64, grace_ms: i64) -> Option<Step> {
        if self.stand_in_due(grace_ms).is_none_or(|due| due > now) {
            return None;
        }
        let mut next = self.clone();
        let mut events = Vec::new();
        for color in [Color::Black, Color::White] {
            let due = self.away[color].is_some_and(|t| t.saturating_add(grace_ms) <= now);
            if due && self.may_stand_in(color) {
                next.stand_ins[color] = true;
                next.seq += 1;
                events.push(Event {
                    seq: next.seq,
                    at: now,
                    kind: EventKind::StandInSeated(color),
                });
            }
        }
        next.computer_confirms();
        let write = next.standing(Write::default());
        Some(Step::change(next, write, events, now, false))
    }
}
