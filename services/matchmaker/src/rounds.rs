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

use ttakji_platform::authorities::{SHARDS, completed_in_shard};

use crate::matchmaker::{Matchmaker, first_is_black, random_id};
use crate::pairing::{Pairing, plan};
use crate::tickets::{Claim, Match, Opponent, Place, PoolKey, State, StoreError, Ticket};
use crate::wire;

/// How long a pool's pairing lease lasts without renewal.
const LEASE: Duration = Duration::from_secs(2);
/// A claim older than this whose game was never finished is taken up again.
const STALE_CLAIM: Duration = Duration::from_secs(10);
/// Games asked of the authority in one call (and stored in one commit).
const GAMES_AT_ONCE: usize = 256;
/// Batches of games one pairing round has asked for and not yet heard.
const BATCHES_AT_ONCE: usize = 4;

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
        // The pairings of one batch get game ids of one shard, so one
        // authority makes the whole batch in one commit.
        let pairings = plan(&waiting, now, rules);
        let batches: Vec<Vec<(Vec<&str>, String)>> = pairings
            .chunks(GAMES_AT_ONCE)
            .map(|batch| {
                let shard = random_shard();
                batch
                    .iter()
                    .map(|pairing| {
                        let ids = match pairing {
                            Pairing::Pair(a, b) => vec![a.as_str(), b.as_str()],
                            Pairing::Computer(a) => vec![a.as_str()],
                        };
                        (ids, random_id_in(shard))
                    })
                    .collect()
            })
            .collect();
        let claims: Vec<Claim<'_>> = batches
            .iter()
            .flatten()
            .map(|(ids, game_id)| Claim {
                pool,
                ids,
                game_id,
                now_ms: now,
            })
            .collect();
        let mut won = tickets.claim_all(&claims).await?.into_iter();
        // The claimed pairings of each batch, a few batches at once.
        let mut making = tokio::task::JoinSet::new();
        for batch in &batches {
            let claimed: Vec<Made> = batch
                .iter()
                .zip(won.by_ref())
                .filter_map(|((ids, game_id), won)| {
                    let mut seats = ids
                        .iter()
                        .filter_map(|id| by_id.get(id).map(|t| (*t).clone()));
                    let first = seats.next().filter(|_| won)?;
                    Some(Made {
                        first,
                        second: seats.next(),
                        game_id: game_id.clone(),
                    })
                })
                .collect();
            if claimed.is_empty() {
                continue;
            }
            let this = self.clone();
            making.spawn(async move { this.make_games(claimed).await });
            while making.len() >= BATCHES_AT_ONCE {
                making.join_next().await;
            }
        }
        while making.join_next().await.is_some() {}
        Ok(())
    }

    /// Makes the games of claimed pairings of one shard in one call, and
    /// tells their players. A game the batch did not make (its shard moved,
    /// the call failed) is made on its own, as a stale claim would be.
    async fn make_games(&self, batch: Vec<Made>) {
        let games = batch
            .iter()
            .map(|m| self.game_request(&m.first, m.second.as_ref(), &m.game_id))
            .collect();
        let answer = self
            .authority()
            .ask(
                internal::CreateGamesRequest { games },
                |mut c, r| async move { c.create_games(r).await },
            )
            .await;
        let made: Vec<internal::CreatedGame> = match answer {
            Ok(answer) => answer.into_inner().games,
            Err(status) => {
                tracing::warn!(%status, games = batch.len(), "games not made together; made one by one");
                Vec::new()
            }
        };
        let mut made = made.into_iter();
        let mut to_tell = Vec::new();
        let mut one_by_one = tokio::task::JoinSet::new();
        for m in batch {
            match made.next() {
                Some(internal::CreatedGame {
                    game: Some(game),
                    code: 0,
                    ..
                }) => to_tell.push((m, game)),
                refused => {
                    if let Some(refused) = refused {
                        tracing::info!(game_id = %m.game_id, code = refused.code, message = %refused.message, "game not made in its batch; made on its own");
                    }
                    let this = self.clone();
                    one_by_one.spawn(async move {
                        this.make_game(m.first, m.second, m.game_id).await;
                    });
                }
            }
        }
        self.tell_all(to_tell).await;
        while one_by_one.join_next().await.is_some() {}
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

    /// The game a claimed pairing asks the authority for. Without a
    /// second ticket the computer plays, at the level nearest the rating.
    fn game_request(
        &self,
        a: &Ticket,
        b: Option<&Ticket>,
        game_id: &str,
    ) -> internal::CreateGameRequest {
        let seat_of = |t: &Ticket| internal::Seat {
            user_id: t.user_id.clone(),
            nickname: t.nickname.clone(),
            ..Default::default()
        };
        let computer = internal::Seat {
            user_id: String::new(),
            nickname: String::new(),
            ai_level: pb::AiLevel::from(Level::nearest(a.rating)) as i32,
            // A random opponent must not be steerable from a player's
            // machine: the queue's computer thinks on the server.
            ai_engine: pb::AiEngine::Server as i32,
        };
        let other = b.map_or(computer, seat_of);
        let (black, white) = match first_color(game_id) {
            Color::Black => (seat_of(a), other),
            Color::White => (other, seat_of(a)),
        };
        internal::CreateGameRequest {
            board_size: a.pool.board_size,
            ruleset: a.pool.ruleset.clone(),
            black: Some(black),
            white: Some(white),
            seconds_per_move: if b.is_some() {
                self.config().seconds_per_move
            } else {
                0
            },
            game_id: game_id.to_owned(),
            ranked: a.pool.ranked && b.is_some(),
            // Orders the live games list: the weaker player's rating.
            ladder_rating: b.map_or(0, |b| a.rating.min(b.rating)),
            ..Default::default()
        }
    }

    /// Makes the game of claimed tickets and tells their players; puts the
    /// tickets back in the queue if the game cannot be made.
    #[tracing::instrument(skip_all, fields(game_id = %game_id, ticket_a = %a.id, ticket_b = b.as_ref().map_or("computer", |t| t.id.as_str())))]
    async fn make_game(&self, a: Ticket, b: Option<Ticket>, game_id: String) {
        let request = self.game_request(&a, b.as_ref(), &game_id);
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
        self.tell_all(vec![(
            Made {
                first: a,
                second: b,
                game_id,
            },
            game,
        )])
        .await;
    }

    /// Records the made games' tickets as matched, in one trip to the
    /// store, and tells their players, with the seats as the authority made
    /// them (it names a computer seat "Easy AI", say).
    async fn tell_all(&self, made: Vec<(Made, pb::GameSnapshot)>) {
        if made.is_empty() {
            return;
        }
        let mut done: Vec<(Ticket, Match)> = Vec::with_capacity(2 * made.len());
        for (mut m, game) in made {
            for t in std::iter::once(&mut m.first).chain(m.second.as_mut()) {
                t.game_id = Some(m.game_id.clone());
            }
            let a_color = first_color(&m.game_id);
            let seat = |color: Color| {
                match color {
                    Color::Black => game.black.clone(),
                    Color::White => game.white.clone(),
                }
                .unwrap_or_default()
            };
            let (a_seat, b_seat) = (seat(a_color), seat(a_color.opponent()));
            let level = m.second.is_none().then(|| Level::nearest(m.first.rating));
            let a_told = Match {
                color: a_color,
                opponent: Opponent {
                    user_id: b_seat.user_id,
                    nickname: b_seat.nickname,
                    level,
                },
            };
            done.push((m.first, a_told));
            match m.second {
                Some(b) => {
                    let b_told = Match {
                        color: a_color.opponent(),
                        opponent: Opponent {
                            user_id: a_seat.user_id,
                            nickname: a_seat.nickname,
                            level: None,
                        },
                    };
                    done.push((b, b_told));
                }
                None => metrics::counter!("ttakji_ai_fallbacks_total").increment(1),
            }
        }
        if let Err(e) = self.tickets().finish_all(&done).await {
            tracing::error!(error = %e, "matches not recorded; the next lease holder retries");
            return;
        }
        let now = now_unix_ms();
        let told = done.into_iter().map(|(t, told)| {
            let waited = (now - t.enqueued_ms).max(0) as f64 / 1000.0;
            metrics::histogram!("ttakji_match_wait_seconds").record(waited);
            let done = Ticket {
                state: State::Matched,
                matched: Some(told),
                ..t
            };
            async move {
                let ticket = wire::ticket_pb(&done, Place::default(), now);
                self.notify(&bus::tickets(&done.user_id), &ticket).await;
            }
        });
        futures_util::future::join_all(told).await;
        tracing::info!("match made");
    }
}

/// Claimed tickets and the id of the game they are to play.
struct Made {
    first: Ticket,
    second: Option<Ticket>,
    game_id: String,
}

/// The colour of a pairing's first ticket, drawn from the game's id.
fn first_color(game_id: &str) -> Color {
    if first_is_black(game_id) {
        Color::Black
    } else {
        Color::White
    }
}

/// A shard drawn at random.
fn random_shard() -> u32 {
    u32::from(uuid::Uuid::new_v4().as_bytes()[0]) % SHARDS
}

/// A random game id in `shard`: 30 random hex digits and the two more
/// that put it there (another 30 in the rare case no two do). It keeps 120
/// random bits, and finding it costs one draw.
fn random_id_in(shard: u32) -> String {
    loop {
        let mut id = random_id();
        id.truncate(30);
        if let Some(id) = completed_in_shard(&id, shard) {
            return id;
        }
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
