//! Where tickets, challenges and rematch agreements live: Redis in a
//! deployment, so any matchmaker instance can serve any ticket, or memory
//! in the single-process mode. Every change that two instances (or a player
//! and the pairing loop) could race on is one atomic step: a Lua script on
//! Redis, one lock in memory.
//!
//! A ticket moves `waiting` → `pairing` (claimed, with the id its game will
//! have) → `matched`; or `waiting` → `cancelled`. A claim and a cancel
//! exclude each other, so a cancel during pairing either wins (no game) or
//! is refused (the game is made).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;

/// A pool's key: board size, ruleset, ranked or casual.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PoolKey {
    pub board_size: u32,
    pub ruleset: String,
    pub ranked: bool,
}

impl PoolKey {
    /// As stored: `9:ttakji:c`.
    #[must_use]
    pub fn encode(&self) -> String {
        format!(
            "{}:{}:{}",
            self.board_size,
            self.ruleset,
            if self.ranked { "r" } else { "c" }
        )
    }

    #[must_use]
    pub fn decode(s: &str) -> Option<PoolKey> {
        let mut parts = s.splitn(3, ':');
        let board_size = parts.next()?.parse().ok()?;
        let ruleset = parts.next()?.to_owned();
        let ranked = match parts.next()? {
            "r" => true,
            "c" => false,
            _ => return None,
        };
        Some(PoolKey {
            board_size,
            ruleset,
            ranked,
        })
    }
}

/// Where a ticket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Waiting,
    Pairing,
    Matched,
    Cancelled,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Pairing => "pairing",
            State::Matched => "matched",
            State::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> State {
        match s {
            "waiting" => State::Waiting,
            "pairing" => State::Pairing,
            "matched" => State::Matched,
            _ => State::Cancelled,
        }
    }
}

/// A ticket as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub id: String,
    pub user_id: String,
    pub nickname: String,
    pub rating: u32,
    pub pool: PoolKey,
    pub enqueued_ms: i64,
    pub seen_ms: i64,
    pub state: State,
    /// Set from the claim on.
    pub game_id: String,
    /// Set when matched: "B" or "W".
    pub color: String,
    /// Set when matched: the opponent's id (empty for the computer), name and level.
    pub opponent_user: String,
    pub opponent_name: String,
    pub opponent_ai: String,
    /// When the claim was made (to find claims an instance left half done).
    pub claimed_ms: i64,
}

impl Ticket {
    fn to_fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("user_id", self.user_id.clone()),
            ("nickname", self.nickname.clone()),
            ("rating", self.rating.to_string()),
            ("pool", self.pool.encode()),
            ("enqueued_ms", self.enqueued_ms.to_string()),
            ("seen_ms", self.seen_ms.to_string()),
            ("state", self.state.as_str().to_owned()),
            ("game_id", self.game_id.clone()),
            ("color", self.color.clone()),
            ("opponent_user", self.opponent_user.clone()),
            ("opponent_name", self.opponent_name.clone()),
            ("opponent_ai", self.opponent_ai.clone()),
            ("claimed_ms", self.claimed_ms.to_string()),
        ]
    }

    fn from_fields(id: &str, f: &HashMap<String, String>) -> Option<Ticket> {
        let get = |k: &str| f.get(k).cloned().unwrap_or_default();
        let num = |k: &str| f.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
        Some(Ticket {
            id: id.to_owned(),
            user_id: f.get("user_id")?.clone(),
            nickname: get("nickname"),
            rating: f.get("rating").and_then(|r| r.parse().ok()).unwrap_or(1200),
            pool: PoolKey::decode(f.get("pool")?)?,
            enqueued_ms: num("enqueued_ms"),
            seen_ms: num("seen_ms"),
            state: State::parse(&get("state")),
            game_id: get("game_id"),
            color: get("color"),
            opponent_user: get("opponent_user"),
            opponent_name: get("opponent_name"),
            opponent_ai: get("opponent_ai"),
            claimed_ms: num("claimed_ms"),
        })
    }
}

/// What a matched ticket is told.
#[derive(Debug, Clone)]
pub struct Match {
    pub ticket_id: String,
    pub color: String,
    pub opponent_user: String,
    pub opponent_name: String,
    pub opponent_ai: String,
}

