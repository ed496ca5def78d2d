//! The ratings service: Elo per board size, applied exactly once per ranked
//! game; the leaderboard and each player's history.
//!
//! Finished games arrive on `ttakji.games.finished`. Pub/sub may lose one,
//! so a reconciliation pass (at start and every minute) asks the authority
//! for the ranked games finished since shortly before the last one applied
//! and applies any without a rating change yet. Applying is one transaction
//! keyed by the game id, so a game delivered twice, or by both paths,
//! changes ratings once. The leaderboard is served from a Redis sorted set
//! per board size, rebuilt from the database when Redis is empty (or from
//! the database alone in the single-process mode).

pub mod elo;
pub mod store;

mod config;
mod consumer;
mod ladder;
mod service;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tonic::Status;
use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::GrpcServer;
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1::ratings_service_server::RatingsServiceServer;

pub use config::Config;
pub use consumer::{ranked_game, ranked_summary};
pub use ladder::LADDER_PREFIX;

use crate::ladder::Ladder;

/// The service's state.
#[derive(Clone)]
pub struct Ratings {
    db: Database,
    ladder: Ladder,
    authority: ttakji_platform::authorities::Authorities,
    /// The newest finished time reconciliation has applied.
    cursor: Arc<tokio::sync::Mutex<i64>>,
}

impl std::fmt::Debug for Ratings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ratings")
            .field("db", &self.db.kind())
            .finish_non_exhaustive()
    }
}

/// The ratings tables could not be read or written.
fn store_status(e: sqlx::Error) -> Status {
    ttakji_platform::store::status(&e, "ratings could not be read")
}

/// A built ratings service, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    server: GrpcServer,
    ratings: Ratings,
    bus: Bus,
    reconcile_every: Duration,
    shutdown: Shutdown,
}

impl App {
    /// Binds the listeners and connects to Redis for the leaderboard.
    ///
    /// # Errors
    /// When an address cannot be bound or Redis cannot be reached.
    pub async fn build(
        config: Config,
        db: Database,
        bus: Bus,
        shutdown: Shutdown,
    ) -> anyhow::Result<App> {
        let server = GrpcServer::bind("ratings service", config.listen)
            .await?
            .requiring(config.service_key.clone());
        let addr = server.local_addr()?;
        let metrics_addr = ttakji_platform::metrics::serve_if(
            config.metrics_listen,
            shutdown.clone(),
            "ratings service",
        )
        .await?;
        let redis = match &config.redis_url {
            Some(url) => Some((
                ttakji_platform::redis_target::RedisTarget::parse(url)?
                    .connection()
                    .await
                    .context("connecting the leaderboard to Redis")?,
                Arc::from(config.ladder_prefix.as_str()),
            )),
            None => None,
        };
        let ladder = Ladder::new(db.clone(), redis);
        let authority = ttakji_platform::authorities::Authorities::new(&config.authority_url)?
            .with_service_key(config.service_key.clone());
        authority.follow_owners(&bus, &shutdown).await?;
        let ratings = Ratings {
            db,
            ladder,
            authority,
            cursor: Arc::new(tokio::sync::Mutex::new(0)),
        };
        Ok(App {
            addr,
            metrics_addr,
            server,
            ratings,
            bus,
            reconcile_every: config.reconcile_every,
            shutdown,
        })
    }

    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `/metrics` address, if served.
    #[must_use]
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Serves, applies finished games and reconciles until shutdown.
    ///
    /// # Errors
    /// When the server fails.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        consumer::follow(
            &self.ratings,
            &self.bus,
            self.reconcile_every,
            &self.shutdown,
        )
        .await?;
        self.server
            .add_service(RatingsServiceServer::new(self.ratings))
            .serve(self.shutdown)
            .await
    }
}
