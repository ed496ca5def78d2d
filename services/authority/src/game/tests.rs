//! The online rules, step by step, with no network, database or clock.

use baduk::{ByColor, Color, EndReason, GameResult, Point, Rules};
use baduk_ai::{Decision, Level};
use ttakji_proto::GameId;

use super::{EventKind, OnlineGame, Refusal, Requested, Step};
use crate::records::{AiEngine, GameMeta, Seat, StoredGame, StoredMove, Write};

const START: i64 = 1_000_000;

fn person(id: &str) -> Seat {
    Seat {
        user_id: Some(id.to_owned()),
        name: id.to_owned(),
        ai: None,
    }
}

fn computer() -> Seat {
    Seat {
        user_id: None,
        name: "Easy AI".to_owned(),
        ai: Some(Level::Easy),
    }
}

fn meta(black: Seat, white: Seat, seconds_per_move: u32, rules: Rules) -> GameMeta {
    GameMeta {
        id: GameId::parse("g1").expect("an id"),
        rules,
        black,
        white,
        seconds_per_move,
        created_at: START,
        ranked: false,
        keep_colors: false,
        stand_in: false,
        ai_engine: AiEngine::Server,
        ladder_rating: 0,
    }
}

/// Black `b` against White `w` on a 30-second move clock.
fn online() -> OnlineGame {
    OnlineGame::new(meta(person("b"), person("w"), 30, Rules::ttakji())).0
}

/// Person `p` with Black against the computer, no clock.
fn against_computer() -> OnlineGame {
    OnlineGame::new(meta(person("p"), computer(), 0, Rules::ttakji())).0
}

/// Person `p` with Black against the computer thinking in p's browser.
fn against_computer_in_the_client() -> OnlineGame {
    let meta = GameMeta {
        ai_engine: AiEngine::Client,
        ..meta(person("p"), computer(), 0, Rules::ttakji())
    };
    OnlineGame::new(meta).0
}

fn at(name: &str) -> Requested {
    let p = baduk::BoardSize::NINE
        .parse_point(name)
        .expect("test point");
    Requested::Place {
        column: u32::from(p.col()),
        row: u32::from(p.row()),
    }
}

/// Works out a step on `game` and commits it, as the actor does once its
/// write is stored; returns a copy of the step.
fn apply(
    game: &mut OnlineGame,
    action: impl FnOnce(&OnlineGame) -> Result<Step, Refusal>,
) -> Committed {
    commit(game, action(game))
}

/// A copy of a committed step, for a test to look at or not.
struct Committed(Step);

impl std::ops::Deref for Committed {
    type Target = Step;
    fn deref(&self) -> &Step {
        &self.0
    }
}

fn commit(game: &mut OnlineGame, step: Result<Step, Refusal>) -> Committed {
    let step = step.expect("accepted");
    let copy = Step {
        next: step.next.clone(),
        write: step.write.clone(),
        events: step.events.clone(),
        played: step.played,
        at: step.at,
        is_action: step.is_action,
    };
    game.commit(step);
    Committed(copy)
}

fn kinds(step: &Step) -> Vec<EventKind> {
    step.events().iter().map(|e| e.kind.clone()).collect()
}

#[test]
fn a_new_game_starts_with_event_one_and_the_first_clock() {
    let (game, started) = OnlineGame::new(meta(person("b"), person("w"), 30, Rules::ttakji()));
    assert_eq!((started.seq, started.kind), (1, EventKind::Started));
    assert_eq!(game.seq(), 1);
    assert_eq!(game.deadline(), Some(START + 30_000));
    assert!(
        against_computer().deadline().is_none(),
        "no clock against the computer"
    );
}

#[test]
fn a_move_is_stored_numbered_and_gives_the_next_player_full_time() {
    let mut game = online();
    let step = apply(&mut game, |g| g.submit("b", 1, at("E5"), START + 5_000));
    let write = step.write().expect("a move is stored");
    let stored = write.insert_move.expect("the move");
    assert_eq!(
        (
            stored.number,
            stored.color,
            stored.point.map(|p| p.to_string())
        ),
        (1, Color::Black, Some("E5".to_owned()))
    );
    assert_eq!(write.deadline_at, Some(START + 35_000));
    assert_eq!(game.deadline(), Some(START + 35_000));
    assert_eq!(game.game().to_move(), Color::White);
    assert_eq!(game.seq(), 2);
    assert_eq!(
        kinds(&step),
        [EventKind::MovePlayed {
            number: 1,
            with_count: false
        }]
    );
    assert!(step.is_action());
}

#[test]
fn a_step_changes_nothing_until_it_is_committed() {
    let game = online();
    let step = game.submit("b", 1, at("E5"), START).expect("legal");
    drop(step);
    assert_eq!(game.game().move_number(), 0);
    assert_eq!(game.seq(), 1);
    assert_eq!(game.deadline(), Some(START + 30_000));
    let again = game.submit("b", 1, at("E5"), START).expect("still move 1");
    assert_eq!(again.played(), Some(1));
}

#[test]
fn a_retried_move_gets_the_same_answer_and_is_not_applied_again() {
    let mut game = online();
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    let retry = game.submit("b", 1, at("E5"), START + 100).expect("a retry");
    assert_eq!(retry.played(), Some(1));
    assert!(retry.write().is_none(), "nothing is stored twice");
    assert!(retry.events().is_empty());
    commit(&mut game, Ok(retry));
    assert_eq!(game.game().move_number(), 1);
    assert_eq!(game.seq(), 2);
}

