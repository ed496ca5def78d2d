//! Counting: area and territory scores, komi, and the result.

use std::fmt;

use crate::board::{Board, Vertex};
use crate::game::{EndReason, Game};
use crate::point::{ByColor, Color, Point};
use crate::rules::{Komi, Scoring};

/// Who owns each point at the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    Black,
    White,
    /// Counts for nobody: dame, seki liberties, and (territory scoring) stones
    /// and eyes of groups in seki.
    Neutral,
}

impl From<Color> for Owner {
    fn from(c: Color) -> Owner {
        match c {
            Color::Black => Owner::Black,
            Color::White => Owner::White,
        }
    }
}

/// The count of a position with some stones taken off as dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Score {
    pub scoring: Scoring,
    pub komi: Komi,
    /// Black's points before komi (area: stones + territory; territory:
    /// territory + prisoners + dead white stones).
    pub black: u32,
    /// White's points before komi.
    pub white: u32,
    /// Empty points (and, under area rules, nothing else) that count for
    /// nobody.
    pub neutral: u32,
    /// The stones taken off as dead, in board order.
    pub dead: Vec<Point>,
    /// Owner of every point, row by row from A1.
    pub ownership: Vec<Owner>,
    /// The points counted as territory (empty points, and dead stones'
    /// taken off) with the colour they count for, in board order.
    pub territory: Vec<(Point, Color)>,
}

impl Score {
    /// White's total with komi, in half points.
    #[must_use]
    pub fn white_total_half(&self) -> i64 {
        2 * i64::from(self.white) + i64::from(self.komi.half_points())
    }

    /// The result the count gives: the winner and margin, or a draw.
    #[must_use]
    pub fn result(&self) -> GameResult {
        let diff = 2 * i64::from(self.black) - self.white_total_half();
        match diff.cmp(&0) {
            std::cmp::Ordering::Greater => GameResult::Counted {
                winner: Some(Color::Black),
                margin_half: diff.unsigned_abs() as u32,
            },
            std::cmp::Ordering::Less => GameResult::Counted {
                winner: Some(Color::White),
                margin_half: diff.unsigned_abs() as u32,
            },
            std::cmp::Ordering::Equal => GameResult::Counted {
                winner: None,
                margin_half: 0,
            },
        }
    }

    /// The preview line players see: "Black 41 – White 47 (komi 7)".
    #[must_use]
    pub fn preview(&self) -> String {
        let white = HalfPoints(self.white_total_half());
        format!(
            "Black {} – White {} (komi {})",
            self.black, white, self.komi
        )
    }
}

/// A number of half points, printed as players write it (47, 47.5, -0.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HalfPoints(pub i64);

impl fmt::Display for HalfPoints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v % 2 == 0 {
            write!(f, "{}", v / 2)
        } else {
            let sign = if v < 0 { "-" } else { "" };
            write!(f, "{}{}.5", sign, v.abs() / 2)
        }
    }
}

/// How a game came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// By counting; `winner: None` is a draw (jigo).
    Counted {
        winner: Option<Color>,
        margin_half: u32,
    },
    Resignation {
        winner: Color,
    },
    Timeout {
        winner: Color,
    },
    DrawAgreed,
}

impl GameResult {
    /// The winner, or `None` for a draw.
    #[must_use]
    pub fn winner(self) -> Option<Color> {
        match self {
            GameResult::Counted { winner, .. } => winner,
            GameResult::Resignation { winner } | GameResult::Timeout { winner } => Some(winner),
            GameResult::DrawAgreed => None,
        }
    }

