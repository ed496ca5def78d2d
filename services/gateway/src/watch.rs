//! A game's event stream for one watcher: every stored event after the
//! client's sequence number, then live events from the bus, with any gap
//! (a lost pub/sub message, a slow watcher) filled from the authority's
//! stored events, so the watcher sees each event exactly once and in order.

use std::pin::Pin;

use prost::Message as _;
use tokio::sync::mpsc;
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

/// Starts watching `game_id` after `after_seq`.
pub async fn watch(
    gateway: Gateway,
    game_id: String,
    after_seq: u64,
) -> Result<EventStream, Status> {
    // Subscribe before reading the stored events, so nothing published in
    // between is missed.
    let mut live = gateway
        .bus
        .subscribe(&bus::game_channel(&game_id))
        .await
        .map_err(|e| Status::unavailable(format!("cannot follow game {game_id}: {e}")))?;
    let backlog = stored_after(&gateway, &game_id, after_seq).await?;
    let (tx, rx) = mpsc::channel(WATCHER_BUFFER);
    metrics::gauge!("ttakji_watchers").increment(1.0);
    tokio::spawn(async move {
        let mut last = after_seq;
        let mut shutdown = gateway.shutdown.clone();
        if !forward(&tx, backlog, &mut last).await {
            metrics::gauge!("ttakji_watchers").decrement(1.0);
            return;
        }
        loop {
            let delivery = tokio::select! {
                () = shutdown.wait() => break,
                () = tx.closed() => break,
                d = live.recv() => d,
            };
            let span = tracing::info_span!("watch.event", game_id = %game_id);
            let events = match delivery {
                Delivery::Message(envelope) => {
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
                Delivery::Gap => match stored_after(&gateway, &game_id, last).await {
                    Ok(events) => events,
                    Err(status) => {
                        let _ = tx.send(Err(status)).await;
                        break;
                    }
                },
                Delivery::Closed => break,
            };
            if !forward(&tx, events, &mut last).instrument(span).await {
                break;
            }
        }
        metrics::gauge!("ttakji_watchers").decrement(1.0);
    });
    Ok(Box::pin(ReceiverStream::new(rx)))
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
            .send(Ok(pb::WatchGameResponse { event: Some(event) }))
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
