//! SGF
