//! Between the wire and the game, for what only the authority reads (ids,
//! sizes, komi and levels are checked in `ttakji_proto`): a request field
//! becomes a domain value here, once, or is refused with INVALID_ARGUMENT;
//! and a game's refusal becomes its gRPC status here, in one place.

use tonic::Status;
use ttakji_proto::v1 as pb;

use crate::game::{Refusal, RefusalKind};

/// A move clock from the wire: none (0), or up to an hour a move.
pub fn seconds_per_move(seconds: u32) -> Result<u32, Status> {
    if seconds > 3600 {
        return Err(Status::invalid_argument(format!(
            "{seconds} seconds a move is more than an hour"
        )));
    }
    Ok(seconds)
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
}
