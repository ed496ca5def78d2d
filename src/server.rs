//! Starting the services: all of them in one process (`ttakji serve`), or
//! one each (`ttakji gateway`, `ttakji authority`) against Redis and Postgres.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::{self, Shutdown};
use ttakji_platform::store::Database;
use ttakji_platform::telemetry::{LogFormat, TelemetryConfig};

/// How long an access token lives.
pub const TOKEN_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// Logging and tracing options every service takes.
#[derive(Debug, clap::Args)]
pub struct TelemetryArgs {
    /// Log format: auto (pretty at a terminal), pretty or json.
    #[arg(long, env = "TTAKJI_LOG_FORMAT", default_value = "auto", value_parser = parse_log_format)]
    pub log_format: LogFormat,
    /// Export spans to this OTLP/gRPC collector (e.g. http://localhost:4317).
    #[arg(long, env = "TTAKJI_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
}

impl TelemetryArgs {
    pub fn config(&self, service: &str) -> TelemetryConfig {
        TelemetryConfig {
            service_name: service.to_owned(),
            log_format: self.log_format,
            otlp_endpoint: self.otlp_endpoint.clone(),
        }
    }
}

fn parse_log_format(s: &str) -> Result<LogFormat, String> {
    match s {
        "auto" => Ok(LogFormat::Auto),
        "pretty" => Ok(LogFormat::Pretty),
        "json" => Ok(LogFormat::Json),
        other => Err(format!("log format {other:?}: use auto, pretty or json")),
    }
}

/// `ttakji serve`: everything in one process.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Where clients connect (the gateway's public gRPC API).
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// Where the authority listens inside the process.
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_LISTEN",
        default_value = "127.0.0.1:50052"
    )]
    pub authority_listen: SocketAddr,
    /// Where the ratings service listens inside the process.
    #[arg(long, env = "TTAKJI_RATINGS_LISTEN", default_value = "127.0.0.1:50054")]
    pub ratings_listen: SocketAddr,
    /// Where the matchmaker listens inside the process.
    #[arg(
        long,
        env = "TTAKJI_MATCHMAKER_LISTEN",
        default_value = "127.0.0.1:50053"
    )]
    pub matchmaker_listen: SocketAddr,
    #[command(flatten)]
    pub matching: MatchingArgs,
    /// Where Prometheus reads `/metrics` (one endpoint for the process).
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "127.0.0.1:9090")]
    pub metrics_listen: SocketAddr,
    /// The database: an SQLite file by default, or postgres://….
    #[arg(
        long,
        env = "TTAKJI_DATABASE_URL",
        default_value = "sqlite://ttakji.db"
    )]
    pub database_url: String,
    /// Redis for the event bus; without it the bus is in-process.
    #[arg(long, env = "TTAKJI_REDIS_URL")]
    pub redis_url: Option<String>,
    /// Token keys as kid=secret[,kid=secret…]; the first signs. Without them
    /// a key is kept in --token-key-file, so tokens survive a restart.
    #[arg(long, env = "TTAKJI_TOKEN_KEYS", hide_env_values = true)]
    pub token_keys: Option<String>,
    #[arg(
        long,
        env = "TTAKJI_TOKEN_KEY_FILE",
        default_value = "ttakji-token.key"
    )]
    pub token_key_file: PathBuf,
    /// Caps the computer's playouts per move (small machines, tests).
    #[arg(long, env = "TTAKJI_AI_MAX_PLAYOUTS")]
    pub ai_max_playouts: Option<u32>,
    /// Our OAuth client id at Google; without it Google sign-in is off.
    #[arg(long, env = "TTAKJI_GOOGLE_CLIENT_ID")]
    pub google_client_id: Option<String>,
    /// Where Google publishes its signing keys.
    #[arg(long, env = "TTAKJI_GOOGLE_JWKS_URL", default_value = ttakji_gateway::google::GOOGLE_JWKS_URL)]
    pub google_jwks_url: String,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// How the matchmaker pairs and what games it makes.