#[test]
fn another_move_under_a_played_number_or_a_later_number_is_refused() {
    let mut game = online();
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    assert_eq!(
        game.submit("b", 1, at("C3"), START).err(),
        Some(Refusal::AlreadyPlayed {
            number: 1,
            expected: 2
        })
    );
    assert_eq!(
        game.submit("w", 1, at("E5"), START).err(),
        Some(Refusal::AlreadyPlayed {
            number: 1,
            expected: 2
        }),
        "the retry must be the same player's"
    );
    assert_eq!(
        game.submit("w", 3, at("C3"), START).err(),
        Some(Refusal::NotNext {
            number: 3,
            expected: 2
        })
    );
    assert_eq!(
        game.submit("w", 0, at("C3"), START).err(),
        Some(Refusal::MoveNumberZero { expected: 2 })
    );
}

#[test]
fn players_move_in_turn_and_only_in_their_own_game() {
    let game = online();
    assert_eq!(
        game.submit("w", 1, at("E5"), START).err(),
        Some(Refusal::NotYourTurn {
            to_move: Color::Black
        })
    );
    assert_eq!(
        game.submit("x", 1, at("E5"), START).err(),
        Some(Refusal::NotAPlayer {
            game_id: "g1".to_owned()
        })
    );
    assert_eq!(
        game.submit("b", 1, Requested::Place { column: 9, row: 2 }, START)
            .err(),
        Some(Refusal::OffBoard {
            column: 9,
            row: 2,
            size: 9
        })
    );
}

#[test]
fn an_illegal_move_is_refused_with_the_engine_s_reason() {
    let mut game = online();
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    let refusal = game.submit("w", 2, at("E5"), START).expect_err("occupied");
    assert_eq!(refusal.to_string(), "E5 is occupied");
    assert_eq!(refusal.reason(), "occupied");
}

#[test]
fn running_out_of_time_loses_even_when_ahead() {
    let mut game = online();
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START + 1_000));
    assert!(!game.out_of_time(START + 30_999));
    assert!(game.out_of_time(START + 31_000));
    let step = apply(&mut game, |g| {
        g.time_out(START + 31_000).ok_or(Refusal::NoDrawOffer)
    });
    let finished = game.finished().expect("over");
    assert_eq!(
        finished.reason,
        EndReason::Timeout {
            winner: Color::Black
        }
    );
    assert_eq!(finished.result.to_string(), "B+T");
    assert!(game.deadline().is_none(), "a finished game has no clock");
    assert_eq!(game.finished_at(), START + 31_000);
    let write = step.write().expect("stored");
    let finish = write.finish.as_ref().expect("the result is stored");
    assert_eq!(
        finish.result,
        GameResult::Timeout {
            winner: Color::Black
        }
    );
    assert!(finish.sgf.contains("RE[B+T]"), "{}", finish.sgf);
    assert_eq!(write.deadline_at, None);
    assert!(
        game.time_out(START + 40_000).is_none(),
        "a game times out once"
    );
    assert!(matches!(
        game.submit("w", 2, at("C3"), START + 40_000),
        Err(Refusal::GameOver { .. })
    ));
}

#[test]
fn a_standing_draw_offer_lapses_with_the_next_move() {
    let mut game = online();
    let offered = apply(&mut game, |g| g.offer_draw("b", START));
    assert_eq!(kinds(&offered), [EventKind::DrawOffered(Color::Black)]);
    assert_eq!(game.draw_offer(), Some(Color::Black));
    let again = game.offer_draw("b", START).expect("the same answer");
    assert!(again.write().is_none() && again.events().is_empty());
    let step = apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    assert_eq!(game.draw_offer(), None);
    assert_eq!(step.write().and_then(|w| w.draw_offered_by), None);
    assert_eq!(
        game.answer_draw("w", true, START).err(),
        Some(Refusal::NoDrawOffer)
    );
}

#[test]
fn a_draw_is_agreed_by_acceptance_or_by_both_offering() {
    let mut accepted = online();
    apply(&mut accepted, |g| g.offer_draw("b", START));
    let step = apply(&mut accepted, |g| g.answer_draw("w", true, START));
    assert_eq!(kinds(&step), [EventKind::Finished]);
    assert_eq!(
        accepted.finished().map(|f| f.reason),
        Some(EndReason::DrawAgreed)
    );

    let mut both = online();
    apply(&mut both, |g| g.offer_draw("b", START));
    apply(&mut both, |g| g.offer_draw("w", START));
    assert_eq!(
        both.finished().map(|f| f.reason),
        Some(EndReason::DrawAgreed)
    );

    let mut declined = online();
    apply(&mut declined, |g| g.offer_draw("b", START));
    let step = apply(&mut declined, |g| g.answer_draw("w", false, START));
    assert_eq!(kinds(&step), [EventKind::DrawDeclined(Color::White)]);
    assert!(declined.is_playing());
    assert_eq!(declined.draw_offer(), None);
}

#[test]
fn the_computer_takes_no_draw_offers() {
    let game = against_computer();
    assert_eq!(
        game.offer_draw("p", START).err(),
        Some(Refusal::ComputerTakesNoDraws)
    );
}

