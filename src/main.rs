//! `ttakji`: the command line of the Ttakji Go server.
//!
//! `ttakji gtp` speaks GTP on stdin/stdout with the rules engine.

mod gtp;

use std::io;

use anyhow::Context;
use clap::{Parser, Subcommand};

use baduk::{BoardSize, Komi, Preset, Rules};

#[derive(Debug, Parser)]
#[command(name = "ttakji", version, about = "Ttakji: hosted 9x9 Go (baduk)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Speak GTP version 2 on stdin/stdout (for GoGui, Sabaki, gtp2ogs).
    Gtp {
        /// Rules preset: ttakji, chinese, japanese or tromp-taylor.
        #[arg(long, default_value = "ttakji", value_parser = parse_preset)]
        rules: Preset,
        /// Board size, 2 to 19.
        #[arg(long, default_value_t = 9)]
        size: u32,
        /// Komi (whole or half points); the preset's komi by default.
        #[arg(long, value_parser = parse_komi, allow_hyphen_values = true)]
        komi: Option<Komi>,
    },
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    Preset::parse(s).map_err(|e| e.to_string())
}

fn parse_komi(s: &str) -> Result<Komi, String> {
    Komi::parse(s).map_err(|e| e.to_string())
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Gtp { rules, size, komi } => {
            let size = BoardSize::new(size).context("--size")?;
            let mut rules = Rules::preset(rules).with_board_size(size);
            if let Some(komi) = komi {
                rules = rules.with_komi(komi);
            }
            let mut session = gtp::Session::new(rules);
            gtp::serve(&mut session, io::stdin().lock(), io::stdout().lock())
                .context("GTP session on stdin/stdout")?;
        }
    }
    Ok(())
}
