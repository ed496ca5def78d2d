//! Shard leases in Redis.
//!
//! Keys, under the namespace (`ttakji` by default):
//! - `{ns}:authority:members`: a sorted set of the live instances, each
//!   scored with the time its membership runs out; an instance counts the
//!   live ones to know its fair share of shards.
//! - `{ns}:authority:shard:{n}`: the lease of shard `n`, the holder's
//!   `"{member} {url}"`, expiring after the lease time unless renewed.
//! - `{ns}:authority:seen:{n}`: when shard `n` was last known to be held
//!   (Redis's clock, ms): the next holder gives the time since back to the
//!   player to move.
//! - `{ns}:authority:since`: when this Redis began keeping these keys
//!   (Redis's clock, ms): a Redis that restarted empty has a new one. A
//!   shard it has no word of is not taken until a lease after that, so
//!   that a holder from before, still within its window, takes its own
//!   lease back first.
//!
//! Each instance runs one script per renewal whatever it holds: it renews
//! its membership and all its leases and reads every shard's holder. Times
//! are Redis's own (`TIME`), so instances' clocks need not agree.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use ttakji_platform::authorities::SHARDS;
use ttakji_platform::redis_target::{RedisTarget, SharedConnection};

/// How instances share shards, for `ttakji authority`.
#[derive(Debug, Clone, clap::Args)]
pub struct LeaseConfig {
    /// The prefix of every Redis key the authorities share.
    #[arg(
        long = "redis-namespace",
        env = "TTAKJI_REDIS_NAMESPACE",
        default_value = "ttakji"
    )]
    pub namespace: String,
    /// How long a shard lease lasts unless renewed (renewed twelve times as
    /// often): the longest a dead instance's games wait for a new owner.
    #[arg(long = "lease-ms", env = "TTAKJI_LEASE_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(200..=60_000))]
    pub lease_ms: u64,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        LeaseConfig {
            namespace: "ttakji".into(),
            lease_ms: 1000,
        }
    }
}

impl LeaseConfig {
    #[must_use]
    pub fn ttl(&self) -> Duration {
        Duration::from_millis(self.lease_ms)
    }

    /// How often leases are renewed.
    #[must_use]
    pub fn renew_every(&self) -> Duration {
        self.ttl() / 12
    }
}

/// What one renewal found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renewal {
    /// Live instances, this one included.
    pub members: u32,
    /// Shards this instance held but no longer does.
    pub lost: Vec<u32>,
    /// The URL of each shard's holder, if any.
    pub owners: Vec<Option<String>>,
}

/// A shard acquired, and how long it had been without an owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acquired {
    pub shard: u32,
    /// Since the shard was last known held, or, when Redis has no word of
    /// it (a new deployment, or a Redis that lost its data), since Redis
    /// began keeping the leases.
    pub unowned_ms: i64,
}

/// This instance's leases.
#[derive(Clone)]
pub struct Leases {
    conn: SharedConnection,
    namespace: String,
    /// Unique to this process: a restarted instance is a new member.
    member: String,
    /// What the lease keys hold: `"{member} {url}"`.
    value: String,
    config: LeaseConfig,
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases")
            .field("namespace", &self.namespace)
            .field("member", &self.member)
            .finish_non_exhaustive()
    }
}

