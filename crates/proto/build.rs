//! Compiles the gRPC contracts in `proto/` with protox (pure Rust, no protoc)
//! and generates the prost messages and tonic clients and servers.

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../proto")
        .canonicalize()?;
    println!("cargo:rerun-if-changed={}", root.display());
    let files = [
        "v1/api.proto",
        "v1/bus.proto",
        "v1/game.proto",
        "v1/matchmaker.proto",
        "v1/ratings.proto",
        "internal/v1/authority.proto",
        "internal/v1/matchmaker.proto",
        "internal/v1/ratings.proto",
    ]
    .map(|f| root.join("ttakji").join(f));
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let fds = protox::compile(&files, [&root])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("ttakji_descriptor.bin"), fds.encode_to_vec())?;
    // Every message knows its full name (`prost::Name`): the bus names
    // what it carries by it.
    let mut config = tonic_prost_build::Config::new();
    config.enable_type_names();
    // Every client and server encodes with a small first buffer
    // (`src/codec.rs`).
    tonic_prost_build::configure()
        .codec_path("crate::codec::SmallBuffers")
        .compile_fds_with_config(fds, config)?;
    Ok(())
}
