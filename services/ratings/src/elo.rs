//! Elo, as the ladder uses it.
//!
//! Everyone starts at [`START`]. After a ranked game each player's rating
//! moves by `K × (score − expected)`, where the score is 1 for a win (on the
//! board, on time or by resignation), ½ for a draw (jigo or an agreed draw)
//! and 0 for a loss, and the expected score is `1 / (1 + 10^((Ropp − R)/400))`.
//! K is [`K_NEW`] for a player's first [`NEW_PLAYER_GAMES`] ranked games, so a
//! newcomer finds their level quickly, and [`K_SETTLED`] after. Each player's
//! change is rounded to a whole point on its own (half away from zero), so
//! with different K-factors the two changes need not cancel.

/// Every player's first rating.
pub const START: i32 = 1200;
/// K for a player's first games.
pub const K_NEW: i32 = 40;
/// K once a player has played [`NEW_PLAYER_GAMES`] ranked games.
pub const K_SETTLED: i32 = 20;
/// Ranked games played with [`K_NEW`].
pub const NEW_PLAYER_GAMES: u32 = 30;

/// A player's result in one game, in half points: 2 win, 1 draw, 0 loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

impl Outcome {
    /// The score: 1, ½ or 0.
    #[must_use]
    pub fn score(self) -> f64 {
        match self {
            Outcome::Win => 1.0,
            Outcome::Draw => 0.5,
            Outcome::Loss => 0.0,
        }
    }

    /// The opponent's outcome.
    #[must_use]
    pub fn opposite(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Draw => Outcome::Draw,
            Outcome::Loss => Outcome::Win,
        }
    }
}

/// K for a player who has played `games` ranked games before this one.
#[must_use]
pub fn k_factor(games: u32) -> i32 {
    if games < NEW_PLAYER_GAMES {
        K_NEW
    } else {
        K_SETTLED
    }
}

/// The expected score of a player rated `rating` against `opponent`.
#[must_use]
pub fn expected(rating: i32, opponent: i32) -> f64 {
    1.0 / (1.0 + 10f64.powf(f64::from(opponent - rating) / 400.0))
}

/// The player's new rating after `outcome` against `opponent`, having
/// played `games` ranked games before.
#[must_use]
pub fn updated(rating: i32, games: u32, opponent: i32, outcome: Outcome) -> i32 {
    let change = f64::from(k_factor(games)) * (outcome.score() - expected(rating, opponent));
    // |change| ≤ 40, so the cast is exact.
    rating + change.round() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand-computed: equal ratings expect ½ each.
    #[test]
    fn a_win_between_equals_moves_each_by_half_of_k() {
        assert_eq!(updated(1200, 0, 1200, Outcome::Win), 1220);
        assert_eq!(updated(1200, 0, 1200, Outcome::Loss), 1180);
        assert_eq!(updated(1500, 40, 1500, Outcome::Win), 1510);
    }

    #[test]
    fn a_jigo_between_equals_changes_nothing_and_pulls_unequal_ratings_together() {
        assert_eq!(updated(1200, 0, 1200, Outcome::Draw), 1200);
        // 1400 vs 1200: E = 1/(1+10^(-0.5)) = 0.7597; 40 × (0.5 − 0.7597) = −10.39.
        assert_eq!(updated(1400, 0, 1200, Outcome::Draw), 1390);
        assert_eq!(updated(1200, 0, 1400, Outcome::Draw), 1210);
    }

    #[test]
    fn beating_a_stronger_player_gains_more_than_beating_a_weaker_one() {
        // E(1200 vs 1400) = 0.2403: 40 × 0.7597 = 30.39.
        assert_eq!(updated(1200, 5, 1400, Outcome::Win), 1230);
        // E(1400 vs 1200) = 0.7597: 40 × 0.2403 = 9.61.
        assert_eq!(updated(1400, 5, 1200, Outcome::Win), 1410);
        // The loss side, settled K: 20 × (0 − 0.7597) = −15.19.
        assert_eq!(updated(1400, 30, 1200, Outcome::Loss), 1385);
    }

    #[test]
    fn k_switches_after_the_thirtieth_game() {
        assert_eq!(k_factor(0), 40);
        assert_eq!(k_factor(29), 40);
        assert_eq!(k_factor(30), 20);
        assert_eq!(updated(1200, 29, 1200, Outcome::Win), 1220);
        assert_eq!(updated(1200, 30, 1200, Outcome::Win), 1210);
    }
}
