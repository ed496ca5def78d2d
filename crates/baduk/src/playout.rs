//! Random playouts: light ones for speed measurement, and the policy the
//! dead-stone judgement reads with.
//!
//! Playouts use the board's own rules (simple ko, no suicide) rather than
//! superko, which is standard for playouts and keeps them fast; a playout is
//! cut off after `3 × points` moves so a long cycle cannot run forever.

use crate::board::{Board, NO_VERTEX, SplitMix64, Vertex};
use crate::point::Color;

/// Plays uniformly random legal moves that do not fill a single-point eye
/// shape of the mover's own, from `board` with `to_move` first, until both
/// pass. Returns the number of moves played (passes excluded).
pub fn light_playout(board: &mut Board, mut to_move: Color, rng: &mut SplitMix64) -> u32 {
    let limit = 3 * board.size().points() as u32;
    let mut moves = 0;
    let mut passes = 0;
    while passes < 2 && moves < limit {
        match board.random_playout_move(to_move, rng) {
            Some(v) => {
                board.play(v, to_move);
                moves += 1;
                passes = 0;
            }
            None => {
                board.clear_ko();
                passes += 1;
            }
        }
        to_move = to_move.opponent();
    }
    moves
}

/// Every point where a light playout may put a `color` stone, in the
/// order of the empty list: what [`Board::random_playout_move`] draws from.
#[must_use]
pub fn all_playout_candidates(board: &Board, color: Color) -> Vec<Vertex> {
    board
        .empty_vertices()
        .iter()
        .map(|&v| usize::from(v))
        .filter(|&v| board.is_playout_candidate(v, color) && Some(v) != board.ko_point())
        .collect()
}

/// A random empty point where `color` may play that is not its own eye
/// shape and that `accept` agrees to, or `None` (pass). The scan starts at a
/// random place in the empty list and takes the first fit.
#[inline]
pub fn random_move(
    board: &Board,
    color: Color,
    rng: &mut SplitMix64,
    mut accept: impl FnMut(&Board, Vertex, Color) -> bool,
) -> Option<Vertex> {
    first_empty_from_random(board, rng, |v| {
        board.is_playout_candidate(v, color)
            && Some(v) != board.ko_point()
            && accept(board, v, color)
    })
}

/// The first empty point that `fits`, scanning the empty list from a random
/// place (one draw of `rng` when any point is empty), or `None`.
#[inline]
fn first_empty_from_random(
    board: &Board,
    rng: &mut SplitMix64,
    mut fits: impl FnMut(Vertex) -> bool,
) -> Option<Vertex> {
    let n = board.empty_vertices().len();
    if n == 0 {
        return None;
    }
    let start = rng.below(n);
    let empties = board.empty_vertices();
    (start..n)
        .chain(0..start)
        .map(|i| usize::from(empties[i]))
        .find(|&v| fits(v))
}

/// Whether `color` playing on `v` leaves its new chain (of two stones or
/// more) in atari without capturing anything: a throw-in of one stone is
/// allowed, since killing eye shapes needs it.
#[must_use]
pub fn is_big_self_atari(board: &Board, v: Vertex, color: Color) -> bool {
    if board.empty_neighbours(v) >= 2 {
        return false;
    }
    let enemy = color.opponent();
    // The first liberty found; a second distinct one means no atari.
    let mut first: Vertex = NO_VERTEX;
    let mut size = 1;
    let mut more_than_one = |l: Vertex| -> bool {
        if l == v || l == first {
            false
        } else if first == NO_VERTEX {
            first = l;
            false
        } else {
            true
        }
    };
    for nb in board.neighbours(v) {
        if board.is_empty(nb) {
            if more_than_one(nb) {
                return false;
            }
        } else if board.color_at(nb) == Some(enemy) {
            if board.in_atari(nb) {
                return false; // it captures
            }
        } else if board.color_at(nb) == Some(color) {
            size += board.chain_len(nb);
            if board.in_atari(nb) {
                continue; // its only liberty is `v`
            }
            if board.liberty_count_up_to(nb, 3) >= 3 {
                return false;
            }
            // Two liberties: `v` and one other.
            for s in board.chain_stones(nb) {
                for l in board.neighbours(s) {
                    if board.is_empty(l) && more_than_one(l) {
                        return false;
                    }
                }
            }
        }
    }
    size >= 2
}