    /// Parses an SGF `RE` value: `B+3.5`, `W+R`, `B+T`, `0`, `Draw`, `Jigo`.
    /// Unknown forms (`?`, `Void`) give `None`.
    #[must_use]
    pub fn parse_sgf(s: &str) -> Option<GameResult> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "0" | "draw" | "jigo" | "b+0" | "w+0" => {
                return Some(GameResult::Counted {
                    winner: None,
                    margin_half: 0,
                });
            }
            _ => {}
        }
        let (who, rest) = t.split_once('+')?;
        let winner = Color::parse(who).ok()?;
        match rest.to_ascii_uppercase().as_str() {
            "R" | "RESIGN" => Some(GameResult::Resignation { winner }),
            "T" | "TIME" => Some(GameResult::Timeout { winner }),
            margin => {
                let k = Komi::parse(margin).ok()?;
                let half = u32::try_from(k.half_points()).ok()?;
                if half == 0 {
                    return None;
                }
                Some(GameResult::Counted {
                    winner: Some(winner),
                    margin_half: half,
                })
            }
        }
    }
}

impl fmt::Display for GameResult {
    /// The SGF `RE` form: `B+2`, `W+0.5`, `0` (draw), `B+R`, `W+T`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameResult::Counted {
                winner: Some(w),
                margin_half,
            } => write!(f, "{}+{}", w.letter(), HalfPoints(i64::from(*margin_half))),
            GameResult::Counted { winner: None, .. } | GameResult::DrawAgreed => f.write_str("0"),
            GameResult::Resignation { winner } => write!(f, "{}+R", winner.letter()),
            GameResult::Timeout { winner } => write!(f, "{}+T", winner.letter()),
        }
    }
}

impl EndReason {
    /// The result of a game that ended this way without a count.
    #[must_use]
    pub fn uncounted_result(self) -> Option<GameResult> {
        match self {
            EndReason::Resignation { winner } => Some(GameResult::Resignation { winner }),
            EndReason::Timeout { winner } => Some(GameResult::Timeout { winner }),
            EndReason::DrawAgreed => Some(GameResult::DrawAgreed),
            EndReason::TwoPasses | EndReason::MoveCap => None,
        }
    }
}

/// The board with the chains on `dead` taken off. Returns it with the dead
/// stones' points, in board order (whole chains, even if `dead` names only
/// one stone of a chain).
#[must_use]
pub fn remove_dead(board: &Board, dead: &[Point]) -> (Board, Vec<(Point, Color)>) {
    let mut cleared = board.clone();
    let mut removed: Vec<(Point, Color)> = Vec::new();
    for &p in dead {
        if !board.size().contains(p) {
            continue;
        }
        let v = cleared.vertex(p);
        if let Some(c) = cleared.color_at(v) {
            removed.extend(cleared.chain_stones(v).map(|s| (cleared.point(s), c)));
            cleared.remove_chain(v);
        }
    }
    removed.sort_unstable_by_key(|(p, _)| (p.row(), p.col()));
    (cleared, removed)
}

/// A connected area of empty points, with the colours of the stones around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub points: Vec<Vertex>,
    pub borders_black: bool,
    pub borders_white: bool,
}

/// The empty regions of a board, in board order of their first point.
#[must_use]
pub fn empty_regions(board: &Board) -> Vec<Region> {
    let mut seen = vec![false; crate::board::MAX_VERTICES];
    let mut regions = Vec::new();
    let mut stack = Vec::new();
    for v in board.vertices() {
        if seen[v] || !board.is_empty(v) {
            continue;
        }
        let mut region = Region {
            points: Vec::new(),
            borders_black: false,
            borders_white: false,
        };
        seen[v] = true;
        stack.push(v);
        while let Some(x) = stack.pop() {
            region.points.push(x);
            for n in board.neighbours(x) {
                match board.color_at(n) {
                    Some(Color::Black) => region.borders_black = true,
                    Some(Color::White) => region.borders_white = true,
                    None => {
                        if board.is_empty(n) && !seen[n] {
                            seen[n] = true;
                            stack.push(n);
                        }
                    }
                }
            }
        }
        regions.push(region);
    }
    regions
}

/// A region's points as territory of `owner`'s colour; none for nobody's.
fn territory_points<'a>(
    board: &'a Board,
    points: &'a [Vertex],
    owner: Owner,
) -> impl Iterator<Item = (Point, Color)> + 'a {
    let color = match owner {
        Owner::Black => Some(Color::Black),
        Owner::White => Some(Color::White),
        Owner::Neutral => None,
    };
    color
        .into_iter()
        .flat_map(move |c| points.iter().map(move |&v| (board.point(v), c)))
}

