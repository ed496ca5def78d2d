//! One move is one trace: from the player's call at the gateway, across the
//! gRPC hop to the authority and its write to the store, to the event that
//! reaches a watcher through the bus.

mod support;

use std::time::Duration;

use opentelemetry::trace::TraceId;
use opentelemetry_sdk::trace::SpanData;
use support::{Collected, embedded, sign_in, sqlite_memory};
use ttakji_platform::bus::Bus;
use ttakji_platform::telemetry::{TelemetryConfig, init_with_exporter};
use ttakji_proto::v1 as pb;

/// The value of the attribute `key` on `span`, as text.
fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_is_one_trace_from_the_call_through_the_authority_and_the_bus_to_the_watcher() {
    let collected = Collected::default();
    let guard =
        init_with_exporter(&TelemetryConfig::default(), collected.clone()).expect("telemetry");
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let jin = sign_in(&format!("http://{}", service.gateway), "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let mut stream = jin
        .games
        .clone()
        .watch_game(jin.req(pb::WatchGameRequest {
            game_id: game.game_id.clone(),
            after_seq: game.event_seq,
            changes: false,
        }))
        .await
        .expect("watch")
        .into_inner();
    jin.play(&game.game_id, 1, "E5").await.expect("legal");
    let event = tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .expect("the event arrives")
        .expect("stream open")
        .and_then(|r| r.event)
        .expect("an event");
    assert_eq!(event.seq, game.event_seq + 1);
    tokio::time::sleep(Duration::from_millis(200)).await;
    guard.flush();

    let spans = collected.0.lock().expect("spans").clone();
    let trace_of = |rpc: &str| -> TraceId {
        spans
            .iter()
            .find(|s| {
                s.name == rpc && attribute(s, "rpc.method").as_deref() == rpc.rsplit('/').next()
            })
            .unwrap_or_else(|| panic!("no server span for {rpc}"))
            .span_context
            .trace_id()
    };
    let play = trace_of("ttakji.v1.GameService/PlayMove");
    assert_eq!(
        trace_of("ttakji.internal.v1.AuthorityService/SubmitAction"),
        play,
        "the authority's span is not in the caller's trace"
    );
    // The calls of the move path name the game, the move and (at the
    // authority) the player on their own spans.
    let on_call = |rpc: &str, key: &str| -> Option<String> {
        spans
            .iter()
            .find(|s| s.name == rpc)
            .and_then(|s| attribute(s, key))
    };
    for rpc in [
        "ttakji.v1.GameService/PlayMove",
        "ttakji.internal.v1.AuthorityService/SubmitAction",
    ] {
        assert_eq!(on_call(rpc, "game_id"), Some(game.game_id.clone()), "{rpc}");
        assert_eq!(on_call(rpc, "move_number").as_deref(), Some("1"), "{rpc}");
    }
    assert_eq!(
        on_call(
            "ttakji.internal.v1.AuthorityService/SubmitAction",
            "user_id"
        ),
        Some(jin.user_id.clone())
    );
    let in_trace = |name: &str| {
        spans
            .iter()
            .any(|s| s.name == name && s.span_context.trace_id() == play)
    };
    assert!(
        in_trace("apply"),
        "the store write is not in the move's trace"
    );
    assert!(
        in_trace("publish"),
        "the bus publish is not in the move's trace"
    );
    assert!(
        in_trace("watch.event"),
        "the watcher's delivery is not in the move's trace"
    );
    drop(service);
}
