//! The gateway: the public API that mobile and web clients use.
//!
//! It signs players in (guest nicknames, Google ID tokens) with our own
//! JWTs, checks the token once per call, forwards player actions to the
//! game authority, the matchmaker and the ratings service with the caller's
//! id and trace, and streams a game's events to watchers from the bus,
//! filling any gap from the authority's stored events so a client that
//! reconnects resumes exactly where it was.
//!
//! A call passes through [`calls::Public`] (its span, its token, the count
//! of refusals), then tonic (the request is read), then its handler (the
//! request is validated by [`validate`] and forwarded).

pub mod accounts;
pub mod api;
pub mod auth;
pub mod calls;
pub mod games;
pub mod google;
pub mod ladder;
pub mod limits;
pub mod matching;
pub mod presence;
pub mod seen;
pub mod sign_in;
pub mod state;
pub mod streams;
pub mod validate;
pub mod watch;
pub mod web;

pub use state::{MatchmakerClient, RatingsClient};

use std::net::SocketAddr;

use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::{self, GrpcServer};
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::internal::v1::matchmaker_service_client::MatchmakerServiceClient;
use ttakji_proto::internal::v1::ratings_service_client::RatingsServiceClient;
use ttakji_proto::v1::auth_service_server::AuthServiceServer;
use ttakji_proto::v1::game_service_server::GameServiceServer;
use ttakji_proto::v1::ladder_service_server::LadderServiceServer;
use ttakji_proto::v1::match_service_server::MatchServiceServer;

/// The largest request the gateway reads. Every request of the API is a
/// few hundred bytes at most; anything larger is refused as INVALID_ARGUMENT.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// How long an access token lives.
pub const TOKEN_TTL: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// The gateway's settings: the flags and `TTAKJI_*` variables of
/// `ttakji gateway`, or a struct literal in code and tests.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Where the public gRPC server listens (port 0 picks one).
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "0.0.0.0:50051")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served (loopback unless told otherwise); `None`
    /// serves none.
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "127.0.0.1:9090")]
    pub metrics_listen: Option<SocketAddr>,
    /// The secret every service shares, carried by the gateway's calls to
    /// the internal services. `ttakji gateway` requires it.
    #[arg(long, env = "TTAKJI_SERVICE_KEY", hide_env_values = true)]
    pub service_key: Option<ttakji_platform::grpc::ServiceKey>,
    /// The game authorities' gRPC addresses: one URL or several separated
    /// by commas; a host name stands for every address it resolves to (a
    /// Kubernetes headless Service).
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_URL",
        default_value = "http://127.0.0.1:50052"
    )]
    pub authority_url: String,
    /// The matchmaker's gRPC address.
    #[arg(
        long,
        env = "TTAKJI_MATCHMAKER_URL",
        default_value = "http://127.0.0.1:50053"
    )]
    pub matchmaker_url: String,
    /// The ratings service's gRPC address.
    #[arg(
        long,
        env = "TTAKJI_RATINGS_URL",
        default_value = "http://127.0.0.1:50054"
    )]
    pub ratings_url: String,
    /// Token keys as kid=secret[,kid=secret…]; every gateway of a
    /// deployment needs the same list. The first key signs.
    #[arg(long, env = "TTAKJI_TOKEN_KEYS", hide_env_values = true, value_parser = TokenKeysParser)]
    pub token_keys: TokenKeys,
    #[command(flatten)]
    pub public: Public,
}

/// What the public side offers players: sign-in, the browsers that may
/// call, the rate limits, how long guests are kept. The same flags whether
/// the gateway runs alone (`ttakji gateway`) or with the other services
/// (`ttakji serve`).
#[derive(Debug, Clone, clap::Args)]
pub struct Public {
    /// Our OAuth client id at Google; without it Google sign-in is off.
    #[arg(long, env = "TTAKJI_GOOGLE_CLIENT_ID")]
    pub google_client_id: Option<String>,
    /// Where Google publishes its signing keys.
    #[arg(long, env = "TTAKJI_GOOGLE_JWKS_URL", default_value = google::GOOGLE_JWKS_URL)]
    pub google_jwks_url: String,
    /// Origins (`https://play.example`, or `*` for any) whose web pages may
    /// call the API from the browser (CORS), separated by commas. Pages
    /// served from the gateway's own address need none.
    #[arg(long, env = "TTAKJI_WEB_ORIGINS", value_delimiter = ',')]
    pub web_origins: Vec<String>,
    #[command(flatten)]
    pub limits: limits::Settings,
    /// How often guest accounts whose tokens have all expired are removed.
    #[arg(long, env = "TTAKJI_GUEST_SWEEP_EVERY", default_value = "3600", value_parser = ttakji_platform::config::seconds, value_name = "SECONDS")]
    pub guest_sweep_every: std::time::Duration,
}

