//! `ttakji match`: two GTP engines play each other, alternating colours,
//! with the rules engine as referee. Writes each game as SGF and a summary
//! with win rates, 95% confidence intervals and seconds per move.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use baduk::sgf::Record;
use baduk::{Color, EndReason, Game, GameResult, Move, Rules};
use baduk_ai::gtp_engine::GtpEngine;

/// One side of the match.
#[derive(Debug, Clone)]
pub struct Contestant {
    pub name: String,
    pub command: Vec<String>,
}

/// How the match is played.
#[derive(Debug, Clone)]
pub struct MatchSettings {
    pub a: Contestant,
    pub b: Contestant,
    pub games: u32,
    pub rules: Rules,
    pub out: PathBuf,
    /// Longest wait for one answer from an engine.
    pub timeout: Duration,
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    wins: u32,
    losses: u32,
    draws: u32,
    moves: u32,
    seconds: f64,
}

/// Plays the match and returns the summary text (also written to
/// `out/summary.txt`).
pub fn run(settings: &MatchSettings) -> anyhow::Result<String> {
    std::fs::create_dir_all(&settings.out)
        .with_context(|| format!("creating {}", settings.out.display()))?;
    // `{game}` in a command line becomes the game's number, and such an
    // engine is started afresh for every game (to vary a seed, say).
    let start = |c: &Contestant, game: u32| -> anyhow::Result<GtpEngine> {
        let command: Vec<String> = c
            .command
            .iter()
            .map(|a| a.replace("{game}", &game.to_string()))
            .collect();
        let (program, args) = command
            .split_first()
            .context("an engine command is empty")?;
        GtpEngine::start(program, args, settings.timeout)
            .with_context(|| format!("starting {}", c.name))
    };
    let per_game = |c: &Contestant| c.command.iter().any(|a| a.contains("{game}"));
    let mut engines = [start(&settings.a, 1)?, start(&settings.b, 1)?];
    let names = [settings.a.name.clone(), settings.b.name.clone()];
    let mut tally = [Tally::default(); 2];
    let mut as_black = [Tally::default(); 2];
    let mut log = String::new();
    for i in 0..settings.games {
        // Game i: A has Black in even games, White in odd ones.
        if i > 0 {
            for (engine, c) in engines.iter_mut().zip([&settings.a, &settings.b]) {
                if per_game(c) {
                    *engine = start(c, i + 1)?;
                }
            }
        }
        let black = (i % 2) as usize;
        let seat = |c: Color| if c == Color::Black { black } else { 1 - black };
        let mut game = Game::new(settings.rules);
        let mut note = String::new();
        while !game.is_over() {
            let color = game.to_move();
            let who = seat(color);
            let started = Instant::now();
            let decision = engines[who].genmove(&game);
            tally[who].seconds += started.elapsed().as_secs_f64();
            tally[who].moves += 1;
            let decision = match decision {
                Ok(d) => d,
                Err(e) => {
                    note = format!("{} forfeits: {e}", names[who]);
                    let _ = game.resign(color);
                    break;
                }
            };
            let Some(action) = decision.action() else {
                let _ = game.resign(color);
                break;
            };
            if let Err(e) = game.play(Move { color, action }) {
                note = format!("{} forfeits with an illegal move {action}: {e}", names[who]);
                let _ = game.resign(color);
            }
        }
        let result = game.result().context("a finished game has a result")?;
        let winner_seat = result.winner().map(seat);
        for (s, t) in tally.iter_mut().enumerate() {
            match winner_seat {
                Some(w) if w == s => t.wins += 1,
                Some(_) => t.losses += 1,
                None => t.draws += 1,
            }
        }
        match winner_seat {
            Some(w) if w == black => as_black[black].wins += 1,
            Some(_) => as_black[black].losses += 1,
            None => as_black[black].draws += 1,
        }
        let mut record = Record::from_game(&game);
        record.black = Some(names[black].clone());
        record.white = Some(names[1 - black].clone());
        record.result = Some(result);
        let file = settings.out.join(format!("game-{:03}.sgf", i + 1));
        std::fs::write(&file, record.to_sgf())
            .with_context(|| format!("writing {}", file.display()))?;
        let how = match game.end() {
            Some(EndReason::TwoPasses | EndReason::MoveCap) => game.score_preview().preview(),
            Some(reason) => reason.to_string(),
            None => String::new(),
        };
        let line = format!(
            "game {:3}: {} (B) vs {} (W): {} after {} moves; {how} {note}",
            i + 1,
            names[black],
            names[1 - black],
            result_text(result),
            game.move_number()
        );
        println!("{line}");
        let _ = writeln!(log, "{line}");
    }
    let summary = summary(&names, &tally, &as_black, settings, &log);
    let path = settings.out.join("summary.txt");
    std::fs::write(&path, &summary).with_context(|| format!("writing {}", path.display()))?;
    Ok(summary)
}

fn result_text(result: GameResult) -> String {
    result.to_string()
}

/// The Wilson score interval for `wins` (draws as half) out of `n` at 95%.
fn wilson(points: f64, n: f64) -> (f64, f64) {
    if n == 0.0 {
        return (0.0, 1.0);
    }
    let z = 1.96;
    let p = points / n;
    let centre = p + z * z / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let denominator = 1.0 + z * z / n;
    (
        ((centre - spread) / denominator).max(0.0),
        ((centre + spread) / denominator).min(1.0),
    )
}

fn summary(
    names: &[String; 2],
    tally: &[Tally; 2],
    as_black: &[Tally; 2],
    settings: &MatchSettings,
    log: &str,
) -> String {
    let mut out = String::new();
    let games = settings.games;
    let _ = writeln!(
        out,
        "{} vs {}: {games} games, {} rules, {}x{}, komi {}",
        names[0],
        names[1],
        settings.rules.preset,
        settings.rules.board_size.get(),
        settings.rules.board_size.get(),
        settings.rules.komi
    );
    for (i, t) in tally.iter().enumerate() {
        let points = f64::from(t.wins) + f64::from(t.draws) / 2.0;
        let n = f64::from(t.wins + t.losses + t.draws);
        let (lo, hi) = wilson(points, n);
        let _ = writeln!(
            out,
            "{}: {} wins, {} losses, {} draws; win rate {:.1}% (95% interval {:.1}%–{:.1}%); {:.2} s per move over {} moves",
            names[i],
            t.wins,
            t.losses,
            t.draws,
            100.0 * points / n.max(1.0),
            100.0 * lo,
            100.0 * hi,
            t.seconds / f64::from(t.moves.max(1)),
            t.moves
        );
    }
    for (i, t) in as_black.iter().enumerate() {
        let _ = writeln!(
            out,
            "{} as Black: {} wins, {} losses, {} draws",
            names[i], t.wins, t.losses, t.draws
        );
    }
    out.push('\n');
    out.push_str(log);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_brackets_the_rate() {
        let (lo, hi) = wilson(8.0, 10.0);
        assert!(
            (0.49..0.5).contains(&lo) && (0.94..0.95).contains(&hi),
            "{lo} {hi}"
        );
        assert_eq!(wilson(0.0, 0.0), (0.0, 1.0));
    }
}
