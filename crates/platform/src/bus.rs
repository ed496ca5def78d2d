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
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1::{self as pb, BusEnvelope};

use crate::shutdown::Shutdown;

/// How many messages a subscriber may fall behind before it misses some
/// (and fills the gap from the store). Each channel holds this many slots
/// from the start, and there is a channel per watched game: a game sees a
/// few events a second at most.
const SUBSCRIBER_BUFFER: usize = 32;

/// One kind of message on one channel: where it travels and, from its
/// type, the name it travels under. Every publish and subscription goes
/// through a topic, so no message type is named by a string, and a
/// subscriber receives its own message type, decoded. Several topics may
/// share a channel (a game's events and its presence).
pub struct Topic<M> {
    channel: String,
    message: std::marker::PhantomData<fn() -> M>,
}

impl<M> Clone for Topic<M> {
    fn clone(&self) -> Self {
        Topic {
            channel: self.channel.clone(),
            message: std::marker::PhantomData,
        }
    }
}

impl<M: prost::Name> std::fmt::Debug for Topic<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Topic({} on {})", M::NAME, self.channel)
    }
}

impl<M: prost::Name> Topic<M> {
    fn on(channel: String) -> Topic<M> {
        Topic {
            channel,
            message: std::marker::PhantomData,
        }
    }

    /// The channel it travels on.
    #[must_use]
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// Whether an envelope's type names `M` (`ttakji.v1.GameEvent`).
    fn carries(type_name: &str) -> bool {
        type_name
            .strip_prefix(M::PACKAGE)
            .and_then(|rest| rest.strip_prefix('.'))
            == Some(M::NAME)
    }
}

/// The channel of one game: its events and who is watching it.
fn game_channel(game_id: &str) -> String {
    format!("ttakji.game.{game_id}")
}

/// The channel of one player's own news from the matchmaker.
fn user_channel(user_id: &str) -> String {
    format!("ttakji.user.{user_id}")
}

/// One game's events, on `ttakji.game.<game_id>`.
#[must_use]
pub fn game_events(game_id: &str) -> Topic<pb::GameEvent> {
    Topic::on(game_channel(game_id))
}

/// Who is watching one game, on the game's channel beside its events.
#[must_use]
pub fn presence(game_id: &str) -> Topic<pb::Presence> {
    Topic::on(game_channel(game_id))
}

/// A player's queue tickets, on their channel `ttakji.user.<user_id>`.
#[must_use]
pub fn tickets(user_id: &str) -> Topic<pb::Ticket> {
    Topic::on(user_channel(user_id))
}

/// A player's friend challenges, on their channel.
#[must_use]
pub fn challenges(user_id: &str) -> Topic<pb::Challenge> {
    Topic::on(user_channel(user_id))
}

/// Answers to a player's rematch offers, on their channel.
#[must_use]
pub fn rematches(user_id: &str) -> Topic<internal::RematchResponse> {
    Topic::on(user_channel(user_id))
}

/// Every game that ends, announced once on `ttakji.games.finished`.
#[must_use]
pub fn games_finished() -> Topic<pb::GameEvent> {
    Topic::on("ttakji.games.finished".to_owned())
}

/// Shards an authority has just taken, on `ttakji.authorities`.
#[must_use]
pub fn shards_taken() -> Topic<internal::ShardsTaken> {
    Topic::on("ttakji.authorities".to_owned())
}

/// The gateways' heartbeats, on `ttakji.gateways`.
#[must_use]
pub fn gateways() -> Topic<pb::GatewayHeartbeat> {
    Topic::on("ttakji.gateways".to_owned())
}

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

type Channels = Mutex<ChannelMap>;

/// The channels subscribed in this process, each with the sender its
/// subscribers listen to. Channels nobody listens to any more are swept
/// out only once the map has doubled since the last sweep, so a
/// subscription costs a constant amount on average instead of a look at
/// every channel (with 100,000 games watched, each new watcher looked at
/// 200,000 channels).
#[derive(Default)]
struct ChannelMap {
    senders: HashMap<String, broadcast::Sender<Arc<BusEnvelope>>>,
    /// How many channels the last sweep left.
    after_sweep: usize,
}

/// Channels below this many are never swept.
const SWEEP_FROM: usize = 64;

