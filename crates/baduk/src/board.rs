//! The fast board: stones, chains, liberties, captures and the Zobrist hash.
//!
//! The board knows nothing of history (superko, passes, whose turn): that is
//! [`crate::Game`]'s job. Search and playouts use the board alone.
//!
//! Points are stored in a padded one-dimensional array (a border ring around
//! the board), so neighbours are `±1` and `±stride` with no bounds checks.
//! Chains keep a circular list of their stones and *pseudo-liberties* (one per
//! stone–empty adjacency) with the sum and sum of squares of the liberty
//! indexes: a chain is captured when the count reaches zero, and it is in
//! atari exactly when all its pseudo-liberties are the same point, which is
//! when `sum² = count · sum_of_squares`. The three are packed in one `u64`
//! (see [`LibRecord`]), so adding or removing a liberty is a single addition.

use crate::point::{BoardSize, ByColor, Color, Point};

/// An index into the padded board array. Every on-board point has one; the
/// border ring around the board has indexes too, never occupied by stones.
pub type Vertex = usize;

/// Every vertex index is below this: the padded array of the largest board,
/// (19 + 2)² = 441, rounded up to a power of two so that indexing with
/// `v & VERTEX_MASK` needs no bounds check in the hot loops.
pub const MAX_VERTICES: usize = 512;
const VERTEX_MASK: usize = MAX_VERTICES - 1;

const EMPTY: u8 = 0;
const BLACK: u8 = 1;
const WHITE: u8 = 2;
const BORDER: u8 = 3;

/// "No vertex", for the simple-ko point; never a real board vertex because
/// index 0 is a corner of the border ring.
pub const NO_VERTEX: Vertex = 0;

/// The chain head recorded for every point without a stone (empty or
/// border): a corner of the border ring whose liberty record is a spare
/// that absorbs the updates `play` makes without asking what a neighbour
/// is. It is never read as a chain's.
const SPARE: Vertex = 0;

/// A chain's pseudo-liberties packed in one word: the count in the low
/// [`LIB_COUNT_BITS`] bits, the sum of their vertex indexes in the next
/// [`LIB_SUM_BITS`], the sum of squares above. On 19×19 a chain has at most
/// 684 stone–empty adjacencies (the board's edges), vertex indexes are below
/// 441, so the count stays below 2¹¹, the sum below 2²⁰ and the sum of
/// squares below 2³³: no field ever carries into the next.
type LibRecord = u64;
const LIB_COUNT_BITS: u32 = 11;
const LIB_SUM_BITS: u32 = 20;
const LIB_SQ_SHIFT: u32 = LIB_COUNT_BITS + LIB_SUM_BITS;

/// The [`LibRecord`] of one pseudo-liberty on each vertex.
static LIB_KEY: [LibRecord; MAX_VERTICES] = {
    let mut keys = [0; MAX_VERTICES];
    let mut v = 0;
    while v < MAX_VERTICES {
        let x = v as u64;
        keys[v] = 1 | (x << LIB_COUNT_BITS) | ((x * x) << LIB_SQ_SHIFT);
        v += 1;
    }
    keys
};

/// All ones for an empty cell, nothing for a stone or the border: selects
/// a neighbour's liberty key without a branch.
const EMPTY_MASK: [LibRecord; 4] = [LibRecord::MAX, 0, 0, 0];

/// The pseudo-liberty count of a record.
#[inline]
const fn lib_count(r: LibRecord) -> u64 {
    r & ((1 << LIB_COUNT_BITS) - 1)
}

/// The sum of a record's liberty indexes.
#[inline]
const fn lib_sum(r: LibRecord) -> u64 {
    (r >> LIB_COUNT_BITS) & ((1 << LIB_SUM_BITS) - 1)
}

/// Whether a record's pseudo-liberties are all one point (and there is one).
#[inline]
const fn lib_single(r: LibRecord) -> bool {
    let n = lib_count(r);
    let sum = lib_sum(r);
    n > 0 && sum * sum == n * (r >> LIB_SQ_SHIFT)
}

/// One empty neighbour in [`Board`]'s neighbour counts; black and white
/// counts sit four and eight bits up.
const NBR_EMPTY: u16 = 1;

/// The neighbour-count unit of a cell value (`BLACK` or `WHITE`).
const fn nbr_unit(cell: u8) -> u16 {
    1 << (4 * cell as u16)
}

const fn cell_of(c: Color) -> u8 {
    match c {
        Color::Black => BLACK,
        Color::White => WHITE,
    }
}

/// What stands on a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stone {
    Empty,
    Black,
    White,
}

impl Stone {
    /// The colour of the stone, or `None` for an empty point.
    #[must_use]
    pub const fn color(self) -> Option<Color> {
        match self {
            Stone::Empty => None,
            Stone::Black => Some(Color::Black),
            Stone::White => Some(Color::White),
        }
    }
}

impl From<Option<Color>> for Stone {
    fn from(c: Option<Color>) -> Stone {
        match c {
            None => Stone::Empty,
            Some(Color::Black) => Stone::Black,
            Some(Color::White) => Stone::White,
        }
    }
}

