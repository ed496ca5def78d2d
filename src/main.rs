//! `ttakji`: the command line of the Ttakji Go server.
//!
//! `ttakji serve` runs the whole service in one process; `ttakji gateway`
//! and `ttakji authority` run one service each; `ttakji play` is a terminal
//! client; `ttakji gtp` speaks GTP on stdin/stdout with the rules engine;
//! `ttakji loadtest` drives a deployment with bot players.

mod loadtest;
mod matches;
mod play;
mod server;
mod train;

use std::io;

use anyhow::Context;
use clap::{Parser, Subcommand};

use baduk::{BoardSize, Komi, Preset, Rules};
use baduk_ai::{Level, MctsPlayer, Settings};

#[derive(Debug, Parser)]
#[command(name = "ttakji", version, about = "Ttakji: hosted 9x9 Go (baduk)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The rules of a game, from the command line.
#[derive(Debug, clap::Args)]
struct RulesArgs {
    /// Rules preset: ttakji, chinese, japanese or tromp-taylor.
    #[arg(long, default_value = "ttakji", value_parser = parse_preset)]
    rules: Preset,
    /// Board size, 2 to 19.
    #[arg(long, default_value_t = 9)]
    size: u32,
    /// Komi (whole or half points); the preset's komi by default.
    #[arg(long, value_parser = parse_komi, allow_hyphen_values = true)]
    komi: Option<Komi>,
}

impl RulesArgs {
    fn rules(&self) -> anyhow::Result<Rules> {
        let size = BoardSize::new(self.size).context("--size")?;
        let rules = Rules::preset(self.rules).with_board_size(size);
        Ok(match self.komi {
            Some(komi) => rules.with_komi(komi),
            None => rules,
        })
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole service in one process: gateway, authority,
    /// matchmaker and ratings, on an SQLite file and an in-process bus
    /// unless told otherwise.
    #[command(after_help = server::READY_LINE_HELP)]
    Serve(server::ServeArgs),
    /// Run the public gateway alone, against Redis and an authority.
    #[command(after_help = server::READY_LINE_HELP)]
    Gateway(server::GatewayArgs),
    /// Run the game authority alone, against Redis and Postgres.
    #[command(after_help = server::READY_LINE_HELP)]
    Authority(server::AuthorityArgs),
    /// Run the matchmaker alone, against Redis and an authority.
    #[command(after_help = server::READY_LINE_HELP)]
    Matchmaker(server::MatchmakerArgs),
    /// Run the ratings service alone, against Redis and Postgres.
    #[command(after_help = server::READY_LINE_HELP)]
    Ratings(server::RatingsArgs),
    /// Play a game against the computer in the terminal.
    Play(play::PlayArgs),
    /// Drive a deployment through its public API with bot players and
    /// report moves a second, move round trips, errors and what each
    /// injected fault cost.
    Loadtest(loadtest::LoadtestArgs),
    /// Speak GTP version 2 on stdin/stdout (for GoGui, Sabaki, gtp2ogs).
    Gtp {
        #[command(flatten)]
        rules: RulesArgs,
        /// The computer's level for `genmove`: easy, normal or hard.
        #[arg(long, default_value = "normal", value_parser = parse_level)]
        level: Level,
        /// Threads to search on.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// A fixed seed, so that the same commands give the same moves.
        #[arg(long)]
        seed: Option<u64>,
        /// Playouts per move instead of the level's.
        #[arg(long)]
        playouts: Option<u32>,
        /// Seconds per move instead of the level's.
        #[arg(long)]
        seconds: Option<f64>,
        /// A search constant, as name=value; may be given more than once.
        #[arg(long, help = format!(
            "A search constant, as name=value ({}); may be given more than once",
            baduk_ai::Tuning::names()
        ))]
        tune: Vec<String>,
        /// A move-pattern table (written by `ttakji train-patterns`) to use
        /// instead of the built-in one.
        #[arg(long)]
        patterns: Option<std::path::PathBuf>,
    },
    /// Fit the computer's move patterns to SGF game records and write the
    /// table its search draws its priors from.
    TrainPatterns(train::TrainArgs),
    /// Play two GTP engines against each other, alternating colours, with
    /// this rules engine as referee; writes SGF files and a summary.
    Match {
        /// The first engine's command line, e.g. "ttakji gtp --level hard".
        /// `{game}` in it becomes the game's number, and the engine is then
        /// started afresh for each game (e.g. "gnugo --mode gtp --seed {game}").
        #[arg(long)]
        a: String,
        /// The second engine's command line, e.g.
        /// "/usr/games/gnugo --mode gtp --level 10 --chinese-rules --positional-superko".
        #[arg(long)]
        b: String,
        /// Names for the summary (the command lines by default).
        #[arg(long)]
        name_a: Option<String>,
        #[arg(long)]
        name_b: Option<String>,
        /// Number of games; the first engine has Black in odd-numbered games.
        #[arg(long, default_value_t = 10)]
        games: u32,
        #[command(flatten)]
        rules: RulesArgs,
        /// Folder for the SGF files and summary.txt.
        #[arg(long, default_value = "match")]
        out: std::path::PathBuf,
        /// Seconds an engine may take for one answer before it forfeits.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    Preset::parse(s).map_err(|e| e.to_string())
}

