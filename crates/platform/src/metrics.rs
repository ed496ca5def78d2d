//! The Prometheus endpoint: one recorder per process, every metric the
//! services record described in one catalog ([`CATALOG`]), and a `/metrics`
//! listener per service that renders them (GET and HEAD).
//!
//! Names follow Prometheus's conventions: the unit in the name
//! (`_seconds`), `_total` on counters, labels in `snake_case`.

use std::net::SocketAddr;
use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::shutdown::Shutdown;

/// What a metric is, as Prometheus types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// Every metric a service records: its name, kind and help text. A metric
/// recorded under a name not listed here has no `# HELP` line, which the
/// tests refuse.
pub const CATALOG: &[(&str, Kind, &str)] = &[
    // Every server's calls (crate::observed).
    (
        "rpc_server_calls_total",
        Kind::Counter,
        "gRPC calls answered, by service, method and status code",
    ),
    (
        "rpc_server_call_duration_seconds",
        Kind::Histogram,
        "Time from a gRPC call's arrival to its end (for a stream, its whole life), by service and method",
    ),
    (
        "grpc_unknown_rewritten_total",
        Kind::Counter,
        "Answers from a broken connection to a service behind (UNKNOWN, CANCELLED, an HTTP/2 reset) sent as UNAVAILABLE",
    ),
    (
        "ttakji_authority_retries_total",
        Kind::Counter,
        "Calls to the authorities retried after a refusal or a lost owner, by outcome (answered, gave_up)",
    ),
    (
        "ttakji_sqlite_batch_writes",
        Kind::Histogram,
        "Writes committed together in one SQLite transaction",
    ),
    (
        "ttakji_postgres_batch_moves",
        Kind::Histogram,
        "Moves of different games written together in one PostgreSQL statement and commit",
    ),
    // The authority.
    (
        "ttakji_live_games",
        Kind::Gauge,
        "Games being played that this authority holds",
    ),
    (
        "ttakji_moves_accepted_total",
        Kind::Counter,
        "Player actions accepted and stored (moves, passes, resignations, undos, draws)",
    ),
    (
        "ttakji_moves_refused_total",
        Kind::Counter,
        "Player actions refused, by reason",
    ),
    (
        "ttakji_move_handling_seconds",
        Kind::Histogram,
        "Time a game's actor takes to check, store and answer one action",
    ),
    (
        "ttakji_ai_think_seconds",
        Kind::Histogram,
        "Time the server's computer player thinks per move, by level",
    ),
    (
        "ttakji_ai_games_started_total",
        Kind::Counter,
        "Games against the computer started, by where it thinks (server, client)",
    ),
    (
        "ttakji_ai_engine_switches_total",
        Kind::Counter,
        "Games against the computer that moved where it thinks, by destination",
    ),
    (
        "ttakji_fenced_actions_total",
        Kind::Counter,
        "Writes refused because another authority took the game over",
    ),
    (
        "ttakji_game_takeovers_total",
        Kind::Counter,
        "Games being played that this authority loaded from the store and took over",
    ),
    (
        "ttakji_takeover_seconds",
        Kind::Histogram,
        "Time to load and take over the games of a shard",
    ),
    (
        "ttakji_lease_renewals_total",
        Kind::Counter,
        "Shard lease renewals, by outcome (renewed, lost, failed)",
    ),
    (
        "ttakji_shards_owned",
        Kind::Gauge,
        "Game shards this authority holds the lease of",
    ),
    // The matchmaker.
    (
        "ttakji_tickets_waiting",
        Kind::Gauge,
        "Queue tickets waiting for an opponent, by pool",
    ),
    (
        "ttakji_match_wait_seconds",
        Kind::Histogram,
        "Time a player waited in the queue before a game",
    ),
    (
        "ttakji_ai_fallbacks_total",
        Kind::Counter,
        "Queued players given a computer opponent after the wait",
    ),
    (
        "ttakji_challenges_total",
        Kind::Counter,
        "Friend challenges, by event (made, joined)",
    ),
    // The gateway.
    (
        "ttakji_watchers",
        Kind::Gauge,
        "Open game streams (players and spectators)",
    ),
    (
        "ttakji_tokens_refused_total",
        Kind::Counter,
        "Access tokens refused, by reason",
    ),
    (
        "ttakji_tickets_requeued_total",
        Kind::Counter,
        "Queue tickets the matchmaker lost and the gateway queued again",
    ),
    (
        "ttakji_google_key_fetches_total",
        Kind::Counter,
        "Fetches of Google's sign-in keys",
    ),
    (
        "ttakji_guests_removed_total",
        Kind::Counter,
        "Guest accounts removed after all their tokens expired",
    ),
    // The ratings service.
    (
        "ttakji_rating_updates_total",
        Kind::Counter,
        "Ranked games whose rating change was applied",
    ),
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first use with every metric of the
/// [`CATALOG`] described. Latency histograms get buckets from 0.5 ms to
/// 10 s; the sizes of the stores' batches, powers of two from 1 to 1,024.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let batches = [
            1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
        ];
        let builder = PrometheusBuilder::new()
            .set_buckets(&[
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                10.0,
            ])
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full("ttakji_sqlite_batch_writes".into()),
                    &batches,
                )
            })
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full("ttakji_postgres_batch_moves".into()),
                    &batches,
                )
            })
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed (tests embedding several
        // services): then this handle renders an empty page, never a panic.
        if metrics::set_global_recorder(recorder).is_ok() {
            describe();
        }
        handle
    })
}

