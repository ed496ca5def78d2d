//! Starting the services: all of them in one process (`ttakji serve`), or
//! one each (`ttakji gateway`, `ttakji authority`) against Redis and Postgres.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use ttakji::stack::{Stack, StackConfig};
use ttakji_gateway::{TOKEN_TTL, TokenKeysParser};
use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::{self, Shutdown};
use ttakji_platform::store::Database;
use ttakji_platform::telemetry::{LogFormat, TelemetryConfig};

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

/// `ttakji serve`: everything in one process. Its flags name the
/// in-process addresses (`--authority-listen`, …) and take the services'
/// own settings where they differ from one service alone.
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
    /// The key the internal ports (authority, matchmaker, ratings) require
    /// of their callers, for tools that call them from outside; one of the
    /// process's own, which nothing outside knows, unless given.
    #[arg(long, env = "TTAKJI_SERVICE_KEY", hide_env_values = true)]
    pub service_key: Option<ttakji_platform::grpc::ServiceKey>,
    /// Where the matchmaker listens inside the process.
    #[arg(
        long,
        env = "TTAKJI_MATCHMAKER_LISTEN",
        default_value = "127.0.0.1:50053"
    )]
    pub matchmaker_listen: SocketAddr,
    #[command(flatten)]
    pub pairing: ttakji_matchmaker::PairingRules,
    #[command(flatten)]
    pub public: ttakji_gateway::Public,
    /// Seconds per move in games between people.
    #[arg(long, env = "TTAKJI_SECONDS_PER_MOVE", default_value_t = ttakji_matchmaker::SECONDS_PER_MOVE)]
    pub seconds_per_move: u32,
    /// A challenge's link is this followed by its code; by default the
    /// page this process serves, `http://<--listen>/c/`.
    #[arg(long, env = "TTAKJI_LINK_BASE")]
    pub link_base: Option<String>,
    /// Where Prometheus reads `/metrics` (one endpoint for the process).
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "127.0.0.1:9090")]
    pub metrics_listen: SocketAddr,
    /// The database: an SQLite file by default, or postgres://….
    #[arg(
        long,
        env = "TTAKJI_DATABASE_URL",
        hide_env_values = true,
        default_value = "sqlite://ttakji.db"
    )]
    pub database_url: String,
    /// Redis for the event bus; without it the bus is in-process.
    #[arg(long, env = "TTAKJI_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// Token keys as kid=secret[,kid=secret…]; the first signs. Without them
    /// a key is kept in --token-key-file, so tokens survive a restart.
    #[arg(long, env = "TTAKJI_TOKEN_KEYS", hide_env_values = true, value_parser = TokenKeysParser)]
    pub token_keys: Option<TokenKeys>,
    #[arg(
        long,
        env = "TTAKJI_TOKEN_KEY_FILE",
        default_value = "ttakji-token.key"
    )]
    pub token_key_file: PathBuf,
    #[command(flatten)]
    pub ai: ttakji_authority::AiConfig,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// `ttakji matchmaker`: the matchmaker alone.
