//! The store on Redis, shared by every matchmaker instance. Each step two
//! callers could race on is one Lua script, written beside the method that
//! runs it; every key a script touches is built by [`Keys`] and passed in
//! `KEYS`, and every stored value is written by [`codec`].

mod codec;
mod keys;
#[cfg(test)]
pub(super) mod testing;

use std::sync::LazyLock;
use std::time::Duration;

use redis::{Script, ScriptInvocation};
use ttakji_platform::redis_target::{RedisTarget, SharedConnection};

use self::codec::Fields;
use self::keys::Keys;
use super::store::{
    ChallengeRecord, Claim, Match, Place, PoolKey, QueueStore, State, StoreError, Take, Ticket,
};

/// The key prefix of a deployment's matchmaking data.
pub const DEFAULT_NAMESPACE: &str = "ttakji:mm:";

/// How long a ticket's record (and its player's entry) outlives its queueing.
const RECORD_TTL_SECS: i64 = 3600;

/// How often an enqueue reads its player's entry again when it keeps
/// changing (another enqueue of the same player on another instance).
const ENQUEUE_ATTEMPTS: u32 = 8;

/// The store of a deployment: a connection and the names of its keys.
#[derive(Clone)]
pub struct RedisTickets {
    conn: SharedConnection,
    keys: Keys,
}

impl std::fmt::Debug for RedisTickets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTickets")
            .field("namespace", &self.keys.namespace())
            .finish_non_exhaustive()
    }
}

/// A duration in whole milliseconds, at least one: Redis refuses an
/// expiry of zero.
fn expiry_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisTickets {
    /// Connects to `url`, with every key under `namespace`.
    ///
    /// # Errors
    /// When Redis cannot be reached.
    pub async fn connect(url: &str, namespace: &str) -> Result<RedisTickets, StoreError> {
        let target = RedisTarget::parse(url)?;
        Ok(RedisTickets {
            conn: target.connection().await?,
            keys: Keys::new(namespace),
        })
    }

    fn conn(&self) -> SharedConnection {
        self.conn.clone()
    }

    async fn fields(&self, key: String) -> Result<Fields, StoreError> {
        Ok(redis::cmd("HGETALL")
            .arg(key)
            .query_async(&mut self.conn())
            .await?)
    }
}

/// Claims of one pool made in one script call: at most this many.
const CLAIMS_AT_ONCE: usize = 256;

/// Marks a claimed ticket matched.
/// KEYS: the ticket, its player's entry, its pool's claims.
/// ARGV: the ticket's id, its player, its pool, then the fields of what the
/// player is told.
static FINISH: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local f = redis.call('HMGET', KEYS[1], 'state', 'user_id', 'pool')
if f[1] ~= 'pairing' or f[2] ~= ARGV[2] or f[3] ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'matched', unpack(ARGV, 4))
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
",
    )
});

impl RedisTickets {
    /// The script call that finishes `ticket` with what its player is told
    /// ([`FINISH`]).
    fn finish_call(&self, ticket: &Ticket, told: &Match) -> ScriptInvocation<'static> {
        let mut call = FINISH.prepare_invoke();
        call.key(self.keys.ticket(&ticket.id))
            .key(self.keys.user(&ticket.user_id))
            .key(self.keys.claims(&ticket.pool))
            .arg(&ticket.id)
            .arg(&ticket.user_id)
            .arg(ticket.pool.encode());
        for (field, value) in codec::match_fields(told) {
            call.arg(field).arg(value);
        }
        call
    }
}

