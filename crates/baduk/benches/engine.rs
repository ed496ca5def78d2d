//! Engine speed: light playouts on 9×9, a superko legality check deep into
//! a long game, and the final count of a finished game with dead stones.
//!
//! `cargo bench -p baduk`; every benchmark runs on one thread.

use std::hint::black_box;

use baduk::playout::light_playout;
use baduk::{Action, Board, BoardSize, Color, Game, Move, Rules, SplitMix64, sgf};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("light_playout_9x9");
    group.throughput(Throughput::Elements(1));
    let empty = Board::new(BoardSize::NINE);
    let mut rng = SplitMix64::new(1);
    group.bench_function("from_empty_board", |b| {
        b.iter(|| {
            let mut board = empty.clone();
            black_box(light_playout(&mut board, Color::Black, &mut rng))
        });
    });
    group.finish();
}

/// A 250-move game of random legal moves (seeded), for superko checks on a
/// long history.
fn long_game() -> Game {
    let mut rules = Rules::ttakji();
    rules.move_cap = None;
    let mut game = Game::new(rules);
    let mut rng = SplitMix64::new(7);
    while game.move_number() < 250 && !game.is_over() {
        let color = game.to_move();
        let legal = game.legal_points(color);
        let action = if legal.is_empty() {
            Action::Pass
        } else {
            Action::Play(legal[rng.below(legal.len())])
        };
        // Keep the game going: a pass after a pass would end it.
        let action = if action == Action::Pass && game.passes_in_a_row() == 1 {
            match legal.first() {
                Some(&p) => Action::Play(p),
                None => break,
            }
        } else {
            action
        };
        if game.play(Move { color, action }).is_err() {
            break;
        }
    }
    game
}

fn legality(c: &mut Criterion) {
    let game = long_game();
    assert!(
        game.move_number() == 250 && !game.is_over(),
        "the benchmark game stopped at move {}",
        game.move_number()
    );
    let color = game.to_move();
    let points: Vec<_> = BoardSize::NINE.all_points().collect();
    let mut group = c.benchmark_group("superko_legality_after_250_moves");
    group.throughput(Throughput::Elements(points.len() as u64));
    group.bench_function("check_every_point", |b| {
        b.iter(|| {
            points
                .iter()
                .filter(|&&p| game.check(color, black_box(p)).is_ok())
                .count()
        });
    });
    group.bench_function("ko_forbidden_points", |b| {
        b.iter(|| black_box(game.ko_forbidden_points()));
    });
    group.finish();
}

fn final_count(c: &mut Criterion) {
    let text = include_str!("../tests/data/gnugo-finished/002.sgf");
    let (_, game) = sgf::read_game(text).expect("the benchmark game reads");
    // A game keeps its reading until its board changes, so the count of
    // the same game is read once: the reading itself is what is timed.
    c.bench_function("final_count_with_dead_stones_9x9", |b| {
        b.iter(|| black_box(baduk::analyse(black_box(game.board()))));
    });
}

criterion_group!(benches, playouts, legality, final_count);
criterion_main!(benches);
