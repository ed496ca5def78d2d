//! SGF (FF[4]) game records: read and write the main line of a game.
//!
//! The reader is a hand-written scanner with no recursion, so a hostile file
//! (deep nesting, unclosed values, absurd numbers) gives an error that says
//! where and what, never a panic or a stack overflow. Only the main line is
//! read; other variations are checked for balance and skipped.

use std::fmt;

use thiserror::Error;

use crate::board::Board;
use crate::game::Game;
use crate::point::{Action, BoardSize, Color, Move, Point};
use crate::rules::{Komi, Preset, Rules};
use crate::score::GameResult;

/// Where in the text something was found: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A file that cannot be read as a game, with where and what.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("SGF {at}: {what}")]
pub struct SgfError {
    pub at: Location,
    pub what: String,
}

/// `RU` for Ttakji's own rules in KataGo's explicit form (positional
/// superko, area scoring, no suicide), since no named ruleset is exactly
/// them; other programs read it, and older records' `ttakji` still reads.
pub const TTAKJI_RULE_STRING: &str = "koPOSITIONALscoreAREAtaxNONEsui0";

/// The `RU` value of a preset, as Sabaki, sgfmill, GoGui and KataGo name
/// it.
fn rules_value(preset: Preset) -> &'static str {
    match preset {
        Preset::Ttakji => TTAKJI_RULE_STRING,
        Preset::Chinese => "Chinese",
        Preset::Japanese => "Japanese",
        Preset::TrompTaylor => "Tromp-Taylor",
    }
}

/// A game record: the rules, the players, the setup and the moves.
#[derive(Debug, Clone)]
pub struct Record {
    pub rules: Rules,
    /// `PB`: Black's name.
    pub black: Option<String>,
    /// `PW`: White's name.
    pub white: Option<String>,
    /// `DT`: the date(s) played, as written (`2026-11-29`).
    pub date: Option<String>,
    /// `RE`: the result, when it is one of the known forms.
    pub result: Option<GameResult>,
    /// `GC`: a comment on the whole game (the server says there where the
    /// computer's engine ran).
    pub game_comment: Option<String>,
    /// `AB` / `AW`: stones on the board before the first move.
    pub setup: Vec<(Color, Point)>,
    /// `PL`: who moves first after the setup, when stated.
    pub first_to_move: Option<Color>,
    /// `TM[0]OT[1x30 byo-yomi]`: the seconds every move is given, when the
    /// game had a move clock.
    pub seconds_per_move: Option<u32>,
    /// The main line's moves, passes included.
    pub moves: Vec<Move>,
    /// `C`: comments written on moves, by index into `moves` (written, not
    /// read back).
    pub comments: Vec<(usize, String)>,
    /// Where each move was written, for error messages when replaying.
    move_locations: Vec<Location>,
}

impl PartialEq for Record {
    /// Two records are equal when they describe the same game (where the
    /// moves were written does not matter).
    fn eq(&self, other: &Record) -> bool {
        self.rules == other.rules
            && self.black == other.black
            && self.white == other.white
            && self.date == other.date
            && self.result == other.result
            && self.game_comment == other.game_comment
            && self.setup == other.setup
            && self.first_to_move == other.first_to_move
            && self.seconds_per_move == other.seconds_per_move
            && self.moves == other.moves
    }
}

impl Record {
    /// An empty record under `rules`.
    #[must_use]
    pub fn new(rules: Rules) -> Record {
        Record {
            rules,
            black: None,
            white: None,
            date: None,
            result: None,
            game_comment: None,
            setup: Vec::new(),
            first_to_move: None,
            seconds_per_move: None,
            moves: Vec::new(),
            comments: Vec::new(),
            move_locations: Vec::new(),
        }
    }

    /// The record of a game so far: rules, setup and moves. Names, date and
    /// result are for the caller to fill in.
    #[must_use]
    pub fn from_game(game: &Game) -> Record {
        let start = game.setup();
        let mut setup = Vec::new();
        for v in start.vertices() {
            if let Some(c) = start.color_at(v) {
                setup.push((c, start.point(v)));
            }
        }
        let first_to_move = (game.setup_to_move() != Color::Black || !setup.is_empty())
            .then_some(game.setup_to_move());
        Record {
            setup,
            first_to_move,
            moves: game.moves().to_vec(),
            ..Record::new(*game.rules())
        }
    }

