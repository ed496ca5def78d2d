//! Move features and their learned strengths.
//!
//! A candidate move is described by a few features: whether it captures (and
//! what), escapes from atari, puts its own chain in atari, puts an enemy
//! chain in atari, its line from the edge, its distance to the last two
//! moves, and the 3×3 shape around it (with which of the four touching
//! chains are in atari), in the mover's colours and up to rotation and
//! reflection, and the larger shape that adds the four points two lines
//! away (the diamond of Manhattan distance two, as Coulom's and Pachi's
//! larger patterns grow the 3×3 one). Each feature value has a strength
//! (a gamma), and a move's strength is the product of its features'
//! gammas: the generalized Bradley–Terry model of Coulom's "Computing Elo
//! ratings of move patterns in the game of Go" (2007). The gammas are
//! fitted to the moves of game records by minorization–maximization
//! ([`train`]); the fitted tables are
//! built into the crate (made by `ttakji train-patterns`) and give the
//! search its priors: `data/patterns.txt`, 3×3 shapes only, for Easy and
//! Normal ([`Gammas::in_force`]), and `data/patterns-large.txt`, with the
//! larger shapes, for Hard ([`Gammas::large`]).

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
    "big_shape",
];

/// How many feature groups there are.
pub const GROUPS: usize = 9;

/// The groups before the shapes, each with a handful of values.
const TACTICAL: usize = 7;

const CAPTURE: usize = 0;
const ESCAPE: usize = 1;
const SELF_ATARI: usize = 2;
const ATARI: usize = 3;
const LINE: usize = 4;
const LAST: usize = 5;
const LAST2: usize = 6;
const SHAPE: usize = 7;
const BIG_SHAPE: usize = 8;

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
const TACTICAL_VALUES: [u32; TACTICAL] = [3, 2, 2, 2, 4, 8, 8];

/// A 3×3 shape: the eight points around the move (two bits each: empty,
/// own, enemy, off the board) and, in bits 16–19, which of the four
/// touching points hold a chain in atari.
pub type Shape = u32;

/// The 2²⁰ possible shape codes.
const SHAPE_CODES: usize = 1 << 20;

/// A larger shape: a 3×3 [`Shape`] and, in bits 20–27, the four points
/// two lines away from the move (two bits each, as the ring's).
pub type BigShape = u32;

/// The 2²⁸ possible larger shape codes.
const BIG_SHAPE_CODES: u32 = 1 << 28;

/// A candidate move's features: for each group its value (0 absent), the
/// shapes as their codes.
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
    values[BIG_SHAPE] = big_shape(board, v, color, values[SHAPE]);
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

/// The raw larger shape around `v` in `color`'s colours, given its 3×3
/// `shape`: the points two lines up, left, right and down (off the board
/// where the board ends), in that order, as the 3×3 code's rows run.
#[must_use]
pub fn big_shape(board: &Board, v: Vertex, color: Color, shape: Shape) -> BigShape {
    let (row, col) = coordinates(board, v);
    let size = i32::from(board.size().get());
    let s = board.stride() as i32;
    // The 3×3 code's first row is `v + s`: one line up is a row higher.
    let far = [(2, 0), (0, -2), (0, 2), (-2, 0)];
    let mut code = shape;
    for (i, (dr, dc)) in far.into_iter().enumerate() {
        let (r, c) = (row + dr, col + dc);
        let cell = if r < 0 || c < 0 || r >= size || c >= size {
            3
        } else {
            match board.color_at((v as i32 + dr * s + dc) as Vertex) {
                None => 0,
                Some(stone) if stone == color => 1,
                Some(_) => 2,
            }
        };
        code |= cell << (20 + 2 * i);
    }
    code
}

/// The bit of each cell of a larger shape code: the 3×3 ring's eight, then
/// the four points two lines away.
const fn cell_shift(cell: usize) -> u32 {
    if cell < 8 {
        2 * cell as u32
    } else {
        20 + 2 * (cell as u32 - 8)
    }
}

/// Where each of the twelve cells of a shape code (the ring row by row,
/// the centre skipped, then the four far points) goes under each of the
/// eight symmetries of the square. A 3×3 code has its far cells empty and
/// keeps them so.
fn symmetries() -> &'static [[usize; 12]; 8] {
    static TABLE: OnceLock<[[usize; 12]; 8]> = OnceLock::new();
    TABLE.get_or_init(|| {
        const CELLS: [(i32, i32); 12] = [
            (-1, -1),
            (-1, 0),
            (-1, 1),
            (0, -1),
            (0, 1),
            (1, -1),
            (1, 0),
            (1, 1),
            (-2, 0),
            (0, -2),
            (0, 2),
            (2, 0),
        ];
        let mut out = [[0usize; 12]; 8];
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
                    .expect("a symmetry maps the cells onto themselves");
            }
        }
        out
    })
}

