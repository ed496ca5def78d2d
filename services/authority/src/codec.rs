//! How the authority's values are written in its tables, in one place:
//! colours, end reasons, points and levels each have one text form, read
//! back into the same typed value.
//!
//! | value | stored as |
//! |---|---|
//! | colour | `B`, `W` |
//! | end reason | `two_passes`, `move_cap`, `resignation:<winner>`, `timeout:<winner>`, `draw_agreed` |
//! | point | its name on the board, `E5` |
//! | computer level | `easy`, `normal`, `hard` |

use baduk::{BoardSize, Color, EndReason, Point};
use baduk_ai::Level;

/// A stored value this server cannot read: the table holds something it
/// never writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {text:?} is not a stored {what}")]
pub struct Unreadable {
    what: &'static str,
    text: String,
}

fn unreadable(what: &'static str, text: &str) -> Unreadable {
    Unreadable {
        what,
        text: text.chars().take(80).collect(),
    }
}

#[must_use]
pub fn color_text(color: Color) -> &'static str {
    match color {
        Color::Black => "B",
        Color::White => "W",
    }
}

/// # Errors
/// When `text` is not `B` or `W`.
pub fn color(text: &str) -> Result<Color, Unreadable> {
    match text {
        "B" => Ok(Color::Black),
        "W" => Ok(Color::White),
        other => Err(unreadable("colour", other)),
    }
}

#[must_use]
pub fn end_reason_text(reason: EndReason) -> String {
    match reason {
        EndReason::TwoPasses => "two_passes".to_owned(),
        EndReason::MoveCap => "move_cap".to_owned(),
        EndReason::Resignation { winner } => format!("resignation:{}", color_text(winner)),
        EndReason::Timeout { winner } => format!("timeout:{}", color_text(winner)),
        EndReason::DrawAgreed => "draw_agreed".to_owned(),
    }
}

/// # Errors
/// When `text` is not one of the forms [`end_reason_text`] writes.
pub fn end_reason(text: &str) -> Result<EndReason, Unreadable> {
    let winner = |c: &str| color(c).map_err(|_| unreadable("end reason", text));
    match text.split_once(':') {
        None if text == "two_passes" => Ok(EndReason::TwoPasses),
        None if text == "move_cap" => Ok(EndReason::MoveCap),
        None if text == "draw_agreed" => Ok(EndReason::DrawAgreed),
        Some(("resignation", c)) => Ok(EndReason::Resignation { winner: winner(c)? }),
        Some(("timeout", c)) => Ok(EndReason::Timeout { winner: winner(c)? }),
        _ => Err(unreadable("end reason", text)),
    }
}

#[must_use]
pub fn point_text(point: Point) -> String {
    point.to_string()
}

/// # Errors
/// When `text` does not name a point of a board of `size`.
pub fn point(text: &str, size: BoardSize) -> Result<Point, Unreadable> {
    size.parse_point(text)
        .map_err(|_| unreadable("point", text))
}

#[must_use]
pub fn level_text(level: Level) -> &'static str {
    level.name()
}

/// # Errors
/// When `text` is not a level's name.
pub fn level(text: &str) -> Result<Level, Unreadable> {
    Level::parse(text).map_err(|_| unreadable("computer level", text))
}

#[cfg(test)]
mod tests {
    use baduk::{BoardSize, Color, EndReason};
    use baduk_ai::Level;

    #[test]
    fn every_end_reason_reads_back_as_written() {
        for reason in [
            EndReason::TwoPasses,
            EndReason::MoveCap,
            EndReason::DrawAgreed,
            EndReason::Resignation {
                winner: Color::Black,
            },
            EndReason::Resignation {
                winner: Color::White,
            },
            EndReason::Timeout {
                winner: Color::Black,
            },
            EndReason::Timeout {
                winner: Color::White,
            },
        ] {
            let text = super::end_reason_text(reason);
            assert_eq!(super::end_reason(&text), Ok(reason), "{text}");
        }
    }

    #[test]
    fn a_resignation_is_stored_with_the_winner() {
        let text = super::end_reason_text(EndReason::Resignation {
            winner: Color::White,
        });
        assert_eq!(text, "resignation:W");
    }

    #[test]
    fn text_the_server_never_writes_is_refused_with_what_it_was() {
        for bad in ["resign:B", "draw", "timeout:X", "timeout", ""] {
            let e = super::end_reason(bad).expect_err(bad);
            assert!(e.to_string().contains("end reason"), "{e}");
        }
        assert!(super::color("b").is_err());
        assert!(super::point("Z9", BoardSize::NINE).is_err());
        assert!(super::point("J10", BoardSize::NINE).is_err());
        assert!(super::level("expert").is_err());
    }

    #[test]
    fn colours_points_and_levels_read_back_as_written() {
        for c in [Color::Black, Color::White] {
            assert_eq!(super::color(super::color_text(c)), Ok(c));
        }
        let size = BoardSize::NINE;
        for p in size.all_points() {
            assert_eq!(super::point(&super::point_text(p), size), Ok(p));
        }
        for l in [Level::Easy, Level::Normal, Level::Hard] {
            assert_eq!(super::level(super::level_text(l)), Ok(l));
        }
    }
}