    /// Replays the record into a game, checking every move against the rules.
    pub fn to_game(&self) -> Result<Game, SgfError> {
        let mut board = Board::new(self.rules.board_size);
        for &(color, point) in &self.setup {
            let v = board.vertex(point);
            if !board.is_empty(v) {
                return Err(SgfError {
                    at: Location::default(),
                    what: format!("setup stone on {point} is given twice"),
                });
            }
            board.play(v, color);
            if board.color_at(v) != Some(color) || board.prisoners(color) > 0 {
                return Err(SgfError {
                    at: Location::default(),
                    what: format!("setup stone on {point} would capture or have no liberty"),
                });
            }
        }
        let first = self
            .first_to_move
            .or(self.moves.first().map(|m| m.color))
            .unwrap_or(Color::Black);
        let mut game = Game::from_setup(self.rules, board, first);
        for (i, &mv) in self.moves.iter().enumerate() {
            if let Err(e) = game.play_as(mv) {
                return Err(SgfError {
                    at: self.move_locations.get(i).copied().unwrap_or_default(),
                    what: format!("move {} ({mv}) is illegal: {e}", i + 1),
                });
            }
        }
        Ok(game)
    }

    /// The record as SGF text (FF[4], UTF-8).
    #[must_use]
    pub fn to_sgf(&self) -> String {
        let size = self.rules.board_size;
        let mut out = String::from("(;GM[1]FF[4]CA[UTF-8]AP[ttakji:");
        out.push_str(env!("CARGO_PKG_VERSION"));
        out.push(']');
        out.push_str(&format!(
            "SZ[{}]KM[{}]RU[{}]",
            size.get(),
            self.rules.komi,
            rules_value(self.rules.preset)
        ));
        for (ident, value) in [
            ("PB", &self.black),
            ("PW", &self.white),
            ("DT", &self.date),
            ("GC", &self.game_comment),
        ] {
            if let Some(v) = value {
                out.push_str(ident);
                push_text(&mut out, v);
            }
        }
        if let Some(r) = self.result {
            out.push_str(&format!("RE[{r}]"));
        }
        if let Some(s) = self.seconds_per_move.filter(|&s| s > 0) {
            // No main time, then one period of `s` seconds for every move.
            out.push_str(&format!("TM[0]OT[1x{s} byo-yomi]"));
        }
        for color in [Color::Black, Color::White] {
            let stones: Vec<Point> = self
                .setup
                .iter()
                .filter(|(c, _)| *c == color)
                .map(|&(_, p)| p)
                .collect();
            if !stones.is_empty() {
                out.push_str(if color == Color::Black { "AB" } else { "AW" });
                for p in stones {
                    out.push_str(&format!("[{}]", sgf_point(p, size)));
                }
            }
        }
        if let Some(c) = self.first_to_move {
            out.push_str(&format!("PL[{}]", c.letter()));
        }
        for (i, mv) in self.moves.iter().enumerate() {
            if i % 10 == 0 {
                out.push('\n');
            }
            let value = match mv.action {
                Action::Pass => String::new(),
                Action::Play(p) => sgf_point(p, size),
            };
            out.push_str(&format!(";{}[{}]", mv.color.letter(), value));
            for (_, comment) in self.comments.iter().filter(|(at, _)| *at == i) {
                out.push('C');
                push_text(&mut out, comment);
            }
        }
        out.push_str(")\n");
        out
    }
}

