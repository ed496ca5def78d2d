//! Properties of random games on boards of 2, 3, 5, 9 and 13 lines, under
//! every preset: the board's bookkeeping stays consistent, no stone appears
//! or disappears unaccounted for, undo gives back exactly the earlier state,
//! `check` agrees with `play_as`, and a filled board is counted in full.
//!
//! The cases come from a fixed seed so a run is reproducible, and nothing is
//! written to disk when one fails (the shrunk failing input is printed). For
//! a longer hunt set `PROPTEST_CASES` and `PROPTEST_RNG_SEED`, e.g.
//! `PROPTEST_CASES=4000 PROPTEST_RNG_SEED=999 cargo test -p baduk --test properties`.

use baduk::score::area_score;
use baduk::{
    Board, BoardSize, Color, Game, IllegalMove, KoRule, Move, Owner, Point, Preset, Rules,
    SplitMix64, Stone,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

const SIZES: [u8; 5] = [2, 3, 5, 9, 13];

/// `cases` cases from a fixed seed, unless `PROPTEST_CASES` or
/// `PROPTEST_RNG_SEED` say otherwise (for a longer hunt); no regression
/// files are written.
fn config(cases: u32) -> Config {
    let from_env = Config::default();
    Config {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            from_env.cases
        } else {
            cases
        },
        rng_seed: if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            from_env.rng_seed
        } else {
            RngSeed::Fixed(0x7474_616b_6a69_2d70)
        },
        failure_persistence: None,
        ..from_env
    }
}

/// The rules of case `preset`: each named preset; then Ttakji's with a move
/// cap of one move a point, which short games reach; then Chinese rules
/// with situational superko instead of positional.
fn rules_for(size: u8, preset: usize) -> Rules {
    let size = BoardSize::new(u32::from(size)).expect("a supported size");
    match Preset::ALL.get(preset) {
        Some(&p) => Rules::preset(p).with_board_size(size),
        None if preset == Preset::ALL.len() => Rules {
            move_cap: Some(size.points() as u32),
            ..Rules::ttakji().with_board_size(size)
        },
        None => Rules {
            ko: KoRule::SituationalSuperko,
            ..Rules::chinese().with_board_size(size)
        },
    }
}

const RULESETS: usize = Preset::ALL.len() + 2;

/// One step of a random game: a raw number that picks the point, one from
/// 0 to 99 that decides passes (4%) and moves out of turn (5%), and one
/// from 0 to 99 that decides where to look (see [`pick`]).
type Step = (u16, u8, u8);

/// A point chosen by `raw` from one of three lists, by `kind`: 40% from the
/// empty points next to a chain with at most two liberties (where captures,
/// kos and suicides happen), 55% from all empty points, 5% from every
/// point, occupied or not. An empty list falls back to the next.
fn pick(board: &Board, raw: u16, kind: u8) -> Point {
    let size = board.size();
    let all: Vec<Point> = size.all_points().collect();
    let empty: Vec<Point> = all
        .iter()
        .copied()
        .filter(|&p| board.get(p) == Stone::Empty)
        .collect();
    let hot: Vec<Point> = empty
        .iter()
        .copied()
        .filter(|&p| {
            board
                .neighbours(board.vertex(p))
                .iter()
                .any(|&n| board.color_at(n).is_some() && board.liberty_count_up_to(n, 3) <= 2)
        })
        .collect();
    let from = if kind < 40 && !hot.is_empty() {
        &hot
    } else if kind < 95 && !empty.is_empty() {
        &empty
    } else {
        &all
    };
    from[usize::from(raw) % from.len()]
}

/// What the step asks for on this game: who moves, and what.
fn decode(game: &Game, (raw, kind, place): Step) -> Move {
    let color = if (4..9).contains(&kind) {
        game.to_move().opponent()
    } else {
        game.to_move()
    };
    if kind < 4 {
        Move::pass(color)
    } else {
        Move::play(color, pick(game.board(), raw, place))
    }
}

/// Everything that must be the same after an undo as before the move.
#[derive(Debug, PartialEq)]
struct State {
    board: Board,
    ascii: String,
    hash: u64,
    prisoners: baduk::ByColor<u32>,
    ko_point: Option<usize>,
    move_number: usize,
    moves: Vec<Move>,
    to_move: Color,
    passes_in_a_row: u32,
    ended: bool,
    ko_forbidden: Vec<Point>,
    legal_black: Vec<Point>,
    legal_white: Vec<Point>,
}