#[tonic::async_trait]
impl QueueStore for RedisTickets {
    async fn enqueue(&self, ticket: &Ticket) -> Result<String, StoreError> {
        // KEYS: the player's entry, the pool's queue, the set of pools, the
        // new ticket, the ticket the entry named when last read.
        // ARGV: the new id, its pool, the record's lifetime (s), the id the
        // entry named when last read ('' for none), then the ticket's fields.
        // Answers {'moved', id} when the entry no longer names that ticket.
        static ENQUEUE: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[4] then return {'moved', current} end
if current ~= '' then
  local st = redis.call('HGET', KEYS[5], 'state')
  if st == 'waiting' or st == 'pairing' then return {'queued', current} end
end
redis.call('HSET', KEYS[4], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[4], ARGV[3])
redis.call('ZADD', KEYS[2], redis.call('HGET', KEYS[4], 'enqueued_ms'), ARGV[1])
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return {'queued', ARGV[1]}
",
            )
        });
        let fields = codec::ticket_fields(ticket);
        // A fresh player has no entry: one round trip, and a second only
        // for a player already in the queue.
        let mut named = String::new();
        for _ in 0..ENQUEUE_ATTEMPTS {
            let mut call = ENQUEUE.prepare_invoke();
            call.key(self.keys.user(&ticket.user_id))
                .key(self.keys.queue(&ticket.pool))
                .key(self.keys.pools())
                .key(self.keys.ticket(&ticket.id))
                .key(
                    self.keys
                        .ticket(if named.is_empty() { &ticket.id } else { &named }),
                )
                .arg(&ticket.id)
                .arg(ticket.pool.encode())
                .arg(RECORD_TTL_SECS)
                .arg(&named);
            for (field, value) in &fields {
                call.arg(*field).arg(value);
            }
            let (answer, id): (String, String) = call.invoke_async(&mut self.conn()).await?;
            if answer != "moved" {
                return Ok(id);
            }
            named = id;
        }
        Err(StoreError::Contended {
            user_id: ticket.user_id.clone(),
            attempts: ENQUEUE_ATTEMPTS,
        })
    }

    async fn get(&self, id: &str) -> Result<Option<Ticket>, StoreError> {
        let fields = self.fields(self.keys.ticket(id)).await?;
        Ok(codec::ticket_from_fields(id, &fields))
    }

    async fn touch(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        // KEYS: the ticket. ARGV: when its player was seen.
        static TOUCH: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'seen_ms', ARGV[1])
