//! The pairing loop: every tick, for each pool whose lease this instance
//! holds, drop tickets whose players are gone, apply the rules of
//! [`crate::pairing`], claim each pairing, make its game and tell its
//! players. Claims an instance left half done are finished here too.

use std::collections::HashMap;
use std::time::Duration;

use baduk::Color;
use baduk_ai::Level;
use ttakji_platform::bus;
use ttakji_platform::now_unix_ms;
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

use crate::matchmaker::{Matchmaker, first_is_black, random_id};
use crate::pairing::{Pairing, plan};
use crate::tickets::{Claim, Match, Opponent, PoolKey, StoreError, Ticket};

/// How long a pool's pairing lease lasts without renewal.
const LEASE: Duration = Duration::from_secs(2);
/// A claim older than this whose game was never finished is taken up again.
const STALE_CLAIM: Duration = Duration::from_secs(10);
/// Games made at once by one pairing round.
const PARALLEL_GAMES: usize = 32;

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Matchmaker {
    /// Pairs every pool this instance holds the lease of, every tick, until shutdown.
    pub async fn pair_until(self, mut shutdown: Shutdown) {
        let mut tick = tokio::time::interval(self.config().tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tokio::select! {
                () = shutdown.wait() => return,
                _ = tick.tick() => {}
            }
            if failing {
                // If this round reaches the store, it came back about now.
                self.store_is_back(now_unix_ms());
            }
            match self.pair_round().await {
                Ok(()) => failing = false,
                Err(e) => {
                    failing = true;
                    tracing::warn!(error = %e, "pairing round failed");
                }
            }
        }
    }

    /// One round over every pool.
    ///
    /// # Errors
    /// When the store cannot be read.
    pub async fn pair_round(&self) -> Result<(), StoreError> {
        for pool in self.tickets().pools().await? {
            if self.tickets().lease(&pool, self.instance(), LEASE).await? {
                self.pair_pool(&pool).await?;
            }
        }
        Ok(())
    }

    async fn pair_pool(&self, pool: &PoolKey) -> Result<(), StoreError> {
        let tickets = self.tickets();
        let now = now_unix_ms();
        self.finish_stale_claims(pool, now).await?;
        let mut waiting = tickets.waiting(pool).await?;
        let rules = &self.config().rules;
        let (grace, ttl) = (millis(rules.grace), millis(rules.ticket_ttl));
        let mut gone = Vec::new();
        waiting.retain(|t| {
            // A player's stream cannot touch its ticket while the store is
            // away: the grace runs from the store's return at the earliest.
            let heard = t.seen_ms.max(self.store_back_ms());
            let keep = now - heard <= grace && now - t.enqueued_ms <= ttl;
            if !keep {
                gone.push(t.id.clone());
            }
            keep
        });
        for id in gone {
            tracing::info!(ticket_id = %id, "ticket dropped: player gone or ticket expired");
            tickets.cancel(&id, None).await?;
        }
        metrics::gauge!("ttakji_tickets_waiting", "pool" => pool.encode())
            .set(waiting.len() as f64);
        let by_id: HashMap<&str, &Ticket> = waiting.iter().map(|t| (t.id.as_str(), t)).collect();
        let mut games = tokio::task::JoinSet::new();
        for pairing in plan(&waiting, now, rules) {
            let (a, b) = match &pairing {
                Pairing::Pair(a, b) => (a.as_str(), Some(b.as_str())),
                Pairing::Computer(a) => (a.as_str(), None),
            };
            let game_id = random_id();
            let ids: Vec<&str> = std::iter::once(a).chain(b).collect();
            let claim = Claim {
                pool,
                ids: &ids,
                game_id: &game_id,
                now_ms: now,
            };
            if !tickets.claim(claim).await? {
                continue;
            }
            let first = by_id.get(a).map(|t| (*t).clone());
            let second = b.and_then(|b| by_id.get(b)).map(|t| (*t).clone());
            let Some(first) = first else { continue };
            let this = self.clone();
            games.spawn(async move { this.make_game(first, second, game_id).await });
            while games.len() >= PARALLEL_GAMES {
                games.join_next().await;
            }
        }
        while games.join_next().await.is_some() {}
        Ok(())
    }

    /// Claims an instance left unfinished (it died between the claim and
    /// the match) are finished by the lease holder: the game id was chosen
    /// with the claim, so the game is made once.
    async fn finish_stale_claims(&self, pool: &PoolKey, now: i64) -> Result<(), StoreError> {
        let before = now - millis(STALE_CLAIM);
        let stale = self.tickets().stale_claims(pool, before).await?;
        let mut by_game: HashMap<String, Vec<Ticket>> = HashMap::new();
        for t in stale {
            by_game
                .entry(t.game_id.clone().unwrap_or_default())
                .or_default()
                .push(t);
        }
        for (game_id, mut ts) in by_game {
            ts.sort_by_key(|t| t.enqueued_ms);
            let mut ts = ts.into_iter();
            if let Some(first) = ts.next() {
                tracing::warn!(game_id, "finishing a pairing left half done");
                self.make_game(first, ts.next(), game_id).await;
            }
        }
        Ok(())
    }

    /// Makes the game of claimed tickets and tells their players; puts the
    /// tickets back in the queue if the game cannot be made. Without a
    /// second ticket the computer plays, at the level nearest the rating.
    #[tracing::instrument(skip_all, fields(game_id = %game_id, ticket_a = %a.id, ticket_b = b.as_ref().map_or("computer", |t| t.id.as_str())))]
    async fn make_game(&self, a: Ticket, b: Option<Ticket>, game_id: String) {
        let a_color = if first_is_black(&game_id) {
            Color::Black
        } else {
            Color::White
        };
        let seat_of = |t: &Ticket| internal::Seat {
            user_id: t.user_id.clone(),
            nickname: t.nickname.clone(),
            ..Default::default()
        };
        let level = Level::nearest(a.rating);
        let computer = internal::Seat {
            user_id: String::new(),
            nickname: String::new(),
            ai_level: pb::AiLevel::from(level) as i32,
            // A random opponent must not be steerable from a player's
            // machine: the queue's computer thinks on the server.
            ai_engine: pb::AiEngine::Server as i32,
        };
        let other = b.as_ref().map_or(computer, seat_of);
        let (black, white) = match a_color {
            Color::Black => (seat_of(&a), other),
            Color::White => (other, seat_of(&a)),
        };
        let request = internal::CreateGameRequest {
            board_size: a.pool.board_size,
            ruleset: a.pool.ruleset.clone(),
            black: Some(black),
            white: Some(white),
            seconds_per_move: if b.is_some() {
                self.config().seconds_per_move
            } else {
                0
            },
            game_id: game_id.clone(),
            ranked: a.pool.ranked && b.is_some(),
            // Orders the live games list: the weaker player's rating.
            ladder_rating: b.as_ref().map_or(0, |b| a.rating.min(b.rating)),
            ..Default::default()
        };
        let game = match self.create_game(request).await {
            Ok(game) => game,
            Err(status) => {
                tracing::error!(%status, "game not made; the tickets wait again");
                let ids: Vec<&str> = std::iter::once(a.id.as_str())
                    .chain(b.as_ref().map(|t| t.id.as_str()))
                    .collect();
                if let Err(e) = self.tickets().release(&a.pool, &ids).await {
                    tracing::error!(error = %e, "tickets not released; the next lease holder retries the game");
                }
                return;
            }
        };
        // The players are told the seats as the authority made them (it
        // names a computer seat "Easy AI", say).
        let seat = |color: Color| {
            match color {
                Color::Black => game.black.clone(),
                Color::White => game.white.clone(),
            }
            .unwrap_or_default()
        };
        let (a_seat, b_seat) = (seat(a_color), seat(a_color.opponent()));
        let a_told = Match {
            color: a_color,
            opponent: Opponent {
                user_id: b_seat.user_id,
                nickname: b_seat.nickname,
                level: b.is_none().then_some(level),
            },
        };
        let mut matches = vec![(a, a_told)];
        if let Some(b) = b {
            let b_told = Match {
                color: a_color.opponent(),
                opponent: Opponent {
                    user_id: a_seat.user_id,
                    nickname: a_seat.nickname,
                    level: None,
                },
            };
            matches.push((b, b_told));
        } else {
            metrics::counter!("ttakji_ai_fallbacks_total").increment(1);
        }
        for (t, told) in matches {
            if let Err(e) = self.tickets().finish(&t, &told).await {
                tracing::error!(error = %e, "match not recorded; the next lease holder retries");
                return;
            }
            let waited = (now_unix_ms() - t.enqueued_ms).max(0) as f64 / 1000.0;
            metrics::histogram!("ttakji_match_wait_seconds").record(waited);
            if let Ok(Some(done)) = self.tickets().get(&t.id).await
                && let Ok(pb_ticket) = self.ticket_pb(&done).await
            {
                self.notify(&bus::tickets(&t.user_id), &pb_ticket).await;
            }
        }
        tracing::info!("match made");
    }
}

