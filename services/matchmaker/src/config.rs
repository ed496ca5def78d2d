//! The matchmaker's settings, with the product's defaults.

use std::net::SocketAddr;
use std::time::Duration;

use crate::pairing::PairingRules;

/// The matchmaker's settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub metrics_listen: Option<SocketAddr>,
    /// The authority's gRPC address.
    pub authority_url: String,
    pub rules: PairingRules,
    /// Seconds per move of games between people (the online clock).
    pub seconds_per_move: u32,
    /// How long an unused challenge code works.
    pub challenge_ttl: Duration,
    /// A challenge's link is this followed by its code.
    pub link_base: String,
    /// How often the pairing loop runs.
    pub tick: Duration,
}

impl Config {
    /// Settings for `listen` and `authority_url` with the defaults of the
    /// product: 30 s a move, codes for 10 minutes, pairing every 50 ms.
    #[must_use]
    pub fn new(listen: SocketAddr, authority_url: String) -> Config {
        Config {
            listen,
            metrics_listen: None,
            authority_url,
            rules: PairingRules::default(),
            seconds_per_move: 30,
            challenge_ttl: Duration::from_secs(600),
            link_base: "https://ttakji.app/c/".to_owned(),
            tick: Duration::from_millis(50),
        }
    }
}