fn state(game: &Game) -> State {
    let b = game.board();
    State {
        board: b.clone(),
        ascii: b.to_ascii(),
        hash: b.hash(),
        prisoners: baduk::ByColor::from_fn(|c| b.prisoners(c)),
        ko_point: b.ko_point(),
        move_number: game.move_number(),
        moves: game.moves().to_vec(),
        to_move: game.to_move(),
        passes_in_a_row: game.passes_in_a_row(),
        ended: game.is_over(),
        ko_forbidden: game.ko_forbidden_points(),
        legal_black: game.legal_points(Color::Black),
        legal_white: game.legal_points(Color::White),
    }
}

/// The same game played again from its setup, move by move.
fn replayed(game: &Game, moves: &[Move]) -> Game {
    let mut again = Game::from_setup(*game.rules(), game.setup().clone(), game.setup_to_move());
    for &mv in moves {
        again
            .play_as(mv)
            .unwrap_or_else(|e| panic!("replaying {mv}: {e}"));
    }
    again
}

/// Stones of its own colour the mover loses when `mv` is suicide: the new
/// stone plus every own chain it touches, counted on the board before.
fn suicide_loss(before: &Board, mv: Move) -> u32 {
    let baduk::Action::Play(p) = mv.action else {
        return 0;
    };
    let v = before.vertex(p);
    if !before.is_suicide(v, mv.color) {
        return 0;
    }
    let mut heads = Vec::new();
    let mut lost = 1;
    for n in before.neighbours(v) {
        if before.color_at(n) == Some(mv.color) {
            let h = before.chain_head(n);
            if !heads.contains(&h) {
                heads.push(h);
                lost += before.chain_len(h) as u32;
            }
        }
    }
    lost
}

/// The verdict on `mv` worked out from first principles: the board after
/// the stone is put down (captures and suicide done by `Board::play` on a
/// copy), compared with every earlier position of the game. `history[i]` is
/// the position after move `i` with the player then to move.
fn expected_verdict(game: &Game, history: &[(Board, Color)], mv: Move) -> Result<(), IllegalMove> {
    let baduk::Action::Play(point) = mv.action else {
        return Ok(());
    };
    let board = game.board();
    if board.get(point) != Stone::Empty {
        return Err(IllegalMove::Occupied { point });
    }
    let mut after = board.clone();
    after.play(board.vertex(point), mv.color);
    let suicide = after.get(point) == Stone::Empty;
    if suicide && !game.rules().suicide_allowed {
        return Err(IllegalMove::Suicide { point });
    }
    let next = mv.color.opponent();
    match game.rules().ko {
        KoRule::Simple => {
            if history.len() >= 2 && history[history.len() - 2].0 == after {
                return Err(IllegalMove::Ko { point });
            }
        }
        KoRule::PositionalSuperko => {
            if let Some(i) = history.iter().position(|(b, _)| *b == after) {
                return Err(IllegalMove::Superko {
                    point,
                    repeats_move: i,
                });
            }
        }
        KoRule::SituationalSuperko => {
            if let Some(i) = history.iter().position(|(b, c)| *b == after && *c == next) {
                return Err(IllegalMove::Superko {
                    point,
                    repeats_move: i,
                });
            }
        }
    }
    Ok(())
}

/// The points where `color` may play that are not an eye shape of its own.
fn filling_points(game: &Game, color: Color) -> Vec<Point> {
    let board = game.board();
    game.legal_points(color)
        .into_iter()
        .filter(|&p| !board.is_eye_shape(board.vertex(p), color))
        .collect()
}

/// Plays random legal stones for whoever is to move, never into a
/// single-point eye of the mover's own (which would only give stones away),
/// passing when there is no such move, until neither side has one or a
/// generous limit is reached. Returns the game and whether it got stuck.
fn fill_board(board: &Board, to_move: Color, rules: Rules, seed: u64) -> (Game, bool) {
    let mut game = Game::from_setup(
        Rules {
            move_cap: None,
            ..rules
        },
        board.clone(),
        to_move,
    );
    let mut rng = SplitMix64::new(seed);
    let limit = 4 * board.size().points() + 20;
    let mut stuck = 0;
    for _ in 0..limit {
        let color = game.to_move();
        let fills = filling_points(&game, color);
        if fills.is_empty() {
            stuck += 1;
            if stuck == 2 {
                return (game, true);
            }
            game.play(Move::pass(color)).expect("a pass is legal");
            continue;
        }
        stuck = 0;
        let p = fills[rng.below(fills.len())];
        game.play(Move::play(color, p))
            .unwrap_or_else(|e| panic!("{p} was listed legal for {color}: {e}"));
        game.board()
            .check_invariants()
            .expect("invariants while filling");
    }
    (game, false)
}

