//! The dead-stone judgement measured against GNU Go 3.8 on finished games.
//!
//! `tests/data/gnugo-finished/` holds 200 9×9 games GNU Go played against
//! itself to two passes (made by `tools/gnugo_selfplay.py`, levels 1–10,
//! half of them lopsided, game seeds 1–200), with the stones GNU Go (level
//! 10) reports by `final_status_list dead`. `tests/data/gnugo-finished-1001/`
//! holds 150 more made the same way (game seeds 1001–1150). On both the
//! engine must never remove a stone GNU Go calls alive, and must remove at
//! least 95% of the stones GNU Go calls dead; it removes 96.1% and 97.6%
//! today (the rest are groups in unsettled fights), and [`RECALL_FLOOR`]
//! keeps it from slipping.
//!
//! `tests/data/gnugo-finished-2001/` holds 150 more (game seeds 2001–2152,
//! two games that ended by resignation left out), made while the method
//! was being worked out on the first two sets and kept away from that work
//! as a check, and `tests/data/gnugo-finished-3001/` 150 more (seeds
//! 3001–3150) made after the method was settled. No stone GNU Go calls
//! alive may be removed there either; it removes 94.0% and 96.0% of the
//! dead ones (95.0% of the two sets' 501), and [`HELD_OUT_RECALL_FLOOR`]
//! keeps that from slipping.
//!
//! `tests/data/gnugo-finished-4001/` (seeds 4001–4401, one game that ended
//! by resignation left out) and `tests/data/gnugo-finished-5001/` (seeds
//! 5001–5400) hold 400 games each, made later and run as they came: they
//! found three wrong removals, two of them fixed by the checks they led
//! to and one listed in [`KNOWN_DISAGREEMENTS`]. It removes 94.0% and
//! 96.8% of the dead stones there. Over all six finished sets it must
//! remove at least 95% ([`OVERALL_RECALL_FLOOR`]).
//!
//! `tests/data/gnugo-early-6001/` and `tests/data/ttakji-early-7001/` hold
//! 150 games each that were stopped early by two passes, at a move drawn
//! between 20 and 60, with fights open and areas unclaimed: GNU Go against
//! itself, and this project's engine (Easy and Normal) against itself,
//! GNU Go judging. `gnugo-early-8001/` (52 games) and `ttakji-early-9001/`
//! (80) were made
//! the same way after the method was settled and kept as a check. A count
//! must never take off a group that could still live, so no stone GNU Go
//! calls alive may be removed there beyond the games in
//! [`KNOWN_DISAGREEMENTS`]; GNU Go calls many groups in open areas dead
//! that the count keeps as doubtful, so recall there is low by design and
//! [`EARLY_RECALL_FLOOR`] only keeps it from vanishing.

use std::collections::BTreeSet;
use std::path::Path;

use baduk::{Point, sgf};

/// The share of GNU Go's dead stones that must be removed on each of the
/// two sets the method was worked out on.
const RECALL_FLOOR: f64 = 0.95;

/// The share that must be removed on each set kept out of that work,
/// just below the 94.0% and 96.0% they measured when first run.
const HELD_OUT_RECALL_FLOOR: f64 = 0.93;

/// The share that must be removed over all the finished sets together.
const OVERALL_RECALL_FLOOR: f64 = 0.95;

/// The share that must be removed on the sets of games stopped early,
/// where most groups GNU Go calls dead still have open space and are kept.
const EARLY_RECALL_FLOOR: f64 = 0.15;

/// Stones the count removes that GNU Go's final status keeps, known and
/// left as they are: set, game, stones. In `gnugo-finished-5001/156.sgf`
/// White's H1 and H2 sit in Black's lower right corner, where the fight is
/// open: GNU Go's own reading finds that Black takes them by playing H3
/// (`owl_attack H1` answers `1 H3`, `owl_defend H1` answers 0), yet with
/// White moving first (G1, then J2) it ends in a seki, and GNU Go's final
/// status calls them seki. The playouts lose them in seven lines of ten
/// with either side first and the count removes them. Fixing it, or a
/// new such game, fails the test until this list says so.
///
/// The other two are capturing races in games stopped early, where GNU
/// Go's final status calls a group alive that its own reading finds lost,
/// as the count does. In ttakji-early-7001's 144 Black's A5-C4 group has
/// two liberties: `dragon_status B4` says dead, `owl_attack B4` answers
/// A3 and `owl_defend B4` answers 0. In ttakji-early-9001's 034 White's
/// B8 C8 lose the race whoever moves first (`owl_defend B8` answers 0;
/// played out either way, Black's A9 takes three stones). Seven more
/// games, in which the count took every stone of one colour off the
/// board, are kept since it never does; four with wide open room (027,
/// 064 and 081 of ttakji-early-7001, 062 of ttakji-early-9001) since the
/// count keeps groups with undecided room on an open board; see
/// `docs/dead-stones.md`.
const KNOWN_DISAGREEMENTS: &[(&str, &str, &str)] = &[
    ("gnugo-finished-5001", "156.sgf", "H1 H2"),
    ("ttakji-early-7001", "144.sgf", "A5 A6 B2 B3 B4 B5 C4"),
    // The held-out engine set, run once after the method was settled.
    ("ttakji-early-9001", "034.sgf", "B8 C8"),
];

struct Case {
    file: String,
    dead: BTreeSet<Point>,
    ours: BTreeSet<Point>,
}

