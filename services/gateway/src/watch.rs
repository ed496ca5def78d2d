//! A game's event stream for one watcher: every stored event after the
//! client's sequence number, then live events from the bus, with any gap
//! (a lost pub/sub message, a slow watcher) filled from the authority's
//! stored events, so the watcher sees each event exactly once and in order.
//!
//! The stream also carries presence: while a player of the game watches it,
//! their gateway says so on the game's channel every [`HEARTBEAT`], and says
//! goodbye when the stream closes. Every watcher tells its client when a
//! player comes or goes (silent for [`PRESENCE_TIMEOUT`]: gone). The clock
//! does not stop for a player who is gone.

use std::collections::HashMap;
use std::time::Duration;

use prost::Message as _;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use tracing::Instrument as _;
use ttakji_platform::bus::{self, Delivery, Subscription};
use ttakji_proto::v1 as pb;

use crate::state::Gateway;
use crate::streams::{self, Sender, Stream};
use crate::validate::GameId;

/// Events buffered for a watcher that reads slowly.
const WATCHER_BUFFER: usize = 64;
/// How often a watching player's presence is announced.
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// A player not heard from for this long counts as disconnected.
pub const PRESENCE_TIMEOUT: Duration = Duration::from_secs(5);

const PRESENCE_TYPE: &str = "ttakji.v1.Presence";
const EVENT_TYPE: &str = "ttakji.v1.GameEvent";

/// What a watcher knows of one player's connection.
#[derive(Debug)]
struct Seen {
    connected: bool,
    last: Instant,
}

/// One watcher's view of a game.
#[derive(Debug)]
struct Watcher {
    gateway: Gateway,
    game_id: String,
    channel: String,
    viewer: String,
    /// The game's players (the computer has no user id and is not here).
    players: Vec<String>,
    /// The last event sent to the client.
    last: u64,
    seen: HashMap<String, Seen>,
}

/// Counts the watchers in `ttakji_watchers` while it lives.
#[derive(Debug)]
struct Watching;

impl Watching {
    fn start() -> Watching {
        metrics::gauge!("ttakji_watchers").increment(1.0);
        Watching
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        metrics::gauge!("ttakji_watchers").decrement(1.0);
    }
}

/// Starts watching `game_id` after `after_seq` for `viewer`.
///
/// # Errors
/// UNAVAILABLE when the game's channel cannot be followed; the authority's
/// answer when the game cannot be read.
pub async fn watch(
    gateway: &Gateway,
    game_id: GameId,
    after_seq: u64,
    viewer: String,
) -> Result<Stream<pb::WatchGameResponse>, Status> {
    let game_id = game_id.into_string();
    let channel = bus::game_channel(&game_id);
    // Subscribe before reading the stored events, so nothing published in
    // between is missed.
    let live = gateway
        .bus
        .subscribe(&channel)
        .await
        .map_err(|e| Status::unavailable(format!("cannot follow game {game_id}: {e}")))?;
    let game = gateway
        .authority
        .ask(
            pb::LoadGameRequest {
                game_id: game_id.clone(),
                user_id: viewer.clone(),
                include_score_preview: false,
            },
            |mut c, r| async move { c.load_game(r).await },
        )
        .await?
        .into_inner()
        .game
        .unwrap_or_default();
    let players: Vec<String> = [game.black, game.white]
        .into_iter()
        .flatten()
        .map(|p| p.user_id)
        .filter(|u| !u.is_empty())
        .collect();
    let mut watcher = Watcher {
        gateway: gateway.clone(),
        game_id,
        channel,
        viewer,
        players,
        last: after_seq,
        seen: HashMap::new(),
    };
    let backlog = watcher.stored_after(after_seq).await?;
    let (tx, rx) = mpsc::channel(WATCHER_BUFFER);
    let counted = Watching::start();
    let shutdown = gateway.shutdown.clone();
    gateway.shutdown.spawn(async move {
        let _counted = counted;
        streams::until_done(&tx, shutdown, watcher.follow(&tx, live, backlog)).await;
        if watcher.viewer_plays() {
            watcher.announce(false).await;
        }
    });
    Ok(Box::pin(ReceiverStream::new(rx)))
}

impl Watcher {
    fn viewer_plays(&self) -> bool {
        self.players.contains(&self.viewer)
    }

