//! The matchmaker: queue tickets, pairing by rating with a window that
//! widens while a player waits, the computer after a wait, friend
//! challenges by code, and rematches with colours swapped.
//!
//! Tickets live in the [`tickets`] store (Redis in a deployment), so any
//! instance serves any ticket. Each pool is paired by one instance at a
//! time, the holder of the pool's lease in Redis; claims are atomic, so no
//! player is matched twice even if two instances pair at once. A game's id
//! is chosen before the claim and the authority makes a game once per id,
//! so an instance that dies between claim and game leaves work that the
//! next lease holder finishes, never half a game.

pub mod pairing;
pub mod tickets;

mod config;
mod matchmaker;
mod rounds;
mod service;
mod wire;

use std::net::SocketAddr;

use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::GrpcServer;
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::internal::v1::matchmaker_service_server::MatchmakerServiceServer;

pub use config::{Config, LINK_BASE, SECONDS_PER_MOVE};
pub use matchmaker::Matchmaker;
pub use pairing::PairingRules;
pub use tickets::{QueueStore, Tickets};

/// A built matchmaker, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    server: GrpcServer,
    matchmaker: Matchmaker,
    shutdown: Shutdown,
}

impl App {
    /// Binds the listeners.
    ///
    /// # Errors
    /// When an address cannot be bound or the authority URL is invalid.
    pub async fn build(
        config: Config,
        tickets: Tickets,
        bus: Bus,
        shutdown: Shutdown,
    ) -> anyhow::Result<App> {
        let server = GrpcServer::bind("matchmaker", config.listen)
            .await?
            .requiring(config.service_key.clone());
        let addr = server.local_addr()?;
        let metrics_addr = ttakji_platform::metrics::serve_if(
            config.metrics_listen,
            shutdown.clone(),
            "matchmaker",
        )
        .await?;
        let authority = ttakji_platform::authorities::Authorities::new(&config.authority_url)?
            .with_service_key(config.service_key.clone());
        authority.follow_owners(&bus, &shutdown).await?;
        let matchmaker = Matchmaker::new(config, tickets, bus, authority);
        tracing::info!(%addr, "matchmaker ready");
        Ok(App {
            addr,
            metrics_addr,
            server,
            matchmaker,
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

    /// Serves and pairs until the shutdown signal.
    ///
    /// # Errors
    /// When the server fails.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        self.shutdown
            .spawn(self.matchmaker.clone().pair_until(self.shutdown.clone()));
        self.server
            .add_service(MatchmakerServiceServer::new(self.matchmaker))
            .serve(self.shutdown)
            .await
    }
}
