//! The GTP version 2 front end to the rules engine and the computer player
//! (`ttakji gtp`, and `web/engine/gtp.mjs` on the WebAssembly build), so
//! the engine works in GoGui, Sabaki, match runners and bot bridges.
//!
//! Besides the standard commands it answers GNU Go's `is_legal` and
//! `all_legal`, and KataGo's `kata-set-rules` / `kata-get-rules` with the
//! rules presets' names. After two passes the game is over and `play` is
//! refused, as on the server; `undo` takes the last pass back.

use std::io::{BufRead, Write};

use std::time::Duration;

use crate::{Decision, MctsPlayer, TreeSummary};
use baduk::sgf::{self, Record};
use baduk::{Action, BoardSize, Color, Game, Komi, Move, Point, Preset, Rules, score};

/// The most trees one decision may be spread over (`ttakji-search_tree`).
const MAX_TREES: usize = 64;

/// A decision as GTP answers it.
fn answer(decision: Decision) -> String {
    match decision {
        Decision::Play(p) => p.to_string(),
        Decision::Pass => "pass".to_owned(),
        Decision::Resign => "resign".to_owned(),
    }
}

/// Every command this front end knows, as `list_commands` prints them.
const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "undo",
    "showboard",
    "final_score",
    "final_status_list",
    "loadsgf",
    "printsgf",
    "is_legal",
    "all_legal",
    "kata-set-rules",
    "kata-get-rules",
    "genmove",
    "reg_genmove",
    "kgs-genmove_cleanup",
    "time_settings",
    "kgs-time_settings",
    "time_left",
    "ttakji-last_search",
    "ttakji-tune",
    "ttakji-search_tree",
    "ttakji-decide_trees",
    "ttakji-analyse",
];

/// A GTP engine session: one game, the computer player, and the settings
/// the controller gave it.
#[derive(Debug)]
pub struct Session {
    game: Game,
    player: MctsPlayer,
    /// `time_settings`: main time, byo-yomi time and stones per period.
    clock: Option<(Duration, Duration, u32)>,
    /// The level's own time limit per move, which time control may shorten.
    level_time: Duration,
    /// What the last `genmove` searched: playouts, time and win rate.
    last_search: Option<(u32, Duration, f32)>,
}

/// What a command produced: an answer, or an answer after which the session ends.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    Success(String),
    Failure(String),
}

impl Default for Session {
    fn default() -> Self {
        Session::new(Rules::ttakji(), MctsPlayer::new(crate::Level::Normal))
    }
}

impl Session {
    /// A session with an empty board under `rules`, with `player` answering
    /// `genmove`.
    #[must_use]
    pub fn new(rules: Rules, player: MctsPlayer) -> Session {
        let level_time = player.settings().budget.time;
        Session {
            game: Game::new(rules),
            player,
            clock: None,
            level_time,
            last_search: None,
        }
    }

    /// The game as it stands.
    #[cfg(test)]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Runs one command (without its id) and returns the reply, and whether
    /// the session should end after it.
    pub fn execute(&mut self, command: &str, args: &[&str]) -> (Reply, bool) {
        let result = match command {
            "protocol_version" => Ok("2".to_owned()),
            "name" => Ok("Ttakji".to_owned()),
            "version" => Ok(env!("CARGO_PKG_VERSION").to_owned()),
            "known_command" => Ok(args
                .first()
                .is_some_and(|c| COMMANDS.contains(c))
                .to_string()),
            "list_commands" => Ok(COMMANDS.join("\n")),
            "quit" => return (Reply::Success(String::new()), true),
            "boardsize" => self.boardsize(args),
            "clear_board" => {
                self.game = Game::new(*self.game.rules());
                Ok(String::new())
            }
            "komi" => self.komi(args),
            "play" => self.play(args),
            "undo" => self
                .game
                .undo()
                .map(|_| String::new())
                .map_err(|e| format!("cannot undo: {e}")),
            "showboard" => Ok(self.showboard()),
            "final_score" => Ok(self.game.score_preview().result().to_string()),
            "final_status_list" => self.final_status_list(args),
            "loadsgf" => self.loadsgf(args),
            "printsgf" => self.printsgf(args),
            "is_legal" => self.is_legal(args),
            "all_legal" => self.all_legal(args),
            "kata-set-rules" => self.set_rules(args),
            "kata-get-rules" => Ok(self.game.rules().preset.name().to_owned()),
            "genmove" => self.genmove(args, true, false),
            "reg_genmove" => self.genmove(args, false, false),
            "kgs-genmove_cleanup" => self.genmove(args, true, true),
            "time_settings" => self.time_settings(args),
            "kgs-time_settings" => self.kgs_time_settings(args),
            "time_left" => self.time_left(args),
            "ttakji-tune" => arg(args, 0, "name=value")
                .and_then(|a| self.player.tune(a))
                .map(|()| String::new()),
            "ttakji-last_search" => Ok(self.last_search.map_or_else(String::new, |(n, t, w)| {
                format!(
                    "playouts {n} ms {:.1} winrate {w:.3}",
                    t.as_secs_f64() * 1000.0
                )
            })),
            "ttakji-search_tree" => self.search_tree(args),
            "ttakji-decide_trees" => self.decide_trees(args),
            "ttakji-analyse" => self.analyse(args),
            _ => Err("unknown command".to_owned()),
        };
        match result {
            Ok(s) => (Reply::Success(s), false),
            Err(e) => (Reply::Failure(e), false),
        }
    }

