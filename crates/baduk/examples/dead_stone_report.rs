//! Compares the dead-stone judgement with GNU Go's on a directory of
//! finished games (default: the test data set), game by game.
//!
//! `cargo run --release -p baduk --example dead_stone_report [DIR] [-v]`
//! prints each disagreement, and with `-v` every stone's playout losses.

use std::path::PathBuf;

use baduk::life::playout_losses;
use baduk::{Point, sgf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let dir = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/gnugo-finished")
        });
    let index = std::fs::read_to_string(dir.join("status.tsv"))?;
    let (mut total, mut found, mut wrong) = (0, 0, 0);
    let (mut reading, mut games) = (std::time::Duration::ZERO, 0u32);
    let mut alive_losses = Vec::new();
    let mut dead_losses = Vec::new();
    for line in index
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let text = std::fs::read_to_string(dir.join(cols[0]))?;
        let (_, game) = sgf::read_game(&text)?;
        let board = game.board();
        let size = board.size();
        let gnugo: Vec<Point> = cols
            .get(1)
            .unwrap_or(&"-")
            .split_whitespace()
            .filter(|s| *s != "-")
            .map(|s| size.parse_point(s))
            .collect::<Result<_, _>>()?;
        let start = std::time::Instant::now();
        let analysis = baduk::analyse(board);
        reading += start.elapsed();
        games += 1;
        let ours = analysis.dead;
        let losses = playout_losses(board);
        for v in board.vertices() {
            if board.color_at(v).is_some() {
                let share = losses.black_first[v].min(losses.white_first[v]);
                if gnugo.contains(&board.point(v)) {
                    dead_losses.push(share);
                } else {
                    alive_losses.push(share);
                    if share >= baduk::life::PLAYOUTS_PER_SIDE / 4 {
                        println!(
                            "{}: {} is alive for GNU Go but lost in {share} of the lines with its side first",
                            cols[0],
                            board.point(v)
                        );
                    }
                }
            }
        }
        total += gnugo.len();
        found += gnugo.iter().filter(|p| ours.contains(p)).count();
        let extra: Vec<String> = ours
            .iter()
            .filter(|p| !gnugo.contains(p))
            .map(Point::to_string)
            .collect();
        let missed: Vec<String> = gnugo
            .iter()
            .filter(|p| !ours.contains(p))
            .map(Point::to_string)
            .collect();
        wrong += extra.len();
        if !extra.is_empty() || !missed.is_empty() || verbose {
            println!(
                "{}: wrongly removed [{}], missed [{}]",
                cols[0],
                extra.join(" "),
                missed.join(" ")
            );
            for group in &analysis.doubtful {
                let stones: Vec<String> = group.stones.iter().map(Point::to_string).collect();
                println!(
                    "  kept as doubtful ({:?}): {}",
                    group.reason,
                    stones.join(" ")
                );
            }
            if verbose || !extra.is_empty() || !missed.is_empty() {
                print!("{}", board.to_ascii());
                for v in board.vertices() {
                    if board.color_at(v).is_some()
                        && losses.black_first[v] + losses.white_first[v] > 0
                    {
                        print!(
                            "{}:{}/{} ",
                            board.point(v),
                            losses.black_first[v],
                            losses.white_first[v]
                        );
                    }
                }
                println!();
            }
        }
    }
    alive_losses.sort_unstable();
    dead_losses.sort_unstable();
    println!(
        "GNU Go dead {total}, removed {found} ({:.1}%), wrongly removed {wrong}",
        100.0 * found as f64 / total.max(1) as f64
    );
    println!(
        "highest losses of stones GNU Go calls alive: {:?}",
        &alive_losses[alive_losses.len().saturating_sub(12)..]
    );
    for pct in [15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 95] {
        let t = baduk::life::PLAYOUTS_PER_SIDE * pct / 100;
        let dead_at = dead_losses.iter().filter(|&&l| l >= t).count();
        let alive_at = alive_losses.iter().filter(|&&l| l >= t).count();
        println!(
            "lost in >= {pct}% with either side first: {dead_at} of {} dead stones, {alive_at} alive stones",
            dead_losses.len()
        );
    }
    println!(
        "lowest losses of stones GNU Go calls dead: {:?}",
        &dead_losses[..dead_losses.len().min(30)]
    );
    println!(
        "the reading took {:.1} ms a board on average over {games} boards",
        reading.as_secs_f64() * 1000.0 / f64::from(games.max(1))
    );
    Ok(())
}