#[derive(Debug, clap::Args)]
pub struct MatchingArgs {
    /// Seconds per move in games between people.
    #[arg(long, env = "TTAKJI_SECONDS_PER_MOVE", default_value_t = 30)]
    pub seconds_per_move: u32,
    /// Seconds a player waits before the computer is offered.
    #[arg(long, env = "TTAKJI_AI_AFTER", default_value_t = 10.0)]
    pub ai_after: f64,
    /// The rating gap allowed at once, and the points it widens by each second.
    #[arg(long, env = "TTAKJI_BASE_GAP", default_value_t = 50)]
    pub base_gap: u32,
    #[arg(long, env = "TTAKJI_WIDEN_PER_SECOND", default_value_t = 25)]
    pub widen_per_second: u32,
    /// Seconds after which any gap is allowed.
    #[arg(long, env = "TTAKJI_ANY_GAP_AFTER", default_value_t = 30.0)]
    pub any_gap_after: f64,
    /// Seconds a queued player may go unheard before the ticket is dropped.
    #[arg(long, env = "TTAKJI_QUEUE_GRACE", default_value_t = 5.0)]
    pub grace: f64,
    /// A challenge's link is this followed by its code.
    #[arg(
        long,
        env = "TTAKJI_LINK_BASE",
        default_value = "https://ttakji.app/c/"
    )]
    pub link_base: String,
}

fn seconds(what: &str, s: f64) -> anyhow::Result<Duration> {
    anyhow::ensure!(
        s.is_finite() && s >= 0.0,
        "{what} must be a number of seconds, not {s}"
    );
    Ok(Duration::from_secs_f64(s))
}

impl MatchingArgs {
    pub fn config(
        &self,
        listen: SocketAddr,
        authority_url: String,
    ) -> anyhow::Result<ttakji_matchmaker::Config> {
        let mut config = ttakji_matchmaker::Config::new(listen, authority_url);
        config.seconds_per_move = self.seconds_per_move;
        config.link_base = self.link_base.clone();
        config.rules.ai_after = seconds("--ai-after", self.ai_after)?;
        config.rules.base_gap = self.base_gap;
        config.rules.widen_per_second = self.widen_per_second;
        config.rules.any_gap_after = seconds("--any-gap-after", self.any_gap_after)?;
        config.rules.grace = seconds("--grace", self.grace)?;
        Ok(config)
    }
}

/// `ttakji matchmaker`: the matchmaker alone.
#[derive(Debug, clap::Args)]
pub struct MatchmakerArgs {
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "0.0.0.0:50053")]
    pub listen: SocketAddr,
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "0.0.0.0:9092")]
    pub metrics_listen: SocketAddr,
    /// The authority's address.
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_URL",
        default_value = "http://127.0.0.1:50052"
    )]
    pub authority_url: String,
    /// Redis: tickets, challenges and events.
    #[arg(long, env = "TTAKJI_REDIS_URL")]
    pub redis_url: String,
    /// The prefix of the matchmaker's Redis keys (deployments sharing a Redis
    /// use different ones).
    #[arg(long, env = "TTAKJI_REDIS_NAMESPACE", default_value = ttakji_matchmaker::tickets::DEFAULT_NAMESPACE)]
    pub redis_namespace: String,
    #[command(flatten)]
    pub matching: MatchingArgs,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// `ttakji ratings`: the ratings service alone.
#[derive(Debug, clap::Args)]
pub struct RatingsArgs {
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "0.0.0.0:50054")]
    pub listen: SocketAddr,
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "0.0.0.0:9093")]
    pub metrics_listen: SocketAddr,
    /// The authority, for reconciliation.
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_URL",
        default_value = "http://127.0.0.1:50052"
    )]
    pub authority_url: String,
    /// postgres://… (or sqlite://FILE for a single machine).
    #[arg(long, env = "TTAKJI_DATABASE_URL")]
    pub database_url: String,
    /// Redis: finished games and the leaderboard.
    #[arg(long, env = "TTAKJI_REDIS_URL")]
    pub redis_url: String,
    /// Seconds between reconciliation passes.
    #[arg(long, env = "TTAKJI_RECONCILE_EVERY", default_value_t = 60.0)]
    pub reconcile_every: f64,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// `ttakji gateway`: the public API alone.
