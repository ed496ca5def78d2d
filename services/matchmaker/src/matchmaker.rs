//! The matchmaker's shared state, and what both the gRPC service and the
//! pairing rounds do with it: make a game at the authority, tell a player,
//! show a ticket as its player sees it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use tonic::Status;
use ttakji_platform::authorities::Authorities;
use ttakji_platform::bus::{self, Bus};
use ttakji_platform::now_unix_ms;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

use crate::config::Config;
use crate::tickets::{ChallengeRecord, Place, State, StoreError, Ticket, Tickets};
use crate::wire;

/// The matchmaker's handlers and pairing loop, over one store.
#[derive(Debug, Clone)]
pub struct Matchmaker {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    tickets: Tickets,
    bus: Bus,
    authority: Authorities,
    /// This instance's name in leases.
    instance: String,
    /// When the store last came back after this instance could not reach
    /// it (0: never lost). Players' streams could not touch their tickets
    /// meanwhile, so the grace counts from here too.
    store_back_ms: AtomicI64,
}

/// A new random id: of a game, a ticket, or this instance.
pub(crate) fn random_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Whether the first seat of a game is Black, drawn from its random id:
/// random, and the same every time the same game is made.
pub(crate) fn first_is_black(game_id: &str) -> bool {
    game_id.bytes().last().is_some_and(|b| b % 2 == 0)
}

impl Matchmaker {
    #[must_use]
    pub fn new(config: Config, tickets: Tickets, bus: Bus, authority: Authorities) -> Matchmaker {
        Matchmaker {
            inner: Arc::new(Inner {
                config,
                tickets,
                bus,
                authority,
                instance: random_id(),
                store_back_ms: AtomicI64::new(0),
            }),
        }
    }

    /// When the store last came back after an outage (0: never lost).
    pub(crate) fn store_back_ms(&self) -> i64 {
        self.inner.store_back_ms.load(Ordering::Relaxed)
    }

    /// Notes that the store answers again from `now_ms`.
    pub(crate) fn store_is_back(&self, now_ms: i64) {
        self.inner.store_back_ms.store(now_ms, Ordering::Relaxed);
    }

    pub(crate) fn config(&self) -> &Config {
        &self.inner.config
    }

    pub(crate) fn tickets(&self) -> &Tickets {
        &self.inner.tickets
    }

    /// The authority instances, each game's call sent to its owner.
    pub(crate) fn authority(&self) -> &Authorities {
        &self.inner.authority
    }

    /// This instance's name in pairing leases.
    pub(crate) fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// A ticket as its player sees it now, with its place while it waits.
    pub(crate) async fn ticket_pb(&self, t: &Ticket) -> Result<pb::Ticket, StoreError> {
        let place = if t.state == State::Waiting {
            self.inner.tickets.place(t).await?
        } else {
            Place::default()
        };
        Ok(wire::ticket_pb(t, place, now_unix_ms()))
    }

    pub(crate) fn challenge_pb(&self, c: &ChallengeRecord) -> pb::Challenge {
        wire::challenge_pb(c, &self.inner.config.link_base)
    }

    /// Tells a player, on their channel. A player not told still learns
    /// of it: their stream polls.
    pub(crate) async fn notify<M: prost::Name>(&self, topic: &bus::Topic<M>, message: &M) {
        if let Err(e) = self.inner.bus.publish(topic, message).await {
            tracing::warn!(error = %e, "player not notified; their stream polls");
        }
    }

    /// Makes a game at the authority (once per game id, however often asked).
    pub(crate) async fn create_game(
        &self,
        request: internal::CreateGameRequest,
    ) -> Result<pb::GameSnapshot, Status> {
        self.authority()
            .ask(request, |mut c, r| async move { c.create_game(r).await })
            .await?
            .into_inner()
            .game
            .ok_or_else(|| Status::internal("the authority sent no game"))
    }
}