fn in_board_order(mut points: Vec<(Point, Color)>) -> Vec<(Point, Color)> {
    points.sort_by_key(|(p, _)| (p.row(), p.col()));
    points
}

/// Area count: stones plus empty points bordered by one colour only.
#[must_use]
pub fn area_score(board: &Board, dead: &[Point], komi: Komi) -> Score {
    let (cleared, removed) = remove_dead(board, dead);
    let index = |b: &Board, v: Vertex| {
        let p = b.point(v);
        usize::from(p.row()) * usize::from(b.size().get()) + usize::from(p.col())
    };
    let mut ownership = vec![Owner::Neutral; board.size().points()];
    let mut territory = Vec::new();
    let (mut black, mut white, mut neutral) = (0u32, 0u32, 0u32);
    for v in cleared.vertices() {
        match cleared.color_at(v) {
            Some(Color::Black) => {
                black += 1;
                ownership[index(&cleared, v)] = Owner::Black;
            }
            Some(Color::White) => {
                white += 1;
                ownership[index(&cleared, v)] = Owner::White;
            }
            None => {}
        }
    }
    for region in empty_regions(&cleared) {
        let owner = match (region.borders_black, region.borders_white) {
            (true, false) => Owner::Black,
            (false, true) => Owner::White,
            _ => Owner::Neutral,
        };
        let n = region.points.len() as u32;
        match owner {
            Owner::Black => black += n,
            Owner::White => white += n,
            Owner::Neutral => neutral += n,
        }
        for &v in &region.points {
            ownership[index(&cleared, v)] = owner;
        }
        territory.extend(territory_points(&cleared, &region.points, owner));
    }
    Score {
        scoring: Scoring::Area,
        komi,
        black,
        white,
        neutral,
        dead: removed.into_iter().map(|(p, _)| p).collect(),
        ownership,
        territory: in_board_order(territory),
    }
}

/// Territory count: empty points surrounded by one colour, plus prisoners,
/// plus the dead stones taken off; no territory inside seki.
///
/// `prisoners` are the stones each side captured during play (Black's, White's).
/// A chain is in seki when it touches a shared liberty that neither side can
/// fill without leaving its own chain in atari; empty regions bordered by a
/// chain in seki count for nobody.
#[must_use]
pub fn territory_score(
    board: &Board,
    dead: &[Point],
    prisoners: ByColor<u32>,
    komi: Komi,
) -> Score {
    let (cleared, removed) = remove_dead(board, dead);
    let n = usize::from(board.size().get());
    let index = |v: Vertex| {
        let p = cleared.point(v);
        usize::from(p.row()) * n + usize::from(p.col())
    };
    let in_seki = seki_chains(&cleared);
    let mut ownership = vec![Owner::Neutral; board.size().points()];
    let mut territory = Vec::new();
    for v in cleared.vertices() {
        if let Some(c) = cleared.color_at(v)
            && !in_seki.contains(&cleared.chain_head(v))
        {
            ownership[index(v)] = c.into();
        }
    }
    let (mut black, mut white, mut neutral) = (0u32, 0u32, 0u32);
    for region in empty_regions(&cleared) {
        let touches_seki = region.points.iter().any(|&v| {
            cleared.neighbours(v).iter().any(|&nb| {
                cleared.color_at(nb).is_some() && in_seki.contains(&cleared.chain_head(nb))
            })
        });
        let owner = match (region.borders_black, region.borders_white, touches_seki) {
            (true, false, false) => Owner::Black,
            (false, true, false) => Owner::White,
            _ => Owner::Neutral,
        };
        let count = region.points.len() as u32;
        match owner {
            Owner::Black => black += count,
            Owner::White => white += count,
            Owner::Neutral => neutral += count,
        }
        for &v in &region.points {
            ownership[index(v)] = owner;
        }
        territory.extend(territory_points(&cleared, &region.points, owner));
    }
    let dead_black = removed.iter().filter(|(_, c)| *c == Color::Black).count() as u32;
    let dead_white = removed.len() as u32 - dead_black;
    Score {
        scoring: Scoring::Territory,
        komi,
        black: black + prisoners.black + dead_white,
        white: white + prisoners.white + dead_black,
        neutral,
        dead: removed.into_iter().map(|(p, _)| p).collect(),
        ownership,
        territory: in_board_order(territory),
    }
}

