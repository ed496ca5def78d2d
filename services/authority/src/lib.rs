//! The game authority: the single writer of every live game.
//!
//! One actor per game validates moves with the rules crate, persists every
//! accepted move before acknowledging it, runs the computer's seat off the
//! async runtime, counts finished games and publishes every event on the
//! bus. It serves the internal `ttakji.v1.AuthorityService` over gRPC, with
//! health checking and reflection.

pub mod actor;
pub mod codec;
pub mod convert;
pub mod game;
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
use ttakji_proto::v1::authority_service_server::AuthorityServiceServer;

pub use actor::AiConfig;

/// The authority's settings: the flags and `TTAKJI_*` variables of
/// `ttakji authority`, or [`Config::new`] in code and tests.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Where the gRPC server listens (port 0 picks one).
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "0.0.0.0:50052")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served; `None` serves none.
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "0.0.0.0:9091")]
    pub metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub ai: AiConfig,
}

impl Config {
    /// Settings for `listen`: no metrics, the computer at full strength.
    #[must_use]
    pub fn new(listen: SocketAddr) -> Config {
        Config {
            listen,
            metrics_listen: None,
            ai: AiConfig::default(),
        }
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
    /// Binds the listeners and resumes every game still being played.
    ///
    /// # Errors
    /// When an address cannot be bound or the store cannot be read.
    pub async fn build(
        config: Config,
        db: Database,
        bus: Bus,
        shutdown: Shutdown,
    ) -> anyhow::Result<App> {
        let server = GrpcServer::bind("authority", config.listen).await?;
        let addr = server.local_addr()?;
        let metrics_addr = ttakji_platform::metrics::serve_if(
            config.metrics_listen,
            shutdown.clone(),
            "authority",
        )
        .await?;
        let registry = registry::Registry::new(db, bus, config.ai, shutdown.clone());
        let resumed = registry
            .resume_playing()
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?;
        tracing::info!(%addr, ?metrics_addr, resumed, "authority ready");
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
        let service = service::Authority {
            registry: self.registry,
        };
        self.server
            .add_service(AuthorityServiceServer::new(service))
            .serve(self.shutdown)
            .await
    }
}
