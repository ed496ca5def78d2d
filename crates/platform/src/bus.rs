//! The event bus: publish a message on a named channel, subscribe to one.
//!
//! Two transports behind one type: an in-process bus (tokio broadcast
//! channels) for the single-process mode, and Redis pub/sub for a
//! deployment. Channels are named `ttakji.<area>.<key>`. Every message is a
//! protobuf [`BusEnvelope`] carrying the publisher's trace context.
//!
//! Delivery is at most once on both: a slow subscriber that falls behind, or
//! a Redis connection that drops, loses messages. What must not be lost is
//! stored, and consumers fill gaps from the store (game events carry a
//! sequence number for that).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use prost::Message as _;
use tokio::sync::{Mutex, broadcast};
use ttakji_proto::v1::BusEnvelope;

use crate::shutdown::Shutdown;

/// How many messages a subscriber may fall behind before it misses some
/// (and fills the gap from the store). Each channel holds this many slots
/// from the start, and there is a channel per watched game: a game sees a
/// few events a second at most.
const SUBSCRIBER_BUFFER: usize = 32;

/// The channel of one game's events.
#[must_use]
pub fn game_channel(game_id: &str) -> String {
    format!("ttakji.game.{game_id}")
}

/// The channel of one player's own events: queue tickets, challenges,
/// rematches.
#[must_use]
pub fn user_channel(user_id: &str) -> String {
    format!("ttakji.user.{user_id}")
}

/// The channel every finished game is announced on.
pub const GAMES_FINISHED: &str = "ttakji.games.finished";

/// Why a bus operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// Redis has been away so long that the messages waiting for it fill
    /// the queue: this one is dropped (subscribers fill gaps from stores).
    #[error("the bus is away and its queue is full; the message was dropped")]
    Full,
}

/// Messages waiting to be published while Redis is away.
const PUBLISH_QUEUE: usize = 16_384;

/// The most messages sent to Redis in one round trip.
const PUBLISH_BATCH: usize = 256;

/// The envelope type that tells subscribers they may have missed messages
/// (the subscriber connection came back): [`Delivery::Gap`].
const GAP_TYPE: &str = "ttakji.bus.gap";

/// A handle to the bus; cheap to clone.
#[derive(Clone)]
pub struct Bus {
    inner: Arc<Transport>,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.inner {
            Transport::Local(_) => f.write_str("Bus(in-process)"),
            Transport::Redis { .. } => f.write_str("Bus(redis)"),
        }
    }
}

type Channels = Mutex<HashMap<String, broadcast::Sender<Arc<BusEnvelope>>>>;

enum Transport {
    Local(Channels),
    Redis {
        /// Messages for the publisher task, in order: a publish never
        /// waits for Redis.
        outbox: tokio::sync::mpsc::Sender<(String, Vec<u8>)>,
        subscriptions: Arc<RedisSubscriptions>,
    },
}

/// The Redis subscriber's shared state: local fan-out per channel and the
/// sink of the current pub/sub connection (none while reconnecting).
struct RedisSubscriptions {
    channels: Channels,
    sink: Mutex<Option<redis::aio::PubSubSink>>,
}

/// A subscription to one channel.
#[derive(Debug)]
pub struct Subscription {
    receiver: broadcast::Receiver<Arc<BusEnvelope>>,
}

/// What a subscriber receives.
#[derive(Debug)]
pub enum Delivery {
    Message(Arc<BusEnvelope>),
    /// Messages were lost (the subscriber fell behind): fill the gap from
    /// the store.
    Gap,
    /// The bus shut down.
    Closed,
}

impl Subscription {
    /// The next message on the channel.
    pub async fn recv(&mut self) -> Delivery {
        match self.receiver.recv().await {
            Ok(m) if m.r#type == GAP_TYPE => Delivery::Gap,
            Ok(m) => Delivery::Message(m),
            Err(broadcast::error::RecvError::Lagged(_)) => Delivery::Gap,
            Err(broadcast::error::RecvError::Closed) => Delivery::Closed,
        }
    }
}

impl Bus {
    /// The in-process bus.
    #[must_use]
    pub fn in_process() -> Bus {
        Bus {
            inner: Arc::new(Transport::Local(Mutex::new(HashMap::new()))),
        }
    }