impl ChannelMap {
    /// Takes out the channels nobody listens to, but `keep`, when the map
    /// has doubled since the last sweep; returns their names.
    fn sweep(&mut self, keep: &str) -> Vec<String> {
        if self.senders.len() < SWEEP_FROM.max(2 * self.after_sweep) {
            return Vec::new();
        }
        let idle: Vec<String> = self
            .senders
            .iter()
            .filter(|(name, s)| s.receiver_count() == 0 && name.as_str() != keep)
            .map(|(name, _)| name.clone())
            .collect();
        for name in &idle {
            self.senders.remove(name);
        }
        self.after_sweep = self.senders.len();
        idle
    }
}

impl std::ops::Deref for ChannelMap {
    type Target = HashMap<String, broadcast::Sender<Arc<BusEnvelope>>>;

    fn deref(&self) -> &Self::Target {
        &self.senders
    }
}

impl std::ops::DerefMut for ChannelMap {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.senders
    }
}

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

/// A subscription to one topic.
#[derive(Debug)]
pub struct Subscription<M> {
    receiver: broadcast::Receiver<Arc<BusEnvelope>>,
    message: std::marker::PhantomData<fn() -> M>,
}

/// What a subscriber receives.
#[derive(Debug)]
pub enum Delivery<M> {
    /// A message, with the trace context of the span that published it.
    /// Boxed: a subscriber waits with room for one delivery, and a game's
    /// event is a kilobyte.
    Message {
        message: Box<M>,
        trace_context: HashMap<String, String>,
    },
    /// Messages were lost (the subscriber fell behind, or the connection
    /// to Redis came back): fill the gap from the store.
    Gap,
    /// The bus shut down.
    Closed,
}

impl<M: prost::Name + Default> Subscription<M> {
    fn new(receiver: broadcast::Receiver<Arc<BusEnvelope>>) -> Subscription<M> {
        Subscription {
            receiver,
            message: std::marker::PhantomData,
        }
    }

    /// The next message of the topic. Other topics' messages on the same
    /// channel are passed over, and one that does not decode is logged
    /// and passed over.
    pub async fn recv(&mut self) -> Delivery<M> {
        loop {
            let envelope = match self.receiver.recv().await {
                Ok(envelope) => envelope,
                Err(broadcast::error::RecvError::Lagged(_)) => return Delivery::Gap,
                Err(broadcast::error::RecvError::Closed) => return Delivery::Closed,
            };
            if envelope.r#type == GAP_TYPE {
                return Delivery::Gap;
            }
            if !Topic::<M>::carries(&envelope.r#type) {
                continue;
            }
            match M::decode(envelope.payload.as_slice()) {
                Ok(message) => {
                    return Delivery::Message {
                        message: Box::new(message),
                        trace_context: envelope.trace_context.clone(),
                    };
                }
                Err(e) => {
                    tracing::warn!(error = %e, message = M::NAME, "bus: a message that does not decode");
                }
            }
        }
    }
}