/// A friend challenge as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeRecord {
    pub code: String,
    pub maker_id: String,
    pub maker_name: String,
    pub pool: PoolKey,
    pub expires_ms: i64,
    /// Set once joined.
    pub game_id: String,
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
}

/// The store.
#[derive(Clone)]
pub enum Tickets {
    Memory(Arc<Mutex<Memory>>),
    /// A connection and the namespace (key prefix) of this deployment.
    Redis(redis::aio::ConnectionManager, Arc<str>),
}

impl std::fmt::Debug for Tickets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tickets::Memory(_) => f.write_str("Tickets(memory)"),
            Tickets::Redis(..) => f.write_str("Tickets(redis)"),
        }
    }
}

/// The single-process store.
#[derive(Debug, Default)]
pub struct Memory {
    tickets: HashMap<String, Ticket>,
    /// Pool → (enqueued_ms, ticket id) of waiting tickets.
    pools: HashMap<PoolKey, BTreeSet<(i64, String)>>,
    users: HashMap<String, String>,
    challenges: HashMap<String, ChallengeRecord>,
    rematches: HashMap<String, (Vec<String>, String)>,
}

/// The key prefix of a deployment's matchmaking data.
pub const DEFAULT_NAMESPACE: &str = "ttakji:mm:";

fn ticket_key(p: &str, id: &str) -> String {
    format!("{p}ticket:{id}")
}
fn pool_key(p: &str, pool: &str) -> String {
    format!("{p}pool:{pool}")
}
fn user_key(p: &str, user: &str) -> String {
    format!("{p}user:{user}")
}
fn challenge_key(p: &str, code: &str) -> String {
    format!("{p}challenge:{code}")
}
fn rematch_key(p: &str, game: &str) -> String {
    format!("{p}rematch:{game}")
}
fn pools_key(p: &str) -> String {
    format!("{p}pools")
}

/// How long a ticket's record outlives its last change.
const RECORD_TTL_SECS: i64 = 3600;

const ENQUEUE: &str = r"
local existing = redis.call('GET', KEYS[1])
if existing then
  local st = redis.call('HGET', ARGV[3] .. existing, 'state')
  if st == 'waiting' or st == 'pairing' then return existing end
end
local key = ARGV[3] .. ARGV[1]
for i = 5, #ARGV, 2 do redis.call('HSET', key, ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', key, ARGV[4])
redis.call('ZADD', KEYS[2], redis.call('HGET', key, 'enqueued_ms'), ARGV[1])
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
return ARGV[1]
";

const CLAIM: &str = r"
for i = 4, #ARGV do
  if redis.call('HGET', ARGV[1] .. ARGV[i], 'state') ~= 'waiting' then return 0 end
end
for i = 4, #ARGV do
  local key = ARGV[1] .. ARGV[i]
  redis.call('HSET', key, 'state', 'pairing', 'game_id', ARGV[2], 'claimed_ms', ARGV[3])
  redis.call('ZREM', ARGV[1] .. 'pool:' .. redis.call('HGET', key, 'pool'), ARGV[i])
end
return 1
";

const CANCEL: &str = r"
local key = KEYS[1]
local st = redis.call('HGET', key, 'state')
if not st then return 'missing' end
if ARGV[1] ~= '' and redis.call('HGET', key, 'user_id') ~= ARGV[1] then return 'not_yours' end
if st ~= 'waiting' then return st end
redis.call('HSET', key, 'state', 'cancelled')
redis.call('ZREM', ARGV[2] .. 'pool:' .. redis.call('HGET', key, 'pool'), ARGV[3])
local user = redis.call('HGET', key, 'user_id')
if redis.call('GET', ARGV[2] .. 'user:' .. user) == ARGV[3] then redis.call('DEL', ARGV[2] .. 'user:' .. user) end
return 'cancelled'
";

