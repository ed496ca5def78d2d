//! The ratings service's settings: the flags and `TTAKJI_*` variables of
//! `ttakji ratings`, or [`Config::new`] in code and tests.

use std::net::SocketAddr;
use std::time::Duration;

use crate::ladder::LADDER_PREFIX;

/// The ratings service's settings: the flags and `TTAKJI_*` variables of
/// `ttakji ratings`, or [`Config::new`] in code and tests.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Where the gRPC server listens (port 0 picks one): loopback unless
    /// told otherwise, as an internal service; a deployment names the
    /// address the other services reach.
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "127.0.0.1:50054")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served (loopback unless told otherwise); `None`
    /// serves none.
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "127.0.0.1:9093")]
    pub metrics_listen: Option<SocketAddr>,
    /// The secret every service shares: calls to this service must carry
    /// it (UNAUTHENTICATED otherwise), and its own calls to other services
    /// carry it. `ttakji ratings` requires it; in code `None` checks nothing.
    #[arg(long, env = "TTAKJI_SERVICE_KEY", hide_env_values = true)]
    pub service_key: Option<ttakji_platform::grpc::ServiceKey>,
    /// The game authorities, for reconciliation: one URL or several
    /// separated by commas; a host name stands for every address.
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_URL",
        default_value = "http://127.0.0.1:50052"
    )]
    pub authority_url: String,
    /// Redis for the leaderboard; `None` serves it from the database. On
    /// the command line it is required: finished games arrive there too.
    #[arg(
        long,
        env = "TTAKJI_REDIS_URL",
        hide_env_values = true,
        required = true
    )]
    pub redis_url: Option<String>,
    /// The prefix of the leaderboard's Redis keys (`ttakji:ladder:`).
    #[arg(skip = LADDER_PREFIX.to_owned())]
    pub ladder_prefix: String,
    /// Seconds between reconciliation passes (one at the least).
    #[arg(long, env = "TTAKJI_RECONCILE_EVERY", default_value = "60", value_parser = reconcile_interval, value_name = "SECONDS")]
    pub reconcile_every: Duration,
}

impl Config {
    /// Settings for `listen` and `authority_url`: the leaderboard from the
    /// database, reconciling every minute, no metrics.
    #[must_use]
    pub fn new(listen: SocketAddr, authority_url: String) -> Config {
        Config {
            listen,
            metrics_listen: None,
            service_key: None,
            authority_url,
            redis_url: None,
            ladder_prefix: LADDER_PREFIX.to_owned(),
            reconcile_every: Duration::from_secs(60),
        }
    }
}

/// A reconciliation interval from the command line: a pass more often than
/// once a second would only load the authority.
fn reconcile_interval(text: &str) -> Result<Duration, String> {
    ttakji_platform::config::seconds(text).map(|every| every.max(Duration::from_secs(1)))
}
