//! The gateway: the public API that mobile and web clients use.
//!
//! It signs players in (guest nicknames for now) with our own JWTs, checks
//! the token on every other call, forwards player actions to the game
//! authority over gRPC with the caller's id and trace, and streams a game's
//! events to watchers from the bus, filling any gap from the authority's
//! stored events so a client that reconnects resumes exactly where it was.

pub mod accounts;
pub mod google;
pub mod ladder;
pub mod matching;
pub mod service;
pub mod watch;

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::TcpListener;
use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::PropagateTrace;
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::v1::auth_service_server::AuthServiceServer;
use ttakji_proto::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::v1::game_service_server::GameServiceServer;
use ttakji_proto::v1::ladder_service_server::LadderServiceServer;
use ttakji_proto::v1::match_service_server::MatchServiceServer;

/// The largest request the gateway reads. Every request of the API is a
/// few hundred bytes at most; anything larger is refused as INVALID_ARGUMENT.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// The gateway's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the public gRPC server listens (port 0 picks one).
    pub listen: SocketAddr,
    /// Where `/metrics` is served; `None` serves none.
    pub metrics_listen: Option<SocketAddr>,
    /// The game authority's gRPC address (`http://127.0.0.1:50052`).
    pub authority_url: String,
    /// The matchmaker's gRPC address (`http://127.0.0.1:50053`).
    pub matchmaker_url: String,
    /// The ratings service's gRPC address (`http://127.0.0.1:50054`).
    pub ratings_url: String,
    /// The keys that sign and verify access tokens.
    pub token_keys: TokenKeys,
    /// Our OAuth client id at Google; `None` turns Google sign-in off.
    pub google_client_id: Option<String>,
    /// Where Google's keys are published.
    pub google_jwks_url: String,
}

/// The authority client every handler uses.
pub type AuthorityClient = AuthorityServiceClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, PropagateTrace>,
>;

/// The matchmaker client the queue handlers use.
pub type MatchmakerClient = ttakji_proto::v1::matchmaker_service_client::MatchmakerServiceClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, PropagateTrace>,
>;

/// The ratings client the ladder and the queue use.
pub type RatingsClient = ttakji_proto::v1::ratings_service_client::RatingsServiceClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, PropagateTrace>,
>;

/// A built gateway, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    listener: TcpListener,
    state: service::Gateway,
    shutdown: Shutdown,
}

impl App {
    /// Binds the listeners and prepares the connection to the authority
    /// (made on first use, so the two may start in any order).
    ///
    /// # Errors
    /// When an address cannot be bound or the authority URL is invalid.
    pub async fn build(
        config: Config,
        db: ttakji_platform::store::Database,
        bus: Bus,
        shutdown: Shutdown,
    ) -> anyhow::Result<App> {
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("binding the gateway to {}", config.listen))?;
        let addr = listener.local_addr()?;
        let metrics_addr =
            ttakji_platform::metrics::serve_if(config.metrics_listen, shutdown.clone(), "gateway")
                .await?;
        let channel = tonic::transport::Endpoint::from_shared(config.authority_url.clone())
            .with_context(|| format!("authority URL {:?}", config.authority_url))?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .connect_lazy();
        let authority = AuthorityServiceClient::with_interceptor(channel, PropagateTrace);
        let matchmaker_channel =
            tonic::transport::Endpoint::from_shared(config.matchmaker_url.clone())
                .with_context(|| format!("matchmaker URL {:?}", config.matchmaker_url))?
                .connect_timeout(Duration::from_secs(5))
                .tcp_nodelay(true)
                .connect_lazy();
        let matchmaker =
            ttakji_proto::v1::matchmaker_service_client::MatchmakerServiceClient::with_interceptor(
                matchmaker_channel,
                PropagateTrace,
            );
        let ratings_channel = tonic::transport::Endpoint::from_shared(config.ratings_url.clone())
            .with_context(|| format!("ratings URL {:?}", config.ratings_url))?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .connect_lazy();
        let ratings =
            ttakji_proto::v1::ratings_service_client::RatingsServiceClient::with_interceptor(
                ratings_channel,
                PropagateTrace,
            );
        let google = match &config.google_client_id {
            Some(id) => Some(std::sync::Arc::new(google::GoogleVerifier::new(
                id,
                &config.google_jwks_url,
            )?)),
            None => None,
        };
        let state = service::Gateway {
            google,
            db,
            authority,
            matchmaker,
            ratings,
            keys: config.token_keys,
            bus,
            shutdown: shutdown.clone(),
        };
        tracing::info!(%addr, ?metrics_addr, authority = %config.authority_url, "gateway ready");
        Ok(App {
            addr,
            metrics_addr,
            listener,
            state,
            shutdown,
        })
    }

    /// The public gRPC address.
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
            .set_serving::<GameServiceServer<service::Gateway>>()
            .await;
        health
            .set_serving::<AuthServiceServer<service::Gateway>>()
            .await;
        health
            .set_serving::<MatchServiceServer<service::Gateway>>()
            .await;
        health
            .set_serving::<LadderServiceServer<service::Gateway>>()
            .await;
        let reflection = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(ttakji_proto::FILE_DESCRIPTOR_SET)
            .build_v1()
            .context("building gRPC reflection")?;
        let mut shutdown = self.shutdown;
        tonic::transport::Server::builder()
            .trace_fn(ttakji_platform::grpc::server_span)
            .layer(tower::util::MapResponseLayer::new(
                ttakji_platform::grpc::oversized_is_invalid_argument::<tonic::body::Body>,
            ))
            .add_service(health_service)
            .add_service(reflection)
            .add_service(
                AuthServiceServer::new(self.state.clone())
                    .max_decoding_message_size(MAX_REQUEST_BYTES),
            )
            .add_service(
                LadderServiceServer::new(self.state.clone())
                    .max_decoding_message_size(MAX_REQUEST_BYTES),
            )
            .add_service(
                MatchServiceServer::new(self.state.clone())
                    .max_decoding_message_size(MAX_REQUEST_BYTES),
            )
            .add_service(
                GameServiceServer::new(self.state).max_decoding_message_size(MAX_REQUEST_BYTES),
            )
            .serve_with_incoming_shutdown(
                ttakji_platform::grpc::incoming(self.listener),
                async move { shutdown.wait().await },
            )
            .await
            .context("gateway gRPC server")
    }
}
