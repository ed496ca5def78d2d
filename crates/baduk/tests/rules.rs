//! The rules of play, position by position: captures, suicide, ko and
//! superko, seki, dead stones, the end of the game, undo and the result.
//!
//! Every position is drawn as text, top row first (`X` Black, `O` White,
//! `.` empty), and played move by move through [`Game`], checking the exact
//! reason each refused move is refused.

use baduk::score::{area_score, seki_points, territory_score};
use baduk::{
    Board, Color, EndReason, Game, GameResult, IllegalMove, Komi, Move, Owner, Point, ResumeError,
    Rules, Score, Scoring, Stone, UndoError,
};

// ----- helpers -----

/// A game from a drawn position.
fn setup(rules: Rules, drawing: &str, to_move: Color) -> Game {
    let board =
        Board::from_ascii(drawing).unwrap_or_else(|e| panic!("bad drawing: {e}\n{drawing}"));
    Game::from_setup(rules, board, to_move)
}

/// The point named `name` on the game's board.
fn pt(game: &Game, name: &str) -> Point {
    game.rules()
        .board_size
        .parse_point(name)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Points as players write them.
fn names(points: &[Point]) -> Vec<String> {
    points.iter().map(Point::to_string).collect()
}

/// The player to move puts a stone on `name`, which must be legal; returns
/// the stones it captured.
fn play(game: &mut Game, name: &str) -> Vec<String> {
    let color = game.to_move();
    let p = pt(game, name);
    assert_eq!(
        game.check(color, p),
        Ok(()),
        "{color} {name} should be legal\n{:?}",
        game.board()
    );
    let outcome = game
        .play(Move::play(color, p))
        .unwrap_or_else(|e| panic!("{color} {name}: {e}\n{:?}", game.board()));
    assert_eq!(outcome.move_number, game.move_number());
    names(&outcome.captured)
}

/// The player to move tries `name`; it must be refused with `expected`, both
/// by `check` and by `play`, and leave the game as it was.
fn refused(game: &mut Game, name: &str, expected: IllegalMove) {
    let color = game.to_move();
    let p = pt(game, name);
    let before = game.board().clone();
    let moves = game.move_number();
    assert_eq!(
        game.check(color, p),
        Err(expected.clone()),
        "check {color} {name}"
    );
    assert_eq!(
        game.play(Move::play(color, p)),
        Err(expected),
        "play {color} {name}"
    );
    assert_eq!(game.board(), &before, "a refused move changed the board");
    assert_eq!(game.move_number(), moves);
    assert_eq!(game.to_move(), color);
}

fn forbidden(game: &Game) -> Vec<String> {
    names(&game.ko_forbidden_points())
}

/// A point by name, on any board (the game checks the edge).
fn at(name: &str) -> Point {
    name.parse().unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn ko(name: &str) -> IllegalMove {
    IllegalMove::Ko { point: at(name) }
}

fn superko(name: &str, repeats_move: usize) -> IllegalMove {
    IllegalMove::Superko {
        point: at(name),
        repeats_move,
    }
}

fn suicide(name: &str) -> IllegalMove {
    IllegalMove::Suicide { point: at(name) }
}

fn occupied(name: &str) -> IllegalMove {
    IllegalMove::Occupied { point: at(name) }
}

fn stone(game: &Game, name: &str) -> Stone {
    game.board().get(pt(game, name))
}

fn komi(s: &str) -> Komi {
    Komi::parse(s).unwrap_or_else(|e| panic!("{e}"))
}

/// Everything `undo` must restore.
#[derive(Debug, PartialEq)]
struct Snapshot {
    board: Board,
    ascii: String,
    hash: u64,
    prisoners: baduk::ByColor<u32>,
    ko_point: Option<usize>,
    ko_forbidden: Vec<Point>,
    move_number: usize,
    to_move: Color,
    moves: Vec<Move>,
    passes_in_a_row: u32,
    end: Option<EndReason>,
    legal_black: Vec<Point>,
    legal_white: Vec<Point>,
}

fn snapshot(game: &Game) -> Snapshot {
    let b = game.board();
    Snapshot {
        board: b.clone(),
        ascii: b.to_ascii(),
        hash: b.hash(),
        prisoners: baduk::ByColor::from_fn(|c| b.prisoners(c)),
        ko_point: b.ko_point(),
        ko_forbidden: game.ko_forbidden_points(),
        move_number: game.move_number(),
        to_move: game.to_move(),
        moves: game.moves().to_vec(),
        passes_in_a_row: game.passes_in_a_row(),
        end: game.end(),
        legal_black: game.legal_points(Color::Black),
        legal_white: game.legal_points(Color::White),
    }
}

// ----- captures and suicide -----

/// Snapback: Black throws a single stone in at C1; White takes it at D1 and
/// is left with one liberty, C1, so Black takes back five stones there.
#[test]
fn snapback_captures_the_throw_in_then_the_whole_group() {
    let mut game = setup(
        Rules::ttakji(),
        "
        . . . . .
        X X X X X
        X X X X X
        X O O O X
        X O . . X
        ",
        Color::Black,
    );
    assert_eq!(
        play(&mut game, "C1"),
        Vec::<String>::new(),
        "the throw-in captures nothing"
    );
    assert_eq!(
        game.board()
            .liberties(game.board().vertex(pt(&game, "C1")))
            .len(),
        1
    );
    assert_eq!(
        play(&mut game, "D1"),
        ["C1"],
        "White takes the single stone"
    );
    assert_eq!(game.board().prisoners(Color::White), 1);
    // Taking one stone with a five-stone chain is no ko: C1 is open to Black.
    assert_eq!(forbidden(&game), Vec::<String>::new());
    assert_eq!(game.board().ko_point(), None);
    assert_eq!(
        play(&mut game, "C1"),
        ["B1", "D1", "B2", "C2", "D2"],
        "the snapback"
    );
    assert_eq!(game.board().prisoners(Color::Black), 5);
    assert_eq!(game.board().stone_count(Color::White), 0);
    game.board().check_invariants().expect("invariants");
}

const SUICIDE_POSITION: &str = "
    . O O X .
    O X X . .
    . . . . .
    O . . O O
    . O O X .
";

/// A5 has only White neighbours, but the chain B5-C5 is in atari, so Black
/// playing A5 captures it and is legal. A1 (one stone) and E1 (joining D1
/// into a two-stone chain) take the last liberty and capture nothing: suicide.
#[test]
fn suicide_is_illegal_unless_it_captures() {
    let mut game = setup(Rules::ttakji(), SUICIDE_POSITION, Color::Black);
    refused(&mut game, "A1", suicide("A1"));
    refused(&mut game, "E1", suicide("E1"));
    // Suicide points are illegal, but they are not ko points.
    assert_eq!(forbidden(&game), Vec::<String>::new());
    let legal = names(&game.legal_points(Color::Black));
    assert!(legal.contains(&"A5".to_owned()));
    assert!(!legal.contains(&"A1".to_owned()) && !legal.contains(&"E1".to_owned()));

    assert_eq!(
        play(&mut game, "A5"),
        ["B5", "C5"],
        "the capture gives A5 its liberties"
    );
    assert_eq!(game.board().prisoners(Color::Black), 2);
    // Capturing two stones makes no ko.
    assert_eq!(game.board().ko_point(), None);
    assert!(
        game.board()
            .liberties(game.board().vertex(pt(&game, "A5")))
            .len()
            == 1
    );
    play(&mut game, "E5");
    refused(&mut game, "E1", suicide("E1"));
    // White's point at A1 is no suicide for White: it has liberties.
    assert_eq!(game.check(Color::White, pt(&game, "A1")), Ok(()));
    game.board().check_invariants().expect("invariants");
}

/// The same position under Tromp-Taylor, where suicide is allowed: E1 takes
/// its own two-stone chain (D1, E1) off the board, and the stones are White's
/// prisoners. A one-stone suicide at A1 would recreate the position on the
/// board, so positional superko forbids it.
#[test]
fn suicide_under_tromp_taylor_removes_the_movers_chain() {
    let mut game = setup(Rules::tromp_taylor(), SUICIDE_POSITION, Color::Black);
    refused(&mut game, "A1", superko("A1", 0));
    let outcome = game
        .play(Move::play(Color::Black, pt(&game, "E1")))
        .expect("suicide is allowed");
    // No White stone is taken; the mover's own chain is what went.
    assert_eq!(names(&outcome.captured), ["D1", "E1"]);
    assert_eq!(stone(&game, "D2"), Stone::White);
    assert_eq!(stone(&game, "E2"), Stone::White);
    assert_eq!(outcome.move_number, 1);
    assert_eq!(stone(&game, "E1"), Stone::Empty);
    assert_eq!(stone(&game, "D1"), Stone::Empty);
    assert_eq!(game.board().prisoners(Color::White), 2);
    assert_eq!(game.board().prisoners(Color::Black), 0);
    assert_eq!(game.board().stone_count(Color::Black), 3);
    assert_eq!(game.to_move(), Color::White);
    game.board().check_invariants().expect("invariants");
}

/// Occupied points, points off the board, and moves out of turn are refused.
#[test]
fn occupied_and_off_board_points_are_refused() {
    let mut game = setup(Rules::ttakji(), SUICIDE_POSITION, Color::Black);
    refused(&mut game, "B5", occupied("B5"));
    refused(&mut game, "D1", occupied("D1"));
    let off = Point::new(5, 0); // F1: one column beyond a 5x5 board
    let expected = IllegalMove::OffBoard {
        point: off,
        size: 5,
    };
    assert_eq!(game.check(Color::Black, off), Err(expected.clone()));
    assert_eq!(game.play(Move::play(Color::Black, off)), Err(expected));
    assert!(game.rules().board_size.parse_point("F1").is_err());
    assert_eq!(
        game.play(Move::play(Color::White, pt(&game, "C3"))),
        Err(IllegalMove::NotYourTurn {
            to_move: Color::Black
        })
    );
    assert_eq!(game.move_number(), 0);
}

// ----- ko -----

const KO_POSITION: &str = "
    . . . . .
    . X O . .
    X O . O .
    . X O . .
    . . . . .
";

/// Simple ko: Black takes B3 at C3; White may not take back at once.
/// Under Japanese rules that is `Ko`; after a ko threat and its answer
/// elsewhere the retake is legal, and then Black may not retake at once.
#[test]
fn the_immediate_ko_retake_is_forbidden_until_a_threat_is_answered() {
    let mut game = setup(Rules::japanese(), KO_POSITION, Color::Black);
    assert_eq!(forbidden(&game), Vec::<String>::new());
    assert_eq!(play(&mut game, "C3"), ["B3"]);
    assert_eq!(
        game.board().ko_point(),
        Some(game.board().vertex(pt(&game, "B3")))
    );
    assert_eq!(forbidden(&game), ["B3"], "exactly the retake is forbidden");
    refused(&mut game, "B3", ko("B3"));

    play(&mut game, "E1"); // White's ko threat
    assert_eq!(forbidden(&game), Vec::<String>::new());
    play(&mut game, "E2"); // Black answers
    assert_eq!(forbidden(&game), Vec::<String>::new());
    assert_eq!(play(&mut game, "B3"), ["C3"], "the retake after a threat");
    assert_eq!(forbidden(&game), ["C3"]);
    refused(&mut game, "C3", ko("C3"));
    assert_eq!(game.board().prisoners(Color::Black), 1);
    assert_eq!(game.board().prisoners(Color::White), 1);
}

/// The same ko under Ttakji's positional superko: the immediate retake
/// recreates the start (move 0); after the threat exchange Black's retake
/// would recreate the position after move 3.
#[test]
fn the_immediate_ko_retake_is_superko_naming_the_repeated_move() {
    let mut game = setup(Rules::ttakji(), KO_POSITION, Color::Black);
    assert_eq!(play(&mut game, "C3"), ["B3"]);
    assert_eq!(forbidden(&game), ["B3"]);
    refused(&mut game, "B3", superko("B3", 0));
    play(&mut game, "E1");
    play(&mut game, "E2");
    assert_eq!(forbidden(&game), Vec::<String>::new());
    assert_eq!(play(&mut game, "B3"), ["C3"]);
    assert_eq!(forbidden(&game), ["C3"]);
    refused(&mut game, "C3", superko("C3", 3));
}

/// Three kos at once: K1 (White B1, Black captures at C1), K2 (White G1,
/// Black captures at H1) and, at the top, K3 where Black's C9 is in atari
/// (White captures at B9). Each capture in turn, avoiding the ko just
/// taken, brings the board back to the start after six moves.
const TRIPLE_KO: &str = "
    X . X O . . . . .
    X X O O . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    X X O O . X X O O
    X O . O . X O . O
";

/// The cycle of captures: Black C1, White B9, Black H1, White B1, Black C9,
/// White G1 (which returns to the start).
const TRIPLE_KO_CYCLE: [(&str, &str); 6] = [
    ("C1", "B1"),
    ("B9", "C9"),
    ("H1", "G1"),
    ("B1", "C1"),
    ("C9", "B9"),
    ("G1", "H1"),
];

/// Under positional superko every capture that would recreate one of the
/// six positions of the cycle is forbidden, naming which; after the fifth
/// move White may take neither ko (G1 repeats the start, B9 the position
/// after move 4), so the cycle cannot close.
#[test]
fn triple_ko_is_broken_by_positional_superko() {
    let mut game = setup(Rules::ttakji(), TRIPLE_KO, Color::Black);
    // Forbidden points for the player to move after each move, with the
    // move whose position each would repeat.
    let expected: [&[(&str, usize)]; 5] = [
        &[("B1", 0)],
        &[("C9", 1)],
        &[("G1", 2)],
        &[("C1", 3)],
        &[("G1", 0), ("B9", 4)],
    ];
    assert_eq!(forbidden(&game), Vec::<String>::new());
    for (i, (point, takes)) in TRIPLE_KO_CYCLE[..5].iter().enumerate() {
        assert_eq!(play(&mut game, point), [*takes], "move {}", i + 1);
        let want: Vec<String> = expected[i].iter().map(|(p, _)| (*p).to_owned()).collect();
        assert_eq!(forbidden(&game), want, "after move {}", i + 1);
        for &(p, repeats) in expected[i] {
            refused(&mut game, p, superko(p, repeats));
        }
    }
    // White must play elsewhere; the kos stay as they are.
    play(&mut game, "E5");
    assert_eq!(forbidden(&game), Vec::<String>::new());
    assert_eq!(game.board().prisoners(Color::Black), 3);
    assert_eq!(game.board().prisoners(Color::White), 2);
}

/// Under simple ko only the immediate retake is forbidden, so the same
/// cycle goes all the way round, twice, back to the start position.
#[test]
fn triple_ko_cycles_back_to_the_start_under_simple_ko() {
    let mut game = setup(Rules::japanese(), TRIPLE_KO, Color::Black);
    let start = game.board().clone();
    for lap in 1..=2 {
        for (i, (point, takes)) in TRIPLE_KO_CYCLE.iter().enumerate() {
            assert_eq!(
                play(&mut game, point),
                [*takes],
                "lap {lap}, move {}",
                i + 1
            );
            // Only the point just captured on is forbidden.
            assert_eq!(forbidden(&game), [*takes], "lap {lap}, move {}", i + 1);
            refused(&mut game, takes, ko(takes));
        }
        assert_eq!(game.board(), &start, "lap {lap} returns to the start");
        assert_eq!(game.to_move(), Color::Black);
        assert_eq!(game.move_number(), 6 * lap);
        let lap = u32::try_from(lap).expect("small");
        assert_eq!(game.board().prisoners(Color::Black), 3 * lap);
        assert_eq!(game.board().prisoners(Color::White), 3 * lap);
    }
}

/// Sending two, returning one: Black C1 puts B1-C1 in atari, White A1 takes
/// both, and Black B1 takes A1 back, which recreates the start position
/// (with White to move).
const SENDING_TWO: &str = "
    . . . . .
    . . . . .
    X X . . .
    X O O O .
    . X . O .
";

#[test]
fn sending_two_returning_one_is_forbidden_by_positional_superko() {
    let mut game = setup(Rules::ttakji(), SENDING_TWO, Color::Black);
    assert_eq!(play(&mut game, "C1"), Vec::<String>::new(), "sending two");
    assert_eq!(play(&mut game, "A1"), ["B1", "C1"]);
    // No simple ko: two stones were taken. But B1 repeats move 0.
    assert_eq!(game.board().ko_point(), None);
    assert_eq!(forbidden(&game), ["B1"]);
    refused(&mut game, "B1", superko("B1", 0));
}

#[test]
fn sending_two_returning_one_is_allowed_under_simple_ko() {
    let mut game = setup(Rules::japanese(), SENDING_TWO, Color::Black);
    let start = game.board().clone();
    assert_eq!(play(&mut game, "C1"), Vec::<String>::new());
    assert_eq!(play(&mut game, "A1"), ["B1", "C1"]);
    assert_eq!(forbidden(&game), Vec::<String>::new());
    assert_eq!(play(&mut game, "B1"), ["A1"], "returning one");
    assert_eq!(
        game.board(),
        &start,
        "the start position again, White to move"
    );
    assert_eq!(game.to_move(), Color::White);
    assert_eq!(game.board().prisoners(Color::White), 2);
    assert_eq!(game.board().prisoners(Color::Black), 1);
}

// ----- seki, bent four, dead and living groups -----

/// Seki on the bottom edge: Black's seven stones (B1-F2) and White's D1
/// share the liberties C1 and E1 and have no other; whoever fills one is
/// captured. White's wall (rows 3-5) lives with eyes at B4 and F4; Black's
/// row 6 has row 7 as territory.
const SEKI: &str = "
    . . . . . . .
    X X X X X X X
    O O O O O O O
    O . O O O . O
    O O O O O O O
    O X X X X X O
    O X . O . X O
";

#[test]
fn seki_liberties_count_for_nobody_under_area_and_territory_scoring() {
    let board = Board::from_ascii(SEKI).expect("drawing");
    let size = board.size();
    let at = |s: &str| size.parse_point(s).expect("point");
    let index = |s: &str| {
        let p = at(s);
        usize::from(p.row()) * usize::from(size.get()) + usize::from(p.col())
    };

    // Neither side may usefully fill a shared liberty, and the engine knows it.
    let mut seki: Vec<String> = names(&seki_points(&board));
    seki.sort();
    let mut want: Vec<String> = ["B1", "B2", "C2", "D1", "D2", "E2", "F1", "F2"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    want.sort();
    assert_eq!(seki, want);

    // Nothing in the seki (nor anything else) is dead.
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), Vec::<String>::new());

    let area = area_score(&board, &verdict.dead, komi("7"));
    assert_eq!(area.ownership[index("C1")], Owner::Neutral);
    assert_eq!(area.ownership[index("E1")], Owner::Neutral);
    assert_eq!(
        area.ownership[index("D1")],
        Owner::White,
        "stones count under area"
    );
    assert_eq!(area.ownership[index("B1")], Owner::Black);
    // Black: 7 seki stones + row 6 + row 7. White: 23 wall stones, D1, 2 eyes.
    assert_eq!((area.black, area.white, area.neutral), (21, 26, 2));
    assert_eq!(area.result().to_string(), "W+12");

    let territory = territory_score(&board, &verdict.dead, baduk::ByColor::both(0), komi("6.5"));
    assert_eq!(territory.ownership[index("C1")], Owner::Neutral);
    assert_eq!(territory.ownership[index("E1")], Owner::Neutral);
    assert_eq!(
        territory.ownership[index("D1")],
        Owner::Neutral,
        "stones in seki are nobody's"
    );
    assert_eq!(territory.ownership[index("B2")], Owner::Neutral);
    assert_eq!(territory.ownership[index("B4")], Owner::White);
    assert_eq!(territory.ownership[index("A7")], Owner::Black);
    // Black: row 7. White: its two eyes. Neutral: the two shared liberties.
    assert_eq!(
        (territory.black, territory.white, territory.neutral),
        (7, 2, 2)
    );

    // Filling a shared liberty is legal but puts the filler in atari: the
    // other side then captures.
    let mut game = Game::from_setup(Rules::ttakji(), board, Color::Black);
    assert_eq!(play(&mut game, "C1"), Vec::<String>::new());
    assert_eq!(
        play(&mut game, "E1"),
        ["B1", "C1", "F1", "B2", "C2", "D2", "E2", "F2"],
        "White captures the eight stones"
    );
}

/// Bent four in the corner: White's eye space is A1, A2, A3, B1 with no
/// outside liberty. Black plays the 1-2 point A2, White answers at the 1-1
/// point A1, and Black takes it at B1: a ko, with White's whole group left
/// in atari at A3. White may not retake at once, so after White plays
/// elsewhere Black captures the group.
const BENT_FOUR: &str = "
    . . . . . . .
    . . . . . . .
    X X X . . . .
    O O X . . . .
    . O X X . . .
    . O O X . . .
    . . O X . . .
";

#[test]
fn bent_four_in_the_corner_plays_out_as_a_ko_black_wins() {
    for rules in [Rules::ttakji(), Rules::japanese()] {
        let mut game = setup(rules, BENT_FOUR, Color::Black);
        assert_eq!(play(&mut game, "A2"), Vec::<String>::new());
        assert_eq!(play(&mut game, "A1"), Vec::<String>::new());
        assert_eq!(play(&mut game, "B1"), ["A1"], "Black starts the ko");
        let group = game.board().vertex(pt(&game, "B2"));
        assert_eq!(
            game.board().liberties(group),
            [game.board().vertex(pt(&game, "A3"))]
        );
        assert_eq!(forbidden(&game), ["A1"]);
        let retake = if rules.ko == baduk::KoRule::Simple {
            ko("A1")
        } else {
            superko("A1", 2)
        };
        refused(&mut game, "A1", retake);
        play(&mut game, "G7"); // elsewhere; Black ignores it
        assert_eq!(
            play(&mut game, "A3"),
            ["C1", "B2", "C2", "B3", "A4", "B4"],
            "{:?}",
            rules.preset
        );
        assert_eq!(game.board().prisoners(Color::Black), 7);
        assert_eq!(game.board().stone_count(Color::White), 1);
        game.board().check_invariants().expect("invariants");
    }
}

/// Black's wall on rows 1-2 is one chain with three regions each made only
/// of its liberties: the eyes A1 and G1 and the region C1-E1, which holds a
/// lone White stone on D1. The wall is pass-alive, so D1 can never live and
/// is removed; White's line on row 6 is left alone.
#[test]
fn a_dead_stone_inside_pass_alive_territory_is_removed() {
    let board = Board::from_ascii(
        "
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        O O O O O O O O O
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        X X X X X X X X .
        . X . O . X . X .
        ",
    )
    .expect("drawing");
    let size = board.size();
    let at = |s: &str| size.parse_point(s).expect("point");

    let black_alive = baduk::life::pass_alive(&board, Color::Black);
    let white_alive = baduk::life::pass_alive(&board, Color::White);
    for p in size.all_points() {
        let v = board.vertex(p);
        assert_eq!(
            black_alive[v],
            board.get(p) == Stone::Black,
            "{p}: every Black stone, and nothing else, is pass-alive"
        );
        assert!(!white_alive[v], "{p}: no White stone is pass-alive");
    }

    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), ["D1"]);
    assert_eq!(verdict.pass_alive.len(), 11);
    assert!(verdict.pass_alive.contains(&at("B1")) && verdict.pass_alive.contains(&at("H2")));

    let score = area_score(&board, &verdict.dead, komi("7"));
    // Black: 11 stones + A1, G1 and C1-E1. White: row 6 and rows 7-9.
    // Rows 3-5 with J1, J2 touch both: neutral.
    assert_eq!((score.black, score.white, score.neutral), (16, 36, 29));
    assert_eq!(names(&score.dead), ["D1"]);

    // What a board marks as territory: the empty points and the dead
    // stone's, not the living stones, under either scoring.
    let territory =
        baduk::score::territory_score(&board, &verdict.dead, baduk::ByColor::both(0), komi("6.5"));
    for counted in [&score, &territory] {
        let marked = |color: Color| -> Vec<String> {
            counted
                .territory
                .iter()
                .filter(|&&(_, c)| c == color)
                .map(|(p, _)| p.to_string())
                .collect()
        };
        assert_eq!(marked(Color::Black), ["A1", "C1", "D1", "E1", "G1"]);
        assert_eq!(marked(Color::White).len(), 27, "rows 7-9");
        assert!(
            !marked(Color::White).contains(&"A6".to_owned()),
            "a living stone is no territory"
        );
    }
}