#[derive(Debug, clap::Args)]
pub struct MatchmakerArgs {
    #[command(flatten)]
    pub config: ttakji_matchmaker::Config,
    /// Redis: tickets, challenges and events.
    #[arg(long, env = "TTAKJI_REDIS_URL", hide_env_values = true)]
    pub redis_url: String,
    /// The prefix of the matchmaker's Redis keys (deployments sharing a Redis
    /// use different ones).
    #[arg(long, env = "TTAKJI_REDIS_NAMESPACE", default_value = ttakji_matchmaker::tickets::DEFAULT_NAMESPACE)]
    pub redis_namespace: String,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// `ttakji ratings`: the ratings service alone; its `--redis-url` carries
/// finished games and the leaderboard.
#[derive(Debug, clap::Args)]
pub struct RatingsArgs {
    #[command(flatten)]
    pub config: ttakji_ratings::Config,
    /// postgres://… (or sqlite://FILE for a single machine).
    #[arg(long, env = "TTAKJI_DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// `ttakji gateway`: the public API alone.
#[derive(Debug, clap::Args)]
pub struct GatewayArgs {
    #[command(flatten)]
    pub config: ttakji_gateway::Config,
    /// postgres://… for the accounts (or sqlite://FILE for a single machine).
    #[arg(long, env = "TTAKJI_DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// Redis, where game events arrive.
    #[arg(long, env = "TTAKJI_REDIS_URL", hide_env_values = true)]
    pub redis_url: String,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// `ttakji authority`: the game authority alone.
#[derive(Debug, clap::Args)]
pub struct AuthorityArgs {
    #[command(flatten)]
    pub config: ttakji_authority::Config,
    /// postgres://… (or sqlite://FILE for a single machine).
    #[arg(long, env = "TTAKJI_DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// Redis, where game events are published and instances share games.
    #[arg(long, env = "TTAKJI_REDIS_URL", hide_env_values = true)]
    pub redis_url: String,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// What `ttakji help <service>` says of the ready line.
pub const READY_LINE_HELP: &str = "The first line on standard output says where the service \
listens, for scripts and tests: `listening`, then `name=address` pairs separated by single \
spaces, the service's own gRPC listener first and `metrics` last (for example `listening \
authority=127.0.0.1:50052 metrics=127.0.0.1:9091`; `ttakji serve` names the gateway, authority, \
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
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Runs a service with telemetry, an async runtime and a shutdown signal
/// that Ctrl-C or SIGTERM triggers.
fn run_service<F, Fut>(telemetry: &TelemetryArgs, name: &str, service: F) -> anyhow::Result<()>
where
    F: FnOnce(Shutdown) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let runtime = runtime()?;
    // The OTLP exporter's connection is a task on the runtime, so it is
    // made inside it; the runtime outlives it, so the last spans are sent
    // when it is dropped.
    let telemetry = {
        let _inside = runtime.enter();
        ttakji_platform::telemetry::init(&telemetry.config(name))?
    };
    let served = runtime.block_on(async {
        let (trigger, shutdown) = shutdown::channel();
        stop_on_signal(trigger.clone());
        let served = service(shutdown).await;
        let abandoned = trigger.completed(SHUTDOWN_GRACE).await;
        if abandoned > 0 {
            tracing::warn!(abandoned, "tasks still running at exit");
        }
        served
    });
    drop(telemetry);
    served
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
            Some(keys) => keys.clone(),
            None => key_file(&args.token_key_file)?,
        };
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(args.redis_url.as_deref(), shutdown.clone()).await?;
        let metrics = ttakji_platform::metrics::serve(args.metrics_listen, shutdown.clone())
            .await
            .with_context(|| format!("binding metrics to {}", args.metrics_listen))?;
        let tickets = match &args.redis_url {
            Some(url) => queue(url, ttakji_matchmaker::tickets::DEFAULT_NAMESPACE).await?,
            None => ttakji_matchmaker::Tickets::memory(),
        };
        // The services in this process share a key: the one given, or one
        // of the stack's own; their internal ports answer nothing else.
        let mut config = StackConfig::local(keys);
        config.service_key.clone_from(&args.service_key);
        config.authority.listen = args.authority_listen;
        config.authority.ai = args.ai.clone();
        config.matchmaker.listen = args.matchmaker_listen;
        config.matchmaker.rules = args.pairing.clone();
        config.matchmaker.seconds_per_move = args.seconds_per_move;
        config.matchmaker.link_base = args
            .link_base
            .clone()
            .unwrap_or_else(|| format!("http://{}/c/", args.listen));
        config.ratings.listen = args.ratings_listen;
        config.ratings.redis_url = args.redis_url.clone();
        config.gateway.listen = args.listen;
        config.gateway.public = args.public.clone();
        let stack = Stack::build(config, db, bus, tickets, shutdown.clone()).await?;
        Listening::default()
            .on("gateway", stack.gateway_addr())
            .on("authority", stack.authority_addr())
            .on("matchmaker", stack.matchmaker_addr())
            .on("ratings", stack.ratings_addr())
            .on("metrics", metrics)
            .announce(&format!(
                "ttakji serving: play in a browser at http://{}/ (apps connect there too, gRPC or gRPC-web), metrics at http://{}/metrics, database {}, bus {}",
                stack.gateway_addr(),
                metrics,
                ttakji_platform::store::redact(&args.database_url),
                if args.redis_url.is_some() {
                    "redis"
                } else {
                    "in-process"
                },
            ));
        stack.run_until_stopped().await
    })
}

/// The matchmaker's tickets in Redis under `namespace`.
async fn queue(url: &str, namespace: &str) -> anyhow::Result<ttakji_matchmaker::Tickets> {
    ttakji_matchmaker::Tickets::redis_in(url, namespace)
        .await
        .with_context(|| {
            format!(
                "connecting the queue to {}",
                ttakji_platform::store::redact(url)
            )
        })
}

/// A service run alone must have the key the services share.
fn require_key(
    key: Option<&ttakji_platform::grpc::ServiceKey>,
    service: &str,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        key.is_some(),
        "ttakji {service} needs --service-key (TTAKJI_SERVICE_KEY), the secret every service \
         of the deployment shares: internal calls carry it and nothing else is answered"
    );
    Ok(())
}

pub fn gateway(args: &GatewayArgs) -> anyhow::Result<()> {
    require_key(args.config.service_key.as_ref(), "gateway")?;
    run_service(&args.telemetry, "ttakji-gateway", |shutdown| async move {
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(Some(&args.redis_url), shutdown.clone()).await?;
        let app = ttakji_gateway::App::build(args.config.clone(), db, bus, shutdown).await?;
        announce("gateway", app.addr(), app.metrics_addr());
        app.run_until_stopped().await
    })
}

