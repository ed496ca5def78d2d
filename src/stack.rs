//! The four services wired together in one process: the one composition
//! root that `ttakji serve`, the tests and the benchmarks start them by.
//!
//! Each service is built from its own config; the stack adds what only it
//! knows: where the others listen (the authority is built first, then the
//! matchmaker and ratings, which call it, then the gateway, which calls
//! all three) and the service key they share. Calls between them stay in
//! the process, through the same generated clients and servers but no
//! socket ([`ttakji_platform::in_process`]); clients reach the gateway over
//! the network as always.

use std::net::SocketAddr;

use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::ServiceKey;
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;

/// The settings of every service of the stack. The addresses one service
/// calls another at, and each one's service key, are set by
/// [`Stack::build`].
#[derive(Debug, Clone)]
pub struct StackConfig {
    pub authority: ttakji_authority::Config,
    pub matchmaker: ttakji_matchmaker::Config,
    pub ratings: ttakji_ratings::Config,
    pub gateway: ttakji_gateway::Config,
    /// The key every internal call carries: one of the stack's own unless
    /// given.
    pub service_key: Option<ServiceKey>,
    /// Whether the services call one another in this process, without
    /// sockets (the default); `false` keeps gRPC over loopback between
    /// them, as between processes, for comparing the two.
    pub in_process: bool,
}

impl StackConfig {
    /// Every service on loopback on a port of its own choosing, with its
    /// defaults, signing tokens with `token_keys`; no metrics listeners.
    #[must_use]
    pub fn local(token_keys: TokenKeys) -> StackConfig {
        let any: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 0));
        // Filled in by `Stack::build` once the authority listens.
        let unknown = String::new();
        StackConfig {
            authority: ttakji_authority::Config::new(any),
            matchmaker: ttakji_matchmaker::Config::new(any, unknown.clone()),
            ratings: ttakji_ratings::Config::new(any, unknown.clone()),
            gateway: ttakji_gateway::Config {
                listen: any,
                metrics_listen: None,
                service_key: None,
                authority_url: unknown.clone(),
                matchmaker_url: unknown.clone(),
                ratings_url: unknown,
                token_keys,
                public: ttakji_gateway::Public::exempting(&[]),
            },
            service_key: None,
            in_process: true,
        }
    }
}

/// The four services, built and listening; [`Stack::run_until_stopped`]
/// serves them until the shutdown signal.
#[derive(Debug)]
pub struct Stack {
    authority: ttakji_authority::App,
    matchmaker: ttakji_matchmaker::App,
    ratings: ttakji_ratings::App,
    gateway: ttakji_gateway::App,
}

impl Stack {
    /// Builds every service of `config` on `db` and `bus`, the queue's
    /// tickets in `tickets`, each one told where the ones it calls listen.
    ///
    /// # Errors
    /// When a service cannot be built (an address taken, the store
    /// unreachable).
    pub async fn build(
        config: StackConfig,
        db: Database,
        bus: Bus,
        tickets: ttakji_matchmaker::Tickets,
        shutdown: Shutdown,
    ) -> anyhow::Result<Stack> {
        let StackConfig {
            mut authority,
            mut matchmaker,
            mut ratings,
            mut gateway,
            service_key,
            in_process,
        } = config;
        // Each server is marked as it is bound, before any call is made:
        // the clients the later services make of it then call it directly.
        let here = |addr: SocketAddr| {
            if in_process {
                ttakji_platform::in_process::serve_here(addr);
            }
        };
        let key = service_key.or_else(|| Some(ServiceKey::random()));
        authority.service_key.clone_from(&key);
        let authority =
            ttakji_authority::App::build(authority, db.clone(), bus.clone(), shutdown.clone())
                .await?;
        here(authority.addr());
        let authority_url = format!("http://{}", authority.addr());
        matchmaker.authority_url.clone_from(&authority_url);
        matchmaker.service_key.clone_from(&key);
        let matchmaker =
            ttakji_matchmaker::App::build(matchmaker, tickets, bus.clone(), shutdown.clone())
                .await?;
        here(matchmaker.addr());
        ratings.authority_url.clone_from(&authority_url);
        ratings.service_key.clone_from(&key);
        let ratings =
            ttakji_ratings::App::build(ratings, db.clone(), bus.clone(), shutdown.clone()).await?;
        here(ratings.addr());
        gateway.authority_url = authority_url;
        gateway.matchmaker_url = format!("http://{}", matchmaker.addr());
        gateway.ratings_url = format!("http://{}", ratings.addr());
        gateway.service_key = key;
        let gateway = ttakji_gateway::App::build(gateway, db, bus, shutdown).await?;
        Ok(Stack {
            authority,
            matchmaker,
            ratings,
            gateway,
        })
    }

    /// Where clients connect: the gateway's public API and web page.
    #[must_use]
    pub fn gateway_addr(&self) -> SocketAddr {
        self.gateway.addr()
    }

    #[must_use]
    pub fn authority_addr(&self) -> SocketAddr {
        self.authority.addr()
    }

    #[must_use]
    pub fn matchmaker_addr(&self) -> SocketAddr {
        self.matchmaker.addr()
    }

    #[must_use]
    pub fn ratings_addr(&self) -> SocketAddr {
        self.ratings.addr()
    }

    /// Serves every service until the shutdown signal; the first error
    /// any of them ends with.
    ///
    /// # Errors
    /// When a service's server fails.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let (a, m, r, g) = tokio::join!(
            self.authority.run_until_stopped(),
            self.matchmaker.run_until_stopped(),
            self.ratings.run_until_stopped(),
            self.gateway.run_until_stopped()
        );
        a.and(m).and(r).and(g)
    }
}
