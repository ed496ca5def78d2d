//! The Go (baduk) rules engine: board, moves, ko and superko, scoring, dead
//! stones and SGF.
//!
//! The crate does no I/O and nothing async, so it can be tested, fuzzed and
//! benchmarked alone. The fast [`Board`] (chains, liberties, captures,
//! Zobrist hash) is separate from the [`Game`] (history, superko, passes,
//! move cap, result): search uses the board, the server uses both.
//!
//! ```
//! use baduk::{Color, Game, Move, Rules};
//!
//! let mut game = Game::new(Rules::ttakji());
//! let d5 = game.rules().board_size.parse_point("D5")?;
//! game.play(Move::play(Color::Black, d5))?;
//! assert!(game.play(Move::play(Color::White, d5)).is_err()); // occupied
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod board;
mod doubt;
pub mod game;
pub mod life;
pub mod playout;
pub mod point;
pub mod rules;
pub mod score;
pub mod sgf;
pub mod shape;

pub use board::{Board, PackedBoard, SplitMix64, Stone, Vertex};
pub use game::{EndReason, Game, IllegalMove, Outcome, ResumeError, UndoError};
pub use life::{Doubt, DoubtfulGroup, LifeAndDeath, Preview, analyse};
pub use point::{
    Action, BoardSize, BoardSizeError, ByColor, Color, Move, ParseColorError, Point, PointError,
};
pub use rules::{DeadStoneRule, KoRule, Komi, Preset, Rules, RulesError, Scoring};
pub use score::{GameResult, HalfPoints, Owner, Score};