#[test]
fn undo_takes_back_the_player_s_move_and_the_reply_once() {
    let mut game = against_computer();
    apply(&mut game, |g| g.submit("p", 1, at("E5"), START));
    let reply = game
        .computer_move(0, Decision::Play(Point::new(2, 2)), START)
        .expect("the computer's turn");
    commit(&mut game, Ok(reply));
    assert_eq!(game.game().move_number(), 2);
    assert!(game.undo_allowed());
    let step = apply(&mut game, |g| g.undo("p", 2, START));
    assert_eq!(game.game().move_number(), 0);
    assert_eq!(step.write().and_then(|w| w.truncate_after), Some(0));
    let EventKind::MovesUndone(undone) = &kinds(&step)[0] else {
        panic!("an undo event");
    };
    assert_eq!(
        undone.iter().map(|m| m.number).collect::<Vec<_>>(),
        [2, 1],
        "the last move first"
    );
    assert_eq!(
        game.undo("p", 2, START).err(),
        Some(Refusal::UndoAtAnotherMove {
            played: 0,
            asked: 2
        }),
        "a repeated undo never takes back two turns"
    );
    assert_eq!(game.undo("p", 0, START).err(), Some(Refusal::NothingToUndo));
}

#[test]
fn a_computer_decision_about_a_position_taken_back_is_dropped() {
    let mut game = against_computer();
    apply(&mut game, |g| g.submit("p", 1, at("E5"), START));
    let thought_at = game.generation();
    apply(&mut game, |g| g.undo("p", 1, START));
    apply(&mut game, |g| g.submit("p", 1, at("C3"), START));
    assert!(
        game.computer_move(thought_at, Decision::Play(Point::new(6, 6)), START)
            .is_none()
    );
    assert!(
        game.computer_move(game.generation(), Decision::Pass, START)
            .is_some()
    );
}

#[test]
fn an_illegal_point_from_the_computer_becomes_a_pass() {
    let mut game = against_computer();
    apply(&mut game, |g| g.submit("p", 1, at("E5"), START));
    let occupied = baduk::BoardSize::NINE.parse_point("E5").expect("point");
    let step = apply(&mut game, |g| {
        g.computer_move(0, Decision::Play(occupied), START)
            .ok_or(Refusal::NoDrawOffer)
    });
    assert_eq!(
        step.write().and_then(|w| w.insert_move).map(|m| m.point),
        Some(None)
    );
}

#[test]
fn undo_is_only_against_the_computer_and_only_while_playing() {
    let mut game = online();
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    assert_eq!(
        game.undo("b", 1, START).err(),
        Some(Refusal::UndoOnlyAgainstComputer)
    );
    let mut over = against_computer();
    apply(&mut over, |g| g.submit("p", 1, Requested::Resign, START));
    assert_eq!(
        over.undo("p", 0, START).err(),
        Some(Refusal::UndoAfterTheEnd {
            game_id: "g1".to_owned()
        })
    );
}

#[test]
fn a_retried_resignation_gets_the_same_answer() {
    let mut game = online();
    let step = apply(&mut game, |g| g.submit("w", 0, Requested::Resign, START));
    assert_eq!(kinds(&step), [EventKind::Finished]);
    assert_eq!(
        game.finished().map(|f| f.result.to_string()),
        Some("B+R".into())
    );
    let retry = game
        .submit("w", 0, Requested::Resign, START)
        .expect("same answer");
    assert!(retry.write().is_none());
    assert!(matches!(
        game.submit("b", 0, Requested::Resign, START),
        Err(Refusal::GameOver { .. })
    ));
}

#[test]
fn after_a_pass_the_opponent_is_shown_the_count_and_two_passes_end_the_game() {
    let mut game = online();
    let first = apply(&mut game, |g| g.submit("b", 1, Requested::Pass, START));
    assert_eq!(
        kinds(&first),
        [EventKind::MovePlayed {
            number: 1,
            with_count: true
        }]
    );
    let second = apply(&mut game, |g| g.submit("w", 2, Requested::Pass, START));
    assert_eq!(
        kinds(&second),
        [
            EventKind::MovePlayed {
                number: 2,
                with_count: false
            },
            EventKind::Finished
        ]
    );
    // The move that ends the game already shows it over (no turn to
    // take), and then the end says how.
    for event in second.events() {
        let shown = crate::view::event(&game, event).snapshot.expect("snapshot");
        assert_eq!(shown.status, ttakji_proto::v1::GameStatus::Finished as i32);
        assert_eq!(shown.to_move, ttakji_proto::v1::Color::Unspecified as i32);
    }
    assert_eq!(
        game.finished().map(|f| f.reason),
        Some(EndReason::TwoPasses)
    );
    assert!(game.finished().and_then(|f| f.count.as_ref()).is_some());
    assert_eq!(game.seq(), 4);
}

#[test]
fn the_move_cap_counts_the_game() {
    let rules = Rules {
        move_cap: Some(3),
        ..Rules::ttakji()
    };
    let mut game = OnlineGame::new(meta(person("b"), person("w"), 0, rules)).0;
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    apply(&mut game, |g| g.submit("w", 2, at("C3"), START));
    let step = apply(&mut game, |g| g.submit("b", 3, at("G7"), START));
    assert_eq!(game.finished().map(|f| f.reason), Some(EndReason::MoveCap));
    let finish = step
        .write()
        .and_then(|w| w.finish.clone())
        .expect("counted");
    assert!(finish.points.is_some(), "a capped game is counted");
}