fn run_game(size: u8, preset: usize, steps: &[Step], seed: u64) {
    let rules = rules_for(size, preset);
    let mut game = Game::new(rules);
    // Stones placed and lost by each colour, and the same before each move
    // (to take back with undo).
    let mut placed = baduk::ByColor::both(0u32);
    let mut lost = baduk::ByColor::both(0u32);
    let mut counts_before: Vec<(baduk::ByColor<u32>, baduk::ByColor<u32>)> = Vec::new();
    let mut states_before: Vec<State> = Vec::new();
    let mut history: Vec<(Board, Color)> = vec![(game.board().clone(), game.to_move())];

    for &step in steps {
        if game.is_over() {
            // A counted end (two passes, the move cap) can be taken back:
            // reopen the game and go on.
            let last = game.last_move().expect("a game ends on a move");
            assert_eq!(game.undo(), Ok(last));
            assert!(!game.is_over(), "undo of {last} did not reopen the game");
            let expected = states_before.pop().expect("a state before the last move");
            assert_eq!(
                state(&game),
                expected,
                "undo of the move that ended the game"
            );
            (placed, lost) = counts_before.pop().expect("counts before the last move");
            history.pop();
            continue;
        }
        let mv = decode(&game, step);
        let before = game.board().clone();
        let before_state = state(&game);
        let check = match mv.action {
            baduk::Action::Play(p) => game.check(mv.color, p),
            baduk::Action::Pass => Ok(()),
        };
        assert_eq!(
            check,
            expected_verdict(&game, &history, mv),
            "the rules on {mv}\n{before:?}"
        );
        let own_loss = suicide_loss(&before, mv);
        let outcome = match game.play_as(mv) {
            Ok(o) => o,
            Err(e) => {
                assert_eq!(check, Err(e.clone()), "check and play_as disagree on {mv}");
                assert_eq!(
                    state(&game),
                    before_state,
                    "a refused move ({mv}: {e}) changed the game"
                );
                continue;
            }
        };
        assert_eq!(check, Ok(()), "check refused {mv}, which play_as accepted");
        assert_eq!(outcome.move_number, game.move_number());
        counts_before.push((placed, lost));
        history.push((game.board().clone(), game.to_move()));

        // Bookkeeping: chains, liberties, the empty list and the hash.
        let board = game.board();
        board
            .check_invariants()
            .unwrap_or_else(|e| panic!("after {mv}: {e}\n{board:?}"));
        assert_eq!(board.hash(), board.recomputed_hash());

        // Stones: placed minus captured, per colour.
        if let baduk::Action::Play(p) = mv.action {
            placed[mv.color] += 1;
            // The stones this move took off: the opponent's, or for a
            // suicide the mover's own chain (counted below from the board).
            let mut taken = 0;
            for &c in &outcome.captured {
                assert_eq!(board.get(c), Stone::Empty, "{c} captured but still there");
                if before.get(c) == Stone::from(Some(mv.color.opponent())) {
                    taken += 1;
                } else {
                    assert!(
                        own_loss > 0,
                        "{c} listed as captured by {mv}, which is no suicide"
                    );
                    assert_eq!(
                        before.get(c) != Stone::from(Some(mv.color)),
                        c == p,
                        "{c} was not the mover's"
                    );
                }
            }
            lost[mv.color.opponent()] += taken;
            lost[mv.color] += own_loss;
            if own_loss > 0 {
                assert_eq!(
                    outcome.captured.len() as u32,
                    own_loss,
                    "a suicide lists the mover's chain"
                );
                assert!(
                    rules.suicide_allowed,
                    "suicide {mv} accepted under {rules:?}"
                );
                assert_eq!(board.get(p), Stone::Empty, "the suicide stone is taken off");
            } else {
                assert_eq!(board.get(p), Stone::from(Some(mv.color)));
            }
        } else {
            assert!(outcome.captured.is_empty());
            assert_eq!(board, &before, "a pass changed the board");
        }
        for c in [Color::Black, Color::White] {
            let expected = placed[c] - lost[c];
            assert_eq!(
                board.stone_count(c) as u32,
                expected,
                "{c} stones after {mv}\n{board:?}"
            );
            // Prisoners: the other colour's stones that left the board.
            assert_eq!(board.prisoners(c), lost[c.opponent()], "{c} prisoners");
        }

        // Undo gives back the state before the move, which is also the
        // game rebuilt by replaying every move but the last.
        let mut undone = game.clone();
        assert_eq!(undone.undo(), Ok(mv));
        let undone_state = state(&undone);
        assert_eq!(undone_state, before_state, "undo of {mv}");
        let moves = game.moves();
        assert_eq!(
            state(&replayed(&game, &moves[..moves.len() - 1])),
            undone_state
        );
        states_before.push(before_state);
    }

    // The whole game replays to the same state.
    assert_eq!(state(&replayed(&game, game.moves())), state(&game));

    // Fill the board as far as legal moves go; every point is counted once.
    let (filled, stuck) = fill_board(game.board(), game.to_move(), rules, seed);
    let board = filled.board();
    if stuck {
        // For the player to move, every empty point is an own eye or
        // illegal. (Not necessarily for the other, who passed: a ko it could
        // not retake at its turn may be open to it now.)
        let c = filled.to_move();
        for &e in board.empty_vertices() {
            let v = usize::from(e);
            let p = board.point(v);
            assert!(
                board.is_eye_shape(v, c) || filled.check(c, p).is_err(),
                "{c} could still fill {p}\n{board:?}"
            );
        }
    }
    let points = board.size().points() as u32;
    let score = area_score(board, &[], rules.komi);
    assert_eq!(
        score.black + score.white + score.neutral,
        points,
        "\n{board:?}"
    );
    let owned = |o: Owner| score.ownership.iter().filter(|&&x| x == o).count() as u32;
    assert_eq!(
        (
            owned(Owner::Black),
            owned(Owner::White),
            owned(Owner::Neutral)
        ),
        (score.black, score.white, score.neutral)
    );
    for p in board.size().all_points() {
        let i = usize::from(p.row()) * usize::from(board.size().get()) + usize::from(p.col());
        match board.get(p) {
            Stone::Black => assert_eq!(score.ownership[i], Owner::Black),
            Stone::White => assert_eq!(score.ownership[i], Owner::White),
            Stone::Empty => {}
        }
    }
}

