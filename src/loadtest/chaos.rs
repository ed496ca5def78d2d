//! `ttakji loadtest --chaos`: the load test starts a whole deployment of
//! its own (a Redis server, three authorities, a matchmaker, a ratings
//! service and two gateways, all as processes of this binary on the
//! PostgreSQL database it is given), plays through both gateways, and
//! brings faults on a schedule, in turn:
//! - an authority killed with SIGKILL, then started again;
//! - an authority stopped with SIGSTOP for 2 to 7 s, then continued;
//! - Redis killed with SIGKILL, then started again (empty);
//! - a gateway killed with SIGKILL, then started again.
//!
//! Every move and read of every game is recorded with when it was sent and
//! answered ([`super::history`]), and each game's history is checked for
//! linearizability at the end.

use std::time::Duration;

use anyhow::Context as _;

use super::faults::Restartable;

/// The deployment's shared secrets: fixed, for a throwaway deployment
/// that listens on loopback only.
const SERVICE_KEY: &str = "service-key-of-a-chaos-run";
const TOKEN_KEYS: &str = "c1=token-secret-of-a-chaos-run";

/// The instances of each service started; the authorities keep the
/// default lease.
const AUTHORITIES: usize = 3;
const GATEWAYS: usize = 2;

/// A port free right now.
fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A shell word: `s` in single quotes.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The kinds of fault, in the order they come round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    KillAuthority,
    StopAuthority,
    RestartRedis,
    KillGateway,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::KillAuthority,
        Kind::StopAuthority,
        Kind::RestartRedis,
        Kind::KillGateway,
    ];

    /// The kind of fault number `n` (from 0).
    pub fn of(n: usize) -> Kind {
        Kind::ALL[n % Kind::ALL.len()]
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::KillAuthority => "authority kill -9",
            Kind::StopAuthority => "authority SIGSTOP",
            Kind::RestartRedis => "Redis kill -9 and restart",
            Kind::KillGateway => "gateway kill -9",
        }
    }
}

/// A deployment the load test runs itself.
#[derive(Debug)]
pub struct Deployment {
    redis: Restartable,
    authorities: Vec<Restartable>,
    gateways: Vec<Restartable>,
    others: Vec<Restartable>,
    /// The gateways' public URLs.
    pub gateway_urls: Vec<String>,
}

impl Deployment {
    /// Starts Redis (`redis-server`, which must be installed) and the
    /// services on `database_url`.
    ///
    /// # Errors
    /// When a process cannot be started.
    pub fn start(database_url: &str) -> anyhow::Result<Deployment> {
        let exe = std::env::current_exe().context("finding this program to start services")?;
        let exe = quoted(&exe.to_string_lossy());
        let redis_port = free_port()?;
        let redis = Restartable::start(&format!(
            "exec redis-server --port {redis_port} --bind 127.0.0.1 --save '' --appendonly no --loglevel warning"
        ))
        .context("starting redis-server (is Redis installed?)")?;
        let redis_url = format!("redis://127.0.0.1:{redis_port}");
        let namespace = format!("chaos{}", uuid::Uuid::new_v4().simple());
        let service = |what: &str, args: &str| {
            format!(
                "RUST_LOG=warn TTAKJI_SERVICE_KEY={} exec {exe} {what} --redis-url {redis_url} --metrics-listen 127.0.0.1:0 {args}",
                quoted(SERVICE_KEY)
            )
        };
        // Every service but the matchmaker keeps its data in the database.
        let database = format!("--database-url {}", quoted(database_url));
        let mut authority_urls = Vec::new();
        let mut authorities = Vec::new();
        for _ in 0..AUTHORITIES {
            let port = free_port()?;
            authority_urls.push(format!("http://127.0.0.1:{port}"));
            authorities.push(Restartable::start(&service(
                "authority",
                &format!("{database} --listen 127.0.0.1:{port} --redis-namespace {namespace}"),
            ))?);
        }
        let authority_url = authority_urls.join(",");
        let (matchmaker_port, ratings_port) = (free_port()?, free_port()?);
        let matchmaker = Restartable::start(&service(
            "matchmaker",
            &format!(
                "--redis-namespace {namespace} --listen 127.0.0.1:{matchmaker_port} \
                 --authority-url {authority_url}"
            ),
        ))?;
        let ratings = Restartable::start(&service(
            "ratings",
            &format!(
                "{database} --listen 127.0.0.1:{ratings_port} --authority-url {authority_url}"
            ),
        ))?;
        let mut gateway_urls = Vec::new();
        let mut gateways = Vec::new();
        for _ in 0..GATEWAYS {
            let port = free_port()?;
            gateway_urls.push(format!("http://127.0.0.1:{port}"));
            gateways.push(Restartable::start(&service(
                "gateway",
                &format!(
                    "{database} --listen 127.0.0.1:{port} --authority-url {authority_url} \
                     --matchmaker-url http://127.0.0.1:{matchmaker_port} \
                     --ratings-url http://127.0.0.1:{ratings_port} \
                     --token-keys {} --limits-exempt 127.0.0.1",
                    quoted(TOKEN_KEYS)
                ),
            ))?);
        }
        Ok(Deployment {
            redis,
            authorities,
            gateways,
            others: vec![matchmaker, ratings],
            gateway_urls,
        })
    }

    /// Brings fault number `n` (from 0), of kind [`Kind::of`], and waits
    /// until it is over (the process started again, or continued);
    /// returns what it did.
    pub fn fault(&mut self, n: usize, seed: u64) -> anyhow::Result<String> {
        let kind = Kind::of(n);
        let round = n / Kind::ALL.len();
        let what = match kind {
            Kind::KillAuthority => {
                let i = round % AUTHORITIES;
                self.authorities[i].restart()?;
                format!("authority {i} killed and started again")
            }
            Kind::StopAuthority => {
                let i = (round + 1) % AUTHORITIES;
                let pause = Duration::from_millis(2_000 + (seed ^ n as u64) % 5_001);
                self.authorities[i].signal("STOP");
                std::thread::sleep(pause);
                self.authorities[i].signal("CONT");
                format!("authority {i} stopped for {:.1} s", pause.as_secs_f64())
            }
            Kind::RestartRedis => {
                self.redis.restart()?;
                "Redis killed and started again".to_owned()
            }
            Kind::KillGateway => {
                let i = round % GATEWAYS;
                self.gateways[i].restart()?;
                format!("gateway {i} killed and started again")
            }
        };
        Ok(what)
    }

    /// Stops every process.
    pub fn stop(&mut self) {
        for process in self
            .gateways
            .iter_mut()
            .chain(&mut self.others)
            .chain(&mut self.authorities)
        {
            process.stop();
        }
        self.redis.stop();
    }
}
