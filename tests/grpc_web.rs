//! Browsers' way in: gRPC-web over plain HTTP/1.1 on the gateway's own
//! port, as a browser's `fetch` sends it, against `ttakji serve` as a
//! process: a unary call in binary and in text (base64) framing, a server
//! stream (`WatchGame`) that carries a move as it is played, errors in the
//! trailers, and CORS for the configured origin only.

mod support;

use std::time::Duration;

use base64::Engine as _;
use prost::Message as _;
use support::grpc_web::{Answer, frame, http1};
use ttakji_proto::v1 as pb;

const ORIGIN: &str = "https://play.example";

/// A unary gRPC-web call in binary framing, read to its trailers.
async fn call(
    addr: std::net::SocketAddr,
    path: &str,
    token: Option<&str>,
    message: &impl prost::Message,
) -> Answer {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST {path} HTTP/1.1\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n{auth}"
    );
    http1(addr, &head, &frame(0, &message.encode_to_vec()), |a| {
        a.grpc_status().is_some()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_signs_in_plays_and_watches_over_grpc_web_on_http1() {
    let dir = std::env::temp_dir().join(format!("ttakji-web-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    let server = support::serve_on(&db, &["--web-origins", ORIGIN]);
    let addr = server.addr;

    // Sign in, binary framing.
    let signed = call(
        addr,
        "/ttakji.v1.AuthService/SignInGuest",
        None,
        &pb::SignInGuestRequest {
            nickname: "webkim".to_owned(),
        },
    )
    .await;
    assert_eq!(signed.status, 200);
    assert_eq!(signed.grpc_status().as_deref(), Some("0"), "{signed:?}");
    let (_, data) = signed.frames().into_iter().next().expect("a data frame");
    let me = pb::SignInGuestResponse::decode(data.as_slice()).expect("the answer");
    assert!(!me.access_token.is_empty());

    // Text framing (base64), as browsers without binary streaming use it.
    let body = base64::engine::general_purpose::STANDARD.encode(frame(
        0,
        &pb::StartAiGameRequest {
            board_size: 9,
            color: pb::ColorChoice::Black as i32,
            level: pb::AiLevel::Easy as i32,
            ..Default::default()
        }
        .encode_to_vec(),
    ));
    let head = format!(
        "POST /ttakji.v1.GameService/StartAiGame HTTP/1.1\r\nContent-Type: application/grpc-web-text\r\nAccept: application/grpc-web-text\r\nX-Grpc-Web: 1\r\nAuthorization: Bearer {}\r\n",
        me.access_token
    );
    let started = http1(addr, &head, body.as_bytes(), |a| a.grpc_status().is_some()).await;
    assert_eq!(started.grpc_status().as_deref(), Some("0"), "{started:?}");
    let (_, data) = started.frames().into_iter().next().expect("a data frame");
    let game = pb::StartAiGameResponse::decode(data.as_slice())
        .expect("the answer")
        .game
        .expect("a game");

    // A stream: WatchGame from the start carries the game's first event,
    // then the move about to be played.
    let watching = {
        let head = format!(
            "POST /ttakji.v1.GameService/WatchGame HTTP/1.1\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\nAuthorization: Bearer {}\r\n",
            me.access_token
        );
        let body = frame(
            0,
            &pb::WatchGameRequest {
                game_id: game.game_id.clone(),
                after_seq: 0,
                changes: false,
            }
            .encode_to_vec(),
        );
        tokio::spawn(async move {
            http1(addr, &head, &body, |a| {
                a.frames().iter().any(|(flag, data)| {
                    *flag == 0
                        && pb::WatchGameResponse::decode(data.as_slice())
                            .ok()
                            .and_then(|m| m.event)
                            .and_then(|e| e.snapshot)
                            .is_some_and(|s| s.move_count >= 1)
                })
            })
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let played = call(
        addr,
        "/ttakji.v1.GameService/PlayMove",
        Some(&me.access_token),
        &pb::PlayMoveRequest {
            game_id: game.game_id.clone(),
            move_number: 1,
            point: Some(pb::Point { column: 4, row: 4 }),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(played.grpc_status().as_deref(), Some("0"), "{played:?}");
    let watched = watching.await.expect("the watcher");
    let seen = watched
        .frames()
        .iter()
        .filter(|(flag, _)| *flag == 0)
        .filter_map(|(_, d)| pb::WatchGameResponse::decode(d.as_slice()).ok())
        .filter_map(|m| m.event.and_then(|e| e.snapshot))
        .map(|s| s.move_count)
        .max();
    assert!(seen >= Some(1), "the stream carried the move: {watched:?}");

    // An error is a status in the trailers, with its message: a move
    // numbered far ahead is FAILED_PRECONDITION.
    let refused = call(
        addr,
        "/ttakji.v1.GameService/PlayMove",
        Some(&me.access_token),
        &pb::PlayMoveRequest {
            game_id: game.game_id.clone(),
            move_number: 9,
            point: Some(pb::Point { column: 4, row: 4 }),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(refused.grpc_status().as_deref(), Some("9"), "{refused:?}");
    assert!(
        refused
            .trailer("grpc-message")
            .is_some_and(|m| m.contains("is%20not%20next")),
        "{refused:?}"
    );
    let unauthenticated = call(
        addr,
        "/ttakji.v1.GameService/GetGame",
        None,
        &pb::GetGameRequest {
            game_id: game.game_id.clone(),
            include_score_preview: false,
        },
    )
    .await;
    assert_eq!(
        unauthenticated.grpc_status().as_deref(),
        Some("16"),
        "UNAUTHENTICATED: {unauthenticated:?}"
    );

    // CORS: the configured origin may call; another may not.
    let preflight = |origin: &str| {
        format!(
            "OPTIONS /ttakji.v1.AuthService/SignInGuest HTTP/1.1\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type,x-grpc-web,authorization\r\n"
        )
    };
    let allowed = http1(addr, &preflight(ORIGIN), b"", |_| true).await;
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some(ORIGIN),
        "{allowed:?}"
    );
    assert!(
        allowed
            .header("access-control-allow-headers")
            .is_some_and(|h| h.contains("authorization")),
        "{allowed:?}"
    );
    let other = http1(addr, &preflight("https://elsewhere.example"), b"", |_| true).await;
    assert_eq!(
        other.header("access-control-allow-origin"),
        None,
        "{other:?}"
    );
    let head = format!(
        "POST /ttakji.v1.AuthService/SignInGuest HTTP/1.1\r\nOrigin: {ORIGIN}\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n"
    );
    let body = frame(
        0,
        &pb::SignInGuestRequest {
            nickname: "weblee".to_owned(),
        }
        .encode_to_vec(),
    );
    let cross = http1(addr, &head, &body, |a| a.grpc_status().is_some()).await;
    assert_eq!(cross.grpc_status().as_deref(), Some("0"), "{cross:?}");
    assert_eq!(cross.header("access-control-allow-origin"), Some(ORIGIN));
    assert!(
        cross
            .header("access-control-expose-headers")
            .is_some_and(|h| h.contains("grpc-status") && h.contains("grpc-message")),
        "the page can read the status: {cross:?}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
