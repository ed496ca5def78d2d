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
use std::pin::Pin;
use std::time::Duration;

use prost::Message as _;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use tracing::Instrument as _;
use ttakji_platform::bus::{self, Delivery};
use ttakji_proto::v1 as pb;

use crate::service::Gateway;

/// The stream type WatchGame returns.
pub type EventStream =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<pb::WatchGameResponse, Status>> + Send>>;

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

/// Starts watching `game_id` after `after_seq` for `viewer`.
pub async fn watch(
    gateway: Gateway,
    game_id: String,
    after_seq: u64,
    viewer: String,
) -> Result<EventStream, Status> {
    let channel = bus::game_channel(&game_id);
    // Subscribe before reading the stored events, so nothing published in
    // between is missed.
    let mut live = gateway
        .bus
        .subscribe(&channel)
        .await
        .map_err(|e| Status::unavailable(format!("cannot follow game {game_id}: {e}")))?;
    let game = gateway
        .authority
        .clone()
        .load_game(pb::LoadGameRequest {
            game_id: game_id.clone(),
            user_id: viewer.clone(),
            include_score_preview: false,
        })
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
    let viewer_plays = players.contains(&viewer);
    let backlog = stored_after(&gateway, &game_id, after_seq).await?;
    let (tx, rx) = mpsc::channel(WATCHER_BUFFER);
    metrics::gauge!("ttakji_watchers").increment(1.0);
    tokio::spawn(async move {
        let mut last = after_seq;
        let mut shutdown = gateway.shutdown.clone();
        let mut seen: HashMap<String, Seen> = HashMap::new();
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let announce = |connected: bool| {
            let presence = pb::Presence {
                user_id: viewer.clone(),
                connected,
            };
            let bus = gateway.bus.clone();
            let channel = channel.clone();
            async move {
                let _ = bus
                    .publish(&channel, PRESENCE_TYPE, presence.encode_to_vec())
                    .await;
            }
        };
        let mut open = forward(&tx, backlog, &mut last).await;
        while open {
            let delivery = tokio::select! {
                () = shutdown.wait() => break,
                () = tx.closed() => break,
                _ = heartbeat.tick() => {
                    if viewer_plays {
                        announce(true).await;
                    }
                    open = report_silent_players(&tx, &mut seen).await;
                    continue;
                }
                d = live.recv() => d,
            };
            let span = tracing::info_span!("watch.event", game_id = %game_id);
            let events = match delivery {
                Delivery::Message(envelope) if envelope.r#type == PRESENCE_TYPE => {
                    if let Ok(p) = pb::Presence::decode(envelope.payload.as_slice())
                        && players.contains(&p.user_id)
                        && p.user_id != viewer
                    {
                        let entry = seen.entry(p.user_id.clone()).or_insert(Seen {
                            connected: !p.connected,
                            last: Instant::now(),
                        });
                        entry.last = Instant::now();
                        if entry.connected != p.connected {
                            entry.connected = p.connected;
                            open = tx
                                .send(Ok(pb::WatchGameResponse {
                                    event: None,
                                    presence: Some(p),
                                }))
                                .await
                                .is_ok();
                        }
                    }
                    continue;
                }
                Delivery::Message(envelope) if envelope.r#type == EVENT_TYPE => {
                    // The delivery joins the publisher's trace: one move is
                    // one trace from the mover's call to the watcher.
                    ttakji_platform::telemetry::set_parent_from(&span, &envelope.trace_context);
                    match pb::GameEvent::decode(envelope.payload.as_slice()) {
                        Ok(event) if event.seq <= last => continue,
                        Ok(event) if event.seq == last + 1 => vec![event],
                        // A gap: read what was missed from the store.
                        Ok(_) | Err(_) => match stored_after(&gateway, &game_id, last).await {
                            Ok(events) => events,
                            Err(status) => {
                                let _ = tx.send(Err(status)).await;
                                break;
                            }
                        },
                    }
                }
                Delivery::Message(_) => continue,
                Delivery::Gap => match stored_after(&gateway, &game_id, last).await {
                    Ok(events) => events,
                    Err(status) => {
                        let _ = tx.send(Err(status)).await;
                        break;
                    }
                },
                Delivery::Closed => break,
            };
            open = forward(&tx, events, &mut last).instrument(span).await;
        }
        if viewer_plays {
            announce(false).await;
        }
        metrics::gauge!("ttakji_watchers").decrement(1.0);
    });
    Ok(Box::pin(ReceiverStream::new(rx)))
}

/// Tells the client of players gone silent; false once the client has gone.
async fn report_silent_players(
    tx: &mpsc::Sender<Result<pb::WatchGameResponse, Status>>,
    seen: &mut HashMap<String, Seen>,
) -> bool {
    for (user_id, s) in seen.iter_mut() {
        if s.connected && s.last.elapsed() > PRESENCE_TIMEOUT {
            s.connected = false;
            let presence = pb::Presence {
                user_id: user_id.clone(),
                connected: false,
            };
            if tx
                .send(Ok(pb::WatchGameResponse {
                    event: None,
                    presence: Some(presence),
                }))
                .await
                .is_err()
            {
                return false;
            }
        }
    }
    true
}

/// Sends events in order; false once the game has ended (after sending the
/// last event) or the watcher has gone.
async fn forward(
    tx: &mpsc::Sender<Result<pb::WatchGameResponse, Status>>,
    events: Vec<pb::GameEvent>,
    last: &mut u64,
) -> bool {
    for event in events {
        if event.seq <= *last {
            continue;
        }
        *last = event.seq;
        let finished = matches!(event.kind, Some(pb::game_event::Kind::Finished(_)));
        if tx
            .send(Ok(pb::WatchGameResponse {
                event: Some(event),
                presence: None,
            }))
            .await
            .is_err()
        {
            return false;
        }
        if finished {
            return false;
        }
    }
    true
}

async fn stored_after(
    gateway: &Gateway,
    game_id: &str,
    after: u64,
) -> Result<Vec<pb::GameEvent>, Status> {
    Ok(gateway
        .authority
        .clone()
        .list_events(pb::ListEventsRequest {
            game_id: game_id.to_owned(),
            after_seq: after,
            limit: 0,
        })
        .await?
        .into_inner()
        .events)
}
