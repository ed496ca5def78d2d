//! Where Redis is, read from its URL, and a connection that follows it.
//!
//! `redis://…`, `rediss://…` and `unix://…` name one server.
//! `redis+sentinel://[:password@]host:port[,host:port…]/<master>[/<db>]`
//! names Redis Sentinels watching the master group `<master>`: the current
//! master is asked of them when connecting, and every half second after,
//! so that after a failover every connection moves to the new master within
//! about a second of Sentinel promoting it. The password, if any, is the
//! master's (the Sentinels are asked without one); a Sentinel's port is
//! 26379 unless given.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, Pipeline, RedisError, RedisFuture, RedisResult, Value};

/// How often a Sentinel is asked where the master is.
const FOLLOW_EVERY: Duration = Duration::from_millis(500);
/// How long one Sentinel may take to answer.
const SENTINEL_TIMEOUT: Duration = Duration::from_secs(1);

/// Where Redis is.
#[derive(Debug, Clone)]
pub enum RedisTarget {
    /// One server.
    Server(redis::Client),
    /// The master of a Sentinel-watched group.
    Sentinel(Arc<Sentinels>),
}

/// The Sentinels of a master group, and how to reach its master.
#[derive(Debug)]
pub struct Sentinels {
    addrs: Vec<(String, u16)>,
    master: String,
    db: i64,
    password: Option<String>,
    /// The connection to the Sentinel that answered last, asked first next
    /// time: following the master asks twice a second, on one connection.
    answering: tokio::sync::Mutex<Option<redis::aio::MultiplexedConnection>>,
}

fn invalid(message: String) -> RedisError {
    RedisError::from((
        redis::ErrorKind::InvalidClientConfig,
        "invalid Redis URL",
        message,
    ))
}

/// How every connection manager reconnects: a call made while Redis is
/// away fails within about half a second (the callers retry in their own
/// loops), so that after a failover no call waits on the old master.
fn manager_config() -> redis::aio::ConnectionManagerConfig {
    redis::aio::ConnectionManagerConfig::new()
        .set_number_of_retries(2)
        .set_max_delay(Duration::from_millis(400))
}

async fn manager(client: &redis::Client) -> RedisResult<ConnectionManager> {
    client
        .get_connection_manager_with_config(manager_config())
        .await
}

/// A Redis client with Nagle's algorithm off: a small publish or command
/// goes out at once instead of waiting for the server's delayed ACK.
fn client(url: &str) -> RedisResult<redis::Client> {
    use redis::IntoConnectionInfo as _;
    let info = url.into_connection_info()?;
    let tcp = info.tcp_settings().clone().set_nodelay(true);
    redis::Client::open(info.set_tcp_settings(tcp))
}

impl RedisTarget {
    /// Reads a Redis URL (see the module's documentation).
    ///
    /// # Errors
    /// When it is not one.
    pub fn parse(url: &str) -> RedisResult<RedisTarget> {
        let Some(rest) = url.strip_prefix("redis+sentinel://") else {
            return client(url).map(RedisTarget::Server);
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (password, hosts) = match authority.rsplit_once('@') {
            Some((userinfo, hosts)) => {
                let password = userinfo.split_once(':').map_or(userinfo, |(_, p)| p);
                (Some(password.to_owned()).filter(|p| !p.is_empty()), hosts)
            }
            None => (None, authority),
        };
        let mut addrs = Vec::new();
        for host in hosts.split(',').filter(|h| !h.is_empty()) {
            let (name, port) = match host.rsplit_once(':') {
                Some((name, port)) if !name.ends_with(':') && !port.contains(']') => {
                    let port = port.parse().map_err(|_| {
                        invalid(format!("{host:?} in {url:?}: the port is not a number"))
                    })?;
                    (name, port)
                }
                _ => (host, 26379),
            };
            let name = name.trim_start_matches('[').trim_end_matches(']');
            addrs.push((name.to_owned(), port));
        }
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let master = parts
            .next()
            .ok_or_else(|| invalid(format!("{url:?} names no master group after the hosts")))?
            .to_owned();
        let db = match parts.next() {
            Some(db) => db
                .parse()
                .map_err(|_| invalid(format!("{url:?}: the database {db:?} is not a number")))?,
            None => 0,
        };
        if addrs.is_empty() {
            return Err(invalid(format!("{url:?} names no Sentinel")));
        }
        Ok(RedisTarget::Sentinel(Arc::new(Sentinels {
            addrs,
            master,
            db,
            password,
            answering: tokio::sync::Mutex::new(None),
        })))
    }

    /// A client of the server, or of the master right now.
    ///
    /// # Errors
    /// When no Sentinel answers, or none knows the master group.
    pub async fn client(&self) -> RedisResult<redis::Client> {
        match self {
            RedisTarget::Server(client) => Ok(client.clone()),
            RedisTarget::Sentinel(sentinels) => {
                let (host, port) = sentinels.master().await?;
                client(&sentinels.url(&host, port))
            }
        }
    }

    /// A connection that reconnects after a restart and, behind Sentinels,
    /// follows the master.
    ///
    /// # Errors
    /// When Redis cannot be reached now.
    pub async fn connection(&self) -> RedisResult<SharedConnection> {
        match self {
            RedisTarget::Server(client) => Ok(SharedConnection {
                current: Arc::new(RwLock::new(manager(client).await?)),
            }),
            RedisTarget::Sentinel(sentinels) => {
                let mut at = sentinels.master().await?;
                let first = manager(&client(&sentinels.url(&at.0, at.1))?).await?;
                let shared = SharedConnection {
                    current: Arc::new(RwLock::new(first)),
                };
                let followed = Arc::downgrade(&shared.current);
                let sentinels = Arc::clone(sentinels);
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(FOLLOW_EVERY).await;
                        let Some(current) = followed.upgrade() else {
                            return;
                        };
                        let Ok(now) = sentinels.master().await else {
                            continue;
                        };
                        if now == at {
                            continue;
                        }
                        let moved = match client(&sentinels.url(&now.0, now.1)) {
                            Ok(c) => manager(&c).await,
                            Err(e) => Err(e),
                        };
                        match moved {
                            Ok(manager) => {
                                tracing::info!(from = %format_args!("{}:{}", at.0, at.1), to = %format_args!("{}:{}", now.0, now.1), "redis: the master moved; connection follows");
                                if let Ok(mut slot) = current.write() {
                                    *slot = manager;
                                }
                                at = now;
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, master = %format_args!("{}:{}", now.0, now.1), "redis: the new master cannot be reached yet");
                            }
                        }
                    }
                });
                Ok(shared)
            }
        }
    }
}