    fn boardsize(&mut self, args: &[&str]) -> Result<String, String> {
        let n: u32 = arg(args, 0, "board size")?
            .parse()
            .map_err(|_| "boardsize not an integer".to_owned())?;
        let size = BoardSize::new(n).map_err(|_| "unacceptable size".to_owned())?;
        self.game = Game::new(self.game.rules().with_board_size(size));
        Ok(String::new())
    }

    fn komi(&mut self, args: &[&str]) -> Result<String, String> {
        let komi = Komi::parse(arg(args, 0, "komi")?).map_err(|e| format!("syntax error: {e}"))?;
        self.game.set_komi(komi);
        Ok(String::new())
    }

    /// `play colour vertex`. After two passes a move goes on with the game,
    /// as KGS plays on in its cleanup phase when the players disagree on
    /// the dead stones; an illegal move changes nothing, the end included.
    fn play(&mut self, args: &[&str]) -> Result<String, String> {
        let color = color(arg(args, 0, "colour")?)?;
        let action = self.vertex(arg(args, 1, "vertex")?)?;
        let mut game = self.game_played_on();
        game.play_as(Move { color, action })
            .map_err(|e| format!("illegal move: {e}"))?;
        self.game = game;
        Ok(String::new())
    }

    /// The game, reopened if two passes ended it (a game that ended any
    /// other way stays as it is, and refuses the move).
    fn game_played_on(&self) -> Game {
        let mut game = self.game.clone();
        if game.end() == Some(baduk::EndReason::TwoPasses) {
            // Only a game ended by two passes reopens, which it just was.
            let _ = game.resume_play();
        }
        game
    }

    /// Searches for `colour` and answers the vertex, `pass` or `resign`;
    /// `play` also plays it, `cleanup` captures dead stones before passing.
    fn genmove(&mut self, args: &[&str], play: bool, cleanup: bool) -> Result<String, String> {
        let color = color(arg(args, 0, "colour")?)?;
        if self.game.is_over() && !cleanup {
            return Ok("pass".to_owned());
        }
        // The cleanup phase plays on after two passes: the engine captures
        // what it considers dead, and passes again once nothing is left.
        let mut game = self.game_played_on();
        if game.is_over() {
            return Ok("pass".to_owned());
        }
        if game.to_move() != color {
            game.set_to_move(color);
        }
        let decision = if cleanup {
            self.player.decide_cleanup(&game)
        } else {
            let (decision, search) = self.player.decide_with_search(&game);
            self.last_search = Some((search.playouts, search.elapsed, search.winrate()));
            decision
        };
        let Some(action) = decision.action() else {
            return Ok("resign".to_owned());
        };
        if play {
            game.play(Move { color, action })
                .map_err(|e| format!("the engine chose an illegal move: {e}"))?;
            self.game = game;
        }
        Ok(answer(decision))
    }

    /// The game with `color` to move.
    fn game_for(&self, color: Color) -> Game {
        let mut game = self.game.clone();
        if game.to_move() != color {
            game.set_to_move(color);
        }
        game
    }

