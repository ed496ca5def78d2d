//! Games against a computer that thinks in the player's client: the player
//! submits the computer's moves (`for_computer`), the authority checks them
//! like any other and never thinks for that seat; the server's own engine
//! is limited per player. End to end in one process, over real gRPC.

mod support;

use std::time::Duration;

use support::{Player, embedded, sign_in, sqlite_memory};
use tonic::Code;
use ttakji_platform::bus::Bus;
use ttakji_platform::refusal::RETRY_AFTER_HEADER;
use ttakji_proto::v1 as pb;

async fn service() -> (support::Embedded, String) {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    (service, url)
}

async fn start(player: &Player, engine: pb::AiEngine) -> Result<pb::GameSnapshot, tonic::Status> {
    player
        .games
        .clone()
        .start_ai_game(player.req(pb::StartAiGameRequest {
            board_size: 9,
            color: pb::ColorChoice::Black as i32,
            level: pb::AiLevel::Hard as i32,
            engine: engine as i32,
        }))
        .await
        .map(|r| r.into_inner().game.unwrap_or_default())
}

async fn play_for_computer(
    player: &Player,
    game_id: &str,
    number: u32,
    point: &str,
) -> Result<pb::PlayMoveResponse, tonic::Status> {
    player.play_as(game_id, number, point, true).await
}

async fn set_engine(
    player: &Player,
    game_id: &str,
    engine: pb::AiEngine,
) -> Result<pb::GameSnapshot, tonic::Status> {
    player
        .games
        .clone()
        .set_ai_engine(player.req(pb::SetAiEngineRequest {
            game_id: game_id.to_owned(),
            engine: engine as i32,
        }))
        .await
        .map(|r| r.into_inner().game.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_player_plays_the_computers_moves_and_the_server_never_thinks_for_it() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = start(&jin, pb::AiEngine::Client).await.expect("a game");
    let id = game.game_id.clone();
    let white = game.white.expect("a computer seat");
    assert_eq!(white.ai_engine, pb::AiEngine::Client as i32);
    assert_eq!(white.ai_level, pb::AiLevel::Hard as i32);
    assert!(
        !game.ranked,
        "a game whose computer the client runs is never ranked"
    );
    jin.play(&id, 1, "E5").await.expect("E5");
    // The server leaves the computer's turn to the client.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waiting = jin.game(&id).await;
    assert_eq!(waiting.move_count, 1);
    assert_eq!(waiting.to_move, pb::Color::White as i32);
    // A stranger may not play it, nor may the player out of turn.
    let stranger = sign_in(&url, "mallory").await;
    let refused = play_for_computer(&stranger, &id, 2, "C3")
        .await
        .expect_err("a stranger");
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    let refused = play_for_computer(&jin, &id, 2, "E5")
        .await
        .expect_err("occupied");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(
        refused.message().contains("occupied"),
        "{}",
        refused.message()
    );
    // The computer's move from its player, once, however often it is sent.
    let played = play_for_computer(&jin, &id, 2, "C3").await.expect("C3");
    assert_eq!(
        played.r#move.map(|m| m.color),
        Some(pb::Color::White as i32)
    );
    let again = play_for_computer(&jin, &id, 2, "C3")
        .await
        .expect("a retry");
    assert_eq!(again.game.map(|g| g.move_count), Some(2));
    let refused = play_for_computer(&jin, &id, 3, "D4")
        .await
        .expect_err("Black's turn");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    // Undo works as against the server's computer.
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
    // The record names the level and where it thought.
    let sgf = jin.sgf(&id).await;
    assert!(sgf.contains("PW[Hard AI]"), "{sgf}");
    assert!(
        sgf.contains("GC[Hard AI thought in the player's client, not on the server.]"),
        "{sgf}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_for_a_computer_the_server_runs_are_refused() {
    let (service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let game = start(&jin, pb::AiEngine::Unspecified)
        .await
        .expect("a game");
    let white = game.white.expect("a computer seat");
    assert_eq!(
        white.ai_engine,
        pb::AiEngine::Server as i32,
        "a client that does not say gets the server's engine"
    );
    jin.play(&game.game_id, 1, "E5").await.expect("E5");
    let refused = play_for_computer(&jin, &game.game_id, 2, "C3")
        .await
        .expect_err("the server thinks here");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(
        refused.message().contains("thinks on the server"),
        "{}",
        refused.message()
    );
    // And the server does think: its reply comes.
    let replied = jin.wait_turn(&game.game_id, pb::Color::Black).await;
    assert_eq!(replied.move_count, 2);
    // Between two people there is no computer to play for.
    let (a, b) = (sign_in(&url, "ana").await, sign_in(&url, "bo").await);
    let created = support::game_between(service.authority, &a, &b, 0, false).await;
    let refused = play_for_computer(&a, &created.game_id, 1, "E5")
        .await
        .expect_err("no computer");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_engine_is_limited_per_player_with_a_retry_hint() {
    let (_service, url) = service().await;
    let jin = sign_in(&url, "jin").await;
    let limit = ttakji_gateway::limits::SERVER_AI_GAMES;
    for _ in 0..limit {
        start(&jin, pb::AiEngine::Server)
            .await
            .expect("within the limit");
    }
    let refused = start(&jin, pb::AiEngine::Server)
        .await
        .expect_err("over the limit");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert_eq!(support::documented_reason(&refused), "SERVER_AI_LIMIT");
    assert!(
        refused.message().contains("try again in"),
        "{}",
        refused.message()
    );
    let hint: u64 = refused
        .metadata()
        .get(RETRY_AFTER_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("a retry hint in milliseconds");
    assert!(hint >= 1_000, "{hint} ms");
    // The browser's engine costs the server nothing: not limited.
    let client = start(&jin, pb::AiEngine::Client)
        .await
        .expect("a client game");
    // Moving its thinking to the server counts against the limit too, and
    // changes nothing when refused.
    let refused = set_engine(&jin, &client.game_id, pb::AiEngine::Server)
        .await
        .expect_err("over the limit");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    let unchanged = jin.game(&client.game_id).await;
    assert_eq!(
        unchanged.white.map(|w| w.ai_engine),
        Some(pb::AiEngine::Client as i32)
    );
    // Another player has a limit of their own, and may move a game's
    // thinking to the server (the page's engine did not load) and back.
    let ana = sign_in(&url, "ana").await;
    let theirs = start(&ana, pb::AiEngine::Client).await.expect("a game");
    ana.play(&theirs.game_id, 1, "E5").await.expect("E5");
    let moved = set_engine(&ana, &theirs.game_id, pb::AiEngine::Server)
        .await
        .expect("to the server");
    assert_eq!(
        moved.white.map(|w| w.ai_engine),
        Some(pb::AiEngine::Server as i32)
    );
    let replied = ana.wait_turn(&theirs.game_id, pb::Color::Black).await;
    assert_eq!(replied.move_count, 2, "the server thinks for it now");
    let refused = set_engine(&jin, &theirs.game_id, pb::AiEngine::Client)
        .await
        .expect_err("not jin's game");
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    let refused = set_engine(&ana, &theirs.game_id, pb::AiEngine::Unspecified)
        .await
        .expect_err("which engine?");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
}