/// A Black group on the top edge has the eye D9-E9 and the point G9, which
/// White's H8 makes a false eye: White ataris H9 from J9 and Black must
/// fill G9. One eye is not life, so the group is removed (GNU Go 3.8 calls
/// it dead too); G9 alone once counted as room for a second eye and kept it.
#[test]
fn a_group_with_one_eye_and_a_false_eye_is_removed() {
    let board = Board::from_ascii(
        "
        O X X . . X . X .
        O O X X X X X O O
        O X X O O O O O O
        O O O . . . O X X
        . . O . . O X . X
        . . O O O X . X .
        . . . . O X . . .
        . . . . O X X . .
        . . . . O O X . .
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(
        names(&verdict.dead),
        [
            "B7", "C7", "C8", "D8", "E8", "F8", "G8", "B9", "C9", "F9", "H9"
        ]
    );
    assert!(verdict.doubtful.is_empty());
}

/// The end of a game GNU Go 3.8 played against itself (game seed 167,
/// Black level 2, White level 8). Black's group B5-B9 on the left is dead
/// for GNU Go, so White's lone stone A8 in its eye space is alive. The
/// playouts lose that Black group in a quarter of the lines, enough to
/// make it a candidate but too few for an unclear fight, and lose A8 in
/// most; but in most lines where the Black group dies, A8 lives. Its fate
/// is the Black group's, so A8 stays on the board while the Black group
/// and G2 are removed, as GNU Go has it.
#[test]
fn a_stone_in_the_eye_space_of_a_group_that_may_die_is_kept() {
    let board = Board::from_ascii(
        "
        . X O O O X . . .
        O . X O X X X . .
        . X X O X O X . .
        . X O O O O X . .
        . X . O O X . . .
        . . . O X X X X .
        . O . . O O O X X
        . . O . . O X O O
        . . . . . . . . .
        ",
    )
    .expect("drawing");
    let size = board.size();
    let at = |s: &str| board.vertex(size.parse_point(s).expect("point"));

    // The pattern: A8 is lost in most lines, the Black group around it in
    // fewer than 30% of the lines with either side first.
    let losses = baduk::life::playout_losses(&board);
    let half = baduk::life::PLAYOUTS_PER_SIDE / 2;
    let shaky = baduk::life::PLAYOUTS_PER_SIDE * 3 / 10;
    assert!(losses.black_first[at("A8")] >= half && losses.white_first[at("A8")] >= half);
    for s in ["B5", "B6", "B7", "C7", "C8", "B9"] {
        assert!(
            losses.black_first[at(s)] < shaky && losses.white_first[at(s)] < shaky,
            "{s} is lost in fewer than 30% of the lines"
        );
    }

    let verdict = baduk::analyse(&board);
    assert_eq!(
        names(&verdict.dead),
        ["G2", "B5", "B6", "B7", "C7", "C8", "B9"]
    );
    let kept: Vec<_> = verdict
        .doubtful
        .iter()
        .filter(|g| names(&g.stones) == ["A8"])
        .collect();
    assert_eq!(
        kept.len(),
        1,
        "A8 is kept as doubtful: {:?}",
        verdict.doubtful
    );
    assert_eq!(kept[0].reason, baduk::life::Doubt::UnclearFight);

    // The count "if the game ended now" names the same group as kept only
    // because it is not sure, so a player knows to capture it first.
    let game = baduk::Game::from_setup(Rules::ttakji(), board.clone(), Color::Black);
    let preview = game.preview();
    assert_eq!(preview.doubtful, verdict.doubtful);
    assert_eq!(preview.score, game.score_preview());
}

/// The end of a game GNU Go 3.8 played against itself (game seed 140,
/// Black level 1, White level 8). Black's group D4-H1 in the lower right
/// has White's two stones E1 and F1 against it, with fewer liberties than
/// it has, and the playouts take them in a fifth of the lines where Black
/// moves first: a race Black might win. But White's stones shut the group
/// in all round, and with E1 and F1 gone it would still have no room for
/// two eyes and no friend to join, so winning that race would not save it.
/// It is removed, with A2 and B2 inside White's wall, as GNU Go has it.
#[test]
fn taking_stones_that_do_not_shut_a_group_in_does_not_save_it() {
    let board = Board::from_ascii(
        "
        . . . X X O O . .
        . . . X O O O . .
        X X X X X O O O .
        X . X X O O X O .
        X X O O O . X X O
        X O O X X X . O .
        O O . . . . X O .
        X X O . X . X X O
        . . . . O O . X .
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(
        names(&verdict.dead),
        [
            "H1", "A2", "B2", "E2", "G2", "H2", "G3", "D4", "E4", "F4", "G5", "H5", "G6"
        ]
    );
    assert!(
        verdict
            .doubtful
            .iter()
            .all(|g| g.reason != baduk::life::Doubt::Race),
        "no race keeps a group: {:?}",
        verdict.doubtful
    );
}

/// The end of a game GNU Go 3.8 played against itself (game seed 1039,
/// Black level 4, White level 5). Black's group B4-B7 on the left edge
/// can take White's A7, but its eyes at A4 and B6 can be made false, and
/// GNU Go calls it dead. Playouts that never fill an eye shape kept it
/// alive in a third of the lines, some of them ending in a seki that real
/// play would not leave, because White could close in on its last
/// liberties only through a false eye of its own. The dead-stone policy
/// fills a false eye that joins two of its chains: the group is lost in
/// five lines of six and removed, and A7 stays.
#[test]
fn a_group_whose_eyes_can_be_made_false_is_removed() {
    let board = Board::from_ascii(
        "
        . . . . O O X X .
        . . O . O X X . X
        O X . O . O X X O
        X . X O O . O X O
        X X O O O O O O O
        . X O X X X O X O
        O O O X . X X X O
        X X X . X X O O O
        . . . . . X X X O
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), ["B4", "A5", "B5", "A6", "C6", "B7"]);
}

/// A Black group with two true eyes (C4, C6) sits in the middle of White's
/// area, wrapped directly by White's wall. It is alive (pass-alive, even)
/// and nothing is removed; White's area is everything else.
#[test]
fn a_living_group_inside_the_opponents_area_is_kept() {
    let board = Board::from_ascii(
        "
        . . . . . . . . .
        O O O O O . . . .
        O X X X O . . . .
        O X . X O . . . .
        O X X X O . . . .
        O X . X O . . . .
        O X X X O . . . .
        O O O O O . . . .
        . . . . . . . . .
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), Vec::<String>::new());
    assert_eq!(
        verdict.pass_alive.len(),
        13,
        "the Black group is pass-alive"
    );
    let score = area_score(&board, &verdict.dead, komi("7"));
    assert_eq!((score.black, score.white, score.neutral), (15, 66, 0));
}