/// SplitMix64: a small, fixed PRNG. Its output is the same on every machine,
/// which the Zobrist keys and every seeded calculation depend on.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub const fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0), by multiply-shift: fast, and fixed for a seed.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next() >> 32) * n as u128) >> 32) as usize
    }
}

/// Zobrist keys: one per colour and vertex, from SplitMix64 with a fixed seed.
static ZOBRIST: ByColor<[u64; MAX_VERTICES]> = {
    let mut keys = [[0u64; MAX_VERTICES]; 2];
    let mut rng = SplitMix64::new(0x7474_616b_6a69_2d67); // "ttakji-g"
    let mut c = 0;
    while c < 2 {
        let mut v = 0;
        while v < MAX_VERTICES {
            keys[c][v] = rng.next();
            v += 1;
        }
        c += 1;
    }
    ByColor::new(keys[0], keys[1])
};

/// The Zobrist key of a `color` stone on vertex `v`.
#[must_use]
pub fn zobrist(color: Color, v: Vertex) -> u64 {
    ZOBRIST[color][v]
}

/// The position of stones on a board, with chains and liberties kept up to date.
///
/// `Clone` is a plain copy of fixed-size arrays (no heap), so playouts can
/// start from a copy cheaply.
#[derive(Clone)]
pub struct Board {
    size: BoardSize,
    stride: usize,
    cells: [u8; MAX_VERTICES],
    /// For every point: how many of its neighbours are empty, black and
    /// white, four bits each (see [`NBR_EMPTY`]); the rest are border.
    nbrs: [u16; MAX_VERTICES],
    /// For a stone: the head vertex of its chain.
    head: [u16; MAX_VERTICES],
    /// For a stone: the next stone of its chain (a circular list).
    next: [u16; MAX_VERTICES],
    /// For a chain head: its pseudo-liberties (count, sum, sum of squares).
    libs: [LibRecord; MAX_VERTICES],
    /// For a chain head: number of stones.
    chain_len: [u16; MAX_VERTICES],
    /// Empty on-board vertices, in no particular order, with each one's position.
    empties: [u16; MAX_VERTICES],
    empty_pos: [u16; MAX_VERTICES],
    empty_count: usize,
    hash: u64,
    /// Stones captured by Black and by White (prisoners).
    prisoners: ByColor<u32>,
    /// The point where the simple-ko rule forbids the immediate retake.
    ko: Vertex,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Board {}\n{}", self.size, self.to_ascii())
    }
}

/// A board in a few bytes: its stones, prisoners and simple-ko point,
/// which is all of a position. [`Board::pack`] makes one and
/// [`PackedBoard::unpack`] the same board again; a game that waits for its
/// next move keeps this instead of the board's kilobytes of bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedBoard {
    size: BoardSize,
    /// As [`Board::push_packed_stones`] writes them: two bits a point.
    stones: Box<[u8]>,
    prisoners: ByColor<u32>,
    ko: u16,
}

impl PackedBoard {
    /// The board again, with the same stones, hash, prisoners and ko point.
    /// Only the order of [`Board::empty_vertices`] may differ.
    #[must_use]
    pub fn unpack(&self) -> Board {
        let mut board = Board::new(self.size);
        let n = usize::from(self.size.get());
        // Every chain of a legal position has a liberty, and so has every
        // part of one put down on the way to it: stones put down one by
        // one in any order capture nothing.
        for i in 0..self.stones.len() * 4 {
            let color = match (self.stones[i / 4] >> (2 * (i % 4))) & 3 {
                BLACK => Color::Black,
                WHITE => Color::White,
                _ => continue,
            };
            let v = (i / n + 1) * board.stride + i % n + 1;
            board.play(v, color);
        }
        board.prisoners = self.prisoners;
        board.ko = Vertex::from(self.ko);
        board
    }

    /// The empty board of `size`, without a byte of stones.
    #[must_use]
    pub(crate) fn empty(size: BoardSize) -> PackedBoard {
        PackedBoard {
            size,
            stones: Box::default(),
            prisoners: ByColor::both(0),
            ko: 0,
        }
    }

    /// The size of the board it holds.
    #[must_use]
    pub fn size(&self) -> BoardSize {
        self.size
    }
}

impl PartialEq for Board {
    /// Boards are equal when the same stones stand on the same points
    /// (prisoners and the ko point are not part of the position).
    fn eq(&self, other: &Board) -> bool {
        self.size == other.size && self.cells == other.cells
    }
}

impl Eq for Board {}