/// The liberties, counted up to `limit` (at most 8), that the chain of a
/// `color` stone played on the empty vertex `v` would have, without playing
/// it. A capture counts the captured stone next to `v` as one liberty, so
/// the answer is a lower bound after captures.
#[must_use]
pub fn liberties_after(board: &Board, v: Vertex, color: Color, limit: usize) -> usize {
    let limit = limit.min(8);
    let mut libs = [NO_VERTEX; 8];
    let mut n = 0;
    let mut add = |l: Vertex, n: &mut usize| {
        if l != v && *n < limit && !libs[..*n].contains(&l) {
            libs[*n] = l;
            *n += 1;
        }
    };
    for nb in board.neighbours(v) {
        if board.is_empty(nb) {
            add(nb, &mut n);
        } else if board.color_at(nb) == Some(color) {
            for s in board.chain_stones(nb) {
                for l in board.neighbours(s) {
                    if board.is_empty(l) {
                        add(l, &mut n);
                    }
                }
                if n >= limit {
                    return n;
                }
            }
        } else if board.color_at(nb).is_some() && board.in_atari(nb) {
            add(nb, &mut n);
        }
        if n >= limit {
            return n;
        }
    }
    n
}

/// Whether the chain on `x`, in atari and its owner to move, is caught in
/// a ladder: extending on its liberty leaves it at most two liberties, and
/// the attacker can atari it again on one of them until it is taken. A
/// chain that can take an attacker chain in atari next to it escapes (it
/// captures instead of running), and so does a chain that gains three
/// liberties. Reading stops after `LADDER_READS` ataris and calls the chain
/// free, so a ladder too long to read is not trusted.
#[must_use]
pub fn is_ladder_caught(board: &Board, x: Vertex) -> bool {
    let mut reads = LADDER_READS;
    ladder_caught(board, x, &mut reads)
}

/// How many of the attacker's ataris [`is_ladder_caught`] reads at most.
const LADDER_READS: u32 = 24;

fn ladder_caught(board: &Board, x: Vertex, reads: &mut u32) -> bool {
    let Some(color) = board.color_at(x) else {
        return false;
    };
    let Some(l) = board.atari_liberty(x) else {
        return false;
    };
    if touches_enemy_in_atari(board, x, color) {
        return false;
    }
    if !board.is_playable(l, color, false) {
        return true;
    }
    let mut after = board.clone();
    after.play(l, color);
    match after.liberty_count_up_to(x, 3) {
        0 | 1 => return true,
        2 => {}
        _ => return false,
    }
    let enemy = color.opponent();
    for a in two_liberties(&after, x) {
        if *reads == 0 {
            return false;
        }
        *reads -= 1;
        if !after.is_playable(a, enemy, false) {
            continue;
        }
        let mut next = after.clone();
        next.play(a, enemy);
        if next.in_atari(x) && ladder_caught(&next, x, reads) {
            return true;
        }
    }
    false
}

/// The two liberties of the chain on `x`, which has exactly two.
#[must_use]
pub fn two_liberties(board: &Board, x: Vertex) -> [Vertex; 2] {
    let mut libs = [NO_VERTEX; 2];
    for s in board.chain_stones(x) {
        for n in board.neighbours(s) {
            if board.is_empty(n) && libs[0] != n {
                if libs[0] == NO_VERTEX {
                    libs[0] = n;
                } else {
                    libs[1] = n;
                    return libs;
                }
            }
        }
    }
    libs
}