/// A game GNU Go 3.8 played against itself and stopped early by two passes
/// after 22 moves (game seed 6060, Black level 3, White level 7), the top
/// side still open. Black's C7 and F7-F8 stand in the open area above
/// White's stones, and White's F3 and G5-G6 in Black's: GNU Go calls
/// Black's groups alive and White's F3, G5 and G6 dead. The playouts lose
/// F7-F8 in two lines of five, and neither had a friend two steps away,
/// so both were once removed. But the open area around them runs down the
/// left side to Black's D3-F4, which stay on the board, so neither is
/// shut in: the count keeps them, as it keeps White's stones in the open
/// area below, and says why.
#[test]
fn groups_with_an_open_side_in_a_game_ended_early_are_kept() {
    let board = Board::from_ascii(
        "
        . . . . . . . . .
        . . . . . X . . .
        . . X . . X O O .
        . . . . . O X . .
        . . . O O O X O .
        . . . O X X O O .
        . . . X X O X X .
        . . . . . . . . .
        . . . . . . . . .
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), Vec::<String>::new());
    let kept: Vec<_> = verdict
        .doubtful
        .iter()
        .map(|g| (names(&g.stones), g.reason))
        .collect();
    for group in [&["C7"][..], &["F7", "F8"]] {
        let group: Vec<String> = group.iter().map(|s| (*s).to_owned()).collect();
        assert!(
            kept.contains(&(group.clone(), baduk::life::Doubt::Escape)),
            "{group:?} is kept, open to a friend: {kept:?}"
        );
    }
}

