//! Move features and their learned strengths.
//!
//! A candidate move is described by a few features: whether it captures (and
//! what), escapes from atari, puts its own chain in atari, puts an enemy
//! chain in atari, its line from the edge, its distance to the last two
//! moves, and the 3×3 shape around it (with which of the four touching
//! chains are in atari), in the mover's colours and up to rotation and
//! reflection. Each feature value has a strength (a gamma), and a move's
//! strength is the product of its features' gammas: the generalized
//! Bradley–Terry model of Coulom's "Computing Elo ratings of move patterns
//! in the game of Go" (2007). The gammas are fitted to the moves of game
//! records by minorization–maximization ([`train`]); the fitted table is
//! built into the crate (`data/patterns.txt`, made by `ttakji
//! train-patterns`) and gives the search its priors ([`Gammas::in_force`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use baduk::Color;
use baduk::board::{Board, NO_VERTEX, Vertex};
use baduk::playout::{
    all_playout_candidates, is_big_self_atari, liberties_after, touches_enemy_in_atari,
};

/// The feature groups, in the order of [`Features::values`].
pub const GROUP_NAMES: [&str; GROUPS] = [
    "capture",
    "escape",
    "self_atari",
    "atari",
    "line",
    "last",
    "last2",
    "shape",
];

/// How many feature groups there are.
pub const GROUPS: usize = 8;

const CAPTURE: usize = 0;
const ESCAPE: usize = 1;
const SELF_ATARI: usize = 2;
const ATARI: usize = 3;
const LINE: usize = 4;
const LAST: usize = 5;
const LAST2: usize = 6;
const SHAPE: usize = 7;

/// The values each group other than the shape can take, 1 to this (0 is
/// "absent", strength 1):
/// - capture: 1 it saves an own chain in atari, 2 it takes the last move's
///   chain, 3 any other capture;
/// - escape: an own chain in atari extended to 1 two liberties, 2 three or more;
/// - self_atari: 1 a single stone, 2 a chain of two or more;
/// - atari: 1 on a chain of two stones or more, 2 on a single stone;
/// - line: 1 to 4 from the edge (the fifth line and beyond is absent);
/// - last, last2: the distance to the last move (to the one before), as
///   dx + dy + max(dx, dy): 2 to 8, and 9 and beyond, as 1 to 8.
const TACTICAL_VALUES: [u32; GROUPS - 1] = [3, 2, 2, 2, 4, 8, 8];

/// A 3×3 shape: the eight points around the move (two bits each: empty,
/// own, enemy, off the board) and, in bits 16–19, which of the four
/// touching points hold a chain in atari.
pub type Shape = u32;

/// The 2²⁰ possible shape codes.
const SHAPE_CODES: usize = 1 << 20;

/// A candidate move's features: for each group its value (0 absent), the
/// shape as its canonical code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    pub values: [u32; GROUPS],
}

/// The features of `color` playing on the empty `v`, after `last` and
/// `last2` (the move before it), either `NO_VERTEX` if there is none. The
/// shape is left raw (not canonical): see [`canonical`].
#[must_use]
pub fn features(board: &Board, v: Vertex, color: Color, last: Vertex, last2: Vertex) -> Features {
    let mut values = [0u32; GROUPS];
    let enemy = color.opponent();
    let nbrs = board.neighbours(v);
    // Captures, and what they take.
    let mut captures = false;
    for &n in &nbrs {
        if board.color_at(n) == Some(enemy) && board.in_atari(n) {
            captures = true;
            let kind = if saves_by_capture(board, n, color) {
                1
            } else if last != NO_VERTEX && board.chain_head(last) == board.chain_head(n) {
                2
            } else {
                3
            };
            let old = values[CAPTURE];
            values[CAPTURE] = if old == 0 { kind } else { old.min(kind) };
        }
    }
    let libs = liberties_after(board, v, color, 3);
    if nbrs
        .iter()
        .any(|&n| board.color_at(n) == Some(color) && board.in_atari(n))
        && libs >= 2
    {
        values[ESCAPE] = if libs >= 3 { 2 } else { 1 };
    }
    if !captures && libs <= 1 {
        values[SELF_ATARI] = if is_big_self_atari(board, v, color) {
            2
        } else {
            1
        };
    }
    for &n in &nbrs {
        if board.color_at(n) == Some(enemy) && board.liberty_count_up_to(n, 3) == 2 {
            let kind = if board.chain_len(n) >= 2 { 1 } else { 2 };
            let old = values[ATARI];
            values[ATARI] = if old == 0 { kind } else { old.min(kind) };
        }
    }
    let (row, col) = coordinates(board, v);
    let size = i32::from(board.size().get());
    let line = row.min(col).min(size - 1 - row).min(size - 1 - col) + 1;
    if line <= 4 {
        values[LINE] = line as u32;
    }
    values[LAST] = distance_value(board, v, last);
    values[LAST2] = distance_value(board, v, last2);
    values[SHAPE] = shape(board, v, color);
    Features { values }
}