/// Whether an enemy chain touching the chain on `x` (of `color`) is in
/// atari.
#[must_use]
pub fn touches_enemy_in_atari(board: &Board, x: Vertex, color: Color) -> bool {
    let enemy = color.opponent();
    board.chain_stones(x).any(|s| {
        board
            .neighbours(s)
            .iter()
            .any(|&n| board.color_at(n) == Some(enemy) && board.in_atari(n))
    })
}

/// Whether the dead-stone policy may put a `color` stone on the empty `v`:
/// a playout candidate, or a false eye of its own that joins two of its
/// chains. Light playouts never fill an eye shape; a side that can close
/// in on an enemy group only through a false eye of its own is then left
/// without a move, the playout ends in a seki that real play would not
/// leave, and a dead group survives it. An eye shape bordered by one chain
/// is a real eye whatever its diagonals, so it stays unfilled.
#[inline]
fn may_play(board: &Board, v: Vertex, color: Color) -> bool {
    board.is_playout_candidate(v, color) || fills_false_eye(board, v, color)
}

/// Whether `v` is an eye shape of `color` that is false (enemy stones hold
/// its diagonals) and borders more than one of its chains, so filling it
/// joins them; and the filling is not suicide.
fn fills_false_eye(board: &Board, v: Vertex, color: Color) -> bool {
    if !board.is_eye_shape(v, color) || board.is_true_eye(v, color) {
        return false;
    }
    let mut first = NO_VERTEX;
    for n in board.neighbours(v) {
        if board.color_at(n) == Some(color) {
            let h = board.chain_head(n);
            if first == NO_VERTEX {
                first = h;
            } else if h != first {
                return !board.is_suicide(v, color);
            }
        }
    }
    false
}

/// A random empty point where the dead-stone policy may play (see
/// [`may_play`]) that is not the ko point nor a big self-atari, or `None`
/// (pass): the scan of [`random_move`].
fn random_policy_move(board: &Board, color: Color, rng: &mut SplitMix64) -> Option<Vertex> {
    first_empty_from_random(board, rng, |v| {
        may_play(board, v, color)
            && Some(v) != board.ko_point()
            && !is_big_self_atari(board, v, color)
    })
}

/// The move the dead-stone policy picks for `color`: capture a chain that
/// the last move left in atari, else save an own chain the last move put in
/// atari, else a random move that is not a big self-atari. It may fill a
/// false eye that joins its chains (see [`may_play`]), never a real one.
/// `ataris` holds the board's chains that may be in atari.
fn policy_move(
    board: &Board,
    color: Color,
    last: Option<Vertex>,
    rng: &mut SplitMix64,
    ataris: &Ataris,
) -> Option<Vertex> {
    if let Some(last) = last {
        // Capture the stone just played, or a neighbour of it, if in atari.
        let mut around = [last; 5];
        around[1..].copy_from_slice(&board.neighbours(last));
        for x in around {
            if board.color_at(x) == Some(color.opponent())
                && let Some(l) = board.atari_liberty(x)
                && board.is_playable(l, color, false)
            {
                return Some(l);
            }
        }
        // Escape: an own chain next to the last move in atari gets extended
        // when that gives it room.
        for x in board.neighbours(last) {
            if board.color_at(x) == Some(color)
                && let Some(l) = board.atari_liberty(x)
                && board.is_playable(l, color, false)
                && !is_big_self_atari(board, l, color)
            {
                let mut after = board.clone();
                after.play(l, color);
                if !after.is_empty(l) && after.liberty_count_up_to(l, 2) >= 2 {
                    return Some(l);
                }
            }
        }
    }
    // Capture anything in atari anywhere.
    if let Some(v) = ataris.capture(board, color) {
        return Some(v);
    }
    // Answer next to the last move with a shape move, when there is one.
    if let Some(last) = last {
        let mut near = [0; 8];
        near[..4].copy_from_slice(&board.neighbours(last));
        near[4..].copy_from_slice(&board.diagonals(last));
        let start = rng.below(8);
        for i in 0..8 {
            let v = near[(start + i) % 8];
            if board.is_empty(v)
                && crate::shape::is_shape_move(board, v)
                && may_play(board, v, color)
                && Some(v) != board.ko_point()
                && !is_big_self_atari(board, v, color)
            {
                return Some(v);
            }
        }
        // Otherwise, most of the time, any move next to it.
        if rng.below(4) != 0 {
            for i in 0..8 {
                let v = near[(start + i) % 8];
                if board.is_empty(v)
                    && may_play(board, v, color)
                    && Some(v) != board.ko_point()
                    && !is_big_self_atari(board, v, color)
                {
                    return Some(v);
                }
            }
        }
    }
    random_policy_move(board, color, rng)
}