return 1
",
            )
        });
        let _: i64 = TOUCH
            .key(self.keys.ticket(id))
            .arg(now_ms)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }

    async fn cancel(&self, id: &str, user_id: Option<&str>) -> Result<Option<State>, StoreError> {
        // KEYS: the ticket, its pool's queue, its player's entry.
        // ARGV: the player asking ('' for the matchmaker), the ticket's id,
        // its player and its pool as read before. Answers 'done' when it
        // cancels, or the state that stopped it.
        static CANCEL: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
local f = redis.call('HMGET', KEYS[1], 'state', 'user_id', 'pool')
if not f[1] or f[2] ~= ARGV[3] or f[3] ~= ARGV[4] then return 'missing' end
if ARGV[1] ~= '' and f[2] ~= ARGV[1] then return 'not_yours' end
if f[1] ~= 'waiting' then return f[1] end
redis.call('HSET', KEYS[1], 'state', 'cancelled')
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return 'done'
",
            )
        });
        // A ticket's player and pool never change: read them to name the
        // keys the cancel touches.
        let Some(ticket) = self.get(id).await? else {
            return Ok(None);
        };
        let answer: String = CANCEL
            .key(self.keys.ticket(id))
            .key(self.keys.queue(&ticket.pool))
            .key(self.keys.user(&ticket.user_id))
            .arg(user_id.unwrap_or(""))
            .arg(id)
            .arg(&ticket.user_id)
            .arg(ticket.pool.encode())
            .invoke_async(&mut self.conn())
            .await?;
        Ok(match answer.as_str() {
            "missing" | "not_yours" => None,
            "done" => Some(State::Waiting),
            other => Some(codec::state_from_word(other)),
        })
    }

    async fn place(&self, ticket: &Ticket) -> Result<Place, StoreError> {
        let key = self.keys.queue(&ticket.pool);
        let (rank, waiting): (Option<u32>, u32) = redis::pipe()
            .cmd("ZRANK")
            .arg(&key)
            .arg(&ticket.id)
            .cmd("ZCARD")
            .arg(&key)
            .query_async(&mut self.conn())
            .await?;
        Ok(Place {
            position: rank.map_or(0, |r| r + 1),
            waiting,
        })
    }

    async fn pools(&self) -> Result<Vec<PoolKey>, StoreError> {
        let pools: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.keys.pools())
            .query_async(&mut self.conn())
            .await?;
        Ok(pools.iter().filter_map(|p| PoolKey::decode(p)).collect())
    }

    async fn waiting(&self, pool: &PoolKey) -> Result<Vec<Ticket>, StoreError> {
        let mut conn = self.conn();
        let ids: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.keys.queue(pool))
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.cmd("HGETALL").arg(self.keys.ticket(id));
        }
        let all: Vec<Fields> = pipe.query_async(&mut conn).await?;
        Ok(ids
            .iter()
            .zip(all)
            .filter_map(|(id, f)| codec::ticket_from_fields(id, &f))
            .filter(|t| t.state == State::Waiting)
            .collect())
    }

    async fn claim(&self, claim: Claim<'_>) -> Result<bool, StoreError> {
        Ok(self.claim_all(&[claim]).await?.first() == Some(&true))
    }

    async fn claim_all(&self, claims: &[Claim<'_>]) -> Result<Vec<bool>, StoreError> {
        // Claims pairings of one pool, each all or none: an array of 1
        // (claimed) or 0, one for each.
        // KEYS: the pool's queue, its claims, then each claim's tickets in
        // turn. ARGV: the pool, the time of the claims, then for each claim
        // its game id, how many tickets it takes and their ids.
        static CLAIM: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
local won = {}
local k, a = 3, 3
while a <= #ARGV do
  local game, n = ARGV[a], tonumber(ARGV[a + 1])
  local ok = true
  for j = 0, n - 1 do
    local f = redis.call('HMGET', KEYS[k + j], 'state', 'pool')
    if f[1] ~= 'waiting' or f[2] ~= ARGV[1] then ok = false end
  end
  if ok then
    for j = 0, n - 1 do
      redis.call('HSET', KEYS[k + j], 'state', 'pairing', 'game_id', game, 'claimed_ms', ARGV[2])
      redis.call('ZREM', KEYS[1], ARGV[a + 2 + j])
      redis.call('ZADD', KEYS[2], ARGV[2], ARGV[a + 2 + j])
    end
  end
  won[#won + 1] = ok and 1 or 0
  k, a = k + n, a + 2 + n
end
return won
",
            )
        });
        let mut won = Vec::with_capacity(claims.len());
        let mut rest = claims;
        while let Some(first) = rest.first() {
            // A run of claims of one pool and time goes in one call.
            let run = rest
                .iter()
                .take(CLAIMS_AT_ONCE)
                .take_while(|c| c.pool == first.pool && c.now_ms == first.now_ms)
                .count();
            let (these, after) = rest.split_at(run);
            let mut call = CLAIM.prepare_invoke();
            call.key(self.keys.queue(first.pool))
                .key(self.keys.claims(first.pool))
                .arg(first.pool.encode())
                .arg(first.now_ms);
            for claim in these {
                call.arg(claim.game_id).arg(claim.ids.len());
                for id in claim.ids {
                    call.key(self.keys.ticket(id)).arg(*id);
                }
            }
            let claimed: Vec<i64> = call.invoke_async(&mut self.conn()).await?;
            won.extend(claimed.into_iter().map(|c| c == 1));
            rest = after;
        }
        Ok(won)
    }

    async fn release(&self, pool: &PoolKey, ids: &[&str]) -> Result<(), StoreError> {
        // KEYS: the pool's queue, its claims, then each ticket.
        // ARGV: the pool, then each ticket's id (in the order of KEYS).
        static RELEASE: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
for i = 3, #KEYS do
  local f = redis.call('HMGET', KEYS[i], 'state', 'pool', 'enqueued_ms')
  if f[1] == 'pairing' and f[2] == ARGV[1] then
    redis.call('ZREM', KEYS[2], ARGV[i - 1])
    redis.call('HSET', KEYS[i], 'state', 'waiting', 'game_id', '')
    redis.call('ZADD', KEYS[1], f[3], ARGV[i - 1])
  end
end
return 1
",
            )
        });
        let mut call = RELEASE.prepare_invoke();
        call.key(self.keys.queue(pool))
            .key(self.keys.claims(pool))
            .arg(pool.encode());
        for id in ids {
            call.key(self.keys.ticket(id)).arg(*id);
        }
        let _: i64 = call.invoke_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn finish(&self, ticket: &Ticket, told: &Match) -> Result<(), StoreError> {
        let _: i64 = self
            .finish_call(ticket, told)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }

    async fn finish_all(&self, done: &[(Ticket, Match)]) -> Result<(), StoreError> {
        if done.is_empty() {
            return Ok(());
        }
        let calls: Vec<ScriptInvocation<'_>> = done
            .iter()
            .map(|(t, told)| self.finish_call(t, told))
            .collect();
        let mut pipe = redis::pipe();
        pipe.load_script(&FINISH).ignore();
        for call in &calls {
            pipe.invoke_script(call).ignore();
        }
        pipe.query_async::<()>(&mut self.conn()).await?;
        Ok(())
    }

    async fn lease(
        &self,
        pool: &PoolKey,
        instance: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        // KEYS: the lease. ARGV: the instance, the lease's length (ms).
        // Takes it if free, or renews it if ours.
        static LEASE: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0
",
            )
        });
        let held: i64 = LEASE
            .key(self.keys.lease(pool))
            .arg(instance)
            .arg(expiry_ms(ttl))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(held == 1)
    }

    async fn stale_claims(
        &self,
        pool: &PoolKey,
        before_ms: i64,
    ) -> Result<Vec<Ticket>, StoreError> {
        // Claimed tickets leave the pool's queue; they are found through
        // the claims index written with the claim.
        let mut conn = self.conn();
        let claims = self.keys.claims(pool);
        let ids: Vec<String> = redis::cmd("ZRANGEBYSCORE")
            .arg(&claims)
            .arg("-inf")
            .arg(format!("({before_ms}"))
            .query_async(&mut conn)
            .await?;
        let mut stale = Vec::new();
        for id in ids {
            match self.get(&id).await? {
                Some(t) if t.state == State::Pairing => stale.push(t),
                _ => {
                    let _: i64 = redis::cmd("ZREM")
                        .arg(&claims)
                        .arg(&id)
                        .query_async(&mut conn)
                        .await?;
                }
            }
        }
        Ok(stale)
    }

    async fn make_challenge(&self, c: &ChallengeRecord, ttl: Duration) -> Result<bool, StoreError> {
        // KEYS: the challenge. ARGV: its lifetime (ms), then its fields.
        static MAKE_CHALLENGE: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
",
            )
        });
        let mut call = MAKE_CHALLENGE.prepare_invoke();
        call.key(self.keys.challenge(&c.code)).arg(expiry_ms(ttl));
        for (field, value) in codec::challenge_fields(c) {
            call.arg(field).arg(value);
        }
        let made: i64 = call.invoke_async(&mut self.conn()).await?;
        Ok(made == 1)
    }

    async fn challenge(&self, code: &str) -> Result<Option<ChallengeRecord>, StoreError> {
        let fields = self.fields(self.keys.challenge(code)).await?;
        Ok(codec::challenge_from_fields(&fields))
    }

    async fn accept_challenge(
        &self,
        code: &str,
        joiner: &str,
        game_id: &str,
        keep: Duration,
    ) -> Result<Take, StoreError> {
        // KEYS: the challenge. ARGV: the joiner, the game id, how long to
        // keep the challenge once taken (ms).
        static TAKE_CHALLENGE: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
if redis.call('HGET', KEYS[1], 'game_id') ~= '' then return 'used' end
if redis.call('HGET', KEYS[1], 'maker_id') == ARGV[1] then return 'own' end
redis.call('HSET', KEYS[1], 'game_id', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 'taken'
",
            )
        });
        let answer: String = TAKE_CHALLENGE
            .key(self.keys.challenge(code))
            .arg(joiner)
            .arg(game_id)
            .arg(expiry_ms(keep))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(match answer.as_str() {
            "taken" => self
                .challenge(code)
                .await?
                .map_or(Take::Missing, Take::Taken),
            "used" => Take::Used,
            "own" => Take::Own,
            _ => Take::Missing,
        })
    }

    async fn agree_rematch(
        &self,
        game_id: &str,
        user_id: &str,
        keep: Duration,
    ) -> Result<Vec<String>, StoreError> {
        // KEYS: who agreed to a rematch of the game. ARGV: the player, how
        // long to keep the agreement (ms).
        static AGREE_REMATCH: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('SMEMBERS', KEYS[1])
",
            )
        });
        Ok(AGREE_REMATCH
            .key(self.keys.rematch_agreed(game_id))
            .arg(user_id)
            .arg(expiry_ms(keep))
            .invoke_async(&mut self.conn())
            .await?)
    }

    async fn settle_rematch(
        &self,
        game_id: &str,
        new_game_id: &str,
        keep: Duration,
    ) -> Result<String, StoreError> {
        // KEYS: the rematch's game id. ARGV: the id proposed, how long to
        // keep it (ms). Answers the id that stands.
        static SETTLE_REMATCH: LazyLock<Script> = LazyLock::new(|| {
            Script::new(
                r"
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return redis.call('GET', KEYS[1])
",
            )
        });
        let stands: Option<String> = SETTLE_REMATCH
            .key(self.keys.rematch_game(game_id))
            .arg(new_game_id)
            .arg(expiry_ms(keep))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(stands.unwrap_or_else(|| new_game_id.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::on_redis;
    use super::*;

    fn pool() -> PoolKey {
        PoolKey {
            board_size: 9,
            ruleset: "ttakji".to_owned(),
            ranked: true,
        }
    }

    #[tokio::test]
    async fn a_pool_lease_is_held_by_one_instance_until_it_lapses() {
        on_redis(|store| async move {
            let ttl = Duration::from_millis(300);
            assert!(store.lease(&pool(), "a", ttl).await.expect("lease"));
            assert!(!store.lease(&pool(), "b", ttl).await.expect("lease"));
            assert!(store.lease(&pool(), "a", ttl).await.expect("renewed"));
            tokio::time::sleep(ttl + Duration::from_millis(200)).await;
            assert!(store.lease(&pool(), "b", ttl).await.expect("lease"));
            assert!(!store.lease(&pool(), "a", ttl).await.expect("lease"));
        })
        .await;
    }

    #[tokio::test]
    async fn an_entry_naming_a_vanished_ticket_does_not_keep_its_player_out() {
        on_redis(|store| async move {
            let entry = store.keys.user("u1");
            let _: () = redis::cmd("SET")
                .arg(&entry)
                .arg("ghost")
                .query_async(&mut store.conn())
                .await
                .expect("set");
            let t = Ticket::waiting("t1".into(), "u1".into(), "ahn".into(), 1200, pool(), 1);
            assert_eq!(store.enqueue(&t).await.expect("enqueue"), "t1");
            let named: Option<String> = redis::cmd("GET")
                .arg(&entry)
                .query_async(&mut store.conn())
                .await
                .expect("get");
            assert_eq!(named.as_deref(), Some("t1"));
        })
        .await;
    }

    #[tokio::test]
    async fn a_ticket_and_its_players_entry_expire_after_an_hour() {
        on_redis(|store| async move {
            let t = Ticket::waiting("t1".into(), "u1".into(), "ahn".into(), 1200, pool(), 1);
            store.enqueue(&t).await.expect("enqueue");
            for key in [store.keys.ticket("t1"), store.keys.user("u1")] {
                let ttl: i64 = redis::cmd("TTL")
                    .arg(&key)
                    .query_async(&mut store.conn())
                    .await
                    .expect("ttl");
                assert!(
                    (RECORD_TTL_SECS - 5..=RECORD_TTL_SECS).contains(&ttl),
                    "{key}: {ttl}"
                );
            }
        })
        .await;
    }
}
