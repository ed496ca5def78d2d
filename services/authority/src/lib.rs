//! The game authority: the single writer of every live game.
//!
//! One actor per game validates moves with the rules crate, persists every
//! accepted move before acknowledging it, runs the computer's seat off the
//! async runtime, counts finished games and publishes every event on the
//! bus. It serves the internal `ttakji.v1.AuthorityService` over gRPC, with
//! health checking and reflection.

pub mod convert;
pub mod live;
pub mod registry;
pub mod service;
pub mod store;

use std::net::SocketAddr;

use anyhow::Context as _;
use tokio::net::TcpListener;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::v1::authority_service_server::AuthorityServiceServer;

pub use live::AiConfig;

/// The authority's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the gRPC server listens (port 0 picks one).
    pub listen: SocketAddr,
    /// Where `/metrics` is served; `None` serves none.
    pub metrics_listen: Option<SocketAddr>,
    pub ai: AiConfig,
}

/// A built authority, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    listener: TcpListener,
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
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("binding the authority to {}", config.listen))?;
        let addr = listener.local_addr()?;
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
            listener,
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
        let (health, health_service) = tonic_health::server::health_reporter();
        health
            .set_serving::<AuthorityServiceServer<service::Authority>>()
            .await;
        let reflection = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(ttakji_proto::FILE_DESCRIPTOR_SET)
            .build_v1()
            .context("building gRPC reflection")?;
        let service = service::Authority {
            registry: self.registry,
        };
        let mut shutdown = self.shutdown;
        tonic::transport::Server::builder()
            .trace_fn(ttakji_platform::grpc::server_span)
            .add_service(health_service)
            .add_service(reflection)
            .add_service(AuthorityServiceServer::new(service))
            .serve_with_incoming_shutdown(
                ttakji_platform::grpc::incoming(self.listener),
                async move { shutdown.wait().await },
            )
            .await
            .context("authority gRPC server")
    }
}