/// Describes every metric of the [`CATALOG`] to the installed recorder.
pub fn describe() {
    for &(name, kind, help) in CATALOG {
        match kind {
            Kind::Counter => metrics::describe_counter!(name, help),
            Kind::Gauge => metrics::describe_gauge!(name, help),
            Kind::Histogram => metrics::describe_histogram!(name, help),
        }
    }
}

/// The media type of Prometheus's text format.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The routes of the metrics listener: `/metrics` (GET, and HEAD, which
/// axum answers with the headers alone); anything else is 404.
fn routes() -> axum::Router {
    axum::Router::new()
        .route(
            "/metrics",
            axum::routing::get(|| async {
                (
                    [(http::header::CONTENT_TYPE, TEXT_FORMAT)],
                    handle().render(),
                )
            }),
        )
        .fallback(|| async {
            (
                http::StatusCode::NOT_FOUND,
                "not found: the metrics are at /metrics\n",
            )
        })
}

/// Serves `/metrics` on `addr` until shutdown. Returns the bound address.
///
/// # Errors
/// When the address cannot be bound.
pub async fn serve(addr: SocketAddr, shutdown: Shutdown) -> std::io::Result<SocketAddr> {
    let _ = handle();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let mut stop = shutdown.clone();
    shutdown.spawn(async move {
        let served = axum::serve(listener, routes())
            .with_graceful_shutdown(async move { stop.wait().await })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "the metrics listener stopped");
        }
    });
    Ok(bound)
}

/// Serves `/metrics` on `addr` if one is given (see [`serve`]); the
/// error names `service`.
///
/// # Errors
/// When the address cannot be bound.
pub async fn serve_if(
    addr: Option<SocketAddr>,
    shutdown: Shutdown,
    service: &str,
) -> anyhow::Result<Option<SocketAddr>> {
    match addr {
        Some(a) => serve(a, shutdown)
            .await
            .map(Some)
            .map_err(|e| anyhow::anyhow!("binding the {service}'s metrics to {a}: {e}")),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    /// A batch's size is a count: its histogram's buckets are counts of
    /// writes, not the seconds the latency histograms use.
    #[test]
    fn the_batches_sizes_are_counted_in_writes_not_seconds() {
        let handle = super::handle();
        metrics::histogram!("ttakji_postgres_batch_moves").record(40.0);
        metrics::histogram!("ttakji_sqlite_batch_writes").record(3.0);
        let page = handle.render();
        for name in ["ttakji_postgres_batch_moves", "ttakji_sqlite_batch_writes"] {
            let buckets: Vec<&str> = page
                .lines()
                .filter(|l| l.starts_with(&format!("{name}_bucket")))
                .collect();
            assert!(
                buckets.iter().any(|l| l.contains("le=\"64\"")),
                "{name}: {buckets:?}"
            );
            assert!(
                !buckets.iter().any(|l| l.contains("le=\"0.0005\"")),
                "{name}: {buckets:?}"
            );
        }
    }
}
