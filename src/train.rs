//! `ttakji train-patterns`: fits the move features' strengths (see
//! `baduk_ai::patterns`) to the moves of SGF game records and writes the
//! table the search's priors are built from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use baduk::board::NO_VERTEX;
use baduk::{Action, sgf};
use baduk_ai::patterns::{self, Position};

/// What to train on and where the table goes.
#[derive(Debug, Clone, clap::Args)]
pub struct TrainArgs {
    /// SGF files, or folders whose `.sgf` files are read.
    #[arg(required = true)]
    pub games: Vec<PathBuf>,
    /// Where the table goes (`crates/baduk-ai/data/patterns.txt` is the
    /// one built into the computer players).
    #[arg(long)]
    pub out: PathBuf,
    /// Minorization–maximization sweeps over every group.
    #[arg(long, default_value_t = 25)]
    pub sweeps: usize,
    /// Shapes seen as a candidate fewer times keep a gamma of 1.
    #[arg(long, default_value_t = 20)]
    pub min_shape_count: u32,
    /// Every this many games one is held out of the fit and only used to
    /// measure how well the table predicts.
    #[arg(long, default_value_t = 10)]
    pub hold_out_every: usize,
    /// Leave each game's first moves out of the fit (the records made by
    /// `tools/gnugo_selfplay.py` open with up to three random moves a side).
    #[arg(long, default_value_t = 0)]
    pub skip_moves: usize,
}

/// Fits the table, writes it, and returns a report of how well it predicts.
pub fn run(args: &TrainArgs) -> anyhow::Result<String> {
    let mut files = Vec::new();
    for path in &args.games {
        collect(path, &mut files)?;
    }
    files.sort();
    anyhow::ensure!(!files.is_empty(), "no .sgf files in {:?}", args.games);
    let (mut train, mut test) = (Vec::new(), Vec::new());
    let mut skipped = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let positions = match positions(&text, args.skip_moves) {
            Ok(p) => p,
            Err(e) => {
                skipped.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        if args.hold_out_every > 0 && i % args.hold_out_every == 0 {
            test.extend(positions);
        } else {
            train.extend(positions);
        }
    }
    anyhow::ensure!(!train.is_empty(), "no moves to train on");
    let fit = patterns::train(&train, args.sweeps, args.min_shape_count.max(1));
    let neutral = patterns::Gammas::neutral();
    let mut report = String::new();
    let games = files.len() - skipped.len();
    writeln!(
        report,
        "{games} games: {} positions to fit, {} held out; {} shapes and {} larger shapes with their own gamma",
        train.len(),
        test.len(),
        fit.shapes,
        fit.big_shapes
    )?;
    for (name, set) in [("fitted on", &train), ("held out", &test)] {
        if set.is_empty() {
            continue;
        }
        let (first, ll) = patterns::evaluate(&fit.gammas, set);
        let (first0, ll0) = patterns::evaluate(&neutral, set);
        writeln!(
            report,
            "{name}: the played move is the strongest candidate in {:.1}% (all gammas 1: {:.1}%), mean log-likelihood {ll:.3} ({ll0:.3})",
            first * 100.0,
            first0 * 100.0
        )?;
    }
    for s in &skipped {
        writeln!(report, "skipped {s}")?;
    }
    let header = format!(
        "Move feature gammas (baduk_ai::patterns), fitted by `ttakji train-patterns`\n\
         ({} sweeps, shapes seen {} times or more, each game's first {} moves left out).\n{}",
        args.sweeps,
        args.min_shape_count,
        args.skip_moves,
        report.trim_end()
    );
    std::fs::write(&args.out, fit.gammas.to_text(&header))
        .with_context(|| format!("writing {}", args.out.display()))?;
    Ok(report)
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if path.is_dir() {
        for entry in
            std::fs::read_dir(path).with_context(|| format!("reading {}", path.display()))?
        {
            let p = entry?.path();
            if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("sgf")) {
                files.push(p);
            }
        }
    } else {
        files.push(path.to_owned());
    }
    Ok(())
}

/// The training positions of one game record: every move that is a
/// candidate (not a pass, not an own-eye fill), by either colour.
fn positions(text: &str, skip: usize) -> anyhow::Result<Vec<Position>> {
    let (_, game) = sgf::read_game(text)?;
    let mut board = game.setup().clone();
    let (mut last, mut last2) = (NO_VERTEX, NO_VERTEX);
    let mut out = Vec::new();
    for (i, mv) in game.moves().iter().enumerate() {
        match mv.action {
            Action::Play(p) => {
                let v = board.vertex(p);
                if i >= skip
                    && let Some(pos) = patterns::position(&board, mv.color, v, last, last2)
                {
                    out.push(pos);
                }
                board.play(v, mv.color);
                (last2, last) = (last, v);
            }
            Action::Pass => {
                board.clear_ko();
                (last2, last) = (last, NO_VERTEX);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_replayed_from_its_setup_stones() {
        // Black's setup stone on E5 is on the board when White plays D5:
        // 80 empty points are candidates, not 81.
        let replayed = positions("(;SZ[9]KM[7]AB[ee]PL[W];W[de];B[ed])", 0).expect("a record");
        assert_eq!(replayed.len(), 2);
        assert_eq!(replayed[0].candidates.len(), 80);
        assert_eq!(replayed[1].candidates.len(), 79);
        // Moves left out at the start of a game give no position.
        assert_eq!(
            positions("(;SZ[9]KM[7];B[ee];W[de])", 1)
                .expect("a record")
                .len(),
            1
        );
    }

    #[test]
    fn a_table_fitted_to_game_records_is_written_whole_and_predicts() {
        let out = std::env::temp_dir().join(format!("ttakji-patterns-{}.txt", std::process::id()));
        let args = TrainArgs {
            games: vec![
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("crates/baduk/tests/data/gnugo-finished-1001"),
            ],
            out: out.clone(),
            sweeps: 3,
            min_shape_count: 20,
            hold_out_every: 10,
            skip_moves: 6,
        };
        let report = run(&args).expect("a fit");
        assert!(report.starts_with("150 games:"), "{report}");
        let text = std::fs::read_to_string(&out).expect("the table is written");
        let _ = std::fs::remove_file(&out);
        let gammas = patterns::Gammas::parse(&text).expect("the table reads back");
        assert!(gammas.shape_count() > 50);
        assert!(text.contains("first 6 moves left out"));
        // The fit names GNU Go's move far more often than no knowledge.
        let held_out = report
            .lines()
            .find(|l| l.starts_with("held out"))
            .expect("a held-out line");
        let share: f64 = held_out
            .split("candidate in ")
            .nth(1)
            .and_then(|r| r.split('%').next())
            .and_then(|x| x.parse().ok())
            .expect("a share");
        assert!(share > 20.0, "{held_out}");
    }
}
