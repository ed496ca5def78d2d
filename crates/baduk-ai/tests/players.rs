//! The computer player's decisions on drawn positions.

mod positions;

use std::time::Duration;

use baduk::{Color, Game, Move, Rules};
use baduk_ai::{Budget, Decision, Level, MctsPlayer, Settings, Tuning, search};
use positions::{five_stones_in_atari, game_from};

fn settings(playouts: u32, seed: u64) -> Settings {
    Settings {
        budget: Budget {
            playouts,
            time: Duration::from_secs(60),
        },
        threads: 1,
        seed: Some(seed),
        resign_below: None,
        tuning: baduk_ai::Tuning::default(),
        scale_with_board: false,
        clock: baduk_ai::Clock::system(),
    }
}

#[test]
fn a_seeded_search_with_a_playout_budget_repeats_exactly() {
    let game = Game::new(Rules::ttakji());
    let budget = Budget {
        playouts: 500,
        time: Duration::from_secs(60),
    };
    let a = search(&game, budget, 1, 42);
    let b = search(&game, budget, 1, 42);
    assert_eq!(a.moves, b.moves);
    assert_eq!(a.playouts, 500);
}

#[test]
fn a_large_group_in_atari_is_captured() {
    // White's five stones in the middle have one liberty left, at F5. If
    // Black lets them be, White runs out through F5 and G5 to the wall on
    // the right and the game turns; taking them wins it. (A group that
    // cannot run is not urgent, and a search that plays for the win may
    // rightly leave it for later.)
    let game = five_stones_in_atari();
    for level in Level::ALL {
        let mut player =
            MctsPlayer::with_settings(level, settings(level.budget().playouts.min(3000), 3));
        let f5 = game.rules().board_size.parse_point("F5").expect("point");
        assert_eq!(
            player.decide(&game),
            Decision::Play(f5),
            "{level} misses the capture"
        );
    }
}

#[test]
fn a_settled_game_is_ended_with_a_pass() {
    // Black owns the left, White the right; nothing is left to play.
    let mut game = game_from(
        ". . X O .
         . . X O .
         . . X O .
         . . X O .
         . . X O .",
        Rules::ttakji().with_board_size(baduk::BoardSize::new(5).expect("5x5")),
        Color::White,
    );
    game.play(Move::pass(Color::White)).expect("pass");
    let mut player = MctsPlayer::with_settings(Level::Normal, settings(2000, 5));
    assert_eq!(player.decide(&game), Decision::Pass);
}

#[test]
fn the_player_never_fills_its_own_last_eyes() {
    // Black's group lives with two eyes at A1 and C1; filling one would
    // let White capture everything.
    let game = game_from(
        ". X . X O
         X X X X O
         O O O O O
         . . . . .
         . . . . .",
        Rules::ttakji().with_board_size(baduk::BoardSize::new(5).expect("5x5")),
        Color::Black,
    );
    let mut player = MctsPlayer::with_settings(Level::Normal, settings(1500, 9));
    let decision = player.decide(&game);
    let eyes = ["A5", "C5"].map(|s| game.rules().board_size.parse_point(s).expect("point"));
    assert!(
        !eyes.iter().any(|&p| decision == Decision::Play(p)),
        "filled an eye: {decision:?}"
    );
}

#[test]
fn no_level_passes_on_an_empty_board() {
    // The empty board's one area borders neither colour: nothing there is
    // settled, however sure the search is of its first move.
    let game = Game::new(Rules::ttakji());
    for level in Level::ALL {
        for playouts in [200, 2_000] {
            for seed in 1..=2 {
                let mut s = settings(playouts, seed);
                s.tuning = level.tuning();
                let decision = MctsPlayer::with_settings(level, s).decide(&game);
                assert!(
                    matches!(decision, Decision::Play(_)),
                    "{level}, {playouts} playouts, seed {seed}: {decision:?}"
                );
            }
        }
    }
}

#[test]
fn a_lost_game_is_not_played_on_after_the_opponent_passes() {
    // Black lives in the corner and has lost by far; White has passed.
    // Easy, which never resigns, passes too rather than playing on (and in
    // the end filling its own eyes).
    let mut game = game_from(
        ". X . X . O . O .
         X X X X . O O O O
         . . . . . O . O .
         . . . . . O O O O
         O O O O O O . O .
         O . O . O O O O O
         O O O O O . O . O
         . O . O O O O O O
         O O O O . O . O .",
        Rules::ttakji(),
        Color::White,
    );
    game.play(Move::pass(Color::White)).expect("pass");
    for seed in 1..=3 {
        let mut player = MctsPlayer::with_settings(Level::Easy, settings(800, seed));
        assert_eq!(player.decide(&game), Decision::Pass, "seed {seed}");
    }
}

