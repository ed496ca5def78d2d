//! Ratings.
pub mod elo;