/// Splits a command line on spaces (no quoting: engine paths and flags
/// with spaces are not supported).
fn split_command(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

fn parse_level(s: &str) -> Result<Level, String> {
    Level::parse(s).map_err(|e| e.to_string())
}

fn parse_komi(s: &str) -> Result<Komi, String> {
    Komi::parse(s).map_err(|e| e.to_string())
}

/// The services allocate for every message they pass; mimalloc's per-thread
/// pools cost less a move than the system allocator's (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => server::serve(&args)?,
        Command::Gateway(args) => server::gateway(&args)?,
        Command::Authority(args) => server::authority(&args)?,
        Command::Matchmaker(args) => server::matchmaker(&args)?,
        Command::Ratings(args) => server::ratings(&args)?,
        Command::Play(args) => play::run(&args)?,
        Command::Loadtest(args) => loadtest::run(&args)?,
        Command::TrainPatterns(args) => print!("{}", train::run(&args)?),
        Command::Gtp {
            rules,
            level,
            threads,
            seed,
            playouts,
            seconds,
            tune,
            patterns,
        } => {
            let rules = rules.rules()?;
            if let Some(path) = patterns {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let table = baduk_ai::patterns::Gammas::parse(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                anyhow::ensure!(
                    baduk_ai::patterns::Gammas::install(table),
                    "a move-pattern table is already in use"
                );
            }
            let mut settings = Settings::for_level(level);
            settings.threads = threads.max(1);
            settings.seed = seed;
            if let Some(n) = playouts {
                settings.budget.playouts = n.max(1);
                settings.scale_with_board = false;
            }
            if let Some(s) = seconds {
                anyhow::ensure!(
                    s.is_finite() && s > 0.0,
                    "--seconds must be a positive number, not {s}"
                );
                settings.budget.time = std::time::Duration::from_secs_f64(s);
            }
            for assignment in &tune {
                settings
                    .tuning
                    .set(assignment)
                    .map_err(|e| anyhow::anyhow!("--tune {assignment}: {e}"))?;
            }
            let mut session =
                baduk_ai::gtp::Session::new(rules, MctsPlayer::with_settings(level, settings));
            baduk_ai::gtp::serve(&mut session, io::stdin().lock(), io::stdout().lock())
                .context("GTP session on stdin/stdout")?;
        }
        Command::Match {
            a,
            b,
            name_a,
            name_b,
            games,
            rules,
            out,
            timeout,
        } => {
            let rules = rules.rules()?;
            let settings = matches::MatchSettings {
                a: matches::Contestant {
                    name: name_a.unwrap_or_else(|| a.clone()),
                    command: split_command(&a),
                },
                b: matches::Contestant {
                    name: name_b.unwrap_or_else(|| b.clone()),
                    command: split_command(&b),
                },
                games,
                rules,
                out,
                timeout: std::time::Duration::from_secs(timeout.max(1)),
            };
            let summary = matches::run(&settings)?;
            print!("{summary}");
        }
    }
    Ok(())
}