/// A game GNU Go stopped early (`gnugo-early-6001/035.sgf`, 29 moves):
/// both sides have loose stones across the board and nothing is settled.
/// Each White group is shut in by Black stones on every side it can reach,
/// and every other White stone it reaches was to be removed too, so the
/// count once took all fourteen off and gave Black the whole board, where
/// GNU Go calls only H2 dead. A count that leaves a player no stone on the
/// board says the game was played out, and this one was not: every White
/// group stays, as doubtful (its open room keeps some first, on a board
/// this undecided).
#[test]
fn a_count_never_takes_every_stone_of_a_player_off_the_board() {
    let board = Board::from_ascii(
        "
        . . . . . . . . .
        . . . . . . X . .
        . . X X X . . . .
        . . . O . O O O .
        . . X . O O X O .
        . X O O . . X X .
        . . X . O . X . .
        . X O O . O X O X
        . . . . . . . X .
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), Vec::<String>::new());
    let kept: Vec<String> = verdict
        .doubtful
        .iter()
        .filter(|g| {
            [baduk::life::Doubt::UnclearFight, baduk::life::Doubt::Escape].contains(&g.reason)
        })
        .flat_map(|g| names(&g.stones))
        .collect();
    for stone in ["C2", "D6", "E3", "H2", "H6"] {
        assert!(
            kept.iter().any(|k| k == stone),
            "{stone} is kept as doubtful: {kept:?}"
        );
    }
}