#[test]
fn a_game_restored_from_what_was_stored_is_the_same_game() {
    let mut game = online();
    let mut moves = Vec::new();
    for (n, (who, point)) in [("b", "E5"), ("w", "E6"), ("b", "D6"), ("w", "F5")]
        .into_iter()
        .enumerate()
    {
        let step = apply(&mut game, |g| g.submit(who, n as u32 + 1, at(point), START));
        moves.push(step.write().and_then(|w| w.insert_move).expect("move"));
    }
    apply(&mut game, |g| g.offer_draw("w", START));
    let stored = StoredGame {
        meta: game.meta().clone(),
        end_reason: None,
        deadline_at: game.deadline(),
        draw_offered_by: game.draw_offer(),
        finished_at: None,
        last_seq: game.seq(),
        counting: None,
        resumed_after: Vec::new(),
        dead_stones: Vec::new(),
        away: ByColor::both(None),
        stand_ins: ByColor::both(false),
    };
    let restored = OnlineGame::restore(stored, &moves).expect("replays");
    assert_eq!(
        crate::view::snapshot(&restored, true),
        crate::view::snapshot(&game, true)
    );
}

#[test]
fn a_stored_move_the_rules_refuse_is_reported_not_replayed() {
    let game = online();
    let stored = StoredGame {
        meta: game.meta().clone(),
        end_reason: None,
        deadline_at: None,
        draw_offered_by: None,
        finished_at: None,
        last_seq: 3,
        counting: None,
        resumed_after: Vec::new(),
        dead_stones: Vec::new(),
        away: ByColor::both(None),
        stand_ins: ByColor::both(false),
    };
    let e5 = Some(Point::new(4, 4));
    let moves = [
        StoredMove {
            number: 1,
            color: Color::Black,
            point: e5,
            by_stand_in: false,
        },
        StoredMove {
            number: 2,
            color: Color::White,
            point: e5,
            by_stand_in: false,
        },
    ];
    let e = OnlineGame::restore(stored, &moves).expect_err("occupied");
    assert_eq!(e, "move 2: E5 is occupied");
}

#[test]
fn a_resigned_game_is_restored_as_resigned() {
    let game = online();
    let stored = StoredGame {
        meta: game.meta().clone(),
        end_reason: Some(EndReason::Resignation {
            winner: Color::White,
        }),
        deadline_at: None,
        draw_offered_by: None,
        finished_at: Some(START + 9),
        last_seq: 2,
        counting: None,
        resumed_after: Vec::new(),
        dead_stones: Vec::new(),
        away: ByColor::both(None),
        stand_ins: ByColor::both(false),
    };
    let restored = OnlineGame::restore(stored, &[]).expect("replays");
    assert_eq!(
        restored.finished().map(|f| f.result.to_string()),
        Some("W+R".into())
    );
    assert_eq!(restored.finished_at(), START + 9);
}

#[test]
fn dates_are_written_as_sgf_wants_them() {
    assert_eq!(super::date_of(0), "1970-01-01");
    assert_eq!(super::date_of(1_795_910_400_000), "2026-11-29");
}

// ----- the count of a territory game -----

fn point(name: &str) -> Point {
    baduk::BoardSize::NINE
        .parse_point(name)
        .expect("test point")
}

/// A 9x9 territory game (komi 6.5, no clock) between `b` and `w`: Black's
/// wall on column D, White's on E, a white stone (B5) inside Black's side
/// and a black one (H5) inside White's, then two passes. Returns the moves
/// as stored.
fn territory_game_to_two_passes() -> (OnlineGame, Vec<StoredMove>) {
    let rules = Rules::japanese().with_board_size(baduk::BoardSize::NINE);
    let mut game = OnlineGame::new(meta(person("b"), person("w"), 0, rules)).0;
    let mut moves = Vec::new();
    let mut script: Vec<(&str, Requested)> = Vec::new();
    let black_wall = ["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9"];
    let white_wall = ["E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9"];
    for (b, w) in black_wall.iter().zip(white_wall) {
        script.push(("b", at(b)));
        script.push(("w", at(w)));
    }
    script.extend([
        ("b", at("H5")),
        ("w", at("B5")),
        ("b", Requested::Pass),
        ("w", Requested::Pass),
    ]);
    for (n, (who, action)) in script.into_iter().enumerate() {
        let step = apply(&mut game, |g| g.submit(who, n as u32 + 1, action, START));
        moves.extend(step.write().and_then(|w| w.insert_move));
    }
    (game, moves)
}

