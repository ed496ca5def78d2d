//! The service end to end in one process, over real gRPC sockets: gateway
//! and authority on port 0, an SQLite store and the in-process bus.

mod support;

use std::time::Duration;

use support::{
    Player, embedded, keys, play_to_the_end, recount, sign_in, sqlite_memory, with_token,
};
use tonic::Code;
use ttakji_platform::bus::Bus;
use ttakji_proto::v1 as pb;

async fn service() -> (support::Embedded, String) {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    (service, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_game_against_the_computer_ends_on_two_passes_with_the_server_count() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    assert_eq!(
        game.black.as_ref().map(|p| p.user_id.as_str()),
        Some(jin.user_id.as_str())
    );
    assert_eq!(
        game.white.as_ref().map(|p| p.ai_level),
        Some(pb::AiLevel::Easy as i32)
    );
    assert_eq!((game.board_size, game.komi, game.move_count), (9, 7.0, 0));

    let end = play_to_the_end(
        &jin,
        &game.game_id,
        pb::Color::Black,
        &["E5", "C3", "G7", "C7", "G3", "E3", "E7"],
    )
    .await;
    let result = end.result.expect("a finished game has a result");
    assert!(
        [
            pb::EndReason::TwoPasses as i32,
            pb::EndReason::MoveCap as i32
        ]
        .contains(&result.reason),
        "ended by {:?}",
        result.reason
    );
    let count = result.count.expect("a counted game has its count");
    // The record the server keeps, recounted here with the rules crate,
    // gives the same count and result.
    let sgf = jin.sgf(&game.game_id).await;
    let (score, recorded) = recount(&sgf);
    assert_eq!(
        (count.black_points, count.white_points),
        (score.black, score.white)
    );
    assert_eq!(count.dead_stones.len(), score.dead.len());
    assert_eq!(result.text, score.result().to_string());
    assert_eq!(recorded, result.text, "the SGF carries the result");
    assert!(end.passes_in_a_row >= 2 || result.reason == pb::EndReason::MoveCap as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_illegal_move_is_refused_with_its_reason_and_changes_nothing() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = &game.game_id;
    jin.play(id, 1, "E5").await.expect("legal");
    let before = jin.wait_turn(id, pb::Color::Black).await;

    let refused = jin.play(id, 3, "E5").await.expect_err("E5 is occupied");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("E5 is occupied"),
        "{}",
        refused.message()
    );
    let after = jin.game(id).await;
    assert_eq!(before, after, "the refused move changed the game");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_move_is_applied_once_and_a_stale_one_is_refused() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = &game.game_id;
    let first = jin.play(id, 1, "D4").await.expect("legal");
    let replay = jin
        .play(id, 1, "D4")
        .await
        .expect("a retry gets the same answer");
    assert_eq!(first.r#move, replay.r#move);
    let now = jin.wait_turn(id, pb::Color::Black).await;
    assert_eq!(now.move_count, 2, "the retry was applied a second time");
    let again = jin
        .play(id, 1, "D4")
        .await
        .expect("still the same answer later");
    assert_eq!(first.r#move, again.r#move);
    // The same move, and the game as it now stands: an answer older than
    // the computer's reply, already on the players' streams, would be a
    // stale read.
    assert_eq!(
        again.game.as_ref().map(|g| g.move_count),
        Some(now.move_count),
        "the game as it stands"
    );

    let stale = jin.play(id, 1, "F6").await.expect_err("move 1 was D4");
    assert_eq!(stale.code(), Code::FailedPrecondition);
    let ahead = jin.play(id, 9, "F6").await.expect_err("move 9 is not next");
    assert_eq!(ahead.code(), Code::FailedPrecondition);
    assert_eq!(jin.game(id).await, now);
    let sgf = jin.sgf(id).await;
    assert_eq!(sgf.matches(";B[").count(), 1, "one black move in {sgf}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_reconnects_after_event_n_gets_exactly_the_events_after_n() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = &game.game_id;
    let mut now = jin.game(id).await;
    for number in [1, 3, 5] {
        jin.play(id, number, support::free_point(&now))
            .await
            .expect("legal");
        now = jin.wait_turn(id, pb::Color::Black).await;
    }
    // Events: 1 started, then one per move: 7 in all by now.
    let latest = jin.game(id).await.event_seq;
    assert_eq!(latest, 7);

    let mut stream = jin
        .games
        .clone()
        .watch_game(jin.req(pb::WatchGameRequest {
            game_id: id.clone(),
            after_seq: 3,
            changes: false,
        }))
        .await
        .expect("watch")
        .into_inner();
    let mut seen = Vec::new();
    while seen.len() < 4 {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("events arrive")
            .expect("stream open")
            .and_then(|r| r.event)
            .expect("an event");
        seen.push(event.seq);
    }
    assert_eq!(seen, vec![4, 5, 6, 7]);
    // A stream cannot start after an event the game has not had.
    let ahead = jin
        .games
        .clone()
        .watch_game(jin.req(pb::WatchGameRequest {
            game_id: id.clone(),
            after_seq: latest + 1,
            changes: true,
        }))
        .await
        .expect_err("no event 8 yet");
    assert_eq!(ahead.code(), Code::InvalidArgument, "{ahead:?}");
    assert!(ahead.message().contains("7 events"), "{}", ahead.message());
    // Live events follow on the same stream: the move and the reply.
    jin.play(id, 7, support::free_point(&now))
        .await
        .expect("legal");
    for expected in [8, 9] {
        let event = tokio::time::timeout(Duration::from_secs(30), stream.message())
            .await
            .expect("live events arrive")
            .expect("stream open")
            .and_then(|r| r.event)
            .expect("an event");
        assert_eq!(event.seq, expected);
        assert!(matches!(
            event.kind,
            Some(pb::game_event::Kind::MovePlayed(_))
        ));
        assert_eq!(event.snapshot.map(|s| s.event_seq), Some(expected));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_and_strangers_are_refused_and_change_nothing() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = game.game_id.clone();
    let before = jin.game(&id).await;
    let play = |token: Option<String>| {
        let games = jin.games.clone();
        let id = id.clone();
        async move {
            let message = pb::PlayMoveRequest {
                game_id: id,
                move_number: 1,
                point: Some(pb::Point { column: 4, row: 4 }),
                ..Default::default()
            };
            let request = match token {
                Some(t) => with_token(message, &t),
                None => tonic::Request::new(message),
            };
            games
                .clone()
                .play_move(request)
                .await
                .expect_err("refused")
                .code()
        }
    };
    assert_eq!(play(None).await, Code::Unauthenticated);

    let mut claims = keys().verify(&jin.token).expect("our token");
    claims.exp = claims.iat.saturating_sub(10);
    claims.iat = claims.exp.saturating_sub(10);
    let expired = keys().sign(&claims).expect("sign");
    assert_eq!(play(Some(expired)).await, Code::Unauthenticated);

    let other = ttakji_platform::auth::TokenKeys::parse(
        "t1=a-different-secret-entirely",
        Duration::from_secs(60),
    )
    .expect("keys");
    let (forged, _) = other.issue(&jin.user_id, "jin", true).expect("sign");
    assert_eq!(play(Some(forged)).await, Code::Unauthenticated);

    let unsigned = {
        let parts: Vec<&str> = jin.token.split('.').collect();
        // {"alg":"none","typ":"JWT","kid":"t1"}
        format!(
            "eyJhbGciOiJub25lIiwidHlwIjoiSldUIiwia2lkIjoidDEifQ.{}.",
            parts[1]
        )
    };
    assert_eq!(play(Some(unsigned)).await, Code::Unauthenticated);

    let stranger = sign_in(&url, "stranger").await;
    assert_eq!(
        play(Some(stranger.token.clone())).await,
        Code::PermissionDenied
    );
    // Anyone signed in may watch; a stranger has no colour in the game.
    assert_eq!(
        stranger.game(&id).await,
        pb::GameSnapshot {
            your_color: pb::Color::Unspecified as i32,
            ..before.clone()
        }
    );
    assert_eq!(
        jin.game(&id).await,
        before,
        "a refused request changed the game"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_are_invalid_arguments() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let mut games = jin.games.clone();
    let start = |board_size: u32, color: i32, level: i32| {
        jin.req(pb::StartAiGameRequest {
            board_size,
            color,
            level,
            ..Default::default()
        })
    };
    for (size, color, level) in [(9, 1, 99), (9, 7, 1), (1000, 1, 1), (4, 1, 1)] {
        let status = games
            .start_ai_game(start(size, color, level))
            .await
            .expect_err("refused");
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "size {size} colour {color} level {level}: {status:?}"
        );
    }
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = &game.game_id;
    for (column, row) in [(9, 0), (0, 9), (4_000_000_000, 1)] {
        let status = games
            .play_move(jin.req(pb::PlayMoveRequest {
                game_id: id.clone(),
                move_number: 1,
                point: Some(pb::Point { column, row }),
                ..Default::default()
            }))
            .await
            .expect_err("off the board");
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "({column}, {row}): {status:?}"
        );
    }
    let status = games
        .play_move(jin.req(pb::PlayMoveRequest {
            game_id: id.clone(),
            move_number: 1,
            point: None,
            ..Default::default()
        }))
        .await
        .expect_err("no point");
    assert_eq!(status.code(), Code::InvalidArgument);
    let status = games
        .get_game(jin.req(pb::GetGameRequest {
            game_id: "../../etc/passwd".to_owned(),
            include_score_preview: false,
        }))
        .await
        .expect_err("not an id");
    assert_eq!(status.code(), Code::InvalidArgument);
    let status = games
        .get_game(jin.req(pb::GetGameRequest {
            game_id: "0123456789abcdef0123456789abcdef".to_owned(),
            include_score_preview: false,
        }))
        .await
        .expect_err("no such game");
    assert_eq!(status.code(), Code::NotFound);

    let mut auth =
        ttakji_proto::v1::auth_service_client::AuthServiceClient::new(support::channel(&url).await);
    let oversized = auth
        .sign_in_guest(pb::SignInGuestRequest {
            nickname: "x".repeat(200 * 1024),
        })
        .await
        .expect_err("oversized");
    assert_eq!(oversized.code(), Code::InvalidArgument, "{oversized:?}");
    for bad in ["", "a", "no spaces", "twenty-one-characters"] {
        let status = auth
            .sign_in_guest(pb::SignInGuestRequest {
                nickname: bad.to_owned(),
            })
            .await
            .expect_err("bad nickname");
        assert_eq!(status.code(), Code::InvalidArgument, "{bad:?}");
    }
    let unchanged = pb::GameSnapshot {
        server_time_unix_ms: 0,
        ..game.clone()
    };
    assert_eq!(jin.game(id).await, unchanged, "the game changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_against_the_computer_takes_back_the_move_and_the_reply() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = &game.game_id;
    jin.play(id, 1, "E5").await.expect("legal");
    let after_reply = jin.wait_turn(id, pb::Color::Black).await;
    assert_eq!(after_reply.move_count, 2);
    let undone = jin
        .games
        .clone()
        .undo_move(jin.req(pb::UndoMoveRequest {
            game_id: id.clone(),
            move_count: 2,
        }))
        .await
        .expect("undo")
        .into_inner()
        .game
        .expect("snapshot");
    assert_eq!(undone.move_count, 0);
    assert!(
        undone
            .stones
            .iter()
            .all(|&s| s == pb::Color::Unspecified as i32)
    );
    assert_eq!(undone.to_move, pb::Color::Black as i32);
    // The same request again refers to a position that is gone.
    let again = jin
        .games
        .clone()
        .undo_move(jin.req(pb::UndoMoveRequest {
            game_id: id.clone(),
            move_count: 2,
        }))
        .await
        .expect_err("stale undo");
    assert_eq!(again.code(), Code::FailedPrecondition);
    // Move 1 may be played again, elsewhere.
    jin.play(id, 1, "C3").await.expect("legal after undo");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resigning_ends_the_game_for_the_computer() {
    let (_service, url) = service().await;
    let jin: Player = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::White).await;
    let id = &game.game_id;
    jin.wait_turn(id, pb::Color::White).await;
    let resigned = jin
        .games
        .clone()
        .resign(jin.req(pb::ResignRequest {
            game_id: id.clone(),
            ..Default::default()
        }))
        .await
        .expect("resign")
        .into_inner()
        .game
        .expect("snapshot");
    let result = resigned.result.expect("result");
    assert_eq!(result.text, "B+R");
    assert_eq!(result.winner, pb::Color::Black as i32);
    assert_eq!(result.reason, pb::EndReason::Resignation as i32);
    let late = jin.play(id, 2, "E5").await.expect_err("over");
    assert_eq!(late.code(), Code::FailedPrecondition);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nicknames_are_unique_without_regard_to_case_and_a_renamed_player_keeps_the_old_one() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "Jin").await;
    let mut auth =
        ttakji_proto::v1::auth_service_client::AuthServiceClient::new(support::channel(&url).await);
    let taken = auth
        .sign_in_guest(pb::SignInGuestRequest {
            nickname: "jin".to_owned(),
        })
        .await
        .expect_err("taken");
    assert_eq!(taken.code(), Code::AlreadyExists, "{taken:?}");

    let other = sign_in(&url, "other").await;
    let clash = auth
        .change_nickname(other.req(pb::ChangeNicknameRequest {
            nickname: "JIN".to_owned(),
        }))
        .await
        .expect_err("taken");
    assert_eq!(clash.code(), Code::AlreadyExists);
    let bad = auth
        .change_nickname(other.req(pb::ChangeNicknameRequest {
            nickname: "no spaces".to_owned(),
        }))
        .await
        .expect_err("invalid");
    assert_eq!(bad.code(), Code::InvalidArgument);

    let renamed = auth
        .change_nickname(jin.req(pb::ChangeNicknameRequest {
            nickname: "jin-2".to_owned(),
        }))
        .await
        .expect("renamed")
        .into_inner();
    assert_eq!(
        keys().verify(&renamed.access_token).expect("token").name,
        "jin-2"
    );
    // The token from before the rename still works, under the new name.
    let game = jin.start(pb::ColorChoice::Black).await;
    assert_eq!(
        game.black.map(|p| p.nickname).as_deref(),
        Some("jin-2"),
        "a game started with the old token shows the account's name now"
    );
    // The old name stays the player's: nobody else appears under it.
    let kept =
        ttakji_proto::v1::auth_service_client::AuthServiceClient::new(support::channel(&url).await)
            .sign_in_guest(pb::SignInGuestRequest {
                nickname: "jin".to_owned(),
            })
            .await
            .expect_err("jin is still jin-2's");
    assert_eq!(kept.code(), tonic::Code::AlreadyExists);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_well_signed_token_for_an_account_that_does_not_exist_is_refused() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    // Signed with the deployment's own keys, for a subject never made.
    let ghost = ttakji_gateway::auth::issue(&support::keys(), "no-such-account", "ghost", true)
        .expect("signed")
        .access_token;
    let refused =
        ttakji_proto::v1::game_service_client::GameServiceClient::new(support::channel(&url).await)
            .start_ai_game(support::with_token(
                pb::StartAiGameRequest {
                    board_size: 9,
                    color: pb::ColorChoice::Black as i32,
                    level: pb::AiLevel::Easy as i32,
                    ..Default::default()
                },
                &ghost,
            ))
            .await
            .expect_err("refused");
    assert_eq!(refused.code(), Code::Unauthenticated, "{refused:?}");
    // A signed-in player's token is as good as ever.
    let jin = sign_in(&url, "jin").await;
    jin.start(pb::ColorChoice::Black).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_snapshot_says_whose_it_is_and_the_servers_time() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let kim = sign_in(&url, "kim").await;
    let lee = sign_in(&url, "lee").await;
    let now = || {
        i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("after 1970")
                .as_millis(),
        )
        .expect("ms")
    };
    let near_now = |t: i64| (now() - t).abs() < 5_000;

    let computer = kim.start(pb::ColorChoice::White).await;
    assert_eq!(computer.your_color, pb::Color::White as i32);
    assert!(
        near_now(computer.server_time_unix_ms),
        "{}",
        computer.server_time_unix_ms
    );

    let game = support::game_between(service.authority, &kim, &lee, 30, false).await;
    assert_eq!(
        kim.game(&game.game_id).await.your_color,
        pb::Color::Black as i32
    );
    assert_eq!(
        lee.game(&game.game_id).await.your_color,
        pb::Color::White as i32
    );
    // Someone who only watches has no colour, on the stream too.
    let watcher = sign_in(&url, "park").await;
    assert_eq!(
        watcher.game(&game.game_id).await.your_color,
        pb::Color::Unspecified as i32
    );
    let mut stream = watcher
        .games
        .clone()
        .watch_game(watcher.req(pb::WatchGameRequest {
            game_id: game.game_id.clone(),
            after_seq: 0,
            changes: false,
        }))
        .await
        .expect("watch")
        .into_inner();
    let first = stream
        .message()
        .await
        .expect("an event")
        .and_then(|m| m.event)
        .and_then(|e| e.snapshot)
        .expect("a snapshot");
    assert_eq!(first.your_color, pb::Color::Unspecified as i32);
    assert!(near_now(first.server_time_unix_ms));
    let played = lee
        .play(&game.game_id, 1, "E5")
        .await
        .expect_err("not White's turn");
    assert_eq!(played.code(), Code::FailedPrecondition);
    let moved = kim
        .play(&game.game_id, 1, "E5")
        .await
        .expect("Black's move")
        .game
        .expect("snapshot");
    assert_eq!(moved.your_color, pb::Color::Black as i32);
    assert_eq!(moved.to_move, pb::Color::White as i32, "whose turn it is");
}

/// A whole 19×19 game against Easy (seed 001: "the computer plays all three
/// sizes"): a weak person's moves scattered over the board, then passes.
/// The computer answers every move, never passes before the person does
/// and never resigns, and the game is counted as the record recounts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_19x19_game_against_easy_is_played_to_the_end() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = jin
        .games
        .clone()
        .start_ai_game(jin.req(pb::StartAiGameRequest {
            board_size: 19,
            color: pb::ColorChoice::Black as i32,
            level: pb::AiLevel::Easy as i32,
            ..Default::default()
        }))
        .await
        .expect("a 19x19 game")
        .into_inner()
        .game
        .expect("snapshot");
    assert_eq!(game.board_size, 19);
    let id = &game.game_id;
    // Points in a fixed scattered order (a stride coprime to 361).
    let mut order = (0..361u32).map(|i| (i * 97 + 41) % 361);
    let mut mine = 0;
    let end = loop {
        let now = jin.wait_turn(id, pb::Color::Black).await;
        if now.status == pb::GameStatus::Finished as i32 {
            break now;
        }
        let number = now.move_count + 1;
        let mut played = false;
        if mine < 60 {
            for i in order.by_ref() {
                let point = pb::Point {
                    column: i % 19,
                    row: i / 19,
                };
                let tried = jin
                    .games
                    .clone()
                    .play_move(jin.req(pb::PlayMoveRequest {
                        game_id: id.clone(),
                        move_number: number,
                        point: Some(point),
                        ..Default::default()
                    }))
                    .await;
                if tried.is_ok() {
                    played = true;
                    mine += 1;
                    break;
                }
            }
        }
        if !played {
            jin.pass(id, number).await.expect("a pass is always legal");
        }
    };
    let result = end.result.expect("a result");
    assert_eq!(result.reason, pb::EndReason::TwoPasses as i32, "{result:?}");
    let sgf = jin.sgf(id).await;
    assert!(sgf.contains("SZ[19]"), "{sgf}");
    let record = baduk::sgf::parse(&sgf).expect("the record reads back");
    let first_pass = |color: baduk::Color| {
        record
            .moves
            .iter()
            .position(|m| m.color == color && m.action == baduk::Action::Pass)
    };
    let person = first_pass(baduk::Color::Black).expect("the person passed");
    let computer = first_pass(baduk::Color::White).expect("the computer passed at the end");
    assert!(
        computer > person,
        "the computer passed at move {} before the person did at {}",
        computer + 1,
        person + 1
    );
    let computer_stones = record
        .moves
        .iter()
        .filter(|m| m.color == baduk::Color::White && m.action != baduk::Action::Pass)
        .count();
    assert!(
        computer_stones >= 60,
        "the computer answered every move: {computer_stones}"
    );
    let count = result.count.expect("a count");
    let (score, recorded) = recount(&sgf);
    assert_eq!(
        (count.black_points, count.white_points),
        (score.black, score.white)
    );
    assert_eq!(recorded, result.text);
}

/// A watcher that asks for changes gets the game whole once, then what
/// each event changed (and the game's end whole again), and rebuilds from
/// them the games a watcher of whole snapshots is sent: through a capture,
/// a pass and a resignation, and again from the middle of the game after
/// reconnecting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_changes_rebuilds_the_games_a_stream_of_snapshots_shows() {
    use prost::Message as _;
    let (service, url) = service().await;
    let kim = sign_in(&url, "kim").await;
    let lee = sign_in(&url, "lee").await;
    let game = support::game_between(service.authority, &kim, &lee, 30, false).await;
    let id = game.game_id.clone();
    let mut whole = kim.watch(&id, 0, false).await;
    let mut changed = kim.watch(&id, 0, true).await;
    // Black's E7 takes White's E6.
    let script = [
        (&kim, "E5"),
        (&lee, "E6"),
        (&kim, "D6"),
        (&lee, "A1"),
        (&kim, "F6"),
        (&lee, "A2"),
        (&kim, "E7"),
    ];
    for (n, (who, point)) in script.iter().enumerate() {
        who.play(&id, n as u32 + 1, point).await.expect("a move");
    }
    lee.pass(&id, 8).await.expect("a pass");
    lee.games
        .clone()
        .resign(lee.req(pb::ResignRequest {
            game_id: id.clone(),
            ..Default::default()
        }))
        .await
        .expect("White resigns");

    // Events: the start, seven moves, the pass, the resignation.
    let mut rebuilt: Option<pb::GameSnapshot> = None;
    let mut seqs = Vec::new();
    while seqs.last() != Some(&10) {
        let sent = support::next_taken(&mut whole, |m| m.event).await;
        let got = support::next_taken(&mut changed, |m| m.event).await;
        assert_eq!((got.seq, &got.kind), (sent.seq, &sent.kind));
        let snapshot = sent.snapshot.expect("a whole game in every event");
        let finished = matches!(got.kind, Some(pb::game_event::Kind::Finished(_)));
        match (&mut rebuilt, got.snapshot, got.change) {
            (None, Some(first), None) => rebuilt = Some(first),
            // The end of the game comes whole: it is taken as it is.
            (Some(_), Some(end), None) if finished => rebuilt = Some(end),
            (Some(game), None, Some(change)) => {
                if matches!(got.kind, Some(pb::game_event::Kind::MovePlayed(_))) && got.seq < 9 {
                    assert!(
                        change.encoded_len() * 3 < snapshot.encoded_len(),
                        "event {}: a move's change is {} bytes, the game {}",
                        got.seq,
                        change.encoded_len(),
                        snapshot.encoded_len()
                    );
                }
                ttakji_proto::changes::apply(game, &change).expect("the change fits");
            }
            (shown, s, c) => panic!(
                "event {}: the first is whole and the rest changes (had a game: {}, snapshot: {}, change: {})",
                got.seq,
                shown.is_some(),
                s.is_some(),
                c.is_some()
            ),
        }
        let game = rebuilt.as_mut().expect("rebuilt");
        // Each stream says the server's time as it sent the event.
        game.server_time_unix_ms = snapshot.server_time_unix_ms;
        assert_eq!(*game, snapshot, "event {}", got.seq);
        seqs.push(got.seq);
    }
    assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
    let last = rebuilt.expect("rebuilt");
    assert_eq!(last.status, pb::GameStatus::Finished as i32);
    assert_eq!(last.white_captures, 0);
    assert_eq!(last.black_captures, 1, "E6 was taken");

    // Coming back after event 5, the first event is whole again.
    let mut again = kim.watch(&id, 5, true).await;
    let sixth = support::next_taken(&mut again, |m| m.event).await;
    assert_eq!(sixth.seq, 6);
    assert!(sixth.snapshot.is_some() && sixth.change.is_none());
    let seventh = support::next_taken(&mut again, |m| m.event).await;
    assert!(seventh.snapshot.is_none() && seventh.change.is_some());
}