    /// `ttakji-analyse colour playouts [depth]`: reads the position with
    /// `colour` to move for a review ([`MctsPlayer::analyse`]) and answers
    /// `winrate W lead L playouts N line V…`: `colour`'s chance to win,
    /// Black's expected lead with komi, and the best move with the replies
    /// the search expects (at most `depth` moves, 6 if not given). Nothing
    /// is played.
    fn analyse(&mut self, args: &[&str]) -> Result<String, String> {
        let color = color(arg(args, 0, "colour")?)?;
        let playouts: u32 = whole_number(args, 1, "playouts")?;
        let depth: u32 = if args.len() > 2 {
            whole_number(args, 2, "depth")?
        } else {
            6
        };
        if playouts == 0 || depth > 40 {
            return Err("playouts must be at least 1, and the depth at most 40".to_owned());
        }
        if self.game.is_over() {
            return Err("the game is over".to_owned());
        }
        let game = self.game_for(color);
        let a = self.player.analyse(&game, playouts, depth as usize);
        let line: Vec<String> = a
            .line
            .iter()
            .map(|p| p.map_or_else(|| "pass".to_owned(), |p| p.to_string()))
            .collect();
        Ok(format!(
            "winrate {:.3} lead {:.1} playouts {} line {}",
            a.winrate,
            a.black_lead,
            a.playouts,
            line.join(" ")
        ))
    }

    /// `ttakji-search_tree colour index count`: searches tree `index` of
    /// `count` for `colour`'s move ([`MctsPlayer::search_tree`]) and answers
    /// what it found as one line ([`TreeSummary::to_text`]). Hosts that
    /// share no memory (the browser's Workers), each with a session started
    /// alike and shown the same game, search a tree each and then all
    /// decide with `ttakji-decide_trees`.
    fn search_tree(&mut self, args: &[&str]) -> Result<String, String> {
        let color = color(arg(args, 0, "colour")?)?;
        let (index, count): (usize, usize) = (
            whole_number(args, 1, "index")?,
            whole_number(args, 2, "count")?,
        );
        if count == 0 || count > MAX_TREES || index >= count {
            return Err(format!(
                "the index must be below the count, and the count from 1 to {MAX_TREES}"
            ));
        }
        if self.game.is_over() {
            return Err("the game is over".to_owned());
        }
        let game = self.game_for(color);
        Ok(self.player.search_tree(&game, index, count).to_text())
    }

    /// `ttakji-decide_trees colour tree…`: decides `colour`'s move from the
    /// trees `ttakji-search_tree` answered, in order of their index, and
    /// answers it as `reg_genmove` does, without playing it.
    fn decide_trees(&mut self, args: &[&str]) -> Result<String, String> {
        let color = color(arg(args, 0, "colour")?)?;
        let trees = args[1..]
            .iter()
            .map(|t| TreeSummary::from_text(t))
            .collect::<Result<Vec<_>, _>>()?;
        if trees.is_empty() || trees.len() > MAX_TREES {
            return Err(format!("give from 1 to {MAX_TREES} trees"));
        }
        if self.game.is_over() {
            return Ok("pass".to_owned());
        }
        let game = self.game_for(color);
        let (decision, search) = self.player.decide_from_trees(&game, &trees);
        self.last_search = Some((search.playouts, search.elapsed, search.winrate()));
        Ok(answer(decision))
    }

    /// `kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD
    /// PERIODS | canadian MAIN PERIOD STONES`, as KGS sends it, in the
    /// terms of `time_settings`: byo-yomi's periods are one move each, and
    /// the thinking time is capped the same way.
    fn kgs_time_settings(&mut self, args: &[&str]) -> Result<String, String> {
        let system = arg(args, 0, "time system")?;
        let settings: [String; 3] = match system {
            "none" => ["0".into(), "0".into(), "0".into()],
            "absolute" => [arg(args, 1, "main time")?.into(), "0".into(), "0".into()],
            "byoyomi" => {
                let _: u32 = whole_number(args, 3, "byo-yomi periods")?;
                [
                    arg(args, 1, "main time")?.into(),
                    arg(args, 2, "byo-yomi time")?.into(),
                    "1".into(),
                ]
            }
            "canadian" => [
                arg(args, 1, "main time")?.into(),
                arg(args, 2, "byo-yomi time")?.into(),
                arg(args, 3, "byo-yomi stones")?.into(),
            ],
            other => {
                return Err(format!(
                    "syntax error: `{other}` is not a time system (none, absolute, byoyomi, canadian)"
                ));
            }
        };
        let settings: Vec<&str> = settings.iter().map(String::as_str).collect();
        self.time_settings(&settings)
    }

