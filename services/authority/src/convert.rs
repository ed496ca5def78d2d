//! Between the wire and the game: every request field is turned into a
//! domain value here, once, and refused with INVALID_ARGUMENT when it is
//! not one; and a game's refusal becomes its gRPC status here, in one place.

use baduk::BoardSize;
use baduk_ai::Level;
use tonic::Status;
use ttakji_proto::v1 as pb;

use crate::game::{Refusal, RefusalKind};

/// The largest id a client may send.
pub const MAX_ID_LEN: usize = ttakji_platform::grpc::MAX_ID_LEN;

/// The board sizes people play.
pub fn board_size(size: u32) -> Result<BoardSize, Status> {
    match size {
        0 => Ok(BoardSize::NINE),
        9 | 13 | 19 => BoardSize::new(size).map_err(|e| Status::invalid_argument(e.to_string())),
        other => Err(Status::invalid_argument(format!(
            "board size {other} is not offered: use 9, 13 or 19"
        ))),
    }
}

/// The most komi a game may give: 50 points.
pub const MAX_KOMI_HALF_POINTS: i32 = 100;

/// Komi from the wire, in half points: none to 50 points.
pub fn komi(half: i32) -> Result<baduk::Komi, Status> {
    if !(0..=MAX_KOMI_HALF_POINTS).contains(&half) {
        return Err(Status::invalid_argument(format!(
            "komi of {} points is not offered: use 0 to 50 in half points",
            f64::from(half) / 2.0
        )));
    }
    baduk::Komi::from_half_points(half).map_err(|e| Status::invalid_argument(e.to_string()))
}

/// A move clock from the wire: none (0), or up to an hour a move.
pub fn seconds_per_move(seconds: u32) -> Result<u32, Status> {
    if seconds > 3600 {
        return Err(Status::invalid_argument(format!(
            "{seconds} seconds a move is more than an hour"
        )));
    }
    Ok(seconds)
}

/// A game id as a client sends it.
pub fn game_id(id: &str) -> Result<&str, Status> {
    ttakji_platform::grpc::id(id, "game_id")
}

/// Where the computer thinks, from the wire; UNSPECIFIED is the server.
pub fn ai_engine(raw: i32) -> Result<crate::records::AiEngine, Status> {
    use crate::records::AiEngine;
    match pb::AiEngine::try_from(raw) {
        Ok(pb::AiEngine::Unspecified | pb::AiEngine::Server) => Ok(AiEngine::Server),
        Ok(pb::AiEngine::Client) => Ok(AiEngine::Client),
        Err(_) => Err(Status::invalid_argument(format!(
            "ai_engine {raw} is not an engine: AI_ENGINE_SERVER or AI_ENGINE_CLIENT"
        ))),
    }
}

/// A level from the wire; UNSPECIFIED is Normal.
pub fn level(raw: i32) -> Result<Level, Status> {
    match pb::AiLevel::try_from(raw) {
        Ok(pb::AiLevel::Unspecified) | Ok(pb::AiLevel::Normal) => Ok(Level::Normal),
        Ok(pb::AiLevel::Easy) => Ok(Level::Easy),
        Ok(pb::AiLevel::Hard) => Ok(Level::Hard),
        Err(_) => Err(Status::invalid_argument(format!(
            "ai_level {raw} is not a level"
        ))),
    }
}

impl From<Refusal> for Status {
    fn from(refusal: Refusal) -> Status {
        let message = refusal.to_string();
        let code = match refusal.kind() {
            RefusalKind::InvalidArgument => tonic::Code::InvalidArgument,
            RefusalKind::PermissionDenied => tonic::Code::PermissionDenied,
            RefusalKind::FailedPrecondition => tonic::Code::FailedPrecondition,
        };
        let (reason, values) = refusal.public_reason();
        ttakji_platform::refusal::refused_with(code, reason, message, values)
    }
}

#[cfg(test)]
mod tests {
    use baduk::{Color, EndReason, IllegalMove, Point};
    use tonic::{Code, Status};

    use crate::game::Refusal;

    #[test]
    fn each_refusal_has_the_code_a_client_acts_on_and_says_what_was_wrong() {
        let cases = [
            (
                Refusal::OffBoard {
                    column: 9,
                    row: 0,
                    size: 9,
                },
                Code::InvalidArgument,
                "point (column 9, row 0) is off the 9x9 board",
            ),
            (
                Refusal::MoveNumberZero { expected: 4 },
                Code::InvalidArgument,
                "move_number is 0: the next move is number 4",
            ),
            (
                Refusal::NotAPlayer {
                    game_id: "g1".into(),
                },
                Code::PermissionDenied,
                "you are not a player in game g1",
            ),
            (
                Refusal::GameOver {
                    game_id: "g1".into(),
                    reason: EndReason::Resignation {
                        winner: Color::White,
                    },
                },
                Code::FailedPrecondition,
                "game g1 is over: Black resigned",
            ),
            (
                Refusal::NotYourTurn {
                    to_move: Color::White,
                },
                Code::FailedPrecondition,
                "it is White's turn",
            ),
            (
                Refusal::Illegal(IllegalMove::Occupied {
                    point: Point::new(4, 4),
                }),
                Code::FailedPrecondition,
                "E5 is occupied",
            ),
        ];
        for (refusal, code, message) in cases {
            let status = Status::from(refusal);
            assert_eq!(status.code(), code, "{message}");
            assert_eq!(status.message(), message);
        }
    }

    #[test]
    fn the_board_size_must_be_one_people_play() {
        assert_eq!(super::board_size(0).map(|s| s.get()).ok(), Some(9));
        assert_eq!(super::board_size(13).map(|s| s.get()).ok(), Some(13));
        let e = super::board_size(10).expect_err("10 is not offered");
        assert_eq!(e.code(), Code::InvalidArgument);
        assert!(e.message().contains("board size 10"), "{}", e.message());
    }
}