impl Board {
    /// An empty board.
    #[must_use]
    pub fn new(size: BoardSize) -> Board {
        let n = usize::from(size.get());
        let stride = n + 2;
        let mut board = Board {
            size,
            stride,
            cells: [BORDER; MAX_VERTICES],
            nbrs: [0; MAX_VERTICES],
            head: [0; MAX_VERTICES],
            next: [0; MAX_VERTICES],
            libs: [0; MAX_VERTICES],
            chain_len: [0; MAX_VERTICES],
            empties: [0; MAX_VERTICES],
            empty_pos: [0; MAX_VERTICES],
            empty_count: 0,
            hash: 0,
            prisoners: ByColor::both(0),
            ko: NO_VERTEX,
        };
        for p in size.all_points() {
            let v = board.vertex(p);
            board.cells[v] = EMPTY;
            board.push_empty(v);
        }
        for p in size.all_points() {
            let v = board.vertex(p);
            let empty = board
                .neighbours(v)
                .iter()
                .filter(|&&n| board.cells[n] == EMPTY)
                .count();
            board.nbrs[v] = empty as u16 * NBR_EMPTY;
        }
        board
    }

    /// The board's size.
    #[must_use]
    pub fn size(&self) -> BoardSize {
        self.size
    }

    /// The padded-array stride (`size + 2`): `v ± stride` is the point above/below.
    #[must_use]
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The vertex of an on-board point. The point must be on this board.
    #[must_use]
    pub fn vertex(&self, p: Point) -> Vertex {
        debug_assert!(self.size.contains(p));
        (usize::from(p.row()) + 1) * self.stride + usize::from(p.col()) + 1
    }

    /// The point of an on-board vertex.
    #[must_use]
    pub fn point(&self, v: Vertex) -> Point {
        let row = v / self.stride - 1;
        let col = v % self.stride - 1;
        // Both are below 19 on any board this type builds.
        Point::new(col as u8, row as u8)
    }

    /// Whether `v` is a point of the board (not the border ring, not beyond it).
    #[must_use]
    pub fn is_on_board(&self, v: Vertex) -> bool {
        v < MAX_VERTICES && self.cells[v & VERTEX_MASK] != BORDER
    }

    /// The four orthogonal neighbours of `v` (some may be border).
    #[inline]
    #[must_use]
    pub fn neighbours(&self, v: Vertex) -> [Vertex; 4] {
        [v - self.stride, v - 1, v + 1, v + self.stride]
    }

    /// The 3×3 neighbourhood of `v` as a 16-bit code: two bits for each of
    /// the eight points around it (0 empty, 1 black, 2 white, 3 off the
    /// board), from the top-left, row by row, skipping `v` itself.
    #[inline]
    #[must_use]
    pub fn neighbourhood_code(&self, v: Vertex) -> u16 {
        let s = self.stride;
        let around = [
            v + s - 1,
            v + s,
            v + s + 1,
            v - 1,
            v + 1,
            v - s - 1,
            v - s,
            v - s + 1,
        ];
        around.iter().enumerate().fold(0u16, |code, (i, &n)| {
            code | (u16::from(self.cells[n & VERTEX_MASK]) << (2 * i))
        })
    }

    /// The four diagonal neighbours of `v` (some may be border).
    #[inline]
    #[must_use]
    pub fn diagonals(&self, v: Vertex) -> [Vertex; 4] {
        [
            v - self.stride - 1,
            v - self.stride + 1,
            v + self.stride - 1,
            v + self.stride + 1,
        ]
    }

    /// What stands on vertex `v`; the border reads as empty.
    #[inline]
    #[must_use]
    pub fn stone_at(&self, v: Vertex) -> Stone {
        match self.cells[v & VERTEX_MASK] {
            BLACK => Stone::Black,
            WHITE => Stone::White,
            _ => Stone::Empty,
        }
    }

    /// The colour of the stone on `v`, if any.
    #[inline]
    #[must_use]
    pub fn color_at(&self, v: Vertex) -> Option<Color> {
        self.stone_at(v).color()
    }

    /// Whether `v` is an empty point of the board.
    #[inline]
    #[must_use]
    pub fn is_empty(&self, v: Vertex) -> bool {
        self.cells[v & VERTEX_MASK] == EMPTY
    }

    /// Whether `v` is part of the border ring.
    #[inline]
    #[must_use]
    pub fn is_border(&self, v: Vertex) -> bool {
        self.cells[v & VERTEX_MASK] == BORDER
    }

    /// What stands on point `p`.
    #[must_use]
    pub fn get(&self, p: Point) -> Stone {
        if self.size.contains(p) {
            self.stone_at(self.vertex(p))
        } else {
            Stone::Empty
        }
    }

    /// The Zobrist hash of the stones on the board (not of whose turn it is).
    #[must_use]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Stones `color` has captured so far.
    #[must_use]
    pub fn prisoners(&self, color: Color) -> u32 {
        self.prisoners[color]
    }

    /// The simple-ko point (where the immediate retake is forbidden), if any.
    #[must_use]
    pub fn ko_point(&self) -> Option<Vertex> {
        (self.ko != NO_VERTEX).then_some(self.ko)
    }

    /// Empty on-board vertices, in no fixed order.
    #[must_use]
    pub fn empty_vertices(&self) -> &[u16] {
        &self.empties[..self.empty_count]
    }

    /// Where the empty vertex `v` stands in [`Board::empty_vertices`].
    #[inline]
    #[must_use]
    pub fn empty_index(&self, v: Vertex) -> usize {
        usize::from(self.empty_pos[v & VERTEX_MASK])
    }

