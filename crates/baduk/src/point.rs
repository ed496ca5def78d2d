//! Colours, board sizes, points and moves, named as players name them.

use std::fmt;

use thiserror::Error;

/// A player's colour. Black moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    Black,
    White,
}

impl Color {
    /// The other player.
    #[must_use]
    pub const fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// 0 for Black, 1 for White: a position in tables flattened by colour.
    /// Data kept for each colour is a [`ByColor`].
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Color::Black => 0,
            Color::White => 1,
        }
    }

    /// The SGF / GTP letter: `B` or `W`.
    #[must_use]
    pub const fn letter(self) -> char {
        match self {
            Color::Black => 'B',
            Color::White => 'W',
        }
    }

    /// Parses `b`, `black`, `w`, `white` in any case (GTP colours).
    pub fn parse(s: &str) -> Result<Color, ParseColorError> {
        match s.to_ascii_lowercase().as_str() {
            "b" | "black" => Ok(Color::Black),
            "w" | "white" => Ok(Color::White),
            _ => Err(ParseColorError(s.to_owned())),
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Color::Black => "Black",
            Color::White => "White",
        })
    }
}

/// One value for each colour: Black's and White's.
///
/// Indexed by [`Color`], so per-colour data is never an array read by a
/// number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ByColor<T> {
    pub black: T,
    pub white: T,
}

impl<T> ByColor<T> {
    /// Black's value and White's.
    #[must_use]
    pub const fn new(black: T, white: T) -> ByColor<T> {
        ByColor { black, white }
    }

    /// Each colour's value from `f`, Black's first.
    #[must_use]
    pub fn from_fn(mut f: impl FnMut(Color) -> T) -> ByColor<T> {
        let black = f(Color::Black);
        ByColor {
            black,
            white: f(Color::White),
        }
    }

    /// The colours with their values, Black first.
    pub fn iter(&self) -> impl Iterator<Item = (Color, &T)> {
        [(Color::Black, &self.black), (Color::White, &self.white)].into_iter()
    }
}

impl<T: Copy> ByColor<T> {
    /// The same value for both colours.
    #[must_use]
    pub const fn both(value: T) -> ByColor<T> {
        ByColor {
            black: value,
            white: value,
        }
    }
}

impl<T> std::ops::Index<Color> for ByColor<T> {
    type Output = T;

    fn index(&self, color: Color) -> &T {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }
}

impl<T> std::ops::IndexMut<Color> for ByColor<T> {
    fn index_mut(&mut self, color: Color) -> &mut T {
        match color {
            Color::Black => &mut self.black,
            Color::White => &mut self.white,
        }
    }
}

/// A colour that is neither `b`/`black` nor `w`/`white`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("`{0}` is not a colour (expected black or white)")]
pub struct ParseColorError(pub String);

/// The side length of a square board, from 2 to 19.
///
/// 9, 13 and 19 are the sizes people play; tiny boards keep tests short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BoardSize(u8);

impl BoardSize {
    /// The smallest board the engine accepts.
    pub const MIN: u8 = 2;
    /// The largest board the engine accepts.
    pub const MAX: u8 = 19;
    /// The 9×9 board Ttakji is played on.
    pub const NINE: BoardSize = BoardSize(9);
    /// 13×13.
    pub const THIRTEEN: BoardSize = BoardSize(13);
    /// 19×19.
    pub const NINETEEN: BoardSize = BoardSize(19);

    /// A board size, or an error naming the accepted range.
    pub fn new(size: u32) -> Result<BoardSize, BoardSizeError> {
        if (u32::from(Self::MIN)..=u32::from(Self::MAX)).contains(&size) {
            // The range check above makes the narrowing exact.
            Ok(BoardSize(size as u8))
        } else {
            Err(BoardSizeError(size))
        }
    }

    /// Lines on one side.
    #[must_use]
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Number of points on the board (size squared).
    #[must_use]
    pub const fn points(self) -> usize {
        self.0 as usize * self.0 as usize
    }

    /// Whether `p` lies on a board of this size.
    #[must_use]
    pub const fn contains(self, p: Point) -> bool {
        p.col < self.0 && p.row < self.0
    }

    /// Every point of the board, row by row from A1.
    pub fn all_points(self) -> impl Iterator<Item = Point> {
        let n = self.0;
        (0..n).flat_map(move |row| (0..n).map(move |col| Point { col, row }))
    }

    /// Parses a point as players write it (`D5`, `d5`), checking it is on this board.
    pub fn parse_point(self, s: &str) -> Result<Point, PointError> {
        let p: Point = s.parse()?;
        if self.contains(p) {
            Ok(p)
        } else {
            Err(PointError::OffBoard {
                text: s.to_owned(),
                size: self.0,
            })
        }
    }
}

impl Default for BoardSize {
    fn default() -> Self {
        BoardSize::NINE
    }
}

impl fmt::Display for BoardSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{0}x{0}", self.0)
    }
}

/// A board size outside 2..=19.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("board size {0} is not supported (from 2 to 19)")]
pub struct BoardSizeError(pub u32);

