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
pub mod service;
pub mod tickets;

use std::net::SocketAddr;
use std::time::Duration;

use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::{self, GrpcServer};
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::v1::matchmaker_service_server::MatchmakerServiceServer;

pub use pairing::PairingRules;
pub use tickets::Tickets;

/// The seconds per move of games between people, unless told otherwise.
pub const SECONDS_PER_MOVE: u32 = 30;

/// Where a challenge's link points, unless told otherwise.
pub const LINK_BASE: &str = "https://ttakji.app/c/";

/// The matchmaker's settings: the flags and `TTAKJI_*` variables of
/// `ttakji matchmaker`, or [`Config::new`] in code and tests.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Where the gRPC server listens (port 0 picks one).
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "0.0.0.0:50053")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served; `None` serves none.
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "0.0.0.0:9092")]
    pub metrics_listen: Option<SocketAddr>,
    /// The authority's gRPC address.
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_URL",
        default_value = "http://127.0.0.1:50052"
    )]
    pub authority_url: String,
    #[command(flatten)]
    pub rules: PairingRules,
    /// Seconds per move of games between people (the online clock).
    #[arg(long, env = "TTAKJI_SECONDS_PER_MOVE", default_value_t = SECONDS_PER_MOVE)]
    pub seconds_per_move: u32,
    /// How long an unused challenge code works.
    #[arg(skip = Duration::from_secs(600))]
    pub challenge_ttl: Duration,
    /// A challenge's link is this followed by its code.
    #[arg(long, env = "TTAKJI_LINK_BASE", default_value = LINK_BASE)]
    pub link_base: String,
    /// How often the pairing loop runs.
    #[arg(skip = Duration::from_millis(50))]
    pub tick: Duration,
}

impl Config {
    /// Settings for `listen` and `authority_url` with the defaults of the
    /// product: 30 s a move, codes for 10 minutes, pairing every 50 ms.
    #[must_use]
    pub fn new(listen: SocketAddr, authority_url: String) -> Config {
        Config {
            listen,
            metrics_listen: None,
            authority_url,
            rules: PairingRules::default(),
            seconds_per_move: SECONDS_PER_MOVE,
            challenge_ttl: Duration::from_secs(600),
            link_base: LINK_BASE.to_owned(),
            tick: Duration::from_millis(50),
        }
    }
}

/// The authority client the matchmaker uses.
pub type AuthorityClient = AuthorityServiceClient<grpc::TracedChannel>;

/// A built matchmaker, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    server: GrpcServer,
    matchmaker: service::Matchmaker,
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
        let server = GrpcServer::bind("matchmaker", config.listen).await?;
        let addr = server.local_addr()?;
        let metrics_addr = ttakji_platform::metrics::serve_if(
            config.metrics_listen,
            shutdown.clone(),
            "matchmaker",
        )
        .await?;
        let authority = grpc::client(&config.authority_url, "authority")?;
        let matchmaker =
            service::Matchmaker::new(config, tickets, bus, AuthorityServiceClient::new(authority));
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
