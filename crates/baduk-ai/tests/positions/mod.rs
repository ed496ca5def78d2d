//! Positions the computer players' tests share, drawn as ASCII boards.

use baduk::{Board, Color, Game, Rules};

/// A game from a drawn position, `to_move` to play.
pub fn game_from(ascii: &str, rules: Rules, to_move: Color) -> Game {
    let board = Board::from_ascii(ascii).expect("drawn position");
    Game::from_setup(rules, board, to_move)
}

/// White's five stones in the middle have one liberty left, at F5, and
/// could run out through F5 and G5 to the wall on the right.
pub fn five_stones_in_atari() -> Game {
    game_from(
        ". . . . . . O . .
         . . . . . . O . .
         . . . X X X O . .
         . . X O O O X O .
         . . X O O . . O .
         . . . X X . O . .
         . . . . . . O . .
         . . . . . . O . .
         . . . . . . O . .",
        Rules::ttakji(),
        Color::Black,
    )
}
