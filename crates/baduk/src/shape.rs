//! 3×3 shape patterns for playouts: the hane, cuts and edge moves that
//! MoGo's playouts answer with (Gelly et al., 2006, as collected in Michi).
//!
//! A point matches when its 3×3 neighbourhood matches a pattern in any of
//! the eight rotations and reflections, with either colour as `X`. The
//! matches are expanded once into a table of all 65,536 neighbourhoods.

use std::sync::OnceLock;

use crate::board::{Board, Vertex};

/// The patterns, top row first, the move in the centre. `X` and `O` are
/// stones of the two colours, `.` empty, `x` not `O`, `o` not `X`, `?`
/// anything including off the board, and a space off the board.
const PATTERNS: [[&str; 3]; 13] = [
    ["XOX", "...", "???"], // enclosing hane
    ["XO.", "...", "?.?"], // non-cutting hane
    ["XO?", "X..", "o.?"], // magari
    [".O.", "X..", "..."], // diagonal attachment
    ["XO?", "O.x", "?x?"], // unprotected cut
    ["XO?", "O.X", "???"], // peeped cut
    ["?X?", "O.O", "xxx"], // cut with a push
    ["OX?", "x.O", "???"], // keima cut
    ["X.?", "O.?", "   "], // edge: chase
    ["OX?", "X.O", "   "], // edge: block the side cut
    ["?X?", "o.O", "   "], // edge: block the side connection
    ["?XO", "o.o", "   "], // edge: sagari
    ["?OX", "X.O", "   "], // edge: cut
];

const EMPTY: u16 = 0;
const BLACK: u16 = 1;
const WHITE: u16 = 2;
const OFF: u16 = 3;

/// Whether a move on `v` makes one of the shapes.
#[inline]
#[must_use]
pub fn is_shape_move(board: &Board, v: Vertex) -> bool {
    let code = board.neighbourhood_code(v);
    let table = table();
    table[usize::from(code >> 3)] & (1 << (code & 7)) != 0
}

fn table() -> &'static [u8; 8192] {
    static TABLE: OnceLock<Box<[u8; 8192]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([0u8; 8192]);
        for pattern in PATTERNS {
            let cells: Vec<char> = pattern.iter().flat_map(|row| row.chars()).collect();
            for transform in 0..8 {
                for swap in [false, true] {
                    // The eight cells around the centre, in code order.
                    let mut allowed: Vec<Vec<u16>> = Vec::with_capacity(8);
                    for (r, c) in [
                        (0, 0),
                        (0, 1),
                        (0, 2),
                        (1, 0),
                        (1, 2),
                        (2, 0),
                        (2, 1),
                        (2, 2),
                    ] {
                        let (pr, pc) = transformed(r, c, transform);
                        allowed.push(states(cells[pr * 3 + pc], swap));
                    }
                    expand(&allowed, 0, 0, &mut table);
                }
            }
        }
        table
    })
}

/// Where cell (r, c) of the board's neighbourhood comes from in the pattern
/// under one of the eight symmetries of the square.
fn transformed(r: usize, c: usize, t: usize) -> (usize, usize) {
    let (r, c) = if t & 4 != 0 { (c, r) } else { (r, c) };
    let r = if t & 1 != 0 { 2 - r } else { r };
    let c = if t & 2 != 0 { 2 - c } else { c };
    (r, c)
}

fn states(symbol: char, swap: bool) -> Vec<u16> {
    let (x, o) = if swap { (WHITE, BLACK) } else { (BLACK, WHITE) };
    match symbol {
        'X' => vec![x],
        'O' => vec![o],
        '.' => vec![EMPTY],
        'x' => vec![EMPTY, x],
        'o' => vec![EMPTY, o],
        ' ' => vec![OFF],
        _ => vec![EMPTY, BLACK, WHITE, OFF],
    }
}

fn expand(allowed: &[Vec<u16>], i: usize, code: u16, table: &mut [u8; 8192]) {
    if i == allowed.len() {
        table[usize::from(code >> 3)] |= 1 << (code & 7);
        return;
    }
    for &state in &allowed[i] {
        expand(allowed, i + 1, code | (state << (2 * i)), table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::point::BoardSize;

    #[test]
    fn a_hane_matches_in_every_orientation_and_colour() {
        // Black hane at D5 around White's D6... drawn as the enclosing hane
        // "XOX / . . . / ???" with the move below the white stone.
        let board = Board::from_ascii(
            ". . . . .
             . X O X .
             . . . . .
             . . . . .
             . . . . .",
        )
        .expect("position");
        let at = |s: &str| {
            board.vertex(
                BoardSize::new(5)
                    .expect("5x5")
                    .parse_point(s)
                    .expect("point"),
            )
        };
        assert!(is_shape_move(&board, at("C3")));
        assert!(!is_shape_move(&board, at("C1")));
        let rotated = Board::from_ascii(
            ". . . . .
             . . . O .
             . . . X .
             . . . O .
             . . . . .",
        )
        .expect("position");
        assert!(is_shape_move(&rotated, at("C3")));
    }
}