    fn time_settings(&mut self, args: &[&str]) -> Result<String, String> {
        let main: u64 = whole_number(args, 0, "main time")?;
        let byo: u64 = whole_number(args, 1, "byo-yomi time")?;
        let stones = u32::try_from(whole_number::<u64>(args, 2, "byo-yomi stones")?)
            .map_err(|_| "syntax error: too many stones".to_owned())?;
        self.clock = (byo > 0 || main > 0).then_some((
            Duration::from_secs(main),
            Duration::from_secs(byo),
            stones,
        ));
        self.player.set_time(self.level_time);
        Ok(String::new())
    }

    /// Spends at most a fair share of the time left: the byo-yomi period
    /// spread over its stones, or a twentieth of the main time.
    fn time_left(&mut self, args: &[&str]) -> Result<String, String> {
        color(arg(args, 0, "colour")?)?;
        let seconds: f64 = arg(args, 1, "time")?
            .parse()
            .map_err(|_| "syntax error: time is not a number".to_owned())?;
        let stones: u32 = arg(args, 2, "stones")?
            .parse()
            .map_err(|_| "syntax error: stones is not a whole number".to_owned())?;
        if !seconds.is_finite() || seconds < 0.0 {
            return Err("syntax error: time must be zero or more seconds".to_owned());
        }
        let share = if stones > 0 {
            seconds / f64::from(stones)
        } else {
            seconds / 20.0
        };
        let per_move = Duration::from_secs_f64((share * 0.8).max(0.05)).min(self.level_time);
        self.player.set_time(per_move);
        Ok(String::new())
    }

    fn is_legal(&self, args: &[&str]) -> Result<String, String> {
        let color = color(arg(args, 0, "colour")?)?;
        let action = self.vertex(arg(args, 1, "vertex")?)?;
        Ok(if self.game.is_legal(color, action) {
            "1"
        } else {
            "0"
        }
        .to_owned())
    }

    fn all_legal(&self, args: &[&str]) -> Result<String, String> {
        let color = color(arg(args, 0, "colour")?)?;
        Ok(join_points(&self.game.legal_points(color)))
    }

    fn final_status_list(&self, args: &[&str]) -> Result<String, String> {
        let board = self.game.board();
        let dead = self.game.dead_stones();
        let (cleared, _) = score::remove_dead(board, &dead);
        let seki: Vec<Point> = score::seki_points(&cleared);
        let stones = |keep: &dyn Fn(Point) -> bool| -> Vec<Point> {
            board
                .vertices()
                .filter(|&v| board.color_at(v).is_some())
                .map(|v| board.point(v))
                .filter(|&p| keep(p))
                .collect()
        };
        let list = match arg(args, 0, "status")? {
            "dead" => dead.clone(),
            "alive" => stones(&|p| !dead.contains(&p) && !seki.contains(&p)),
            "seki" => seki,
            other => return Err(format!("unknown status `{other}` (dead, alive or seki)")),
        };
        Ok(join_points(&list))
    }

    fn loadsgf(&mut self, args: &[&str]) -> Result<String, String> {
        let path = arg(args, 0, "file name")?;
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot load file: {path}: {e}"))?;
        let mut record = sgf::parse(&text).map_err(|e| format!("cannot load file: {e}"))?;
        if let Some(n) = args.get(1) {
            // GTP: the position before move number `n` is played.
            let n: usize = n
                .parse()
                .map_err(|_| format!("move number `{n}` is not a number"))?;
            record.moves.truncate(n.saturating_sub(1));
        }
        let game = record
            .to_game()
            .map_err(|e| format!("cannot load file: {e}"))?;
        let to_move = game.to_move();
        self.game = game;
        Ok(to_move.to_string().to_lowercase())
    }