/// The index among the touching points (atari bits) of each cell, if any.
const TOUCHING_BIT: [Option<u32>; 12] = [
    None,
    Some(0),
    None,
    Some(1),
    Some(2),
    None,
    Some(3),
    None,
    None,
    None,
    None,
    None,
];

fn transform(code: BigShape, map: &[usize; 12]) -> BigShape {
    let mut out = 0;
    for (i, &to) in map.iter().enumerate() {
        out |= ((code >> cell_shift(i)) & 3) << cell_shift(to);
        if let (Some(from_bit), Some(to_bit)) = (TOUCHING_BIT[i], TOUCHING_BIT[to])
            && code >> (16 + from_bit) & 1 == 1
        {
            out |= 1 << (16 + to_bit);
        }
    }
    out
}

/// The smallest code of the shape's (3×3 or larger) eight rotations and
/// reflections.
#[must_use]
pub fn canonical(code: BigShape) -> BigShape {
    symmetries()
        .iter()
        .map(|map| transform(code, map))
        .min()
        .unwrap_or(code)
}

/// A table put in place of the built-in ones (see [`Gammas::install`]).
static INSTALLED: OnceLock<Gammas> = OnceLock::new();

/// The built-in 3×3 table (see [`Gammas::in_force`]).
static BUILT_IN: OnceLock<Gammas> = OnceLock::new();

/// The built-in table with the larger shapes (see [`Gammas::large`]).
static BUILT_IN_LARGE: OnceLock<Gammas> = OnceLock::new();

/// Fitted strengths of every feature value.
#[derive(Debug, Clone)]
pub struct Gammas {
    /// For each group but the shapes, its values' gammas (index 0 is 1).
    tactical: [Vec<f32>; TACTICAL],
    /// Canonical shape → gamma, as fitted.
    shapes: HashMap<Shape, f32>,
    /// Every raw shape code → gamma (1 for shapes never seen).
    by_code: Vec<f32>,
    /// Canonical larger shape → gamma, as fitted.
    big_shapes: HashMap<BigShape, f32>,
    /// Every raw code of a fitted larger shape → its gamma.
    big_by_code: HashMap<BigShape, f32, CodeHash>,
}

/// A hasher for shape codes, which are already well spread in their low
/// bits: one multiplication (Fibonacci hashing) instead of SipHash, since
/// a search looks up every candidate of every node it expands.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeHash;

impl std::hash::BuildHasher for CodeHash {
    type Hasher = CodeHasher;
    fn build_hasher(&self) -> CodeHasher {
        CodeHasher(0)
    }
}

/// See [`CodeHash`].
#[derive(Debug, Clone, Copy)]
pub struct CodeHasher(u64);

impl std::hash::Hasher for CodeHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Gammas {
    /// Every gamma 1: no knowledge.
    #[must_use]
    pub fn neutral() -> Gammas {
        Gammas::from_parts(
            std::array::from_fn(|g| vec![1.0; TACTICAL_VALUES[g] as usize + 1]),
            HashMap::new(),
            HashMap::new(),
        )
    }

    fn from_parts(
        tactical: [Vec<f32>; TACTICAL],
        shapes: HashMap<Shape, f32>,
        big_shapes: HashMap<BigShape, f32>,
    ) -> Gammas {
        // Every code whose canonical form is a fitted shape is one of that
        // shape's eight transforms.
        let mut by_code = vec![1.0f32; SHAPE_CODES];
        for (&code, &g) in &shapes {
            for map in symmetries() {
                by_code[transform(code, map) as usize & (SHAPE_CODES - 1)] = g;
            }
        }
        let mut big_by_code = HashMap::with_hasher(CodeHash);
        for (&code, &g) in &big_shapes {
            for map in symmetries() {
                big_by_code.insert(transform(code, map), g);
            }
        }
        Gammas {
            tactical,
            shapes,
            by_code,
            big_shapes,
            big_by_code,
        }
    }