/// Column letters: A to Z without I, as on every Go board and in GTP.
const COLUMNS: &[u8; 25] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

/// An intersection: column from the left (A = 0), row from the bottom (1 = 0).
///
/// A point does not know the board it is on; [`BoardSize::contains`] and
/// [`BoardSize::parse_point`] check it against one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    col: u8,
    row: u8,
}

impl Point {
    /// The point at 0-based column and row (row 0 is the bottom line, "1").
    #[must_use]
    pub const fn new(col: u8, row: u8) -> Point {
        Point { col, row }
    }

    /// 0-based column, A = 0 (I is skipped in the name, not in the index).
    #[must_use]
    pub const fn col(self) -> u8 {
        self.col
    }

    /// 0-based row from the bottom: the point named `D1` has row 0.
    #[must_use]
    pub const fn row(self) -> u8 {
        self.row
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match COLUMNS.get(usize::from(self.col)) {
            Some(&letter) => write!(f, "{}{}", letter as char, u32::from(self.row) + 1),
            None => write!(f, "?{}-{}", self.col, u32::from(self.row) + 1),
        }
    }
}

impl std::str::FromStr for Point {
    type Err = PointError;

    /// Parses `D5` (any case) on a board of up to 25 lines; use
    /// [`BoardSize::parse_point`] to also check a board's edge.
    fn from_str(s: &str) -> Result<Point, PointError> {
        let bad = |reason: &'static str| PointError::Malformed {
            text: s.to_owned(),
            reason,
        };
        let mut chars = s.chars();
        let letter = chars.next().ok_or_else(|| bad("it is empty"))?;
        let letter = letter.to_ascii_uppercase();
        if letter == 'I' {
            return Err(bad("there is no column I on a Go board"));
        }
        let col = COLUMNS
            .iter()
            .position(|&c| c as char == letter)
            .ok_or_else(|| bad("the column must be a letter from A to Z, without I"))?;
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the row must be a number from 1"));
        }
        let row: u8 = digits
            .parse()
            .map_err(|_| bad("the row must be a number from 1"))?;
        if row == 0 {
            return Err(bad("rows are numbered from 1"));
        }
        if row > 25 {
            return Err(bad("the row is larger than any board"));
        }
        // `col` indexes a 25-letter table and `row` is at most 25.
        Ok(Point::new(col as u8, row - 1))
    }
}

/// A point that cannot be read, or that lies off the board.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PointError {
    #[error("`{text}` is not a point: {reason}")]
    Malformed { text: String, reason: &'static str },
    #[error("`{text}` is off the {size}x{size} board")]
    OffBoard { text: String, size: u8 },
}

/// What a player does on their turn: put a stone on a point, or pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Play(Point),
    Pass,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Play(p) => p.fmt(f),
            Action::Pass => f.write_str("pass"),
        }
    }
}

/// A move: who did what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    pub color: Color,
    pub action: Action,
}

impl Move {
    /// `color` plays a stone at `point`.
    #[must_use]
    pub const fn play(color: Color, point: Point) -> Move {
        Move {
            color,
            action: Action::Play(point),
        }
    }

    /// `color` passes.
    #[must_use]
    pub const fn pass(color: Color) -> Move {
        Move {
            color,
            action: Action::Pass,
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.color.letter(), self.action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_read_and_print_as_players_name_them() {
        let nine = BoardSize::NINE;
        let d5 = nine.parse_point("D5").expect("D5 is on 9x9");
        assert_eq!((d5.col(), d5.row()), (3, 4));
        assert_eq!(d5.to_string(), "D5");
        assert_eq!(nine.parse_point("j9").expect("J9").to_string(), "J9");
        assert_eq!(nine.parse_point("H1").expect("H1").col(), 7);
        assert_eq!(nine.parse_point("J1").expect("J1").col(), 8);
        let t19 = BoardSize::NINETEEN.parse_point("T19").expect("T19");
        assert_eq!((t19.col(), t19.row()), (18, 18));
    }

    #[test]
    fn bad_points_are_refused_with_the_reason() {
        let nine = BoardSize::NINE;
        let err = |s: &str| nine.parse_point(s).expect_err(s).to_string();
        assert!(err("I5").contains("no column I"), "{}", err("I5"));
        assert!(err("Z1").contains("off the 9x9 board"), "{}", err("Z1"));
        assert!(err("A0").contains("numbered from 1"), "{}", err("A0"));
        assert!(err("A10").contains("off the 9x9 board"), "{}", err("A10"));
        assert!(err("").contains("empty"));
        assert!(err("5D").contains("column"));
        assert!(err("D").contains("row"));
        assert!(err("D-1").contains("row"));
        assert!(err("D999").contains("row"));
    }

    #[test]
    fn board_sizes_outside_two_to_nineteen_are_refused() {
        assert!(BoardSize::new(1).is_err());
        assert!(BoardSize::new(20).is_err());
        assert_eq!(BoardSize::new(2).map(BoardSize::get), Ok(2));
        assert_eq!(BoardSize::new(19).map(BoardSize::points), Ok(361));
    }
}
