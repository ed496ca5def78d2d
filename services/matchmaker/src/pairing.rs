//! Who plays whom: the pairing rules as a pure function of the waiting
//! tickets and the time, so they are tested without a queue.
//!
//! Tickets are taken longest-waiting first. Each ticket allows a rating gap
//! that widens while it waits (50 points at first, 25 more each second, any
//! gap after 30 s, by default); two tickets may be paired when their gap is
//! within the wider of their two allowances, and among those a ticket is
//! paired with the closest rating. A ticket nobody fits after the computer
//! wait (10 s by default) plays the computer.

use std::time::Duration;

use ttakji_platform::config::seconds;

use crate::tickets::Ticket;

/// The pairing settings of a matchmaker (flags and `TTAKJI_*` variables of
/// the matchmaker's config; durations in seconds there).
#[derive(Debug, Clone, clap::Args)]
pub struct PairingRules {
    /// The rating gap allowed at once.
    #[arg(long, env = "TTAKJI_BASE_GAP", default_value_t = 50)]
    pub base_gap: u32,
    /// Points added to the allowed gap per second of waiting.
    #[arg(long, env = "TTAKJI_WIDEN_PER_SECOND", default_value_t = 25)]
    pub widen_per_second: u32,
    /// After this wait any gap is allowed.
    #[arg(long, env = "TTAKJI_ANY_GAP_AFTER", default_value = "30", value_parser = seconds, value_name = "SECONDS")]
    pub any_gap_after: Duration,
    /// After this wait with nobody fitting, the computer plays.
    #[arg(long, env = "TTAKJI_AI_AFTER", default_value = "10", value_parser = seconds, value_name = "SECONDS")]
    pub ai_after: Duration,
    /// A ticket whose player has not been heard from for this long is dropped.
    #[arg(long, env = "TTAKJI_QUEUE_GRACE", default_value = "5", value_parser = seconds, value_name = "SECONDS")]
    pub grace: Duration,
    /// A ticket waiting longer than this expires.
    #[arg(skip = Duration::from_secs(600))]
    pub ticket_ttl: Duration,
}

impl Default for PairingRules {
    fn default() -> PairingRules {
        PairingRules {
            base_gap: 50,
            widen_per_second: 25,
            any_gap_after: Duration::from_secs(30),
            ai_after: Duration::from_secs(10),
            grace: Duration::from_secs(5),
            ticket_ttl: Duration::from_secs(600),
        }
    }
}

impl PairingRules {
    /// The rating gap a ticket that has waited `waited_ms` accepts; `None`: any.
    #[must_use]
    pub fn allowed_gap(&self, waited_ms: i64) -> Option<u32> {
        let waited_ms = u64::try_from(waited_ms.max(0)).unwrap_or(0);
        if u128::from(waited_ms) >= self.any_gap_after.as_millis() {
            return None;
        }
        let widened = u64::from(self.widen_per_second) * waited_ms / 1000;
        Some(
            self.base_gap
                .saturating_add(u32::try_from(widened).unwrap_or(u32::MAX)),
        )
    }
}

/// One decision of a pairing round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairing {
    /// Two tickets play each other (ids).
    Pair(String, String),
    /// The ticket plays the computer.
    Computer(String),
}

/// How many of the nearest ratings on each side a ticket looks at.
const NEIGHBOURS: usize = 8;

