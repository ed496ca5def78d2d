//! Outside engines as players: a GTP controller that starts the process,
//! sets board size, komi and rules, replays the game and asks `genmove`,
//! with a timeout, and restarts the engine if it dies.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use thiserror::Error;

use baduk::{Game, Move, Point};

use crate::Decision;

/// Why an outside engine could not answer.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("cannot start `{command}`: {source}")]
    Start {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` did not answer `{request}` within {timeout:?}")]
    Timeout {
        command: String,
        request: String,
        timeout: Duration,
    },
    #[error("`{command}` exited (while answering `{request}`)")]
    Died { command: String, request: String },
    #[error("`{command}` refused `{request}`: {reply}")]
    Refused {
        command: String,
        request: String,
        reply: String,
    },
    #[error("`{command}` answered `{request}` with `{reply}`, which is not a move on this board")]
    BadMove {
        command: String,
        request: String,
        reply: String,
    },
}

/// A running GTP engine.
#[derive(Debug)]
pub struct GtpEngine {
    program: String,
    args: Vec<String>,
    timeout: Duration,
    process: Process,
    /// The moves the engine has been told, to send only what is new.
    synced: Vec<Move>,
    synced_rules: Option<(u8, i32)>,
}

#[derive(Debug)]
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        std::thread::sleep(Duration::from_millis(20));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl GtpEngine {
    /// Starts `program` with `args`; every answer must come within `timeout`.
    pub fn start(
        program: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<GtpEngine, EngineError> {
        let process = spawn(program, args)?;
        Ok(GtpEngine {
            program: program.to_owned(),
            args: args.to_vec(),
            timeout,
            process,
            synced: Vec::new(),
            synced_rules: None,
        })
    }

    /// The command line, for messages and records.
    #[must_use]
    pub fn command_line(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Sends one command and returns the text of a successful answer.
    pub fn send(&mut self, request: &str) -> Result<String, EngineError> {
        let command = self.command_line();
        let died = || EngineError::Died {
            command: command.clone(),
            request: request.to_owned(),
        };
        writeln!(self.process.stdin, "{request}").map_err(|_| died())?;
        self.process.stdin.flush().map_err(|_| died())?;
        let mut reply = String::new();
        loop {
            let line = match self.process.lines.recv_timeout(self.timeout) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(EngineError::Timeout {
                        command,
                        request: request.to_owned(),
                        timeout: self.timeout,
                    });
                }
                Err(RecvTimeoutError::Disconnected) => return Err(died()),
            };
            let line = line.trim_end();
            if line.is_empty() {
                if reply.is_empty() {
                    continue;
                }
                break;
            }
            if !reply.is_empty() {
                reply.push('\n');
            }
            reply.push_str(line);
        }
        let body = reply
            .get(1..)
            .unwrap_or("")
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim()
            .to_owned();
        if reply.starts_with('=') {
            Ok(body)
        } else {
            Err(EngineError::Refused {
                command,
                request: request.to_owned(),
                reply: body,
            })
        }
    }

    /// Starts the engine again (after it died or hung); it forgets the game.
    pub fn restart(&mut self) -> Result<(), EngineError> {
        self.process = spawn(&self.program, &self.args)?;
        self.synced.clear();
        self.synced_rules = None;
        Ok(())
    }

    /// Brings the engine's board to `game`: board size and komi when they
    /// changed, then the moves it has not seen (all of them after an undo).
    pub fn sync(&mut self, game: &Game) -> Result<(), EngineError> {
        let rules = game.rules();
        let key = (rules.board_size.get(), rules.komi.half_points());
        let moves = game.moves();
        let fresh = self.synced_rules != Some(key)
            || !moves.starts_with(&self.synced)
            || game.setup() != &baduk::Board::new(rules.board_size);
        if fresh {
            self.send(&format!("boardsize {}", rules.board_size.get()))?;
            self.send("clear_board")?;
            self.send(&format!("komi {}", rules.komi))?;
            // Engines that do not know our rules names keep their own.
            let _ = self.send(&format!("kata-set-rules {}", rules.preset.name()));
            self.synced.clear();
            self.synced_rules = Some(key);
            let setup = game.setup();
            for v in setup.vertices() {
                if let Some(c) = setup.color_at(v) {
                    self.send(&format!("play {} {}", c.letter(), setup.point(v)))?;
                }
            }
        }
        for &mv in &moves[self.synced.len()..] {
            self.send(&format!("play {} {}", mv.color.letter(), mv.action))?;
            self.synced.push(mv);
        }
        Ok(())
    }

    /// Asks the engine for the move of the player to move in `game`. If
    /// the engine died or hung, it is restarted and asked once more.
    pub fn genmove(&mut self, game: &Game) -> Result<Decision, EngineError> {
        match self.try_genmove(game) {
            Err(EngineError::Died { .. } | EngineError::Timeout { .. }) => {
                self.restart()?;
                self.try_genmove(game)
            }
            other => other,
        }
    }

    fn try_genmove(&mut self, game: &Game) -> Result<Decision, EngineError> {
        self.sync(game)?;
        let color = game.to_move();
        let request = format!("genmove {}", color.letter());
        let reply = self.send(&request)?;
        let decision = parse_move(&reply, game).ok_or_else(|| EngineError::BadMove {
            command: self.command_line(),
            request: request.clone(),
            reply: reply.clone(),
        })?;
        // The engine has played its own move on its board.
        if let Some(action) = decision.action() {
            self.synced.push(Move { color, action });
        }
        Ok(decision)
    }
}

fn parse_move(reply: &str, game: &Game) -> Option<Decision> {
    let word = reply.split_whitespace().next()?;
    if word.eq_ignore_ascii_case("pass") {
        return Some(Decision::Pass);
    }
    if word.eq_ignore_ascii_case("resign") {
        return Some(Decision::Resign);
    }
    let p: Point = game.rules().board_size.parse_point(word).ok()?;
    Some(Decision::Play(p))
}

fn spawn(program: &str, args: &[String]) -> Result<Process, EngineError> {
    let command = std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let start_error = |source| EngineError::Start {
        command: command.clone(),
        source,
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(start_error)?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| start_error(std::io::Error::other("no stdin")))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| start_error(std::io::Error::other("no stdout")))?;
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Ok(Process {
        child,
        stdin,
        lines: rx,
    })
}
