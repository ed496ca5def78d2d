//! The playout policy of the search, and the priors it gives new moves.
//!
//! Playouts answer the last move the way MoGo's do: take a stone it left in
//! atari, save a chain it put in atari, play a 3×3 shape next to it;
//! otherwise a random move that neither fills an own eye nor puts two or
//! more stones in atari. They may also take the vital point of a small eye
//! space that the last move closed or emptied (nakade), leaving it one eye,
//! go back to a ko that is open again, and answer shapes next to the move
//! before the last as well ([`Knowledge`]).

use baduk::Color;
use baduk::board::{Board, MAX_VERTICES, NO_VERTEX, SplitMix64, Vertex};
use baduk::playout::{
    is_big_self_atari, is_ladder_caught, liberties_after, random_move, two_liberties,
};
use baduk::shape::is_shape_move;

use crate::patterns::{Gammas, shape};

/// What the playouts know beyond captures, escapes and MoGo's shapes: the
/// search's switches, read once a playout.
#[derive(Debug, Clone, Copy, Default)]
pub struct Knowledge<'g> {
    /// The answer next to the last move drawn among the points around it
    /// whose learned 3×3 shape gamma is at least the given floor, in
    /// proportion to their gammas, instead of one of MoGo's shapes.
    pub shapes: Option<(&'g Gammas, f32)>,
    /// After captures and escapes, the vital point of a small eye space
    /// next to the last move ([`vital_point`]).
    pub nakade: bool,
    /// A chain in atari is not run out into a ladder that catches it
    /// ([`is_ladder_caught`]).
    pub ladders: bool,
    /// MoGo's shapes next to the move before the last (the mover's own
    /// last move) are candidates too, drawn alike with those next to the
    /// last move, as Pachi's playouts do.
    pub shapes_near_last2: bool,
    /// The share of playout moves, from 0 to 1, that go back to a ko taken
    /// in the last few moves once it is open again: retaking it or
    /// filling it, so that a ko is fought in the playouts as in a game.
    pub ko_fight: f32,
    /// The replies that won the search's own earlier playouts
    /// ([`Replies`]), tried before anything else.
    pub replies: Option<&'g Replies>,
    /// A random move that would put two stones or more of the mover's in
    /// atari becomes, where it can, the outside liberty of an enemy chain
    /// of two liberties next to it ([`outside_liberty`]), as Pachi's
    /// playouts do (its `selfatari_other`): in a capturing race the
    /// liberty the two chains share is filled last.
    pub outside_liberties: bool,
    /// When nothing next to the last moves calls for an answer, a chain
    /// of the opponent's in atari anywhere on the board is taken
    /// ([`Recent::ataris`]) before a random move, as MoGo's playouts do.
    pub captures: bool,
}

/// Last good replies with forgetting (Baier and Drake, "The Power of
/// Forgetting", 2010): for each colour, the move that answered the last
/// move (and the last two) in the latest playout that colour won, and no
/// longer once a playout that played it is lost. The playouts learn, in
/// the position being searched, the answers that work there, such as the
/// one move that keeps a group alive.
#[derive(Debug, Clone)]
pub struct Replies {
    /// By colour and the last move.
    one: Vec<u16>,
    /// By colour, the move before the last and the last.
    two: Vec<u16>,
}

/// No reply stored.
const NO_REPLY: u16 = u16::MAX;

impl Default for Replies {
    fn default() -> Replies {
        Replies {
            one: vec![NO_REPLY; 2 * MAX_VERTICES],
            two: vec![NO_REPLY; 2 * MAX_VERTICES * MAX_VERTICES],
        }
    }
}

impl Replies {
    fn one_at(color: Color, last: Vertex) -> usize {
        color.index() * MAX_VERTICES + last
    }

    fn two_at(color: Color, last2: Vertex, last: Vertex) -> usize {
        (color.index() * MAX_VERTICES + last2) * MAX_VERTICES + last
    }