/// The pairings for `tickets` (waiting, longest-waiting first) at `now_ms`.
///
/// Tickets are kept in rating order as a linked list, so each ticket looks
/// only at its nearest untaken neighbours in rating: a round costs
/// O(n log n), not O(n²), with thousands waiting.
#[must_use]
pub fn plan(tickets: &[Ticket], now_ms: i64, rules: &PairingRules) -> Vec<Pairing> {
    let n = tickets.len();
    let mut by_rating: Vec<usize> = (0..n).collect();
    by_rating.sort_by_key(|&i| (tickets[i].rating, i));
    let mut place = vec![0; n];
    for (k, &i) in by_rating.iter().enumerate() {
        place[i] = k;
    }
    // Neighbours in rating order among the untaken (usize::MAX: none).
    let mut prev: Vec<usize> = (0..n).map(|k| k.wrapping_sub(1)).collect();
    let mut next: Vec<usize> = (0..n)
        .map(|k| if k + 1 < n { k + 1 } else { usize::MAX })
        .collect();
    let mut taken = vec![false; n];
    let take = |k: usize, prev: &mut Vec<usize>, next: &mut Vec<usize>, taken: &mut Vec<bool>| {
        taken[by_rating[k]] = true;
        let (p, q) = (prev[k], next[k]);
        if p != usize::MAX {
            next[p] = q;
        }
        if q != usize::MAX {
            prev[q] = p;
        }
    };
    let mut out = Vec::new();
    for i in 0..n {
        if taken[i] {
            continue;
        }
        let a = &tickets[i];
        let gap_a = rules.allowed_gap(now_ms - a.enqueued_ms);
        let k = place[i];
        let mut best: Option<(u32, usize)> = None;
        for direction in [&prev, &next] {
            let mut at = direction[k];
            for _ in 0..NEIGHBOURS {
                if at == usize::MAX {
                    break;
                }
                let b = &tickets[by_rating[at]];
                if b.user_id != a.user_id {
                    let gap = a.rating.abs_diff(b.rating);
                    let allowed = match (gap_a, rules.allowed_gap(now_ms - b.enqueued_ms)) {
                        (None, _) | (_, None) => true,
                        (Some(x), Some(y)) => gap <= x.max(y),
                    };
                    if allowed && best.is_none_or(|(g, _)| gap < g) {
                        best = Some((gap, at));
                    }
                }
                at = direction[at];
            }
        }
        if let Some((_, other)) = best {
            out.push(Pairing::Pair(
                a.id.clone(),
                tickets[by_rating[other]].id.clone(),
            ));
            take(k, &mut prev, &mut next, &mut taken);
            take(other, &mut prev, &mut next, &mut taken);
        } else if u128::try_from(now_ms - a.enqueued_ms).unwrap_or(0) >= rules.ai_after.as_millis()
        {
            out.push(Pairing::Computer(a.id.clone()));
            take(k, &mut prev, &mut next, &mut taken);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tickets::PoolKey;

    fn ticket(id: &str, rating: u32, enqueued_ms: i64) -> Ticket {
        let pool = PoolKey {
            board_size: 9,
            ruleset: "ttakji".to_owned(),
            ranked: false,
        };
        Ticket::waiting(
            id.to_owned(),
            format!("u-{id}"),
            id.to_owned(),
            rating,
            pool,
            enqueued_ms,
        )
    }

    #[test]
    fn the_allowed_gap_widens_while_a_player_waits_then_is_any() {
        let rules = PairingRules::default();
        assert_eq!(rules.allowed_gap(0), Some(50));
        assert_eq!(rules.allowed_gap(4_000), Some(150));
        assert_eq!(rules.allowed_gap(29_999), Some(50 + 749));
        assert_eq!(rules.allowed_gap(30_000), None);
    }

    #[test]
    fn the_closest_rating_within_the_gap_is_preferred() {
        let rules = PairingRules::default();
        let tickets = [
            ticket("a", 1200, 0),
            ticket("b", 1240, 0),
            ticket("c", 1210, 0),
        ];
        assert_eq!(
            plan(&tickets, 0, &rules),
            vec![Pairing::Pair("a".into(), "c".into())]
        );
    }

    #[test]
    fn a_wide_gap_waits_until_the_window_has_grown() {
        let rules = PairingRules::default();
        let tickets = [ticket("a", 1200, 0), ticket("b", 1400, 0)];
        assert!(
            plan(&tickets, 5_000, &rules).is_empty(),
            "175 allowed, 200 apart"
        );
        assert_eq!(
            plan(&tickets, 6_000, &rules),
            vec![Pairing::Pair("a".into(), "b".into())]
        );
    }

    #[test]
    fn nobody_fitting_after_the_wait_means_the_computer() {
        let rules = PairingRules::default();
        let tickets = [ticket("a", 1200, 0), ticket("b", 2000, 5_000)];
        assert!(plan(&tickets, 9_999, &rules).is_empty());
        assert_eq!(
            plan(&tickets, 10_000, &rules),
            vec![Pairing::Computer("a".into())]
        );
    }

    #[test]
    fn a_player_is_never_paired_with_themself() {
        let rules = PairingRules::default();
        let mut b = ticket("b", 1200, 0);
        b.user_id = "u-a".to_owned();
        assert!(plan(&[ticket("a", 1200, 0), b], 0, &rules).is_empty());
    }
}