pub fn matchmaker(args: &MatchmakerArgs) -> anyhow::Result<()> {
    require_key(args.config.service_key.as_ref(), "matchmaker")?;
    run_service(
        &args.telemetry,
        "ttakji-matchmaker",
        |shutdown| async move {
            let tickets = queue(&args.redis_url, &args.redis_namespace).await?;
            let bus = bus(Some(&args.redis_url), shutdown.clone()).await?;
            let app =
                ttakji_matchmaker::App::build(args.config.clone(), tickets, bus, shutdown).await?;
            announce("matchmaker", app.addr(), app.metrics_addr());
            app.run_until_stopped().await
        },
    )
}

pub fn ratings(args: &RatingsArgs) -> anyhow::Result<()> {
    require_key(args.config.service_key.as_ref(), "ratings")?;
    run_service(&args.telemetry, "ttakji-ratings", |shutdown| async move {
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(args.config.redis_url.as_deref(), shutdown.clone()).await?;
        let app = ttakji_ratings::App::build(args.config.clone(), db, bus, shutdown).await?;
        announce("ratings", app.addr(), app.metrics_addr());
        app.run_until_stopped().await
    })
}

pub fn authority(args: &AuthorityArgs) -> anyhow::Result<()> {
    require_key(args.config.service_key.as_ref(), "authority")?;
    run_service(&args.telemetry, "ttakji-authority", |shutdown| async move {
        let db = Database::connect(&args.database_url).await?;
        let bus = bus(Some(&args.redis_url), shutdown.clone()).await?;
        let mut config = args.config.clone();
        config.redis_url = Some(args.redis_url.clone());
        let app = ttakji_authority::App::build(config, db, bus, shutdown).await?;
        announce("authority", app.addr(), app.metrics_addr());
        app.run_until_stopped().await
    })
}

#[cfg(test)]
mod tests {
    use clap::Args;

    use super::*;

    /// `line` (after the program's name) as the options of one command.
    fn parse<T: Args>(line: &[&str]) -> Result<T, clap::Error> {
        let matches = T::augment_args(clap::Command::new("ttakji"))
            .try_get_matches_from(std::iter::once("ttakji").chain(line.iter().copied()))?;
        T::from_arg_matches(&matches)
    }

    fn addr(text: &str) -> SocketAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn the_ready_line_names_each_listener_in_order_after_the_word_listening() {
        let line = Listening::default()
            .on("authority", addr("127.0.0.1:50052"))
            .maybe("metrics", Some(addr("127.0.0.1:9091")))
            .maybe("ignored", None)
            .to_string();
        assert_eq!(
            line,
            "listening authority=127.0.0.1:50052 metrics=127.0.0.1:9091"
        );
    }

    #[test]
    fn an_authority_command_line_becomes_the_authority_config() {
        let args: AuthorityArgs = parse(&[
            "--listen",
            "127.0.0.1:7000",
            "--database-url",
            "postgres://db/ttakji",
            "--redis-url",
            "redis://redis:6379",
            "--ai-max-playouts",
            "150",
        ])
        .expect("parses");
        assert_eq!(args.config.listen, addr("127.0.0.1:7000"));
        assert_eq!(
            args.config.metrics_listen,
            Some(addr("127.0.0.1:9091")),
            "an internal service's metrics stay on loopback unless told otherwise"
        );
        assert_eq!(args.config.ai.max_playouts, Some(150));
        assert_eq!(
            args.config.ai.seed, None,
            "games are not repeated in service"
        );
        assert_eq!(args.database_url, "postgres://db/ttakji");
    }

    #[test]
    fn internal_services_listen_on_loopback_unless_told_otherwise() {
        let loopback = |a: SocketAddr| a.ip().is_loopback();
        let authority: AuthorityArgs = parse(&[
            "--database-url",
            "postgres://db/ttakji",
            "--redis-url",
            "redis://redis:6379",
        ])
        .expect("parses");
        let ratings: RatingsArgs = parse(&[
            "--database-url",
            "postgres://db/ttakji",
            "--redis-url",
            "redis://redis:6379",
        ])
        .expect("parses");
        let matchmaker: MatchmakerArgs =
            parse(&["--redis-url", "redis://redis:6379"]).expect("parses");
        let gateway: GatewayArgs = parse(&[
            "--database-url",
            "postgres://db/ttakji",
            "--redis-url",
            "redis://redis:6379",
            "--token-keys",
            "k1=a-long-enough-secret-for-the-test",
        ])
        .expect("parses");
        for (name, grpc, metrics) in [
            (
                "authority",
                Some(authority.config.listen),
                authority.config.metrics_listen,
            ),
            (
                "ratings",
                Some(ratings.config.listen),
                ratings.config.metrics_listen,
            ),
            (
                "matchmaker",
                Some(matchmaker.config.listen),
                matchmaker.config.metrics_listen,
            ),
            ("gateway's metrics", None, gateway.config.metrics_listen),
        ] {
            assert!(grpc.is_none_or(loopback), "{name} listens on {grpc:?}");
            assert!(
                metrics.is_some_and(loopback),
                "{name} serves metrics on {metrics:?}"
            );
        }
        assert!(
            gateway.config.listen.ip().is_unspecified(),
            "the public API listens everywhere"
        );
    }

