//! What a queue store promises ([`QueueStore`]) and the values it keeps:
//! tickets, pools, matches, challenges. Both stores implement it; the
//! contract suite holds them to it.

use std::fmt;
use std::time::Duration;

use baduk::Color;
use baduk_ai::Level;

/// A pool's key: board size, ruleset, ranked or casual. Only tickets of
/// the same pool are paired.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PoolKey {
    pub board_size: u32,
    pub ruleset: String,
    pub ranked: bool,
}

impl PoolKey {
    /// The pool's name in stored values, keys and metrics: `9:ttakji:c`
    /// (casual) or `9:ttakji:r` (ranked).
    #[must_use]
    pub fn encode(&self) -> String {
        format!(
            "{}:{}:{}",
            self.board_size,
            self.ruleset,
            if self.ranked { "r" } else { "c" }
        )
    }

    /// Reads [`PoolKey::encode`]'s form; `None` for anything else.
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

/// Where a ticket is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// In its pool's queue.
    Waiting,
    /// Claimed by a pairing round; its game is being made.
    Pairing,
    /// Its game is made and its player told.
    Matched,
    /// Cancelled by its player, or dropped (player gone, ticket expired).
    Cancelled,
}

/// Who a matched player plays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opponent {
    /// Empty for the computer.
    pub user_id: String,
    pub nickname: String,
    /// The computer's level; `None` for a person.
    pub level: Option<Level>,
}

/// What a matched ticket's player is told: their colour and their opponent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    pub color: Color,
    pub opponent: Opponent,
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
    /// When the player's own stream last asked about the ticket.
    pub seen_ms: i64,
    pub state: State,
    /// The game the ticket was claimed for: set from the claim on.
    pub game_id: Option<String>,
    /// Set when matched.
    pub matched: Option<Match>,
    /// When the claim was made (to find claims an instance left half done).
    pub claimed_ms: i64,
}

impl Ticket {
    /// A new ticket, waiting from `now_ms`.
    #[must_use]
    pub fn waiting(
        id: String,
        user_id: String,
        nickname: String,
        rating: u32,
        pool: PoolKey,
        now_ms: i64,
    ) -> Ticket {
        Ticket {
            id,
            user_id,
            nickname,
            rating,
            pool,
            enqueued_ms: now_ms,
            seen_ms: now_ms,
            state: State::Waiting,
            game_id: None,
            matched: None,
            claimed_ms: 0,
        }
    }
}

/// A ticket's place in its pool's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Place {
    /// 1 = longest waiting; 0 = not in the queue.
    pub position: u32,
    /// How many tickets wait in the pool.
    pub waiting: u32,
}

/// Waiting tickets of one pool, taken together for one game.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    pub pool: &'a PoolKey,
    pub ids: &'a [&'a str],
    /// The id the game will have, chosen before the claim: a claim left
    /// half done is finished with the same game.
    pub game_id: &'a str,
    pub now_ms: i64,
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
    pub game_id: Option<String>,
    /// The house rules its host chose beyond the pool.
    pub terms: TableTerms,
}

/// A table's house rules beyond its pool's board size and ruleset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableTerms {
    /// Komi in half points; `None` keeps the ruleset's.
    pub komi_half: Option<i32>,
    /// Seconds a move (0 for none); `None` takes the matchmaker's clock.
    pub seconds_per_move: Option<u32>,
    /// A rematch keeps the colours instead of swapping who plays Black.
    pub keep_colors: bool,
    /// The computer plays the seat of a player who is away.
    pub stand_in: bool,
}

/// The outcome of taking a challenge code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Take {
    /// Taken by this joiner; the record carries the game id given.
    Taken(ChallengeRecord),
    /// No such code, or it expired.
    Missing,
    /// Someone has already taken it.
    Used,
    /// The joiner made it.
    Own,
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(#[from] ::redis::RedisError),
    /// A player's queue entry kept changing under an enqueue.
    #[error("the ticket of player {user_id} changed {attempts} times while queueing")]
    Contended { user_id: String, attempts: u32 },
}

/// What the matchmaker asks of the place its tickets live. Each method is
/// one atomic step against every other caller, on any instance.
#[tonic::async_trait]
pub trait QueueStore: fmt::Debug + Send + Sync {
    /// Stores a new waiting ticket and returns its id, or returns the id of
    /// the player's ticket already waiting or being paired (and stores
    /// nothing).
    async fn enqueue(&self, ticket: &Ticket) -> Result<String, StoreError>;

