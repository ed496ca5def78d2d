//! What one action does to a game: its events, its write and its answer,
//! held apart from the game until they are committed.

use baduk::{Color, Point};

use super::OnlineGame;
use crate::records::{AiEngine, Write};

/// A move as an undo event names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedMove {
    pub number: usize,
    pub color: Color,
    /// `None` for a pass.
    pub point: Option<Point>,
    pub captured: Vec<Point>,
    /// Played by the computer standing in for an absent player.
    pub by_stand_in: bool,
}

/// What happened, as the game's numbered events say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    Started,
    /// Move `number` was played; after a pass that did not end the game the
    /// opponent is shown the count as it would be if they passed too.
    MovePlayed {
        number: usize,
        with_count: bool,
    },
    Finished,
    DrawOffered(Color),
    DrawDeclined(Color),
    /// The moves taken back, the last one first.
    MovesUndone(Vec<PlayedMove>),
    /// Two passes opened the count of a territory game, with the server's
    /// verdict as the marks.
    CountingStarted,
    /// A player marked a chain dead or alive.
    DeadStonesMarked {
        by: Color,
        stones: Vec<Point>,
        dead: bool,
    },
    /// A player confirmed the marks as they are.
    CountConfirmed(Color),
    /// A player left the count to settle the position on the board.
    PlayResumed(Color),
    /// The computer took the seat of a player away too long.
    StandInSeated(Color),
    /// The player came back and took the seat back.
    StandInLeft(Color),
    /// The player moved the computer's thinking.
    AiEngineChanged(AiEngine),
}

/// One numbered event. Its snapshot is the game after the whole step: the
/// move that ends a game already shows it over (the finished event that
/// follows says how), so no client is shown a turn that cannot be taken.
#[derive(Debug, Clone)]
pub struct Event {
    pub seq: u64,
    pub at: i64,
    pub kind: EventKind,
}

/// The effects of one accepted action: commit it once `write` is stored.
#[derive(Debug)]
#[must_use]
pub struct Step {
    /// The game after the step; `None` when nothing changes (a retry).
    pub(super) next: Option<Box<OnlineGame>>,
    pub(super) write: Option<Write>,
    pub(super) events: Vec<Event>,
    pub(super) played: Option<usize>,
    pub(super) at: i64,
    /// A move, pass, resignation, timeout or agreed draw (counted as an
    /// accepted action), as opposed to a draw offer or an undo.
    pub(super) is_action: bool,
}

impl Step {
    pub(super) fn unchanged(played: Option<usize>, at: i64) -> Step {
        Step {
            next: None,
            write: None,
            events: Vec::new(),
            played,
            at,
            is_action: false,
        }
    }

    /// A change to the game that answers no move: its write and events.
    /// `is_action` when it ends the game (a count agreed or run out).
    pub(super) fn change(
        next: OnlineGame,
        write: Write,
        events: Vec<Event>,
        at: i64,
        is_action: bool,
    ) -> Step {
        Step {
            next: Some(Box::new(next)),
            write: Some(write),
            events,
            played: None,
            at,
            is_action,
        }
    }

    /// A change to the game that is not a move: one event, no answer.
    pub(super) fn one_event(next: OnlineGame, write: Write, event: Event) -> Step {
        let at = event.at;
        Step::change(next, write, vec![event], at, false)
    }

    /// What to store before committing; `None` when nothing changes.
    #[must_use]
    pub fn write(&self) -> Option<&Write> {
        self.write.as_ref()
    }

    /// The events the step adds, in order.
    #[must_use]
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The game as it will be after the step, given the game before it.
    #[must_use]
    pub fn after<'a>(&'a self, before: &'a OnlineGame) -> &'a OnlineGame {
        self.next.as_deref().unwrap_or(before)
    }

    /// The number of the move the answer names (a move played or retried).
    #[must_use]
    pub fn played(&self) -> Option<usize> {
        self.played
    }

    /// The time the step was computed for.
    #[must_use]
    pub fn at(&self) -> i64 {
        self.at
    }

    /// Whether this is an accepted move, pass, resignation, timeout or draw.
    #[must_use]
    pub fn is_action(&self) -> bool {
        self.is_action
    }

    /// Whether the step ends a game that `before` was still playing.
    #[must_use]
    pub fn ends(&self, before: &OnlineGame) -> bool {
        before.is_playing() && !self.after(before).is_playing()
    }
}