#[test]
fn a_levels_playouts_on_a_larger_board_follow_its_budget_there() {
    // Easy's own budget is 400 on 9×9, 1,200 on 13×13 and 1,500 on
    // 19×19: a budget of 100 is scaled the same way.
    for (size, expected) in [(9, 100), (13, 300), (19, 375)] {
        let rules = Rules::ttakji().with_board_size(baduk::BoardSize::new(size).expect("size"));
        let game = Game::new(rules);
        let mut player = MctsPlayer::with_settings(
            Level::Easy,
            Settings {
                scale_with_board: true,
                ..settings(100, 1)
            },
        );
        let (_, result) = player.decide_with_search(&game);
        assert_eq!(result.playouts, expected, "{size}x{size}");
    }
    assert!(Settings::for_level(Level::Easy).scale_with_board);
    // The levels stay in order on every board.
    for size in [9, 13, 19] {
        let [easy, normal, hard] = Level::ALL.map(|l| l.budget_on(size).playouts);
        assert!(easy < normal && normal < hard, "{size}x{size}");
    }
}

#[test]
fn threads_share_the_playout_budget_and_merge_at_the_root() {
    let game = Game::new(Rules::ttakji());
    let budget = Budget {
        playouts: 600,
        time: Duration::from_secs(60),
    };
    let result = search(&game, budget, 2, 8);
    assert_eq!(result.playouts, 600);
    let visits: u32 = result.moves.iter().map(|m| m.visits).sum();
    assert_eq!(
        visits, 600,
        "every simulation is counted once at the merged root"
    );
    assert!(result.best().and_then(|m| m.vertex).is_some());
}

#[test]
fn trees_searched_apart_and_merged_decide_as_threads_do() {
    // Three players with the same settings each search one tree, as the
    // browser's Workers do, pass what they found through its text, and
    // each decides from all three: every one plays the move that one
    // player on three threads plays, move after move (the kept trees and
    // Hard's dynamic komi carried on alike).
    let mut level = settings(900, 21);
    level.tuning = Level::Hard.tuning();
    level.resign_below = None;
    let mut threaded = MctsPlayer::with_settings(
        Level::Hard,
        Settings {
            threads: 3,
            ..level.clone()
        },
    );
    let mut hosts: Vec<MctsPlayer> = (0..3)
        .map(|_| MctsPlayer::with_settings(Level::Hard, level.clone()))
        .collect();
    let mut game = Game::new(Rules::ttakji());
    let mut shifts = Vec::new();
    for _ in 0..12 {
        let (expected, search) = threaded.decide_with_search(&game);
        shifts.push(search.komi_shift);
        let trees: Vec<_> = hosts
            .iter_mut()
            .enumerate()
            .map(|(i, host)| {
                let text = host.search_tree(&game, i, 3).to_text();
                baduk_ai::TreeSummary::from_text(&text).expect("a summary reads back")
            })
            .collect();
        for host in &mut hosts {
            let (decision, merged) = host.decide_from_trees(&game, &trees);
            assert_eq!(decision, expected, "at move {}", game.move_number());
            assert_eq!(merged.moves, search.moves);
            assert_eq!(merged.black_ownership, search.black_ownership);
            assert_eq!(merged.komi_shift, search.komi_shift);
        }
        let Some(action) = expected.action() else {
            break;
        };
        let color = game.to_move();
        game.play(Move { color, action }).expect("a legal move");
    }
    assert!(game.move_number() >= 12, "the game went on: {shifts:?}");
}

#[test]
fn a_tree_summary_that_is_not_one_is_refused_with_what_is_wrong() {
    use baduk_ai::TreeSummary;
    for (text, what) in [
        ("12/3:4", "three parts"),
        ("x/-:1:3f000000/", "playouts"),
        ("5/999999:1:3f000000/", "vertex"),
        ("5/3:1:zz/", "move `3:1:zz`"),
        ("5/3:1:3f000000/7", "`7`"),
    ] {
        let error = TreeSummary::from_text(text).expect_err(text);
        assert!(error.contains(what), "{text}: {error}");
    }
}

#[test]
fn a_time_limit_stops_the_search_before_a_huge_playout_budget() {
    let game = Game::new(Rules::ttakji());
    let budget = Budget {
        playouts: u32::MAX,
        time: Duration::from_millis(50),
    };
    let result = search(&game, budget, 1, 4);
    assert!(result.playouts < u32::MAX && result.playouts > 0);
}