impl Leases {
    /// Connects to Redis at `url` for the instance reached at `me`.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn connect(url: &str, me: &str, config: LeaseConfig) -> redis::RedisResult<Leases> {
        let target = RedisTarget::parse(url)?;
        let member = uuid::Uuid::new_v4().simple().to_string();
        Ok(Leases {
            conn: target.connection().await?,
            namespace: config.namespace.clone(),
            value: format!("{member} {me}"),
            member,
            config,
        })
    }

    #[must_use]
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    /// This process's member id.
    #[must_use]
    pub fn member(&self) -> &str {
        &self.member
    }

    fn members_key(&self) -> String {
        format!("{}:authority:members", self.namespace)
    }

    fn shard_key(&self, shard: u32) -> String {
        format!("{}:authority:shard:{shard}", self.namespace)
    }

    fn seen_key(&self, shard: u32) -> String {
        format!("{}:authority:seen:{shard}", self.namespace)
    }

    fn since_key(&self) -> String {
        format!("{}:authority:since", self.namespace)
    }

    fn ttl_ms(&self) -> u64 {
        self.config.lease_ms
    }

    /// Renews this instance's membership and its leases of `held`, and
    /// reads who holds every shard. A lease of `serving` (held shards
    /// still within their serving window) that Redis no longer has (a
    /// Redis restarted empty) is taken again at once: no other instance
    /// can be serving it, and no other may take it until a lease after
    /// Redis came back ([`Leases::acquire`]), by when this instance has
    /// renewed many times or its window has ended.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn renew(&self, held: &[u32], serving: &[u32]) -> redis::RedisResult<Renewal> {
        static RENEW: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('SET', KEYS[#KEYS], now, 'NX')
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = (#KEYS - 2) / 2
local lost, owners = {}, {}
for i = 1, n do
  local v = redis.call('GET', KEYS[1 + i])
  local flag = string.sub(ARGV[4], i, i)
  if flag ~= '0' then
    if v == ARGV[2] or (flag == '2' and not v) then
      redis.call('SET', KEYS[1 + i], ARGV[2], 'PX', ttl)
      redis.call('SET', KEYS[1 + n + i], now)
      v = ARGV[2]
    else
      table.insert(lost, i - 1)
    end
  end
  owners[i] = v or ''
end
return {redis.call('ZCARD', KEYS[1]), lost, owners}
",
            )
        });
        let mut flags = vec![b'0'; SHARDS as usize];
        for &s in held {
            flags[s as usize] = if serving.contains(&s) { b'2' } else { b'1' };
        }
        let mut call = RENEW.prepare_invoke();
        call.key(self.members_key());
        for s in 0..SHARDS {
            call.key(self.shard_key(s));
        }
        for s in 0..SHARDS {
            call.key(self.seen_key(s));
        }
        call.key(self.since_key());
        call.arg(&self.member)
            .arg(&self.value)
            .arg(self.ttl_ms())
            .arg(flags);
        let (members, lost, owners): (u32, Vec<u32>, Vec<String>) =
            call.invoke_async(&mut self.conn.clone()).await?;
        Ok(Renewal {
            members,
            lost,
            owners: owners.into_iter().map(|v| owner_url(&v)).collect(),
        })
    }

    /// Acquires whichever of `shards` are free; returns those acquired.
    /// A free shard Redis has no word of (never held since Redis began
    /// keeping the leases: a new deployment, or a Redis restarted empty)
    /// is left alone for a lease after that beginning: its holder from
    /// before, still within its serving window, may be serving it and
    /// takes it back as it renews. After that no such holder can be
    /// serving it, so it is taken and served at once.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn acquire(&self, shards: &[u32]) -> redis::RedisResult<Vec<Acquired>> {
        static TAKE: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[#KEYS], now, 'NX')
local since = tonumber(redis.call('GET', KEYS[#KEYS]))
local taken, unowned = {}, {}
for i = 1, (#KEYS - 1) / 2 do
  local seen = tonumber(redis.call('GET', KEYS[2 * i]) or '')
  if (seen or now - since >= tonumber(ARGV[2]))
    and redis.call('SET', KEYS[2 * i - 1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    table.insert(taken, i - 1)
    table.insert(unowned, math.max(0, now - (seen or since)))
    redis.call('SET', KEYS[2 * i], now)
  end
end
return {taken, unowned}
",
            )
        });
        if shards.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = TAKE.prepare_invoke();
        for &s in shards {
            call.key(self.shard_key(s)).key(self.seen_key(s));
        }
        call.key(self.since_key());
        call.arg(&self.value).arg(self.ttl_ms());
        let (taken, unowned): (Vec<usize>, Vec<i64>) =
            call.invoke_async(&mut self.conn.clone()).await?;
        Ok(taken
            .into_iter()
            .zip(unowned)
            .filter_map(|(i, unowned_ms)| {
                shards.get(i).map(|&shard| Acquired { shard, unowned_ms })
            })
            .collect())
    }

    /// Gives up the leases of `shards` (those still held), so another
    /// instance can take them at once.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn release(&self, shards: &[u32]) -> redis::RedisResult<()> {
        static RELEASE: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #KEYS / 2 do
  if redis.call('GET', KEYS[2 * i - 1]) == ARGV[1] then
    redis.call('DEL', KEYS[2 * i - 1])
    redis.call('SET', KEYS[2 * i], now)
  end
end
return 1
",
            )
        });
        if shards.is_empty() {
            return Ok(());
        }
        let mut call = RELEASE.prepare_invoke();
        for &s in shards {
            call.key(self.shard_key(s)).key(self.seen_key(s));
        }
        call.arg(&self.value);
        let _: i64 = call.invoke_async(&mut self.conn.clone()).await?;
        Ok(())
    }

    /// Leaves the live instances: the others' fair share grows at once.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn leave(&self) -> redis::RedisResult<()> {
        redis::cmd("ZREM")
            .arg(self.members_key())
            .arg(&self.member)
            .query_async(&mut self.conn.clone())
            .await
    }
}