/// Whether capturing the enemy chain on `n` frees an own chain in atari
/// that touches it.
fn saves_by_capture(board: &Board, n: Vertex, color: Color) -> bool {
    touches_enemy_in_atari(board, n, color.opponent())
}

fn coordinates(board: &Board, v: Vertex) -> (i32, i32) {
    let s = board.stride() as i32;
    (v as i32 / s - 1, v as i32 % s - 1)
}

fn distance_value(board: &Board, v: Vertex, other: Vertex) -> u32 {
    if other == NO_VERTEX {
        return 0;
    }
    let (r1, c1) = coordinates(board, v);
    let (r2, c2) = coordinates(board, other);
    let (dr, dc) = ((r1 - r2).abs(), (c1 - c2).abs());
    let d = (dr + dc + dr.max(dc)).clamp(2, 9);
    (d - 1) as u32
}

/// The raw 3×3 shape around `v` in `color`'s colours.
#[must_use]
pub fn shape(board: &Board, v: Vertex, color: Color) -> Shape {
    let mut code = u32::from(board.neighbourhood_code(v));
    if color == Color::White {
        // Swap black (1) and white (2): flip both bits of a cell holding one.
        let stone = (code ^ (code >> 1)) & 0x5555;
        code ^= stone | (stone << 1);
    }
    // The touching points are cells 1, 3, 4 and 6 of the code
    // (`Board::neighbourhood_code`): v + s, v - 1, v + 1, v - s.
    let s = board.stride();
    let touching = [v + s, v - 1, v + 1, v - s];
    for (bit, &n) in touching.iter().enumerate() {
        if board.color_at(n).is_some() && board.in_atari(n) {
            code |= 1 << (16 + bit);
        }
    }
    code
}

/// Where each of the eight cells of a shape code (row by row, the centre
/// skipped) goes under each of the eight symmetries of the square.
fn symmetries() -> &'static [[usize; 8]; 8] {
    static TABLE: OnceLock<[[usize; 8]; 8]> = OnceLock::new();
    TABLE.get_or_init(|| {
        const CELLS: [(i32, i32); 8] = [
            (-1, -1),
            (-1, 0),
            (-1, 1),
            (0, -1),
            (0, 1),
            (1, -1),
            (1, 0),
            (1, 1),
        ];
        let mut out = [[0usize; 8]; 8];
        for (t, row) in out.iter_mut().enumerate() {
            for (i, &(r, c)) in CELLS.iter().enumerate() {
                // Rotate by quarter turns, then reflect for the upper four.
                let (mut r, mut c) = (r, c);
                for _ in 0..(t % 4) {
                    (r, c) = (c, -r);
                }
                if t >= 4 {
                    c = -c;
                }
                row[i] = CELLS
                    .iter()
                    .position(|&x| x == (r, c))
                    .expect("a symmetry maps the ring onto itself");
            }
        }
        out
    })
}

/// The index among the touching points (atari bits) of each cell, if any.
const TOUCHING_BIT: [Option<u32>; 8] = [None, Some(0), None, Some(1), Some(2), None, Some(3), None];

fn transform(code: Shape, map: &[usize; 8]) -> Shape {
    let mut out = 0;
    for (i, &to) in map.iter().enumerate() {
        out |= ((code >> (2 * i)) & 3) << (2 * to);
        if let (Some(from_bit), Some(to_bit)) = (TOUCHING_BIT[i], TOUCHING_BIT[to])
            && code >> (16 + from_bit) & 1 == 1
        {
            out |= 1 << (16 + to_bit);
        }
    }
    out
}

