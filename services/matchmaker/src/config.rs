//! The matchmaker's settings, with the product's defaults: the flags and
//! `TTAKJI_*` variables of `ttakji matchmaker`.

use std::net::SocketAddr;
use std::time::Duration;

use crate::pairing::PairingRules;

/// The seconds per move of games between people, unless told otherwise.
pub const SECONDS_PER_MOVE: u32 = 30;

/// Where a challenge's link points, unless told otherwise.
pub const LINK_BASE: &str = "https://ttakji.app/c/";

/// The matchmaker's settings: the flags and `TTAKJI_*` variables of
/// `ttakji matchmaker`, or [`Config::new`] in code and tests.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Where the gRPC server listens (port 0 picks one): loopback unless
    /// told otherwise, as an internal service; a deployment names the
    /// address the other services reach.
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "127.0.0.1:50053")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served (loopback unless told otherwise); `None`
    /// serves none.
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "127.0.0.1:9092")]
    pub metrics_listen: Option<SocketAddr>,
    /// The secret every service shares: calls to this service must carry
    /// it (UNAUTHENTICATED otherwise), and its own calls to other services
    /// carry it. `ttakji matchmaker` requires it; in code `None` checks nothing.
    #[arg(long, env = "TTAKJI_SERVICE_KEY", hide_env_values = true)]
    pub service_key: Option<ttakji_platform::grpc::ServiceKey>,
    /// The game authorities' gRPC addresses: one URL or several separated
    /// by commas; a host name stands for every address it resolves to.
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
            service_key: None,
            authority_url,
            rules: PairingRules::default(),
            seconds_per_move: SECONDS_PER_MOVE,
            challenge_ttl: Duration::from_secs(600),
            link_base: LINK_BASE.to_owned(),
            tick: Duration::from_millis(50),
        }
    }
}
