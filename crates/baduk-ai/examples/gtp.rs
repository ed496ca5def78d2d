//! The search player on GTP, without the server's workspace around it:
//! `gtp [--level easy|normal|hard] [--seed N] [--playouts N]`. It is what
//! `ttakji gtp` serves, for scripts that only need the engine (the
//! dead-stone corpora of `tools/gnugo_selfplay.py --player ttakji`), and
//! builds with the rules and AI crates alone.
use std::io;

use baduk::Rules;
use baduk_ai::{Level, MctsPlayer, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut level = Level::Normal;
    let mut seed = None;
    let mut playouts = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--level" => level = Level::parse(&value)?,
            "--seed" => seed = Some(value.parse::<u64>()?),
            "--playouts" => playouts = Some(value.parse::<u32>()?),
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let mut settings = Settings::for_level(level);
    settings.seed = seed;
    if let Some(n) = playouts {
        settings.budget.playouts = n.max(1);
        settings.scale_with_board = false;
    }
    let mut session =
        baduk_ai::gtp::Session::new(Rules::ttakji(), MctsPlayer::with_settings(level, settings));
    baduk_ai::gtp::serve(&mut session, io::stdin().lock(), io::stdout().lock())?;
    Ok(())
}