// ----- the end of the game, undo -----

/// Two passes in a row end the game; then nothing more may be played, and
/// undoing the second pass reopens it.
#[test]
fn two_passes_end_the_game_and_undo_reopens_it() {
    let mut game = Game::new(Rules::ttakji());
    let d5 = pt(&game, "D5");
    let first = game.play(Move::pass(Color::Black)).expect("pass");
    assert_eq!(first.ended, None);
    assert_eq!(game.passes_in_a_row(), 1);
    let second = game.play(Move::pass(Color::White)).expect("pass");
    assert_eq!(second.ended, Some(EndReason::TwoPasses));
    assert_eq!(second.move_number, 2);
    assert_eq!(game.end(), Some(EndReason::TwoPasses));
    assert!(game.is_over());

    assert_eq!(
        game.play(Move::play(Color::Black, d5)),
        Err(IllegalMove::GameOver)
    );
    assert_eq!(
        game.play_as(Move::play(Color::White, d5)),
        Err(IllegalMove::GameOver)
    );
    assert_eq!(
        game.play(Move::pass(Color::Black)),
        Err(IllegalMove::GameOver)
    );
    assert_eq!(game.check(Color::Black, d5), Err(IllegalMove::GameOver));
    assert!(game.legal_points(Color::Black).is_empty());
    assert!(game.ko_forbidden_points().is_empty());
    assert!(!game.is_legal(Color::Black, baduk::Action::Pass));

    assert_eq!(game.undo(), Ok(Move::pass(Color::White)));
    assert_eq!(game.end(), None);
    assert_eq!(game.to_move(), Color::White);
    assert_eq!(game.passes_in_a_row(), 1);
    assert_eq!(game.move_number(), 1);

    // A stone between passes starts the count again.
    play(&mut game, "D5");
    assert_eq!(game.passes_in_a_row(), 0);
    assert_eq!(
        game.play(Move::pass(Color::Black)).expect("pass").ended,
        None
    );
    assert!(!game.is_over());

    // A game ended by resignation cannot be taken back.
    game.resign(Color::White).expect("resign");
    assert_eq!(
        game.undo(),
        Err(UndoError::Ended(EndReason::Resignation {
            winner: Color::Black
        }))
    );
    assert_eq!(
        game.play(Move::pass(Color::White)),
        Err(IllegalMove::GameOver)
    );
}