/// The smallest code of the shape's eight rotations and reflections.
#[must_use]
pub fn canonical(code: Shape) -> Shape {
    symmetries()
        .iter()
        .map(|map| transform(code, map))
        .min()
        .unwrap_or(code)
}

/// The table in force (see [`Gammas::in_force`]).
static TABLE: OnceLock<Gammas> = OnceLock::new();

/// Fitted strengths of every feature value.
#[derive(Debug, Clone)]
pub struct Gammas {
    /// For each group but the shape, its values' gammas (index 0 is 1).
    tactical: [Vec<f32>; GROUPS - 1],
    /// Canonical shape → gamma, as fitted.
    shapes: HashMap<Shape, f32>,
    /// Every raw shape code → gamma (1 for shapes never seen).
    by_code: Vec<f32>,
}

impl Gammas {
    /// Every gamma 1: no knowledge.
    #[must_use]
    pub fn neutral() -> Gammas {
        Gammas::from_parts(
            std::array::from_fn(|g| vec![1.0; TACTICAL_VALUES[g] as usize + 1]),
            HashMap::new(),
        )
    }

    fn from_parts(tactical: [Vec<f32>; GROUPS - 1], shapes: HashMap<Shape, f32>) -> Gammas {
        // Every code whose canonical form is a fitted shape is one of that
        // shape's eight transforms.
        let mut by_code = vec![1.0f32; SHAPE_CODES];
        for (&code, &g) in &shapes {
            for map in symmetries() {
                by_code[transform(code, map) as usize & (SHAPE_CODES - 1)] = g;
            }
        }
        Gammas {
            tactical,
            shapes,
            by_code,
        }
    }

    /// The table the search uses: the one built into the crate, unless
    /// [`Gammas::install`] put another in its place first.
    #[must_use]
    pub fn in_force() -> &'static Gammas {
        TABLE.get_or_init(|| {
            // The file is part of the source and a test reads it whole, so
            // it cannot fail here; a neutral table is the safe fallback.
            Gammas::parse(include_str!("../data/patterns.txt"))
                .unwrap_or_else(|_| Gammas::neutral())
        })
    }

    /// Makes `gammas` the table in force for the rest of the process (to
    /// try a newly fitted table in matches). Refused (false) once a table
    /// is in use.
    #[must_use]
    pub fn install(gammas: Gammas) -> bool {
        TABLE.set(gammas).is_ok()
    }

    /// A move's strength: the product of its features' gammas.
    #[must_use]
    pub fn strength(&self, f: &Features) -> f32 {
        let mut s = self.by_code[f.values[SHAPE] as usize & (SHAPE_CODES - 1)];
        for (g, table) in self.tactical.iter().enumerate() {
            s *= table[f.values[g] as usize];
        }
        s
    }

    /// The gamma of a raw shape alone.
    #[must_use]
    pub fn shape_gamma(&self, code: Shape) -> f32 {
        self.by_code[code as usize & (SHAPE_CODES - 1)]
    }

    /// The gamma of `value` in tactical group `group` (by name order).
    #[must_use]
    pub fn tactical_gamma(&self, group: usize, value: u32) -> Option<f32> {
        self.tactical.get(group)?.get(value as usize).copied()
    }

    /// Shapes with a fitted gamma.
    #[must_use]
    pub fn shape_count(&self) -> usize {
        self.shapes.len()
    }

    /// Reads the text form written by [`Gammas::to_text`].
    pub fn parse(text: &str) -> Result<Gammas, String> {
        let mut tactical: [Vec<f32>; GROUPS - 1] =
            std::array::from_fn(|g| vec![1.0; TACTICAL_VALUES[g] as usize + 1]);
        let mut shapes = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |what: &str| format!("line {}: {what}: `{line}`", i + 1);
            let mut cols = line.split_whitespace();
            let (Some(group), Some(value), Some(gamma), None) =
                (cols.next(), cols.next(), cols.next(), cols.next())
            else {
                return Err(bad("not `group value gamma`"));
            };
            let gamma: f32 = gamma.parse().map_err(|_| bad("gamma is not a number"))?;
            if !gamma.is_finite() || gamma <= 0.0 {
                return Err(bad("gamma must be positive"));
            }
            if group == "shape" {
                let code = u32::from_str_radix(value.trim_start_matches("0x"), 16)
                    .map_err(|_| bad("shape is not a hex code"))?;
                if code as usize >= SHAPE_CODES || canonical(code) != code {
                    return Err(bad("shape code is not canonical"));
                }
                shapes.insert(code, gamma);
                continue;
            }
            let g = GROUP_NAMES
                .iter()
                .position(|&n| n == group)
                .filter(|&g| g != SHAPE)
                .ok_or_else(|| bad("unknown group"))?;
            let value: usize = value.parse().map_err(|_| bad("value is not a number"))?;
            let slot = tactical[g]
                .get_mut(value)
                .filter(|_| value > 0)
                .ok_or_else(|| bad("value out of range"))?;
            *slot = gamma;
        }
        Ok(Gammas::from_parts(tactical, shapes))
    }

    /// The table as text: one `group value gamma` line per feature value.
    #[must_use]
    pub fn to_text(&self, header: &str) -> String {
        let mut out = String::new();
        for line in header.lines() {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        for (g, table) in self.tactical.iter().enumerate() {
            for (value, gamma) in table.iter().enumerate().skip(1) {
                out.push_str(&format!("{} {value} {gamma:.4}\n", GROUP_NAMES[g]));
            }
        }
        let mut shapes: Vec<_> = self.shapes.iter().collect();
        shapes.sort_by_key(|(code, _)| **code);
        for (code, gamma) in shapes {
            out.push_str(&format!("shape {code:05x} {gamma:.4}\n"));
        }
        out
    }
}

