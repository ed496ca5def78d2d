//! Prints the average length of light playouts on 9×9 from the empty board.
use baduk::{Board, BoardSize, Color, SplitMix64, playout::light_playout};
fn main() {
    let mut rng = SplitMix64::new(1);
    let n: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20000);
    let mut total = 0u64;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let mut b = Board::new(BoardSize::NINE);
        total += u64::from(light_playout(&mut b, Color::Black, &mut rng));
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{} moves per playout, {:.0} playouts/s", total as f64 / n as f64, n as f64 / secs);
}
