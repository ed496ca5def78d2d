//! The game authority: the single writer of every live game.
//!
//! One actor per game validates moves with the rules crate, persists every
//! accepted move before acknowledging it, runs the computer's seat off the
//! async runtime, counts finished games and publishes every event on the
//! bus. It serves the internal `ttakji.internal.v1.AuthorityService` over gRPC, with
//! health checking and reflection.

pub mod actor;
pub mod codec;
pub mod convert;
pub mod game;
pub mod keeper;
pub mod listing;
pub mod ownership;
pub mod records;
pub mod registry;
pub mod service;
pub mod store;
pub mod view;

use std::net::SocketAddr;

use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::GrpcServer;
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1::authority_service_server::AuthorityServiceServer;

pub use actor::AiConfig;

/// The authority's settings: the flags and `TTAKJI_*` variables of
/// `ttakji authority`, or [`Config::new`] in code and tests.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Where the gRPC server listens (port 0 picks one): loopback unless
    /// told otherwise, as an internal service; a deployment names the
    /// address the other services reach.
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "127.0.0.1:50052")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served (loopback unless told otherwise); `None`
    /// serves none.
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "127.0.0.1:9091")]
    pub metrics_listen: Option<SocketAddr>,
    /// The secret every service shares: calls to this service must carry
    /// it (UNAUTHENTICATED otherwise), and its own calls to other services
    /// carry it. `ttakji authority` requires it; in code `None` checks nothing.
    #[arg(long, env = "TTAKJI_SERVICE_KEY", hide_env_values = true)]
    pub service_key: Option<ttakji_platform::grpc::ServiceKey>,
    /// The URL other services and authorities reach this instance at;
    /// by default `http://` and the listening address (127.0.0.1 for an
    /// unspecified one), which serves only one machine.
    #[arg(long, env = "TTAKJI_ADVERTISE_URL")]
    pub advertise_url: Option<String>,
    /// Redis, where game events are published and instances lease shards
    /// of games from each other. Without it this instance owns every game
    /// and events stay in the process.
    #[arg(skip)]
    pub redis_url: Option<String>,
    #[command(flatten)]
    pub leases: ownership::LeaseConfig,
    #[command(flatten)]
    pub ai: AiConfig,
}

impl Config {
    /// Settings for `listen`: no metrics, the computer at full strength,
    /// the only instance.
    #[must_use]
    pub fn new(listen: SocketAddr) -> Config {
        Config {
            listen,
            metrics_listen: None,
            service_key: None,
            advertise_url: None,
            redis_url: None,
            leases: ownership::LeaseConfig::default(),
            ai: AiConfig::default(),
        }
    }
}

/// `http://` and `addr`, with 127.0.0.1 for an unspecified address.
fn default_url(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("http://127.0.0.1:{}", addr.port())
    } else {
        format!("http://{addr}")
    }
}

/// A built authority, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    server: GrpcServer,
    registry: registry::Registry,
    shutdown: Shutdown,
}

impl App {
    /// Binds the listeners and takes up games: every game still being
    /// played when this is the only instance, or, with Redis, the games of
    /// the shards it takes (a keeper renews its leases until shutdown,
    /// then hands them over).
    ///
    /// # Errors
    /// When an address cannot be bound, or the store or Redis cannot be
    /// reached.
    pub async fn build(
        config: Config,
        db: Database,
        bus: Bus,
        shutdown: Shutdown,
    ) -> anyhow::Result<App> {
        let server = GrpcServer::bind("authority", config.listen)
            .await?
            .requiring(config.service_key.clone());
        let addr = server.local_addr()?;
        let metrics_addr = ttakji_platform::metrics::serve_if(
            config.metrics_listen,
            shutdown.clone(),
            "authority",
        )
        .await?;
        let me = config
            .advertise_url
            .clone()
            .unwrap_or_else(|| default_url(addr));
        let leases = match &config.redis_url {
            Some(url) => Some(
                ownership::Leases::connect(url, &me, config.leases.clone())
                    .await
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "connecting the shard leases to {}: {e}",
                            ttakji_platform::store::redact(url)
                        )
                    })?,
            ),
            None => None,
        };
        let owned = if leases.is_some() {
            ownership::Ownership::shared(me.clone())
        } else {
            ownership::Ownership::single(me.clone())
        };
        let registry = registry::Registry::new(db, bus, config.ai, shutdown.clone(), owned.clone());
        if let Some(leases) = leases {
            tracing::info!(%addr, url = %me, member = leases.member(), "authority ready; taking shards");
            shutdown.spawn(keeper::keep(
                leases,
                owned,
                registry.clone(),
                shutdown.clone(),
            ));
        } else {
            let resumed = registry
                .resume_playing()
                .await
                .map_err(|s| anyhow::anyhow!("{}", s.message()))?;
            tracing::info!(%addr, metrics_addr = metrics_addr.map(tracing::field::display), resumed, "authority ready");
        }
        Ok(App {
            addr,
            metrics_addr,
            server,
            registry,
            shutdown,
        })
    }

    /// The gRPC address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `/metrics` address, if served.
    #[must_use]
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Serves until the shutdown signal.
    ///
    /// # Errors
    /// When the server fails.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let service = service::Authority::new(self.registry);
        self.server
            .add_service(AuthorityServiceServer::new(service))
            .serve(self.shutdown)
            .await
    }
}
