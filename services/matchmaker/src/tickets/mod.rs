//! Where tickets, challenges and rematch agreements live, behind one
//! trait, [`QueueStore`], with two implementations: Redis in a deployment,
//! so any matchmaker instance serves any ticket, and memory in the
//! single-process mode. Every change that two instances (or a player and
//! the pairing loop) could race on is one atomic step: a Lua script on
//! Redis, one lock in memory.
//!
//! A ticket moves `waiting` → `pairing` (claimed, with the id its game will
//! have) → `matched`; or `waiting` → `cancelled`. A claim and a cancel
//! exclude each other, so a cancel during pairing either wins (no game) or
//! is refused (the game is made).

#[cfg(test)]
mod contract;
mod memory;
mod redis;
mod store;

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

pub use memory::Memory;
pub use redis::{DEFAULT_NAMESPACE, RedisTickets};
pub use store::{
    ChallengeRecord, Claim, Match, Opponent, Place, PoolKey, QueueStore, State, StoreError,
    TableTerms, Take, Ticket,
};

/// The matchmaker's handle on its store: cheap to clone, shared by the
/// service and the pairing loop.
#[derive(Clone)]
pub struct Tickets(Arc<dyn QueueStore>);

impl Tickets {
    /// The single-process store.
    #[must_use]
    pub fn memory() -> Tickets {
        Tickets::new(Memory::default())
    }

    /// Redis under the deployment's namespace, [`DEFAULT_NAMESPACE`].
    ///
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
        Ok(Tickets::new(RedisTickets::connect(url, namespace).await?))
    }

    /// Any other store.
    pub fn new(store: impl QueueStore + 'static) -> Tickets {
        Tickets(Arc::new(store))
    }
}

impl Deref for Tickets {
    type Target = dyn QueueStore;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for Tickets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Tickets").field(&self.0).finish()
    }
}
