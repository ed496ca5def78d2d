//! Playouts per second of each level's search from the empty 9×9 board,
//! with the learned patterns' priors and without them (in turn, in one
//! run): `cargo run --release -p baduk-ai --example search_rate`.
use baduk::{Game, Rules};
use baduk_ai::{Budget, Level, Tuning, search_tuned};

fn main() {
    let game = Game::new(Rules::ttakji());
    for level in Level::ALL {
        for patterns in [true, false] {
            let tuning = Tuning {
                pattern_prior: if patterns {
                    level.tuning().pattern_prior
                } else {
                    0.0
                },
                // A fixed budget: the rate, not the time management.
                time_extension: 0.0,
                ..level.tuning()
            };
            let budget: Budget = level.budget();
            let result = search_tuned(&game, budget, 1, 1, tuning);
            let secs = result.elapsed.as_secs_f64();
            let best = result
                .best()
                .and_then(|m| m.vertex)
                .map(|v| game.board().point(v).to_string());
            println!(
                "{level}, {}: {} playouts in {:.3} s = {:.0} playouts/s; best {:?} ({:.1}%)",
                if patterns { "patterns" } else { "no patterns" },
                result.playouts,
                secs,
                f64::from(result.playouts) / secs,
                best,
                100.0 * result.winrate()
            );
        }
    }
}