    /// The ticket with this id, in any state; `None` if unknown (or, on
    /// Redis, an hour after it was queued).
    async fn get(&self, id: &str) -> Result<Option<Ticket>, StoreError>;

    /// Notes that the ticket's player was still there at `now_ms`. An
    /// unknown ticket stays unknown.
    async fn touch(&self, id: &str, now_ms: i64) -> Result<(), StoreError>;

    /// Cancels a waiting ticket. Returns the state it was in: `Waiting`
    /// means it is now cancelled; any other state is left as it was.
    /// `None`: no such ticket, or (with `user_id`) not this player's.
    async fn cancel(&self, id: &str, user_id: Option<&str>) -> Result<Option<State>, StoreError>;

    /// A waiting ticket's place in its pool; position 0 for a ticket that
    /// is not waiting.
    async fn place(&self, ticket: &Ticket) -> Result<Place, StoreError>;

    /// Every pool with a waiting ticket (Redis also lists pools that have
    /// emptied since).
    async fn pools(&self) -> Result<Vec<PoolKey>, StoreError>;

    /// The waiting tickets of a pool, longest-waiting first.
    async fn waiting(&self, pool: &PoolKey) -> Result<Vec<Ticket>, StoreError>;

    /// Claims every ticket of `claim` or none: false when any is not
    /// waiting in the claim's pool. A claim is found by
    /// [`QueueStore::stale_claims`] until it is finished or released.
    async fn claim(&self, claim: Claim<'_>) -> Result<bool, StoreError>;

    /// Claims as [`QueueStore::claim`] does, each claim on its own, in one
    /// trip to the store: whether each won, in order.
    async fn claim_all(&self, claims: &[Claim<'_>]) -> Result<Vec<bool>, StoreError> {
        let mut won = Vec::with_capacity(claims.len());
        for claim in claims {
            won.push(self.claim(*claim).await?);
        }
        Ok(won)
    }

    /// Puts claimed tickets of `pool` back in its queue, in their old
    /// places (their game could not be made). Tickets not claimed are left
    /// as they are.
    async fn release(&self, pool: &PoolKey, ids: &[&str]) -> Result<(), StoreError>;

    /// Marks a claimed ticket matched, with what its player is told, and
    /// lets the player queue again. A ticket not claimed is left as it is.
    async fn finish(&self, ticket: &Ticket, told: &Match) -> Result<(), StoreError>;

    /// Finishes tickets as [`QueueStore::finish`] does, in one trip to the
    /// store.
    async fn finish_all(&self, done: &[(Ticket, Match)]) -> Result<(), StoreError> {
        for (ticket, told) in done {
            self.finish(ticket, told).await?;
        }
        Ok(())
    }

    /// Tries to hold the pairing lease of `pool` for `ttl`: true while
    /// `instance` holds it. In memory there is one instance, which always
    /// holds it.
    async fn lease(
        &self,
        pool: &PoolKey,
        instance: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError>;

    /// Tickets of `pool` left claimed since before `before_ms` (an instance
    /// died between the claim and the match).
    async fn stale_claims(&self, pool: &PoolKey, before_ms: i64)
    -> Result<Vec<Ticket>, StoreError>;

    /// Stores a new challenge under its code for `ttl`. Codes are random; a
    /// clash returns false, stores nothing, and the caller draws another.
    async fn make_challenge(&self, c: &ChallengeRecord, ttl: Duration) -> Result<bool, StoreError>;

    /// The challenge of this code, unless it expired unused.
    async fn challenge(&self, code: &str) -> Result<Option<ChallengeRecord>, StoreError>;

    /// Takes a challenge for `joiner` with the game id it will have: once.
    /// A taken challenge is kept for `keep` at least, past its expiry.
    async fn accept_challenge(
        &self,
        code: &str,
        joiner: &str,
        game_id: &str,
        keep: Duration,
    ) -> Result<Take, StoreError>;

    /// Records that `user_id` wants a rematch of `game_id`; returns everyone
    /// who has (each once, in no set order). Kept for `keep` at least.
    async fn agree_rematch(
        &self,
        game_id: &str,
        user_id: &str,
        keep: Duration,
    ) -> Result<Vec<String>, StoreError>;

    /// Sets the rematch's new game id if none is set yet; returns the one
    /// that stands, so every caller makes the same game.
    async fn settle_rematch(
        &self,
        game_id: &str,
        new_game_id: &str,
        keep: Duration,
    ) -> Result<String, StoreError>;
}
