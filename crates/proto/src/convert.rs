//! Between the rules' values and the wire's, written once for every
//! service: colours, points, computer levels, how a game is counted and
//! why it ended; and, from the wire, the board sizes, komi and levels a
//! request may ask for, refused with INVALID_ARGUMENT when it may not.

use baduk::{BoardSize, Color, EndReason, Komi, Point, Scoring};
use baduk_ai::Level;
use tonic::Status;

use crate::v1 as pb;

impl From<Color> for pb::Color {
    fn from(color: Color) -> pb::Color {
        match color {
            Color::Black => pb::Color::Black,
            Color::White => pb::Color::White,
        }
    }
}

/// A colour from the wire: `None` for UNSPECIFIED or an unknown value.
#[must_use]
pub fn color(raw: i32) -> Option<Color> {
    match pb::Color::try_from(raw) {
        Ok(pb::Color::Black) => Some(Color::Black),
        Ok(pb::Color::White) => Some(Color::White),
        Ok(pb::Color::Unspecified) | Err(_) => None,
    }
}

impl From<Point> for pb::Point {
    fn from(p: Point) -> pb::Point {
        pb::Point {
            column: u32::from(p.col()),
            row: u32::from(p.row()),
        }
    }
}

/// A point from the wire, if it is on `size`'s board.
#[must_use]
pub fn point(p: &pb::Point, size: BoardSize) -> Option<Point> {
    let (column, row) = (u8::try_from(p.column).ok()?, u8::try_from(p.row).ok()?);
    let point = Point::new(column, row);
    size.contains(point).then_some(point)
}

impl From<Level> for pb::AiLevel {
    fn from(level: Level) -> pb::AiLevel {
        match level {
            Level::Easy => pb::AiLevel::Easy,
            Level::Normal => pb::AiLevel::Normal,
            Level::Hard => pb::AiLevel::Hard,
        }
    }
}

/// A level from the wire; UNSPECIFIED is Normal.
///
/// # Errors
/// INVALID_ARGUMENT for a value that is no level.
pub fn level(raw: i32) -> Result<Level, Status> {
    match pb::AiLevel::try_from(raw) {
        Ok(pb::AiLevel::Unspecified | pb::AiLevel::Normal) => Ok(Level::Normal),
        Ok(pb::AiLevel::Easy) => Ok(Level::Easy),
        Ok(pb::AiLevel::Hard) => Ok(Level::Hard),
        Err(_) => Err(Status::invalid_argument(format!(
            "ai_level {raw} is not a level"
        ))),
    }
}

impl From<EndReason> for pb::EndReason {
    fn from(reason: EndReason) -> pb::EndReason {
        match reason {
            EndReason::TwoPasses => pb::EndReason::TwoPasses,
            EndReason::MoveCap => pb::EndReason::MoveCap,
            EndReason::Resignation { .. } => pb::EndReason::Resignation,
            EndReason::Timeout { .. } => pb::EndReason::Timeout,
            EndReason::DrawAgreed => pb::EndReason::DrawAgreed,
        }
    }
}

impl From<Scoring> for pb::Scoring {
    fn from(scoring: Scoring) -> pb::Scoring {
        match scoring {
            Scoring::Area => pb::Scoring::Area,
            Scoring::Territory => pb::Scoring::Territory,
        }
    }
}

/// The board sizes people play; 0 (unset) is 9×9.
///
/// # Errors
/// INVALID_ARGUMENT for any other size.
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
///
/// # Errors
/// INVALID_ARGUMENT outside that.
pub fn komi(half: i32) -> Result<Komi, Status> {
    if !(0..=MAX_KOMI_HALF_POINTS).contains(&half) {
        return Err(Status::invalid_argument(format!(
            "komi of {} points is not offered: use 0 to 50 in half points",
            f64::from(half) / 2.0
        )));
    }
    Komi::from_half_points(half).map_err(|e| Status::invalid_argument(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_go_to_the_wire_and_back() {
        for c in [Color::Black, Color::White] {
            assert_eq!(color(pb::Color::from(c) as i32), Some(c));
        }
        assert_eq!(color(pb::Color::Unspecified as i32), None);
        assert_eq!(color(7), None);
        for l in Level::ALL {
            assert_eq!(level(pb::AiLevel::from(l) as i32).ok(), Some(l));
        }
        assert_eq!(level(0).ok(), Some(Level::Normal));
        assert!(level(9).is_err_and(|s| s.message() == "ai_level 9 is not a level"));
        let size = BoardSize::NINE;
        let e5 = size.parse_point("E5").expect("E5");
        assert_eq!(point(&pb::Point::from(e5), size), Some(e5));
        let off = pb::Point { column: 9, row: 0 };
        assert_eq!(point(&off, size), None);
        let huge = pb::Point {
            column: 300,
            row: 0,
        };
        assert_eq!(point(&huge, size), None);
    }

    #[test]
    fn only_the_offered_sizes_and_komi_pass() {
        assert_eq!(board_size(0).ok(), Some(BoardSize::NINE));
        assert_eq!(board_size(19).map(BoardSize::get).ok(), Some(19));
        let refused = board_size(11).expect_err("11");
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert_eq!(
            refused.message(),
            "board size 11 is not offered: use 9, 13 or 19"
        );
        assert_eq!(komi(13).map(|k| k.half_points()).ok(), Some(13));
        assert!(komi(101).is_err_and(|s| s.message().starts_with("komi of 50.5 points")));
        assert!(komi(-1).is_err());
    }
}
