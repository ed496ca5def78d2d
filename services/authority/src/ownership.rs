//! Which games this authority instance owns.
//!
//! Games hash into [`SHARDS`] shards
//! ([`ttakji_platform::authorities::shard_of`]). With one instance (no
//! Redis) it owns every shard. With several, each shard is leased in Redis
//! ([`leases`]) to one instance at a time: the instance renews all its
//! leases in one round trip, so the work does not grow with the number of
//! live games, and takes free shards up to its fair share of the live
//! instances. The lease only decides who should serve a game; the
//! guarantee of one writer is the epoch fence in the store
//! ([`crate::store::take_over`]).
//!
//! An instance serves a shard while its last renewal is younger than the
//! lease minus a margin, measured on its own monotonic clock: a process
//! paused past its lease (SIGSTOP, a long GC-like stall of the machine)
//! stops serving the moment it runs again, before it learns from Redis
//! that the shard has gone.

pub mod leases;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ttakji_platform::authorities::{SHARDS, shard_of};
use ttakji_proto::GameId;

pub use leases::{LeaseConfig, Leases};

/// Where a game is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Here. `give_back_ms` is the time the game's shard had no owner
    /// before this instance took it: the player to move gets it back when
    /// the game is taken over from the store.
    Here { give_back_ms: i64 },
    /// At the instance with this URL.
    Elsewhere(String),
    /// Nowhere right now: its owner died or is handing it over, and no
    /// instance has taken it yet.
    Nobody,
}

/// One shard as this instance sees it.
#[derive(Debug, Clone, Default)]
struct Shard {
    /// Held here, and served until this instant.
    held_until: Option<Instant>,
    /// Time given back to games taken over with this shard, until they
    /// are all loaded.
    give_back_ms: i64,
    /// The URL of the instance that holds it, when another does.
    owner: Option<String>,
}

/// What this instance owns; cheap to clone.
#[derive(Debug, Clone)]
pub struct Ownership {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The URL other services reach this instance at.
    me: String,
    /// Whether shards are shared with other instances through leases.
    shared: bool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    shards: Vec<Shard>,
    draining: bool,
}

impl Ownership {
    /// The only instance: it owns every shard, always.
    #[must_use]
    pub fn single(me: String) -> Ownership {
        Ownership::new(me, false)
    }

    /// One instance of several, owning the shards its [`crate::keeper`] holds.
    #[must_use]
    pub fn shared(me: String) -> Ownership {
        Ownership::new(me, true)
    }