/// The chains of a playout that may be in atari, by one stone of each, so
/// the policy's "capture anything in atari" need not look at every empty
/// point at every move. A chain comes into atari only by losing a liberty
/// to a stone played next to it (or by being made with one), and a move
/// takes liberties from no chain but those next to it: after each move the
/// chains next to it are added and those no longer in atari dropped, so
/// every chain in atari is always among them.
struct Ataris {
    stones: Vec<Vertex>,
}

impl Ataris {
    /// The chains in atari on `board`.
    fn of(board: &Board) -> Ataris {
        let mut ataris = Ataris {
            stones: Vec::with_capacity(16),
        };
        for v in board.vertices() {
            if board.color_at(v).is_some() && board.in_atari(v) {
                ataris.add(board, v);
            }
        }
        ataris
    }

    /// Notes the chain on `v`, once.
    fn add(&mut self, board: &Board, v: Vertex) {
        let head = board.chain_head(v);
        if !self.stones.iter().any(|&s| board.chain_head(s) == head) {
            self.stones.push(v);
        }
    }

    /// After a stone was played on `v`: its chain and the chains next to it
    /// may have come into atari; the ones that are not (or were taken) go.
    fn after_move(&mut self, board: &Board, v: Vertex) {
        self.stones
            .retain(|&s| board.color_at(s).is_some() && board.in_atari(s));
        for s in std::iter::once(v).chain(board.neighbours(v)) {
            if board.color_at(s).is_some() && board.in_atari(s) {
                self.add(board, s);
            }
        }
    }

    /// The first point in the board's empty list where `color` captures a
    /// chain in atari and may play, as a scan of that list finds it.
    fn capture(&self, board: &Board, color: Color) -> Option<Vertex> {
        let enemy = color.opponent();
        self.stones
            .iter()
            .filter(|&&s| board.color_at(s) == Some(enemy))
            .filter_map(|&s| board.atari_liberty(s))
            .filter(|&l| board.is_playable(l, color, false))
            .min_by_key(|&l| board.empty_index(l))
    }
}

/// Plays the dead-stone policy from `board` with `to_move` first until both
/// pass (or the move limit).
pub fn policy_playout(board: &mut Board, mut to_move: Color, rng: &mut SplitMix64) {
    let limit = 3 * board.size().points();
    let mut passes = 0;
    let mut last = None;
    let mut moves = 0;
    let mut ataris = Ataris::of(board);
    while passes < 2 && moves < limit {
        match policy_move(board, to_move, last, rng, &ataris) {
            Some(v) => {
                board.play(v, to_move);
                ataris.after_move(board, v);
                last = Some(v);
                passes = 0;
                moves += 1;
            }
            None => {
                board.clear_ko();
                last = None;
                passes += 1;
            }
        }
        to_move = to_move.opponent();
    }
}

