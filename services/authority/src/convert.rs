//! Between the rules crate's values and the wire: every request field is
//! turned into a domain value here, once, and refused with INVALID_ARGUMENT
//! when it is not one.

use baduk::{BoardSize, Color, Game, GameResult, Point, Score};
use baduk_ai::Level;
use tonic::Status;
use ttakji_proto::v1 as pb;

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

/// A game id as a client sends it.
pub fn game_id(id: &str) -> Result<&str, Status> {
    ttakji_platform::grpc::id(id, "game_id")
}

/// A point of a board of `size`.
pub fn point(p: &pb::Point, size: BoardSize) -> Result<Point, Status> {
    let n = u32::from(size.get());
    if p.column >= n || p.row >= n {
        return Err(Status::invalid_argument(format!(
            "point (column {}, row {}) is off the {n}x{n} board",
            p.column, p.row
        )));
    }
    // Both are below 19 here.
    Ok(Point::new(p.column as u8, p.row as u8))
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

#[must_use]
pub fn level_to_pb(level: Level) -> pb::AiLevel {
    match level {
        Level::Easy => pb::AiLevel::Easy,
        Level::Normal => pb::AiLevel::Normal,
        Level::Hard => pb::AiLevel::Hard,
    }
}

#[must_use]
pub fn color_to_pb(color: Color) -> pb::Color {
    match color {
        Color::Black => pb::Color::Black,
        Color::White => pb::Color::White,
    }
}

#[must_use]
pub fn point_to_pb(p: Point) -> pb::Point {
    pb::Point {
        column: u32::from(p.col()),
        row: u32::from(p.row()),
    }
}

/// Komi as the wire carries it: points, a multiple of 0.5.
#[must_use]
pub fn komi_points(half: i32) -> f64 {
    f64::from(half) / 2.0
}

/// A count as the wire carries it.
#[must_use]
pub fn count_to_pb(score: &Score) -> pb::Count {
    let result = score.result();
    let (winner, margin_half) = match result {
        GameResult::Counted {
            winner,
            margin_half,
        } => (winner, margin_half),
        _ => (None, 0),
    };
    pb::Count {
        black_points: score.black,
        white_points: score.white,
        komi: komi_points(score.komi.half_points()),
        dead_stones: score.dead.iter().copied().map(point_to_pb).collect(),
        winner: winner.map_or(pb::Color::Unspecified, color_to_pb) as i32,
        margin: f64::from(margin_half) / 2.0,
        summary: score.preview(),
    }
}

/// The end reason as the wire carries it.
#[must_use]
pub fn end_reason_to_pb(reason: baduk::EndReason) -> pb::EndReason {
    match reason {
        baduk::EndReason::TwoPasses => pb::EndReason::TwoPasses,
        baduk::EndReason::MoveCap => pb::EndReason::MoveCap,
        baduk::EndReason::Resignation { .. } => pb::EndReason::Resignation,
        baduk::EndReason::Timeout { .. } => pb::EndReason::Timeout,
        baduk::EndReason::DrawAgreed => pb::EndReason::DrawAgreed,
    }
}

/// The stones on the board, row by row from the bottom-left.
#[must_use]
pub fn stones(game: &Game) -> Vec<i32> {
    let size = game.rules().board_size;
    size.all_points()
        .map(|p| match game.board().get(p).color() {
            Some(c) => color_to_pb(c) as i32,
            None => pb::Color::Unspecified as i32,
        })
        .collect()
}
