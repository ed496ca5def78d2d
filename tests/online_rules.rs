//! Games between two people with a move clock, end to end in one process:
//! losing on time, draw offers, and the count pushed after a pass.

mod support;

use std::time::Duration;

use support::{Player, embedded, sign_in, sqlite_memory};
use tonic::Code;
use ttakji_platform::bus::Bus;
use ttakji_proto::v1 as pb;

/// A game between `black` and `white` with `seconds` per move, made as the
/// matchmaker makes one: through the authority.
async fn online_game(
    service: &support::Embedded,
    black: &Player,
    white: &Player,
    seconds: u32,
) -> pb::GameSnapshot {
    support::game_between(service.authority, black, white, seconds, false).await
}

async fn two_players() -> (support::Embedded, Player, Player) {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let black = sign_in(&url, "black").await;
    let white = sign_in(&url, "white").await;
    (service, black, white)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_time_loses_the_game() {
    let (service, black, white) = two_players().await;
    let game = online_game(&service, &black, &white, 2).await;
    let id = &game.game_id;
    let clock = game.clock.expect("an online game has a clock");
    assert_eq!(clock.seconds_per_move, 2);
    assert!(clock.deadline_unix_ms > 0);

    black.play(id, 1, "E5").await.expect("in time");
    let after = black.game(id).await;
    let renewed = after.clock.expect("clock").deadline_unix_ms;
    assert!(
        renewed > clock.deadline_unix_ms,
        "a move gives the next player full time"
    );

    // White never moves.
    tokio::time::sleep(Duration::from_millis(2600)).await;
    let over = black.game(id).await;
    let result = over.result.expect("lost on time");
    assert_eq!(result.reason, pb::EndReason::Timeout as i32);
    assert_eq!(result.winner, pb::Color::Black as i32);
    assert_eq!(result.text, "B+T");
    assert!(over.clock.is_none(), "a finished game has no running clock");
    let late = white.play(id, 2, "C3").await.expect_err("too late");
    assert_eq!(late.code(), Code::FailedPrecondition);
    assert!(
        late.message().contains("ran out of time"),
        "{}",
        late.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draw_offered_and_accepted_ends_the_game_as_a_draw() {
    let (service, black, white) = two_players().await;
    let game = online_game(&service, &black, &white, 0).await;
    let id = &game.game_id;
    black.play(id, 1, "E5").await.expect("legal");
    let offered = black
        .games
        .clone()
        .offer_draw(black.req(pb::OfferDrawRequest {
            game_id: id.clone(),
        }))
        .await
        .expect("offer")
        .into_inner()
        .game
        .expect("snapshot");
    assert_eq!(offered.draw_offered_by, pb::Color::Black as i32);
    // Only the opponent answers.
    let own = black
        .games
        .clone()
        .answer_draw(black.req(pb::AnswerDrawRequest {
            game_id: id.clone(),
            accept: true,
        }))
        .await
        .expect_err("not your offer to answer");
    assert_eq!(own.code(), Code::FailedPrecondition);
    let drawn = white
        .games
        .clone()
        .answer_draw(white.req(pb::AnswerDrawRequest {
            game_id: id.clone(),
            accept: true,
        }))
        .await
        .expect("accept")
        .into_inner()
        .game
        .expect("snapshot");
    let result = drawn.result.expect("over");
    assert_eq!(result.reason, pb::EndReason::DrawAgreed as i32);
    assert_eq!(result.winner, pb::Color::Unspecified as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draw_offer_lapses_with_the_next_move_and_can_be_declined() {
    let (service, black, white) = two_players().await;
    let game = online_game(&service, &black, &white, 0).await;
    let id = &game.game_id;
    let offer = |p: &Player| {
        let p = p.clone();
        let id = id.clone();
        async move {
            p.games
                .clone()
                .offer_draw(p.req(pb::OfferDrawRequest { game_id: id }))
                .await
                .expect("offer")
        }
    };
    offer(&black).await;
    white
        .play(id, 1, "E5")
        .await
        .expect_err("it is Black's turn");
    black.play(id, 1, "E5").await.expect("legal");
    assert_eq!(
        white.game(id).await.draw_offered_by,
        pb::Color::Unspecified as i32,
        "the offer lapsed"
    );
    let lapsed = white
        .games
        .clone()
        .answer_draw(white.req(pb::AnswerDrawRequest {
            game_id: id.clone(),
            accept: true,
        }))
        .await
        .expect_err("nothing to accept");
    assert_eq!(lapsed.code(), Code::FailedPrecondition);

    offer(&white).await;
    let declined = black
        .games
        .clone()
        .answer_draw(black.req(pb::AnswerDrawRequest {
            game_id: id.clone(),
            accept: false,
        }))
        .await
        .expect("decline")
        .into_inner()
        .game
        .expect("snapshot");
    assert_eq!(declined.status, pb::GameStatus::Playing as i32);
    assert_eq!(declined.draw_offered_by, pb::Color::Unspecified as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_pass_the_opponent_is_sent_the_count_unasked() {
    let (service, black, white) = two_players().await;
    let game = online_game(&service, &black, &white, 0).await;
    let id = &game.game_id;
    let mut stream = white
        .games
        .clone()
        .watch_game(white.req(pb::WatchGameRequest {
            game_id: id.clone(),
            after_seq: game.event_seq,
            changes: false,
        }))
        .await
        .expect("watch")
        .into_inner();
    black.play(id, 1, "E5").await.expect("legal");
    white.play(id, 2, "C3").await.expect("legal");
    black.pass(id, 3).await.expect("pass");
    let mut previews = Vec::new();
    for _ in 0..3 {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("events arrive")
            .expect("open")
            .and_then(|r| r.event)
            .expect("event");
        previews.push(
            event
                .snapshot
                .and_then(|s| s.score_preview)
                .map(|c| c.summary),
        );
    }
    assert_eq!(previews[..2], [None, None], "no count pushed after a stone");
    let pushed = previews[2].clone().expect("the count follows the pass");
    assert!(pushed.starts_with("Black "), "{pushed}");
    assert!(pushed.ends_with("(komi 7)"), "{pushed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_who_disconnects_and_comes_back_in_time_plays_on_and_the_opponent_sees_it() {
    let (service, black, white) = two_players().await;
    let game = online_game(&service, &black, &white, 20).await;
    let id = &game.game_id;
    let mut white_view = white.watch(id, game.event_seq, false).await;
    let black_view = black.watch(id, game.event_seq, false).await;
    let seen = support::next_taken(&mut white_view, |m| m.presence).await;
    assert_eq!(
        (seen.user_id.as_str(), seen.connected),
        (black.user_id.as_str(), true)
    );

    // Black's connection drops: White is told, and Black's clock runs on.
    drop(black_view);
    let seen = support::next_taken(&mut white_view, |m| m.presence).await;
    assert_eq!(
        (seen.user_id.as_str(), seen.connected),
        (black.user_id.as_str(), false)
    );
    let during = white.game(id).await;
    assert_eq!(during.status, pb::GameStatus::Playing as i32);
    assert_eq!(
        during.clock.map(|c| c.deadline_unix_ms),
        game.clock.map(|c| c.deadline_unix_ms),
        "the clock did not stop or restart"
    );

    // Back in time: the full snapshot, and the game goes on.
    let _black_again = black.watch(id, 0, false).await;
    let seen = support::next_taken(&mut white_view, |m| m.presence).await;
    assert!(seen.connected);
    let resumed = black.game(id).await;
    assert_eq!(resumed.move_count, 0);
    black
        .play(id, 1, "E5")
        .await
        .expect("in time after reconnecting");
}

/// 300 moves of random (legal, never two passes running) play on 9×9 from
/// a fixed seed, played out with the rules crate first.
fn three_hundred_moves() -> Vec<baduk::Action> {
    let mut rng = baduk::SplitMix64::new(2026);
    let mut game = baduk::Game::new(baduk::Rules::ttakji());
    let mut actions = Vec::new();
    while !game.is_over() {
        let color = game.to_move();
        let legal = game.legal_points(color);
        let action = if legal.is_empty() {
            baduk::Action::Pass
        } else {
            baduk::Action::Play(legal[rng.below(legal.len())])
        };
        game.play(baduk::Move { color, action }).expect("legal");
        actions.push(action);
    }
    assert_eq!(
        game.end(),
        Some(baduk::EndReason::MoveCap),
        "the seed's game must reach the cap"
    );
    actions
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_three_hundred_moves_the_game_is_counted_as_if_both_had_passed() {
    let (service, black, white) = two_players().await;
    let game = online_game(&service, &black, &white, 0).await;
    let id = &game.game_id;
    let actions = three_hundred_moves();
    assert_eq!(actions.len(), 300);
    for (i, action) in actions.iter().enumerate() {
        let player = if i % 2 == 0 { &black } else { &white };
        let number = i as u32 + 1;
        match action {
            baduk::Action::Play(p) => {
                player
                    .play(id, number, &p.to_string())
                    .await
                    .unwrap_or_else(|s| panic!("move {number} {p}: {s:?}"));
            }
            baduk::Action::Pass => {
                player.pass(id, number).await.expect("pass");
            }
        }
    }
    let end = black.game(id).await;
    let result = end.result.expect("counted at the cap");
    assert_eq!(result.reason, pb::EndReason::MoveCap as i32);
    assert!(result.count.is_some(), "counted as if both had passed");
    let late = white.pass(id, 301).await.expect_err("over");
    assert_eq!(late.code(), Code::FailedPrecondition);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_snapshot_names_the_stones_in_atari_until_they_are_taken() {
    let (service, black, white) = two_players().await;
    let game = online_game(&service, &black, &white, 0).await;
    let id = &game.game_id;
    let named = |game: &pb::GameSnapshot| -> Vec<(u32, u32)> {
        game.in_atari.iter().map(|p| (p.column, p.row)).collect()
    };
    assert!(named(&game).is_empty());
    black.play(id, 1, "B1").await.expect("B1");
    let after = white.play(id, 2, "A1").await.expect("A1");
    // White's A1 has one liberty left (A2); Black's B1 has two.
    assert_eq!(named(&after.game.expect("a game")), [(0, 0)]);
    let watcher_sees = black.game(id).await;
    assert_eq!(named(&watcher_sees), [(0, 0)]);
    let taken = black.play(id, 3, "A2").await.expect("A2 takes A1");
    let taken = taken.game.expect("a game");
    assert_eq!(taken.white_captures + taken.black_captures, 1);
    assert!(
        named(&taken).is_empty(),
        "a captured stone is in atari no more"
    );
}
