//! A game's event stream for one watcher: every stored event after the
//! client's sequence number, then live events from the bus, with any gap
//! (a lost pub/sub message, a slow watcher) filled from the authority's
//! stored events, so the watcher sees each event exactly once and in order.
//! Events come as what they changed; a client that asked for changes gets
//! them as they come, and the watcher of a client of whole games keeps the
//! game to apply them to.
//!
//! The stream also carries presence: when a player of the game starts
//! watching it, their gateway says so on the game's channel, and says
//! goodbye when the stream closes; each player's watcher answers a newcomer
//! once with its own presence. Every watcher tells its client when a player
//! comes or goes, and a player whose gateway fell silent
//! ([`crate::presence`]) is gone. Nothing is sent while nothing changes.
//! The clock does not stop for a player who is gone. At tables where the
//! computer stands in for a player who is away, the gateway also tells the
//! game's authority when a player comes and goes (their own watcher) and
//! when a player's gateway falls silent (any other watcher of the game).

use std::collections::HashMap;

use prost::Message as _;
use tonic::Status;
use tracing::Instrument as _;
use ttakji_platform::authorities::Authorities;
use ttakji_platform::bus::{self, Bus, Delivery, Subscription};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

use crate::presence::Liveness;
use crate::state::Gateway;
use crate::streams::{self, Sender, Stream};
use ttakji_proto::GameId;

/// Events buffered for a watcher that reads slowly (more go unsent until
/// it reads; the stream's own buffers hold the rest).
const WATCHER_BUFFER: usize = 8;

/// What a watcher knows of one player's connection.
#[derive(Debug)]
struct Seen {
    connected: bool,
    /// The gateway the player is connected through.
    gateway: String,
}

/// A watcher's two subscriptions on the game's channel.
#[derive(Debug)]
struct Live {
    events: Subscription<pb::GameEvent>,
    presence: Subscription<pb::Presence>,
}

/// Where a watcher's stream begins, and in what form it goes on.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    /// The last event the client has; 0 for all of them.
    pub after_seq: u64,
    /// Send each event's change instead of the whole game.
    pub changes: bool,
}

