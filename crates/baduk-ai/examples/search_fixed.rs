//! A fixed search (seeded, 2,000 playouts from the empty 9×9 board), for
//! counting instructions: `valgrind --tool=callgrind target/release/examples/search_fixed`.
use std::time::Duration;

use baduk::{Game, Rules};
use baduk_ai::{Budget, search};

fn main() {
    let playouts = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000);
    let game = Game::new(Rules::ttakji());
    let budget = Budget {
        playouts,
        time: Duration::from_secs(3600),
    };
    let result = search(&game, budget, 1, 1);
    println!(
        "{} playouts in {:.3} s",
        result.playouts,
        result.elapsed.as_secs_f64()
    );
}
