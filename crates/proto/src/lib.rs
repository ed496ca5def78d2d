//! The gRPC contracts in `proto/ttakji`: the code generated from them,
//! and, written once for every service, the ids and values a request
//! carries, checked and turned into the rules' own types.

pub mod changes;
pub mod codec;
pub mod convert;
pub mod ids;

pub use ids::{GameId, UserId};

/// Package `ttakji.v1`: the public API, what it shows (games, events,
/// tickets, the ladder) and the bus envelope.
#[allow(missing_debug_implementations, clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("ttakji.v1");
}

/// The services' internal APIs, each action under the verb the public API
/// gives it.
pub mod internal {
    /// Package `ttakji.internal.v1`: the authority, the matchmaker and the
    /// ratings service.
    #[allow(missing_debug_implementations, clippy::all, clippy::pedantic)]
    pub mod v1 {
        tonic::include_proto!("ttakji.internal.v1");
    }
}

/// The encoded file descriptor set of every contract, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/ttakji_descriptor.bin"));