fn push_text(out: &mut String, text: &str) {
    out.push('[');
    for c in text.chars() {
        if c == ']' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push(']');
}

/// SGF coordinates: column letter from the left, row letter from the top.
fn sgf_point(p: Point, size: BoardSize) -> String {
    let col = (b'a' + p.col()) as char;
    let row = (b'a' + (size.get() - 1 - p.row())) as char;
    format!("{col}{row}")
}

/// Reads the main line of the first game in `text`.
pub fn parse(text: &str) -> Result<Record, SgfError> {
    let nodes = Scanner::new(text).main_line()?;
    build_record(&nodes)
}

/// Reads `text` and replays it into a game.
pub fn read_game(text: &str) -> Result<(Record, Game), SgfError> {
    let record = parse(text)?;
    let game = record.to_game()?;
    Ok((record, game))
}

struct Property {
    ident: String,
    at: Location,
    values: Vec<(String, Location)>,
}

type Node = Vec<Property>;

/// Properties we will not read more of, against files that are nothing
/// but values.
const MAX_VALUES_PER_PROPERTY: usize = 4096;

struct Scanner<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    at: Location,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Scanner<'a> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        Scanner {
            chars: text.chars().peekable(),
            at: Location { line: 1, column: 1 },
        }
    }

    fn error(&self, what: impl Into<String>) -> SgfError {
        SgfError {
            at: self.at,
            what: what.into(),
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.at.line += 1;
            self.at.column = 1;
        } else {
            self.at.column += 1;
        }
        Some(c)
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn expect(&mut self, want: char, what: &str) -> Result<(), SgfError> {
        self.skip_whitespace();
        match self.peek() {
            Some(c) if c == want => {
                self.bump();
                Ok(())
            }
            Some(c) => Err(self.error(format!("expected {what}, found `{c}`"))),
            None => Err(self.error(format!("expected {what}, found the end of the file"))),
        }
    }

    /// The nodes of the main line: the first game tree, and at each branch
    /// its first variation. The rest of the tree is checked and skipped.
    fn main_line(&mut self) -> Result<Vec<Node>, SgfError> {
        self.skip_whitespace();
        if self.peek().is_none() {
            return Err(self.error("the file is empty: expected `(;` to start a game"));
        }
        self.expect('(', "`(` to start a game")?;
        let mut nodes: Vec<Node> = Vec::new();
        let mut open = 1usize;
        loop {
            self.skip_whitespace();
            match self.peek() {
                Some(';') => {
                    self.bump();
                    nodes.push(self.node()?);
                }
                Some('(') => {
                    // The first variation continues the main line.
                    self.bump();
                    open += 1;
                }
                Some(')') => {
                    self.bump();
                    open -= 1;
                    break;
                }
                Some(c) => return Err(self.error(format!("expected `;`, `(` or `)`, found `{c}`"))),
                None => return Err(self.error("the game is not closed: `)` missing")),
            }
        }
        // Close the enclosing trees, skipping later variations.
        while open > 0 {
            self.skip_whitespace();
            match self.peek() {
                Some('(') => self.skip_tree()?,
                Some(')') => {
                    self.bump();
                    open -= 1;
                }
                Some(';') => {
                    return Err(self.error("a node follows a variation: expected `(` or `)`"));
                }
                Some(c) => return Err(self.error(format!("expected `(` or `)`, found `{c}`"))),
                None => return Err(self.error("the game is not closed: `)` missing")),
            }
        }
        if nodes.is_empty() {
            return Err(self.error("the game has no node"));
        }
        Ok(nodes)
    }

    /// Skips a whole variation, `(` to its matching `)`, values included.
    fn skip_tree(&mut self) -> Result<(), SgfError> {
        let start = self.at;
        let mut depth = 0usize;
        while let Some(c) = self.bump() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                '[' => {
                    self.value_text()?;
                }
                _ => {}
            }
        }
        Err(SgfError {
            at: start,
            what: "this variation is not closed: `)` missing".into(),
        })
    }

    fn node(&mut self) -> Result<Node, SgfError> {
        let mut props: Node = Vec::new();
        loop {
            self.skip_whitespace();
            let at = self.at;
            let mut ident = String::new();
            while let Some(c) = self.peek() {
                if c.is_ascii_uppercase() {
                    ident.push(c);
                } else if !c.is_ascii_lowercase() {
                    // FF[3] allowed lowercase letters inside identifiers.
                    break;
                }
                self.bump();
                if ident.len() > 16 {
                    return Err(SgfError {
                        at,
                        what: "property name is too long".into(),
                    });
                }
            }
            if ident.is_empty() {
                return Ok(props);
            }
            let mut values = Vec::new();
            loop {
                self.skip_whitespace();
                if self.peek() != Some('[') {
                    break;
                }
                let vat = self.at;
                self.bump();
                values.push((self.value_text()?, vat));
                if values.len() > MAX_VALUES_PER_PROPERTY {
                    return Err(SgfError {
                        at,
                        what: format!("property {ident} has too many values"),
                    });
                }
            }
            if values.is_empty() {
                return Err(self.error(format!("property {ident} has no value: expected `[`")));
            }
            props.push(Property { ident, at, values });
        }
    }

    /// The text of a value after its `[`, up to the closing `]`, unescaped.
    fn value_text(&mut self) -> Result<String, SgfError> {
        let start = self.at;
        let mut text = String::new();
        loop {
            match self.bump() {
                Some(']') => return Ok(text),
                Some('\\') => match self.bump() {
                    Some('\n') => {}
                    Some(c) => text.push(c),
                    None => break,
                },
                Some(c) => text.push(c),
                None => break,
            }
        }
        Err(SgfError {
            at: start,
            what: "this value is not closed: `]` missing".into(),
        })
    }
}