    fn printsgf(&self, args: &[&str]) -> Result<String, String> {
        let mut record = Record::from_game(&self.game);
        record.result = self.game.result();
        let text = record.to_sgf();
        match args.first() {
            Some(path) => std::fs::write(path, &text)
                .map(|()| String::new())
                .map_err(|e| format!("cannot write {path}: {e}")),
            None => Ok(text.trim_end().to_owned()),
        }
    }

    fn set_rules(&mut self, args: &[&str]) -> Result<String, String> {
        let preset = Preset::parse(arg(args, 0, "rules")?).map_err(|e| e.to_string())?;
        let rules = Rules::preset(preset).with_board_size(self.game.rules().board_size);
        let mut record = Record::from_game(&self.game);
        record.rules = rules;
        let game = record
            .to_game()
            .map_err(|e| format!("the moves so far are not legal under {preset} rules: {e}"))?;
        self.game = game;
        Ok(String::new())
    }

    fn vertex(&self, s: &str) -> Result<Action, String> {
        if s.eq_ignore_ascii_case("pass") {
            return Ok(Action::Pass);
        }
        self.game
            .rules()
            .board_size
            .parse_point(s)
            .map(Action::Play)
            .map_err(|e| format!("invalid vertex: {e}"))
    }

    fn showboard(&self) -> String {
        let board = self.game.board();
        let n = board.size().get();
        let letters: String = (0..n)
            .map(|c| Point::new(c, 0).to_string().chars().next().unwrap_or('?'))
            .flat_map(|c| [' ', c])
            .collect();
        let last = self.game.last_move().and_then(|m| match m.action {
            Action::Play(p) => Some(p),
            Action::Pass => None,
        });
        let ko = self.game.ko_forbidden_points();
        let mut out = format!("\n   {letters}\n");
        for row in (0..n).rev() {
            out.push_str(&format!("{:>2} ", row + 1));
            for col in 0..n {
                let p = Point::new(col, row);
                let mark = match board.get(p) {
                    baduk::Stone::Black => 'X',
                    baduk::Stone::White => 'O',
                    baduk::Stone::Empty if ko.contains(&p) => '#',
                    baduk::Stone::Empty => '.',
                };
                let before = if Some(p) == last { '(' } else { ' ' };
                out.push(before);
                out.push(mark);
            }
            out.push_str(&format!(" {}\n", row + 1));
        }
        out.push_str(&format!("   {letters}\n"));
        out.push_str(&format!(
            "Move {}, {} to play. Captured by Black: {}, by White: {}. Rules: {}, komi {}.",
            self.game.move_number(),
            self.game.to_move(),
            board.prisoners(Color::Black),
            board.prisoners(Color::White),
            self.game.rules().preset,
            self.game.rules().komi
        ));
        out
    }
}

fn arg<'a>(args: &[&'a str], i: usize, what: &str) -> Result<&'a str, String> {
    args.get(i)
        .copied()
        .ok_or_else(|| format!("syntax error: {what} missing"))
}

/// Argument `i`, a whole number.
fn whole_number<T: std::str::FromStr>(args: &[&str], i: usize, what: &str) -> Result<T, String> {
    arg(args, i, what)?
        .parse()
        .map_err(|_| format!("syntax error: {what} is not a whole number"))
}

fn color(s: &str) -> Result<Color, String> {
    Color::parse(s).map_err(|e| format!("syntax error: {e}"))
}