    /// The table the search uses: the 3×3 one built into the crate
    /// (`data/patterns.txt`), unless [`Gammas::install`] put another in
    /// its place first.
    #[must_use]
    pub fn in_force() -> &'static Gammas {
        INSTALLED.get().unwrap_or_else(|| {
            BUILT_IN.get_or_init(|| built_in(include_str!("../data/patterns.txt")))
        })
    }

    /// The table a search that weighs the larger shapes uses (Hard's): the
    /// one built into the crate with them (`data/patterns-large.txt`),
    /// unless [`Gammas::install`] put another in its place first.
    #[must_use]
    pub fn large() -> &'static Gammas {
        INSTALLED.get().unwrap_or_else(|| {
            BUILT_IN_LARGE.get_or_init(|| built_in(include_str!("../data/patterns-large.txt")))
        })
    }

    /// Makes `gammas` the table of every search for the rest of the
    /// process (to try a newly fitted table in matches). Refused (false)
    /// once one is installed.
    #[must_use]
    pub fn install(gammas: Gammas) -> bool {
        INSTALLED.set(gammas).is_ok()
    }

    /// A move's strength: the product of its features' gammas.
    #[must_use]
    pub fn strength(&self, f: &Features) -> f32 {
        let mut s = self.by_code[f.values[SHAPE] as usize & (SHAPE_CODES - 1)];
        for (g, table) in self.tactical.iter().enumerate() {
            s *= table[f.values[g] as usize];
        }
        if let Some(&g) = self.big_by_code.get(&f.values[BIG_SHAPE]) {
            s *= g;
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

    /// Larger shapes with a fitted gamma.
    #[must_use]
    pub fn big_shape_count(&self) -> usize {
        self.big_shapes.len()
    }

    /// Reads the text form written by [`Gammas::to_text`].
    pub fn parse(text: &str) -> Result<Gammas, String> {
        let mut tactical: [Vec<f32>; TACTICAL] =
            std::array::from_fn(|g| vec![1.0; TACTICAL_VALUES[g] as usize + 1]);
        let mut shapes = HashMap::new();
        let mut big_shapes = HashMap::new();
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
            let shape_group = match group {
                "shape" => Some((SHAPE_CODES as u32, &mut shapes)),
                "big_shape" => Some((BIG_SHAPE_CODES, &mut big_shapes)),
                _ => None,
            };
            if let Some((limit, table)) = shape_group {
                let code = u32::from_str_radix(value.trim_start_matches("0x"), 16)
                    .map_err(|_| bad("shape is not a hex code"))?;
                if code >= limit || canonical(code) != code {
                    return Err(bad("shape code is not canonical"));
                }
                table.insert(code, gamma);
                continue;
            }
            let g = GROUP_NAMES
                .iter()
                .position(|&n| n == group)
                .filter(|&g| g < TACTICAL)
                .ok_or_else(|| bad("unknown group"))?;
            let value: usize = value.parse().map_err(|_| bad("value is not a number"))?;
            let slot = tactical[g]
                .get_mut(value)
                .filter(|_| value > 0)
                .ok_or_else(|| bad("value out of range"))?;
            *slot = gamma;
        }
        Ok(Gammas::from_parts(tactical, shapes, big_shapes))
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
        let mut big_shapes: Vec<_> = self.big_shapes.iter().collect();
        big_shapes.sort_by_key(|(code, _)| **code);
        for (code, gamma) in big_shapes {
            out.push_str(&format!("big_shape {code:07x} {gamma:.4}\n"));
        }
        out
    }
}

/// A table built into the crate. The files are part of the source and a
/// test reads them whole, so this cannot fail; a neutral table is the safe
/// fallback.
fn built_in(text: &str) -> Gammas {
    Gammas::parse(text).unwrap_or_else(|_| Gammas::neutral())
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
            f.values[BIG_SHAPE] = canonical(f.values[BIG_SHAPE]);
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
    /// Larger shapes seen often enough to get their own gamma.
    pub big_shapes: usize,
}