    /// A bus over Redis pub/sub at `url`. A background task keeps the
    /// subscriber connection up, reconnecting and subscribing again after a
    /// Redis restart (then every subscriber is told of a possible gap),
    /// until `shutdown`; another publishes, so a publish returns at once
    /// and what is published while Redis is away goes out, in order, when
    /// it is back.
    ///
    /// # Errors
    /// When the URL is invalid or Redis cannot be reached at start.
    pub async fn redis(url: &str, shutdown: Shutdown) -> Result<Bus, BusError> {
        let target = crate::redis_target::RedisTarget::parse(url)?;
        let publisher = target.connection().await?;
        let (outbox, queued) = tokio::sync::mpsc::channel(PUBLISH_QUEUE);
        shutdown
            .clone()
            .spawn(run_redis_publisher(publisher, queued, shutdown.clone()));
        let subscriptions = Arc::new(RedisSubscriptions {
            channels: Mutex::new(HashMap::new()),
            sink: Mutex::new(None),
        });
        // Connect once now so a bad address fails at start, not later.
        let first = target.client().await?.get_async_pubsub().await?;
        shutdown.clone().spawn(run_redis_subscriber(
            target,
            first,
            Arc::clone(&subscriptions),
            shutdown,
        ));
        Ok(Bus {
            inner: Arc::new(Transport::Redis {
                outbox,
                subscriptions,
            }),
        })
    }

    /// Publishes `payload` (an encoded message of type `type_name`) on
    /// `channel`, with the current span's trace context.
    ///
    /// # Errors
    /// When Redis refuses the publish.
    #[tracing::instrument(skip(self, payload), fields(bytes = payload.len()))]
    pub async fn publish(
        &self,
        channel: &str,
        type_name: &str,
        payload: Vec<u8>,
    ) -> Result<(), BusError> {
        let envelope = BusEnvelope {
            trace_context: crate::telemetry::current_context_headers(),
            r#type: type_name.to_owned(),
            payload,
        };
        match &*self.inner {
            Transport::Local(channels) => {
                if let Some(sender) = channels.lock().await.get(channel) {
                    let _ = sender.send(Arc::new(envelope));
                }
                Ok(())
            }
            Transport::Redis { outbox, .. } => outbox
                .try_send((channel.to_owned(), envelope.encode_to_vec()))
                .map_err(|_| BusError::Full),
        }
    }

    /// Subscribes to `channel`. Messages published after this returns are
    /// delivered (subject to the at-most-once caveat above).
    ///
    /// # Errors
    /// When Redis refuses the subscription.
    #[tracing::instrument(skip(self))]
    pub async fn subscribe(&self, channel: &str) -> Result<Subscription, BusError> {
        match &*self.inner {
            Transport::Local(channels) => {
                let mut channels = channels.lock().await;
                channels.retain(|_, s| s.receiver_count() > 0);
                let sender = channels
                    .entry(channel.to_owned())
                    .or_insert_with(|| broadcast::channel(SUBSCRIBER_BUFFER).0);
                Ok(Subscription {
                    receiver: sender.subscribe(),
                })
            }
            Transport::Redis { subscriptions, .. } => subscriptions.subscribe(channel).await,
        }
    }
}

impl RedisSubscriptions {
    async fn subscribe(&self, channel: &str) -> Result<Subscription, BusError> {
        let mut channels = self.channels.lock().await;
        let mut sink = self.sink.lock().await;
        let idle: Vec<String> = channels
            .iter()
            .filter(|(name, s)| s.receiver_count() == 0 && name.as_str() != channel)
            .map(|(name, _)| name.clone())
            .collect();
        for name in &idle {
            channels.remove(name);
        }
        if let Some(sink) = sink.as_mut()
            && !idle.is_empty()
        {
            let _ = sink.unsubscribe(&idle).await;
        }
        if let Some(sender) = channels.get(channel) {
            return Ok(Subscription {
                receiver: sender.subscribe(),
            });
        }
        let sender = broadcast::channel(SUBSCRIBER_BUFFER).0;
        let receiver = sender.subscribe();
        if let Some(sink) = sink.as_mut() {
            sink.subscribe(channel).await?;
        }
        // Without a connection the channel is subscribed when it comes back.
        channels.insert(channel.to_owned(), sender);
        Ok(Subscription { receiver })
    }
}