    /// Every on-board vertex, row by row from A1.
    pub fn vertices(&self) -> impl Iterator<Item = Vertex> + '_ {
        let n = usize::from(self.size.get());
        let stride = self.stride;
        (0..n).flat_map(move |r| (0..n).map(move |c| (r + 1) * stride + c + 1))
    }

    /// Number of stones of `color` on the board.
    #[must_use]
    pub fn stone_count(&self, color: Color) -> usize {
        let cell = cell_of(color);
        self.cells.iter().filter(|&&c| c == cell).count()
    }

    /// The bytes [`Board::push_packed_stones`] writes for a board of `size`:
    /// two bits a point.
    #[must_use]
    pub fn packed_stones_len(size: BoardSize) -> usize {
        size.points().div_ceil(4)
    }

    /// Appends the stones at two bits a point (row by row from A1, four
    /// points a byte, the first in the low bits): 0 empty, 1 black, 2
    /// white. Two positions are the same exactly when these bytes are.
    pub fn push_packed_stones(&self, out: &mut Vec<u8>) {
        let mut byte = 0u8;
        let mut filled = 0;
        for v in self.vertices() {
            byte |= self.cells[v & VERTEX_MASK] << (2 * filled);
            filled += 1;
            if filled == 4 {
                out.push(byte);
                byte = 0;
                filled = 0;
            }
        }
        if filled > 0 {
            out.push(byte);
        }
    }

    /// Whether the stones equal bytes made by [`Board::push_packed_stones`].
    #[must_use]
    pub fn matches_packed_stones(&self, stones: &[u8]) -> bool {
        stones.len() == Board::packed_stones_len(self.size)
            && self
                .vertices()
                .enumerate()
                .all(|(i, v)| (stones[i / 4] >> (2 * (i % 4))) & 3 == self.cells[v & VERTEX_MASK])
    }

    /// The board in a few bytes, for [`PackedBoard::unpack`].
    #[must_use]
    pub fn pack(&self) -> PackedBoard {
        PackedBoard {
            size: self.size,
            stones: {
                let mut stones = Vec::with_capacity(Board::packed_stones_len(self.size));
                self.push_packed_stones(&mut stones);
                stones.into_boxed_slice()
            },
            prisoners: self.prisoners,
            // A vertex is below MAX_VERTICES (512).
            ko: self.ko as u16,
        }
    }

    // ----- chains -----

    /// The head vertex of the chain on `v` (a stone must stand there).
    #[inline]
    #[must_use]
    pub fn chain_head(&self, v: Vertex) -> Vertex {
        usize::from(self.head[v & VERTEX_MASK])
    }

    /// Number of stones in the chain on `v`.
    #[must_use]
    pub fn chain_len(&self, v: Vertex) -> usize {
        usize::from(self.chain_len[self.chain_head(v) & VERTEX_MASK])
    }

    /// The stones of the chain on `v`.
    pub fn chain_stones(&self, v: Vertex) -> ChainStones<'_> {
        ChainStones {
            board: self,
            start: v,
            current: Some(v),
        }
    }

    /// Whether the chain on `v` has exactly one liberty.
    #[inline]
    #[must_use]
    pub fn in_atari(&self, v: Vertex) -> bool {
        lib_single(self.libs[self.chain_head(v) & VERTEX_MASK])
    }

    /// Every stone whose chain has exactly one liberty, row by row from A1:
    /// the stones a client rings as "in atari".
    #[must_use]
    pub fn stones_in_atari(&self) -> Vec<Point> {
        self.vertices()
            .filter(|&v| !self.is_empty(v) && self.in_atari(v))
            .map(|v| self.point(v))
            .collect()
    }

    /// The only liberty of a chain in atari.
    #[must_use]
    pub fn atari_liberty(&self, v: Vertex) -> Option<Vertex> {
        if self.in_atari(v) {
            let h = self.chain_head(v);
            let r = self.libs[h & VERTEX_MASK];
            Some((lib_sum(r) / lib_count(r)) as Vertex)
        } else {
            None
        }
    }

    /// The liberties of the chain on `v`, each once, in vertex order.
    #[must_use]
    pub fn liberties(&self, v: Vertex) -> Vec<Vertex> {
        let mut libs: Vec<Vertex> = Vec::new();
        for s in self.chain_stones(v) {
            for n in self.neighbours(s) {
                if self.cells[n & VERTEX_MASK] == EMPTY {
                    libs.push(n);
                }
            }
        }
        libs.sort_unstable();
        libs.dedup();
        libs
    }

    /// Number of distinct liberties of the chain on `v`, counting no further
    /// than `limit` (at most 8): cheap answers to "does it have 3 or more?".
    #[must_use]
    pub fn liberty_count_up_to(&self, v: Vertex, limit: usize) -> usize {
        let limit = limit.min(8);
        if self.in_atari(v) {
            return limit.min(1);
        }
        let mut seen: [Vertex; 8] = [NO_VERTEX; 8];
        let mut count = 0;
        for s in self.chain_stones(v) {
            for n in self.neighbours(s) {
                if self.cells[n & VERTEX_MASK] == EMPTY && !seen[..count].contains(&n) {
                    if count + 1 >= limit {
                        return limit;
                    }
                    seen[count] = n;
                    count += 1;
                }
            }
        }
        count
    }

    // ----- legality and eyes -----

    /// The heads of the enemy chains that `color` playing on the empty
    /// vertex `v` would capture (each once).
    pub fn captured_heads(&self, v: Vertex, color: Color) -> impl Iterator<Item = Vertex> + use<> {
        let mut heads = [NO_VERTEX; 4];
        let mut n = 0;
        for x in self.neighbours(v) {
            if self.color_at(x) == Some(color.opponent()) && self.in_atari(x) {
                let h = self.chain_head(x);
                if !heads[..n].contains(&h) {
                    heads[n] = h;
                    n += 1;
                }
            }
        }
        heads.into_iter().take(n)
    }

    /// Whether `color` playing on the empty vertex `v` would leave its own
    /// chain without liberties and capture nothing.
    ///
    /// Past the check for an empty neighbour, written without early exits:
    /// in playouts the answer is close to a coin toss per neighbour, and a
    /// mispredicted branch costs more than looking at all four.
    #[inline]
    #[must_use]
    pub fn is_suicide(&self, v: Vertex, color: Color) -> bool {
        if self.nbrs[v & VERTEX_MASK] & 0xF != 0 {
            return false; // an empty neighbour is a liberty
        }
        // No neighbour is empty. The stone breathes through a neighbour
        // holding its own chain not in atari, or an enemy chain in atari
        // (it captures): bit `2·cell + atari` of `breathing` says which.
        // The border reads the spare record, and its bits are clear.
        let own = cell_of(color);
        let enemy = own ^ (BLACK | WHITE);
        let breathing: u32 = (1 << (2 * own)) | (1 << (2 * enemy + 1));
        let key = LIB_KEY[v & VERTEX_MASK];
        let mut breathes = 0;
        for n in self.neighbours(v) {
            let c = u32::from(self.cells[n & VERTEX_MASK]);
            let r = self.libs[self.chain_head(n) & VERTEX_MASK];
            // Every pseudo-liberty is `v` (a chain on the board has one).
            let atari = u32::from(r == lib_count(r) * key);
            breathes |= breathing >> (2 * c + atari);
        }
        breathes & 1 == 0
    }

    /// Whether a playout may put a `color` stone on the empty vertex `v`: not
    /// its own single-point eye shape and not suicide. The common case (an
    /// empty neighbour) is answered from the four neighbours alone.
    #[inline]
    #[must_use]
    pub fn is_playout_candidate(&self, v: Vertex, color: Color) -> bool {
        let counts = self.nbrs[v & VERTEX_MASK];
        if counts & 0xF != 0 {
            return true;
        }
        self.is_closed_candidate(v, color)
    }

    /// [`Board::is_playout_candidate`] for a point without empty neighbours:
    /// an eye shape if no enemy stone is next to it, else playable unless
    /// suicide. Kept out of line so that the common case stays small.
    #[inline(never)]
    fn is_closed_candidate(&self, v: Vertex, color: Color) -> bool {
        let counts = self.nbrs[v & VERTEX_MASK];
        let enemy = (counts >> (4 * u16::from(cell_of(color.opponent())))) & 0xF;
        enemy != 0 && !self.is_suicide(v, color)
    }

    /// How many of `v`'s neighbours are empty points.
    #[inline]
    #[must_use]
    pub fn empty_neighbours(&self, v: Vertex) -> usize {
        usize::from(self.nbrs[v & VERTEX_MASK] & 0xF)
    }

    /// A random empty point where a light playout may put a `color` stone
    /// (see [`Board::is_playout_candidate`]; not the simple-ko point), or
    /// `None`: the scan starts at a random place in the empty list and takes
    /// the first fit.
    #[inline]
    pub fn random_playout_move(&self, color: Color, rng: &mut SplitMix64) -> Option<Vertex> {
        let n = self.empty_count;
        if n == 0 {
            return None;
        }
        let enemy_shift = 4 * u16::from(cell_of(color.opponent()));
        let start = rng.below(n);
        let mut i = start;
        loop {
            let v = usize::from(self.empties[i & VERTEX_MASK]);
            let counts = self.nbrs[v & VERTEX_MASK];
            if v != self.ko
                && (counts & 0xF != 0
                    || ((counts >> enemy_shift) & 0xF != 0 && !self.is_suicide(v, color)))
            {
                return Some(v);
            }
            i += 1;
            if i == n {
                i = 0;
            }
            if i == start {
                return None;
            }
        }
    }

    /// Whether every on-board neighbour of `v` is a `color` stone: a
    /// single-point eye shape, which playouts never fill.
    #[inline]
    #[must_use]
    pub fn is_eye_shape(&self, v: Vertex, color: Color) -> bool {
        let own = cell_of(color);
        self.neighbours(v)
            .iter()
            .all(|&n| self.cells[n & VERTEX_MASK] == own || self.cells[n & VERTEX_MASK] == BORDER)
    }

    /// An eye shape whose diagonals also belong to `color`, so it cannot be
    /// made false: at most one enemy diagonal in the centre, none on the edge.
    #[must_use]
    pub fn is_true_eye(&self, v: Vertex, color: Color) -> bool {
        if !self.is_eye_shape(v, color) {
            return false;
        }
        let enemy = cell_of(color.opponent());
        let mut bad = 0;
        let mut edge = false;
        for d in self.diagonals(v) {
            match self.cells[d & VERTEX_MASK] {
                BORDER => edge = true,
                c if c == enemy => bad += 1,
                _ => {}
            }
        }
        if edge { bad == 0 } else { bad <= 1 }
    }

    /// Whether the move would pass the board's own checks: an empty point,
    /// not suicide (unless `allow_suicide`), not the simple-ko retake.
    /// Superko is for [`crate::Game`] to judge.
    #[must_use]
    pub fn is_playable(&self, v: Vertex, color: Color, allow_suicide: bool) -> bool {
        self.is_on_board(v)
            && self.cells[v & VERTEX_MASK] == EMPTY
            && v != self.ko
            && (allow_suicide || !self.is_suicide(v, color))
    }

    // ----- making moves -----

    /// Puts a `color` stone on the empty vertex `v`, captures what it takes,
    /// and (when suicide is allowed and happens) removes the mover's chain.
    /// Returns the number of stones captured from the opponent.
    ///
    /// The caller has checked that `v` is empty and on the board.
    pub fn play(&mut self, v: Vertex, color: Color) -> u32 {
        debug_assert!(self.is_on_board(v) && self.cells[v & VERTEX_MASK] == EMPTY);
        let own = cell_of(color);
        let enemy = own ^ (BLACK | WHITE);
        self.remove_empty(v);
        self.cells[v & VERTEX_MASK] = own;
        self.hash ^= zobrist(color, v);
        let unit = nbr_unit(own);
        let key = LIB_KEY[v & VERTEX_MASK];
        let nbrs = self.neighbours(v);
        // One pass over the neighbours with no decisions in it: every
        // neighbour's counts change, every neighbouring chain loses `v` as a
        // liberty (a point without a stone charges the spare record), and
        // the empty ones become the new stone's liberties.
        let mut libs: LibRecord = 0;
        // Which neighbours hold the mover's stones, and which hold enemy
        // chains left without liberties (a chain touching `v` twice shows
        // only at its last neighbour, where its count reaches zero).
        let mut own_bits = 0u32;
        let mut dead_bits = 0u32;
        for (i, n) in nbrs.into_iter().enumerate() {
            // Border cells' counts wrap harmlessly: they are never read.
            self.nbrs[n & VERTEX_MASK] = self.nbrs[n & VERTEX_MASK]
                .wrapping_sub(NBR_EMPTY)
                .wrapping_add(unit);
            let h = self.chain_head(n) & VERTEX_MASK;
            let left = self.libs[h].wrapping_sub(key);
            self.libs[h] = left;
            let cell = self.cells[n & VERTEX_MASK];
            libs += LIB_KEY[n & VERTEX_MASK] & EMPTY_MASK[usize::from(cell & 3)];
            own_bits |= u32::from(cell == own) << i;
            dead_bits |= u32::from((cell == enemy) & (lib_count(left) == 0)) << i;
        }
        self.head[v & VERTEX_MASK] = v as u16;
        self.next[v & VERTEX_MASK] = v as u16;
        self.chain_len[v & VERTEX_MASK] = 1;
        self.libs[v & VERTEX_MASK] = libs;

        let mut mine = v;
        while own_bits != 0 {
            let n = nbrs[own_bits.trailing_zeros() as usize & 3];
            own_bits &= own_bits - 1;
            let h = self.chain_head(n);
            if h != mine {
                mine = self.merge(mine, h);
            }
        }
        let mut captured = 0u32;
        let mut captured_at = NO_VERTEX;
        while dead_bits != 0 {
            let n = nbrs[dead_bits.trailing_zeros() as usize & 3];
            dead_bits &= dead_bits - 1;
            debug_assert_eq!(self.cells[n & VERTEX_MASK], enemy);
            captured_at = n;
            captured += self.remove_chain(self.chain_head(n));
        }
        self.prisoners[color] += captured;

        self.ko = NO_VERTEX;
        let mine_libs = lib_count(self.libs[mine & VERTEX_MASK]);
        if mine_libs == 0 {
            // Suicide, where the rules allow it: the mover's chain is taken.
            let lost = self.remove_chain(mine);
            self.prisoners[color.opponent()] += lost;
        } else if captured == 1 && mine_libs == 1 && self.chain_len[mine & VERTEX_MASK] == 1 {
            self.ko = captured_at;
        }
        captured
    }

    /// Clears the simple-ko point (after a pass, say).
    pub fn clear_ko(&mut self) {
        self.ko = NO_VERTEX;
    }

    /// Removes the chain whose head is `h` from the board; returns its size.
    /// Used for captures and by scoring when dead stones are taken off.
    pub fn remove_chain(&mut self, h: Vertex) -> u32 {
        let h = self.chain_head(h);
        let cell = self.cells[h & VERTEX_MASK];
        let color = if cell == BLACK {
            Color::Black
        } else {
            Color::White
        };
        let unit = nbr_unit(cell);
        // First empty every stone, so liberties are then given only to the
        // chains that remain.
        let mut s = h;
        let mut count = 0;
        loop {
            self.cells[s & VERTEX_MASK] = EMPTY;
            self.head[s & VERTEX_MASK] = SPARE as u16;
            for n in self.neighbours(s) {
                self.nbrs[n & VERTEX_MASK] = self.nbrs[n & VERTEX_MASK]
                    .wrapping_add(NBR_EMPTY)
                    .wrapping_sub(unit);
            }
            self.hash ^= zobrist(color, s);
            self.push_empty(s);
            count += 1;
            s = usize::from(self.next[s & VERTEX_MASK]);
            if s == h {
                break;
            }
        }
        // Every neighbouring chain gains the point; empty points and the
        // border charge the spare record.
        loop {
            let key = LIB_KEY[s & VERTEX_MASK];
            for n in self.neighbours(s) {
                let nh = self.chain_head(n) & VERTEX_MASK;
                self.libs[nh] = self.libs[nh].wrapping_add(key);
            }
            s = usize::from(self.next[s & VERTEX_MASK]);
            if s == h {
                break;
            }
        }
        count
    }

    /// Joins chain `b` into chain `a` (both heads), keeping the larger
    /// one's head, which it returns.
    fn merge(&mut self, a: Vertex, b: Vertex) -> Vertex {
        let (keep, gone) = if self.chain_len[a & VERTEX_MASK] >= self.chain_len[b & VERTEX_MASK] {
            (a, b)
        } else {
            (b, a)
        };
        let mut s = gone;
        loop {
            self.head[s & VERTEX_MASK] = keep as u16;
            s = usize::from(self.next[s & VERTEX_MASK]);
            if s == gone {
                break;
            }
        }
        self.next.swap(keep & VERTEX_MASK, gone & VERTEX_MASK);
        self.libs[keep & VERTEX_MASK] += self.libs[gone & VERTEX_MASK];
        self.chain_len[keep & VERTEX_MASK] += self.chain_len[gone & VERTEX_MASK];
        keep
    }

    #[inline]
    fn push_empty(&mut self, v: Vertex) {
        self.empty_pos[v & VERTEX_MASK] = self.empty_count as u16;
        self.empties[self.empty_count] = v as u16;
        self.empty_count += 1;
    }

    #[inline]
    fn remove_empty(&mut self, v: Vertex) {
        let i = usize::from(self.empty_pos[v & VERTEX_MASK]);
        self.empty_count -= 1;
        let last = self.empties[self.empty_count];
        self.empties[i] = last;
        self.empty_pos[usize::from(last) & VERTEX_MASK] = i as u16;
    }

    // ----- drawing -----

    /// The board as text, top row first: `X` Black, `O` White, `.` empty.
    #[must_use]
    pub fn to_ascii(&self) -> String {
        let n = self.size.get();
        let mut out = String::new();
        for row in (0..n).rev() {
            for col in 0..n {
                if col > 0 {
                    out.push(' ');
                }
                out.push(match self.get(Point::new(col, row)) {
                    Stone::Black => 'X',
                    Stone::White => 'O',
                    Stone::Empty => '.',
                });
            }
            out.push('\n');
        }
        out
    }

    /// A position drawn as text, top row first, one row a line: `X` Black,
    /// `O` White, `.` (or `+`) empty; spaces are ignored, and so are blank
    /// lines. The board is as large as the number of rows, which must equal
    /// the number of points in each row. Stones without liberties are
    /// refused.
    pub fn from_ascii(text: &str) -> Result<Board, String> {
        let rows: Vec<Vec<char>> = text
            .lines()
            .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect::<Vec<_>>())
            .filter(|r| !r.is_empty())
            .collect();
        let n = rows.len();
        let size = BoardSize::new(n as u32).map_err(|e| e.to_string())?;
        let mut board = Board::new(size);
        for (i, row) in rows.iter().enumerate() {
            if row.len() != n {
                return Err(format!(
                    "row {} has {} points, expected {n}",
                    n - i,
                    row.len()
                ));
            }
            for (col, &c) in row.iter().enumerate() {
                let color = match c {
                    'X' | 'x' | 'B' => Color::Black,
                    'O' | 'o' | 'W' => Color::White,
                    '.' | '+' => continue,
                    other => return Err(format!("`{other}` is not X, O or .")),
                };
                // `n - 1 - i` and `col` are below 19 once the size is accepted.
                let v = board.vertex(Point::new(col as u8, (n - 1 - i) as u8));
                board.play(v, color);
            }
        }
        // A stone without liberties was taken off while the drawing was laid.
        if board.prisoners(Color::Black) + board.prisoners(Color::White) > 0 {
            return Err("the drawing has stones without liberties".into());
        }
        board.clear_ko();
        Ok(board)
    }

    /// Recomputes the hash from the stones: the incremental one must equal it.
    #[must_use]
    pub fn recomputed_hash(&self) -> u64 {
        self.vertices()
            .filter_map(|v| self.color_at(v).map(|c| zobrist(c, v)))
            .fold(0, |h, k| h ^ k)
    }

    /// Checks the board's internal bookkeeping against a recount from the
    /// stones: chains, liberties, the empty list and the hash. For tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.hash != self.recomputed_hash() {
            return Err("incremental hash differs from recomputed hash".into());
        }
        let empties = self.vertices().filter(|&v| self.is_empty(v)).count();
        if empties != self.empty_count {
            return Err(format!(
                "{} empty points but the list holds {}",
                empties, self.empty_count
            ));
        }
        for v in self.vertices() {
            let count = |cell: u8| {
                self.neighbours(v)
                    .iter()
                    .filter(|&&n| self.cells[n] == cell)
                    .count() as u16
            };
            let want = count(EMPTY) * NBR_EMPTY
                + count(BLACK) * nbr_unit(BLACK)
                + count(WHITE) * nbr_unit(WHITE);
            if self.nbrs[v] != want {
                return Err(format!("neighbour counts of {} are wrong", self.point(v)));
            }
        }
        for v in self.vertices() {
            if self.color_at(v).is_none() && self.chain_head(v) != SPARE {
                return Err(format!("empty {} names a chain head", self.point(v)));
            }
        }
        for &e in self.empty_vertices() {
            if !self.is_empty(usize::from(e)) {
                return Err(format!(
                    "{} is listed empty but holds a stone",
                    self.point(usize::from(e))
                ));
            }
        }
        for v in self.vertices() {
            if self.color_at(v).is_none() {
                continue;
            }
            let h = self.chain_head(v);
            let stones: Vec<Vertex> = self.chain_stones(v).collect();
            if stones.len() != usize::from(self.chain_len[h & VERTEX_MASK]) {
                return Err(format!("chain at {} has a wrong length", self.point(v)));
            }
            let mut pseudo = 0u16;
            for &s in &stones {
                if self.chain_head(s) != h
                    || self.cells[s & VERTEX_MASK] != self.cells[v & VERTEX_MASK]
                {
                    return Err(format!("chain at {} is inconsistent", self.point(v)));
                }
                pseudo += self
                    .neighbours(s)
                    .iter()
                    .filter(|&&n| self.is_empty(n))
                    .count() as u16;
            }
            if u64::from(pseudo) != lib_count(self.libs[h & VERTEX_MASK]) {
                return Err(format!(
                    "chain at {} has wrong pseudo-liberties",
                    self.point(v)
                ));
            }
            let real = self.liberties(v);
            if real.is_empty() {
                return Err(format!("chain at {} has no liberty", self.point(v)));
            }
            if (real.len() == 1) != self.in_atari(v) {
                return Err(format!("atari test wrong for chain at {}", self.point(v)));
            }
        }
        Ok(())
    }
}

