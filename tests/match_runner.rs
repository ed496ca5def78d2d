//! `ttakji match` plays two engines against each other and writes the
//! records and a summary.

use std::process::Command;

#[test]
fn a_short_match_writes_every_game_and_a_summary() {
    let dir = std::env::temp_dir().join(format!("ttakji-match-{}", std::process::id()));
    let bin = env!("CARGO_BIN_EXE_ttakji");
    let engine = |seed: &str| format!("{bin} gtp --level easy --playouts 100 --seed {seed}");
    let output = Command::new(bin)
        .args(["match", "--games", "2", "--size", "5", "--komi", "0.5"])
        .args(["--a", &engine("{game}"), "--name-a", "first"])
        .args(["--b", &engine("7"), "--name-b", "second"])
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("ttakji match runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = std::fs::read_to_string(dir.join("summary.txt")).expect("summary written");
    assert!(summary.starts_with("first vs second: 2 games"), "{summary}");
    let first = summary
        .lines()
        .find_map(|l| l.strip_prefix("first: "))
        .expect("a result line for the first engine");
    let results = first.split(';').next().unwrap_or("");
    let totals: u32 = results
        .split(", ")
        .filter_map(|part| part.split_whitespace().next()?.parse::<u32>().ok())
        .sum();
    assert_eq!(
        totals, 2,
        "wins + losses + draws of the first engine: {summary}"
    );
    for game in ["game-001.sgf", "game-002.sgf"] {
        let text = std::fs::read_to_string(dir.join(game)).expect("game written");
        let (record, _) = baduk::sgf::read_game(&text).expect("the record replays");
        assert!(record.result.is_some(), "{game} has a result");
        assert_eq!(record.rules.board_size.get(), 5);
    }
    assert!(
        std::fs::read_to_string(dir.join("game-001.sgf"))
            .expect("game 1")
            .contains("PB[first]")
    );
    assert!(
        std::fs::read_to_string(dir.join("game-002.sgf"))
            .expect("game 2")
            .contains("PB[second]")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