#[test]
fn a_search_that_manages_its_time_stops_once_its_move_cannot_be_caught() {
    // Capturing the five stones in atari is the one move: the search sees
    // the best move's lead outgrow what the rest of its playouts could
    // change, and stops well before its budget. Without time management
    // the same search runs to the end.
    let game = five_stones_in_atari();
    let budget = Budget {
        playouts: 20_000,
        time: Duration::from_secs(600),
    };
    let managed = Tuning {
        time_extension: 0.5,
        ..Level::Hard.tuning()
    };
    let result = baduk_ai::search_tuned(&game, budget, 1, 5, managed);
    let f5 = game
        .board()
        .vertex(game.rules().board_size.parse_point("F5").expect("F5"));
    assert_eq!(result.best().and_then(|m| m.vertex), Some(f5));
    assert!(
        result.playouts < budget.playouts * 3 / 4,
        "stopped after {} of {} playouts",
        result.playouts,
        budget.playouts
    );
    let plain = Tuning {
        time_extension: 0.0,
        ..managed
    };
    let full = baduk_ai::search_tuned(&game, budget, 1, 5, plain);
    assert_eq!(full.playouts, budget.playouts);
}

#[test]
fn levels_read_their_names() {
    for level in Level::ALL {
        assert_eq!(Level::parse(level.name()), Ok(level));
    }
    assert!(Level::parse("expert").is_err());
    assert!(Level::Easy.budget().playouts < Level::Normal.budget().playouts);
    assert!(Level::Normal.budget().playouts < Level::Hard.budget().playouts);
    assert!(Level::Easy.elo() < Level::Normal.elo() && Level::Normal.elo() < Level::Hard.elo());
    assert_eq!(Level::nearest(1200), Level::Easy);
    assert_eq!(Level::nearest(1900), Level::Normal);
    assert_eq!(Level::nearest(2400), Level::Hard);
}

#[test]
fn the_tree_of_the_last_search_is_searched_on_after_the_move_it_chose() {
    let mut game = Game::new(Rules::ttakji());
    let budget = Budget {
        playouts: 3000,
        time: Duration::from_secs(60),
    };
    let mut searcher = baduk_ai::Searcher::default();
    let first = searcher.search(&game, budget, 1, 1, baduk_ai::Tuning::default());
    let best = first.best().and_then(|m| m.vertex).expect("a move");
    let p = game.board().point(best);
    game.play(Move::play(Color::Black, p)).expect("legal");
    let second = searcher.search(&game, budget, 1, 2, baduk_ai::Tuning::default());
    let visits: u32 = second.moves.iter().map(|m| m.visits).sum();
    assert_eq!(second.playouts, 3000);
    assert!(
        visits > second.playouts,
        "root visits {visits} include the kept ones"
    );
    // A fresh search of the same position has only its own visits.
    let fresh = search(&game, budget, 1, 2);
    let fresh_visits: u32 = fresh.moves.iter().map(|m| m.visits).sum();
    assert_eq!(fresh_visits, 3000);
    // Every root move of the kept tree is legal now.
    for m in &second.moves {
        if let Some(v) = m.vertex {
            assert!(game.check(Color::White, game.board().point(v)).is_ok());
        }
    }
}

/// Thirty moves in which Black is shut into the top two rows: White owns
/// the other seven, and Black loses by some fifty points.
fn black_shut_in() -> Game {
    let black = [
        "A9", "B9", "C9", "D9", "E9", "F9", "G9", "H9", "J9", "A8", "C8", "E8", "G8", "J8", "E3",
    ];
    let white = [
        "A7", "B7", "C7", "D7", "E7", "F7", "G7", "H7", "J7", "B5", "D5", "F5", "H5", "C3", "G3",
    ];
    let mut game = Game::new(Rules::ttakji());
    for (b, w) in black.iter().zip(&white) {
        for (color, s) in [(Color::Black, b), (Color::White, w)] {
            let p = game.rules().board_size.parse_point(s).expect("point");
            game.play(Move {
                color,
                action: baduk::Action::Play(p),
            })
            .expect("legal");
        }
    }
    assert_eq!(game.move_number(), 30);
    game
}

#[test]
fn hard_fights_a_lost_position_before_it_resigns_and_normal_does_not() {
    let game = black_shut_in();
    let for_level = |level: Level| {
        let mut s = Settings::for_level(level);
        s.budget.playouts = 300;
        s.budget.time = Duration::from_secs(60);
        s.seed = Some(3);
        s
    };
    // Normal, with the game's komi throughout, resigns at once.
    let mut normal = MctsPlayer::with_settings(Level::Normal, for_level(Level::Normal));
    assert_eq!(normal.decide(&game), Decision::Resign);
    // Hard takes komi back a point a move while it loses, and resigns only
    // once it loses with ten points back.
    let mut hard = MctsPlayer::with_settings(Level::Hard, for_level(Level::Hard));
    let mut asked = 0;
    while hard.decide(&game) != Decision::Resign {
        asked += 1;
        assert!(
            asked < 20,
            "Hard never resigned a game lost by fifty points"
        );
    }
    assert_eq!(asked, 10, "Hard resigned after {asked} searches, not 10");
}