#[cfg(test)]
mod tests {
    use ttakji_platform::authorities::Authorities;
    use ttakji_platform::bus::Bus;

    use super::*;
    use crate::config::Config;
    use crate::tickets::{State, Tickets};

    /// A matchmaker whose authority never answers.
    fn matchmaker(tickets: Tickets) -> Matchmaker {
        let nowhere = "http://127.0.0.1:1";
        let config = Config::new("127.0.0.1:0".parse().expect("addr"), nowhere.to_owned());
        let authority = Authorities::new(nowhere)
            .expect("url")
            .with_budget(std::time::Duration::from_millis(200));
        Matchmaker::new(config, tickets, Bus::in_process(), authority)
    }

    async fn queue(tickets: &Tickets, id: &str, since_ms: i64) {
        let pool = PoolKey {
            board_size: 9,
            ruleset: "ttakji".to_owned(),
            ranked: false,
        };
        let user = format!("u-{id}");
        let t = Ticket::waiting(id.to_owned(), user.clone(), user, 1200, pool, since_ms);
        tickets.enqueue(&t).await.expect("enqueue");
    }

    #[tokio::test]
    async fn a_game_the_authority_cannot_make_puts_its_tickets_back_in_the_queue() {
        let tickets = Tickets::memory();
        let now = now_unix_ms();
        queue(&tickets, "a", now - 20).await;
        queue(&tickets, "b", now - 10).await;
        matchmaker(tickets.clone())
            .pair_round()
            .await
            .expect("round");
        for id in ["a", "b"] {
            let t = tickets.get(id).await.expect("get").expect("ticket");
            assert_eq!(
                (t.state, t.game_id, t.matched),
                (State::Waiting, None, None)
            );
        }
        let pool = tickets.pools().await.expect("pools").remove(0);
        let waiting = tickets.waiting(&pool).await.expect("waiting");
        let ids: Vec<&str> = waiting.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"], "in their old places");
    }