/// Fits the gammas to `positions` by minorization–maximization: each sweep
/// updates one group at a time, every value's gamma to its wins over the
/// sum of its teammates' share of each position's total strength. Every
/// gamma also gets one virtual win and one virtual loss against a gamma of
/// 1, which keeps rare values near 1. Shapes (3×3 or larger) seen as a
/// candidate fewer than `min_shape_count` times keep gamma 1.
#[must_use]
pub fn train(positions: &[Position], sweeps: usize, min_shape_count: u32) -> Fit {
    // Index every feature value: tactical groups first, then each shape
    // group's shared "unknown shape" slot and its kept shapes. A group's
    // first slot (a tactical value's absence, the unknown shape) is held
    // at 1.
    let mut offsets = [0usize; GROUPS];
    let mut group_of = Vec::new();
    for g in 0..TACTICAL {
        offsets[g] = group_of.len();
        group_of.resize(group_of.len() + TACTICAL_VALUES[g] as usize + 1, g);
    }
    let mut kept: [Vec<BigShape>; 2] = [Vec::new(), Vec::new()];
    let mut shape_index: [HashMap<BigShape, usize>; 2] = [HashMap::new(), HashMap::new()];
    for (k, g) in [SHAPE, BIG_SHAPE].into_iter().enumerate() {
        let mut count: HashMap<BigShape, u32> = HashMap::new();
        for p in positions {
            for c in &p.candidates {
                *count.entry(c.values[g]).or_default() += 1;
            }
        }
        kept[k] = count
            .iter()
            .filter(|&(_, &n)| n >= min_shape_count)
            .map(|(&s, _)| s)
            .collect();
        kept[k].sort_unstable();
        offsets[g] = group_of.len();
        group_of.push(g);
        for &s in &kept[k] {
            shape_index[k].insert(s, group_of.len());
            group_of.push(g);
        }
    }
    let total = group_of.len();
    // Each candidate as its feature indices (absent tactical values point
    // at the group's slot 0, unknown shapes at the group's first slot).
    let index = |f: &Features| -> [usize; GROUPS] {
        let mut out = [0usize; GROUPS];
        for g in 0..TACTICAL {
            out[g] = offsets[g] + f.values[g] as usize;
        }
        for (k, g) in [SHAPE, BIG_SHAPE].into_iter().enumerate() {
            out[g] = shape_index[k]
                .get(&f.values[g])
                .copied()
                .unwrap_or(offsets[g]);
        }
        out
    };
    let data: Vec<(Vec<[usize; GROUPS]>, usize)> = positions
        .iter()
        .map(|p| (p.candidates.iter().map(index).collect(), p.chosen))
        .collect();
    let mut gamma = vec![1.0f64; total];
    let mut wins = vec![0.0f64; total];
    for (cands, chosen) in &data {
        for &i in &cands[*chosen] {
            wins[i] += 1.0;
        }
    }
    let mut denominator = vec![0.0f64; total];
    let mut strengths = Vec::new();
    for _ in 0..sweeps {
        for g in 0..GROUPS {
            denominator.iter_mut().for_each(|d| *d = 0.0);
            for (cands, _) in &data {
                strengths.clear();
                strengths.extend(
                    cands
                        .iter()
                        .map(|c| c.iter().map(|&i| gamma[i]).product::<f64>()),
                );
                let e: f64 = strengths.iter().sum();
                for (c, s) in cands.iter().zip(&strengths) {
                    let i = c[g];
                    denominator[i] += s / gamma[i] / e;
                }
            }
            for i in 0..total {
                if group_of[i] != g || i == offsets[g] {
                    continue;
                }
                let d = denominator[i] + 2.0 / (gamma[i] + 1.0);
                gamma[i] = (wins[i] + 1.0) / d;
            }
        }
    }
    let mut tactical: [Vec<f32>; TACTICAL] =
        std::array::from_fn(|g| vec![1.0; TACTICAL_VALUES[g] as usize + 1]);
    for (g, table) in tactical.iter_mut().enumerate() {
        for (value, slot) in table.iter_mut().enumerate().skip(1) {
            *slot = gamma[offsets[g] + value] as f32;
        }
    }
    let [shapes, big_shapes]: [HashMap<BigShape, f32>; 2] = std::array::from_fn(|k| {
        kept[k]
            .iter()
            .map(|s| (*s, gamma[shape_index[k][s]] as f32))
            .collect()
    });
    Fit {
        shapes: shapes.len(),
        big_shapes: big_shapes.len(),
        gammas: Gammas::from_parts(tactical, shapes, big_shapes),
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

    /// Around C3: Black's stone two lines above, White's two lines to the
    /// right, outside the 3×3 shape but inside the larger one.
    const TWO_AWAY: &str = ". . X . .\n\
                            . . . . .\n\
                            . . . . O\n\
                            . . . . .\n\
                            . . . . .";

    /// [`TWO_AWAY`] turned a quarter and mirrored.
    const TWO_AWAY_TURNED: &str = ". . . . .\n\
                                   . . . . .\n\
                                   X . . . .\n\
                                   . . . . .\n\
                                   . . O . .";

    #[test]
    fn the_builtin_tables_read_whole() {
        for (text, large) in [
            (include_str!("../data/patterns.txt"), false),
            (include_str!("../data/patterns-large.txt"), true),
        ] {
            let gammas = Gammas::parse(text).expect("the built-in table parses");
            assert!(gammas.shape_count() > 100, "it has fitted shapes");
            assert_eq!(gammas.big_shape_count() > 1000, large, "larger shapes");
            // Capturing to save an own chain is among the strongest
            // features, a big self-atari among the weakest.
            let save = gammas.tactical_gamma(CAPTURE, 1).expect("capture 1");
            let big_self_atari = gammas.tactical_gamma(SELF_ATARI, 2).expect("self_atari 2");
            assert!(save > 5.0, "capture to save: {save}");
            assert!(big_self_atari < 0.5, "big self-atari: {big_self_atari}");
        }
        assert!(Gammas::large().big_shape_count() > 1000);
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
    fn larger_shapes_see_two_lines_away_and_agree_across_the_symmetries() {
        let b = board(TWO_AWAY);
        let at = |b: &Board, s: &str| b.vertex(b.size().parse_point(s).expect("point"));
        let v = at(&b, "C3");
        let small = shape(&b, v, Color::Black);
        assert_eq!(
            small,
            shape(&board(&". . . . .\n".repeat(5)), v, Color::Black)
        );
        let big = big_shape(&b, v, Color::Black, small);
        assert_eq!(
            big & 0xF_FFFF,
            small,
            "the 3×3 shape is kept in the low bits"
        );
        let far: Vec<u32> = (0..4).map(|i| (big >> (20 + 2 * i)) & 3).collect();
        assert_eq!(
            far,
            [1, 0, 2, 0],
            "up own, left empty, right enemy, down empty"
        );
        // Turned a quarter and mirrored, and with the colours swapped for
        // White, it is the same larger shape.
        let turned = board(TWO_AWAY_TURNED);
        let canonical_big = canonical(big);
        let t = big_shape(&turned, v, Color::Black, shape(&turned, v, Color::Black));
        assert_eq!(canonical(t), canonical_big);
        let swapped = board(
            ". . O . .\n\
             . . . . .\n\
             . . . . X\n\
             . . . . .\n\
             . . . . .",
        );
        let w = big_shape(&swapped, v, Color::White, shape(&swapped, v, Color::White));
        assert_eq!(canonical(w), canonical_big);
        let both = board(
            ". . X . .\n\
             . . . . .\n\
             . . . . X\n\
             . . . . .\n\
             . . . . .",
        );
        let b2 = big_shape(&both, v, Color::Black, shape(&both, v, Color::Black));
        assert_ne!(
            canonical(b2),
            canonical_big,
            "two own stones are another shape"
        );
        for map in symmetries() {
            assert_eq!(canonical(transform(big, map)), canonical_big);
        }
        // Off the board two lines away: from B2, left and down are off.
        let corner = at(&b, "B2");
        let c = big_shape(&b, corner, Color::Black, shape(&b, corner, Color::Black));
        assert_eq!((c >> 22) & 3, 3, "left of B2 by two is off the board");
        assert_eq!((c >> 26) & 3, 3, "below B2 by two is off the board");
        assert_eq!((c >> 24) & 3, 0, "D2 is empty");
    }

    #[test]
    fn a_fitted_larger_shape_weighs_in_the_strength_from_every_side() {
        // Gamma 4 for the larger shape of Black C3 above: every rotation
        // of it on the board reads 4, and the table's text keeps it.
        let b = board(TWO_AWAY);
        let v = b.vertex(b.size().parse_point("C3").expect("C3"));
        let f = features(&b, v, Color::Black, NO_VERTEX, NO_VERTEX);
        let code = canonical(f.values[BIG_SHAPE]);
        let text = format!("big_shape {code:07x} 4.0\n");
        let gammas = Gammas::parse(&text).expect("a larger shape line parses");
        assert_eq!(gammas.big_shape_count(), 1);
        let neutral = Gammas::neutral();
        assert!((gammas.strength(&f) / neutral.strength(&f) - 4.0).abs() < 1e-5);
        let turned = board(TWO_AWAY_TURNED);
        let g = features(&turned, v, Color::Black, NO_VERTEX, NO_VERTEX);
        assert!((gammas.strength(&g) - 4.0 * neutral.strength(&g)).abs() < 1e-5);
        let back = Gammas::parse(&gammas.to_text("test")).expect("its own text parses");
        assert_eq!(back.big_shape_count(), 1);
        // A code that is not the canonical one is refused, as is one too wide.
        let raw = f.values[BIG_SHAPE];
        if raw != code {
            assert!(Gammas::parse(&format!("big_shape {raw:07x} 4.0")).is_err());
        }
        assert!(Gammas::parse("big_shape 10000000 4.0").is_err());
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
