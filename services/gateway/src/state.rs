//! What the gateway's handlers share: the clients of the services behind
//! it, the accounts store, the bus, the token keys and the shutdown signal.
//! Cloning it is cheap; every public service holds a clone.

use std::sync::Arc;

use tonic::Status;
use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::{Bus, Subscription, Topic};
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;

use ttakji_platform::authorities::Authorities;
use ttakji_platform::grpc::TracedChannel;
use ttakji_proto::internal::v1::matchmaker_service_client::MatchmakerServiceClient;
use ttakji_proto::internal::v1::ratings_service_client::RatingsServiceClient;

use crate::google::GoogleVerifier;

/// The matchmaker client the queue handlers use.
pub type MatchmakerClient = MatchmakerServiceClient<TracedChannel>;

/// The ratings client the ladder and the queue use.
pub type RatingsClient = RatingsServiceClient<TracedChannel>;

/// The gateway's handlers and what they share.
#[derive(Debug, Clone)]
pub struct Gateway {
    /// Google sign-in, when configured.
    pub google: Option<Arc<GoogleVerifier>>,
    /// The accounts store.
    pub db: Database,
    /// The authority instances, each game's call sent to its owner.
    pub authority: Authorities,
    pub matchmaker: MatchmakerClient,
    pub ratings: RatingsClient,
    /// Sign and verify access tokens.
    pub keys: TokenKeys,
    /// Live game events and the matchmaker's news for each player.
    pub bus: Bus,
    /// Stops the tasks behind open streams; shutdown waits for them.
    pub shutdown: Shutdown,
    /// This gateway's heartbeat, and the gateways fallen silent.
    pub liveness: crate::presence::Liveness,
    /// The accounts behind callers' tokens, with their nicknames now.
    pub known: crate::accounts::Known,
    /// The rate limits per client address and per account.
    pub limits: crate::limits::Limits,
    /// The most live games a player may have against a computer that thinks
    /// on the server (0: no limit).
    pub server_ai_games: u32,
}

impl Gateway {
    /// A client of the matchmaker for one call.
    pub(crate) fn matchmaker(&self) -> MatchmakerClient {
        self.matchmaker.clone()
    }

    /// A client of the ratings service for one call.
    pub(crate) fn ratings(&self) -> RatingsClient {
        self.ratings.clone()
    }

    /// The matchmaker's news of one kind for a player, from their bus
    /// channel.
    pub(crate) async fn news<M: prost::Name + Default>(
        &self,
        topic: &Topic<M>,
    ) -> Result<Subscription<M>, Status> {
        self.bus
            .subscribe(topic)
            .await
            .map_err(|e| Status::unavailable(format!("cannot follow your queue: {e}")))
    }
}