    /// The stored reply of `color` to `last2` then `last`, or to `last`
    /// alone, if any.
    #[must_use]
    pub fn reply(&self, color: Color, last2: Vertex, last: Vertex) -> Option<Vertex> {
        if last == NO_VERTEX {
            return None;
        }
        if last2 != NO_VERTEX {
            let r = self.two[Self::two_at(color, last2, last)];
            if r != NO_REPLY {
                return Some(Vertex::from(r));
            }
        }
        let r = self.one[Self::one_at(color, last)];
        (r != NO_REPLY).then(|| Vertex::from(r))
    }

    /// Learns from one finished playout: `moves` in order with their
    /// colours (`NO_VERTEX` a pass), after `before` (the two moves before
    /// the first, the earlier first), won by `winner` (`None` for a draw,
    /// from which nothing is learned).
    pub fn learn(&mut self, before: [Vertex; 2], moves: &[(Vertex, Color)], winner: Option<Color>) {
        let Some(winner) = winner else { return };
        let (mut last2, mut last) = (before[0], before[1]);
        for &(v, color) in moves {
            if v != NO_VERTEX && last != NO_VERTEX {
                let one = Self::one_at(color, last);
                let two = (last2 != NO_VERTEX).then(|| Self::two_at(color, last2, last));
                if color == winner {
                    self.one[one] = v as u16;
                    if let Some(two) = two {
                        self.two[two] = v as u16;
                    }
                } else {
                    if self.one[one] == v as u16 {
                        self.one[one] = NO_REPLY;
                    }
                    if let Some(two) = two
                        && self.two[two] == v as u16
                    {
                        self.two[two] = NO_REPLY;
                    }
                }
            }
            (last2, last) = (last, v);
        }
    }
}

/// The moves a playout move answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recent<'a> {
    /// The last move, `NO_VERTEX` for a pass or none.
    pub last: Vertex,
    /// The move before it, the same way.
    pub last2: Vertex,
    /// The point of a ko taken within the last [`KO_AGE`] moves where no
    /// ko forbids a move now, if any.
    pub open_ko: Option<Vertex>,
    /// Stones whose chains were in atari when the playout began or were
    /// put in atari since ([`AtariWatch`]); some may no longer be.
    pub ataris: &'a [Vertex],
}

/// The chains a playout has seen in atari, by one stone of each: those in
/// atari when it began and those a move has put in atari since (a chain
/// comes into atari only by a move next to it, or by its own move). Kept
/// so that a playout can take a chain in atari anywhere on the board, as
/// MoGo's and Pachi's do, without looking over the whole board each move.
#[derive(Debug, Clone)]
pub struct AtariWatch {
    stones: [Vertex; AtariWatch::CAPACITY],
    len: usize,
}

impl AtariWatch {
    const CAPACITY: usize = 32;

    /// The chains in atari on `board`.
    #[must_use]
    pub fn of(board: &Board) -> AtariWatch {
        let mut watch = AtariWatch {
            stones: [NO_VERTEX; AtariWatch::CAPACITY],
            len: 0,
        };
        for v in board.vertices() {
            if !board.is_empty(v) && board.chain_head(v) == v && board.in_atari(v) {
                watch.push(board, v);
            }
        }
        watch
    }

    /// After a move at `v`: the chains it put in atari, its own included.
    pub fn note(&mut self, board: &Board, v: Vertex) {
        if board.in_atari(v) {
            self.push(board, v);
        }
        for n in board.neighbours(v) {
            if board.color_at(n).is_some() && board.in_atari(n) {
                self.push(board, n);
            }
        }
    }

    /// The stones watched.
    #[must_use]
    pub fn stones(&self) -> &[Vertex] {
        &self.stones[..self.len]
    }

    fn push(&mut self, board: &Board, v: Vertex) {
        let head = board.chain_head(v);
        let same_chain = |s: &Vertex| !board.is_empty(*s) && board.chain_head(*s) == head;
        if self.stones().iter().any(same_chain) {
            return;
        }
        if self.len == AtariWatch::CAPACITY {
            // Keep only the chains still in atari; if all are, the oldest
            // goes.
            let mut kept = 0;
            for i in 0..self.len {
                let s = self.stones[i];
                if !board.is_empty(s) && board.in_atari(s) {
                    self.stones[kept] = s;
                    kept += 1;
                }
            }
            if kept == AtariWatch::CAPACITY {
                self.stones.copy_within(1.., 0);
                kept -= 1;
            }
            self.len = kept;
        }
        self.stones[self.len] = v;
        self.len += 1;
    }
}