/// The move cap counts every move, passes too, and ends the game as counted.
#[test]
fn the_move_cap_ends_the_game() {
    let mut game = Game::new(Rules {
        move_cap: Some(4),
        ..Rules::ttakji()
    });
    play(&mut game, "D5");
    play(&mut game, "E5");
    assert_eq!(
        game.play(Move::pass(Color::Black)).expect("pass").ended,
        None
    );
    let n = pt(&game, "C3");
    let last = game
        .play(Move::play(Color::White, n))
        .expect("the fourth move");
    assert_eq!(last.ended, Some(EndReason::MoveCap));
    assert_eq!(game.end(), Some(EndReason::MoveCap));
    assert!(EndReason::MoveCap.is_counted());
    assert_eq!(
        game.play(Move::pass(Color::Black)),
        Err(IllegalMove::GameOver)
    );
    assert_eq!(game.undo(), Ok(Move::play(Color::White, n)));
    assert_eq!(game.end(), None);
    assert_eq!(game.to_move(), Color::White);
}

/// Undo after a capture restores the exact earlier state: stones, prisoners,
/// the ko point and what it forbids, the move number and whose turn it is.
#[test]
fn play_goes_back_on_after_two_passes_and_two_more_end_it_again() {
    let mut game = Game::new(Rules::japanese());
    assert_eq!(game.resume_play(), Err(ResumeError::NotEnded));
    play(&mut game, "E5");
    game.play(Move::pass(Color::White)).expect("pass");
    game.play(Move::pass(Color::Black)).expect("pass");
    assert_eq!(game.end(), Some(EndReason::TwoPasses));
    // The players do not agree on the dead stones: back to play.
    game.resume_play().expect("back to play");
    assert_eq!(game.end(), None);
    assert_eq!(
        game.to_move(),
        Color::White,
        "the player after the second pass"
    );
    assert_eq!(game.passes_in_a_row(), 0, "the passes before count no more");
    assert_eq!(game.resumed_after(), [3]);
    // One pass does not end it; a stone, then two passes, do.
    game.play(Move::pass(Color::White)).expect("pass");
    assert_eq!(game.end(), None);
    play(&mut game, "C3");
    game.play(Move::pass(Color::White)).expect("pass");
    let second = game.play(Move::pass(Color::Black)).expect("pass");
    assert_eq!(second.ended, Some(EndReason::TwoPasses));

    // Undo replays the game with play going on where it went on.
    game.undo().expect("undo the last pass");
    assert_eq!(game.end(), None);
    assert_eq!(game.resumed_after(), [3]);
    for _ in 0..3 {
        game.undo().expect("undo");
    }
    assert_eq!(game.move_number(), 3);
    assert_eq!(game.end(), None, "still back in play after move 3");
    game.undo().expect("undo the second pass");
    assert_eq!(
        game.resumed_after(),
        Vec::<u32>::new(),
        "before it went back on"
    );
    assert_eq!(game.end(), None);

    let mut resigned = Game::new(Rules::japanese());
    let reason = resigned.resign(Color::Black).expect("resign");
    assert_eq!(resigned.resume_play(), Err(ResumeError::Ended(reason)));
}