fn join_points(points: &[Point]) -> String {
    points
        .iter()
        .map(Point::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Cleans a line as GTP asks: control characters go (tabs become spaces),
/// and everything after `#` is a comment.
fn preprocess(line: &str) -> String {
    let line = line.split('#').next().unwrap_or("");
    line.chars()
        .filter_map(|c| match c {
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

impl Session {
    /// Answers one line of GTP: the whole response (`=id …` or `?id …`,
    /// ending in a blank line), and whether the session ends after it;
    /// `None` for a line with no command (blank, or only a comment).
    pub fn respond(&mut self, line: &str) -> Option<(String, bool)> {
        let line = preprocess(line);
        let mut words = line.split_whitespace();
        let first = words.next()?;
        let (id, command) = match first.parse::<u64>() {
            Ok(id) => match words.next() {
                Some(c) => (Some(id), c),
                None => return Some((format!("?{id} syntax error: command missing\n\n"), false)),
            },
            Err(_) => (None, first),
        };
        let args: Vec<&str> = words.collect();
        let (reply, quit) = self.execute(command, &args);
        let id = id.map(|i| i.to_string()).unwrap_or_default();
        let text = match reply {
            Reply::Success(s) if s.is_empty() => format!("={id}\n\n"),
            Reply::Success(s) => format!("={id} {s}\n\n"),
            Reply::Failure(e) => format!("?{id} {e}\n\n"),
        };
        Some((text, quit))
    }
}

/// Speaks GTP on `input`/`output` until `quit` or the end of the input.
pub fn serve(
    session: &mut Session,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    for line in input.lines() {
        let Some((text, quit)) = session.respond(&line?) else {
            continue;
        };
        output.write_all(text.as_bytes())?;
        output.flush()?;
        if quit {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(session: &mut Session, script: &str) -> String {
        let mut out = Vec::new();
        serve(session, script.as_bytes(), &mut out).expect("in-memory I/O");
        String::from_utf8(out).expect("GTP output is UTF-8")
    }

    #[test]
    fn ids_comments_and_errors_follow_the_protocol() {
        let mut s = Session::default();
        let out = run(
            &mut s,
            "1 protocol_version\n# a comment\n\n2 frobnicate\nknown_command play\n3 boardsize 42\n",
        );
        assert_eq!(
            out,
            "=1 2\n\n?2 unknown command\n\n= true\n\n?3 unacceptable size\n\n"
        );
    }

    #[test]
    fn an_illegal_play_says_why_and_changes_nothing() {
        let mut s = Session::default();
        let out = run(&mut s, "play b D5\nplay w d5\nplay w I5\nplay w A10\n");
        assert!(out.contains("? illegal move: D5 is occupied"), "{out}");
        assert!(
            out.contains("? invalid vertex: `I5` is not a point"),
            "{out}"
        );
        assert!(
            out.contains("? invalid vertex: `A10` is off the 9x9 board"),
            "{out}"
        );
        assert_eq!(s.game().move_number(), 1);
    }

    #[test]
    fn a_kgs_cleanup_plays_on_after_two_passes_and_captures_the_dead_stones() {
        // Black walls off rows 1-2 on row 3 and White rows 8-9 on row 7;
        // White's E2 is dead inside Black's area. Both pass, the players
        // disagree, and KGS plays on with genmove_cleanup.
        let mut settings = crate::Settings::for_level(crate::Level::Normal);
        settings.seed = Some(7);
        let player = MctsPlayer::with_settings(crate::Level::Normal, settings);
        let mut s = Session::new(Rules::ttakji(), player);
        let mut script = String::from("komi 7\nkgs-time_settings byoyomi 0 5 3\n");
        for column in "ABCDEFGHJ".chars() {
            script.push_str(&format!("play b {column}3\nplay w {column}7\n"));
        }
        script.push_str("play b pass\nplay w E2\nplay b pass\nplay w pass\n");
        let out = run(&mut s, &script);
        assert!(!out.contains('?'), "{out}");
        assert!(s.game().is_over(), "two passes end the game");
        // An illegal move after the end changes nothing, the end included.
        let out = run(&mut s, "play w C3\n");
        assert!(out.starts_with("? illegal move"), "{out}");
        assert!(s.game().is_over());
        // Cleanup: Black, to move after the passes, plays on until White's
        // stone is gone, White answering with passes; then Black passes.
        let mut moves = 0;
        loop {
            let out = run(&mut s, "kgs-genmove_cleanup b\n");
            let vertex = out.trim().trim_start_matches('=').trim().to_owned();
            assert!(!vertex.starts_with('?') && vertex != "resign", "{out}");
            if vertex == "pass" {
                break;
            }
            moves += 1;
            assert!(moves < 20, "the cleanup ends");
            assert!(!s.game().is_over(), "the game goes on after the end");
            let out = run(&mut s, "play w pass\n");
            assert!(!out.contains('?'), "{out}");
        }
        let e2 = s
            .game()
            .rules()
            .board_size
            .parse_point("E2")
            .expect("point");
        assert_ne!(
            s.game().board().get(e2),
            baduk::Stone::White,
            "White's dead stone was captured"
        );
        let out = run(&mut s, "kgs-time_settings hourglass 10\n");
        assert!(out.starts_with("? syntax error"), "{out}");
    }
}