/// The last liberty of an enemy chain in atari among `ataris`, anywhere on
/// the board, where `color` may play: one drawn at random when there are
/// several.
fn capture_anywhere(
    board: &Board,
    color: Color,
    ataris: &[Vertex],
    rng: &mut SplitMix64,
) -> Option<Vertex> {
    if ataris.is_empty() {
        return None;
    }
    let enemy = color.opponent();
    let start = rng.below(ataris.len());
    (start..ataris.len())
        .chain(0..start)
        .map(|i| ataris[i])
        .filter(|&s| board.color_at(s) == Some(enemy))
        .filter_map(|s| board.atari_liberty(s))
        .find(|&l| board.is_playable(l, color, false))
}

/// How many moves after a ko capture its point is still worth fighting
/// over in a playout (Pachi's `koage`).
pub const KO_AGE: usize = 3;

/// The playout move for `color` after the `recent` moves, or `None` to pass.
pub fn playout_move(
    board: &Board,
    color: Color,
    recent: Recent<'_>,
    rng: &mut SplitMix64,
    knows: &Knowledge<'_>,
) -> Option<Vertex> {
    if let Some(replies) = knows.replies
        && let Some(v) = replies.reply(color, recent.last2, recent.last)
        && board.is_empty(v)
        && board.is_playout_candidate(v, color)
        && board.is_playable(v, color, false)
        && !is_big_self_atari(board, v, color)
    {
        return Some(v);
    }
    if let Some(k) = recent.open_ko
        && knows.ko_fight > 0.0
        && ((rng.next() >> 40) as f32) < knows.ko_fight * (1u64 << 24) as f32
        && board.is_playable(k, color, false)
        && !is_big_self_atari(board, k, color)
    {
        return Some(k);
    }
    let last = recent.last;
    if last != NO_VERTEX {
        if let Some(v) = answer_atari(board, color, last, knows.ladders) {
            return Some(v);
        }
        if knows.nakade
            && let Some(v) = vital_point(board, color, last)
        {
            return Some(v);
        }
        let near = around(board, last);
        if let Some((gammas, floor)) = knows.shapes {
            let mut weights = [0f32; 8];
            let mut total = 0.0;
            for (w, &v) in weights.iter_mut().zip(&near) {
                if board.is_empty(v)
                    && board.is_playout_candidate(v, color)
                    && Some(v) != board.ko_point()
                {
                    let g = gammas.shape_gamma(shape(board, v, color));
                    if g >= floor && !is_big_self_atari(board, v, color) {
                        *w = g;
                        total += g;
                    }
                }
            }
            if total > 0.0 {
                let mut x = (rng.next() >> 40) as f32 / (1u64 << 24) as f32 * total;
                for (w, &v) in weights.iter().zip(&near) {
                    if *w > 0.0 {
                        if x < *w {
                            return Some(v);
                        }
                        x -= w;
                    }
                }
            }
            return capture_or_random(board, color, recent, rng, knows);
        }
        let shape_move = |v: Vertex| {
            board.is_empty(v)
                && is_shape_move(board, v)
                && board.is_playout_candidate(v, color)
                && Some(v) != board.ko_point()
                && !is_big_self_atari(board, v, color)
        };
        // The points around the last move, and with `shapes_near_last2`
        // those around the move before it, each once, scanned from a
        // random place.
        let mut points = [NO_VERTEX; 16];
        points[..8].copy_from_slice(&near);
        let mut n = 8;
        if knows.shapes_near_last2 && recent.last2 != NO_VERTEX {
            for v in around(board, recent.last2) {
                if !near.contains(&v) {
                    points[n] = v;
                    n += 1;
                }
            }
        }
        let start = rng.below(n);
        for i in 0..n {
            let v = points[(start + i) % n];
            if shape_move(v) {
                return Some(v);
            }
        }
    }
    capture_or_random(board, color, recent, rng, knows)
}

