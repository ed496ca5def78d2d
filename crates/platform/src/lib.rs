//! Shared plumbing of the Ttakji services: telemetry, our own access tokens,
//! the event bus, storage, metrics and graceful shutdown.
//!
//! Nothing here knows about Go; the services build on these pieces and talk
//! to one another only through the generated gRPC clients and the bus.

pub mod auth;
pub mod bus;
pub mod grpc;
pub mod metrics;
pub mod shutdown;
pub mod store;
pub mod telemetry;

/// Milliseconds since the Unix epoch, the one clock format stored and sent.
#[must_use]
pub fn now_unix_ms() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}