/// The URL in a lease's value, `"{member} {url}"`.
fn owner_url(value: &str) -> Option<String> {
    value
        .split_once(' ')
        .map(|(_, url)| url.to_owned())
        .filter(|u| !u.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_names_its_holder_url() {
        assert_eq!(
            owner_url("abc http://10.0.0.1:50052").as_deref(),
            Some("http://10.0.0.1:50052")
        );
        assert_eq!(owner_url(""), None);
    }

    async fn leases(namespace: &str, me: &str) -> Leases {
        let config = LeaseConfig {
            namespace: namespace.to_owned(),
            lease_ms: 400,
        };
        Leases::connect(ttakji_test_support::redis_url(), me, config)
            .await
            .expect("the tests' Redis")
    }

    #[tokio::test]
    async fn a_shard_has_one_holder_until_it_is_released_or_lapses() {
        let ns = format!("test-{}", uuid::Uuid::new_v4().simple());
        let a = leases(&ns, "http://a").await;
        let b = leases(&ns, "http://b").await;
        let first = a.renew(&[], &[]).await.expect("renewal");
        assert_eq!(first.members, 1);
        assert!(first.owners.iter().all(Option::is_none));

        // Never held since Redis began keeping the leases: left alone for
        // a lease (a holder from before may take it back), then taken.
        assert!(a.acquire(&[3, 4]).await.expect("acquire").is_empty());
        tokio::time::sleep(Duration::from_millis(450)).await;
        a.renew(&[], &[]).await.expect("renewal");
        let taken = a.acquire(&[3, 4]).await.expect("acquire");
        assert_eq!(taken.iter().map(|t| t.shard).collect::<Vec<_>>(), [3, 4]);
        assert!(
            taken.iter().all(|t| t.unowned_ms >= 400),
            "no owner since Redis began: {taken:?}"
        );
        assert!(
            b.acquire(&[4, 5])
                .await
                .expect("acquire")
                .iter()
                .map(|t| t.shard)
                .eq([5])
        );

        let seen_by_b = b.renew(&[5], &[5]).await.expect("renewal");
        assert_eq!(seen_by_b.members, 2);
        assert!(seen_by_b.lost.is_empty());
        assert_eq!(seen_by_b.owners[3].as_deref(), Some("http://a"));
        assert_eq!(seen_by_b.owners[5].as_deref(), Some("http://b"));

        // Released: free at once, and the taker learns how long it was free.
        a.release(&[3]).await.expect("release");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let retaken = b.acquire(&[3]).await.expect("acquire");
        assert_eq!(retaken.len(), 1);
        assert!(retaken[0].unowned_ms >= 40, "{retaken:?}");

        // Not renewed: the lease lapses, its holder learns it lost it, and
        // the dead member leaves the count.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let late = a.renew(&[4], &[]).await.expect("renewal");
        assert_eq!(late.lost, [4]);
        assert_eq!(late.members, 1, "b's membership ran out too");
        a.leave().await.expect("leave");
        assert_eq!(b.renew(&[], &[]).await.expect("renewal").members, 1);

        // Redis forgets b's lease of 5: b, still within its window, takes
        // it again as it renews; past its window it would have lost it.
        let mut conn = redis::Client::open(ttakji_test_support::redis_url())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("redis");
        let _: i64 = redis::cmd("DEL")
            .arg(b.shard_key(5))
            .query_async(&mut conn)
            .await
            .expect("del");
        let kept = b.renew(&[5], &[5]).await.expect("renewal");
        assert!(kept.lost.is_empty(), "{kept:?}");
        assert_eq!(kept.owners[5].as_deref(), Some("http://b"));

        // Redis restarted empty: another instance renewing first does not
        // take b's shard, which b, within its window, takes back.
        let everything: Vec<String> = (0..SHARDS)
            .flat_map(|s| [b.shard_key(s), b.seen_key(s)])
            .chain([b.members_key(), b.since_key()])
            .collect();
        let _: i64 = redis::cmd("DEL")
            .arg(&everything)
            .query_async(&mut conn)
            .await
            .expect("del");
        let c = leases(&ns, "http://c").await;
        assert_eq!(c.renew(&[], &[]).await.expect("renewal").members, 1);
        assert!(c.acquire(&[5]).await.expect("acquire").is_empty());
        let back = b.renew(&[5], &[5]).await.expect("renewal");
        assert!(back.lost.is_empty(), "{back:?}");
        assert_eq!(back.owners[5].as_deref(), Some("http://b"));
        assert!(c.acquire(&[5]).await.expect("acquire").is_empty());
        let _: i64 = redis::cmd("DEL")
            .arg(b.shard_key(5))
            .query_async(&mut conn)
            .await
            .expect("del");
        assert_eq!(b.renew(&[5], &[]).await.expect("renewal").lost, [5]);
    }
}