/// With `captures`, a capture anywhere on the board; otherwise, or when
/// there is none, a random move ([`random_or_outside`]).
fn capture_or_random(
    board: &Board,
    color: Color,
    recent: Recent<'_>,
    rng: &mut SplitMix64,
    knows: &Knowledge<'_>,
) -> Option<Vertex> {
    if knows.captures
        && let Some(v) = capture_anywhere(board, color, recent.ataris, rng)
    {
        return Some(v);
    }
    random_or_outside(board, color, rng, knows.outside_liberties)
}

/// A random move that does not put two stones or more in atari; with
/// `outside`, a move that would is played at [`outside_liberty`] of it
/// instead where there is one.
fn random_or_outside(
    board: &Board,
    color: Color,
    rng: &mut SplitMix64,
    outside: bool,
) -> Option<Vertex> {
    if !outside {
        return random_move(board, color, rng, |b, v, c| !is_big_self_atari(b, v, c));
    }
    let mut instead = None;
    let found = random_move(board, color, rng, |b, v, c| {
        if !is_big_self_atari(b, v, c) {
            return true;
        }
        instead = outside_liberty(b, v, c);
        instead.is_some()
    });
    instead.or(found)
}

/// For `color`'s move at `v`, which would put its own chain in atari: the
/// other liberty of an enemy chain next to `v` that has two, where `color`
/// may play without putting its own chain in atari, or `None`. When two
/// chains race with `v` the liberty they share, filling it fills one's own
/// last but one; the race is won by filling the enemy's outside liberty.
fn outside_liberty(board: &Board, v: Vertex, color: Color) -> Option<Vertex> {
    let enemy = color.opponent();
    for n in board.neighbours(v) {
        if board.color_at(n) != Some(enemy) || board.liberty_count_up_to(n, 3) != 2 {
            continue;
        }
        let [a, b] = two_liberties(board, n);
        let l = if a == v { b } else { a };
        if board.is_playout_candidate(l, color)
            && Some(l) != board.ko_point()
            && !is_big_self_atari(board, l, color)
        {
            return Some(l);
        }
    }
    None
}

/// The eight points around `v`: its neighbours, then its diagonals.
fn around(board: &Board, v: Vertex) -> [Vertex; 8] {
    let mut points = [NO_VERTEX; 8];
    points[..4].copy_from_slice(&board.neighbours(v));
    points[4..].copy_from_slice(&board.diagonals(v));
    points
}

/// Captures a chain next to the last move that is in atari, or saves an
/// own chain next to it that is (by extending when that gives it two
/// liberties or more, or by capturing a neighbour of it).
fn answer_atari(board: &Board, color: Color, last: Vertex, ladders: bool) -> Option<Vertex> {
    let enemy = color.opponent();
    let mut around = [last; 5];
    around[1..].copy_from_slice(&board.neighbours(last));
    for x in around {
        if board.color_at(x) == Some(enemy)
            && let Some(l) = board.atari_liberty(x)
            && board.is_playable(l, color, false)
        {
            return Some(l);
        }
    }
    for x in board.neighbours(last) {
        if board.color_at(x) != Some(color) || !board.in_atari(x) {
            continue;
        }
        // Counter-capture: an enemy chain touching ours that is in atari too.
        for s in board.chain_stones(x) {
            for n in board.neighbours(s) {
                if board.color_at(n) == Some(enemy)
                    && let Some(l) = board.atari_liberty(n)
                    && board.is_playable(l, color, false)
                {
                    return Some(l);
                }
            }
        }
        if let Some(l) = board.atari_liberty(x)
            && board.is_playable(l, color, false)
            && escapes(board, x, l, color, ladders)
        {
            return Some(l);
        }
    }
    None
}