fn err(at: Location, what: impl Into<String>) -> SgfError {
    SgfError {
        at,
        what: what.into(),
    }
}

fn single(prop: &Property) -> Result<&str, SgfError> {
    match prop.values.as_slice() {
        [(v, _)] => Ok(v.as_str()),
        _ => Err(err(
            prop.at,
            format!("property {} takes one value", prop.ident),
        )),
    }
}

fn build_record(nodes: &[Node]) -> Result<Record, SgfError> {
    // Root properties first: they decide the board the points are on.
    let root = &nodes[0];
    let mut size = BoardSize::NINETEEN; // SGF's default for Go
    let mut komi = None;
    let mut preset = None;
    let mut seconds_per_move = None;
    for prop in root {
        let value = || single(prop);
        match prop.ident.as_str() {
            "GM" if value()?.trim() != "1" => {
                return Err(err(
                    prop.at,
                    format!("GM[{}] is not a game of Go (GM[1])", value()?),
                ));
            }
            "SZ" => {
                let v = value()?.trim();
                let n: u32 = v.parse().map_err(|_| {
                    err(
                        prop.at,
                        format!("SZ[{v}]: the board size must be one number (square boards only)"),
                    )
                })?;
                size = BoardSize::new(n).map_err(|e| err(prop.at, format!("SZ[{v}]: {e}")))?;
            }
            "KM" => {
                let v = value()?;
                komi = Some(Komi::parse(v).map_err(|e| err(prop.at, format!("KM[{v}]: {e}")))?);
            }
            "RU" => {
                // Unknown rule names (AGA, NZ, …) fall back to Ttakji's rules.
                let v = value()?.trim();
                preset = if v.eq_ignore_ascii_case(TTAKJI_RULE_STRING) {
                    Some(Preset::Ttakji)
                } else {
                    Preset::parse(v).ok()
                };
            }
            "OT" => {
                // A move clock as written above; other overtimes are kept by
                // nobody here.
                seconds_per_move = value()?
                    .trim()
                    .strip_prefix("1x")
                    .and_then(|rest| rest.strip_suffix(" byo-yomi"))
                    .and_then(|s| s.parse().ok());
            }
            _ => {}
        }
    }
    let mut rules = Rules::preset(preset.unwrap_or(Preset::Ttakji)).with_board_size(size);
    if let Some(k) = komi {
        rules = rules.with_komi(k);
    }
    let mut record = Record::new(rules);
    record.seconds_per_move = seconds_per_move;
    let point = |s: &str, at: Location| -> Result<Point, SgfError> { parse_sgf_point(s, size, at) };
    for (i, node) in nodes.iter().enumerate() {
        let mut moved = false;
        for prop in node {
            match prop.ident.as_str() {
                "B" | "W" => {
                    if moved {
                        return Err(err(prop.at, "a node holds two moves"));
                    }
                    moved = true;
                    let color = if prop.ident == "B" {
                        Color::Black
                    } else {
                        Color::White
                    };
                    let v = single(prop)?;
                    let action = if v.is_empty() || (v == "tt" && size.get() <= 19) {
                        Action::Pass
                    } else {
                        Action::Play(point(v, prop.values[0].1)?)
                    };
                    record.moves.push(Move { color, action });
                    record.move_locations.push(prop.at);
                }
                "AB" | "AW" => {
                    if !record.moves.is_empty() {
                        return Err(err(
                            prop.at,
                            format!(
                                "{} after the first move: setup stones are only read before play",
                                prop.ident
                            ),
                        ));
                    }
                    let color = if prop.ident == "AB" {
                        Color::Black
                    } else {
                        Color::White
                    };
                    for (v, at) in &prop.values {
                        for p in point_list(v, size, *at)? {
                            if record.setup.iter().any(|&(_, q)| q == p) {
                                return Err(err(*at, format!("setup stone on {p} is given twice")));
                            }
                            record.setup.push((color, p));
                        }
                    }
                }
                "PL" if record.moves.is_empty() => {
                    let v = single(prop)?;
                    record.first_to_move =
                        Some(Color::parse(v).map_err(|e| err(prop.at, format!("PL[{v}]: {e}")))?);
                }
                "PB" if i == 0 => record.black = Some(single(prop)?.to_owned()),
                "PW" if i == 0 => record.white = Some(single(prop)?.to_owned()),
                "DT" if i == 0 => record.date = Some(single(prop)?.to_owned()),
                "GC" if i == 0 => record.game_comment = Some(single(prop)?.to_owned()),
                "RE" if i == 0 => record.result = GameResult::parse_sgf(single(prop)?),
                _ => {}
            }
        }
    }
    Ok(record)
}