fn game_input() -> impl Strategy<Value = (u8, usize, Vec<Step>, u64)> {
    (
        prop::sample::select(SIZES.to_vec()),
        0..RULESETS,
        any::<u64>(),
    )
        .prop_flat_map(|(size, preset, seed)| {
            let points = usize::from(size) * usize::from(size);
            let max = (3 * points).min(100);
            (
                Just(size),
                Just(preset),
                prop::collection::vec((any::<u16>(), 0u8..100, 0u8..100), 0..=max),
                Just(seed),
            )
        })
}

proptest! {
    #![proptest_config(config(64))]

    /// After every move of a random game: the board is consistent, stones
    /// are accounted for, and undo restores the state before the move.
    #[test]
    fn random_games_keep_the_board_consistent_and_undo_exact(
        (size, preset, steps, seed) in game_input()
    ) {
        run_game(size, preset, &steps, seed);
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// `check` answers exactly as `play_as` would, for either colour, on any
    /// point (including one line off the board), and a refused move changes
    /// nothing; `legal_points` and `ko_forbidden_points` agree with `check`.
    #[test]
    fn check_never_disagrees_with_play_as(
        size in prop::sample::select(SIZES.to_vec()),
        preset in 0..RULESETS,
        tries in prop::collection::vec((any::<u16>(), 0u8..100, any::<u16>(), any::<bool>()), 1..100),
    ) {
        let rules = rules_for(size, preset);
        let mut game = Game::new(rules);
        let n = u16::from(size) + 1; // one line beyond the edge as well
        for (raw, kind, next, other) in tries {
            if game.is_over() {
                break;
            }
            // The probe: a tactical or empty point, or anywhere near the board.
            let p = if kind < 90 {
                pick(game.board(), raw, kind)
            } else {
                Point::new((raw % n) as u8, ((raw / n) % n) as u8)
            };
            let color = if other { game.to_move().opponent() } else { game.to_move() };
            let check = game.check(color, p);
            prop_assert_eq!(game.is_legal(color, baduk::Action::Play(p)), check.is_ok());
            if rules.board_size.contains(p) {
                prop_assert_eq!(game.legal_points(color).contains(&p), check.is_ok());
                if color == game.to_move() {
                    let ko = matches!(
                        check,
                        Err(IllegalMove::Ko { .. } | IllegalMove::Superko { .. })
                    );
                    prop_assert_eq!(game.ko_forbidden_points().contains(&p), ko);
                }
            }
            let mut trial = game.clone();
            let played = trial.play_as(Move::play(color, p));
            prop_assert_eq!(played.as_ref().map(|_| ()), check.as_ref().map(|_| ()), "{} at {}", color, p);
            if check.is_ok() {
                game = trial;
            } else {
                prop_assert_eq!(trial.board(), game.board());
                prop_assert_eq!(trial.move_number(), game.move_number());
                prop_assert_eq!(trial.to_move(), game.to_move());
                // Keep the game moving: the player to move plays a legal
                // point if there is one, else passes.
                let to_move = game.to_move();
                let legal = game.legal_points(to_move);
                let mv = if legal.is_empty() {
                    Move::pass(to_move)
                } else {
                    Move::play(to_move, legal[usize::from(next) % legal.len()])
                };
                game.play(mv).map_err(|e| TestCaseError::fail(format!("{mv}: {e}")))?;
            }
            game.board().check_invariants().map_err(TestCaseError::fail)?;
        }
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// A game packed before every move ([`Game::pack`], as a server holds
    /// one waiting for its player) plays on exactly as its twin that never
    /// was: the same stones, hash, prisoners, ko point, legal and
    /// ko-forbidden points, and the same answer to every move; the board
    /// made again from the packed bytes keeps whole bookkeeping.
    #[test]
    fn a_packed_game_plays_on_as_its_twin(
        size in prop::sample::select(SIZES.to_vec()),
        preset in 0..RULESETS,
        seed in any::<u64>(),
    ) {
        let rules = Rules { move_cap: None, ..rules_for(size, preset) };
        let mut twin = Game::new(rules);
        let mut packed = twin.clone();
        let mut rng = SplitMix64::new(seed);
        let mut captures = 0;
        for _ in 0..4 * rules.board_size.points() {
            if twin.is_over() {
                break;
            }
            packed.pack();
            let color = twin.to_move();
            let legal = twin.legal_points(color);
            prop_assert_eq!(&packed.legal_points(color), &legal);
            prop_assert_eq!(packed.ko_forbidden_points(), twin.ko_forbidden_points());
            let (a, b) = (twin.board(), packed.board());
            prop_assert!(a == b, "stones differ:\n{a:?}\n{b:?}");
            prop_assert_eq!(a.hash(), b.hash());
            prop_assert_eq!(a.ko_point(), b.ko_point());
            for c in [Color::Black, Color::White] {
                prop_assert_eq!(a.prisoners(c), b.prisoners(c));
            }
            if let Err(e) = b.check_invariants() {
                prop_assert!(false, "the unpacked board's bookkeeping: {e}");
            }
            // Mostly a random legal stone not in the mover's own eye, now
            // and then a pass.
            let fills: Vec<Point> = legal
                .into_iter()
                .filter(|&p| !a.is_eye_shape(a.vertex(p), color))
                .collect();
            let mv = if fills.is_empty() || rng.below(25) == 0 {
                Move::pass(color)
            } else {
                Move::play(color, fills[rng.below(fills.len())])
            };
            packed.pack();
            let (x, y) = (twin.play(mv), packed.play(mv));
            if let Ok(o) = &x {
                captures += o.captured.len();
            }
            prop_assert_eq!(x, y);
        }
        // Long games capture, so packing carried prisoners and ko points.
        let played = twin.moves().len();
        prop_assert!(played < 2 * rules.board_size.points() || captures > 0, "no capture in {played} moves");
    }
}

proptest! {
    #![proptest_config(config(24))]

    /// The dead-stone reading a game keeps for its position (made once,
    /// kept through passes until the board changes) is always the reading
    /// a fresh game on the same board makes: after stones, captures, ko
    /// points, passes and packing.
    #[test]
    fn the_reading_a_game_keeps_is_the_reading_of_its_position(
        size in prop::sample::select(vec![5u8, 9]),
        preset in 0..RULESETS,
        seed in any::<u64>(),
    ) {
        let rules = Rules { move_cap: None, ..rules_for(size, preset) };
        let mut game = Game::new(rules);
        let mut rng = SplitMix64::new(seed);
        for _ in 0..2 * rules.board_size.points() {
            if game.is_over() {
                break;
            }
            if rng.below(3) == 0 {
                let fresh = Game::from_setup(rules, game.board().clone(), game.to_move());
                prop_assert_eq!(game.preview(), fresh.preview(), "after {} moves", game.moves().len());
            }
            if rng.below(4) == 0 {
                game.pack();
            }
            let color = game.to_move();
            let fills = filling_points(&game, color);
            let mv = if fills.is_empty() || rng.below(6) == 0 {
                Move::pass(color)
            } else {
                Move::play(color, fills[rng.below(fills.len())])
            };
            prop_assert!(game.play(mv).is_ok());
        }
        let fresh = Game::from_setup(rules, game.board().clone(), game.to_move());
        prop_assert_eq!(game.dead_stones(), fresh.dead_stones());
    }
}