/// The vital point of a small eye space next to the last move, where
/// `color` may play, or `None`. An eye space here is an empty area of three
/// to six points, bordered by stones of one colour only, that touches the
/// last move: the last move closed it, or captured the stones that stood
/// in it. Its vital point is the one point with more neighbours inside it
/// than any other (the middle of a three, the centre of a pyramid four, a
/// bulky five or a rabbity six), and a stone there leaves it one eye.
/// Shapes with no such point (a straight or bent four, a square four) live
/// or die whoever plays first, and get no answer.
fn vital_point(board: &Board, color: Color, last: Vertex) -> Option<Vertex> {
    const MAX: usize = 6;
    let mut tried = [NO_VERTEX; 4];
    for start in board.neighbours(last) {
        if !board.is_empty(start) || tried.contains(&start) {
            continue;
        }
        // The area, given up at a point more than an eye space may have.
        let mut area = [NO_VERTEX; MAX];
        let (mut n, mut next) = (1, 0);
        area[0] = start;
        let mut border: Option<Color> = None;
        let mut fits = true;
        while next < n && fits {
            let v = area[next];
            next += 1;
            for x in board.neighbours(v) {
                if board.is_empty(x) {
                    if !area[..n].contains(&x) {
                        if n == MAX {
                            fits = false;
                            break;
                        }
                        area[n] = x;
                        n += 1;
                    }
                } else if let Some(c) = board.color_at(x) {
                    if border.is_some_and(|b| b != c) {
                        fits = false;
                        break;
                    }
                    border = Some(c);
                }
            }
        }
        let area = &area[..n];
        for (j, x) in board.neighbours(last).into_iter().enumerate() {
            if area.contains(&x) {
                tried[j] = x;
            }
        }
        if !fits || n < 3 || border.is_none() {
            continue;
        }
        let inside = |v: Vertex| {
            board
                .neighbours(v)
                .iter()
                .filter(|x| area.contains(x))
                .count()
        };
        let (mut best, mut most, mut ties) = (NO_VERTEX, 0, 0);
        for &v in area {
            let k = inside(v);
            if k > most {
                (best, most, ties) = (v, k, 1);
            } else if k == most {
                ties += 1;
            }
        }
        if ties == 1
            && most >= 2
            && board.is_playable(best, color, false)
            && Some(best) != board.ko_point()
        {
            return Some(best);
        }
    }
    None
}

/// Whether the chain on `x`, in atari, escapes by extending on its liberty
/// `l`: to three liberties or more, or to two (with `ladders`, two that
/// cannot chase it in a ladder).
fn escapes(board: &Board, x: Vertex, l: Vertex, color: Color, ladders: bool) -> bool {
    match liberties_after(board, l, color, 3) {
        0 | 1 => false,
        2 => !ladders || !is_ladder_caught(board, x),
        _ => true,
    }
}

/// Whether `color` playing at `v` leaves its chain with two liberties or more.
fn gains_liberties(board: &Board, v: Vertex, color: Color) -> bool {
    liberties_after(board, v, color, 2) >= 2
}

/// Prior knowledge about a move, as virtual wins out of virtual visits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    pub wins: f32,
    pub visits: f32,
}

/// The prior of `color` playing at `v` after `last` (`NO_VERTEX` if none),
/// starting from `even` virtual visits at an even win rate.
/// With `ladders`, running a chain in atari out into a ladder that
/// catches it gets no bonus but a penalty.
pub fn prior(
    board: &Board,
    v: Vertex,
    color: Color,
    last: Vertex,
    even: f32,
    ladders: bool,
) -> Prior {
    let mut p = Prior {
        wins: even / 2.0,
        visits: even,
    };
    let mut add = |wins: f32, visits: f32| {
        p.wins += wins;
        p.visits += visits;
    };
    let enemy = color.opponent();
    let nbrs = board.neighbours(v);
    if nbrs
        .iter()
        .any(|&n| board.color_at(n) == Some(enemy) && board.in_atari(n))
    {
        add(20.0, 20.0); // captures
    }
    if let Some(&n) = nbrs
        .iter()
        .find(|&&n| board.color_at(n) == Some(color) && board.in_atari(n))
    {
        if escapes(board, n, v, color, ladders) {
            add(15.0, 15.0); // saves a chain in atari
        } else if gains_liberties(board, v, color) {
            add(0.0, 10.0); // runs into a ladder (only with `ladders`)
        }
    }
    if is_big_self_atari(board, v, color) {
        add(0.0, 30.0);
    }
    if is_shape_move(board, v) {
        add(8.0, 10.0);
    }
    if last != NO_VERTEX {
        let s = board.stride() as isize;
        let (dv, dl) = (v as isize, last as isize);
        let (dr, dc) = ((dv / s - dl / s).abs(), (dv % s - dl % s).abs());
        if dr + dc <= 2 {
            add(4.0, 5.0);
        }
    }
    // The first and second lines in an empty corner or side: slow moves.
    let size = board.size().get() as isize;
    let s = board.stride() as isize;
    let (row, col) = (v as isize / s - 1, v as isize % s - 1);
    let line = row.min(col).min(size - 1 - row).min(size - 1 - col);
    if line <= 1 && size >= 9 && empty_around(board, v, 2) {
        add(0.0, 10.0);
    }
    p
}

