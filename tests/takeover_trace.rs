//! A takeover is one trace: the shards an authority takes, and under them
//! each game it takes over from the store.

mod support;

use std::time::Duration;

use opentelemetry_sdk::trace::SpanData;
use support::{Collected, fresh_postgres, redis_url};
use ttakji_platform::authorities::Authorities;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::{self, ShutdownTrigger};
use ttakji_platform::store::Database;
use ttakji_platform::telemetry::{TelemetryConfig, init_with_exporter};
use ttakji_proto::internal::v1 as internal;

/// An authority sharing games through Redis under `namespace`.
async fn authority(db: &str, namespace: &str) -> (String, ShutdownTrigger) {
    let (trigger, shutdown) = shutdown::channel();
    let mut config = ttakji_authority::Config::new("127.0.0.1:0".parse().expect("address"));
    config.redis_url = Some(redis_url().to_owned());
    config.leases.namespace = namespace.to_owned();
    config.leases.lease_ms = 600;
    let db = Database::connect(db).await.expect("database");
    let app = ttakji_authority::App::build(config, db, Bus::in_process(), shutdown.clone())
        .await
        .expect("authority builds");
    let url = format!("http://{}", app.addr());
    shutdown.spawn(app.run_until_stopped());
    (url, trigger)
}

fn game_id_of(span: &SpanData) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == "game_id")
        // Recorded with Debug: a string comes quoted.
        .map(|kv| kv.value.to_string().trim_matches('"').to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_games_of_shards_taken_over_are_loaded_in_one_trace() {
    let collected = Collected::default();
    let guard =
        init_with_exporter(&TelemetryConfig::default(), collected.clone()).expect("telemetry");
    let db = fresh_postgres().await;
    let namespace = format!("test-{}", uuid::Uuid::new_v4().simple());

    // One authority makes three games being played, then stops (handing
    // its shards back).
    let (first, stop_first) = authority(&db, &namespace).await;
    let router = Authorities::new(&first).expect("url");
    let seat = |id: &str| internal::Seat {
        user_id: id.to_owned(),
        nickname: id.to_owned(),
        ai_level: 0,
        ..Default::default()
    };
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id = uuid::Uuid::new_v4().simple().to_string();
        router
            .ask(
                internal::CreateGameRequest {
                    board_size: 9,
                    ruleset: String::new(),
                    black: Some(seat("b")),
                    white: Some(seat("w")),
                    seconds_per_move: 60,
                    game_id: id.clone(),
                    ranked: false,
                    ..Default::default()
                },
                |mut c, r| async move { c.create_game(r).await },
            )
            .await
            .expect("created");
        ids.push(id);
    }
    stop_first.trigger();
    assert_eq!(stop_first.completed(Duration::from_secs(10)).await, 0);

    // The next one takes every shard at once, and with them the games,
    // nobody asking for them.
    let (_second, _stop_second) = authority(&db, &namespace).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    guard.flush();

    let spans = collected.0.lock().expect("spans").clone();
    let taken: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "take_over" && game_id_of(s).is_some_and(|g| ids.contains(&g)))
        .collect();
    assert_eq!(taken.len(), 3, "each game is taken over once, unasked");
    let trace = taken[0].span_context.trace_id();
    assert!(
        taken.iter().all(|s| s.span_context.trace_id() == trace),
        "the games are taken over in one trace"
    );
    assert!(
        spans
            .iter()
            .any(|s| s.name == "takeover" && s.span_context.trace_id() == trace),
        "the trace is the takeover's"
    );
}