/// The stones of one chain, from [`Board::chain_stones`].
#[derive(Debug)]
pub struct ChainStones<'a> {
    board: &'a Board,
    start: Vertex,
    current: Option<Vertex>,
}

impl Iterator for ChainStones<'_> {
    type Item = Vertex;

    fn next(&mut self) -> Option<Vertex> {
        let v = self.current?;
        let n = usize::from(self.board.next[v]);
        self.current = (n != self.start).then_some(n);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stones_in_atari_are_every_stone_of_a_chain_with_one_liberty() {
        // Black's pair on A1-B1 has one liberty (C1); White's A2-C2 has
        // five; Black's lone D4 has four.
        let board = Board::from_ascii(
            ". . . . .
             . . . X .
             . . . . .
             O O O . .
             X X . . .",
        )
        .expect("a position");
        let names: Vec<String> = board
            .stones_in_atari()
            .into_iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(names, ["A1", "B1"]);
        assert!(Board::new(BoardSize::NINE).stones_in_atari().is_empty());
    }

    fn at(b: &Board, s: &str) -> Vertex {
        b.vertex(b.size().parse_point(s).expect("test point"))
    }

    #[test]
    fn a_stone_in_the_corner_has_two_liberties_and_is_captured_by_two() {
        let mut b = Board::new(BoardSize::NINE);
        let a1 = at(&b, "A1");
        b.play(a1, Color::Black);
        assert_eq!(b.liberties(a1).len(), 2);
        b.play(at(&b, "A2"), Color::White);
        assert!(b.in_atari(a1));
        assert_eq!(b.atari_liberty(a1), Some(at(&b, "B1")));
        assert_eq!(b.play(at(&b, "B1"), Color::White), 1);
        assert!(b.is_empty(a1));
        assert_eq!(b.prisoners(Color::White), 1);
        b.check_invariants().expect("invariants");
    }

    #[test]
    fn zobrist_keys_are_fixed_across_runs() {
        // The keys come from a fixed seed: this value must never change, or
        // stored hashes would stop matching.
        assert_eq!(
            zobrist(Color::Black, 0),
            SplitMix64::new(0x7474_616b_6a69_2d67).next()
        );
    }
}