/// One training position: the candidates' features (shapes canonical) and
/// which of them was played.
#[derive(Debug, Clone)]
pub struct Position {
    pub candidates: Vec<Features>,
    pub chosen: usize,
}

/// The training position before `color` plays `played`, or `None` when
/// the move is not among the candidates (an own-eye fill, say).
#[must_use]
pub fn position(
    board: &Board,
    color: Color,
    played: Vertex,
    last: Vertex,
    last2: Vertex,
) -> Option<Position> {
    // The moves the search expands a node with.
    let moves = all_playout_candidates(board, color);
    let chosen = moves.iter().position(|&v| v == played)?;
    let candidates = moves
        .iter()
        .map(|&v| {
            let mut f = features(board, v, color, last, last2);
            f.values[SHAPE] = canonical(f.values[SHAPE]);
            f
        })
        .collect();
    Some(Position { candidates, chosen })
}

/// What a fit gives back beside the gammas.
#[derive(Debug, Clone)]
pub struct Fit {
    pub gammas: Gammas,
    /// Shapes seen often enough to get their own gamma.
    pub shapes: usize,
}

/// Fits the gammas to `positions` by minorization–maximization: each sweep
/// updates one group at a time, every value's gamma to its wins over the
/// sum of its teammates' share of each position's total strength. Every
/// gamma also gets one virtual win and one virtual loss against a gamma of
/// 1, which keeps rare values near 1. Shapes seen as a candidate fewer than
/// `min_shape_count` times keep gamma 1.
#[must_use]
pub fn train(positions: &[Position], sweeps: usize, min_shape_count: u32) -> Fit {
    // Index every feature value: tactical groups first, then shapes.
    let mut offsets = [0usize; GROUPS];
    let mut next = 0;
    for g in 0..GROUPS - 1 {
        offsets[g] = next;
        next += TACTICAL_VALUES[g] as usize + 1;
    }
    offsets[SHAPE] = next;
    let mut shape_count: HashMap<Shape, u32> = HashMap::new();
    for p in positions {
        for c in &p.candidates {
            *shape_count.entry(c.values[SHAPE]).or_default() += 1;
        }
    }
    let mut shape_index: HashMap<Shape, usize> = HashMap::new();
    let mut kept: Vec<Shape> = shape_count
        .iter()
        .filter(|&(_, &n)| n >= min_shape_count)
        .map(|(&s, _)| s)
        .collect();
    kept.sort_unstable();
    for &s in &kept {
        shape_index.insert(s, next);
        next += 1;
    }
    // A shared "unknown shape" slot, held at 1.
    let unknown = next;
    next += 1;
    let total = next;
    // Each candidate as its feature indices (absent tactical values point
    // at the group's slot 0, held at 1).
    let index = |f: &Features| -> [usize; GROUPS] {
        let mut out = [0usize; GROUPS];
        for g in 0..GROUPS - 1 {
            out[g] = offsets[g] + f.values[g] as usize;
        }
        out[SHAPE] = shape_index
            .get(&f.values[SHAPE])
            .copied()
            .unwrap_or(unknown);
        out
    };
    let data: Vec<(Vec<[usize; GROUPS]>, usize)> = positions
        .iter()
        .map(|p| (p.candidates.iter().map(index).collect(), p.chosen))
        .collect();
    let fixed = |i: usize| i == unknown || (0..GROUPS - 1).any(|g| i == offsets[g]);
    let mut gamma = vec![1.0f64; total];
    let mut wins = vec![0.0f64; total];
    for (cands, chosen) in &data {
        for &i in &cands[*chosen] {
            wins[i] += 1.0;
        }
    }
    let group_of = |i: usize| -> usize {
        if i >= offsets[SHAPE] {
            SHAPE
        } else {
            (0..GROUPS - 1)
                .rev()
                .find(|&g| i >= offsets[g])
                .unwrap_or(0)
        }
    };
    let mut denominator = vec![0.0f64; total];
    for _ in 0..sweeps {
        for g in 0..GROUPS {
            denominator.iter_mut().for_each(|d| *d = 0.0);
            for (cands, _) in &data {
                let strengths: Vec<f64> = cands
                    .iter()
                    .map(|c| c.iter().map(|&i| gamma[i]).product())
                    .collect();
                let e: f64 = strengths.iter().sum();
                for (c, s) in cands.iter().zip(&strengths) {
                    let i = c[g];
                    denominator[i] += s / gamma[i] / e;
                }
            }
            for i in 0..total {
                if group_of(i) != g || fixed(i) {
                    continue;
                }
                let d = denominator[i] + 2.0 / (gamma[i] + 1.0);
                gamma[i] = (wins[i] + 1.0) / d;
            }
        }
    }
    let mut tactical: [Vec<f32>; GROUPS - 1] =
        std::array::from_fn(|g| vec![1.0; TACTICAL_VALUES[g] as usize + 1]);
    for (g, table) in tactical.iter_mut().enumerate() {
        for (value, slot) in table.iter_mut().enumerate().skip(1) {
            *slot = gamma[offsets[g] + value] as f32;
        }
    }
    let shapes: HashMap<Shape, f32> = kept
        .iter()
        .map(|s| (*s, gamma[shape_index[s]] as f32))
        .collect();
    Fit {
        shapes: shapes.len(),
        gammas: Gammas::from_parts(tactical, shapes),
    }
}