/// One watcher's view of a game.
#[derive(Debug)]
struct Watcher {
    /// What it uses of the gateway (not the whole of it: a watcher is kept
    /// for every open stream).
    authority: Authorities,
    bus: Bus,
    liveness: Liveness,
    game_id: String,
    viewer: String,
    /// The game's players (the computer has no user id and is not here).
    players: Vec<String>,
    /// The viewer's colour in the game; unspecified for an onlooker.
    color: i32,
    /// The last event sent to the client.
    last: u64,
    /// The game as of `last`, encoded (some 270 bytes on 9×9, where the
    /// decoded snapshot holds 1.6 KB), while the stream needs it to make
    /// whole games from the events' changes: always for a client that
    /// asked for whole games, and for one that asked for changes until it
    /// has been sent the game whole.
    base: Option<Box<[u8]>>,
    changes: bool,
    /// A client that asked for changes holds the game as of `last`: the
    /// events' own changes go to it as they are.
    synced: bool,
    seen: HashMap<String, Seen>,
    /// The authority is told who comes and goes (the computer stands in
    /// for a player who is away).
    stand_in: bool,
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

/// Starts watching `game_id` for `viewer`, after the event `from` names.
///
/// # Errors
/// UNAVAILABLE when the game's channel cannot be followed; the authority's
/// answer when the game cannot be read.
pub async fn watch(
    gateway: &Gateway,
    game_id: GameId,
    from: Start,
    viewer: String,
) -> Result<Stream<pb::WatchGameResponse>, Status> {
    let game_id = game_id.into_string();
    // Subscribe before reading the stored events, so nothing published in
    // between is missed.
    let unfollowable =
        |e: bus::BusError| Status::unavailable(format!("cannot follow game {game_id}: {e}"));
    let live = Live {
        events: gateway
            .bus
            .subscribe(&bus::game_events(&game_id))
            .await
            .map_err(unfollowable)?,
        presence: gateway
            .bus
            .subscribe(&bus::presence(&game_id))
            .await
            .map_err(unfollowable)?,
    };
    let game = gateway
        .authority
        .ask(
            internal::GetGameRequest {
                game_id: game_id.clone(),
                user_id: viewer.clone(),
                include_score_preview: false,
            },
            |mut c, r| async move { c.get_game(r).await },
        )
        .await?
        .into_inner()
        .game
        .unwrap_or_default();
    let stand_in = game.computer_stands_in && game.status == pb::GameStatus::Playing as i32;
    let color = crate::seen::color_of(&game, &viewer);
    let players: Vec<String> = [game.black, game.white]
        .into_iter()
        .flatten()
        .map(|p| p.user_id)
        .filter(|u| !u.is_empty())
        .collect();
    let mut watcher = Watcher {
        authority: gateway.authority.clone(),
        bus: gateway.bus.clone(),
        liveness: gateway.liveness.clone(),
        game_id,
        viewer,
        players,
        color,
        last: 0,
        base: None,
        changes: from.changes,
        synced: false,
        seen: HashMap::new(),
        stand_in,
    };
    let backlog = watcher.resume_after(from.after_seq).await?;
    let (tx, stream) = streams::channel(WATCHER_BUFFER);
    let counted = Watching::start();
    let shutdown = gateway.shutdown.clone();
    gateway.shutdown.spawn(async move {
        let _counted = counted;
        // Boxed, or the task would hold the follower twice: once as the
        // argument, once inside the wait.
        let follow = Box::pin(watcher.follow(&tx, live, backlog));
        streams::until_done(&tx, shutdown, follow).await;
        if watcher.viewer_plays() {
            Box::pin(watcher.announce(false)).await;
        }
    });
    Ok(stream)
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
        mut live: Live,
        backlog: Vec<pb::GameEvent>,
    ) {
        // Everything but waiting is boxed while it runs (a call to the
        // authority, a publish, a send): a watcher waiting for the next
        // event holds only its subscriptions (18 KB a watcher before).
        let mut gone = self.liveness.gone();
        if !Box::pin(self.forward(tx, backlog)).await {
            return;
        }
        if self.viewer_plays() {
            Box::pin(self.announce(true)).await;
        }
        loop {
            let delivery = tokio::select! {
                changed = gone.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let silent = gone.borrow_and_update().clone();
                    if !Box::pin(self.report_gone_players(tx, &silent)).await {
                        return;
                    }
                    continue;
                }
                presence = live.presence.recv() => {
                    match presence {
                        Delivery::Message { message, .. } => {
                            if !Box::pin(self.presence(tx, *message)).await {
                                return;
                            }
                        }
                        // Who is here is told again as players come and go.
                        Delivery::Gap => {}
                        Delivery::Closed => return,
                    }
                    continue;
                }
                d = live.events.recv() => d,
            };
            let span = tracing::info_span!("watch.event", game_id = %self.game_id);
            let events = match delivery {
                Delivery::Message {
                    message: event,
                    trace_context,
                } => {
                    // The delivery joins the publisher's trace: one move is
                    // one trace from the mover's call to the watcher.
                    ttakji_platform::telemetry::set_parent_from(&span, &trace_context);
                    if event.seq <= self.last {
                        continue;
                    } else if event.seq == self.last + 1 {
                        vec![*event]
                    } else {
                        // A gap: read what was missed from the store.
                        match Box::pin(self.catch_up(tx)).await {
                            Some(events) => events,
                            None => return,
                        }
                    }
                }
                Delivery::Gap => match Box::pin(self.catch_up(tx)).await {
                    Some(events) => events,
                    None => return,
                },
                Delivery::Closed => return,
            };
            if !Box::pin(self.forward(tx, events).instrument(span)).await {
                return;
            }
        }
    }

    /// Tells the game's authority whether a player is here, at tables
    /// where the computer stands in for a player who is away. Best effort:
    /// a player who acts is here whatever was said.
    async fn tell_authority(&self, user_id: &str, connected: bool) {
        if !self.stand_in {
            return;
        }
        let told = self
            .authority
            .ask(
                internal::ReportPresenceRequest {
                    game_id: self.game_id.clone(),
                    user_id: user_id.to_owned(),
                    connected,
                },
                |mut c, r| async move { c.report_presence(r).await },
            )
            .await;
        if let Err(status) = told {
            tracing::warn!(game_id = %self.game_id, %status, "presence not told to the authority");
        }
    }

    /// Says on the game's channel whether the viewer, a player, is here.
    async fn announce(&self, connected: bool) {
        self.tell_authority(&self.viewer, connected).await;
        let presence = pb::Presence {
            user_id: self.viewer.clone(),
            connected,
            gateway_id: self.liveness.id().to_owned(),
        };
        let _ = self
            .bus
            .publish(&bus::presence(&self.game_id), &presence)
            .await;
    }

    /// Tells the client when another player comes or goes; false once the
    /// client has gone.
    async fn presence(
        &mut self,
        tx: &Sender<pb::WatchGameResponse>,
        presence: pb::Presence,
    ) -> bool {
        if !self.players.contains(&presence.user_id) {
            return true;
        }
        if presence.user_id == self.viewer {
            // Another connection of the viewer's said goodbye (this one's
            // goodbye comes after it stops listening): the viewer is still
            // here through this one.
            if !presence.connected {
                self.announce(true).await;
            }
            return true;
        }
        let news = self
            .seen
            .get(&presence.user_id)
            .is_none_or(|s| s.connected != presence.connected);
        self.seen.insert(
            presence.user_id.clone(),
            Seen {
                connected: presence.connected,
                gateway: presence.gateway_id.clone(),
            },
        );
        if !news {
            return true;
        }
        // A player who has just come learns who is here already.
        if presence.connected && self.viewer_plays() {
            self.announce(true).await;
        }
        send_presence(
            tx,
            pb::Presence {
                gateway_id: String::new(),
                ..presence
            },
        )
        .await
    }

    /// Tells the client of players connected through a gateway that fell
    /// silent; false once the client has gone.
    async fn report_gone_players(
        &mut self,
        tx: &Sender<pb::WatchGameResponse>,
        silent: &std::collections::HashSet<String>,
    ) -> bool {
        let mut gone = Vec::new();
        let mut open = true;
        for (user_id, s) in &mut self.seen {
            if s.connected && silent.contains(&s.gateway) {
                s.connected = false;
                gone.push(user_id.clone());
                let presence = pb::Presence {
                    user_id: user_id.clone(),
                    connected: false,
                    gateway_id: String::new(),
                };
                open = open && send_presence(tx, presence).await;
            }
        }
        for user_id in gone {
            self.tell_authority(&user_id, false).await;
        }
        open
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
            let (snapshot, change) = match self.in_form(event.seq, event.snapshot, event.change) {
                Ok(form) => form,
                Err(status) => {
                    let _ = tx.send(Err(status)).await;
                    return false;
                }
            };
            let event = pb::GameEvent {
                snapshot,
                change,
                ..event
            };
            // The computer took the viewer's seat, but the viewer is here
            // (a report was lost, or crossed another connection's goodbye):
            // the seat is theirs again at once.
            let seated_here = matches!(
                &event.kind,
                Some(pb::game_event::Kind::StandInSeated(s))
                    if s.color == self.color && self.color != pb::Color::Unspecified as i32
            );
            let sent = tx
                .send(Ok(pb::WatchGameResponse {
                    event: Some(event),
                    presence: None,
                }))
                .await;
            if sent.is_err() || finished {
                return false;
            }
            if seated_here {
                self.tell_authority(&self.viewer, true).await;
            }
        }
        true
    }

    /// An event's game as the client asked for it. Stored and published
    /// events carry what they changed in the game the event before showed
    /// (the first of a game, its end, and the first after an authority
    /// took the game up, carry it whole). A client that asked for changes
    /// and holds the game gets the change as it is, with the server's time;
    /// otherwise the stream makes the game whole from its base.
    fn in_form(
        &mut self,
        seq: u64,
        snapshot: Option<pb::GameSnapshot>,
        change: Option<pb::GameChange>,
    ) -> Result<(Option<pb::GameSnapshot>, Option<pb::GameChange>), Status> {
        if snapshot.is_none() && self.changes && self.synced {
            let change = change.map(|mut change| {
                crate::seen::stamp(&mut change);
                change
            });
            return Ok((None, change));
        }
        let base = || {
            self.base
                .as_deref()
                .and_then(|b| pb::GameSnapshot::decode(b).ok())
        };
        let Some(whole) = self.game_after(seq, base, snapshot, change.as_ref())? else {
            return Ok((None, None));
        };
        if self.changes {
            self.synced = true;
            self.base = None;
        } else {
            self.base = Some(whole.encode_to_vec().into_boxed_slice());
        }
        Ok((crate::seen::seen_by(Some(whole), &self.viewer), None))
    }

    /// The game after event `seq`: whole as the event carries it, or its
    /// change applied to the game before it (`before`, asked for only
    /// then); `None` for an event that carries no game.
    fn game_after(
        &self,
        seq: u64,
        before: impl FnOnce() -> Option<pb::GameSnapshot>,
        snapshot: Option<pb::GameSnapshot>,
        change: Option<&pb::GameChange>,
    ) -> Result<Option<pb::GameSnapshot>, Status> {
        let change = match (snapshot, change) {
            (Some(whole), _) => return Ok(Some(whole)),
            (None, Some(change)) => change,
            (None, None) => return Ok(None),
        };
        let Some(mut game) = before() else {
            return Err(Status::data_loss(format!(
                "game {}: event {seq} changes a game this stream was never shown",
                self.game_id
            )));
        };
        ttakji_proto::changes::apply(&mut game, change)
            .map_err(|e| Status::data_loss(format!("game {}: event {seq}: {e}", self.game_id)))?;
        Ok(Some(game))
    }

    /// The stored events to send first, for a client that has those up to
    /// `after` (0 for none). One that has some is sent the next event
    /// whole: the events it has are read again to make the game it holds.
    /// An event is stored before anyone hears of it, so a client that
    /// names one past the last stored is refused (INVALID_ARGUMENT): its game
    /// could not be made.
    async fn resume_after(&mut self, after: u64) -> Result<Vec<pb::GameEvent>, Status> {
        let mut events = self.stored_after(0).await?;
        let stored = events.last().map_or(0, |e| e.seq);
        if after > stored {
            return Err(Status::invalid_argument(format!(
                "game {} has {stored} events; a stream cannot start after event {after}",
                self.game_id
            )));
        }
        let held = events.partition_point(|e| e.seq <= after);
        let mut game = None;
        for event in events.drain(..held) {
            let before = || game.take();
            if let Some(after) =
                self.game_after(event.seq, before, event.snapshot, event.change.as_ref())?
            {
                game = Some(after);
            }
        }
        self.base = game.map(|g| g.encode_to_vec().into_boxed_slice());
        self.last = after;
        Ok(events)
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
            .authority
            .ask(
                internal::ListEventsRequest {
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
