//! Rate limits on the public API, per client address and per account.
//!
//! Every method belongs to one [`Class`] (signing in, account changes, the
//! queue, new games and challenges, moves, reads). Each class has a budget
//! per client address and, for calls with a token, per account: a burst and
//! a steady rate (GCRA, `governor`). A call over either budget is refused
//! as RESOURCE_EXHAUSTED before it reaches a handler; the message says
//! which budget and when to retry, and the `ttakji-retry-after-ms` header
//! says it in milliseconds, as on a retryable UNAVAILABLE.
//!
//! The address budgets are wider than the account ones, because one
//! address can be many players (a school, a carrier's NAT). An IPv6 address
//! counts by its /64, which one subscriber usually holds whole. Behind a
//! proxy the operator names the header that carries the client's address
//! (`--client-address-header`); addresses in `--limits-exempt` (load
//! generators, health checks) are not limited at all.
//!
//! Limits live in each gateway's memory: with several gateways a client
//! spread over them gets each one's budget, which the proxy in front can
//! prevent by keeping a client on one gateway. State for quiet keys is
//! dropped every minute, so a flood of addresses costs memory only while it
//! lasts.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use ttakji_platform::shutdown::Shutdown;

/// How often the state of keys that have gone quiet is dropped.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// The kinds of call that share a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `SignInGuest`, `SignInGoogle`: each guest sign-in makes an account.
    SignIn,
    /// `ChangeNickname`.
    Account,
    /// `FindMatch`, `CancelMatch`.
    Queue,
    /// `StartAiGame`, `CreateChallenge`, `AcceptChallenge`, `Rematch`:
    /// each can make a game; `SetAiEngine`, which can set the server
    /// thinking.
    NewGame,
    /// `PlayMove`, `Pass`, `Resign`, `UndoMove`, `OfferDraw`, `AnswerDraw`.
    Move,
    /// Everything else: reading games, watching, the ladder.
    Read,
}

impl Class {
    const ALL: [Class; 6] = [
        Class::SignIn,
        Class::Account,
        Class::Queue,
        Class::NewGame,
        Class::Move,
        Class::Read,
    ];

    /// The class of a public method, by its name (`PlayMove`).
    #[must_use]
    pub fn of(method: &str) -> Class {
        match method {
            "SignInGuest" | "SignInGoogle" => Class::SignIn,
            "ChangeNickname" => Class::Account,
            "FindMatch" | "CancelMatch" => Class::Queue,
            "StartAiGame" | "CreateChallenge" | "AcceptChallenge" | "Rematch" | "SetAiEngine" => {
                Class::NewGame
            }
            "PlayMove" | "Pass" | "Resign" | "UndoMove" | "OfferDraw" | "AnswerDraw"
            | "MarkDeadStones" | "ConfirmCount" | "ResumePlay" => Class::Move,
            _ => Class::Read,
        }
    }

    /// The class's name in messages and metrics.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Class::SignIn => "sign-ins",
            Class::Account => "account changes",
            Class::Queue => "queue requests",
            Class::NewGame => "new games and challenges",
            Class::Move => "moves",
            Class::Read => "requests",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The budget of one account: (burst, one more every `period`).
    /// `None`: not limited per account (no account signs in).
    fn per_account(self) -> Option<Budget> {
        match self {
            Class::SignIn => None,
            Class::Account => Some(Budget::new(5, Duration::from_secs(12))),
            Class::Queue => Some(Budget::new(10, Duration::from_millis(2000))),
            Class::NewGame => Some(Budget::new(10, Duration::from_secs(6))),
            Class::Move => Some(Budget::new(30, Duration::from_millis(100))),
            Class::Read => Some(Budget::new(60, Duration::from_millis(50))),
        }
    }

    /// The budget of one client address.
    fn per_address(self) -> Budget {
        match self {
            Class::SignIn => Budget::new(20, Duration::from_secs(3)),
            Class::Account => Budget::new(30, Duration::from_secs(1)),
            Class::Queue => Budget::new(60, Duration::from_millis(200)),
            Class::NewGame => Budget::new(60, Duration::from_millis(500)),
            Class::Move => Budget::new(300, Duration::from_millis(10)),
            Class::Read => Budget::new(600, Duration::from_millis(5)),
        }
    }
}

/// A burst and the time in which one call of it comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub burst: u32,
    pub period: Duration,
}

impl Budget {
    const fn new(burst: u32, period: Duration) -> Budget {
        Budget { burst, period }
    }

    fn quota(self) -> Quota {
        let burst = NonZeroU32::new(self.burst).unwrap_or(NonZeroU32::MIN);
        Quota::with_period(self.period)
            .unwrap_or_else(|| Quota::per_second(burst))
            .allow_burst(burst)
    }