/// How well `gammas` predict the moves of `positions`: the share in which
/// the played move is the strongest candidate, and the mean log-likelihood
/// of the played move.
#[must_use]
pub fn evaluate(gammas: &Gammas, positions: &[Position]) -> (f64, f64) {
    let mut first = 0.0f64;
    let mut log_likelihood = 0.0f64;
    for p in positions {
        let strengths: Vec<f32> = p.candidates.iter().map(|c| gammas.strength(c)).collect();
        let total: f64 = strengths.iter().map(|&s| f64::from(s)).sum();
        let chosen = strengths[p.chosen];
        // A tie for the strongest counts as its share.
        if strengths.iter().all(|&s| s <= chosen) {
            let ties = strengths.iter().filter(|&&s| s == chosen).count();
            first += 1.0 / ties as f64;
        }
        log_likelihood += (f64::from(chosen) / total).ln();
    }
    let n = positions.len().max(1) as f64;
    (first / n, log_likelihood / n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &str) -> Board {
        Board::from_ascii(rows).expect("a board")
    }

    #[test]
    fn the_builtin_table_reads_whole() {
        let text = include_str!("../data/patterns.txt");
        let gammas = Gammas::parse(text).expect("the built-in table parses");
        assert!(gammas.shape_count() > 100, "it has fitted shapes");
        // Capturing to save an own chain is among the strongest features,
        // a big self-atari among the weakest.
        let save = gammas.tactical_gamma(CAPTURE, 1).expect("capture 1");
        let big_self_atari = gammas.tactical_gamma(SELF_ATARI, 2).expect("self_atari 2");
        assert!(save > 5.0, "capture to save: {save}");
        assert!(big_self_atari < 0.5, "big self-atari: {big_self_atari}");
    }

    #[test]
    fn every_code_of_a_fitted_shape_reads_its_gamma() {
        let gammas = Gammas::in_force();
        let mut fitted = 0;
        for code in 0..SHAPE_CODES as Shape {
            let expected = gammas.shapes.get(&canonical(code)).copied();
            fitted += usize::from(expected.is_some());
            assert_eq!(
                gammas.shape_gamma(code),
                expected.unwrap_or(1.0),
                "{code:05x}"
            );
        }
        assert!(fitted > gammas.shape_count(), "shapes have several codes");
    }

    #[test]
    fn canonical_codes_agree_across_the_symmetries() {
        // A shape and its rotations and mirror images share one code, and
        // colours are the mover's.
        let b = board(
            ". . . . .\n\
             . X O . .\n\
             . . . . .\n\
             . . . . .\n\
             . . . . .",
        );
        let v = b.vertex(b.size().parse_point("C3").expect("C3"));
        let black = canonical(shape(&b, v, Color::Black));
        for (mirrored, turned) in [(". . O X .", ". . . . ."), (". . . X .", ". . . O .")] {
            let b2 = board(&format!(
                ". . . . .\n{mirrored}\n{turned}\n. . . . .\n. . . . ."
            ));
            assert_eq!(canonical(shape(&b2, v, Color::Black)), black);
        }
        let swapped = board(
            ". . . . .\n\
             . O X . .\n\
             . . . . .\n\
             . . . . .\n\
             . . . . .",
        );
        assert_eq!(canonical(shape(&swapped, v, Color::White)), black);
        assert_ne!(canonical(shape(&b, v, Color::White)), black);
        for t in symmetries() {
            assert_eq!(canonical(transform(black, t)), black);
        }
    }

    #[test]
    fn features_name_the_tactics_of_a_move() {
        // White's C3 stone, the last move, is in atari: Black C2 takes it,
        // White C2 runs out.
        let b = board(
            ". . . . .\n\
             . . X . .\n\
             . X O X .\n\
             . . . . .\n\
             . . . . .",
        );
        let p = |s: &str| b.vertex(b.size().parse_point(s).expect("point"));
        let capture = features(&b, p("C2"), Color::Black, p("C3"), NO_VERTEX);
        assert_eq!(capture.values[CAPTURE], 2, "takes the last move's stone");
        assert_eq!(capture.values[LINE], 2);
        assert_eq!(capture.values[LAST], 1, "next to the last move");
        let escape = features(&b, p("C2"), Color::White, NO_VERTEX, NO_VERTEX);
        assert_eq!(escape.values[ESCAPE], 2, "extends to three liberties");
        assert_eq!(escape.values[CAPTURE], 0);
        let far = features(&b, p("E1"), Color::Black, p("C3"), NO_VERTEX);
        assert_eq!(far.values[LINE], 1);
        assert_eq!(far.values[LAST], 5, "2 + 2 + max(2, 2) = 6");
    }

    #[test]
    fn training_finds_the_move_that_is_always_played() {
        // Positions where the played move is always the capture: the fit
        // must rate captures far above the rest and predict them.
        let b = board(
            ". . . . . . . . .\n\
             . . . . . . . . .\n\
             . . . X . . . . .\n\
             . . X O X . . . .\n\
             . . . . . . . . .\n\
             . . . . . . . . .\n\
             . . . . . . . . .\n\
             . . . . . . . . .\n\
             . . . . . . . . .",
        );
        let target = b.vertex(b.size().parse_point("D5").expect("D5"));
        let last = b.vertex(b.size().parse_point("E6").expect("E6"));
        let one = position(&b, Color::Black, target, last, NO_VERTEX).expect("a candidate");
        let positions = vec![one; 20];
        let fit = train(&positions, 10, 1);
        let (first, _) = evaluate(&fit.gammas, &positions);
        assert!(first > 0.99, "the capture is predicted: {first}");
        let neutral = evaluate(&Gammas::neutral(), &positions);
        assert!(neutral.0 < 0.5);
        let text = fit.gammas.to_text("test");
        let back = Gammas::parse(&text).expect("its own text parses");
        assert_eq!(back.shape_count(), fit.gammas.shape_count());
    }
}