const RELEASE: &str = r"
for i = 2, #ARGV do
  local key = ARGV[1] .. ARGV[i]
  if redis.call('HGET', key, 'state') == 'pairing' then
    redis.call('ZREM', ARGV[1]:gsub('ticket:$', 'claims:') .. redis.call('HGET', key, 'pool'), ARGV[i])
    redis.call('HSET', key, 'state', 'waiting', 'game_id', '')
    redis.call('ZADD', ARGV[1] .. 'pool:' .. redis.call('HGET', key, 'pool'), redis.call('HGET', key, 'enqueued_ms'), ARGV[i])
  end
end
return 1
";

const FINISH: &str = r"
local key = KEYS[1]
if redis.call('HGET', key, 'state') ~= 'pairing' then return 0 end
redis.call('HSET', key, 'state', 'matched', 'color', ARGV[1], 'opponent_user', ARGV[2], 'opponent_name', ARGV[3], 'opponent_ai', ARGV[4])
local user = redis.call('HGET', key, 'user_id')
if redis.call('GET', KEYS[2] .. user) == ARGV[5] then redis.call('DEL', KEYS[2] .. user) end
redis.call('ZREM', KEYS[3] .. redis.call('HGET', key, 'pool'), ARGV[5])
return 1
";

const TAKE_CHALLENGE: &str = r"
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return 'missing' end
if redis.call('HGET', key, 'game_id') ~= '' then return 'used' end
if redis.call('HGET', key, 'maker_id') == ARGV[1] then return 'own' end
redis.call('HSET', key, 'game_id', ARGV[2])
redis.call('EXPIRE', key, ARGV[3])
return 'taken'
";

const AGREE_REMATCH: &str = r"
local key = KEYS[1]
redis.call('SADD', key .. ':agreed', ARGV[1])
redis.call('EXPIRE', key .. ':agreed', ARGV[2])
return redis.call('SMEMBERS', key .. ':agreed')
";

/// The outcome of taking a challenge code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Take {
    Taken(ChallengeRecord),
    Missing,
    Used,
    Own,
}

impl Tickets {
    #[must_use]
    pub fn memory() -> Tickets {
        Tickets::Memory(Arc::new(Mutex::new(Memory::default())))
    }

    /// # Errors
    /// When Redis cannot be reached.
    pub async fn redis(url: &str) -> Result<Tickets, StoreError> {
        Tickets::redis_in(url, DEFAULT_NAMESPACE).await
    }

    /// Redis with the keys under `namespace` (tests share one Redis).
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn redis_in(url: &str, namespace: &str) -> Result<Tickets, StoreError> {
        let client = ttakji_platform::bus::redis_client(url)?;
        Ok(Tickets::Redis(
            client.get_connection_manager().await?,
            Arc::from(namespace),
        ))
    }

