//! Which gateways are alive, so a player connected through one that died
//! (no goodbye sent) counts as gone.
//!
//! Presence costs nothing per game while nothing changes: a player's
//! watcher says on the game's channel when it comes and when it goes, and
//! each watcher answers a newcomer once with its own presence. What stays
//! periodic is one heartbeat per gateway, on one channel
//! ([`bus::gateways`]), whatever the number of games: each gateway notes
//! who it hears, and when one falls silent for [`PRESENCE_TIMEOUT`] its
//! watchers are told once, through a watch channel that wakes them only
//! then.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use ttakji_platform::bus::{self, Bus, Delivery};
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::v1 as pb;

/// How often a gateway says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// A gateway not heard from for this long is gone, and so are the players
/// connected through it.
pub const PRESENCE_TIMEOUT: Duration = Duration::from_secs(5);

/// This gateway's name among the others, and the ones that fell silent.
#[derive(Debug, Clone)]
pub struct Liveness {
    id: Arc<str>,
    gone: watch::Receiver<Arc<HashSet<String>>>,
}

impl Liveness {
    /// Starts the heartbeat of this gateway and the watch on the others,
    /// until `shutdown`.
    pub fn start(bus: Bus, shutdown: Shutdown) -> Liveness {
        let id: Arc<str> = Arc::from(uuid::Uuid::new_v4().simple().to_string());
        let (gone_tx, gone) = watch::channel(Arc::new(HashSet::new()));
        let me = id.clone();
        let mut stop = shutdown.clone();
        shutdown.spawn(async move {
            let mut heard = match bus.subscribe(&bus::gateways()).await {
                Ok(subscription) => Some(subscription),
                Err(e) => {
                    tracing::warn!(error = %e, "other gateways' heartbeats cannot be followed");
                    None
                }
            };
            let mut last_heard: HashMap<String, Instant> = HashMap::new();
            let mut beat = tokio::time::interval(HEARTBEAT);
            beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.wait() => break,
                    _ = beat.tick() => {
                        let beat = pb::GatewayHeartbeat { gateway_id: me.to_string() };
                        let _ = bus.publish(&bus::gateways(), &beat).await;
                        let silent: Vec<String> = last_heard
                            .iter()
                            .filter(|(_, at)| at.elapsed() > PRESENCE_TIMEOUT)
                            .map(|(id, _)| id.clone())
                            .collect();
                        if !silent.is_empty() {
                            for id in &silent {
                                last_heard.remove(id);
                            }
                            tracing::info!(gateways = %silent.join(","), "gateways fell silent; their players count as gone");
                            gone_tx.send_modify(|gone| {
                                Arc::make_mut(gone).extend(silent);
                            });
                        }
                    }
                    delivery = async {
                        match heard.as_mut() {
                            Some(h) => h.recv().await,
                            None => std::future::pending().await,
                        }
                    } => match delivery {
                        Delivery::Message { message, .. } => {
                            let id = message.gateway_id;
                            if *id != *me && last_heard.insert(id.clone(), Instant::now()).is_none() {
                                // Back, or new: no longer counted as gone.
                                gone_tx.send_if_modified(|gone| {
                                    gone.contains(&id) && Arc::make_mut(gone).remove(&id)
                                });
                            }
                        }
                        Delivery::Gap => {}
                        Delivery::Closed => heard = None,
                    },
                }
            }
        });
        Liveness { id, gone }
    }

    /// This gateway's id, carried in the presence it announces.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The gateways fallen silent; changes only when one does.
    #[must_use]
    pub fn gone(&self) -> watch::Receiver<Arc<HashSet<String>>> {
        self.gone.clone()
    }
}
