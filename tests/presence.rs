//! Presence across gateways as processes over Redis: each player watches
//! through their own gateway; a goodbye is seen at once, a gateway killed
//! without one makes its player count as gone within the timeout, and an
//! idle game sends nothing.

mod support;

use std::time::{Duration, Instant};

use support::{Player, TOKEN_KEYS, fresh_postgres, redis_url, sign_in, spawn};
use ttakji_platform::authorities::Authorities;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

fn gateway(db: &str, authority: &str) -> support::Process {
    spawn(&[
        "gateway",
        "--database-url",
        db,
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--authority-url",
        authority,
        "--redis-url",
        redis_url(),
        "--token-keys",
        TOKEN_KEYS,
    ])
}

async fn watch(player: &Player, game_id: &str) -> tonic::Streaming<pb::WatchGameResponse> {
    player
        .games
        .clone()
        .watch_game(player.req(pb::WatchGameRequest {
            game_id: game_id.to_owned(),
            after_seq: 0,
            changes: false,
        }))
        .await
        .expect("watching")
        .into_inner()
}

/// The next presence on a stream within `within`, if any.
async fn next_presence(
    stream: &mut tonic::Streaming<pb::WatchGameResponse>,
    within: Duration,
) -> Option<pb::Presence> {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        match tokio::time::timeout(left, stream.message()).await {
            Ok(Ok(Some(message))) => {
                if let Some(p) = message.presence {
                    return Some(p);
                }
            }
            Ok(_) => panic!("the stream ended"),
            Err(_) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_whose_gateway_dies_counts_as_gone_and_an_idle_game_sends_nothing() {
    let db = fresh_postgres().await;
    let authority = support::authority_process(&db);
    let authority_url = format!("http://{}", authority.addr);
    let near = gateway(&db, &authority_url);
    let far = gateway(&db, &authority_url);
    let kim = sign_in(&format!("http://{}", near.addr), "kim").await;
    let lee = sign_in(&format!("http://{}", far.addr), "lee").await;
    let seat = |p: &Player| internal::Seat {
        user_id: p.user_id.clone(),
        nickname: "p".into(),
        ai_level: 0,
        ..Default::default()
    };
    let router = Authorities::new(&authority_url)
        .expect("url")
        .with_service_key(Some(support::service_key()));
    let game = support::eventually(Duration::from_secs(10), || {
        let router = router.clone();
        let request = internal::CreateGameRequest {
            board_size: 9,
            ruleset: String::new(),
            black: Some(seat(&kim)),
            white: Some(seat(&lee)),
            seconds_per_move: 600,
            game_id: String::new(),
            ranked: false,
            ..Default::default()
        };
        async move {
            router
                .ask(request, |mut c, r| async move { c.create_game(r).await })
                .await
        }
    })
    .await
    .into_inner()
    .game
    .expect("game");
    let id = game.game_id;

    let mut lee_view = watch(&lee, &id).await;
    let mut kim_view = watch(&kim, &id).await;
    // Each learns of the other once, whoever came first.
    let seen = next_presence(&mut lee_view, Duration::from_secs(5))
        .await
        .expect("lee is told kim came");
    assert_eq!(
        (seen.user_id.as_str(), seen.connected),
        (kim.user_id.as_str(), true)
    );
    assert!(
        seen.gateway_id.is_empty(),
        "gateway ids stay between gateways"
    );
    let seen = next_presence(&mut kim_view, Duration::from_secs(5))
        .await
        .expect("kim learns lee is here");
    assert_eq!(
        (seen.user_id.as_str(), seen.connected),
        (lee.user_id.as_str(), true)
    );

    // Nothing changes: nothing arrives.
    assert_eq!(
        next_presence(&mut lee_view, Duration::from_secs(3)).await,
        None,
        "an idle game sends no presence"
    );

    // Kim's gateway dies without a goodbye: Lee is told within the timeout.
    let killed = Instant::now();
    near.kill();
    let seen = next_presence(&mut lee_view, Duration::from_secs(10))
        .await
        .expect("lee is told kim is gone");
    assert_eq!(
        (seen.user_id.as_str(), seen.connected),
        (kim.user_id.as_str(), false)
    );
    let noticed = killed.elapsed();
    assert!(
        noticed >= Duration::from_secs(3),
        "told after {noticed:?}: too soon to be the gateway's silence"
    );
    drop(kim_view);
}