    /// The steady rate in calls per second.
    #[must_use]
    pub fn per_second(self) -> f64 {
        1.0 / self.period.as_secs_f64()
    }
}

/// The budget of `class` for one account, if it has one.
#[must_use]
pub fn account_budget(class: Class) -> Option<Budget> {
    class.per_account()
}

/// The budget of `class` for one client address.
#[must_use]
pub fn address_budget(class: Class) -> Budget {
    class.per_address()
}

/// A network, `10.0.0.0/8` or `2001:db8::/32`; an address alone is itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// Whether `addr` is in this network.
    #[must_use]
    pub fn contains(&self, addr: IpAddr) -> bool {
        match (self.addr, unmapped(addr)) {
            (IpAddr::V4(net), IpAddr::V4(a)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

impl FromStr for Network {
    type Err = String;

    fn from_str(s: &str) -> Result<Network, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (s, None),
        };
        let addr: IpAddr = addr
            .trim()
            .parse()
            .map_err(|_| format!("{s:?} is not an address or a network like 10.0.0.0/8"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{s:?}: the prefix length must be 0 to {max}"))?,
        };
        Ok(Network { addr, prefix })
    }
}

/// An IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is the IPv4 one.
fn unmapped(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        IpAddr::V4(_) => addr,
    }
}

/// The key a client address is counted under: IPv4 as it is, IPv6 by its /64.
fn address_key(addr: IpAddr) -> IpAddr {
    match unmapped(addr) {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & (u128::MAX << 64);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

/// The gateway's rate-limit settings (flags and `TTAKJI_*` variables of
/// `ttakji gateway` and `ttakji serve`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Settings {
    /// Client addresses or networks that are never rate-limited, per
    /// address or per account, separated by commas (`10.1.0.0/16,::1`):
    /// load generators and probes the operator runs.
    #[arg(
        long = "limits-exempt",
        env = "TTAKJI_LIMITS_EXEMPT",
        value_delimiter = ','
    )]
    pub exempt: Vec<Network>,
    /// The request header in which a proxy in front of the gateway puts
    /// the client's address (`x-forwarded-for`; its last entry is taken,
    /// the one the proxy added). Without it the connection's own address
    /// counts. Set it only behind a proxy that always sets the header.
    #[arg(long, env = "TTAKJI_CLIENT_ADDRESS_HEADER")]
    pub client_address_header: Option<http::HeaderName>,
    /// The most games a player may have going at once against a computer
    /// that thinks on the server (0: no limit). Games whose computer thinks
    /// in the player's browser, and the queue's computer opponents, do not
    /// count. Over it, StartAiGame and SetAiEngine answer
    /// RESOURCE_EXHAUSTED with a retry hint.
    #[arg(long, env = "TTAKJI_SERVER_AI_GAMES", default_value_t = SERVER_AI_GAMES)]
    pub server_ai_games: u32,
}

/// The default of `--server-ai-games`: a few games in tabs, while a
/// client cannot push its thinking onto the server at scale (a Hard move
/// costs the server about a thousand human moves).
pub const SERVER_AI_GAMES: u32 = 3;

impl Settings {
    /// Settings that exempt `networks` (tests use loopback).
    #[must_use]
    pub fn exempting(networks: &[&str]) -> Settings {
        Settings {
            exempt: networks.iter().filter_map(|n| n.parse().ok()).collect(),
            client_address_header: None,
            server_ai_games: SERVER_AI_GAMES,
        }
    }
}

/// Which budget a call went over, and when it may come again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded {
    pub class: Class,
    /// True for the address's budget, false for the account's.
    pub per_address: bool,
    pub retry_after: Duration,
}

