//! A friend's table with house rules (seed 001): board size, komi,
//! scoring, move time and whether a rematch swaps colours, chosen by the
//! host, kept by the game, its snapshot, its SGF and its rematches; end to
//! end in one process.

mod support;

use std::time::Duration;

use support::{Player, embedded_tuned, sign_in, sqlite_memory};
use tonic::Code;
use ttakji_platform::bus::Bus;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

fn matches(p: &Player) -> MatchServiceClient<tonic::transport::Channel> {
    MatchServiceClient::new(p.channel.clone())
}

/// The service with a one-second move clock wherever a table does not
/// choose its own, so a table without a move limit shows it has none.
async fn service() -> (support::Embedded, Player, Player) {
    let service = embedded_tuned(
        sqlite_memory().await,
        Bus::in_process(),
        ttakji_matchmaker::Tickets::memory(),
        None,
        |config| config.seconds_per_move = 1,
    )
    .await;
    let url = format!("http://{}", service.gateway);
    let host = sign_in(&url, "host").await;
    let friend = sign_in(&url, "friend").await;
    (service, host, friend)
}

/// The game `friend` joins at `host`'s table with `rules`, with the players
/// as (Black, White).
async fn table<'a>(
    host: &'a Player,
    friend: &'a Player,
    rules: pb::HouseRules,
) -> (pb::GameSnapshot, &'a Player, &'a Player) {
    let mut stream = matches(host)
        .create_challenge(host.req(pb::CreateChallengeRequest {
            rules: Some(rules),
            ..Default::default()
        }))
        .await
        .expect("a table")
        .into_inner();
    let challenge = stream
        .message()
        .await
        .expect("stream")
        .and_then(|m| m.challenge)
        .expect("the code");
    let game = matches(friend)
        .accept_challenge(friend.req(pb::AcceptChallengeRequest {
            code: challenge.code,
        }))
        .await
        .expect("joined")
        .into_inner()
        .game
        .expect("the game");
    seated(game, host, friend)
}

fn seated<'a>(
    game: pb::GameSnapshot,
    a: &'a Player,
    b: &'a Player,
) -> (pb::GameSnapshot, &'a Player, &'a Player) {
    let black_id = game.black.as_ref().map(|p| p.user_id.clone());
    if black_id.as_deref() == Some(a.user_id.as_str()) {
        (game, a, b)
    } else {
        (game, b, a)
    }
}

/// Both players ask for a rematch of `game_id`; the new game.
async fn rematch(a: &Player, b: &Player, game_id: &str) -> pb::GameSnapshot {
    let (ra, rb) = tokio::join!(a.rematch(game_id), b.rematch(game_id));
    assert_eq!(ra.new_game_id, rb.new_game_id, "one new game");
    a.game(&ra.new_game_id).await
}

async fn resign(p: &Player, game_id: &str) {
    p.games
        .clone()
        .resign(p.req(pb::ResignRequest {
            game_id: game_id.to_owned(),
            ..Default::default()
        }))
        .await
        .expect("resign");
}

