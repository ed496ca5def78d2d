//! Shared plumbing of the Ttakji services: telemetry, our own access tokens,
//! the event bus, storage, metrics and graceful shutdown.
//!
//! Nothing here knows about Go; the services build on these pieces and talk
//! to one another only through the generated gRPC clients and the bus.

pub mod auth;
pub mod authorities;
pub mod bus;
pub mod config;
pub mod grpc;
pub mod in_process;
pub mod metrics;
pub mod observed;
pub mod redis_target;
pub mod refusal;
pub mod shutdown;
pub mod store;
pub mod telemetry;

/// Milliseconds since the Unix epoch, the one clock format stored and sent.
///
/// It is the wall clock read once, at first use, advanced by tokio's
/// monotonic clock: it never jumps backwards, and under tokio's paused test
/// time it follows the paused clock, so move clocks can be tested without
/// waiting.
#[must_use]
pub fn now_unix_ms() -> i64 {
    static ANCHOR: std::sync::OnceLock<(i64, tokio::time::Instant)> = std::sync::OnceLock::new();
    let (unix_ms, at) = *ANCHOR.get_or_init(|| {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (
            i64::try_from(wall.as_millis()).unwrap_or(i64::MAX),
            tokio::time::Instant::now(),
        )
    });
    let elapsed = tokio::time::Instant::now().saturating_duration_since(at);
    unix_ms.saturating_add(i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
}

/// Sleeps until the Unix time `deadline_ms` by [`now_unix_ms`]'s clock.
pub async fn sleep_until_unix_ms(deadline_ms: i64) {
    let wait = deadline_ms.saturating_sub(now_unix_ms()).max(0);
    tokio::time::sleep(std::time::Duration::from_millis(wait.unsigned_abs())).await;
}

/// Runs `f`, which blocks or computes for milliseconds, on this thread: on
/// a multi-threaded runtime the thread's other tasks move to another
/// meanwhile; on a runtime of one thread (tests) they wait.
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn the_unix_clock_follows_paused_time() {
        let start = super::now_unix_ms();
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(super::now_unix_ms() - start, 30_000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_sleep_ends_at_the_deadline_and_not_before() {
        let deadline = super::now_unix_ms() + 30_000;
        let early = tokio::time::timeout(
            Duration::from_millis(29_999),
            super::sleep_until_unix_ms(deadline),
        )
        .await;
        assert!(early.is_err(), "woke before the deadline");
        super::sleep_until_unix_ms(deadline).await;
        assert!(super::now_unix_ms() >= deadline);
    }
}