impl Exceeded {
    /// The RESOURCE_EXHAUSTED answer, with the retry hint in its message
    /// and in the `ttakji-retry-after-ms` header.
    #[must_use]
    pub fn status(&self) -> tonic::Status {
        let millis = u64::try_from(self.retry_after.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let whose = if self.per_address {
            "from your address"
        } else {
            "from your account"
        };
        ttakji_platform::refusal::resource_exhausted(
            "RATE_LIMITED",
            format!(
                "too many {} {whose}: try again in {:.1} s",
                self.class.name(),
                millis as f64 / 1000.0
            ),
            Duration::from_millis(millis),
        )
    }
}

type Keyed<K> = DefaultKeyedRateLimiter<K>;

#[derive(Debug)]
struct Limiters {
    by_address: Vec<Keyed<IpAddr>>,
    by_account: Vec<Option<Keyed<String>>>,
    clock: DefaultClock,
}

/// The gateway's limits: cheap to clone, shared by every public service.
#[derive(Debug, Clone)]
pub struct Limits {
    limiters: Arc<Limiters>,
    config: Arc<Settings>,
}

impl Limits {
    /// The product's budgets with `config`'s exemptions. Quiet keys are
    /// dropped every minute until `shutdown`.
    #[must_use]
    pub fn start(config: Settings, shutdown: &Shutdown) -> Limits {
        let limits = Limits {
            limiters: Arc::new(Limiters {
                by_address: Class::ALL
                    .iter()
                    .map(|c| Keyed::keyed(c.per_address().quota()))
                    .collect(),
                by_account: Class::ALL
                    .iter()
                    .map(|c| c.per_account().map(|b| Keyed::keyed(b.quota())))
                    .collect(),
                clock: DefaultClock::default(),
            }),
            config: Arc::new(config),
        };
        let limiters = Arc::downgrade(&limits.limiters);
        let mut stop = shutdown.clone();
        shutdown.spawn(async move {
            let mut every = tokio::time::interval(PRUNE_EVERY);
            loop {
                tokio::select! {
                    () = stop.wait() => return,
                    _ = every.tick() => {}
                }
                let Some(limiters) = limiters.upgrade() else {
                    return;
                };
                limiters.prune();
            }
        });
        limits
    }

    /// The address a request counts under: the configured header's last
    /// entry behind a proxy, else the connection's peer. `None` when
    /// neither is known (a connection that is not TCP).
    #[must_use]
    pub fn client_address<B>(&self, request: &http::Request<B>) -> Option<IpAddr> {
        if let Some(header) = &self.config.client_address_header {
            return request
                .headers()
                .get_all(header)
                .iter()
                .next_back()
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit(',').next())
                .and_then(|v| v.trim().parse().ok());
        }
        request
            .extensions()
            .get::<tonic::transport::server::TcpConnectInfo>()
            .and_then(tonic::transport::server::TcpConnectInfo::remote_addr)
            .map(|a| a.ip())
    }

    /// Whether `addr` is exempt from every limit.
    #[must_use]
    pub fn is_exempt(&self, addr: Option<IpAddr>) -> bool {
        addr.is_some_and(|a| self.config.exempt.iter().any(|n| n.contains(a)))
    }

    /// Takes one call of `class` from `addr`'s budget.
    ///
    /// # Errors
    /// When the address has spent its budget.
    pub fn check_address(&self, class: Class, addr: IpAddr) -> Result<(), Exceeded> {
        let limiter = &self.limiters.by_address[class.index()];
        self.admit(limiter, &address_key(addr))
            .map_err(|retry_after| Exceeded {
                class,
                per_address: true,
                retry_after,
            })
    }

    /// Takes one call of `class` from the account's budget.
    ///
    /// # Errors
    /// When the account has spent its budget.
    pub fn check_account(&self, class: Class, user_id: &str) -> Result<(), Exceeded> {
        let Some(limiter) = &self.limiters.by_account[class.index()] else {
            return Ok(());
        };
        self.admit(limiter, &user_id.to_owned())
            .map_err(|retry_after| Exceeded {
                class,
                per_address: false,
                retry_after,
            })
    }

    fn admit<K: Clone + Hash + Eq>(&self, limiter: &Keyed<K>, key: &K) -> Result<(), Duration> {
        limiter
            .check_key(key)
            .map_err(|not_until| not_until.wait_time_from(self.limiters.clock.now()))
    }

    /// Keys with state, addresses and accounts together (for tests).
    #[must_use]
    pub fn tracked(&self) -> usize {
        self.limiters.tracked()
    }

    /// Drops the state of keys that are back to a full budget.
    pub fn prune(&self) {
        self.limiters.prune();
    }
}