/// The stones of chains in seki (see [`territory_score`]), in board order.
#[must_use]
pub fn seki_points(board: &Board) -> Vec<Point> {
    let heads = seki_chains(board);
    board
        .vertices()
        .filter(|&v| board.color_at(v).is_some() && heads.contains(&board.chain_head(v)))
        .map(|v| board.point(v))
        .collect()
}

/// Heads of chains in seki: chains touching an empty point that is a
/// liberty of both colours and that neither colour can fill without its
/// resulting chain being left with at most one liberty.
pub(crate) fn seki_chains(board: &Board) -> Vec<Vertex> {
    seki_chains_where(board, false)
}

/// [`seki_chains`] that stay so whatever is played around them: no chain
/// at the shared point has another liberty that opens onto more empty
/// points without touching the other colour. Such a liberty is room to
/// extend into before filling the shared point, so that chain is not held
/// there: a lone White stone at the edge of Black's corner, sharing a
/// point with a Black group that has one eye, is still free to come out
/// and fill it.
pub(crate) fn settled_seki_chains(board: &Board) -> Vec<Vertex> {
    seki_chains_where(board, true)
}

fn seki_chains_where(board: &Board, settled: bool) -> Vec<Vertex> {
    let mut heads: Vec<Vertex> = Vec::new();
    for v in board.vertices() {
        if !board.is_empty(v) {
            continue;
        }
        let touches = |x: Vertex, c: Color| {
            board
                .neighbours(x)
                .iter()
                .any(|&n| board.color_at(n) == Some(c))
        };
        if !(touches(v, Color::Black) && touches(v, Color::White)) {
            continue;
        }
        let self_atari = |c: Color| {
            if board.is_suicide(v, c) {
                return true;
            }
            let mut after = board.clone();
            after.play(v, c);
            after.is_empty(v) || after.liberty_count_up_to(v, 2) < 2
        };
        if !(self_atari(Color::Black) && self_atari(Color::White)) {
            continue;
        }
        let room_to_extend = |n: Vertex| {
            let Some(c) = board.color_at(n) else {
                return false;
            };
            board.liberties(n).into_iter().any(|l| {
                l != v
                    && !touches(l, c.opponent())
                    && board
                        .neighbours(l)
                        .iter()
                        .any(|&x| x != v && board.is_empty(x))
            })
        };
        if settled && board.neighbours(v).into_iter().any(room_to_extend) {
            continue;
        }
        for n in board.neighbours(v) {
            if board.color_at(n).is_some() {
                let h = board.chain_head(n);
                if !heads.contains(&h) {
                    heads.push(h);
                }
            }
        }
    }
    heads
}

impl Game {
    /// Counts the current position under the game's scoring with the given
    /// stones taken off as dead.
    #[must_use]
    pub fn score_with_dead(&self, dead: &[Point]) -> Score {
        let board = self.board();
        let komi = self.rules().komi;
        match self.rules().scoring {
            Scoring::Area => area_score(board, dead, komi),
            Scoring::Territory => {
                territory_score(board, dead, ByColor::from_fn(|c| board.prisoners(c)), komi)
            }
        }
    }

    /// The game's result: from its end if it ended without a count, else
    /// from counting with `dead` removed. `None` while the game goes on.
    #[must_use]
    pub fn result_with_dead(&self, dead: &[Point]) -> Option<GameResult> {
        let end = self.end()?;
        Some(
            end.uncounted_result()
                .unwrap_or_else(|| self.score_with_dead(dead).result()),
        )
    }
}
