//! The single-process store: every ticket, challenge and rematch agreement
//! in maps behind one lock, so each operation is atomic as on Redis.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::time::Duration;

use tokio::sync::Mutex;
use ttakji_platform::now_unix_ms;

use super::store::{
    ChallengeRecord, Claim, Match, Place, PoolKey, QueueStore, State, StoreError, Take, Ticket,
};

/// The store of the single-process mode. Nothing is ever expired but
/// challenges: one process lives as long as its players' tickets.
#[derive(Default)]
pub struct Memory {
    inner: Mutex<Maps>,
}

#[derive(Default)]
struct Maps {
    tickets: HashMap<String, Ticket>,
    /// Pool → (enqueued_ms, ticket id) of waiting tickets: the queue order.
    pools: HashMap<PoolKey, BTreeSet<(i64, String)>>,
    /// Player → their latest ticket, while it waits or is being paired.
    users: HashMap<String, String>,
    challenges: HashMap<String, ChallengeRecord>,
    /// Game → (who agreed to a rematch, the rematch's game id once settled).
    rematches: HashMap<String, (Vec<String>, Option<String>)>,
}

impl fmt::Debug for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memory")
    }
}

impl Maps {
    /// Takes a ticket out of its pool's queue and frees its player to queue again.
    fn leave_queue(&mut self, id: &str) {
        let Some(t) = self.tickets.get(id) else {
            return;
        };
        if let Some(queue) = self.pools.get_mut(&t.pool) {
            queue.remove(&(t.enqueued_ms, t.id.clone()));
        }
        if self.users.get(&t.user_id).is_some_and(|u| u == id) {
            self.users.remove(&t.user_id);
        }
    }