impl Limiters {
    fn prune(&self) {
        for limiter in &self.by_address {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        for limiter in self.by_account.iter().flatten() {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    fn tracked(&self) -> usize {
        self.by_address.iter().map(Keyed::len).sum::<usize>()
            + self
                .by_account
                .iter()
                .flatten()
                .map(Keyed::len)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::{Class, Limits, Network, Settings};

    fn limits(exempt: &[&str]) -> Limits {
        let (_trigger, shutdown) = ttakji_platform::shutdown::channel();
        Limits::start(Settings::exempting(exempt), &shutdown)
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[tokio::test]
    async fn an_account_gets_its_burst_of_moves_then_is_told_when_to_retry() {
        let limits = limits(&[]);
        let burst = super::account_budget(Class::Move)
            .expect("moves are limited")
            .burst;
        for n in 0..burst {
            assert!(limits.check_account(Class::Move, "u1").is_ok(), "move {n}");
        }
        let refused = limits
            .check_account(Class::Move, "u1")
            .expect_err("over the burst");
        assert!(!refused.per_address);
        assert!(refused.retry_after > std::time::Duration::ZERO);
        assert!(refused.retry_after <= std::time::Duration::from_millis(100));
        let status = refused.status();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        assert!(
            status
                .message()
                .contains("too many moves from your account")
        );
        let hint = status
            .metadata()
            .get(ttakji_platform::refusal::RETRY_AFTER_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .expect("a retry hint in milliseconds");
        assert!((1..=100).contains(&hint), "{hint}");
        // Another account and another class are untouched.
        assert!(limits.check_account(Class::Move, "u2").is_ok());
        assert!(limits.check_account(Class::Read, "u1").is_ok());
    }

    #[tokio::test]
    async fn sign_ins_are_limited_per_address_and_an_ipv6_subscriber_counts_by_its_64() {
        let limits = limits(&[]);
        let burst = super::address_budget(Class::SignIn).burst;
        for n in 0..burst {
            let addr = ip(&format!("2001:db8:1:2::{:x}", n + 1));
            assert!(limits.check_address(Class::SignIn, addr).is_ok(), "{n}");
        }
        let refused = limits
            .check_address(Class::SignIn, ip("2001:db8:1:2:ffff::1"))
            .expect_err("the same /64");
        assert!(refused.per_address);
        assert!(
            refused
                .status()
                .message()
                .contains("sign-ins from your address")
        );
        assert!(
            limits
                .check_address(Class::SignIn, ip("2001:db8:1:3::1"))
                .is_ok()
        );
        assert!(limits.check_address(Class::SignIn, ip("192.0.2.7")).is_ok());
        assert!(super::account_budget(Class::SignIn).is_none());
        assert!(limits.check_account(Class::SignIn, "anyone").is_ok());
    }

    #[tokio::test]
    async fn quiet_keys_are_dropped_and_their_budget_is_whole_again() {
        let limits = limits(&[]);
        limits.check_account(Class::Read, "u1").expect("first read");
        assert_eq!(limits.tracked(), 1);
        tokio::time::sleep(std::time::Duration::from_millis(120)).await;
        limits.prune();
        assert_eq!(limits.tracked(), 0, "a read 120 ms ago is forgotten");
    }

    #[tokio::test]
    async fn networks_are_read_and_matched() {
        let net: Network = "10.1.0.0/16".parse().expect("a network");
        assert!(net.contains(ip("10.1.200.3")));
        assert!(!net.contains(ip("10.2.0.1")));
        assert!(
            net.contains(ip("::ffff:10.1.0.9")),
            "an IPv4-mapped address"
        );
        let one: Network = "127.0.0.1".parse().expect("an address");
        assert!(one.contains(ip("127.0.0.1")));
        assert!(!one.contains(ip("127.0.0.2")));
        let v6: Network = "2001:db8::/32".parse().expect("a v6 network");
        assert!(v6.contains(ip("2001:db8:ffff::1")));
        assert!(!v6.contains(ip("10.1.0.1")));
        let all: Network = "0.0.0.0/0".parse().expect("everything");
        assert!(all.contains(ip("8.8.8.8")));
        for bad in ["10.0.0.0/33", "nonsense", "10.0.0.0/x", "::/129"] {
            assert!(bad.parse::<Network>().is_err(), "{bad}");
        }
        let limits = limits(&["127.0.0.0/8"]);
        assert!(limits.is_exempt(Some(ip("127.0.0.2"))));
        assert!(!limits.is_exempt(Some(ip("192.0.2.1"))));
        assert!(!limits.is_exempt(None));
    }

    #[test]
    fn every_public_method_has_the_class_its_kind_of_call_needs() {
        assert_eq!(Class::of("SignInGuest"), Class::SignIn);
        assert_eq!(Class::of("PlayMove"), Class::Move);
        assert_eq!(Class::of("AnswerDraw"), Class::Move);
        assert_eq!(Class::of("MarkDeadStones"), Class::Move);
        assert_eq!(Class::of("ResumePlay"), Class::Move);
        assert_eq!(Class::of("FindMatch"), Class::Queue);
        assert_eq!(Class::of("CreateChallenge"), Class::NewGame);
        assert_eq!(Class::of("StartAiGame"), Class::NewGame);
        assert_eq!(Class::of("WatchGame"), Class::Read);
        for class in Class::ALL {
            let address = super::address_budget(class);
            if let Some(account) = super::account_budget(class) {
                assert!(
                    address.burst >= account.burst && address.per_second() >= account.per_second(),
                    "an address carries at least one account's {}",
                    class.name()
                );
            }
        }
    }
}