#[test]
fn undo_restores_the_exact_state_before_a_capture() {
    let mut game = setup(Rules::ttakji(), KO_POSITION, Color::Black);
    play(&mut game, "E5");
    play(&mut game, "E4");
    let before_capture = snapshot(&game);
    assert_eq!(play(&mut game, "C3"), ["B3"]);
    let after_capture = snapshot(&game);
    assert_eq!(after_capture.ko_forbidden, [pt(&game, "B3")]);
    assert_eq!(after_capture.prisoners, baduk::ByColor::new(1, 0));
    play(&mut game, "A1");
    assert_eq!(forbidden(&game), Vec::<String>::new());

    assert_eq!(game.undo(), Ok(Move::play(Color::White, pt(&game, "A1"))));
    assert_eq!(snapshot(&game), after_capture, "undo of a quiet move");
    refused(&mut game, "B3", superko("B3", 2));
    assert_eq!(game.undo(), Ok(Move::play(Color::Black, pt(&game, "C3"))));
    assert_eq!(snapshot(&game), before_capture, "undo of the capture");
    assert_eq!(stone(&game, "B3"), Stone::White);

    // The capture can be played again, with the same result.
    assert_eq!(play(&mut game, "C3"), ["B3"]);
    assert_eq!(snapshot(&game), after_capture);

    // And undo all the way to the start, then no further.
    for _ in 0..3 {
        game.undo().expect("undo");
    }
    assert_eq!(game.board(), game.setup());
    assert_eq!(game.undo(), Err(UndoError::NothingToUndo));
}

// ----- komi and results -----

/// A 9x9 board split between Black (A-D, E1-E8, D9: 44 points) and White
/// (E9, F-J: 37 points).
const SPLIT_44_37: &str = "
    . . . X O O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
";

fn score(black: u32, white: u32, komi_text: &str) -> Score {
    Score {
        scoring: Scoring::Area,
        komi: komi(komi_text),
        black,
        white,
        neutral: 0,
        dead: Vec::new(),
        ownership: Vec::new(),
        territory: Vec::new(),
    }
}

