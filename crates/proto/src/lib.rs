//! Code generated from the gRPC contracts in `proto/ttakji/v1`, and nothing else.

#![allow(missing_debug_implementations, clippy::all, clippy::pedantic)]

/// Package `ttakji.v1`: the public API, the authority's internal API, game
/// events and the bus envelope.
pub mod v1 {
    tonic::include_proto!("ttakji.v1");
}

/// The encoded file descriptor set of every contract, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/ttakji_descriptor.bin"));