fn user(p: Option<&pb::Player>) -> String {
    p.map(|p| p.user_id.clone()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_001s_table_is_19x19_territory_komi_6_5_without_a_move_limit() {
    let (_service, host, friend) = service().await;
    let classic = pb::HouseRules {
        preset: pb::TablePreset::Classic as i32,
        ..Default::default()
    };
    let (game, black, white) = table(&host, &friend, classic).await;
    assert_eq!(game.board_size, 19);
    assert_eq!(game.komi, 6.5);
    assert_eq!(game.scoring, pb::Scoring::Territory as i32);
    assert_eq!(game.ruleset, "japanese");
    assert_eq!(game.seconds_per_move, 0);
    assert!(game.clock.is_none(), "no move limit");
    assert!(!game.keep_colors_on_rematch);
    let id = &game.game_id;
    black.play(id, 1, "D4").await.expect("D4");
    // Longer than the service's one-second clock: nobody loses on time.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    let waited = white.game(id).await;
    assert_eq!(waited.status, pb::GameStatus::Playing as i32);
    white.play(id, 2, "G7").await.expect("in no hurry");
    let sgf = black.sgf(id).await;
    for property in ["SZ[19]", "KM[6.5]", "RU[Japanese]"] {
        assert!(sgf.contains(property), "{property} in {sgf}");
    }
    assert!(!sgf.contains("TM["), "no move time in {sgf}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn komi_none_draws_an_equal_count_and_a_half_point_komi_never_does() {
    let (_service, host, friend) = service().await;
    for (komi, result) in [(0.0, "0"), (6.5, "W+6.5")] {
        let rules = pb::HouseRules {
            komi: Some(komi),
            seconds_per_move: Some(60),
            ..Default::default()
        };
        let (game, black, white) = table(&host, &friend, rules).await;
        assert_eq!(game.komi, komi);
        assert_eq!(game.scoring, pb::Scoring::Area as i32);
        assert_eq!(game.clock.map(|c| c.seconds_per_move), Some(60));
        let id = &game.game_id;
        // Black walls off columns A-D, White F-J; column E is nobody's:
        // 36 points each.
        let mut number = 0;
        for row in 1..=9 {
            for (player, column) in [(black, 'D'), (white, 'F')] {
                number += 1;
                let point = format!("{column}{row}");
                player.play(id, number, &point).await.expect("a wall");
            }
        }
        black.pass(id, number + 1).await.expect("pass");
        let over = white.pass(id, number + 2).await.expect("pass");
        let over = over.game.expect("game");
        let result_of = over.result.expect("counted");
        assert_eq!(result_of.text, result, "komi {komi}");
        let count = result_of.count.expect("a count");
        assert_eq!((count.black_points, count.white_points), (36, 36));
        if komi == 0.0 {
            assert_eq!(result_of.winner, pb::Color::Unspecified as i32, "jigo");
        }
        let sgf = black.sgf(id).await;
        let km = if komi == 0.0 { "KM[0]" } else { "KM[6.5]" };
        for property in [
            km,
            "RU[koPOSITIONALscoreAREAtaxNONEsui0]",
            "TM[0]OT[1x60 byo-yomi]",
        ] {
            assert!(sgf.contains(property), "{property} in {sgf}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rematches_keep_the_table_and_swap_colours_unless_the_host_said_not_to() {
    let (_service, host, friend) = service().await;
    for keep in [false, true] {
        let rules = pb::HouseRules {
            board_size: 13,
            komi: Some(0.0),
            seconds_per_move: Some(45),
            keep_colors_on_rematch: keep,
            ..Default::default()
        };
        let (first, _, _) = table(&host, &friend, rules).await;
        assert_eq!(first.keep_colors_on_rematch, keep);
        let mut before = first;
        for round in 1..=2 {
            resign(&host, &before.game_id).await;
            let next = rematch(&host, &friend, &before.game_id).await;
            assert_eq!(
                (next.board_size, next.komi, next.seconds_per_move),
                (13, 0.0, 45),
                "rematch {round} is at the same table"
            );
            assert_eq!(next.clock.map(|c| c.seconds_per_move), Some(45));
            assert_eq!(next.keep_colors_on_rematch, keep);
            let (was, now) = (user(before.black.as_ref()), user(next.black.as_ref()));
            if keep {
                assert_eq!(now, was, "rematch {round} keeps who plays Black");
            } else {
                assert_ne!(now, was, "rematch {round} swaps who plays Black");
            }
            before = next;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_nobody_could_play_is_refused_with_what_is_wrong() {
    let (_service, host, _friend) = service().await;
    for (rules, says) in [
        (
            pb::HouseRules {
                komi: Some(6.3),
                ..Default::default()
            },
            "komi 6.3 is not offered",
        ),
        (
            pb::HouseRules {
                seconds_per_move: Some(2),
                ..Default::default()
            },
            "2 seconds a move is not offered",
        ),
        (
            pb::HouseRules {
                board_size: 15,
                ..Default::default()
            },
            "board size 15 is not offered",
        ),
    ] {
        let refused = matches(&host)
            .create_challenge(host.req(pb::CreateChallengeRequest {
                rules: Some(rules),
                ..Default::default()
            }))
            .await
            .expect_err(says);
        assert_eq!(refused.code(), Code::InvalidArgument);
        assert!(refused.message().contains(says), "{}", refused.message());
    }
}

fn point(name: &str) -> pb::Point {
    let p = baduk::BoardSize::NINE
        .parse_point(name)
        .expect("test point");
    pb::Point {
        column: u32::from(p.col()),
        row: u32::from(p.row()),
    }
}

fn names(points: &[pb::Point]) -> Vec<String> {
    points
        .iter()
        .map(|p| {
            let column = b"ABCDEFGHJ"[p.column as usize] as char;
            format!("{column}{}", p.row + 1)
        })
        .collect()
}

async fn mark(p: &Player, game_id: &str, at: &str, dead: bool) -> pb::GameSnapshot {
    p.games
        .clone()
        .mark_dead_stones(p.req(pb::MarkDeadStonesRequest {
            game_id: game_id.to_owned(),
            point: Some(point(at)),
            dead,
        }))
        .await
        .expect("marked")
        .into_inner()
        .game
        .expect("the game")
}

async fn confirm(
    p: &Player,
    game_id: &str,
    marks_version: u32,
) -> Result<pb::GameSnapshot, tonic::Status> {
    p.games
        .clone()
        .confirm_count(p.req(pb::ConfirmCountRequest {
            game_id: game_id.to_owned(),
            marks_version,
        }))
        .await
        .map(|r| r.into_inner().game.expect("the game"))
}

/// A territory table on 9x9: Black's wall on column D, White's on E, a
/// white stone (B5) inside Black's side and a black one (H5) inside
/// White's. The count proposes both dead; Black disagrees about H5; White
/// goes back to play and captures it; the next count is agreed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_territory_game_is_counted_by_agreement_after_a_disagreement_and_more_play() {
    let (_service, host, friend) = service().await;
    let rules = pb::HouseRules {
        preset: pb::TablePreset::Classic as i32,
        board_size: 9,
        ..Default::default()
    };
    let (game, black, white) = table(&host, &friend, rules).await;
    let id = &game.game_id;
    assert_eq!(game.scoring, pb::Scoring::Territory as i32);
    let mut watching = watch(white, id).await;
    let mut number = 0;
    for row in 1..=9 {
        for (player, column) in [(black, 'D'), (white, 'E')] {
            number += 1;
            player
                .play(id, number, &format!("{column}{row}"))
                .await
                .expect("a wall");
        }
    }
    black.play(id, 19, "H5").await.expect("H5");
    white.play(id, 20, "B5").await.expect("B5");
    black.pass(id, 21).await.expect("pass");
    let counting = white.pass(id, 22).await.expect("pass").game.expect("game");
    assert_eq!(counting.status, pb::GameStatus::Playing as i32);
    assert_eq!(counting.to_move, pb::Color::Unspecified as i32);
    let open = counting.counting.expect("the count is open");
    assert_eq!(names(&open.dead_stones), ["B5", "H5"]);
    assert_eq!(names(&open.proposed), ["B5", "H5"]);
    assert_eq!(open.after_move, 22);
    let count = open.count.expect("a count");
    assert_eq!((count.black_points, count.white_points), (28, 37));
    // Moves wait until the count is settled.
    let refused = black.play(id, 23, "A1").await.expect_err("counting");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("being counted"),
        "{}",
        refused.message()
    );

    // White confirms; Black marks H5 alive, which withdraws it.
    let first_version = open.marks_version;
    let confirmed = confirm(white, id, first_version).await.expect("confirmed");
    assert!(confirmed.counting.expect("open").white_confirmed);
    let marked = mark(black, id, "H5", false).await;
    let marks = marked.counting.expect("open");
    assert_eq!(names(&marks.dead_stones), ["B5"]);
    assert!(!marks.white_confirmed);
    // White sees the mark as it is made.
    let marked = next_event(&mut watching, |k| {
        matches!(k, pb::game_event::Kind::DeadStonesMarked(_))
    })
    .await;
    let Some(pb::game_event::Kind::DeadStonesMarked(seen)) = marked.kind else {
        unreachable!("a mark was asked for");
    };
    assert_eq!(seen.by, pb::Color::Black as i32);
    assert_eq!(names(&seen.stones), ["H5"]);
    assert!(!seen.dead);
    let stale = confirm(white, id, first_version).await.expect_err("stale");
    assert_eq!(stale.code(), Code::FailedPrecondition);
    assert!(
        stale.message().contains("marks changed"),
        "{}",
        stale.message()
    );

    // White goes back to play (asked twice, one answer) and takes H5.
    for _ in 0..2 {
        let resumed = white
            .games
            .clone()
            .resume_play(white.req(pb::ResumePlayRequest {
                game_id: id.clone(),
                after_move: 22,
            }))
            .await
            .expect("back to play")
            .into_inner()
            .game
            .expect("game");
        assert!(resumed.counting.is_none());
        assert_eq!(resumed.to_move, pb::Color::Black as i32);
    }
    let mut number = 22;
    for w in ["H4", "H6", "G5", "J5"] {
        black.pass(id, number + 1).await.expect("pass");
        white.play(id, number + 2, w).await.expect("around H5");
        number += 2;
    }
    black.pass(id, number + 1).await.expect("pass");
    let again = white
        .pass(id, number + 2)
        .await
        .expect("pass")
        .game
        .expect("game");
    let open = again.counting.expect("a new count");
    assert_eq!(names(&open.dead_stones), ["B5"]);
    confirm(black, id, open.marks_version)
        .await
        .expect("Black agrees");
    let over = confirm(white, id, open.marks_version)
        .await
        .expect("White agrees");
    assert_eq!(over.status, pb::GameStatus::Finished as i32);
    let result = over.result.expect("counted");
    assert_eq!(result.reason, pb::EndReason::TwoPasses as i32);
    // Black: A-C, 27 points with B5 taken off, and the dead B5: 28. White:
    // F-J, 36 less its four stones around H5, and the prisoner H5: 33; with
    // komi 6.5, White by 11.5.
    let count = result.count.expect("a count");
    assert_eq!((count.black_points, count.white_points), (28, 33));
    assert_eq!(names(&count.dead_stones), ["B5"]);
    assert_eq!(result.text, "W+11.5");
    let sgf = black.sgf(id).await;
    for property in ["RE[W+11.5]", "RU[Japanese]", "KM[6.5]", "SZ[9]"] {
        assert!(sgf.contains(property), "{property} in {sgf}");
    }
}

/// The next event of `kind` on a watch stream, within ten seconds.
async fn next_event(
    stream: &mut tonic::Streaming<pb::WatchGameResponse>,
    wanted: impl Fn(&pb::game_event::Kind) -> bool,
) -> pb::GameEvent {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let message = stream.message().await.expect("stream").expect("open");
            if let Some(event) = message.event
                && event.kind.as_ref().is_some_and(&wanted)
            {
                return event;
            }
        }
    })
    .await
    .expect("the event comes")
}

async fn watch(p: &Player, game_id: &str) -> tonic::Streaming<pb::WatchGameResponse> {
    p.games
        .clone()
        .watch_game(p.req(pb::WatchGameRequest {
            game_id: game_id.to_owned(),
            after_seq: 0,
            changes: false,
        }))
        .await
        .expect("watching")
        .into_inner()
}

/// Seed 001's "If someone drops mid-game": a player who leaves has the
/// computer play their seat after the grace period (a second here), and
/// takes it back by coming back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_player_s_seat_is_played_by_the_computer_until_they_come_back() {
    let (_service, host, friend) = service().await;
    let rules = pb::HouseRules {
        preset: pb::TablePreset::Classic as i32,
        board_size: 9,
        ..Default::default()
    };
    let (game, black, white) = table(&host, &friend, rules).await;
    assert!(game.computer_stands_in, "seed 001's table has a stand-in");
    let id = &game.game_id;
    let mut black_sees = watch(black, id).await;
    let white_away = watch(white, id).await;
    black.play(id, 1, "D4").await.expect("D4");
    // White's only connection closes.
    drop(white_away);
    let seated = next_event(&mut black_sees, |k| {
        matches!(k, pb::game_event::Kind::StandInSeated(_))
    })
    .await;
    let shown = seated.snapshot.expect("snapshot");
    assert!(shown.white.is_some_and(|p| p.computer_standing_in));
    let reply = next_event(&mut black_sees, |k| {
        matches!(k, pb::game_event::Kind::MovePlayed(m) if m.r#move.as_ref().is_some_and(|m| m.number == 2))
    })
    .await;
    let Some(pb::game_event::Kind::MovePlayed(played)) = reply.kind else {
        unreachable!("a move was asked for");
    };
    let mv = played.r#move.expect("the move");
    assert_eq!(mv.color, pb::Color::White as i32);
    assert!(mv.by_stand_in, "the record shows the computer played it");

    // White comes back and has the seat again.
    let _white_back = watch(white, id).await;
    next_event(&mut black_sees, |k| {
        matches!(k, pb::game_event::Kind::StandInLeft(_))
    })
    .await;
    let next = 3;
    black
        .play(id, next, support::free_point(&black.game(id).await))
        .await
        .expect("Black's move");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let waiting = white.game(id).await;
    assert_eq!(
        waiting.move_count, 3,
        "the computer no longer plays for White"
    );
    assert_eq!(waiting.to_move, pb::Color::White as i32);
    assert!(
        waiting
            .white
            .as_ref()
            .is_some_and(|p| !p.computer_standing_in)
    );
    let own = white
        .play(id, 4, support::free_point(&waiting))
        .await
        .expect("White's own move");
    assert!(own.r#move.is_some_and(|m| !m.by_stand_in));
    let sgf = white.sgf(id).await;
    assert!(
        sgf.contains("C[played by the computer for"),
        "the SGF says which move the computer made: {sgf}"
    );
}

/// Ranked games keep seed 000's rule: the clock runs for a player who is
/// away, and no computer stands in even when asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ranked_game_never_has_a_stand_in() {
    let (service, host, friend) = service().await;
    let mut authority =
        ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient::new(
            support::internal(&format!("http://{}", service.authority)),
        );
    let seat = |p: &Player| internal::Seat {
        user_id: p.user_id.clone(),
        nickname: p.user_id.clone(),
        ai_level: 0,
        ..Default::default()
    };
    for ranked in [false, true] {
        let game = authority
            .create_game(internal::CreateGameRequest {
                board_size: 9,
                black: Some(seat(&host)),
                white: Some(seat(&friend)),
                seconds_per_move: 30,
                ranked,
                computer_stands_in: true,
                ..Default::default()
            })
            .await
            .expect("a game")
            .into_inner()
            .game
            .expect("snapshot");
        assert_eq!(game.computer_stands_in, !ranked, "ranked: {ranked}");
    }
}