fn cases(set: &str) -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(set);
    let index = std::fs::read_to_string(dir.join("status.tsv")).expect("status.tsv is readable");
    let mut out = Vec::new();
    for line in index
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let file = cols[0].to_owned();
        let text = std::fs::read_to_string(dir.join(&file)).expect("game file is readable");
        let (_, game) = sgf::read_game(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let size = game.rules().board_size;
        let dead: BTreeSet<Point> = cols[1]
            .split_whitespace()
            .filter(|s| *s != "-")
            .map(|s| size.parse_point(s).expect("GNU Go vertex"))
            .collect();
        let ours = baduk::analyse(game.board()).dead.into_iter().collect();
        out.push(Case { file, dead, ours });
    }
    out
}

#[test]
fn dead_stones_agree_with_gnu_go_on_finished_games() {
    check("gnugo-finished", 200, RECALL_FLOOR);
}

#[test]
fn dead_stones_agree_with_gnu_go_on_a_second_set_of_games() {
    check("gnugo-finished-1001", 150, RECALL_FLOOR);
}

#[test]
fn dead_stones_agree_with_gnu_go_on_a_third_set_of_games() {
    check("gnugo-finished-2001", 150, HELD_OUT_RECALL_FLOOR);
}

/// Checks one set and returns GNU Go's dead stones in it and how many of
/// them the count removes.
fn check(set: &str, games: usize, floor: f64) -> (usize, usize) {
    let cases = cases(set);
    let mut wrong = Vec::new();
    let mut missed = Vec::new();
    let (mut gnugo_dead, mut found) = (0usize, 0usize);
    for case in &cases {
        gnugo_dead += case.dead.len();
        found += case.dead.intersection(&case.ours).count();
        let extra: Vec<String> = case
            .ours
            .difference(&case.dead)
            .map(Point::to_string)
            .collect();
        if !extra.is_empty() {
            wrong.push(format!("{}: {}", case.file, extra.join(" ")));
        }
        let miss: Vec<String> = case
            .dead
            .difference(&case.ours)
            .map(Point::to_string)
            .collect();
        if !miss.is_empty() {
            missed.push(format!("{}: {}", case.file, miss.join(" ")));
        }
    }
    let recall = found as f64 / gnugo_dead.max(1) as f64;
    println!(
        "{set}: {} games, GNU Go dead stones {gnugo_dead}, removed {found} ({:.1}%), wrongly removed in {} games",
        cases.len(),
        recall * 100.0,
        wrong.len()
    );
    println!("missed:\n  {}", missed.join("\n  "));
    assert_eq!(cases.len(), games, "the data set has {games} games");
    let known: Vec<String> = KNOWN_DISAGREEMENTS
        .iter()
        .filter(|(s, _, _)| *s == set)
        .map(|(_, file, stones)| format!("{file}: {stones}"))
        .collect();
    let unknown: Vec<&String> = wrong.iter().filter(|w| !known.contains(w)).collect();
    assert!(
        unknown.is_empty(),
        "{set}: stones GNU Go calls alive were removed:\n  {}",
        unknown
            .iter()
            .map(|w| w.as_str())
            .collect::<Vec<_>>()
            .join("\n  ")
    );
    for k in &known {
        assert!(
            wrong.contains(k),
            "{set}: the known disagreement {k} is gone; take it off the list"
        );
    }
    assert!(
        recall >= floor,
        "{set}: only {:.1}% of GNU Go's dead stones removed",
        recall * 100.0
    );
    (gnugo_dead, found)
}

#[test]
fn dead_stones_agree_with_gnu_go_on_a_fourth_set_of_games() {
    check("gnugo-finished-3001", 150, HELD_OUT_RECALL_FLOOR);
}

#[test]
fn dead_stones_agree_with_gnu_go_on_a_fifth_set_of_games() {
    check("gnugo-finished-4001", 400, HELD_OUT_RECALL_FLOOR);
}

#[test]
fn dead_stones_agree_with_gnu_go_on_a_sixth_set_of_games() {
    check("gnugo-finished-5001", 400, HELD_OUT_RECALL_FLOOR);
}

#[test]
fn dead_stones_agree_with_gnu_go_over_all_finished_games() {
    let sets = [
        ("gnugo-finished", 200),
        ("gnugo-finished-1001", 150),
        ("gnugo-finished-2001", 150),
        ("gnugo-finished-3001", 150),
        ("gnugo-finished-4001", 400),
        ("gnugo-finished-5001", 400),
    ];
    let (mut gnugo_dead, mut found) = (0, 0);
    for (set, games) in sets {
        let (dead, removed) = check(set, games, 0.0);
        gnugo_dead += dead;
        found += removed;
    }
    let recall = found as f64 / gnugo_dead.max(1) as f64;
    println!(
        "all finished sets: GNU Go dead stones {gnugo_dead}, removed {found} ({:.1}%)",
        recall * 100.0
    );
    assert!(
        recall >= OVERALL_RECALL_FLOOR,
        "only {:.1}% of GNU Go's dead stones removed over the finished sets",
        recall * 100.0
    );
}

#[test]
fn no_group_that_could_live_is_removed_in_games_gnu_go_stopped_early() {
    check("gnugo-early-6001", 150, EARLY_RECALL_FLOOR);
}

#[test]
fn no_group_that_could_live_is_removed_in_games_the_engine_stopped_early() {
    check("ttakji-early-7001", 150, EARLY_RECALL_FLOOR);
}

#[test]
fn no_group_that_could_live_is_removed_in_held_out_games_gnu_go_stopped_early() {
    check("gnugo-early-8001", 52, EARLY_RECALL_FLOOR);
}

#[test]
fn no_group_that_could_live_is_removed_in_held_out_games_the_engine_stopped_early() {
    check("ttakji-early-9001", 80, EARLY_RECALL_FLOOR);
}
