//! The name of every Redis key the matchmaker uses, in one place: each
//! operation builds its keys here and hands them to Redis (and to its
//! scripts, through `KEYS`), so no name is spelled twice.

use std::sync::Arc;

use crate::tickets::store::PoolKey;

/// The keys of one deployment's matchmaking data, all under its namespace.
/// The names are part of the stored data: an instance of a newer version
/// must find what an older one wrote.
#[derive(Debug, Clone)]
pub(super) struct Keys {
    namespace: Arc<str>,
}

impl Keys {
    pub(super) fn new(namespace: &str) -> Keys {
        Keys {
            namespace: Arc::from(namespace),
        }
    }

    pub(super) fn namespace(&self) -> &str {
        &self.namespace
    }

    fn under(&self, rest: std::fmt::Arguments<'_>) -> String {
        format!("{}{rest}", self.namespace)
    }

    /// A ticket's record (a hash; see `codec`).
    pub(super) fn ticket(&self, id: &str) -> String {
        self.under(format_args!("ticket:{id}"))
    }

    /// A player's latest ticket id, while it waits or is being paired.
    pub(super) fn user(&self, user_id: &str) -> String {
        self.under(format_args!("user:{user_id}"))
    }

    /// A pool's queue: waiting ticket ids scored by when they were queued.
    pub(super) fn queue(&self, pool: &PoolKey) -> String {
        self.under(format_args!("pool:{}", pool.encode()))
    }

    /// Every pool ever queued in (a set of encoded pools).
    pub(super) fn pools(&self) -> String {
        self.under(format_args!("pools"))
    }

    /// A pool's claimed ticket ids, scored by when they were claimed.
    pub(super) fn claims(&self, pool: &PoolKey) -> String {
        self.under(format_args!("claims:{}", pool.encode()))
    }

    /// The instance that pairs a pool.
    pub(super) fn lease(&self, pool: &PoolKey) -> String {
        self.under(format_args!("lease:{}", pool.encode()))
    }

    /// A challenge's record (a hash; see `codec`).
    pub(super) fn challenge(&self, code: &str) -> String {
        self.under(format_args!("challenge:{code}"))
    }

    /// The players who agreed to a rematch of a game (a set).
    pub(super) fn rematch_agreed(&self, game_id: &str) -> String {
        self.under(format_args!("rematch:{game_id}:agreed"))
    }

    /// The game id a rematch of a game was settled on.
    pub(super) fn rematch_game(&self, game_id: &str) -> String {
        self.under(format_args!("rematch:{game_id}:game"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_names_are_the_ones_deployed_instances_wrote() {
        let keys = Keys::new("ttakji:mm:");
        let pool = PoolKey {
            board_size: 9,
            ruleset: "ttakji".to_owned(),
            ranked: true,
        };
        assert_eq!(keys.ticket("t1"), "ttakji:mm:ticket:t1");
        assert_eq!(keys.user("u1"), "ttakji:mm:user:u1");
        assert_eq!(keys.queue(&pool), "ttakji:mm:pool:9:ttakji:r");
        assert_eq!(keys.pools(), "ttakji:mm:pools");
        assert_eq!(keys.claims(&pool), "ttakji:mm:claims:9:ttakji:r");
        assert_eq!(keys.lease(&pool), "ttakji:mm:lease:9:ttakji:r");
        assert_eq!(keys.challenge("ABC234"), "ttakji:mm:challenge:ABC234");
        assert_eq!(keys.rematch_agreed("g1"), "ttakji:mm:rematch:g1:agreed");
        assert_eq!(keys.rematch_game("g1"), "ttakji:mm:rematch:g1:game");
    }
}
