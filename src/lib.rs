//! The `ttakji` binary's library half: what the binary, the end-to-end
//! tests and the benchmarks share.

pub mod cpu;
pub mod stack;