    #[tokio::test]
    async fn a_player_not_heard_from_within_the_grace_is_dropped() {
        let tickets = Tickets::memory();
        let now = now_unix_ms();
        let grace = millis(crate::pairing::PairingRules::default().grace);
        queue(&tickets, "gone", now - grace - 1_000).await;
        matchmaker(tickets.clone())
            .pair_round()
            .await
            .expect("round");
        let t = tickets.get("gone").await.expect("get").expect("ticket");
        assert_eq!(t.state, State::Cancelled);
    }

    #[tokio::test]
    async fn after_an_outage_of_the_store_the_grace_runs_from_its_return() {
        let tickets = Tickets::memory();
        let now = now_unix_ms();
        let grace = millis(crate::pairing::PairingRules::default().grace);
        // Last heard before an outage longer than the grace, which ended
        // a moment ago: the player's stream had no store to touch.
        queue(&tickets, "waited", now - grace - 5_000).await;
        let matchmaker = matchmaker(tickets.clone());
        matchmaker.store_is_back(now - 100);
        matchmaker.pair_round().await.expect("round");
        let t = tickets.get("waited").await.expect("get").expect("ticket");
        assert_eq!(t.state, State::Waiting, "kept");
        matchmaker.store_is_back(now - grace - 1_000);
        matchmaker.pair_round().await.expect("round");
        let t = tickets.get("waited").await.expect("get").expect("ticket");
        assert_eq!(t.state, State::Cancelled, "gone once the grace has run out");
    }
}
