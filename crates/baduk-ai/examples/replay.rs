//! Replays a game record through Hard's search and prints, at each of one
//! side's moves, what Hard would play there, its win rate and the komi it
//! searched with: `replay game.sgf B [playouts]`. Where a lost game turned,
//! and whether the search saw it, reads off the win rates.
use std::time::Duration;

use baduk::sgf;
use baduk::{Color, Game};
use baduk_ai::{Decision, Level, MctsPlayer, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: replay game.sgf B|W [playouts]")?;
    let color = Color::parse(&args.next().ok_or("which colour: B or W")?)?;
    let playouts: u32 = args.next().map_or(Ok(25_000), |a| a.parse())?;
    let record = sgf::parse(&std::fs::read_to_string(&path)?)?;
    let mut settings = Settings::for_level(Level::Hard);
    settings.budget.playouts = playouts;
    settings.budget.time = Duration::from_secs(3600);
    settings.seed = Some(1);
    let mut player = MctsPlayer::with_settings(Level::Hard, settings);
    let mut game = Game::new(record.rules);
    for mv in &record.moves {
        if mv.color == color {
            let (decision, result) = player.decide_with_search(&game);
            let choice = match decision {
                Decision::Play(p) => p.to_string(),
                Decision::Pass => "pass".to_owned(),
                Decision::Resign => "resign".to_owned(),
            };
            println!(
                "{:3} played {:>4} search {:>6} win {:.2} komi shift {:+.1}",
                game.move_number() + 1,
                mv.action.to_string(),
                choice,
                result.winrate(),
                f64::from(result.komi_shift) / 2.0
            );
        }
        game.play(*mv)?;
    }
    Ok(())
}