impl Sentinels {
    /// The master's address: from the Sentinel that answered last, or
    /// else from the first that knows it.
    async fn master(&self) -> RedisResult<(String, u16)> {
        let mut answering = self.answering.lock().await;
        if let Some(conn) = answering.as_mut()
            && let Ok(Ok(Some(addr))) = tokio::time::timeout(SENTINEL_TIMEOUT, self.ask(conn)).await
        {
            return Ok(addr);
        }
        *answering = None;
        let mut last = None;
        for (host, port) in &self.addrs {
            let asked = tokio::time::timeout(SENTINEL_TIMEOUT, async {
                let mut conn = client(&format!("redis://{host}:{port}"))?
                    .get_multiplexed_async_connection()
                    .await?;
                let addr = self.ask(&mut conn).await?;
                Ok::<_, RedisError>((conn, addr))
            })
            .await;
            match asked {
                Ok(Ok((conn, Some(addr)))) => {
                    *answering = Some(conn);
                    return Ok(addr);
                }
                Ok(Ok((_, None))) => {
                    last = Some(invalid(format!(
                        "Sentinel {host}:{port} knows no master group {:?}",
                        self.master
                    )));
                }
                Ok(Err(e)) => last = Some(e),
                Err(_) => {
                    last = Some(RedisError::from(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("Sentinel {host}:{port} did not answer"),
                    )));
                }
            }
        }
        Err(last.unwrap_or_else(|| invalid("no Sentinel".to_owned())))
    }

    async fn ask(
        &self,
        conn: &mut redis::aio::MultiplexedConnection,
    ) -> RedisResult<Option<(String, u16)>> {
        redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&self.master)
            .query_async(conn)
            .await
    }

    fn url(&self, host: &str, port: u16) -> String {
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_owned()
        };
        match &self.password {
            Some(password) => format!("redis://:{password}@{host}:{port}/{}", self.db),
            None => format!("redis://{host}:{port}/{}", self.db),
        }
    }
}

/// A connection to Redis that any number of tasks use at once (cloning is
/// cheap): it reconnects by itself, and behind Sentinels it is moved to the
/// new master after a failover.
#[derive(Clone)]
pub struct SharedConnection {
    current: Arc<RwLock<ConnectionManager>>,
}

impl std::fmt::Debug for SharedConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedConnection").finish_non_exhaustive()
    }
}

impl SharedConnection {
    /// The connection to the master now.
    fn now(&self) -> ConnectionManager {
        match self.current.read() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl ConnectionLike for SharedConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let mut conn = self.now();
        Box::pin(async move { conn.req_packed_command(cmd).await })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let mut conn = self.now();
        Box::pin(async move { conn.req_packed_commands(pipeline, offset, count).await })
    }

    fn get_db(&self) -> i64 {
        self.now().get_db()
    }
}

#[cfg(test)]
mod tests {
    use super::RedisTarget;

    #[test]
    fn a_sentinel_url_names_its_sentinels_master_group_database_and_password() {
        let RedisTarget::Sentinel(s) = RedisTarget::parse(
            "redis+sentinel://:secret@10.0.0.1:26380,sentinel-b,[::1]:26381/ttakji/2",
        )
        .expect("a sentinel URL") else {
            panic!("not read as Sentinels");
        };
        assert_eq!(
            s.addrs,
            [
                ("10.0.0.1".to_owned(), 26380),
                ("sentinel-b".to_owned(), 26379),
                ("::1".to_owned(), 26381)
            ]
        );
        assert_eq!((s.master.as_str(), s.db), ("ttakji", 2));
        assert_eq!(s.url("10.0.0.9", 6379), "redis://:secret@10.0.0.9:6379/2");
        assert_eq!(s.url("::2", 6379), "redis://:secret@[::2]:6379/2");
        assert!(matches!(
            RedisTarget::parse("redis://127.0.0.1:6379").expect("a server"),
            RedisTarget::Server(_)
        ));
        for bad in [
            "redis+sentinel://10.0.0.1:26379",
            "redis+sentinel:///ttakji",
            "redis+sentinel://h:x/ttakji",
            "redis+sentinel://h/ttakji/zero",
        ] {
            assert!(RedisTarget::parse(bad).is_err(), "{bad}");
        }
    }
}