impl Bus {
    /// The in-process bus.
    #[must_use]
    pub fn in_process() -> Bus {
        Bus {
            inner: Arc::new(Transport::Local(Mutex::new(ChannelMap::default()))),
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
            channels: Mutex::new(ChannelMap::default()),
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

    /// Publishes `message` on its topic, with the current span's trace
    /// context.
    ///
    /// # Errors
    /// When Redis is away so long that its queue is full.
    pub async fn publish<M: prost::Name>(
        &self,
        topic: &Topic<M>,
        message: &M,
    ) -> Result<(), BusError> {
        self.publish_encoded(topic, message.encode_to_vec()).await
    }

    /// Publishes `payload`, an `M` already encoded (a stored event), on its
    /// topic, with the current span's trace context.
    ///
    /// # Errors
    /// As [`Bus::publish`].
    #[tracing::instrument(name = "publish", skip_all, fields(channel = topic.channel(), message = M::NAME, bytes = payload.len()))]
    pub async fn publish_encoded<M: prost::Name>(
        &self,
        topic: &Topic<M>,
        payload: Vec<u8>,
    ) -> Result<(), BusError> {
        self.send(topic.channel(), M::full_name(), payload).await
    }

    async fn send(
        &self,
        channel: &str,
        type_name: String,
        payload: Vec<u8>,
    ) -> Result<(), BusError> {
        let envelope = BusEnvelope {
            trace_context: crate::telemetry::current_context_headers(),
            r#type: type_name,
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

    /// Subscribes to `topic`. Messages published after this returns are
    /// delivered (subject to the at-most-once caveat above).
    ///
    /// # Errors
    /// When Redis refuses the subscription.
    #[tracing::instrument(skip_all, fields(channel = topic.channel(), message = M::NAME))]
    pub async fn subscribe<M: prost::Name + Default>(
        &self,
        topic: &Topic<M>,
    ) -> Result<Subscription<M>, BusError> {
        self.subscribe_channel(topic.channel())
            .await
            .map(Subscription::new)
    }

    async fn subscribe_channel(
        &self,
        channel: &str,
    ) -> Result<broadcast::Receiver<Arc<BusEnvelope>>, BusError> {
        match &*self.inner {
            Transport::Local(channels) => {
                let mut channels = channels.lock().await;
                channels.sweep(channel);
                let sender = channels
                    .entry(channel.to_owned())
                    .or_insert_with(|| broadcast::channel(SUBSCRIBER_BUFFER).0);
                Ok(sender.subscribe())
            }
            Transport::Redis { subscriptions, .. } => subscriptions.subscribe(channel).await,
        }
    }
}

impl RedisSubscriptions {
    async fn subscribe(
        &self,
        channel: &str,
    ) -> Result<broadcast::Receiver<Arc<BusEnvelope>>, BusError> {
        let mut channels = self.channels.lock().await;
        let mut sink = self.sink.lock().await;
        let idle = channels.sweep(channel);
        if let Some(sink) = sink.as_mut()
            && !idle.is_empty()
        {
            let _ = sink.unsubscribe(&idle).await;
        }
        if let Some(sender) = channels.get(channel) {
            return Ok(sender.subscribe());
        }
        let sender = broadcast::channel(SUBSCRIBER_BUFFER).0;
        let receiver = sender.subscribe();
        if let Some(sink) = sink.as_mut() {
            sink.subscribe(channel).await?;
        }
        // Without a connection the channel is subscribed when it comes back.
        channels.insert(channel.to_owned(), sender);
        Ok(receiver)
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

    fn event(seq: u64) -> pb::GameEvent {
        pb::GameEvent {
            seq,
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn channels_nobody_listens_to_are_swept_once_the_map_doubles_and_live_ones_stay() {
        let bus = Bus::in_process();
        let count = |bus: &Bus| {
            let bus = bus.clone();
            async move {
                match &*bus.inner {
                    Transport::Local(channels) => channels.lock().await.len(),
                    Transport::Redis { .. } => unreachable!("in process"),
                }
            }
        };
        let mut kept = bus
            .subscribe(&game_events("kept"))
            .await
            .expect("subscribed");
        for i in 0..1000 {
            let gone = bus
                .subscribe(&game_events(&format!("g{i}")))
                .await
                .expect("subscribed");
            drop(gone);
            assert!(
                count(&bus).await <= SWEEP_FROM + 1,
                "after {i}: never more than the sweep's threshold"
            );
        }
        // The channel listened to all along was never swept.
        bus.publish(
            &game_events("kept"),
            &pb::GameEvent {
                seq: 9,
                ..Default::default()
            },
        )
        .await
        .expect("published");
        match tokio::time::timeout(Duration::from_secs(5), kept.recv()).await {
            Ok(Delivery::Message { message, .. }) => assert_eq!(message.seq, 9),
            other => panic!("the live channel was swept: {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_in_process_subscriber_receives_its_topic_published_after_it_subscribed() {
        let bus = Bus::in_process();
        bus.publish(&game_events("g1"), &event(1))
            .await
            .expect("publish");
        let mut sub = bus.subscribe(&game_events("g1")).await.expect("subscribe");
        bus.publish(&game_events("g2"), &event(2))
            .await
            .expect("publish");
        // Another topic on the same channel is not this subscription's.
        bus.publish(&presence("g1"), &pb::Presence::default())
            .await
            .expect("publish");
        bus.publish(&game_events("g1"), &event(3))
            .await
            .expect("publish");
        match sub.recv().await {
            Delivery::Message { message, .. } => assert_eq!(message.seq, 3),
            other => panic!("expected a message, got {other:?}"),
        }
    }

    #[test]
    fn a_topic_knows_its_messages_by_their_full_name() {
        assert!(Topic::<pb::GameEvent>::carries("ttakji.v1.GameEvent"));
        assert!(!Topic::<pb::GameEvent>::carries("ttakji.v1.Presence"));
        assert!(!Topic::<pb::GameEvent>::carries("ttakji.v1.GameEventX"));
        assert!(!Topic::<pb::GameEvent>::carries("GameEvent"));
        assert_eq!(game_events("g1").channel(), presence("g1").channel());
    }
}
