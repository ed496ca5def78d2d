//! Drives `ttakji gtp` as a separate process, the way GoGui or Sabaki do.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running `ttakji gtp` with its pipes.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ttakji"))
            .arg("gtp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("ttakji gtp starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Engine {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends one command and reads the reply up to its blank line.
    /// Returns (success, text after `=`/`?` and the id).
    fn send(&mut self, command: &str) -> (bool, String) {
        writeln!(self.stdin, "{command}").expect("engine reads commands");
        self.stdin.flush().expect("flush");
        let mut reply = String::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("engine answers");
            assert!(n > 0, "engine closed its output after `{command}`");
            if line == "\n" && !reply.is_empty() {
                break;
            }
            reply.push_str(&line);
        }
        let ok = reply.starts_with('=');
        let body = reply[1..]
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim()
            .to_owned();
        (ok, body)
    }

    fn ok(&mut self, command: &str) -> String {
        let (ok, body) = self.send(command);
        assert!(ok, "`{command}` failed: {body}");
        body
    }

    fn fails(&mut self, command: &str) -> String {
        let (ok, body) = self.send(command);
        assert!(!ok, "`{command}` should fail but answered {body}");
        body
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_gtp_controller_can_play_and_count_a_game() {
    let mut e = Engine::start(&[]);
    assert_eq!(e.ok("1 protocol_version"), "2");
    assert_eq!(e.ok("name"), "Ttakji");
    assert_eq!(e.ok("known_command final_status_list"), "true");
    assert_eq!(e.ok("known_command genmove_bogus"), "false");
    assert!(e.ok("list_commands").lines().any(|l| l == "kata-set-rules"));
    assert_eq!(e.ok("kata-get-rules"), "ttakji");
    e.ok("boardsize 5");
    e.ok("clear_board");
    e.ok("komi 0.5");
    // Black takes the left three columns, White the right one; C is the wall line.
    for (b, w) in [
        ("C1", "D1"),
        ("C2", "D2"),
        ("C3", "D3"),
        ("C4", "D4"),
        ("C5", "D5"),
    ] {
        e.ok(&format!("play b {b}"));
        e.ok(&format!("play w {w}"));
    }
    assert!(
        e.fails("play b C3")
            .contains("illegal move: C3 is occupied")
    );
    assert!(e.fails("play b Z9").contains("invalid vertex"));
    assert_eq!(e.ok("is_legal w A1"), "1");
    assert_eq!(e.ok("is_legal b C1"), "0");
    let legal = e.ok("all_legal w");
    assert!(legal.split_whitespace().any(|v| v == "E3"), "{legal}");
    e.ok("play b pass");
    e.ok("play w pass");
    // Black 15 (3 columns), White 10 (2 columns) + 0.5.
    assert_eq!(e.ok("final_score"), "B+4.5");
    assert_eq!(e.ok("final_status_list dead"), "");
    assert!(e.ok("final_status_list alive").contains("C1"));
    // After two passes a move plays on, as in KGS's cleanup phase, and
    // undo takes it back.
    e.ok("play b A1");
    e.ok("undo");
    e.ok("play w E5");
    let board = e.ok("showboard");
    assert!(board.contains("(O"), "last move is marked: {board}");
    let sgf = e.ok("printsgf");
    assert!(
        sgf.starts_with("(;GM[1]FF[4]") && sgf.contains("SZ[5]") && sgf.contains("KM[0.5]"),
        "{sgf}"
    );
    e.ok("quit");
    let status = e.child.wait().expect("engine exits");
    assert!(status.success());
}

#[test]
fn rules_and_records_load_through_gtp() {
    let dir = std::env::temp_dir().join(format!("ttakji-gtp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("game.sgf");
    std::fs::write(
        &path,
        "(;GM[1]FF[4]SZ[9]KM[6.5]RU[Japanese];B[ee];W[cc];B[gg])",
    )
    .expect("write sgf");

    let mut e = Engine::start(&["--rules", "chinese"]);
    assert_eq!(e.ok("kata-get-rules"), "chinese");
    assert_eq!(e.ok(&format!("loadsgf {} 3", path.display())), "black");
    let board = e.ok("showboard");
    assert!(board.contains("Move 2"), "{board}");
    assert_eq!(e.ok(&format!("loadsgf {}", path.display())), "white");
    assert_eq!(e.ok("kata-get-rules"), "japanese");
    e.ok("kata-set-rules tromp-taylor");
    assert_eq!(e.ok("kata-get-rules"), "tromp-taylor");
    assert!(e.fails("kata-set-rules korean").contains("unknown rules"));
    assert!(
        e.fails("loadsgf /nonexistent/file.sgf")
            .contains("cannot load file")
    );
    let out = dir.join("out.sgf");
    e.ok(&format!("printsgf {}", out.display()));
    let written = std::fs::read_to_string(&out).expect("printsgf wrote the file");
    assert!(written.contains(";B[ee];W[cc];B[gg]"), "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn genmove_answers_a_legal_move_and_plays_it() {
    let mut e = Engine::start(&["--level", "easy", "--seed", "1", "--playouts", "300"]);
    e.ok("boardsize 9");
    e.ok("clear_board");
    e.ok("time_settings 300 30 1");
    e.ok("time_left b 200 0");
    let first = e.ok("genmove b");
    let size = baduk::BoardSize::NINE;
    let p = size
        .parse_point(&first)
        .unwrap_or_else(|err| panic!("`{first}` is not a point: {err}"));
    assert!(
        e.fails(&format!("play w {p}")).contains("occupied"),
        "genmove played {p}"
    );
    let suggestion = e.ok("reg_genmove w");
    assert!(
        size.parse_point(&suggestion).is_ok() || suggestion == "pass",
        "{suggestion}"
    );
    assert_eq!(
        e.ok(&format!("is_legal w {suggestion}")),
        "1",
        "reg_genmove left {suggestion} free"
    );
    let second = e.ok("kgs-genmove_cleanup w");
    assert!(size.parse_point(&second).is_ok(), "{second}");
    assert!(e.ok("showboard").contains("Move 2"));
    assert!(e.fails("genmove purple").contains("syntax error"));
}
