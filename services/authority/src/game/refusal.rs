//! Why the game refused an action: one typed reason per rule, each saying
//! what was wrong and with what value. The game is unchanged after any.

use baduk::{Color, EndReason, IllegalMove, Point, ResumeError, UndoError};

/// Why an action was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("point (column {column}, row {row}) is off the {size}x{size} board")]
    OffBoard { column: u32, row: u32, size: u8 },
    #[error("you are not a player in game {game_id}")]
    NotAPlayer { game_id: String },
    #[error("move_number is 0: the next move is number {expected}")]
    MoveNumberZero { expected: usize },
    #[error("move {number} has already been played; the next move is number {expected}")]
    AlreadyPlayed { number: usize, expected: usize },
    #[error("move {number} is not next: the next move is number {expected}")]
    NotNext { number: usize, expected: usize },
    #[error("game {game_id} is over: {reason}")]
    GameOver { game_id: String, reason: EndReason },
    #[error("it is {to_move}'s turn")]
    NotYourTurn { to_move: Color },
    /// The rules engine refused the move.
    #[error("{0}")]
    Illegal(IllegalMove),
    #[error("the computer does not take draw offers: resign or play on")]
    ComputerTakesNoDraws,
    #[error("there is no draw offer from your opponent to answer")]
    NoDrawOffer,
    #[error("undo is offered only in games against the computer")]
    UndoOnlyAgainstComputer,
    #[error("game {game_id} is over")]
    UndoAfterTheEnd { game_id: String },
    #[error("the game is at move {played}, not {asked}: look again before undoing")]
    UndoAtAnotherMove { played: usize, asked: u32 },
    #[error("you have no move to undo")]
    NothingToUndo,
    #[error("{0}")]
    Undo(UndoError),
    #[error("the stones are being counted: mark the dead stones and confirm, or go back to play")]
    Counting,
    #[error("no count is open: the stones are counted after two passes, under territory scoring")]
    NotCounting,
    #[error("there is no stone at {point} to mark")]
    NoStoneToMark { point: Point },
    #[error("the marks changed since version {asked} (now {now}): look again before confirming")]
    MarksChanged { asked: u32, now: u32 },
    #[error("the count open is after move {played}, not {asked}: look again")]
    CountAtAnotherMove { played: usize, asked: u32 },
    #[error("{0}")]
    Resume(ResumeError),
    #[error(
        "game {game_id} has no computer seat: for_computer is only for games against the computer"
    )]
    NoComputerSeat { game_id: String },
    #[error(
        "the computer thinks on the server in game {game_id}: its moves are the server's, not for_computer"
    )]
    ComputerThinksOnServer { game_id: String },
}

/// Which kind of mistake a refusal is, as a client should read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// The request itself is malformed.
    InvalidArgument,
    /// The caller may not act in this game.
    PermissionDenied,
    /// A well-formed request the game's present state does not allow.
    FailedPrecondition,
}

impl Refusal {
    #[must_use]
    pub fn kind(&self) -> RefusalKind {
        match self {
            Refusal::OffBoard { .. } | Refusal::MoveNumberZero { .. } => {
                RefusalKind::InvalidArgument
            }
            Refusal::NotAPlayer { .. } => RefusalKind::PermissionDenied,
            _ => RefusalKind::FailedPrecondition,
        }
    }

    /// The `reason` label of `ttakji_moves_refused_total`.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::OffBoard { .. } => "off_board",
            Refusal::NotAPlayer { .. } => "not_a_player",
            Refusal::MoveNumberZero { .. } => "bad_number",
            Refusal::AlreadyPlayed { .. } | Refusal::NotNext { .. } => "stale",
            Refusal::GameOver { .. } | Refusal::UndoAfterTheEnd { .. } => "game_over",
            Refusal::NotYourTurn { .. } => "not_your_turn",
            Refusal::Illegal(e) => match e {
                IllegalMove::GameOver => "game_over",
                IllegalMove::NotYourTurn { .. } => "not_your_turn",
                IllegalMove::OffBoard { .. } => "off_board",
                IllegalMove::Occupied { .. } => "occupied",
                IllegalMove::Suicide { .. } => "suicide",
                IllegalMove::Ko { .. } => "ko",
                IllegalMove::Superko { .. } => "superko",
            },
            Refusal::ComputerTakesNoDraws | Refusal::NoDrawOffer => "no_draw",
            Refusal::UndoOnlyAgainstComputer
            | Refusal::UndoAtAnotherMove { .. }
            | Refusal::NothingToUndo
            | Refusal::Undo(_) => "no_undo",
            Refusal::Counting => "counting",
            Refusal::NotCounting
            | Refusal::NoStoneToMark { .. }
            | Refusal::MarksChanged { .. }
            | Refusal::CountAtAnotherMove { .. }
            | Refusal::Resume(_) => "count",
            Refusal::NoComputerSeat { .. } | Refusal::ComputerThinksOnServer { .. } => {
                "not_the_computers"
            }
        }
    }
}