#[derive(Debug, clap::Args)]
pub struct GatewayArgs {
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "0.0.0.0:50051")]
    pub listen: SocketAddr,
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "0.0.0.0:9090")]
    pub metrics_listen: SocketAddr,
    /// The authority's address.
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_URL",
        default_value = "http://127.0.0.1:50052"
    )]
    pub authority_url: String,
    /// The matchmaker's address.
    #[arg(
        long,
        env = "TTAKJI_MATCHMAKER_URL",
        default_value = "http://127.0.0.1:50053"
    )]
    pub matchmaker_url: String,
    /// The ratings service's address.
    #[arg(
        long,
        env = "TTAKJI_RATINGS_URL",
        default_value = "http://127.0.0.1:50054"
    )]
    pub ratings_url: String,
    /// postgres://… for the accounts (or sqlite://FILE for a single machine).
    #[arg(long, env = "TTAKJI_DATABASE_URL")]
    pub database_url: String,
    /// Redis, where game events arrive.
    #[arg(long, env = "TTAKJI_REDIS_URL")]
    pub redis_url: String,
    /// Token keys as kid=secret[,kid=secret…]; every gateway of a
    /// deployment needs the same list. The first key signs.
    #[arg(long, env = "TTAKJI_TOKEN_KEYS", hide_env_values = true)]
    pub token_keys: String,
    /// Our OAuth client id at Google; without it Google sign-in is off.
    #[arg(long, env = "TTAKJI_GOOGLE_CLIENT_ID")]
    pub google_client_id: Option<String>,
    /// Where Google publishes its signing keys.
    #[arg(long, env = "TTAKJI_GOOGLE_JWKS_URL", default_value = ttakji_gateway::google::GOOGLE_JWKS_URL)]
    pub google_jwks_url: String,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// `ttakji authority`: the game authority alone.
#[derive(Debug, clap::Args)]
pub struct AuthorityArgs {
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "0.0.0.0:50052")]
    pub listen: SocketAddr,
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "0.0.0.0:9091")]
    pub metrics_listen: SocketAddr,
    /// postgres://… (or sqlite://FILE for a single machine).
    #[arg(long, env = "TTAKJI_DATABASE_URL")]
    pub database_url: String,
    /// Redis, where game events are published.
    #[arg(long, env = "TTAKJI_REDIS_URL")]
    pub redis_url: String,
    #[arg(long, env = "TTAKJI_AI_MAX_PLAYOUTS")]
    pub ai_max_playouts: Option<u32>,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// What `ttakji help <service>` says of the ready line.
pub const READY_LINE_HELP: &str = "The first line on standard output says where the service \
listens, for scripts and tests: `listening`, then `name=address` pairs separated by single \
spaces, the service's own gRPC listener first and `metrics` last (for example `listening \
authority=0.0.0.0:50052 metrics=0.0.0.0:9091`; `ttakji serve` names the gateway, authority, \
matchmaker and ratings listeners). The lines after it are for people and may change.";

/// The listeners a service has bound, announced once it is ready.
#[derive(Debug, Default)]
struct Listening(Vec<(&'static str, SocketAddr)>);

impl Listening {
    fn on(mut self, name: &'static str, addr: SocketAddr) -> Listening {
        self.0.push((name, addr));
        self
    }

    fn maybe(self, name: &'static str, addr: Option<SocketAddr>) -> Listening {
        match addr {
            Some(addr) => self.on(name, addr),
            None => self,
        }
    }

    /// Prints the ready line and then `for_people` as one write. A reader
    /// that has gone away must not stop the service, so a failure to write
    /// is ignored.
    fn announce(&self, for_people: &str) {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "{self}\n{for_people}\n");
        let _ = stdout.flush();
    }
}

impl std::fmt::Display for Listening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("listening")?;
        for (name, addr) in &self.0 {
            write!(f, " {name}={addr}")?;
        }
        Ok(())
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// How long a stopping service waits for its tasks (a game's last write,
/// a subscriber's goodbye) before it exits anyway.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs a service with telemetry, an async runtime and a shutdown signal
/// that Ctrl-C or SIGTERM triggers.
fn run_service<F, Fut>(telemetry: &TelemetryArgs, name: &str, service: F) -> anyhow::Result<()>
where
    F: FnOnce(Shutdown) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let _telemetry = ttakji_platform::telemetry::init(&telemetry.config(name))?;
    runtime()?.block_on(async {
        let (trigger, shutdown) = shutdown::channel();
        stop_on_signal(trigger.clone());
        let served = service(shutdown).await;
        let abandoned = trigger.completed(SHUTDOWN_GRACE).await;
        if abandoned > 0 {
            tracing::warn!(abandoned, "tasks still running at exit");
        }
        served
    })
}

fn stop_on_signal(trigger: shutdown::ShutdownTrigger) {
    tokio::spawn(async move {
        shutdown::os_signal().await;
        tracing::info!("stopping");
        trigger.trigger();
    });
}

