//! `ttakji train-patterns`: fits the move features' strengths (see
//! `baduk_ai::patterns`) to the moves of SGF game records and writes the
//! table the search's priors are built from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use baduk::board::{Board, NO_VERTEX};
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
        let positions = match positions(&text) {
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
        "{games} games: {} positions to fit, {} held out; {} shapes with their own gamma",
        train.len(),
        test.len(),
        fit.shapes
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
         ({} sweeps, shapes seen {} times or more).\n{}",
        args.sweeps,
        args.min_shape_count,
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
fn positions(text: &str) -> anyhow::Result<Vec<Position>> {
    let (_, game) = sgf::read_game(text)?;
    let mut board = Board::new(game.rules().board_size);
    let (mut last, mut last2) = (NO_VERTEX, NO_VERTEX);
    let mut out = Vec::new();
    for mv in game.moves() {
        match mv.action {
            Action::Play(p) => {
                let v = board.vertex(p);
                if let Some(pos) = patterns::position(&board, mv.color, v, last, last2) {
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