    /// A challenge that still counts: unexpired, or taken.
    fn live_challenge(&mut self, code: &str) -> Option<&mut ChallengeRecord> {
        let now = now_unix_ms();
        self.challenges
            .get_mut(code)
            .filter(|c| c.expires_ms > now || c.game_id.is_some())
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[tonic::async_trait]
impl QueueStore for Memory {
    async fn enqueue(&self, ticket: &Ticket) -> Result<String, StoreError> {
        let mut m = self.inner.lock().await;
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

    async fn get(&self, id: &str) -> Result<Option<Ticket>, StoreError> {
        Ok(self.inner.lock().await.tickets.get(id).cloned())
    }

    async fn touch(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        if let Some(t) = self.inner.lock().await.tickets.get_mut(id) {
            t.seen_ms = now_ms;
        }
        Ok(())
    }

    async fn cancel(&self, id: &str, user_id: Option<&str>) -> Result<Option<State>, StoreError> {
        let mut m = self.inner.lock().await;
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
        m.leave_queue(id);
        Ok(Some(State::Waiting))
    }

    async fn place(&self, ticket: &Ticket) -> Result<Place, StoreError> {
        let m = self.inner.lock().await;
        let Some(queue) = m.pools.get(&ticket.pool) else {
            return Ok(Place::default());
        };
        let position = queue
            .iter()
            .position(|(_, id)| *id == ticket.id)
            .map_or(0, |i| i + 1);
        Ok(Place {
            position: count(position),
            waiting: count(queue.len()),
        })
    }

    async fn pools(&self) -> Result<Vec<PoolKey>, StoreError> {
        Ok(self
            .inner
            .lock()
            .await
            .pools
            .iter()
            .filter(|(_, queue)| !queue.is_empty())
            .map(|(pool, _)| pool.clone())
            .collect())
    }

    async fn waiting(&self, pool: &PoolKey) -> Result<Vec<Ticket>, StoreError> {
        let m = self.inner.lock().await;
        Ok(m.pools
            .get(pool)
            .into_iter()
            .flatten()
            .filter_map(|(_, id)| m.tickets.get(id).cloned())
            .collect())
    }

    async fn claim(&self, claim: Claim<'_>) -> Result<bool, StoreError> {
        let Claim {
            pool,
            ids,
            game_id,
            now_ms,
        } = claim;
        let mut guard = self.inner.lock().await;
        let m = &mut *guard;
        let all_waiting = ids.iter().all(|id| {
            m.tickets
                .get(*id)
                .is_some_and(|t| t.state == State::Waiting && t.pool == *pool)
        });
        if !all_waiting {
            return Ok(false);
        }
        for id in ids {
            if let Some(t) = m.tickets.get_mut(*id) {
                t.state = State::Pairing;
                t.game_id = Some(game_id.to_owned());
                t.claimed_ms = now_ms;
                if let Some(queue) = m.pools.get_mut(pool) {
                    queue.remove(&(t.enqueued_ms, t.id.clone()));
                }
            }
        }
        Ok(true)
    }

    async fn release(&self, pool: &PoolKey, ids: &[&str]) -> Result<(), StoreError> {
        let mut guard = self.inner.lock().await;
        let m = &mut *guard;
        for id in ids {
            if let Some(t) = m.tickets.get_mut(*id)
                && t.state == State::Pairing
                && t.pool == *pool
            {
                t.state = State::Waiting;
                t.game_id = None;
                m.pools
                    .entry(pool.clone())
                    .or_default()
                    .insert((t.enqueued_ms, t.id.clone()));
            }
        }
        Ok(())
    }

    async fn finish(&self, ticket: &Ticket, told: &Match) -> Result<(), StoreError> {
        let mut m = self.inner.lock().await;
        if let Some(t) = m.tickets.get_mut(&ticket.id)
            && t.state == State::Pairing
        {
            t.state = State::Matched;
            t.matched = Some(told.clone());
            m.leave_queue(&ticket.id);
        }
        Ok(())
    }

    async fn lease(&self, _: &PoolKey, _: &str, _: Duration) -> Result<bool, StoreError> {
        Ok(true)
    }

    async fn stale_claims(
        &self,
        pool: &PoolKey,
        before_ms: i64,
    ) -> Result<Vec<Ticket>, StoreError> {
        Ok(self
            .inner
            .lock()
            .await
            .tickets
            .values()
            .filter(|t| t.pool == *pool && t.state == State::Pairing && t.claimed_ms < before_ms)
            .cloned()
            .collect())
    }

    async fn make_challenge(&self, c: &ChallengeRecord, _: Duration) -> Result<bool, StoreError> {
        let mut m = self.inner.lock().await;
        let now = now_unix_ms();
        m.challenges
            .retain(|_, c| c.expires_ms > now || c.game_id.is_some());
        if m.challenges.contains_key(&c.code) {
            return Ok(false);
        }
        m.challenges.insert(c.code.clone(), c.clone());
        Ok(true)
    }

    async fn challenge(&self, code: &str) -> Result<Option<ChallengeRecord>, StoreError> {
        Ok(self
            .inner
            .lock()
            .await
            .live_challenge(code)
            .map(|c| c.clone()))
    }

    async fn accept_challenge(
        &self,
        code: &str,
        joiner: &str,
        game_id: &str,
        _: Duration,
    ) -> Result<Take, StoreError> {
        let mut m = self.inner.lock().await;
        let Some(c) = m.live_challenge(code) else {
            return Ok(Take::Missing);
        };
        if c.game_id.is_some() {
            return Ok(Take::Used);
        }
        if c.maker_id == joiner {
            return Ok(Take::Own);
        }
        c.game_id = Some(game_id.to_owned());
        Ok(Take::Taken(c.clone()))
    }

    async fn agree_rematch(
        &self,
        game_id: &str,
        user_id: &str,
        _: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let mut m = self.inner.lock().await;
        let (agreed, _) = m.rematches.entry(game_id.to_owned()).or_default();
        if !agreed.iter().any(|u| u == user_id) {
            agreed.push(user_id.to_owned());
        }
        Ok(agreed.clone())
    }

    async fn settle_rematch(
        &self,
        game_id: &str,
        new_game_id: &str,
        _: Duration,
    ) -> Result<String, StoreError> {
        let mut m = self.inner.lock().await;
        let (_, settled) = m.rematches.entry(game_id.to_owned()).or_default();
        Ok(settled
            .get_or_insert_with(|| new_game_id.to_owned())
            .clone())
    }
}