async fn bus(redis_url: Option<&str>, shutdown: Shutdown) -> anyhow::Result<Bus> {
    match redis_url {
        Some(url) => Bus::redis(url, shutdown).await.with_context(|| {
            format!(
                "connecting the event bus to {}",
                ttakji_platform::store::redact(url)
            )
        }),
        None => Ok(Bus::in_process()),
    }
}

/// Reads the token key from `path`, creating it with a random secret first.
fn key_file(path: &Path) -> anyhow::Result<TokenKeys> {
    if !path.exists() {
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        std::fs::write(path, format!("k1={secret}\n"))
            .with_context(|| format!("writing the token key to {}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .with_context(|| format!("restricting {}", path.display()))?;
        }
    }
    let spec =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    TokenKeys::parse(spec.trim(), TOKEN_TTL).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Announces a service running alone: its gRPC and metrics listeners.
fn announce(service: &'static str, addr: SocketAddr, metrics: Option<SocketAddr>) {
    let metrics_text =
        metrics.map_or_else(String::new, |a| format!(", metrics on http://{a}/metrics"));
    Listening::default()
        .on(service, addr)
        .maybe("metrics", metrics)
        .announce(&format!(
            "ttakji {service} listening on {addr}{metrics_text}"
        ));
}

pub fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    run_service(&args.telemetry, "ttakji", |shutdown| async move {
        let keys = match &args.token_keys {
            Some(spec) => TokenKeys::parse(spec, TOKEN_TTL)
                .map_err(|e| anyhow::anyhow!("--token-keys: {e}"))?,
            None => key_file(&args.token_key_file)?,
        };
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(args.redis_url.as_deref(), shutdown.clone()).await?;
        let metrics = ttakji_platform::metrics::serve(args.metrics_listen, shutdown.clone())
            .await
            .with_context(|| format!("binding metrics to {}", args.metrics_listen))?;
        let authority = ttakji_authority::App::build(
            ttakji_authority::Config {
                listen: args.authority_listen,
                metrics_listen: None,
                ai: ttakji_authority::AiConfig {
                    max_playouts: args.ai_max_playouts,
                    seed: None,
                },
            },
            db.clone(),
            bus.clone(),
            shutdown.clone(),
        )
        .await?;
        let tickets = match &args.redis_url {
            Some(url) => ttakji_matchmaker::Tickets::redis(url)
                .await
                .with_context(|| {
                    format!(
                        "connecting the queue to {}",
                        ttakji_platform::store::redact(url)
                    )
                })?,
            None => ttakji_matchmaker::Tickets::memory(),
        };
        let matchmaker = ttakji_matchmaker::App::build(
            args.matching.config(
                args.matchmaker_listen,
                format!("http://{}", authority.addr()),
            )?,
            tickets,
            bus.clone(),
            shutdown.clone(),
        )
        .await?;
        let ratings = ttakji_ratings::App::build(
            ttakji_ratings::Config {
                listen: args.ratings_listen,
                metrics_listen: None,
                authority_url: format!("http://{}", authority.addr()),
                redis_url: args.redis_url.clone(),
                ladder_prefix: ttakji_ratings::LADDER_PREFIX.to_owned(),
                reconcile_every: Duration::from_secs(60),
            },
            db.clone(),
            bus.clone(),
            shutdown.clone(),
        )
        .await?;
        let gateway = ttakji_gateway::App::build(
            ttakji_gateway::Config {
                listen: args.listen,
                metrics_listen: None,
                authority_url: format!("http://{}", authority.addr()),
                matchmaker_url: format!("http://{}", matchmaker.addr()),
                ratings_url: format!("http://{}", ratings.addr()),
                token_keys: keys,
                google_client_id: args.google_client_id.clone(),
                google_jwks_url: args.google_jwks_url.clone(),
            },
            db.clone(),
            bus,
            shutdown.clone(),
        )
        .await?;
        Listening::default()
            .on("gateway", gateway.addr())
            .on("authority", authority.addr())
            .on("matchmaker", matchmaker.addr())
            .on("ratings", ratings.addr())
            .on("metrics", metrics)
            .announce(&format!(
                "ttakji serving: clients connect to http://{} (gRPC), metrics at http://{}/metrics, database {}, bus {}",
                gateway.addr(),
                metrics,
                ttakji_platform::store::redact(&args.database_url),
                if args.redis_url.is_some() {
                    "redis"
                } else {
                    "in-process"
                },
            ));
        let (a, m, r, g) = tokio::join!(
            authority.run_until_stopped(),
            matchmaker.run_until_stopped(),
            ratings.run_until_stopped(),
            gateway.run_until_stopped()
        );
        a.and(m).and(r).and(g)
    })
}

pub fn gateway(args: &GatewayArgs) -> anyhow::Result<()> {
    run_service(&args.telemetry, "ttakji-gateway", |shutdown| async move {
        let keys = TokenKeys::parse(&args.token_keys, TOKEN_TTL)
            .map_err(|e| anyhow::anyhow!("--token-keys: {e}"))?;
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(Some(&args.redis_url), shutdown.clone()).await?;
        let app = ttakji_gateway::App::build(
            ttakji_gateway::Config {
                listen: args.listen,
                metrics_listen: Some(args.metrics_listen),
                authority_url: args.authority_url.clone(),
                matchmaker_url: args.matchmaker_url.clone(),
                ratings_url: args.ratings_url.clone(),
                token_keys: keys,
                google_client_id: args.google_client_id.clone(),
                google_jwks_url: args.google_jwks_url.clone(),
            },
            db,
            bus,
            shutdown,
        )
        .await?;
        announce("gateway", app.addr(), app.metrics_addr());
        app.run_until_stopped().await
    })
}

pub fn matchmaker(args: &MatchmakerArgs) -> anyhow::Result<()> {
    run_service(
        &args.telemetry,
        "ttakji-matchmaker",
        |shutdown| async move {
            let tickets =
                ttakji_matchmaker::Tickets::redis_in(&args.redis_url, &args.redis_namespace)
                    .await
                    .with_context(|| {
                        format!(
                            "connecting the queue to {}",
                            ttakji_platform::store::redact(&args.redis_url)
                        )
                    })?;
            let bus = bus(Some(&args.redis_url), shutdown.clone()).await?;
            let mut config = args
                .matching
                .config(args.listen, args.authority_url.clone())?;
            config.metrics_listen = Some(args.metrics_listen);
            let app = ttakji_matchmaker::App::build(config, tickets, bus, shutdown).await?;
            announce("matchmaker", app.addr(), app.metrics_addr());
            app.run_until_stopped().await
        },
    )
}

pub fn ratings(args: &RatingsArgs) -> anyhow::Result<()> {
    run_service(&args.telemetry, "ttakji-ratings", |shutdown| async move {
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(Some(&args.redis_url), shutdown.clone()).await?;
        let app = ttakji_ratings::App::build(
            ttakji_ratings::Config {
                listen: args.listen,
                metrics_listen: Some(args.metrics_listen),
                authority_url: args.authority_url.clone(),
                redis_url: Some(args.redis_url.clone()),
                ladder_prefix: ttakji_ratings::LADDER_PREFIX.to_owned(),
                reconcile_every: seconds("--reconcile-every", args.reconcile_every)?
                    .max(Duration::from_secs(1)),
            },
            db,
            bus,
            shutdown,
        )
        .await?;
        announce("ratings", app.addr(), app.metrics_addr());
        app.run_until_stopped().await
    })
}

pub fn authority(args: &AuthorityArgs) -> anyhow::Result<()> {
    run_service(&args.telemetry, "ttakji-authority", |shutdown| async move {
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(Some(&args.redis_url), shutdown.clone()).await?;
        let app = ttakji_authority::App::build(
            ttakji_authority::Config {
                listen: args.listen,
                metrics_listen: Some(args.metrics_listen),
                ai: ttakji_authority::AiConfig {
                    max_playouts: args.ai_max_playouts,
                    seed: None,
                },
            },
            db,
            bus,
            shutdown,
        )
        .await?;
        announce("authority", app.addr(), app.metrics_addr());
        app.run_until_stopped().await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_names_each_listener_in_order_after_the_word_listening() {
        let line = Listening::default()
            .on("authority", "127.0.0.1:50052".parse().expect("addr"))
            .maybe("metrics", Some("127.0.0.1:9091".parse().expect("addr")))
            .maybe("ignored", None)
            .to_string();
        assert_eq!(
            line,
            "listening authority=127.0.0.1:50052 metrics=127.0.0.1:9091"
        );
    }
}