    /// Sends the backlog, then live events, until the game ends or the
    /// stream cannot go on.
    async fn follow(
        &mut self,
        tx: &Sender<pb::WatchGameResponse>,
        mut live: Subscription,
        backlog: Vec<pb::GameEvent>,
    ) {
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        if !self.forward(tx, backlog).await {
            return;
        }
        loop {
            let delivery = tokio::select! {
                _ = heartbeat.tick() => {
                    if self.viewer_plays() {
                        self.announce(true).await;
                    }
                    if !self.report_silent_players(tx).await {
                        return;
                    }
                    continue;
                }
                d = live.recv() => d,
            };
            let span = tracing::info_span!("watch.event", game_id = %self.game_id);
            let events = match delivery {
                Delivery::Message(envelope) if envelope.r#type == PRESENCE_TYPE => {
                    if let Ok(presence) = pb::Presence::decode(envelope.payload.as_slice())
                        && !self.presence(tx, presence).await
                    {
                        return;
                    }
                    continue;
                }
                Delivery::Message(envelope) if envelope.r#type == EVENT_TYPE => {
                    // The delivery joins the publisher's trace: one move is
                    // one trace from the mover's call to the watcher.
                    ttakji_platform::telemetry::set_parent_from(&span, &envelope.trace_context);
                    match pb::GameEvent::decode(envelope.payload.as_slice()) {
                        Ok(event) if event.seq <= self.last => continue,
                        Ok(event) if event.seq == self.last + 1 => vec![event],
                        // A gap: read what was missed from the store.
                        Ok(_) | Err(_) => match self.catch_up(tx).await {
                            Some(events) => events,
                            None => return,
                        },
                    }
                }
                Delivery::Message(_) => continue,
                Delivery::Gap => match self.catch_up(tx).await {
                    Some(events) => events,
                    None => return,
                },
                Delivery::Closed => return,
            };
            if !self.forward(tx, events).instrument(span).await {
                return;
            }
        }
    }

    /// Says on the game's channel whether the viewer, a player, is here.
    async fn announce(&self, connected: bool) {
        let presence = pb::Presence {
            user_id: self.viewer.clone(),
            connected,
        };
        let _ = self
            .gateway
            .bus
            .publish(&self.channel, PRESENCE_TYPE, presence.encode_to_vec())
            .await;
    }

    /// Tells the client when another player comes or goes; false once the
    /// client has gone.
    async fn presence(
        &mut self,
        tx: &Sender<pb::WatchGameResponse>,
        presence: pb::Presence,
    ) -> bool {
        if !self.players.contains(&presence.user_id) || presence.user_id == self.viewer {
            return true;
        }
        let entry = self.seen.entry(presence.user_id.clone()).or_insert(Seen {
            connected: !presence.connected,
            last: Instant::now(),
        });
        entry.last = Instant::now();
        if entry.connected == presence.connected {
            return true;
        }
        entry.connected = presence.connected;
        send_presence(tx, presence).await
    }

    /// Tells the client of players gone silent; false once the client has gone.
    async fn report_silent_players(&mut self, tx: &Sender<pb::WatchGameResponse>) -> bool {
        for (user_id, s) in &mut self.seen {
            if s.connected && s.last.elapsed() > PRESENCE_TIMEOUT {
                s.connected = false;
                let presence = pb::Presence {
                    user_id: user_id.clone(),
                    connected: false,
                };
                if !send_presence(tx, presence).await {
                    return false;
                }
            }
        }
        true
    }

    /// Sends events in order; false once the game has ended (after sending
    /// the last event) or the watcher has gone.
    async fn forward(
        &mut self,
        tx: &Sender<pb::WatchGameResponse>,
        events: Vec<pb::GameEvent>,
    ) -> bool {
        for event in events {
            if event.seq <= self.last {
                continue;
            }
            self.last = event.seq;
            let finished = matches!(event.kind, Some(pb::game_event::Kind::Finished(_)));
            let sent = tx
                .send(Ok(pb::WatchGameResponse {
                    event: Some(event),
                    presence: None,
                }))
                .await;
            if sent.is_err() || finished {
                return false;
            }
        }
        true
    }

    /// The stored events after the last one sent; `None` (after telling
    /// the client why) when they cannot be read.
    async fn catch_up(&self, tx: &Sender<pb::WatchGameResponse>) -> Option<Vec<pb::GameEvent>> {
        match self.stored_after(self.last).await {
            Ok(events) => Some(events),
            Err(status) => {
                let _ = tx.send(Err(status)).await;
                None
            }
        }
    }

    async fn stored_after(&self, after: u64) -> Result<Vec<pb::GameEvent>, Status> {
        Ok(self
            .gateway
            .authority
            .ask(
                pb::ListEventsRequest {
                    game_id: self.game_id.clone(),
                    after_seq: after,
                    limit: 0,
                },
                |mut c, r| async move { c.list_events(r).await },
            )
            .await?
            .into_inner()
            .events)
    }
}

/// Sends a presence change; false once the client has gone.
async fn send_presence(tx: &Sender<pb::WatchGameResponse>, presence: pb::Presence) -> bool {
    tx.send(Ok(pb::WatchGameResponse {
        event: None,
        presence: Some(presence),
    }))
    .await
    .is_ok()
}
