//! Playouts per second of each level's search from the empty 9×9 board:
//! `cargo run --release -p baduk-ai --example search_rate`.
use baduk::{Game, Rules};
use baduk_ai::{Level, search};

fn main() {
    let game = Game::new(Rules::ttakji());
    for level in Level::ALL {
        let result = search(&game, level.budget(), 1, 1);
        let secs = result.elapsed.as_secs_f64();
        let best = result
            .best()
            .and_then(|m| m.vertex)
            .map(|v| game.board().point(v).to_string());
        println!(
            "{level}: {} playouts in {:.3} s = {:.0} playouts/s; best {:?} ({:.1}%)",
            result.playouts,
            secs,
            f64::from(result.playouts) / secs,
            best,
            100.0 * result.winrate()
        );
    }
}