/// Who owns `v` at the end of a playout: its stone, or the colour of all
/// its neighbours if it is empty and they agree.
pub fn owner_at_end(board: &Board, v: Vertex) -> Option<Color> {
    if let Some(c) = board.color_at(v) {
        return Some(c);
    }
    let mut owner = None;
    for n in board.neighbours(v) {
        match (board.color_at(n), owner) {
            (None, _) => {}
            (Some(c), None) => owner = Some(c),
            (Some(c), Some(o)) if c != o => return None,
            _ => {}
        }
    }
    owner
}

/// Black's area minus White's at the end of a playout: stones, plus empty
/// points whose neighbours are all one colour. Komi is not included.
#[must_use]
pub fn area_margin(board: &Board) -> i32 {
    area_margin_by_owner(board, |_| {})
}

/// [`area_margin`], calling `black_owns` with each point Black owns as it
/// counts (a search's ownership map, in the same pass).
pub fn area_margin_by_owner(board: &Board, mut black_owns: impl FnMut(Vertex)) -> i32 {
    let mut margin = 0;
    for v in board.vertices() {
        match owner_at_end(board, v) {
            Some(Color::Black) => {
                margin += 1;
                black_owns(v);
            }
            Some(Color::White) => margin -= 1,
            None => {}
        }
    }
    margin
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BoardSize;

    /// The first point of the empty list where `color` captures and may
    /// play, found by looking at every one: what [`Ataris::capture`] answers.
    fn capture_by_scan(board: &Board, color: Color) -> Option<Vertex> {
        board
            .empty_vertices()
            .iter()
            .map(|&e| usize::from(e))
            .find(|&v| {
                board
                    .neighbours(v)
                    .iter()
                    .any(|&n| board.color_at(n) == Some(color.opponent()) && board.in_atari(n))
                    && board.is_playable(v, color, false)
            })
    }

    /// Along dead-stone playouts from the empty board and from positions
    /// with many chains in atari, the chains kept as maybe in atari give
    /// the capture a scan of every empty point finds, for both colours.
    #[test]
    fn the_chains_kept_in_atari_find_the_capture_a_scan_finds() {
        let mut captures = 0;
        for size in [5, 9, 13] {
            let size = BoardSize::new(size).expect("board size");
            for seed in 0..60 {
                let mut board = Board::new(size);
                let mut rng = SplitMix64::new(seed);
                // Some random stones first, so a playout starts with chains
                // already in atari.
                light_playout(&mut board, Color::Black, &mut rng);
                let mut thinned = Board::new(size);
                for v in board.vertices() {
                    if let Some(c) = board.color_at(v)
                        && rng.below(3) == 0
                        && thinned.is_playable(v, c, false)
                    {
                        thinned.play(v, c);
                    }
                }
                let mut board = thinned;
                let mut ataris = Ataris::of(&board);
                let mut to_move = Color::Black;
                let mut last = None;
                for _ in 0..3 * size.points() {
                    for c in [Color::Black, Color::White] {
                        let scanned = capture_by_scan(&board, c);
                        assert_eq!(ataris.capture(&board, c), scanned, "{c} on\n{board:?}");
                        captures += usize::from(scanned.is_some());
                    }
                    match policy_move(&board, to_move, last, &mut rng, &ataris) {
                        Some(v) => {
                            board.play(v, to_move);
                            ataris.after_move(&board, v);
                            last = Some(v);
                        }
                        None => {
                            board.clear_ko();
                            last = None;
                        }
                    }
                    to_move = to_move.opponent();
                }
            }
        }
        assert!(captures > 1000, "only {captures} positions had a capture");
    }

    /// Playouts run to the end on several sizes: a side is left with no
    /// move, only single-point eyes are empty, the board is consistent.
    #[test]
    fn light_playouts_end_with_a_side_out_of_moves_and_no_empty_area() {
        let mut ended = 0;
        for size in [5, 7, 9, 13] {
            let size = BoardSize::new(size).expect("board size");
            for seed in 0..200 {
                let mut board = Board::new(size);
                let mut rng = SplitMix64::new(seed);
                let moves = light_playout(&mut board, Color::Black, &mut rng);
                board
                    .check_invariants()
                    .expect("invariants after a playout");
                if moves < 3 * size.points() as u32 {
                    // The second pass found no move (the first may have
                    // been a ko retake that the pass then opened).
                    board.clear_ko();
                    assert!(
                        all_playout_candidates(&board, Color::Black).is_empty()
                            || all_playout_candidates(&board, Color::White).is_empty()
                    );
                    // Only single-point eyes are left, no empty area.
                    for &e in board.empty_vertices() {
                        assert_eq!(board.empty_neighbours(usize::from(e)), 0);
                    }
                    ended += 1;
                }
            }
        }
        assert!(ended > 600, "{ended} of 800 playouts ended by two passes");
    }

    /// The dead-stone policy may fill a false eye that joins two of its
    /// chains (G1: F1 and G2 apart, White on F2), never an eye shape of one
    /// chain, whatever its diagonals (B7: White's C6 on its diagonal, but
    /// A7, B6 and C7 are one chain around C6).
    #[test]
    fn the_dead_stone_policy_fills_only_false_eyes_that_join_chains() {
        let board = Board::from_ascii(
            "
            X . X X . . .
            X X O X . . .
            . X . X . . .
            . X X X . . .
            . . . . . . .
            . . . . . O X
            . . . . . X .
            ",
        )
        .expect("drawing");
        let size = board.size();
        let at = |s: &str| board.vertex(size.parse_point(s).expect("point"));
        assert!(!board.is_true_eye(at("G1"), Color::Black));
        assert!(!board.is_true_eye(at("B7"), Color::Black));
        assert!(may_play(&board, at("G1"), Color::Black));
        assert!(!may_play(&board, at("B7"), Color::Black));
        // Light playouts fill neither.
        assert!(!board.is_playout_candidate(at("G1"), Color::Black));
        assert!(!board.is_playout_candidate(at("B7"), Color::Black));
    }

    /// Black's E5 is in atari. Running to E6 and on, it is chased in a
    /// ladder towards the top left corner and taken; with a Black stone on
    /// B8 in the ladder's path the chase breaks and it escapes. A chain
    /// that can take an attacker in atari is not caught either.
    #[test]
    fn a_ladder_is_read_to_its_end() {
        let caught = "
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . O . . .
            . . . O X O . . .
            . . . . O . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            ";
        let board = Board::from_ascii(caught).expect("drawing");
        let at = |b: &Board, s: &str| b.vertex(b.size().parse_point(s).expect("point"));
        assert!(is_ladder_caught(&board, at(&board, "E5")));
        let mut broken = board.clone();
        broken.play(at(&board, "B8"), Color::Black);
        assert!(!is_ladder_caught(&broken, at(&broken, "E5")));
        // A White stone in atari next to the chain: Black takes it.
        let mut takes = board.clone();
        takes.play(at(&board, "D4"), Color::Black);
        takes.play(at(&board, "E3"), Color::Black);
        assert!(takes.in_atari(at(&takes, "E4")));
        assert!(!is_ladder_caught(&takes, at(&takes, "E5")));
        // Not in atari: nothing to read.
        let mut free = board.clone();
        free.play(at(&board, "E6"), Color::Black);
        assert!(!is_ladder_caught(&free, at(&free, "E5")));
    }

    /// The same seed gives the same playout: the benchmark and every seeded
    /// calculation depend on it.
    #[test]
    fn light_playouts_are_fixed_by_their_seed() {
        let run = |seed| {
            let mut board = Board::new(BoardSize::NINE);
            let moves = light_playout(&mut board, Color::Black, &mut SplitMix64::new(seed));
            (moves, board.hash())
        };
        assert_eq!(run(11), run(11));
        assert_ne!(run(11), run(12));
    }
}
