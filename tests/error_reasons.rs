//! Refusals carry a reason a program reads: a `google.rpc.ErrorInfo` in the
//! status details, listed in `docs/errors.md`, with the values its message
//! names, whichever service refused (the gateway, the authority, the
//! matchmaker) and over real gRPC through the gateway.

mod support;

use support::{documented_reason, embedded, sign_in, sqlite_memory, with_token};
use tonic::Code;
use tonic_types::StatusExt as _;
use ttakji_platform::bus::Bus;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_refusal_names_its_reason_and_the_values_it_speaks_of() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = game.game_id.clone();

    // The authority's refusals of a move.
    jin.play(&id, 1, "E5").await.expect("the first move");
    let computer = jin.wait_turn(&id, pb::Color::Black).await;
    let occupied = jin
        .play(&id, computer.move_count + 1, "E5")
        .await
        .expect_err("E5 is occupied");
    assert_eq!(occupied.code(), Code::FailedPrecondition);
    assert_eq!(documented_reason(&occupied), "ILLEGAL_MOVE_OCCUPIED");
    let info = occupied.get_details_error_info().expect("an ErrorInfo");
    assert_eq!(info.metadata.get("point").map(String::as_str), Some("E5"));
    assert_eq!(occupied.message(), "E5 is occupied", "the English stays");

    let stale = jin.play(&id, 1, "D4").await.expect_err("move 1 was played");
    assert_eq!(documented_reason(&stale), "MOVE_ALREADY_PLAYED");
    let expected = (computer.move_count + 1).to_string();
    assert_eq!(
        stale
            .get_details_error_info()
            .and_then(|i| i.metadata.get("expected").cloned()),
        Some(expected)
    );

    // Another player in this game.
    let mia = sign_in(&url, "mia").await;
    let stranger = mia.play(&id, 3, "D4").await.expect_err("not her game");
    assert_eq!(stranger.code(), Code::PermissionDenied);
    assert_eq!(documented_reason(&stranger), "NOT_A_PLAYER");

    // The gateway's: tokens, nicknames, house rules.
    let mut games = jin.games.clone();
    let no_token = games
        .get_game(pb::GetGameRequest {
            game_id: id.clone(),
            include_score_preview: false,
        })
        .await
        .expect_err("no token");
    assert_eq!(documented_reason(&no_token), "SIGN_IN_REQUIRED");
    let forged = games
        .get_game(with_token(
            pb::GetGameRequest {
                game_id: id.clone(),
                include_score_preview: false,
            },
            "not.a.token",
        ))
        .await
        .expect_err("a forged token");
    assert_eq!(documented_reason(&forged), "TOKEN_INVALID");

    let mut auth = AuthServiceClient::new(jin.channel.clone());
    let taken = auth
        .sign_in_guest(pb::SignInGuestRequest {
            nickname: "jin".to_owned(),
        })
        .await
        .expect_err("jin is taken");
    assert_eq!(taken.code(), Code::AlreadyExists);
    assert_eq!(documented_reason(&taken), "NICKNAME_TAKEN");
    let bad = auth
        .sign_in_guest(pb::SignInGuestRequest {
            nickname: "j".to_owned(),
        })
        .await
        .expect_err("too short");
    assert_eq!(documented_reason(&bad), "NICKNAME_INVALID");

    let mut matching = MatchServiceClient::new(jin.channel.clone());
    let komi = matching
        .create_challenge(jin.req(pb::CreateChallengeRequest {
            rules: Some(pb::HouseRules {
                komi: Some(6.3),
                ..Default::default()
            }),
            ..Default::default()
        }))
        .await
        .expect_err("komi 6.3");
    assert_eq!(documented_reason(&komi), "KOMI_NOT_OFFERED");

    // The matchmaker's.
    let missing = matching
        .accept_challenge(jin.req(pb::AcceptChallengeRequest {
            code: "ZZZZZZ".to_owned(),
        }))
        .await
        .expect_err("no such challenge");
    assert_eq!(missing.code(), Code::NotFound);
    assert_eq!(documented_reason(&missing), "CHALLENGE_NOT_FOUND");

    // A refusal that names no reason of its own has its code's.
    let unknown = jin
        .try_game("no-such-game-0000000000000000000")
        .await
        .expect_err("no game");
    let reason = documented_reason(&unknown);
    assert!(!reason.is_empty());
}
