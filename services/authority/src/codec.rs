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
//! | points | their names joined by commas, `C3,D4`; empty for none |
//! | an open count | `<version>|<colours that confirmed>|<points marked dead>`, `3|B|C3,D4` |
//! | where play went on | move counts joined by commas, `52,60`; empty for none |
//! | who is away | `<colour>:<since, Unix ms>` joined by commas, `W:1795910400000`; empty for none |
//! | seats the computer plays | their colours, `B`, `W`, `BW`; empty for none |
//! | where the computer thinks | `server`, `client` |

use baduk::{BoardSize, ByColor, Color, EndReason, Point};
use baduk_ai::Level;

use crate::records::{AiEngine, StoredCounting};

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
pub fn points_text(points: &[Point]) -> String {
    points
        .iter()
        .map(|p| point_text(*p))
        .collect::<Vec<_>>()
        .join(",")
}

/// # Errors
/// When a name in `text` is not a point of a board of `size`.
pub fn points(text: &str, size: BoardSize) -> Result<Vec<Point>, Unreadable> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',').map(|p| point(p, size)).collect()
}

#[must_use]
pub fn counting_text(counting: &StoredCounting) -> String {
    let confirmed: String = counting.confirmed.iter().map(|&c| color_text(c)).collect();
    format!(
        "{}|{confirmed}|{}",
        counting.version,
        points_text(&counting.dead)
    )
}

/// # Errors
/// When `text` is not what [`counting_text`] writes for a board of `size`.
pub fn counting(text: &str, size: BoardSize) -> Result<StoredCounting, Unreadable> {
    let bad = || unreadable("count", text);
    let mut parts = text.splitn(3, '|');
    let (Some(version), Some(confirmed), Some(dead)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let confirmed = confirmed
        .chars()
        .map(|c| color(c.encode_utf8(&mut [0; 4])))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad())?;
    Ok(StoredCounting {
        version: version.parse().map_err(|_| bad())?,
        confirmed,
        dead: points(dead, size).map_err(|_| bad())?,
    })
}

#[must_use]
pub fn move_counts_text(counts: &[u32]) -> String {
    counts
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// # Errors
/// When `text` is not move counts joined by commas.
pub fn move_counts(text: &str) -> Result<Vec<u32>, Unreadable> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|n| n.parse().map_err(|_| unreadable("move count", n)))
        .collect()
}

#[must_use]
pub fn away_text(away: &ByColor<Option<i64>>) -> String {
    away.iter()
        .filter_map(|(c, t)| t.map(|t| format!("{}:{t}", color_text(c))))
        .collect::<Vec<_>>()
        .join(",")
}

/// # Errors
/// When `text` is not what [`away_text`] writes.
pub fn away(text: &str) -> Result<ByColor<Option<i64>>, Unreadable> {
    let mut away = ByColor::both(None);
    if text.is_empty() {
        return Ok(away);
    }
    for part in text.split(',') {
        let bad = || unreadable("absence", part);
        let (c, t) = part.split_once(':').ok_or_else(bad)?;
        away[color(c).map_err(|_| bad())?] = Some(t.parse().map_err(|_| bad())?);
    }
    Ok(away)
}

#[must_use]
pub fn seats_text(seats: &ByColor<bool>) -> String {
    seats
        .iter()
        .filter(|&(_, &on)| on)
        .map(|(c, _)| color_text(c))
        .collect()
}

/// # Errors
/// When `text` is not what [`seats_text`] writes.
pub fn seats(text: &str) -> Result<ByColor<bool>, Unreadable> {
    let mut seats = ByColor::both(false);
    for c in text.chars() {
        let c = color(c.encode_utf8(&mut [0; 4])).map_err(|_| unreadable("seats", text))?;
        seats[c] = true;
    }
    Ok(seats)
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

#[must_use]
pub fn ai_engine_text(engine: AiEngine) -> &'static str {
    match engine {
        AiEngine::Server => "server",
        AiEngine::Client => "client",
    }
}

/// # Errors
/// When `text` is not `server` or `client`.
pub fn ai_engine(text: &str) -> Result<AiEngine, Unreadable> {
    match text {
        "server" => Ok(AiEngine::Server),
        "client" => Ok(AiEngine::Client),
        _ => Err(unreadable("computer engine", text)),
    }
}

#[cfg(test)]
mod tests {
    use baduk::{BoardSize, ByColor, Color, EndReason};
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

    #[test]
    fn an_open_count_and_where_play_went_on_read_back_as_written() {
        let size = BoardSize::new(19).expect("19 is a size");
        let counting = crate::records::StoredCounting {
            version: 3,
            confirmed: vec![Color::Black],
            dead: vec![
                size.parse_point("C3").expect("C3"),
                size.parse_point("T19").expect("T19"),
            ],
        };
        let text = super::counting_text(&counting);
        assert_eq!(text, "3|B|C3,T19");
        assert_eq!(super::counting(&text, size), Ok(counting));
        let none = crate::records::StoredCounting {
            version: 0,
            confirmed: Vec::new(),
            dead: Vec::new(),
        };
        assert_eq!(
            super::counting(&super::counting_text(&none), size),
            Ok(none)
        );
        assert_eq!(
            super::move_counts(&super::move_counts_text(&[52, 60])),
            Ok(vec![52, 60])
        );
        assert_eq!(super::move_counts(""), Ok(Vec::new()));
        for bad in ["", "3", "x|B|", "3|X|", "3|B|Z99"] {
            assert!(super::counting(bad, size).is_err(), "{bad}");
        }
        assert!(super::move_counts("5,,6").is_err());
        let away = ByColor::new(None, Some(1_795_910_400_000));
        assert_eq!(super::away_text(&away), "W:1795910400000");
        assert_eq!(super::away(&super::away_text(&away)), Ok(away));
        assert_eq!(super::away(""), Ok(ByColor::both(None)));
        assert!(super::away("X:1").is_err() && super::away("B:soon").is_err());
        for (black, white) in [(false, false), (true, false), (false, true), (true, true)] {
            let seats = ByColor::new(black, white);
            assert_eq!(super::seats(&super::seats_text(&seats)), Ok(seats));
        }
        assert!(super::seats("Q").is_err());
    }
}