impl Public {
    /// The flags' defaults, with the rate limits exempting `networks`
    /// (tests and benchmarks call from loopback).
    #[must_use]
    pub fn exempting(networks: &[&str]) -> Public {
        Public {
            google_client_id: None,
            google_jwks_url: google::GOOGLE_JWKS_URL.to_owned(),
            web_origins: Vec::new(),
            limits: limits::Settings::exempting(networks),
            guest_sweep_every: std::time::Duration::from_secs(3600),
        }
    }
}

/// Reads token keys (`kid=secret[,kid=secret…]`) for tokens that live
/// [`TOKEN_TTL`]. Unlike clap's own parsers it does not repeat the whole
/// value in its error, which would print every secret.
#[derive(Debug, Clone, Copy)]
pub struct TokenKeysParser;

impl clap::builder::TypedValueParser for TokenKeysParser {
    type Value = TokenKeys;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<TokenKeys, clap::Error> {
        let flag = arg.and_then(clap::Arg::get_long).unwrap_or("token-keys");
        value
            .to_str()
            .ok_or_else(|| "not UTF-8".to_owned())
            .and_then(|spec| TokenKeys::parse(spec, TOKEN_TTL))
            .map_err(|e| {
                clap::Error::raw(
                    clap::error::ErrorKind::ValueValidation,
                    format!("--{flag}: {e}\n"),
                )
                .with_cmd(cmd)
            })
    }
}

/// A built gateway, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    server: GrpcServer,
    state: state::Gateway,
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
        // Browsers call with gRPC-web on the same port as native clients.
        let Config { public, .. } = &config;
        let server = GrpcServer::bind("gateway", config.listen)
            .await?
            .for_browsers(grpc::Browsers {
                origins: public.web_origins.clone(),
                pages: Some(web::pages(&web::PageConfig {
                    google_client_id: public.google_client_id.clone(),
                })),
            });
        let addr = server.local_addr()?;
        let metrics_addr =
            ttakji_platform::metrics::serve_if(config.metrics_listen, shutdown.clone(), "gateway")
                .await?;
        let key = config.service_key.as_ref();
        let authority = ttakji_platform::authorities::Authorities::new(&config.authority_url)?
            .with_service_key(config.service_key.clone());
        authority.follow_owners(&bus, &shutdown).await?;
        let matchmaker =
            MatchmakerServiceClient::new(grpc::client(&config.matchmaker_url, "matchmaker", key)?);
        let ratings =
            RatingsServiceClient::new(grpc::client(&config.ratings_url, "ratings service", key)?);
        let google = match &public.google_client_id {
            Some(id) => Some(std::sync::Arc::new(google::GoogleVerifier::new(
                id,
                &public.google_jwks_url,
            )?)),
            None => None,
        };
        match accounts::backfill_skeletons(&db).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                accounts = n,
                "nickname skeletons written for older accounts"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "older accounts' nickname skeletons not written; next start retries")
            }
        }
        accounts::sweep_expired_guests(db.clone(), public.guest_sweep_every, &shutdown);
        let state = state::Gateway {
            google,
            known: accounts::Known::new(db.clone()),
            server_ai_games: public.limits.server_ai_games,
            limits: limits::Limits::start(public.limits.clone(), &shutdown),
            db,
            authority,
            matchmaker,
            ratings,
            keys: config.token_keys,
            liveness: presence::Liveness::start(bus.clone(), shutdown.clone()),
            bus,
            shutdown: shutdown.clone(),
        };
        tracing::info!(%addr, metrics_addr = metrics_addr.map(tracing::field::display), authority = %config.authority_url, "gateway ready");
        Ok(App {
            addr,
            metrics_addr,
            server,
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

    /// `inner` as clients reach it: spanned, rate-limited, its tokens and
    /// their accounts checked ([`calls::Public`]).
    fn public<S>(&self, inner: S) -> calls::Public<S> {
        calls::Public::new(inner, self.state.keys.clone())
            .with_accounts(self.state.known.clone())
            .with_limits(self.state.limits.clone())
    }

    /// Serves until the shutdown signal.
    ///
    /// # Errors
    /// When the server fails.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let state = &self.state;
        let auth = self.public(
            AuthServiceServer::new(state.clone()).max_decoding_message_size(MAX_REQUEST_BYTES),
        );
        let ladder = self.public(
            LadderServiceServer::new(state.clone()).max_decoding_message_size(MAX_REQUEST_BYTES),
        );
        let matching = self.public(
            MatchServiceServer::new(state.clone()).max_decoding_message_size(MAX_REQUEST_BYTES),
        );
        let games = self.public(
            GameServiceServer::new(state.clone()).max_decoding_message_size(MAX_REQUEST_BYTES),
        );
        self.server
            .add_service(auth)
            .add_service(ladder)
            .add_service(matching)
            .add_service(games)
            .serve(self.shutdown)
            .await
    }
}