    #[test]
    fn a_matchmaker_without_options_keeps_the_products_pairing_rules_and_clock() {
        let args: MatchmakerArgs = parse(&["--redis-url", "redis://redis:6379"]).expect("parses");
        let product = ttakji_matchmaker::Config::new(
            addr("127.0.0.1:50053"),
            "http://127.0.0.1:50052".into(),
        );
        let (got, want) = (&args.config, &product);
        assert_eq!(
            (got.listen, &got.authority_url),
            (want.listen, &want.authority_url)
        );
        assert_eq!(got.metrics_listen, Some(addr("127.0.0.1:9092")));
        assert_eq!(
            (
                got.seconds_per_move,
                &got.link_base,
                got.challenge_ttl,
                got.tick
            ),
            (
                want.seconds_per_move,
                &want.link_base,
                want.challenge_ttl,
                want.tick
            )
        );
        let (got, want) = (&got.rules, &want.rules);
        assert_eq!(
            (got.base_gap, got.widen_per_second, got.any_gap_after),
            (want.base_gap, want.widen_per_second, want.any_gap_after)
        );
        assert_eq!(
            (got.ai_after, got.grace, got.ticket_ttl),
            (want.ai_after, want.grace, want.ticket_ttl)
        );
    }

    #[test]
    fn matchmaker_waits_are_given_in_seconds_and_never_negative() {
        let args: MatchmakerArgs = parse(&[
            "--redis-url",
            "redis://r",
            "--ai-after",
            "2.5",
            "--grace",
            "0",
            "--seconds-per-move",
            "1",
        ])
        .expect("parses");
        assert_eq!(args.config.rules.ai_after, Duration::from_millis(2500));
        assert_eq!(args.config.rules.grace, Duration::ZERO);
        assert_eq!(args.config.seconds_per_move, 1);
        assert!(
            parse::<MatchmakerArgs>(&["--redis-url", "redis://r", "--ai-after", "-1"]).is_err()
        );
    }

    #[test]
    fn ratings_need_redis_and_reconcile_at_most_once_a_second() {
        let args: RatingsArgs = parse(&[
            "--database-url",
            "postgres://db/ttakji",
            "--redis-url",
            "redis://redis:6379",
            "--reconcile-every",
            "0.1",
        ])
        .expect("parses");
        assert_eq!(args.config.redis_url.as_deref(), Some("redis://redis:6379"));
        assert_eq!(args.config.reconcile_every, Duration::from_secs(1));
        assert_eq!(args.config.ladder_prefix, ttakji_ratings::LADDER_PREFIX);
        assert!(parse::<RatingsArgs>(&["--database-url", "postgres://db/ttakji"]).is_err());
    }

    #[test]
    fn a_bad_token_key_list_is_refused_without_printing_the_other_secrets() {
        let refused = parse::<GatewayArgs>(&[
            "--database-url",
            "postgres://db/ttakji",
            "--redis-url",
            "redis://r",
            "--token-keys",
            "k2=a-secret-of-twenty-bytes,k1=short",
        ])
        .expect_err("a short secret is refused")
        .to_string();
        assert!(refused.contains("--token-keys"), "{refused}");
        assert!(!refused.contains("a-secret-of-twenty-bytes"), "{refused}");
    }

    #[test]
    fn serve_without_options_listens_on_loopback_with_an_sqlite_file() {
        let args: ServeArgs = parse(&[]).expect("parses");
        assert_eq!(args.listen, addr("127.0.0.1:50051"));
        assert_eq!(
            (
                args.authority_listen,
                args.matchmaker_listen,
                args.ratings_listen
            ),
            (
                addr("127.0.0.1:50052"),
                addr("127.0.0.1:50053"),
                addr("127.0.0.1:50054")
            )
        );
        assert_eq!(args.database_url, "sqlite://ttakji.db");
        assert!(args.token_keys.is_none() && args.redis_url.is_none());
        assert_eq!(args.seconds_per_move, 30);
        assert!(args.link_base.is_none(), "links point at the page served");
        assert_eq!(args.pairing.ai_after, Duration::from_secs(10));
    }
}
