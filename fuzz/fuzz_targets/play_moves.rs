//! Arbitrary move sequences on any board size and ruleset: every move is
//! accepted or refused without a panic, the board's bookkeeping stays
//! consistent, and undo restores the earlier position.
#![no_main]

use baduk::{Action, BoardSize, Game, Move, Point, Preset, Rules};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [size_byte, rules_byte, moves @ ..] = data else {
        return;
    };
    let Ok(size) = BoardSize::new(2 + u32::from(*size_byte) % 18) else {
        return;
    };
    let preset = Preset::ALL[usize::from(*rules_byte) % Preset::ALL.len()];
    let mut game = Game::new(Rules::preset(preset).with_board_size(size));
    for pair in moves.chunks(2) {
        let color = if pair[0] & 0x80 == 0 { game.to_move() } else { game.to_move().opponent() };
        let action = match pair {
            [a, b] if *a & 0x7f != 0x7f => Action::Play(Point::new(a % 20, b % 20)),
            _ => Action::Pass,
        };
        let before = game.board().clone();
        let legal = game.is_legal(color, action);
        let result = game.play_as(Move { color, action });
        assert_eq!(legal, result.is_ok(), "is_legal and play_as disagree on {action}");
        if result.is_err() {
            assert_eq!(game.board(), &before, "a refused move changed the board");
            continue;
        }
        game.board().check_invariants().expect("board bookkeeping");
        if pair.len() == 2 && pair[1] & 0x40 != 0 {
            let mut undone = game.clone();
            undone.undo().expect("undo after a move");
            assert_eq!(undone.board(), &before, "undo restores the position");
        }
        if game.is_over() {
            break;
        }
    }
    let score = game.score_with_dead(&[]);
    let points = size.points() as u32;
    assert!(score.black + score.white + score.neutral <= points + game.board().prisoners(baduk::Color::Black) + game.board().prisoners(baduk::Color::White));
    if size.get() <= 5 {
        // The dead-stone analysis runs hundreds of playouts: small boards only.
        let _ = game.score_preview();
    }
});