    fn new(me: String, shared: bool) -> Ownership {
        Ownership {
            inner: Arc::new(Inner {
                me,
                shared,
                state: Mutex::new(State {
                    shards: vec![Shard::default(); SHARDS as usize],
                    draining: false,
                }),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// This instance's URL, as other services reach it.
    #[must_use]
    pub fn me(&self) -> &str {
        &self.inner.me
    }

    /// Where the game `game_id` is served.
    #[must_use]
    pub fn placement(&self, game_id: &str) -> Placement {
        self.placement_of(shard_of(game_id), Instant::now())
    }

    fn placement_of(&self, shard: u32, now: Instant) -> Placement {
        let state = self.state();
        if state.draining {
            return Placement::Nobody;
        }
        if !self.inner.shared {
            return Placement::Here { give_back_ms: 0 };
        }
        let shard = &state.shards[shard as usize];
        match (&shard.held_until, &shard.owner) {
            (Some(until), _) if *until > now => Placement::Here {
                give_back_ms: shard.give_back_ms,
            },
            (_, Some(owner)) => Placement::Elsewhere(owner.clone()),
            _ => Placement::Nobody,
        }
    }

    /// A new game id whose shard is served here, for a game whose creator
    /// left the choice to the authority.
    #[must_use]
    pub fn new_local_id(&self) -> Option<GameId> {
        let now = Instant::now();
        (0..SHARDS * 16)
            .map(|_| uuid::Uuid::new_v4().simple().to_string())
            .find(|id| matches!(self.placement_of(shard_of(id), now), Placement::Here { .. }))
            .and_then(|id| GameId::from_wire(id).ok())
    }

    /// The shards held here (whether or not still served).
    #[must_use]
    pub fn held(&self) -> Vec<u32> {
        self.held_where(|_| true)
    }

    /// The shards held here and still within their serving window at
    /// `now` (served, or waiting to be).
    #[must_use]
    pub fn within_window(&self, now: Instant) -> Vec<u32> {
        self.held_where(|until| until > now)
    }

    /// The shards held here whose serving window's end `keep` accepts.
    fn held_where(&self, keep: impl Fn(Instant) -> bool) -> Vec<u32> {
        self.state()
            .shards
            .iter()
            .zip(0..)
            .filter_map(|(s, i)| s.held_until.filter(|until| keep(*until)).map(|_| i))
            .collect()
    }

    /// Records a renewal sent at `sent` for every shard in `renewed`.
    pub(crate) fn renewed(&self, renewed: &[u32], sent: Instant, ttl: Duration) {
        let until = sent + serving_window(ttl);
        let mut state = self.state();
        for &s in renewed {
            if let Some(held) = state.shards[s as usize].held_until.as_mut() {
                *held = until;
            }
        }
    }

    /// Acquires `shard` here, renewed at `sent`, giving back `give_back_ms`.
    pub(crate) fn acquired(&self, shard: u32, sent: Instant, ttl: Duration, give_back_ms: i64) {
        let mut state = self.state();
        let s = &mut state.shards[shard as usize];
        s.held_until = Some(sent + serving_window(ttl));
        s.give_back_ms = give_back_ms;
        s.owner = None;
    }

    /// Every game of `shard` is loaded: games loaded later get no time back.
    pub(crate) fn loaded(&self, shard: u32) {
        self.state().shards[shard as usize].give_back_ms = 0;
    }

    /// `shard` is no longer served here.
    pub(crate) fn dropped(&self, shard: u32) {
        let mut state = self.state();
        let s = &mut state.shards[shard as usize];
        s.held_until = None;
        s.give_back_ms = 0;
    }

    /// The owners of the shards held elsewhere, as last read.
    pub(crate) fn saw_owners(&self, owners: &[Option<String>]) {
        let mut state = self.state();
        for (shard, owner) in state.shards.iter_mut().zip(owners) {
            shard.owner = owner.clone().filter(|o| *o != self.inner.me);
        }
    }

    /// Stops serving every shard: the instance is shutting down.
    pub(crate) fn drain(&self) {
        self.state().draining = true;
    }
}

/// How long after a renewal is sent the shard is served: the lease less a
/// tenth, for clocks that run at slightly different rates.
fn serving_window(ttl: Duration) -> Duration {
    ttl - ttl / 10
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(3);

    fn shared() -> Ownership {
        Ownership::shared("http://me".into())
    }

    #[test]
    fn a_single_instance_serves_every_game_until_it_drains() {
        let one = Ownership::single("http://me".into());
        assert_eq!(one.placement("abc"), Placement::Here { give_back_ms: 0 });
        one.drain();
        assert_eq!(one.placement("abc"), Placement::Nobody);
    }

    #[test]
    fn a_shard_is_served_while_its_lease_is_young_and_then_not() {
        let o = shared();
        let now = Instant::now();
        assert_eq!(o.placement_of(5, now), Placement::Nobody);
        o.acquired(5, now, TTL, 1_500);
        assert_eq!(
            o.placement_of(5, now),
            Placement::Here {
                give_back_ms: 1_500
            }
        );
        o.loaded(5);
        assert_eq!(o.placement_of(5, now), Placement::Here { give_back_ms: 0 });
        // Past the serving window (a paused process waking up), it is no
        // longer served even before Redis says it has gone.
        assert_eq!(o.placement_of(5, now + TTL), Placement::Nobody);
        o.renewed(&[5], now + TTL, TTL);
        assert!(matches!(
            o.placement_of(5, now + TTL),
            Placement::Here { .. }
        ));
    }

    #[test]
    fn a_shard_held_elsewhere_names_its_owner_and_never_this_instance() {
        let o = shared();
        let mut owners = vec![None; SHARDS as usize];
        owners[1] = Some("http://other".to_owned());
        owners[2] = Some("http://me".to_owned());
        o.saw_owners(&owners);
        let now = Instant::now();
        assert_eq!(
            o.placement_of(1, now),
            Placement::Elsewhere("http://other".into())
        );
        assert_eq!(o.placement_of(2, now), Placement::Nobody);
        o.acquired(1, now, TTL, 0);
        assert_eq!(o.placement_of(1, now), Placement::Here { give_back_ms: 0 });
        o.dropped(1);
        assert_eq!(o.placement_of(1, now), Placement::Nobody);
    }

    #[test]
    fn new_ids_land_in_shards_served_here() {
        let o = shared();
        assert_eq!(o.new_local_id(), None);
        let now = Instant::now();
        o.acquired(7, now, TTL, 0);
        let id = o.new_local_id().expect("an id in shard 7");
        assert_eq!(shard_of(&id), 7);
        assert_eq!(o.held(), [7]);
    }
}
