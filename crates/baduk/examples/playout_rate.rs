//! Light playouts per second on 9×9 from the empty board, on one thread:
//! `cargo run --release -p baduk --example playout_rate [PLAYOUTS]`.
//! (`cargo bench -p baduk` measures the same with criterion.)
use baduk::playout::light_playout;
use baduk::{Board, BoardSize, Color, SplitMix64};

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50_000);
    let empty = Board::new(BoardSize::NINE);
    let mut rng = SplitMix64::new(1);
    let mut moves = 0u64;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let mut board = empty.clone();
        moves += u64::from(light_playout(&mut board, Color::Black, &mut rng));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{n} playouts, {:.1} moves each, {:.0} playouts/s",
        moves as f64 / f64::from(n),
        f64::from(n) / secs
    );
}
