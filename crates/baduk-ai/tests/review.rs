//! A review's reading of positions whose best move is known: the move it
//! calls better, the line it expects, and the chances it gives.

mod positions;

use std::time::Duration;

use baduk::{Color, Game, Komi, Point, Rules};
use baduk_ai::gtp::{Reply, Session};
use baduk_ai::{Budget, Level, MctsPlayer, Settings};
use positions::{five_stones_in_atari, game_from};

fn reviewer(seed: u64) -> MctsPlayer {
    let mut settings = Settings::for_level(Level::Hard);
    settings.budget = Budget {
        playouts: 4000,
        time: Duration::from_secs(60),
    };
    settings.threads = 1;
    settings.seed = Some(seed);
    MctsPlayer::with_settings(Level::Hard, settings)
}

fn point(game: &Game, name: &str) -> Option<Point> {
    Some(game.rules().board_size.parse_point(name).expect("point"))
}

#[test]
fn the_better_move_in_a_position_with_a_capture_is_the_capture() {
    let game = five_stones_in_atari();
    for seed in [1, 2, 3] {
        let a = reviewer(seed).analyse(&game, 4000, 6);
        assert_eq!(
            a.line.first().copied(),
            Some(point(&game, "F5")),
            "seed {seed}: {a:?}"
        );
        assert!(
            a.line.len() >= 2,
            "seed {seed}: a line of play follows the move: {a:?}"
        );
    }
}

/// White's corner group has a straight three of eye space on the first
/// line, A1 B1 C1, and nothing else: its middle point makes two eyes or
/// kills. The rest is settled, Black's on the left and White's on the
/// right, their territories lines one point wide where nothing can live;
/// with a komi of 1.5 the corner decides the game, by some eight points
/// either way.
const STRAIGHT_THREE: &str = ". X . X X O . O .
                              . X . X X O . O .
                              . X . X X O . O .
                              . X . X X O . O .
                              . X . X X O . O .
                              . X . X X O . O .
                              X X X X X O . O .
                              O O O O X O . O .
                              . . . O X O . O .";

fn straight_three(to_move: Color) -> Game {
    let rules = Rules {
        komi: Komi::from_half_points(3).expect("komi"),
        ..Rules::ttakji()
    };
    game_from(STRAIGHT_THREE, rules, to_move)
}

#[test]
fn the_better_move_in_a_life_and_death_position_is_the_vital_point_for_either_side() {
    for (to_move, what) in [(Color::Black, "kills"), (Color::White, "lives")] {
        let game = straight_three(to_move);
        for seed in [1, 2] {
            let a = reviewer(seed).analyse(&game, 4000, 6);
            assert_eq!(
                a.line.first().copied(),
                Some(point(&game, "B1")),
                "{to_move:?} {what} at B1 (seed {seed}): {a:?}"
            );
        }
    }
}

#[test]
fn the_lead_and_the_chances_follow_who_takes_the_vital_point() {
    // Black to move kills the corner, White to move saves it: Black's
    // expected lead, in points with komi, and Black's chances are higher
    // in the first.
    for seed in [5, 6] {
        let black = reviewer(seed).analyse(&straight_three(Color::Black), 4000, 6);
        let white = reviewer(seed).analyse(&straight_three(Color::White), 4000, 6);
        assert!(
            black.black_lead > white.black_lead,
            "seed {seed}: {black:?} {white:?}"
        );
        assert!(
            black.winrate > 1.0 - white.winrate,
            "seed {seed}: {black:?} {white:?}"
        );
    }
}

fn run(gtp: &mut Session, line: &str) -> (Reply, bool) {
    let words: Vec<&str> = line.split_whitespace().collect();
    gtp.execute(words[0], &words[1..])
}

#[test]
fn a_review_over_gtp_answers_the_chances_the_lead_and_the_line() {
    let mut gtp = Session::new(Rules::ttakji(), reviewer(1));
    let ok = |r: &Reply| matches!(r, Reply::Success(_));
    let text = |r: Reply| match r {
        Reply::Success(s) | Reply::Failure(s) => s,
    };
    for line in ["boardsize 9", "komi 7", "play b E5", "play w D4"] {
        let (reply, _) = run(&mut gtp, line);
        assert!(ok(&reply), "{line}: {reply:?}");
    }
    let (reply, _) = run(&mut gtp, "ttakji-analyse b 800 4");
    assert!(ok(&reply), "{reply:?}");
    let text = text(reply);
    let words: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"winrate"), "{text}");
    assert_eq!(words.get(2), Some(&"lead"), "{text}");
    assert_eq!(words.get(6), Some(&"line"), "{text}");
    let line = &words[7..];
    assert!((1..=4).contains(&line.len()), "{text}");
    // Nothing was played: it is still Black's move, after two.
    let (reply, _) = run(&mut gtp, "printsgf");
    let record = match reply {
        Reply::Success(s) | Reply::Failure(s) => s,
    };
    assert_eq!(
        record.matches(";B[").count() + record.matches(";W[").count(),
        2,
        "{record}"
    );
    let (reply, _) = run(&mut gtp, "ttakji-analyse b 0");
    assert!(!ok(&reply), "no playouts is refused");
    let (reply, _) = run(&mut gtp, "ttakji-analyse x 100");
    assert!(!ok(&reply), "a colour that is none is refused");
}