/// Publishes what is queued, in order, a batch per round trip; while Redis
/// is away it retries the batch, and the queue takes what comes meanwhile.
/// On shutdown it sends what is left if Redis answers within a second.
async fn run_redis_publisher(
    mut conn: crate::redis_target::SharedConnection,
    mut queued: tokio::sync::mpsc::Receiver<(String, Vec<u8>)>,
    mut shutdown: Shutdown,
) {
    let mut batch = Vec::with_capacity(PUBLISH_BATCH);
    loop {
        let stopping = tokio::select! {
            n = queued.recv_many(&mut batch, PUBLISH_BATCH) => {
                if n == 0 {
                    return;
                }
                false
            }
            () = shutdown.wait() => true,
        };
        if stopping {
            while let Ok(message) = queued.try_recv() {
                batch.push(message);
            }
            let mut pipe = redis::pipe();
            for (channel, payload) in &batch {
                pipe.cmd("PUBLISH").arg(channel).arg(payload).ignore();
            }
            let _ = tokio::time::timeout(Duration::from_secs(1), pipe.query_async::<()>(&mut conn))
                .await;
            return;
        }
        let mut backoff = Duration::from_millis(50);
        loop {
            let mut pipe = redis::pipe();
            for (channel, payload) in &batch {
                pipe.cmd("PUBLISH").arg(channel).arg(payload).ignore();
            }
            match pipe.query_async::<()>(&mut conn).await {
                Ok(()) => break,
                Err(e) => {
                    tracing::warn!(error = %e, waiting = batch.len(), "bus: cannot publish; retrying");
                    tokio::select! {
                        () = shutdown.wait() => return,
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                }
            }
        }
        batch.clear();
    }
}

async fn run_redis_subscriber(
    target: crate::redis_target::RedisTarget,
    first: redis::aio::PubSub,
    subscriptions: Arc<RedisSubscriptions>,
    mut shutdown: Shutdown,
) {
    let mut next = Some(first);
    let mut backoff = Duration::from_millis(100);
    loop {
        let pubsub = match next.take() {
            Some(p) => p,
            None => match async { target.client().await?.get_async_pubsub().await }.await {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(error = %e, "bus: cannot reach redis; retrying");
                    tokio::select! {
                        () = shutdown.wait() => return,
                        () = tokio::time::sleep(backoff) => {}
                    }
                    // At most half a second after Redis is back.
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                    continue;
                }
            },
        };
        backoff = Duration::from_millis(100);
        let (mut sink, mut stream) = pubsub.split();
        {
            let channels = subscriptions.channels.lock().await;
            let names: Vec<&String> = channels.keys().collect();
            if !names.is_empty()
                && let Err(e) = sink.subscribe(&names).await
            {
                tracing::warn!(error = %e, "bus: resubscribing failed; reconnecting");
                continue;
            }
            *subscriptions.sink.lock().await = Some(sink);
            if !names.is_empty() {
                // Messages published while we were away are gone: say so,
                // and every subscriber fills the gap from its store.
                tracing::info!(
                    channels = names.len(),
                    "bus: resubscribed after reconnecting"
                );
                let gap = Arc::new(BusEnvelope {
                    r#type: GAP_TYPE.to_owned(),
                    ..BusEnvelope::default()
                });
                for sender in channels.values() {
                    let _ = sender.send(Arc::clone(&gap));
                }
            }
        }
        loop {
            let msg = tokio::select! {
                () = shutdown.wait() => return,
                msg = stream.next() => msg,
            };
            let Some(msg) = msg else { break };
            let Ok(envelope) = BusEnvelope::decode(msg.get_payload_bytes()) else {
                tracing::warn!(
                    channel = msg.get_channel_name(),
                    "bus: undecodable message dropped"
                );
                continue;
            };
            let channels = subscriptions.channels.lock().await;
            if let Some(sender) = channels.get(msg.get_channel_name()) {
                let _ = sender.send(Arc::new(envelope));
            }
        }
        *subscriptions.sink.lock().await = None;
        tracing::warn!("bus: redis subscriber connection lost; reconnecting");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_in_process_subscriber_receives_what_is_published_after_it_subscribed() {
        let bus = Bus::in_process();
        bus.publish("ttakji.game.g1", "t", b"before".to_vec())
            .await
            .expect("publish");
        let mut sub = bus.subscribe("ttakji.game.g1").await.expect("subscribe");
        bus.publish("ttakji.game.g2", "t", b"elsewhere".to_vec())
            .await
            .expect("publish");
        bus.publish("ttakji.game.g1", "t", b"after".to_vec())
            .await
            .expect("publish");
        match sub.recv().await {
            Delivery::Message(m) => assert_eq!(m.payload, b"after"),
            other => panic!("expected a message, got {other:?}"),
        }
    }
}