fn parse_sgf_point(s: &str, size: BoardSize, at: Location) -> Result<Point, SgfError> {
    let bytes = s.as_bytes();
    let coord = |b: u8| -> Option<u8> { b.is_ascii_lowercase().then(|| b - b'a') };
    let (col, row_from_top) = match bytes {
        [c, r] => (coord(*c), coord(*r)),
        _ => (None, None),
    };
    match (col, row_from_top) {
        (Some(c), Some(r)) if c < size.get() && r < size.get() => {
            Ok(Point::new(c, size.get() - 1 - r))
        }
        (Some(_), Some(_)) => Err(err(at, format!("[{s}] is off the {size} board"))),
        _ => Err(err(
            at,
            format!("[{s}] is not a point (two letters a–s, like [dd])"),
        )),
    }
}

/// A point, or a rectangle `aa:cc` of points (compressed point lists).
fn point_list(s: &str, size: BoardSize, at: Location) -> Result<Vec<Point>, SgfError> {
    match s.split_once(':') {
        None => Ok(vec![parse_sgf_point(s, size, at)?]),
        Some((a, b)) => {
            let a = parse_sgf_point(a, size, at)?;
            let b = parse_sgf_point(b, size, at)?;
            let mut out = Vec::new();
            for row in a.row().min(b.row())..=a.row().max(b.row()) {
                for col in a.col().min(b.col())..=a.col().max(b.col()) {
                    out.push(Point::new(col, row));
                }
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_the_main_line_and_writes_back_the_same_game() {
        let text = "(;GM[1]FF[4]SZ[9]KM[6.5]RU[Japanese]PB[Kim \\] Lee]PW[Park]DT[2026-11-29]RE[W+3.5]\
                    AB[cc][gg]AW[cg:dh]PL[W];W[ee](;B[dd];W[];B[tt])(;B[aa]))";
        let record = parse(text).expect("valid record");
        assert_eq!(record.rules.komi.to_string(), "6.5");
        assert_eq!(record.rules.preset, Preset::Japanese);
        assert_eq!(record.black.as_deref(), Some("Kim ] Lee"));
        assert_eq!(record.setup.len(), 2 + 4);
        assert_eq!(record.first_to_move, Some(Color::White));
        assert_eq!(record.moves.len(), 4);
        assert_eq!(record.moves[1].to_string(), "B D6");
        assert_eq!(record.moves[2].action, Action::Pass);
        assert_eq!(record.moves[3].action, Action::Pass);
        assert_eq!(record.result.map(|r| r.to_string()), Some("W+3.5".into()));
        let again = parse(&record.to_sgf()).expect("own output reads back");
        assert_eq!(again, record);
        let game = record.to_game().expect("legal game");
        assert_eq!(game.move_number(), 4);
    }

    #[test]
    fn each_ruleset_is_written_by_the_name_other_programs_read_and_read_back() {
        for (rules, written) in [
            (Rules::ttakji(), "RU[koPOSITIONALscoreAREAtaxNONEsui0]"),
            (Rules::preset(Preset::Chinese), "RU[Chinese]"),
            (Rules::japanese(), "RU[Japanese]"),
            (Rules::preset(Preset::TrompTaylor), "RU[Tromp-Taylor]"),
        ] {
            let text = Record::new(rules).to_sgf();
            assert!(text.contains(written), "{text}");
            let read = parse(&text).expect("own output reads back");
            assert_eq!(read.rules.preset, rules.preset, "{text}");
        }
        for old in ["ttakji", "TTAKJI", "japanese"] {
            let read = parse(&format!("(;GM[1]FF[4]SZ[9]RU[{old}])")).expect("a record");
            assert_ne!(read.rules.preset, Preset::Chinese, "{old}");
        }
        let read = parse("(;GM[1]FF[4]SZ[9]RU[japanese])").expect("a record");
        assert_eq!(read.rules.preset, Preset::Japanese);
    }

    #[test]
    fn a_move_clock_is_written_as_byo_yomi_and_read_back() {
        let mut record = Record::new(Rules::japanese().with_board_size(BoardSize::THIRTEEN));
        record.seconds_per_move = Some(60);
        let text = record.to_sgf();
        assert!(
            text.contains("SZ[13]KM[6.5]RU[Japanese]TM[0]OT[1x60 byo-yomi]"),
            "{text}"
        );
        assert_eq!(parse(&text).expect("reads back"), record);
        record.seconds_per_move = None;
        assert!(!record.to_sgf().contains("TM["), "no clock, no time");
    }

    #[test]
    fn malformed_files_say_where_and_what() {
        let cases = [
            ("", "empty"),
            ("(;SZ[9]", "not closed"),
            ("(;SZ[9", "value is not closed"),
            ("(;SZ[99])", "not supported"),
            ("(;SZ[9]KM[lots])", "komi"),
            ("(;SZ[9];B[zz])", "off the 9x9 board"),
            ("(;SZ[9];B[d])", "not a point"),
            ("(;SZ[9];B[aa]W[bb])", "two moves"),
            ("(;SZ[9](;B[aa]", "not closed"),
            ("(;GM[3])", "not a game of Go"),
            ("(;SZ[9];B[aa]AB[bb])", "after the first move"),
            ("x", "expected `(`"),
        ];
        for (text, want) in cases {
            let e = parse(text).expect_err(text);
            assert!(e.to_string().contains(want), "{text:?} gave {e}");
        }
        let e = read_game("(;SZ[9];B[aa];W[aa])").expect_err("occupied");
        assert_eq!(
            e.at,
            Location {
                line: 1,
                column: 15
            }
        );
        assert!(
            e.to_string()
                .contains("move 2 (W A9) is illegal: A9 is occupied"),
            "{e}"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_or_a_game_never_a_crash() {
        let deep = format!("(;SZ[9]{}", "(;B[aa]".repeat(100_000));
        assert!(parse(&deep).is_err());
        let closed = format!("(;SZ[9]{}{}", "(;C[x]".repeat(50_000), ")".repeat(50_001));
        assert!(parse(&closed).is_ok());
    }
}