fn marks(game: &OnlineGame) -> Vec<String> {
    game.counting()
        .expect("counting")
        .dead()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn version(game: &OnlineGame) -> u32 {
    game.counting().expect("counting").version()
}

/// What the store holds for `game` after its last write.
fn stored(game: &OnlineGame, end_reason: Option<EndReason>) -> StoredGame {
    let standing = game.standing(Write::default());
    StoredGame {
        meta: game.meta().clone(),
        end_reason,
        deadline_at: standing.deadline_at,
        draw_offered_by: standing.draw_offered_by,
        finished_at: (!game.is_playing()).then(|| game.finished_at()),
        last_seq: game.seq(),
        counting: standing.counting,
        resumed_after: standing.resumed_after,
        dead_stones: game
            .finished()
            .and_then(|f| f.count.as_ref())
            .map(|c| c.dead.clone())
            .unwrap_or_default(),
        away: standing.away,
        stand_ins: standing.stand_ins,
    }
}

#[test]
fn two_passes_in_a_territory_game_open_a_count_with_the_server_s_verdict() {
    let (game, _) = territory_game_to_two_passes();
    assert!(game.is_playing(), "not over until the count is agreed");
    assert!(game.finished().is_none());
    assert_eq!(marks(&game), ["B5", "H5"]);
    let counting = game.counting().expect("counting");
    assert_eq!(counting.proposed(), counting.dead());
    assert!(!counting.confirmed(Color::Black) && !counting.confirmed(Color::White));
    assert_eq!(
        game.deadline(),
        Some(START + i64::from(super::COUNTING_SECONDS) * 1000)
    );
    assert_eq!(game.computer_to_move(), None);
    // Nobody moves during the count, and no draw is offered.
    assert_eq!(
        game.submit("b", 23, at("A1"), START).err(),
        Some(Refusal::Counting)
    );
    assert_eq!(game.offer_draw("b", START).err(), Some(Refusal::Counting));
    let shown = crate::view::snapshot(&game, false);
    assert_eq!(shown.to_move, ttakji_proto::v1::Color::Unspecified as i32);
    assert_eq!(shown.status, ttakji_proto::v1::GameStatus::Playing as i32);
    let count = shown
        .counting
        .and_then(|c| c.count)
        .expect("the count with the marks");
    // Black: A-C (27, B5 taken off) + the dead B5; White: F-J (36, H5
    // taken off) + the dead H5.
    assert_eq!((count.black_points, count.white_points), (28, 37));
}

#[test]
fn a_marked_disagreement_goes_back_to_play_and_the_next_count_is_agreed() {
    let (mut game, mut moves) = territory_game_to_two_passes();
    // White confirms the proposal; Black marks its H5 stone alive, which
    // withdraws White's confirmation.
    let v = version(&game);
    apply(&mut game, |g| g.confirm_count("w", v, START));
    assert!(game.counting().expect("counting").confirmed(Color::White));
    let (h5_col, h5_row) = (u32::from(point("H5").col()), u32::from(point("H5").row()));
    let marked = apply(&mut game, |g| {
        g.mark_dead("b", h5_col, h5_row, false, START)
    });
    assert_eq!(
        kinds(&marked),
        [EventKind::DeadStonesMarked {
            by: Color::Black,
            stones: vec![point("H5")],
            dead: false
        }]
    );
    assert_eq!(marks(&game), ["B5"]);
    assert!(!game.counting().expect("counting").confirmed(Color::White));
    assert!(version(&game) > v);
    // The same mark again changes nothing; a confirmation of the old marks
    // is refused.
    let again = game
        .mark_dead("b", h5_col, h5_row, false, START)
        .expect("a repeat");
    assert!(again.events().is_empty() && again.write().is_none());
    assert_eq!(
        game.confirm_count("w", v, START).err(),
        Some(Refusal::MarksChanged {
            asked: v,
            now: version(&game)
        })
    );
    // An empty point has nothing to mark.
    assert!(matches!(
        game.mark_dead("w", 0, 0, true, START),
        Err(Refusal::NoStoneToMark { .. })
    ));
    // White will not agree: back to play, Black (who passed first) moves.
    let resumed = apply(&mut game, |g| g.resume_play("w", 22, START));
    assert_eq!(kinds(&resumed), [EventKind::PlayResumed(Color::White)]);
    assert!(game.counting().is_none());
    assert_eq!(game.game().to_move(), Color::Black);
    // Asked again, the same answer.
    let again = game.resume_play("w", 22, START).expect("a repeat");
    assert!(again.events().is_empty());
    // White captures H5 while Black passes.
    let mut n = 23;
    for w in ["H4", "H6", "G5", "J5"] {
        for (who, action) in [("b", Requested::Pass), ("w", at(w))] {
            let step = apply(&mut game, |g| g.submit(who, n, action, START));
            moves.extend(step.write().and_then(|w| w.insert_move));
            n += 1;
        }
    }
    assert_eq!(game.game().board().prisoners(Color::White), 1);
    for who in ["b", "w"] {
        let step = apply(&mut game, |g| g.submit(who, n, Requested::Pass, START));
        moves.extend(step.write().and_then(|w| w.insert_move));
        n += 1;
    }
    assert_eq!(marks(&game), ["B5"]);
    // The store's copy, restored mid-count, is the same game.
    let restored = OnlineGame::restore(stored(&game, None), &moves).expect("replays");
    assert_eq!(
        crate::view::snapshot(&restored, true),
        crate::view::snapshot(&game, true)
    );
    let v = version(&game);
    apply(&mut game, |g| g.confirm_count("b", v, START));
    let last = apply(&mut game, |g| g.confirm_count("w", v, START + 5));
    assert_eq!(
        kinds(&last),
        [EventKind::CountConfirmed(Color::White), EventKind::Finished]
    );
    let finished = game.finished().expect("counted");
    let count = finished.count.as_ref().expect("a count");
    // Black: A-C 27 (B5 taken off) + 1 dead = 28. White: F-J 36, less its
    // four stones around H5, + 1 prisoner (H5) = 33; komi 6.5.
    assert_eq!((count.black, count.white), (28, 33));
    assert_eq!(finished.result.to_string(), "W+11.5");
    let finish = last.write().and_then(|w| w.finish.clone()).expect("stored");
    assert_eq!(finish.dead_stones, [point("B5")]);
    assert!(finish.sgf.contains("RE[W+11.5]"), "{}", finish.sgf);
    // A repeated confirmation after the end answers as before.
    assert!(game.confirm_count("w", v, START + 6).is_ok());
    // And the finished game restores with its agreed count.
    let restored =
        OnlineGame::restore(stored(&game, Some(EndReason::TwoPasses)), &moves).expect("replays");
    assert_eq!(
        restored.finished().map(|f| f.result.to_string()),
        Some("W+11.5".into())
    );
}

#[test]
fn a_count_nobody_confirms_is_counted_with_the_server_s_verdict_when_its_time_runs_out() {
    let (mut game, _) = territory_game_to_two_passes();
    // Black marks White's wall dead and never confirms.
    let (e5_col, e5_row) = (u32::from(point("E5").col()), u32::from(point("E5").row()));
    apply(&mut game, |g| g.mark_dead("b", e5_col, e5_row, true, START));
    assert_eq!(marks(&game).len(), 11);
    let deadline = game.deadline().expect("the count's deadline");
    assert!(!game.out_of_time(deadline - 1));
    assert!(game.out_of_time(deadline));
    let step = game.time_out(deadline).expect("counted");
    game.commit(step);
    let finished = game.finished().expect("counted");
    assert_eq!(finished.result.to_string(), "W+15.5");
}

#[test]
fn a_player_may_resign_during_the_count() {
    let (mut game, moves) = territory_game_to_two_passes();
    apply(&mut game, |g| g.submit("b", 0, Requested::Resign, START));
    assert_eq!(
        game.finished().map(|f| f.result.to_string()),
        Some("W+R".into())
    );
    let restored = OnlineGame::restore(
        stored(
            &game,
            Some(EndReason::Resignation {
                winner: Color::White,
            }),
        ),
        &moves,
    )
    .expect("replays");
    assert_eq!(
        restored.finished().map(|f| f.result.to_string()),
        Some("W+R".into())
    );
}

#[test]
fn an_area_game_is_still_counted_at_once_after_two_passes() {
    let mut game = online();
    apply(&mut game, |g| g.submit("b", 1, Requested::Pass, START));
    apply(&mut game, |g| g.submit("w", 2, Requested::Pass, START));
    assert!(game.counting().is_none());
    assert_eq!(
        game.mark_dead("b", 0, 0, true, START).err(),
        Some(Refusal::GameOver {
            game_id: "g1".into(),
            reason: EndReason::TwoPasses
        })
    );
}

// ----- the computer standing in for a player who is away -----

const GRACE: i64 = 60_000;

/// Black `b` against White `w` at a table where the computer stands in,
/// on a 30-second move clock.
fn stand_in_table() -> OnlineGame {
    let mut m = meta(person("b"), person("w"), 30, Rules::ttakji());
    m.stand_in = true;
    OnlineGame::new(m).0
}

#[test]
fn a_player_away_past_the_grace_period_has_the_computer_play_their_seat_until_they_return() {
    let mut game = stand_in_table();
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    // White's connection goes; nothing is due before the grace period.
    apply(&mut game, |g| g.presence("w", false, START + 10));
    assert_eq!(game.stand_in_due(GRACE), Some(START + 10 + GRACE));
    assert!(game.seat_stand_ins(START + GRACE, GRACE).is_none());
    assert_eq!(game.computer_to_move(), None);
    let seated = game.seat_stand_ins(START + 10 + GRACE, GRACE).expect("due");
    assert_eq!(kinds(&seated), [EventKind::StandInSeated(Color::White)]);
    game.commit(seated);
    assert!(game.stood_in(Color::White));
    assert_eq!(
        game.computer_to_move(),
        Some((Color::White, super::STAND_IN_LEVEL))
    );
    let shown = crate::view::snapshot(&game, false);
    assert!(shown.white.is_some_and(|p| p.computer_standing_in));
    // The computer's move is marked as its own; it never resigns for the
    // player.
    let step = game
        .computer_move(game.generation(), Decision::Resign, START + GRACE + 20)
        .expect("moves");
    let mv = step.write().and_then(|w| w.insert_move).expect("a move");
    assert!(
        mv.by_stand_in && mv.point.is_none(),
        "a pass, not a resignation"
    );
    game.commit(step);
    assert!(game.played_move(2).by_stand_in);
    assert!(game.is_playing());
    apply(&mut game, |g| {
        g.submit("b", 3, at("C3"), START + GRACE + 30)
    });
    let step = game
        .computer_move(
            game.generation(),
            Decision::Play(point("G7")),
            START + GRACE + 40,
        )
        .expect("moves");
    game.commit(step);
    let sgf = game.sgf();
    assert!(
        sgf.contains("C[played by the computer for w, who was away]"),
        "{sgf}"
    );
    // White comes back: the seat is theirs, and a decision the computer
    // was making for it is dropped.
    apply(&mut game, |g| {
        g.submit("b", 5, at("D4"), START + GRACE + 50)
    });
    let thinking = game.generation();
    let back = apply(&mut game, |g| g.presence("w", true, START + GRACE + 60));
    assert_eq!(kinds(&back), [EventKind::StandInLeft(Color::White)]);
    assert!(!game.stood_in(Color::White));
    assert_eq!(game.computer_to_move(), None);
    assert!(
        game.computer_move(thinking, Decision::Play(point("F6")), START + GRACE + 70)
            .is_none()
    );
    apply(&mut game, |g| {
        g.submit("w", 6, at("F6"), START + GRACE + 80)
    });
    assert!(!game.played_move(6).by_stand_in);
    // Saying again that a player is here changes nothing.
    let again = game.presence("w", true, START + GRACE + 90).expect("here");
    assert!(again.write().is_none() && again.events().is_empty());
}

#[test]
fn a_player_back_within_the_grace_period_keeps_the_seat() {
    let mut game = stand_in_table();
    apply(&mut game, |g| g.presence("b", false, START));
    apply(&mut game, |g| g.presence("b", true, START + GRACE - 1));
    assert_eq!(game.stand_in_due(GRACE), None);
    assert!(game.seat_stand_ins(START + 2 * GRACE, GRACE).is_none());
}

#[test]
fn a_game_both_players_left_waits_and_the_computer_stands_in_once_one_returns() {
    let mut game = stand_in_table();
    apply(&mut game, |g| g.presence("b", false, START));
    apply(&mut game, |g| g.presence("w", false, START + 5));
    assert_eq!(game.stand_in_due(GRACE), None, "nobody to play against");
    assert!(game.seat_stand_ins(START + 10 * GRACE, GRACE).is_none());
    apply(&mut game, |g| g.presence("w", true, START + 10 * GRACE));
    let seated = game
        .seat_stand_ins(START + 10 * GRACE, GRACE)
        .expect("Black has been away long enough");
    assert_eq!(kinds(&seated), [EventKind::StandInSeated(Color::Black)]);
}

#[test]
fn a_table_without_a_stand_in_and_a_finished_game_ignore_presence() {
    let mut game = online();
    let ignored = game.presence("w", false, START).expect("a player");
    assert!(ignored.write().is_none());
    assert_eq!(game.stand_in_due(GRACE), None);
    let mut table = stand_in_table();
    apply(&mut table, |g| g.submit("b", 0, Requested::Resign, START));
    assert!(
        table
            .presence("w", false, START)
            .expect("a player")
            .write()
            .is_none()
    );
    assert!(matches!(
        game.presence("x", false, START),
        Err(Refusal::NotAPlayer { .. })
    ));
    apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
}

#[test]
fn who_is_away_and_where_the_computer_plays_are_restored() {
    let mut game = stand_in_table();
    let mut moves = Vec::new();
    let first = apply(&mut game, |g| g.submit("b", 1, at("E5"), START));
    moves.extend(first.write().and_then(|w| w.insert_move));
    apply(&mut game, |g| g.presence("w", false, START));
    let seated = game.seat_stand_ins(START + GRACE, GRACE).expect("due");
    game.commit(seated);
    let step = game
        .computer_move(
            game.generation(),
            Decision::Play(point("C3")),
            START + GRACE,
        )
        .expect("moves");
    moves.extend(step.write().and_then(|w| w.insert_move));
    game.commit(step);
    let restored = OnlineGame::restore(stored(&game, None), &moves).expect("replays");
    assert_eq!(
        crate::view::snapshot(&restored, true),
        crate::view::snapshot(&game, true)
    );
    assert!(restored.stood_in(Color::White));
    assert!(restored.played_move(2).by_stand_in);
    assert_eq!(restored.sgf(), game.sgf());
}

#[test]
fn the_computers_moves_in_a_client_engine_game_come_only_from_its_player() {
    let mut game = against_computer_in_the_client();
    apply(&mut game, |g| g.submit("p", 1, at("E5"), START));
    assert_eq!(
        game.computer_to_move(),
        None,
        "the server does not think for a computer whose engine runs in the client"
    );
    // Not from a stranger, and not as the player's own move.
    assert_eq!(
        game.submit_for_computer("x", 2, at("C3"), START).err(),
        Some(Refusal::NotAPlayer {
            game_id: "g1".to_owned()
        })
    );
    assert_eq!(
        game.submit("p", 2, at("C3"), START).err(),
        Some(Refusal::NotYourTurn {
            to_move: Color::White
        })
    );
    // Checked like any other move: legal, and numbered.
    assert!(matches!(
        game.submit_for_computer("p", 2, at("E5"), START).err(),
        Some(Refusal::Illegal(_))
    ));
    assert_eq!(
        game.submit_for_computer("p", 3, at("C3"), START).err(),
        Some(Refusal::NotNext {
            number: 3,
            expected: 2
        })
    );
    let step = apply(&mut game, |g| {
        g.submit_for_computer("p", 2, at("C3"), START)
    });
    let stored = step.write().and_then(|w| w.insert_move).expect("a move");
    assert_eq!((stored.number, stored.color), (2, Color::White));
    assert_eq!(step.write().map(|w| w.ai_engine), Some(AiEngine::Client));
    // A retry is answered as the first time; in turn only.
    assert!(game.submit_for_computer("p", 2, at("C3"), START).is_ok());
    assert_eq!(game.game().move_number(), 2);
    assert_eq!(
        game.submit_for_computer("p", 3, at("D4"), START).err(),
        Some(Refusal::NotYourTurn {
            to_move: Color::Black
        })
    );
    // Undo takes back the player's move and the reply, as against the server.
    apply(&mut game, |g| g.undo("p", 2, START));
    assert_eq!(game.game().move_number(), 0);
    // The computer's resignation, sent for it, ends the game for the player.
    apply(&mut game, |g| g.submit("p", 1, at("E5"), START));
    apply(&mut game, |g| {
        g.submit_for_computer("p", 0, Requested::Resign, START)
    });
    assert_eq!(
        game.finished().map(|f| f.result.winner()),
        Some(Some(Color::Black))
    );
}

#[test]
fn moves_for_the_computer_are_refused_where_the_server_thinks_or_there_is_no_computer() {
    let mut game = against_computer();
    apply(&mut game, |g| g.submit("p", 1, at("E5"), START));
    assert_eq!(
        game.submit_for_computer("p", 2, at("C3"), START).err(),
        Some(Refusal::ComputerThinksOnServer {
            game_id: "g1".to_owned()
        })
    );
    assert!(game.computer_to_move().is_some());
    let mut people = online();
    apply(&mut people, |g| g.submit("b", 1, at("E5"), START));
    assert_eq!(
        people.submit_for_computer("b", 2, at("C3"), START).err(),
        Some(Refusal::NoComputerSeat {
            game_id: "g1".to_owned()
        })
    );
    assert_eq!(
        people.submit_for_computer("w", 2, at("C3"), START).err(),
        Some(Refusal::NoComputerSeat {
            game_id: "g1".to_owned()
        })
    );
}

#[test]
fn the_player_moves_the_computers_thinking_and_the_record_says_where_it_ran() {
    let mut game = against_computer_in_the_client();
    assert!(
        game.sgf()
            .contains("GC[Easy AI thought in the player's client, not on the server.]")
    );
    apply(&mut game, |g| g.submit("p", 1, at("E5"), START));
    assert!(game.computer_to_move().is_none());
    assert_eq!(
        game.set_ai_engine("x", AiEngine::Server, START).err(),
        Some(Refusal::NotAPlayer {
            game_id: "g1".to_owned()
        })
    );
    let step = apply(&mut game, |g| g.set_ai_engine("p", AiEngine::Server, START));
    assert_eq!(kinds(&step), [EventKind::AiEngineChanged(AiEngine::Server)]);
    assert_eq!(step.write().map(|w| w.ai_engine), Some(AiEngine::Server));
    assert_eq!(game.computer_to_move(), Some((Color::White, Level::Easy)));
    assert!(game.sgf().contains("GC[Easy AI thought on the server.]"));
    // Asking again changes nothing.
    let again = apply(&mut game, |g| g.set_ai_engine("p", AiEngine::Server, START));
    assert!(again.events().is_empty());
    let mut people = online();
    assert_eq!(
        people.set_ai_engine("b", AiEngine::Client, START).err(),
        Some(Refusal::NoComputerSeat {
            game_id: "g1".to_owned()
        })
    );
    apply(&mut people, |g| g.submit("b", 1, at("E5"), START));
}

mod stored_changes {
    use proptest::prelude::*;
    use prost::Message as _;
    use ttakji_proto::v1 as pb;

    use super::{START, commit, online};
    use crate::game::{OnlineGame, Requested};
    use crate::view;

    /// One player's action in a random game: a point by its index, a
    /// pass, a draw offered, declined or accepted, a resignation, or the
    /// clock running out.
    fn act(game: &OnlineGame, code: u8, at: i64) -> Option<crate::game::Step> {
        let to_move = game.game().to_move();
        let (mover, other) = if to_move == baduk::Color::Black {
            ("b", "w")
        } else {
            ("w", "b")
        };
        let number = u32::try_from(game.game().move_number()).ok()? + 1;
        match code {
            0..=80 => game
                .submit(
                    mover,
                    number,
                    Requested::Place {
                        column: u32::from(code % 9),
                        row: u32::from(code / 9),
                    },
                    at,
                )
                .ok(),
            81..=88 => game.submit(mover, number, Requested::Pass, at).ok(),
            89..=91 => game.offer_draw(mover, at).ok(),
            92..=93 => game.answer_draw(other, false, at).ok(),
            94 => game.answer_draw(other, true, at).ok(),
            95 => game.submit(other, number, Requested::Resign, at).ok(),
            _ => game.time_out(at + 31_000),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// What the authority stores and publishes: each event's change
        /// against the event before it, applied in order from the first
        /// (whole) event, gives every event's whole game exactly.
        #[test]
        fn stored_changes_replay_to_the_events_whole_games(
            codes in prop::collection::vec(0u8..97, 1..120),
        ) {
            let mut game = online();
            let first = view::snapshot(&game, false);
            let mut shown = Some(first.encode_to_vec().into_boxed_slice());
            let mut replayed = first;
            for (i, code) in codes.into_iter().enumerate() {
                if !game.is_playing() {
                    break;
                }
                let at = START + i64::try_from(i).unwrap_or(0) * 1_000;
                let Some(step) = act(&game, code, at) else { continue };
                let whole = view::step_events(&game, &step);
                let (stored, next) = view::as_changes(shown.as_deref(), whole.clone());
                prop_assert_eq!(stored.len(), whole.len());
                for (stored, whole) in stored.iter().zip(&whole) {
                    let expected = whole.snapshot.clone().expect("an event shows the game");
                    let finished = matches!(stored.kind, Some(pb::game_event::Kind::Finished(_)));
                    match (&stored.snapshot, &stored.change) {
                        (Some(s), None) => {
                            prop_assert!(finished, "only a game's end goes whole here");
                            replayed = s.clone();
                        }
                        (None, Some(change)) => {
                            prop_assert!(!finished, "a game's end goes whole");
                            ttakji_proto::changes::apply(&mut replayed, change)
                                .expect("the change applies");
                        }
                        other => prop_assert!(false, "event {} holds {:?}", stored.seq, other),
                    }
                    prop_assert_eq!(&replayed, &expected, "event {}", stored.seq);
                    prop_assert!(
                        stored.encoded_len() <= whole.encoded_len() || finished,
                        "a change is no larger than the game whole"
                    );
                }
                // As the actor keeps it: a step without events leaves it.
                if next.is_some() {
                    shown = next;
                }
                commit(&mut game, Ok(step));
            }
        }
    }

    #[test]
    fn an_event_with_nothing_to_compare_with_goes_whole() {
        let game = online();
        let step = game
            .submit("b", 1, super::at("E5"), START)
            .expect("accepted");
        let whole = view::step_events(&game, &step);
        let (stored, shown) = view::as_changes(None, whole.clone());
        assert_eq!(stored, whole, "stored as it is");
        let shown = shown.expect("the game it shows");
        assert_eq!(
            pb::GameSnapshot::decode(&*shown).ok(),
            whole[0].snapshot.clone()
        );
    }
}
