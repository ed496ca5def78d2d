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

    /// The reason a client reads (`google.rpc.ErrorInfo`, listed in
    /// `docs/errors.md`), and the values its message names.
    #[must_use]
    pub fn public_reason(&self) -> (&'static str, Vec<(&'static str, String)>) {
        let at = |point: &Point| vec![("point", point.to_string())];
        let none = Vec::new;
        match self {
            Refusal::OffBoard { .. } => ("OFF_BOARD", none()),
            Refusal::NotAPlayer { .. } => ("NOT_A_PLAYER", none()),
            Refusal::MoveNumberZero { expected } => {
                ("MOVE_NUMBER_ZERO", vec![("expected", expected.to_string())])
            }
            Refusal::AlreadyPlayed { expected, .. } => (
                "MOVE_ALREADY_PLAYED",
                vec![("expected", expected.to_string())],
            ),
            Refusal::NotNext { expected, .. } => {
                ("MOVE_NOT_NEXT", vec![("expected", expected.to_string())])
            }
            Refusal::GameOver { .. } | Refusal::UndoAfterTheEnd { .. } => ("GAME_OVER", none()),
            Refusal::NotYourTurn { to_move } => {
                ("NOT_YOUR_TURN", vec![("to_move", to_move.to_string())])
            }
            Refusal::Illegal(e) => match e {
                IllegalMove::GameOver => ("GAME_OVER", none()),
                IllegalMove::NotYourTurn { to_move } => {
                    ("NOT_YOUR_TURN", vec![("to_move", to_move.to_string())])
                }
                IllegalMove::OffBoard { point, .. } => ("OFF_BOARD", at(point)),
                IllegalMove::Occupied { point } => ("ILLEGAL_MOVE_OCCUPIED", at(point)),
                IllegalMove::Suicide { point } => ("ILLEGAL_MOVE_SUICIDE", at(point)),
                IllegalMove::Ko { point } => ("ILLEGAL_MOVE_KO", at(point)),
                IllegalMove::Superko { point, .. } => ("ILLEGAL_MOVE_SUPERKO", at(point)),
            },
            Refusal::ComputerTakesNoDraws => ("COMPUTER_TAKES_NO_DRAWS", none()),
            Refusal::NoDrawOffer => ("NO_DRAW_OFFER", none()),
            Refusal::UndoOnlyAgainstComputer => ("UNDO_ONLY_AGAINST_COMPUTER", none()),
            Refusal::UndoAtAnotherMove { .. } => ("UNDO_AT_ANOTHER_MOVE", none()),
            Refusal::NothingToUndo | Refusal::Undo(UndoError::NothingToUndo) => {
                ("NOTHING_TO_UNDO", none())
            }
            Refusal::Undo(UndoError::Ended(_)) => ("GAME_OVER", none()),
            Refusal::Counting => ("COUNTING", none()),
            Refusal::NotCounting => ("NOT_COUNTING", none()),
            Refusal::NoStoneToMark { point } => ("NO_STONE_TO_MARK", at(point)),
            Refusal::MarksChanged { .. } => ("MARKS_CHANGED", none()),
            Refusal::CountAtAnotherMove { .. } => ("COUNT_AT_ANOTHER_MOVE", none()),
            Refusal::Resume(ResumeError::NotEnded) => ("NOT_COUNTING", none()),
            Refusal::Resume(ResumeError::Ended(_)) => ("GAME_OVER", none()),
            Refusal::NoComputerSeat { .. } => ("NO_COMPUTER_SEAT", none()),
            Refusal::ComputerThinksOnServer { .. } => ("COMPUTER_THINKS_ON_SERVER", none()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_names_a_reason_the_docs_list() {
        let docs =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/errors.md"))
                .expect("docs/errors.md is readable");
        let point = Point::new(4, 4);
        let id = || "g".to_owned();
        let all = [
            Refusal::OffBoard {
                column: 9,
                row: 0,
                size: 9,
            },
            Refusal::NotAPlayer { game_id: id() },
            Refusal::MoveNumberZero { expected: 3 },
            Refusal::AlreadyPlayed {
                number: 1,
                expected: 3,
            },
            Refusal::NotNext {
                number: 9,
                expected: 3,
            },
            Refusal::GameOver {
                game_id: id(),
                reason: EndReason::DrawAgreed,
            },
            Refusal::NotYourTurn {
                to_move: Color::White,
            },
            Refusal::Illegal(IllegalMove::Occupied { point }),
            Refusal::Illegal(IllegalMove::Suicide { point }),
            Refusal::Illegal(IllegalMove::Ko { point }),
            Refusal::Illegal(IllegalMove::Superko {
                point,
                repeats_move: 4,
            }),
            Refusal::Illegal(IllegalMove::GameOver),
            Refusal::Illegal(IllegalMove::OffBoard { point, size: 9 }),
            Refusal::Illegal(IllegalMove::NotYourTurn {
                to_move: Color::Black,
            }),
            Refusal::ComputerTakesNoDraws,
            Refusal::NoDrawOffer,
            Refusal::UndoOnlyAgainstComputer,
            Refusal::UndoAfterTheEnd { game_id: id() },
            Refusal::UndoAtAnotherMove {
                played: 4,
                asked: 3,
            },
            Refusal::NothingToUndo,
            Refusal::Undo(UndoError::NothingToUndo),
            Refusal::Undo(UndoError::Ended(EndReason::DrawAgreed)),
            Refusal::Counting,
            Refusal::NotCounting,
            Refusal::NoStoneToMark { point },
            Refusal::MarksChanged { asked: 1, now: 2 },
            Refusal::CountAtAnotherMove {
                played: 4,
                asked: 3,
            },
            Refusal::Resume(ResumeError::NotEnded),
            Refusal::Resume(ResumeError::Ended(EndReason::DrawAgreed)),
            Refusal::NoComputerSeat { game_id: id() },
            Refusal::ComputerThinksOnServer { game_id: id() },
        ];
        for refusal in &all {
            let (reason, values) = refusal.public_reason();
            assert!(
                docs.contains(&format!("| `{reason}` |")),
                "{refusal:?}: {reason} is not in docs/errors.md"
            );
            for (name, value) in values {
                assert!(!value.is_empty(), "{refusal:?}: {name}");
                assert!(
                    refusal.to_string().contains(&value) || name == "expected",
                    "{refusal:?}: the message names {name} {value}"
                );
            }
        }
        let occupied = Refusal::Illegal(IllegalMove::Occupied { point }).public_reason();
        assert_eq!(
            occupied,
            ("ILLEGAL_MOVE_OCCUPIED", vec![("point", "E5".to_owned())])
        );
    }
}
