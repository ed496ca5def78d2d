//! What a game is apart from its moves, and what one accepted action
//! writes: plain typed values shared by the game's rules and the store.

use baduk::{ByColor, Color, EndReason, GameResult, Point, Rules};
use baduk_ai::Level;
use ttakji_proto::GameId;

/// A seat at the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    /// `None` for the computer.
    pub user_id: Option<String>,
    pub name: String,
    pub ai: Option<Level>,
}

/// Where the computer thinks in a game against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AiEngine {
    /// This authority thinks for the computer's seat.
    #[default]
    Server,
    /// The player's page or app thinks, and its player submits the
    /// computer's moves (`for_computer`), checked like any other.
    Client,
}

/// What a game is apart from its moves.
#[derive(Debug, Clone)]
pub struct GameMeta {
    pub id: GameId,
    pub rules: Rules,
    pub black: Seat,
    pub white: Seat,
    /// The move clock; 0 for none.
    pub seconds_per_move: u32,
    pub created_at: i64,
    /// Ranked games change ratings.
    pub ranked: bool,
    /// A rematch keeps the colours instead of swapping who plays Black.
    pub keep_colors: bool,
    /// The computer plays the seat of a player who is away (seed 001).
    pub stand_in: bool,
    /// Where the computer's seat, if any, thinks; a player may move it.
    pub ai_engine: AiEngine,
    /// The ladder rating the game was paired at (the lower of its two
    /// players'), which orders the live games list; 0 when not paired by
    /// rating.
    pub ladder_rating: u32,
}

impl GameMeta {
    #[must_use]
    pub fn seat(&self, color: Color) -> &Seat {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }

    /// The colour `user_id` plays, if any.
    #[must_use]
    pub fn color_of(&self, user_id: &str) -> Option<Color> {
        [Color::Black, Color::White]
            .into_iter()
            .find(|&c| self.seat(c).user_id.as_deref() == Some(user_id))
    }

    #[must_use]
    pub fn is_ai_game(&self) -> bool {
        self.black.ai.is_some() || self.white.ai.is_some()
    }

    /// The computer's level, if a seat is the computer's.
    #[must_use]
    pub fn ai_level(&self) -> Option<Level> {
        self.black.ai.or(self.white.ai)
    }
}

/// A game as its row stores it, beside its moves.
#[derive(Debug, Clone)]
pub struct StoredGame {
    pub meta: GameMeta,
    /// How the game ended, for the ends that the moves alone do not show
    /// (resignation, timeout, agreed draw); counted ends are replayed.
    pub end_reason: Option<EndReason>,
    /// When the side to move runs out of time (Unix ms); `None` without a clock.
    pub deadline_at: Option<i64>,
    /// The side whose draw offer stands.
    pub draw_offered_by: Option<Color>,
    /// When a finished game ended.
    pub finished_at: Option<i64>,
    /// The sequence number of the game's last stored event.
    pub last_seq: u64,
    /// The open count of a territory game, while its players mark the
    /// dead stones.
    pub counting: Option<StoredCounting>,
    /// The move counts after which play went back on past two passes.
    pub resumed_after: Vec<u32>,
    /// The stones a finished game's count took off as dead.
    pub dead_stones: Vec<Point>,
    /// Since when each seat's player has been away (Unix ms), by colour.
    pub away: ByColor<Option<i64>>,
    /// The seats the computer plays now for a player who is away.
    pub stand_ins: ByColor<bool>,
}

/// A territory game's count while its players agree on the dead stones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCounting {
    /// Raised by every change of the marks.
    pub version: u32,
    /// Who has confirmed the marks as they are.
    pub confirmed: Vec<Color>,
    /// The stones marked dead, in board order.
    pub dead: Vec<Point>,
}

/// A stored move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredMove {
    /// 1 for the first move.
    pub number: usize,
    pub color: Color,
    /// `None` for a pass.
    pub point: Option<Point>,
    /// Played by the computer standing in for an absent player.
    pub by_stand_in: bool,
}

/// How a finished game ended and how it was counted, written with its
/// last event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finish {
    pub reason: EndReason,
    pub result: GameResult,
    /// Black's and White's points before komi, for a counted game.
    pub points: Option<(u32, u32)>,
    /// The stones the count took off as dead.
    pub dead_stones: Vec<Point>,
    pub sgf: String,
}

/// What one accepted action writes, beside its events, in one transaction.
/// The game's standing state (deadline, draw offer, open count, where play
/// went on) is written whole by every write, so no write can leave a part
/// of it stale.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Write {
    /// The clock's deadline (or the count's) and the standing draw offer
    /// after the action.
    pub deadline_at: Option<i64>,
    pub draw_offered_by: Option<Color>,
    /// The open count after the action; `None` when none is open.
    pub counting: Option<StoredCounting>,
    /// The move counts after which play went back on past two passes.
    pub resumed_after: Vec<u32>,
    /// Since when each seat's player has been away, and the seats the
    /// computer plays now.
    pub away: ByColor<Option<i64>>,
    pub stand_ins: ByColor<bool>,
    /// Where the computer thinks.
    pub ai_engine: AiEngine,
    pub insert_move: Option<StoredMove>,
    /// Moves numbered above this are deleted (an undo).
    pub truncate_after: Option<usize>,
    pub finish: Option<Finish>,
}

impl Write {
    /// How many moves the game has after this write, when it changes them.
    #[must_use]
    pub fn move_count(&self) -> Option<usize> {
        self.insert_move
            .as_ref()
            .map(|m| m.number)
            .or(self.truncate_after)
    }
}

/// An event as stored: its sequence number and its encoded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub seq: u64,
    pub payload: Vec<u8>,
}
