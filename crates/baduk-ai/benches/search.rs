//! Search speed: playouts per second and think time per move at each level,
//! on one thread. `cargo bench -p baduk-ai`.

use std::hint::black_box;
use std::time::Duration;

use baduk::{Game, Rules, sgf};
use baduk_ai::{Budget, Level, search};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// An opening position and a middle-game one from a GNU Go game.
fn positions() -> Vec<(&'static str, Game)> {
    let text = include_str!("../../baduk/tests/data/gnugo-finished/005.sgf");
    let (record, _) = sgf::read_game(text).expect("the benchmark game reads");
    let mut middle = record.clone();
    middle.moves.truncate(20);
    vec![
        ("empty_9x9", Game::new(Rules::ttakji())),
        ("move_20", middle.to_game().expect("replays")),
    ]
}

fn playouts(c: &mut Criterion) {
    for (name, game) in positions() {
        let mut group = c.benchmark_group(format!("search_{name}"));
        group.sample_size(10);
        let n = 2_000;
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_function("2000_playouts", |b| {
            b.iter(|| {
                let budget = Budget {
                    playouts: n,
                    time: Duration::from_secs(60),
                };
                black_box(search(&game, budget, 1, 7))
            });
        });
        group.finish();
    }
}

fn think_time(c: &mut Criterion) {
    let game = Game::new(Rules::ttakji());
    let mut group = c.benchmark_group("think_time_per_move");
    group.sample_size(10);
    for level in Level::ALL {
        group.bench_function(level.name(), |b| {
            b.iter(|| black_box(search(&game, level.budget(), 1, 11)));
        });
    }
    group.finish();
}

criterion_group!(benches, playouts, think_time);
criterion_main!(benches);
