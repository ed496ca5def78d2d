//! The gRPC contracts in `proto/ttakji/v1`: the code generated from them,
//! and, written once for every service, the ids and values a request
//! carries, checked and turned into the rules' own types.

pub mod convert;
pub mod ids;

pub use ids::{GameId, UserId};

/// Package `ttakji.v1`: the public API, the authority's internal API, game
/// events and the bus envelope.
#[allow(missing_debug_implementations, clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("ttakji.v1");
}

/// The encoded file descriptor set of every contract, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/ttakji_descriptor.bin"));
