//! The Redis and PostgreSQL servers the Ttakji test suites run against.
//!
//! A test asks for [`redis_url`] or [`postgres_admin_url`]. When
//! `TTAKJI_TEST_REDIS_URL` / `TTAKJI_TEST_DATABASE_URL` (a Postgres URL of a
//! user that may create databases) are set, those servers are used as they
//! are. Otherwise the first call in a test process starts a throwaway server
//! on a free loopback port (`redis-server`, or `initdb` and `postgres` in a
//! temporary folder), waits until it answers, and every later call in that
//! process gets the same one.
//!
//! Each throwaway server runs under a supervisor whose standard input is a
//! pipe from the test process; when that pipe closes, which the kernel does
//! however the test process ends (it returns, panics, calls
//! `std::process::exit` or is killed), the supervisor stops the server and
//! removes its folder. Nothing outlives the tests, and nothing is left on
//! disk.
//!
//! Only the standard library is used, so any crate's tests may depend on
//! this one without building anything more.

mod postgres;
mod redis;
mod supervisor;

use std::net::{Ipv4Addr, TcpListener};
use std::sync::OnceLock;
use std::time::Duration;

pub use supervisor::Supervised;

/// The variable naming an existing Redis for the tests (`redis://host:port`).
pub const REDIS_URL_VAR: &str = "TTAKJI_TEST_REDIS_URL";

/// The variable naming an existing PostgreSQL for the tests: the URL of a
/// user that may create databases (`postgres://postgres@host:port/postgres`).
pub const DATABASE_URL_VAR: &str = "TTAKJI_TEST_DATABASE_URL";

/// How many ports a start tries before giving up (another process may take
/// a free port between our choosing it and the server binding it).
const ATTEMPTS: usize = 5;

/// How long a server may take to answer after it starts.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A server the tests of this process share.
#[derive(Debug)]
struct Server {
    url: String,
    /// Keeps the throwaway server running until the process ends; `None`
    /// for a server named by the environment.
    _supervised: Option<Supervised>,
}

static REDIS: OnceLock<Server> = OnceLock::new();
static POSTGRES: OnceLock<Server> = OnceLock::new();

/// The URL of the Redis the tests use: `TTAKJI_TEST_REDIS_URL`, or a
/// throwaway `redis-server` (nothing saved to disk) started on first use.
///
/// # Panics
/// When no Redis is named and `redis-server` cannot be started.
pub fn redis_url() -> &'static str {
    &REDIS
        .get_or_init(|| shared_server(REDIS_URL_VAR, redis::start))
        .url
}

/// The URL of a PostgreSQL user that may create databases:
/// `TTAKJI_TEST_DATABASE_URL`, or a throwaway cluster (trust
/// authentication, user `postgres`) started on first use. Make a database
/// per test and reach it with [`postgres_database_url`].
///
/// # Panics
/// When no PostgreSQL is named and one cannot be started.
pub fn postgres_admin_url() -> &'static str {
    &POSTGRES
        .get_or_init(|| shared_server(DATABASE_URL_VAR, postgres::start))
        .url
}

/// The URL of database `name` on the server of [`postgres_admin_url`], as
/// the same user.
#[must_use]
pub fn postgres_database_url(name: &str) -> String {
    with_database(postgres_admin_url(), name)
}

fn shared_server(var: &str, start: fn(u16) -> Result<Server, String>) -> Server {
    if let Some(url) = std::env::var(var).ok().filter(|url| !url.trim().is_empty()) {
        return Server {
            url,
            _supervised: None,
        };
    }
    let mut failures = Vec::new();
    for _ in 0..ATTEMPTS {
        match free_port().and_then(start) {
            Ok(server) => return server,
            Err(failure) => failures.push(failure),
        }
    }
    panic!(
        "no server for the tests: set {var} to use a running one, or install the \
         package that provides it (see the README's Test section). Attempts:\n{}",
        failures.join("\n")
    )
}

/// A loopback port nothing listens on right now.
fn free_port() -> Result<u16, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// `url` with its database (the path) replaced by `name`; the query, if
/// any, is kept.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_starts = base.find("://").map_or(0, |i| i + 3);
    let server = match base[authority_starts..].find('/') {
        Some(slash) => &base[..authority_starts + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{name}?{query}"),
        None => format!("{server}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_url_names_the_database_on_the_same_server_as_the_same_user() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(
            with_database("postgres://u:p@db:6543/admin?sslmode=disable", "t2"),
            "postgres://u:p@db:6543/t2?sslmode=disable"
        );
        assert_eq!(
            with_database("postgresql://u@db", "t3"),
            "postgresql://u@db/t3"
        );
    }

    #[test]
    fn a_free_port_can_be_bound() {
        let port = free_port().expect("a free port");
        TcpListener::bind((Ipv4Addr::LOCALHOST, port)).expect("binds the port it named");
    }
}