    /// Stores a new waiting ticket, or returns the id of the player's ticket
    /// already waiting or being paired.
    pub async fn enqueue(&self, ticket: &Ticket) -> Result<String, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut m = m.lock().await;
                if let Some(existing) = m.users.get(&ticket.user_id)
                    && let Some(t) = m.tickets.get(existing)
                    && matches!(t.state, State::Waiting | State::Pairing)
                {
                    return Ok(existing.clone());
                }
                m.users.insert(ticket.user_id.clone(), ticket.id.clone());
                m.pools
                    .entry(ticket.pool.clone())
                    .or_default()
                    .insert((ticket.enqueued_ms, ticket.id.clone()));
                m.tickets.insert(ticket.id.clone(), ticket.clone());
                Ok(ticket.id.clone())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let code = redis::Script::new(ENQUEUE);
                let mut script = code.prepare_invoke();
                script
                    .key(user_key(p, &ticket.user_id))
                    .key(pool_key(p, &ticket.pool.encode()))
                    .key(pools_key(p))
                    .arg(&ticket.id)
                    .arg(ticket.pool.encode())
                    .arg(format!("{p}ticket:"))
                    .arg(RECORD_TTL_SECS);
                for (k, v) in ticket.to_fields() {
                    script.arg(k).arg(v);
                }
                Ok(script.invoke_async(&mut conn).await?)
            }
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<Ticket>, StoreError> {
        match self {
            Tickets::Memory(m) => Ok(m.lock().await.tickets.get(id).cloned()),
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let fields: HashMap<String, String> = redis::cmd("HGETALL")
                    .arg(ticket_key(p, id))
                    .query_async(&mut conn)
                    .await?;
                Ok(Ticket::from_fields(id, &fields))
            }
        }
    }

    /// Notes that the ticket's player is still there.
    pub async fn touch(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        match self {
            Tickets::Memory(m) => {
                if let Some(t) = m.lock().await.tickets.get_mut(id) {
                    t.seen_ms = now_ms;
                }
                Ok(())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let _: i64 = redis::cmd("HSET")
                    .arg(ticket_key(p, id))
                    .arg("seen_ms")
                    .arg(now_ms)
                    .query_async(&mut conn)
                    .await?;
                Ok(())
            }
        }
    }

    /// Cancels a waiting ticket. Returns the state it was in: `Waiting`
    /// means it is now cancelled; any other state is left as it was.
    /// `None`: no such ticket, or (with `user_id`) not this player's.
    pub async fn cancel(
        &self,
        id: &str,
        user_id: Option<&str>,
    ) -> Result<Option<State>, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut guard = m.lock().await;
                let m = &mut *guard;
                let Some(t) = m.tickets.get_mut(id) else {
                    return Ok(None);
                };
                if user_id.is_some_and(|u| u != t.user_id) {
                    return Ok(None);
                }
                if t.state != State::Waiting {
                    return Ok(Some(t.state));
                }
                t.state = State::Cancelled;
                let (pool, key, user) = (
                    t.pool.clone(),
                    (t.enqueued_ms, t.id.clone()),
                    t.user_id.clone(),
                );
                if let Some(p) = m.pools.get_mut(&pool) {
                    p.remove(&key);
                }
                if m.users.get(&user) == Some(&key.1) {
                    m.users.remove(&user);
                }
                Ok(Some(State::Waiting))
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let answer: String = redis::Script::new(CANCEL)
                    .key(ticket_key(p, id))
                    .arg(user_id.unwrap_or(""))
                    .arg(&**p)
                    .arg(id)
                    .invoke_async(&mut conn)
                    .await?;
                Ok(match answer.as_str() {
                    "missing" | "not_yours" => None,
                    "cancelled" => Some(State::Waiting),
                    other => Some(State::parse(other)),
                })
            }
        }
    }

    /// A waiting ticket's place in its pool (1 = longest waiting) and how
    /// many wait there.
    pub async fn position(&self, ticket: &Ticket) -> Result<(u32, u32), StoreError> {
        match self {
            Tickets::Memory(m) => {
                let m = m.lock().await;
                let Some(pool) = m.pools.get(&ticket.pool) else {
                    return Ok((0, 0));
                };
                let rank = pool
                    .iter()
                    .position(|(_, id)| *id == ticket.id)
                    .map_or(0, |i| i + 1);
                Ok((
                    u32::try_from(rank).unwrap_or(u32::MAX),
                    u32::try_from(pool.len()).unwrap_or(u32::MAX),
                ))
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let key = pool_key(p, &ticket.pool.encode());
                let (rank, count): (Option<u32>, u32) = redis::pipe()
                    .cmd("ZRANK")
                    .arg(&key)
                    .arg(&ticket.id)
                    .cmd("ZCARD")
                    .arg(&key)
                    .query_async(&mut conn)
                    .await?;
                Ok((rank.map_or(0, |r| r + 1), count))
            }
        }
    }

    /// Pools with tickets, as stored.
    pub async fn pools(&self) -> Result<Vec<PoolKey>, StoreError> {
        match self {
            Tickets::Memory(m) => Ok(m
                .lock()
                .await
                .pools
                .iter()
                .filter(|(_, t)| !t.is_empty())
                .map(|(k, _)| k.clone())
                .collect()),
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let pools: Vec<String> = redis::cmd("SMEMBERS")
                    .arg(pools_key(p))
                    .query_async(&mut conn)
                    .await?;
                Ok(pools.iter().filter_map(|p| PoolKey::decode(p)).collect())
            }
        }
    }

    /// The waiting tickets of a pool, longest-waiting first.
    pub async fn waiting(&self, pool: &PoolKey) -> Result<Vec<Ticket>, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let m = m.lock().await;
                Ok(m.pools
                    .get(pool)
                    .into_iter()
                    .flatten()
                    .filter_map(|(_, id)| m.tickets.get(id).cloned())
                    .collect())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let ids: Vec<String> = redis::cmd("ZRANGE")
                    .arg(pool_key(p, &pool.encode()))
                    .arg(0)
                    .arg(-1)
                    .query_async(&mut conn)
                    .await?;
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                let mut pipe = redis::pipe();
                for id in &ids {
                    pipe.cmd("HGETALL").arg(ticket_key(p, id));
                }
                let all: Vec<HashMap<String, String>> = pipe.query_async(&mut conn).await?;
                Ok(ids
                    .iter()
                    .zip(all)
                    .filter_map(|(id, f)| Ticket::from_fields(id, &f))
                    .filter(|t| t.state == State::Waiting)
                    .collect())
            }
        }
    }

    /// Claims waiting tickets for the game `game_id`: all of them or none.
    pub async fn claim(
        &self,
        ids: &[&str],
        game_id: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut guard = m.lock().await;
                let m = &mut *guard;
                if !ids.iter().all(|id| {
                    m.tickets
                        .get(*id)
                        .is_some_and(|t| t.state == State::Waiting)
                }) {
                    return Ok(false);
                }
                for id in ids {
                    if let Some(t) = m.tickets.get_mut(*id) {
                        t.state = State::Pairing;
                        t.game_id = game_id.to_owned();
                        t.claimed_ms = now_ms;
                        if let Some(p) = m.pools.get_mut(&t.pool) {
                            p.remove(&(t.enqueued_ms, t.id.clone()));
                        }
                    }
                }
                Ok(true)
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let code = redis::Script::new(CLAIM);
                let mut script = code.prepare_invoke();
                script.arg(format!("{p}ticket:")).arg(game_id).arg(now_ms);
                for id in ids {
                    script.arg(*id);
                }
                let claimed: i64 = script.invoke_async(&mut conn).await?;
                Ok(claimed == 1)
            }
        }
    }

    /// Puts claimed tickets back in the queue (the game could not be made).
    pub async fn release(&self, ids: &[&str]) -> Result<(), StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut guard = m.lock().await;
                let m = &mut *guard;
                for id in ids {
                    if let Some(t) = m.tickets.get_mut(*id)
                        && t.state == State::Pairing
                    {
                        t.state = State::Waiting;
                        t.game_id.clear();
                        m.pools
                            .entry(t.pool.clone())
                            .or_default()
                            .insert((t.enqueued_ms, t.id.clone()));
                    }
                }
                Ok(())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let code = redis::Script::new(RELEASE);
                let mut script = code.prepare_invoke();
                script.arg(format!("{p}ticket:"));
                for id in ids {
                    script.arg(*id);
                }
                let _: i64 = script.invoke_async(&mut conn).await?;
                Ok(())
            }
        }
    }

    /// Marks a claimed ticket matched, with what its player is told.
    pub async fn finish(&self, m: &Match) -> Result<(), StoreError> {
        match self {
            Tickets::Memory(mem) => {
                let mut guard = mem.lock().await;
                let mem = &mut *guard;
                if let Some(t) = mem.tickets.get_mut(&m.ticket_id)
                    && t.state == State::Pairing
                {
                    t.state = State::Matched;
                    t.color = m.color.clone();
                    t.opponent_user = m.opponent_user.clone();
                    t.opponent_name = m.opponent_name.clone();
                    t.opponent_ai = m.opponent_ai.clone();
                    if mem.users.get(&t.user_id) == Some(&t.id) {
                        mem.users.remove(&t.user_id);
                    }
                }
                Ok(())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let _: i64 = redis::Script::new(FINISH)
                    .key(ticket_key(p, &m.ticket_id))
                    .key(format!("{p}user:"))
                    .key(format!("{p}claims:"))
                    .arg(&m.color)
                    .arg(&m.opponent_user)
                    .arg(&m.opponent_name)
                    .arg(&m.opponent_ai)
                    .arg(&m.ticket_id)
                    .invoke_async(&mut conn)
                    .await?;
                Ok(())
            }
        }
    }

    /// Tries to hold the pairing lease of `pool` for `ttl`: true while this
    /// instance holds it. Memory: there is one instance.
    pub async fn lease(
        &self,
        pool: &PoolKey,
        instance: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        match self {
            Tickets::Memory(_) => Ok(true),
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let key = format!("{p}lease:{}", pool.encode());
                let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
                // Take it if free, or renew it if ours.
                let held: i64 = redis::Script::new(
                    r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0",
                )
                .key(key)
                .arg(instance)
                .arg(ms)
                .invoke_async(&mut conn)
                .await?;
                Ok(held == 1)
            }
        }
    }

    /// Tickets left in `pairing` since before `before_ms` (an instance died
    /// between the claim and the match).
    pub async fn stale_claims(
        &self,
        pool: &PoolKey,
        before_ms: i64,
    ) -> Result<Vec<Ticket>, StoreError> {
        match self {
            Tickets::Memory(m) => Ok(m
                .lock()
                .await
                .tickets
                .values()
                .filter(|t| {
                    t.pool == *pool && t.state == State::Pairing && t.claimed_ms < before_ms
                })
                .cloned()
                .collect()),
            Tickets::Redis(conn, p) => {
                // Claimed tickets leave the pool's set; they are found through
                // the game id index written with the claim.
                let mut conn = conn.clone();
                let ids: Vec<String> = redis::cmd("ZRANGEBYSCORE")
                    .arg(format!("{p}claims:{}", pool.encode()))
                    .arg("-inf")
                    .arg(before_ms)
                    .query_async(&mut conn)
                    .await?;
                let mut out = Vec::new();
                for id in ids {
                    match self.get(&id).await? {
                        Some(t) if t.state == State::Pairing => out.push(t),
                        _ => {
                            let _: i64 = redis::cmd("ZREM")
                                .arg(format!("{p}claims:{}", pool.encode()))
                                .arg(&id)
                                .query_async(&mut conn)
                                .await?;
                        }
                    }
                }
                Ok(out)
            }
        }
    }

    /// Records claimed tickets so a crash between claim and match is found.
    pub async fn note_claims(
        &self,
        pool: &PoolKey,
        ids: &[&str],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        if let Tickets::Redis(conn, p) = self {
            let mut conn = conn.clone();
            let mut cmd = redis::cmd("ZADD");
            cmd.arg(format!("{p}claims:{}", pool.encode()));
            for id in ids {
                cmd.arg(now_ms).arg(*id);
            }
            let _: i64 = cmd.query_async(&mut conn).await?;
        }
        Ok(())
    }

    /// Stores a new challenge under its code (codes are random; a clash
    /// returns false and the caller draws another).
    pub async fn make_challenge(
        &self,
        c: &ChallengeRecord,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut m = m.lock().await;
                let now = ttakji_platform::now_unix_ms();
                m.challenges
                    .retain(|_, c| c.expires_ms > now || !c.game_id.is_empty());
                if m.challenges.contains_key(&c.code) {
                    return Ok(false);
                }
                m.challenges.insert(c.code.clone(), c.clone());
                Ok(true)
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let key = challenge_key(p, &c.code);
                let created: bool = redis::cmd("HSETNX")
                    .arg(&key)
                    .arg("code")
                    .arg(&c.code)
                    .query_async(&mut conn)
                    .await?;
                if !created {
                    return Ok(false);
                }
                let _: () = redis::cmd("HSET")
                    .arg(&key)
                    .arg("maker_id")
                    .arg(&c.maker_id)
                    .arg("maker_name")
                    .arg(&c.maker_name)
                    .arg("pool")
                    .arg(c.pool.encode())
                    .arg("expires_ms")
                    .arg(c.expires_ms)
                    .arg("game_id")
                    .arg("")
                    .query_async(&mut conn)
                    .await?;
                let _: () = redis::cmd("EXPIRE")
                    .arg(&key)
                    .arg(ttl.as_secs().max(1))
                    .query_async(&mut conn)
                    .await?;
                Ok(true)
            }
        }
    }

    pub async fn challenge(&self, code: &str) -> Result<Option<ChallengeRecord>, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let now = ttakji_platform::now_unix_ms();
                Ok(m.lock()
                    .await
                    .challenges
                    .get(code)
                    .filter(|c| c.expires_ms > now || !c.game_id.is_empty())
                    .cloned())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let f: HashMap<String, String> = redis::cmd("HGETALL")
                    .arg(challenge_key(p, code))
                    .query_async(&mut conn)
                    .await?;
                Ok((|| {
                    Some(ChallengeRecord {
                        code: f.get("code")?.clone(),
                        maker_id: f.get("maker_id")?.clone(),
                        maker_name: f.get("maker_name").cloned().unwrap_or_default(),
                        pool: PoolKey::decode(f.get("pool")?)?,
                        expires_ms: f
                            .get("expires_ms")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0),
                        game_id: f.get("game_id").cloned().unwrap_or_default(),
                    })
                })())
            }
        }
    }

    /// Takes a challenge for `joiner` with the game id it will have: once.
    pub async fn take_challenge(
        &self,
        code: &str,
        joiner: &str,
        game_id: &str,
        keep: Duration,
    ) -> Result<Take, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut m = m.lock().await;
                let now = ttakji_platform::now_unix_ms();
                let Some(c) = m
                    .challenges
                    .get_mut(code)
                    .filter(|c| c.expires_ms > now || !c.game_id.is_empty())
                else {
                    return Ok(Take::Missing);
                };
                if !c.game_id.is_empty() {
                    return Ok(Take::Used);
                }
                if c.maker_id == joiner {
                    return Ok(Take::Own);
                }
                c.game_id = game_id.to_owned();
                Ok(Take::Taken(c.clone()))
            }
            Tickets::Redis(conn, p) => {
                let mut c = conn.clone();
                let answer: String = redis::Script::new(TAKE_CHALLENGE)
                    .key(challenge_key(p, code))
                    .arg(joiner)
                    .arg(game_id)
                    .arg(keep.as_secs().max(1))
                    .invoke_async(&mut c)
                    .await?;
                Ok(match answer.as_str() {
                    "taken" => match self.challenge(code).await? {
                        Some(rec) => Take::Taken(rec),
                        None => Take::Missing,
                    },
                    "used" => Take::Used,
                    "own" => Take::Own,
                    _ => Take::Missing,
                })
            }
        }
    }

    /// Records that `user_id` wants a rematch of `game_id`; returns who has.
    pub async fn agree_rematch(
        &self,
        game_id: &str,
        user_id: &str,
        keep: Duration,
    ) -> Result<Vec<String>, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut m = m.lock().await;
                let entry = m.rematches.entry(game_id.to_owned()).or_default();
                if !entry.0.iter().any(|u| u == user_id) {
                    entry.0.push(user_id.to_owned());
                }
                Ok(entry.0.clone())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                Ok(redis::Script::new(AGREE_REMATCH)
                    .key(rematch_key(p, game_id))
                    .arg(user_id)
                    .arg(keep.as_secs().max(1))
                    .invoke_async(&mut conn)
                    .await?)
            }
        }
    }

    /// Sets the rematch's new game id if none is set yet; returns the one that stands.
    pub async fn settle_rematch(
        &self,
        game_id: &str,
        new_game_id: &str,
        keep: Duration,
    ) -> Result<String, StoreError> {
        match self {
            Tickets::Memory(m) => {
                let mut m = m.lock().await;
                let entry = m.rematches.entry(game_id.to_owned()).or_default();
                if entry.1.is_empty() {
                    entry.1 = new_game_id.to_owned();
                }
                Ok(entry.1.clone())
            }
            Tickets::Redis(conn, p) => {
                let mut conn = conn.clone();
                let key = format!("{}:game", rematch_key(p, game_id));
                let _: Option<String> = redis::cmd("SET")
                    .arg(&key)
                    .arg(new_game_id)
                    .arg("NX")
                    .arg("EX")
                    .arg(keep.as_secs().max(1))
                    .query_async(&mut conn)
                    .await?;
                let stands: Option<String> =
                    redis::cmd("GET").arg(&key).query_async(&mut conn).await?;
                Ok(stands.unwrap_or_else(|| new_game_id.to_owned()))
            }
        }
    }
}