#[test]
fn komi_decides_jigo_and_half_point_results() {
    let board = Board::from_ascii(SPLIT_44_37).expect("drawing");
    let counted = area_score(&board, &[], komi("7"));
    assert_eq!((counted.black, counted.white, counted.neutral), (44, 37, 0));
    let draw = GameResult::Counted {
        winner: None,
        margin_half: 0,
    };
    assert_eq!(counted.result(), draw, "44 against 37 + 7 is jigo");
    assert_eq!(counted.result().to_string(), "0");
    assert_eq!(counted.result().winner(), None);
    assert_eq!(counted.preview(), "Black 44 – White 44 (komi 7)");

    let half = area_score(&board, &[], komi("7.5"));
    assert_eq!(
        half.result(),
        GameResult::Counted {
            winner: Some(Color::White),
            margin_half: 1
        }
    );
    assert_eq!(half.result().to_string(), "W+0.5");
    assert_eq!(half.preview(), "Black 44 – White 44.5 (komi 7.5)");
    let less = area_score(&board, &[], komi("6.5"));
    assert_eq!(less.result().to_string(), "B+0.5");
    assert_eq!(less.result().winner(), Some(Color::Black));

    // Played to the end under Ttakji rules (komi 7), the game is a draw.
    let mut game = Game::from_setup(Rules::ttakji(), board, Color::Black);
    assert_eq!(game.result(), None, "no result while the game goes on");
    game.play(Move::pass(Color::Black)).expect("pass");
    game.play(Move::pass(Color::White)).expect("pass");
    assert_eq!(game.dead_stones(), Vec::<Point>::new());
    assert_eq!(game.result(), Some(draw));
}

#[test]
fn score_preview_reads_as_players_write_it() {
    assert_eq!(score(41, 40, "7").preview(), "Black 41 – White 47 (komi 7)");
    assert_eq!(score(41, 40, "7").result().to_string(), "W+6");
    assert_eq!(
        score(41, 40, "6.5").preview(),
        "Black 41 – White 46.5 (komi 6.5)"
    );
    assert_eq!(score(41, 40, "6.5").result().to_string(), "W+5.5");
    assert_eq!(score(47, 40, "6.5").result().to_string(), "B+0.5");
    assert_eq!(score(40, 40, "0").result().to_string(), "0");
    assert_eq!(
        score(40, 41, "-0.5").preview(),
        "Black 40 – White 40.5 (komi -0.5)"
    );
}

/// The end of a game GNU Go 3.8 played against itself (game seed 4044,
/// Black level 5, White level 1). Black's H1 and H2 sit in White's corner
/// in atari, and White's group G1-J2 lives by taking them at J1, which
/// leaves it room for an eye there and the fight for a second at J3-H4:
/// GNU Go calls the White group alive. The playouts lose it in seven
/// lines of ten, but Black's two stones are taken in a fifth of the lines
/// and the group survives in most of those, and with them gone it has
/// room: it is kept, as a group with eyes to make.
#[test]
fn a_chain_in_atari_inside_a_group_is_its_eye_to_make() {
    let board = Board::from_ascii(
        "
        . O . . O O X . .
        . . O . O X X . .
        . . O O X . . X .
        . . O X X X . . .
        . . . O X . . O X
        . . O O X . . . X
        . . . O X . O O .
        O O O X . X O X O
        O X X X . . O X .
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), Vec::<String>::new());
    assert_kept_for_eyes(&verdict, &["G1", "G2", "J2", "G3", "H3", "H5"]);
}

/// The end of a game GNU Go 3.8 played against itself (game seed 4135,
/// Black level 9, White level 4). White's group C8-H9 at the top holds
/// Black's G9 inside, with two liberties, and can take Black's J8 for a
/// second eye: GNU Go calls it alive and G9 dead.
#[test]
fn a_chain_with_two_liberties_inside_a_group_is_its_eye_to_make() {
    let board = Board::from_ascii(
        "
        . . . O . . X O .
        . . O X O O . O X
        . . X X X O O . .
        . . . X X O X X .
        X X X X X X . . .
        X O O X O O X X .
        O O X O O X O X X
        . O X . O . O X X
        . O . . . . O O X
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), ["C2", "C3", "F3"]);
    assert_kept_for_eyes(
        &verdict,
        &["F6", "F7", "G7", "C8", "E8", "F8", "H8", "D9", "H9"],
    );
}

/// The end of a game GNU Go 3.8 played against itself (game seed 4166,
/// both at level 2). Black's group F1-H2 has one eye at G1 and shares J1
/// with White's lone J2; neither can fill J1 at once without going into
/// atari, which looks like seki. But J2 has room to come out at J3 first,
/// and then fills J1 and takes the group: GNU Go calls it dead, and so
/// does the count.
#[test]
fn a_shared_liberty_the_enemy_can_approach_from_outside_is_no_seki() {
    let board = Board::from_ascii(
        "
        . . . X O O O . .
        . . X . X X O O .
        . . . X . X X O .
        . . . . . X O . .
        . . . X X O . . .
        . . . X O O O O .
        X X X O . O X O .
        X O O . O X X X O
        O O . O O X . X .
        ",
    )
    .expect("drawing");
    let verdict = baduk::analyse(&board);
    assert_eq!(names(&verdict.dead), ["F1", "H1", "F2", "G2", "H2", "G3"]);
    assert!(verdict.doubtful.is_empty(), "{:?}", verdict.doubtful);
}

/// `stones` are one of the groups the count keeps as doubtful, for the
/// eyes it may make.
fn assert_kept_for_eyes(verdict: &baduk::LifeAndDeath, stones: &[&str]) {
    let kept: Vec<_> = verdict
        .doubtful
        .iter()
        .map(|g| (names(&g.stones), g.reason))
        .collect();
    let group: Vec<String> = stones.iter().map(|s| (*s).to_owned()).collect();
    assert!(
        kept.contains(&(group, baduk::life::Doubt::Eyes)),
        "{stones:?} is kept for its eyes: {kept:?}"
    );
}