/// Whether no stone stands within Manhattan distance `d` of `v`.
fn empty_around(board: &Board, v: Vertex, d: isize) -> bool {
    let s = board.stride() as isize;
    let (row, col) = (v as isize / s, v as isize % s);
    for dr in -d..=d {
        for dc in -(d - dr.abs())..=(d - dr.abs()) {
            let (r, c) = (row + dr, col + dc);
            if r < 0 || c < 0 || c >= s {
                continue;
            }
            let n = (r * s + c) as usize;
            if n < baduk::board::MAX_VERTICES && board.color_at(n).is_some() {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &str) -> Board {
        Board::from_ascii(rows).expect("drawing")
    }

    fn at(board: &Board, point: &str) -> Vertex {
        board.vertex(board.size().parse_point(point).expect("point"))
    }

    /// Of 20 seeds, how many have `color`'s playout move after `recent`
    /// land on a point that `fits`.
    fn seeds_playing(
        board: &Board,
        color: Color,
        recent: Recent<'_>,
        knows: &Knowledge<'_>,
        fits: impl Fn(Vertex) -> bool,
    ) -> usize {
        (0..20)
            .filter(|&seed| {
                let mut rng = SplitMix64::new(seed);
                playout_move(board, color, recent, &mut rng, knows).is_some_and(&fits)
            })
            .count()
    }

    /// Black's D1 closes a pyramid four on the edge (E1, F1, G1 and F2):
    /// White's stone on F1, the point touching the other three, leaves it
    /// one eye. A square four has no such point, and an area that White's
    /// stones also border is not Black's eye space.
    #[test]
    fn the_vital_point_of_a_small_eye_space_is_taken() {
        let pyramid = board(
            "
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . X .
            . . . . X . X
            . . . X . . .
            ",
        );
        let d1 = at(&pyramid, "D1");
        assert_eq!(
            vital_point(&pyramid, Color::White, d1),
            Some(at(&pyramid, "F1"))
        );
        let mut rng = SplitMix64::new(7);
        assert_eq!(
            playout_move(
                &pyramid,
                Color::White,
                Recent {
                    last: d1,
                    last2: NO_VERTEX,
                    open_ko: None,
                    ataris: &[],
                },
                &mut rng,
                &Knowledge {
                    nakade: true,
                    ..Knowledge::default()
                }
            ),
            Some(at(&pyramid, "F1"))
        );
        let square = board(
            "
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . X X X .
            . . . X . . X
            . . . X . . X
            ",
        );
        assert_eq!(vital_point(&square, Color::White, d1), None);
        let shared = board(
            "
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . X .
            . . . . O . X
            . . . X . . .
            ",
        );
        assert_eq!(vital_point(&shared, Color::White, d1), None);
    }

    /// Black's C3 took a ko on B3; White made a threat elsewhere and Black
    /// answered it, so the retake is open again. With `ko_fight` at 1
    /// White goes back to it at once; without it, only where a random
    /// move happens to fall there.
    #[test]
    fn an_open_ko_is_fought_over() {
        let mut ko = board(
            "
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . X O . . . .
            X O . O . . .
            . X O . . . .
            . . . . . . .
            ",
        );
        let (b3, c3) = (at(&ko, "B3"), at(&ko, "C3"));
        ko.play(c3, Color::Black);
        assert_eq!(ko.ko_point(), Some(b3), "Black's C3 takes a ko");
        ko.clear_ko();
        let recent = Recent {
            last: NO_VERTEX,
            last2: NO_VERTEX,
            open_ko: Some(b3),
            ataris: &[],
        };
        let fights = Knowledge {
            ko_fight: 1.0,
            ..Knowledge::default()
        };
        let retakes =
            |knows: &Knowledge<'_>| seeds_playing(&ko, Color::White, recent, knows, |v| v == b3);
        assert_eq!(retakes(&fights), 20);
        assert!(retakes(&Knowledge::default()) < 20);
    }

    /// White's stone on B6 was put in atari earlier and left there;
    /// White's last move, G7 alone in a corner, calls for no answer.
    /// With `captures`, Black takes B6 at its last liberty, B5; without,
    /// a random move. The watch, begun on the board, finds the chain, and
    /// a move that puts another in atari adds it.
    #[test]
    fn a_chain_in_atari_anywhere_is_taken() {
        let mut position = board(
            "
            . X . . . . .
            X O X . . . .
            . . . . . . .
            . . . . . . .
            . . . . . O .
            . . . . O X .
            . . . . . . .
            ",
        );
        let (b6, b5, g7) = (
            at(&position, "B6"),
            at(&position, "B5"),
            at(&position, "G7"),
        );
        position.play(g7, Color::White);
        let mut watch = AtariWatch::of(&position);
        assert_eq!(watch.stones(), [b6]);
        let recent = Recent {
            last: g7,
            last2: NO_VERTEX,
            open_ko: None,
            ataris: watch.stones(),
        };
        let captures = Knowledge {
            captures: true,
            ..Knowledge::default()
        };
        let takes = |knows: &Knowledge<'_>| {
            seeds_playing(&position, Color::Black, recent, knows, |v| v == b5)
        };
        assert_eq!(takes(&captures), 20);
        assert!(takes(&Knowledge::default()) < 20);
        // For White there is nothing to take: its own chain in atari is
        // not a capture.
        let mut rng = SplitMix64::new(1);
        assert_eq!(
            capture_anywhere(&position, Color::White, watch.stones(), &mut rng),
            None
        );
        let (e2, f2, f1) = (
            at(&position, "E2"),
            at(&position, "F2"),
            at(&position, "F1"),
        );
        position.play(f1, Color::White);
        watch.note(&position, f1);
        assert_eq!(watch.stones(), [b6, f2], "F1 puts F2 in atari");
        assert!(!watch.stones().contains(&e2));
    }

    /// Nothing next to White's last move (G7, alone in a corner) makes a
    /// shape, but next to Black's own last move (C3, beside White's D3)
    /// the hane at D2 and D4 do, among others. With `shapes_near_last2`
    /// Black plays one of those; without it, a random move.
    #[test]
    fn shapes_next_to_the_move_before_the_last_are_answered() {
        let position = board(
            "
            . . . . . . O
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . X O . . .
            . . . . . . .
            . . . . . . .
            ",
        );
        let (g7, c3) = (at(&position, "G7"), at(&position, "C3"));
        let shapes: Vec<Vertex> = around(&position, c3)
            .into_iter()
            .filter(|&v| position.is_empty(v) && is_shape_move(&position, v))
            .collect();
        assert!(shapes.contains(&at(&position, "D2")) && shapes.contains(&at(&position, "D4")));
        let recent = Recent {
            last: g7,
            last2: c3,
            open_ko: None,
            ataris: &[],
        };
        let near_last2 = Knowledge {
            shapes_near_last2: true,
            ..Knowledge::default()
        };
        let plays_shape = |knows: &Knowledge<'_>| {
            seeds_playing(&position, Color::Black, recent, knows, |v| {
                shapes.contains(&v)
            })
        };
        assert_eq!(plays_shape(&near_last2), 20);
        assert!(plays_shape(&Knowledge::default()) < 10);
    }

    /// Black's A1–B2 chain and White's C1–D2 chain race, sharing C2, each
    /// with one liberty outside (A1 and E1). Black's C2 would leave Black's
    /// chain in atari: with `outside_liberties` a random move that lands
    /// there is played at E1 instead, which puts White's chain in atari,
    /// and neither C2 nor A1 (self-atari with no enemy chain to approach)
    /// is ever played.
    #[test]
    fn a_capturing_race_is_played_from_the_outside() {
        let race = board(
            "
            . . . . .
            . . . . .
            O O O X X
            X X . O X
            . X O O .
            ",
        );
        let [a1, c2, e1] = ["A1", "C2", "E1"].map(|p| at(&race, p));
        assert!(is_big_self_atari(&race, c2, Color::Black));
        assert_eq!(outside_liberty(&race, c2, Color::Black), Some(e1));
        assert_eq!(
            outside_liberty(&race, a1, Color::Black),
            None,
            "no enemy chain of two liberties touches A1"
        );
        let recent = Recent {
            last: NO_VERTEX,
            last2: NO_VERTEX,
            open_ko: None,
            ataris: &[],
        };
        let moves = |outside_liberties: bool| -> Vec<Option<Vertex>> {
            let knows = Knowledge {
                outside_liberties,
                ..Knowledge::default()
            };
            (0..100)
                .map(|seed| {
                    let mut rng = SplitMix64::new(seed);
                    playout_move(&race, Color::Black, recent, &mut rng, &knows)
                })
                .collect()
        };
        let (with, without) = (moves(true), moves(false));
        for mv in with.iter().chain(&without) {
            assert!(
                *mv != Some(c2) && *mv != Some(a1),
                "a self-atari was played"
            );
        }
        let mut redirected = 0;
        for (w, o) in with.iter().zip(&without) {
            if *o == Some(e1) {
                assert_eq!(*w, Some(e1), "the same scan finds E1 first either way");
            } else if *w == Some(e1) {
                redirected += 1;
            }
        }
        assert!(redirected > 0, "no move on C2 was redirected to E1");
    }

    /// White answered Black's C3 at D4 and won that playout, so after C3
    /// White's playouts play D4; then E5 after A1 and C3 won, and the
    /// reply to the latest pair and move is E5. Once a playout where White played D4 after C3 is
    /// lost, the reply is forgotten; a draw teaches nothing.
    #[test]
    fn a_reply_that_won_is_played_until_a_playout_with_it_is_lost() {
        let empty = board(
            "
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . . .
            . . . . . . .
            ",
        );
        let [a1, c3, d4, e5] = ["A1", "C3", "D4", "E5"].map(|p| at(&empty, p));
        let (b, w) = (Color::Black, Color::White);
        let mut replies = Replies::default();
        replies.learn(
            [NO_VERTEX, NO_VERTEX],
            &[(c3, b), (d4, w), (e5, b)],
            Some(w),
        );
        assert_eq!(replies.reply(w, NO_VERTEX, c3), Some(d4));
        assert_eq!(
            replies.reply(b, c3, d4),
            None,
            "the loser's moves are not learnt"
        );
        replies.learn([NO_VERTEX, a1], &[(c3, b), (e5, w)], Some(w));
        assert_eq!(replies.reply(w, a1, c3), Some(e5), "the pair's reply first");
        assert_eq!(replies.reply(w, NO_VERTEX, c3), Some(e5));

        let mut position = empty.clone();
        position.play(c3, b);
        let knows = Knowledge {
            replies: Some(&replies),
            ..Knowledge::default()
        };
        let recent = Recent {
            last: c3,
            last2: a1,
            open_ko: None,
            ataris: &[],
        };
        let plays = |knows: &Knowledge<'_>, v: Vertex| {
            seeds_playing(&position, w, recent, knows, |m| m == v)
        };
        assert_eq!(plays(&knows, e5), 20);
        assert!(plays(&Knowledge::default(), e5) < 20);

        replies.learn([NO_VERTEX, a1], &[(c3, b), (e5, w)], None);
        assert_eq!(replies.reply(w, a1, c3), Some(e5), "a draw teaches nothing");
        replies.learn([NO_VERTEX, a1], &[(c3, b), (e5, w)], Some(b));
        assert_eq!(replies.reply(w, a1, c3), None);
        assert_eq!(replies.reply(w, NO_VERTEX, c3), None);
    }
}
