//! The MatchmakerService and the pairing loop.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use baduk_ai::Level;
use prost::Message as _;
use tonic::{Request, Response, Status};
use ttakji_platform::bus::{Bus, user_channel};
use ttakji_platform::grpc::observe;
use ttakji_platform::now_unix_ms;
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::matchmaker_service_server::MatchmakerService;

use crate::pairing::{Pairing, plan};
use crate::tickets::{ChallengeRecord, Match, PoolKey, State, Take, Ticket, Tickets};
use crate::{AuthorityClient, Config};

/// How long a pool's pairing lease lasts without renewal.
const LEASE: Duration = Duration::from_secs(2);
/// A claim older than this whose game was never finished is taken up again.
const STALE_CLAIM: Duration = Duration::from_secs(10);
/// Games made at once by one pairing round.
const PARALLEL_GAMES: usize = 32;

/// The matchmaker's handlers and pairing loop.
#[derive(Debug, Clone)]
pub struct Matchmaker {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    tickets: Tickets,
    bus: Bus,
    authority: AuthorityClient,
    /// This instance's name in leases.
    instance: String,
}

fn store_error(e: &crate::tickets::StoreError) -> Status {
    tracing::error!(error = %e, "ticket store");
    Status::unavailable("the queue cannot be reached; try again")
}

fn id_ok(id: &str, what: &str) -> Result<(), Status> {
    ttakji_platform::grpc::id(id, what).map(|_| ())
}

/// A pool from the wire, checked.
fn pool(p: Option<&pb::Pool>) -> Result<PoolKey, Status> {
    let p = p.cloned().unwrap_or_default();
    let board_size = match p.board_size {
        0 => 9,
        9 | 13 | 19 => p.board_size,
        other => {
            return Err(Status::invalid_argument(format!(
                "board size {other} is not offered: use 9, 13 or 19"
            )));
        }
    };
    let ruleset = if p.ruleset.is_empty() {
        "ttakji".to_owned()
    } else {
        p.ruleset
    };
    baduk::Preset::parse(&ruleset).map_err(|e| Status::invalid_argument(e.to_string()))?;
    Ok(PoolKey {
        board_size,
        ruleset,
        ranked: p.ranked,
    })
}

fn pool_pb(p: &PoolKey) -> pb::Pool {
    pb::Pool {
        board_size: p.board_size,
        ruleset: p.ruleset.clone(),
        ranked: p.ranked,
    }
}

fn color_of(letter: &str) -> pb::Color {
    match letter {
        "B" => pb::Color::Black,
        "W" => pb::Color::White,
        _ => pb::Color::Unspecified,
    }
}

fn level_pb(name: &str) -> pb::AiLevel {
    match name {
        "easy" => pb::AiLevel::Easy,
        "normal" => pb::AiLevel::Normal,
        "hard" => pb::AiLevel::Hard,
        _ => pb::AiLevel::Unspecified,
    }
}

/// Black or White for the first ticket of a game, drawn from its random
/// id: random, and the same every time the same game is made.
fn first_is_black(game_id: &str) -> bool {
    game_id.bytes().last().is_some_and(|b| b % 2 == 0)
}

fn new_game_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl Matchmaker {
    #[must_use]
    pub fn new(
        config: Config,
        tickets: Tickets,
        bus: Bus,
        authority: AuthorityClient,
    ) -> Matchmaker {
        Matchmaker {
            inner: Arc::new(Inner {
                config,
                tickets,
                bus,
                authority,
                instance: uuid::Uuid::new_v4().simple().to_string(),
            }),
        }
    }

    async fn ticket_pb(&self, t: &Ticket) -> Result<pb::Ticket, Status> {
        let (position, waiting) = if t.state == State::Waiting {
            self.inner
                .tickets
                .position(t)
                .await
                .map_err(|e| store_error(&e))?
        } else {
            (0, 0)
        };
        let state = match t.state {
            State::Waiting => pb::TicketState::Waiting,
            State::Pairing => pb::TicketState::Pairing,
            State::Matched => pb::TicketState::Matched,
            State::Cancelled => pb::TicketState::Cancelled,
        };
        Ok(pb::Ticket {
            ticket_id: t.id.clone(),
            user_id: t.user_id.clone(),
            pool: Some(pool_pb(&t.pool)),
            state: state as i32,
            waited_ms: now_unix_ms() - t.enqueued_ms,
            position,
            waiting,
            game_id: if t.state == State::Matched {
                t.game_id.clone()
            } else {
                String::new()
            },
            opponent: (t.state == State::Matched).then(|| pb::Player {
                user_id: t.opponent_user.clone(),
                nickname: t.opponent_name.clone(),
                ai_level: level_pb(&t.opponent_ai) as i32,
            }),
            color: color_of(&t.color) as i32,
        })
    }

    async fn notify(&self, user_id: &str, type_name: &str, payload: Vec<u8>) {
        if let Err(e) = self
            .inner
            .bus
            .publish(&user_channel(user_id), type_name, payload)
            .await
        {
            tracing::warn!(error = %e, "player not notified; their stream polls");
        }
    }

    /// Pairs every pool this instance holds the lease of, every tick, until shutdown.
    pub async fn pair_until(self, mut shutdown: Shutdown) {
        let mut tick = tokio::time::interval(self.inner.config.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.wait() => return,
                _ = tick.tick() => {}
            }
            if let Err(e) = self.pair_round().await {
                tracing::warn!(error = %e, "pairing round failed");
            }
        }
    }

    /// One round over every pool.
    ///
    /// # Errors
    /// When the store cannot be read.
    pub async fn pair_round(&self) -> Result<(), crate::tickets::StoreError> {
        let tickets = &self.inner.tickets;
        for pool in tickets.pools().await? {
            if !tickets.lease(&pool, &self.inner.instance, LEASE).await? {
                continue;
            }
            let now = now_unix_ms();
            self.finish_stale_claims(&pool, now).await?;
            let mut waiting = tickets.waiting(&pool).await?;
            let rules = &self.inner.config.rules;
            let grace = i64::try_from(rules.grace.as_millis()).unwrap_or(i64::MAX);
            let ttl = i64::try_from(rules.ticket_ttl.as_millis()).unwrap_or(i64::MAX);
            let mut gone = Vec::new();
            waiting.retain(|t| {
                let keep = now - t.seen_ms <= grace && now - t.enqueued_ms <= ttl;
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
            let by_id: HashMap<&str, &Ticket> =
                waiting.iter().map(|t| (t.id.as_str(), t)).collect();
            let mut games = tokio::task::JoinSet::new();
            for pairing in plan(&waiting, now, rules) {
                let (a, b) = match &pairing {
                    Pairing::Pair(a, b) => (a.as_str(), Some(b.as_str())),
                    Pairing::Computer(a) => (a.as_str(), None),
                };
                let game_id = new_game_id();
                let ids: Vec<&str> = std::iter::once(a).chain(b).collect();
                if !tickets.claim(&ids, &game_id, now).await? {
                    continue;
                }
                tickets.note_claims(&pool, &ids, now).await?;
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
        }
        Ok(())
    }

    /// Claims an instance left unfinished (it died between the claim and
    /// the match) are finished by the lease holder: the game id was chosen
    /// with the claim, so the game is made once.
    async fn finish_stale_claims(
        &self,
        pool: &PoolKey,
        now: i64,
    ) -> Result<(), crate::tickets::StoreError> {
        let before = now - i64::try_from(STALE_CLAIM.as_millis()).unwrap_or(0);
        let stale = self.inner.tickets.stale_claims(pool, before).await?;
        let mut by_game: HashMap<String, Vec<Ticket>> = HashMap::new();
        for t in stale {
            by_game.entry(t.game_id.clone()).or_default().push(t);
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
    /// tickets back in the queue if the game cannot be made.
    #[tracing::instrument(skip_all, fields(game_id = %game_id, ticket_a = %a.id, ticket_b = b.as_ref().map_or("computer", |t| t.id.as_str())))]
    async fn make_game(&self, a: Ticket, b: Option<Ticket>, game_id: String) {
        let a_black = first_is_black(&game_id);
        let seat_of = |t: &Ticket| pb::Seat {
            user_id: t.user_id.clone(),
            nickname: t.nickname.clone(),
            ai_level: 0,
        };
        let level = Level::nearest(a.rating);
        let computer = pb::Seat {
            user_id: String::new(),
            nickname: String::new(),
            ai_level: match level {
                Level::Easy => pb::AiLevel::Easy,
                Level::Normal => pb::AiLevel::Normal,
                Level::Hard => pb::AiLevel::Hard,
            } as i32,
        };
        let other = b.as_ref().map_or(computer, seat_of);
        let (black, white) = if a_black {
            (seat_of(&a), other)
        } else {
            (other, seat_of(&a))
        };
        let request = pb::CreateGameRequest {
            board_size: a.pool.board_size,
            ruleset: a.pool.ruleset.clone(),
            black: Some(black),
            white: Some(white),
            seconds_per_move: if b.is_some() {
                self.inner.config.seconds_per_move
            } else {
                0
            },
            game_id: game_id.clone(),
            ranked: a.pool.ranked && b.is_some(),
        };
        let ids: Vec<&str> = std::iter::once(a.id.as_str())
            .chain(b.as_ref().map(|t| t.id.as_str()))
            .collect();
        let game = match self.create_game(request).await {
            Ok(game) => game,
            Err(status) => {
                tracing::error!(%status, "game not made; the tickets wait again");
                if let Err(e) = self.inner.tickets.release(&ids).await {
                    tracing::error!(error = %e, "tickets not released; the next lease holder retries the game");
                }
                return;
            }
        };
        // The players are told the seats as the authority made them (it
        // names a computer seat "Easy AI", say).
        let (a_color, b_color) = if a_black { ("B", "W") } else { ("W", "B") };
        let (a_seat, b_seat) = if a_black {
            (
                game.black.unwrap_or_default(),
                game.white.unwrap_or_default(),
            )
        } else {
            (
                game.white.unwrap_or_default(),
                game.black.unwrap_or_default(),
            )
        };
        let mut matches = vec![(
            a.clone(),
            Match {
                ticket_id: a.id.clone(),
                color: a_color.to_owned(),
                opponent_user: b_seat.user_id.clone(),
                opponent_name: b_seat.nickname.clone(),
                opponent_ai: if b.is_some() {
                    String::new()
                } else {
                    level.name().to_owned()
                },
            },
        )];
        if let Some(b) = &b {
            matches.push((
                b.clone(),
                Match {
                    ticket_id: b.id.clone(),
                    color: b_color.to_owned(),
                    opponent_user: a_seat.user_id.clone(),
                    opponent_name: a_seat.nickname.clone(),
                    opponent_ai: String::new(),
                },
            ));
        } else {
            metrics::counter!("ttakji_ai_fallbacks_total").increment(1);
        }
        for (t, m) in matches {
            if let Err(e) = self.inner.tickets.finish(&m).await {
                tracing::error!(error = %e, "match not recorded; the next lease holder retries");
                return;
            }
            let waited = (now_unix_ms() - t.enqueued_ms).max(0) as f64 / 1000.0;
            metrics::histogram!("ttakji_match_wait_seconds").record(waited);
            if let Ok(Some(done)) = self.inner.tickets.get(&t.id).await
                && let Ok(pb_ticket) = self.ticket_pb(&done).await
            {
                self.notify(&t.user_id, "ttakji.v1.Ticket", pb_ticket.encode_to_vec())
                    .await;
            }
        }
        tracing::info!("match made");
    }

    async fn create_game(
        &self,
        request: pb::CreateGameRequest,
    ) -> Result<pb::GameSnapshot, Status> {
        self.inner
            .authority
            .clone()
            .create_game(request)
            .await?
            .into_inner()
            .game
            .ok_or_else(|| Status::internal("the authority sent no game"))
    }

    fn challenge_pb(&self, c: &ChallengeRecord) -> pb::Challenge {
        pb::Challenge {
            code: c.code.clone(),
            link: format!("{}{}", self.inner.config.link_base, c.code),
            pool: Some(pool_pb(&c.pool)),
            maker: Some(pb::Player {
                user_id: c.maker_id.clone(),
                nickname: c.maker_name.clone(),
                ai_level: 0,
            }),
            game_id: c.game_id.clone(),
            expires_at_unix_ms: c.expires_ms,
        }
    }
}

/// Codes are read out and typed: no 0/O, 1/I/L.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

fn new_code() -> String {
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(6)
        .map(|b| char::from(CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()]))
        .collect()
}

#[tonic::async_trait]
impl MatchmakerService for Matchmaker {
    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id, ticket_id))]
    async fn enqueue(
        &self,
        request: Request<pb::EnqueueRequest>,
    ) -> Result<Response<pb::EnqueueResponse>, Status> {
        observe(
            "Enqueue",
            async {
                let req = request.into_inner();
                id_ok(&req.user_id, "user_id")?;
                let pool = pool(req.pool.as_ref())?;
                let now = now_unix_ms();
                let ticket = Ticket {
                    id: uuid::Uuid::new_v4().simple().to_string(),
                    user_id: req.user_id,
                    nickname: req.nickname.chars().take(40).collect(),
                    rating: if req.rating == 0 { 1200 } else { req.rating },
                    pool,
                    enqueued_ms: now,
                    seen_ms: now,
                    state: State::Waiting,
                    game_id: String::new(),
                    color: String::new(),
                    opponent_user: String::new(),
                    opponent_name: String::new(),
                    opponent_ai: String::new(),
                    claimed_ms: 0,
                };
                let id = self
                    .inner
                    .tickets
                    .enqueue(&ticket)
                    .await
                    .map_err(|e| store_error(&e))?;
                tracing::Span::current().record("ticket_id", id.as_str());
                let stored = self
                    .inner
                    .tickets
                    .get(&id)
                    .await
                    .map_err(|e| store_error(&e))?
                    .ok_or_else(|| Status::internal("the ticket vanished"))?;
                Ok(Response::new(pb::EnqueueResponse {
                    ticket: Some(self.ticket_pb(&stored).await?),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(ticket_id = %request.get_ref().ticket_id))]
    async fn get_ticket(
        &self,
        request: Request<pb::GetTicketRequest>,
    ) -> Result<Response<pb::GetTicketResponse>, Status> {
        observe(
            "GetTicket",
            async {
                let req = request.into_inner();
                id_ok(&req.ticket_id, "ticket_id")?;
                let t = self
                    .inner
                    .tickets
                    .get(&req.ticket_id)
                    .await
                    .map_err(|e| store_error(&e))?
                    .filter(|t| req.user_id.is_empty() || t.user_id == req.user_id)
                    .ok_or_else(|| {
                        Status::not_found(format!("there is no ticket {} of yours", req.ticket_id))
                    })?;
                // Asked by the player's own stream (with their id): they are
                // still there.
                if t.state == State::Waiting && !req.user_id.is_empty() {
                    self.inner
                        .tickets
                        .touch(&t.id, now_unix_ms())
                        .await
                        .map_err(|e| store_error(&e))?;
                }
                Ok(Response::new(pb::GetTicketResponse {
                    ticket: Some(self.ticket_pb(&t).await?),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(ticket_id = %request.get_ref().ticket_id))]
    async fn cancel_ticket(
        &self,
        request: Request<pb::CancelTicketRequest>,
    ) -> Result<Response<pb::CancelTicketResponse>, Status> {
        observe(
            "CancelTicket",
            async {
                let req = request.into_inner();
                id_ok(&req.ticket_id, "ticket_id")?;
                let user = (!req.user_id.is_empty()).then_some(req.user_id.as_str());
                match self
                    .inner
                    .tickets
                    .cancel(&req.ticket_id, user)
                    .await
                    .map_err(|e| store_error(&e))?
                {
                    None => {
                        return Err(Status::not_found(format!(
                            "there is no ticket {} of yours",
                            req.ticket_id
                        )));
                    }
                    Some(State::Pairing) => {
                        return Err(Status::failed_precondition(
                            "too late to cancel: your game is being made",
                        ));
                    }
                    Some(State::Matched) => {
                        return Err(Status::failed_precondition(
                            "too late to cancel: you have been matched",
                        ));
                    }
                    Some(State::Waiting | State::Cancelled) => {}
                }
                let t = self
                    .inner
                    .tickets
                    .get(&req.ticket_id)
                    .await
                    .map_err(|e| store_error(&e))?
                    .ok_or_else(|| Status::not_found("the ticket vanished"))?;
                Ok(Response::new(pb::CancelTicketResponse {
                    ticket: Some(self.ticket_pb(&t).await?),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id))]
    async fn make_challenge(
        &self,
        request: Request<pb::MakeChallengeRequest>,
    ) -> Result<Response<pb::MakeChallengeResponse>, Status> {
        observe(
            "MakeChallenge",
            async {
                let req = request.into_inner();
                id_ok(&req.user_id, "user_id")?;
                let pool = pool(req.pool.as_ref())?;
                let ttl = self.inner.config.challenge_ttl;
                for _ in 0..8 {
                    let record = ChallengeRecord {
                        code: new_code(),
                        maker_id: req.user_id.clone(),
                        maker_name: req.nickname.chars().take(40).collect(),
                        pool: pool.clone(),
                        expires_ms: now_unix_ms()
                            + i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
                        game_id: String::new(),
                    };
                    if self
                        .inner
                        .tickets
                        .make_challenge(&record, ttl)
                        .await
                        .map_err(|e| store_error(&e))?
                    {
                        metrics::counter!("ttakji_challenges_total", "event" => "made")
                            .increment(1);
                        tracing::info!(code = %record.code, "challenge made");
                        return Ok(Response::new(pb::MakeChallengeResponse {
                            challenge: Some(self.challenge_pb(&record)),
                        }));
                    }
                }
                Err(Status::unavailable("no free challenge code; try again"))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(code = %request.get_ref().code))]
    async fn get_challenge(
        &self,
        request: Request<pb::GetChallengeRequest>,
    ) -> Result<Response<pb::GetChallengeResponse>, Status> {
        observe(
            "GetChallenge",
            async {
                let code = request.into_inner().code.to_ascii_uppercase();
                let c = self
                    .inner
                    .tickets
                    .challenge(&code)
                    .await
                    .map_err(|e| store_error(&e))?
                    .ok_or_else(|| {
                        Status::not_found(format!("challenge {code} does not exist or has expired"))
                    })?;
                Ok(Response::new(pb::GetChallengeResponse {
                    challenge: Some(self.challenge_pb(&c)),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(code = %request.get_ref().code, user_id = %request.get_ref().user_id))]
    async fn join_challenge(
        &self,
        request: Request<pb::JoinChallengeRequest>,
    ) -> Result<Response<pb::JoinChallengeResponse>, Status> {
        observe(
            "JoinChallenge",
            async {
                let req = request.into_inner();
                id_ok(&req.user_id, "user_id")?;
                let code = req.code.trim().to_ascii_uppercase();
                if code.len() != 6 || !code.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
                    return Err(Status::invalid_argument(format!(
                        "{:?} is not a challenge code",
                        req.code.chars().take(20).collect::<String>()
                    )));
                }
                let game_id = new_game_id();
                let keep = Duration::from_secs(3600);
                let record = match self
                    .inner
                    .tickets
                    .take_challenge(&code, &req.user_id, &game_id, keep)
                    .await
                    .map_err(|e| store_error(&e))?
                {
                    Take::Taken(record) => record,
                    Take::Missing => {
                        return Err(Status::not_found(format!(
                            "challenge {code} does not exist or has expired"
                        )));
                    }
                    Take::Used => {
                        return Err(Status::failed_precondition(format!(
                            "challenge {code} has already been used"
                        )));
                    }
                    Take::Own => {
                        return Err(Status::failed_precondition(
                            "this is your own challenge: send the code to a friend",
                        ));
                    }
                };
                let maker = pb::Seat {
                    user_id: record.maker_id.clone(),
                    nickname: record.maker_name.clone(),
                    ai_level: 0,
                };
                let joiner = pb::Seat {
                    user_id: req.user_id.clone(),
                    nickname: req.nickname.chars().take(40).collect(),
                    ai_level: 0,
                };
                let (black, white) = if first_is_black(&game_id) {
                    (maker, joiner)
                } else {
                    (joiner, maker)
                };
                let game = self
                    .create_game(pb::CreateGameRequest {
                        board_size: record.pool.board_size,
                        ruleset: record.pool.ruleset.clone(),
                        black: Some(black),
                        white: Some(white),
                        seconds_per_move: self.inner.config.seconds_per_move,
                        game_id: game_id.clone(),
                        ranked: false,
                    })
                    .await?;
                metrics::counter!("ttakji_challenges_total", "event" => "joined").increment(1);
                let challenge = self.challenge_pb(&record);
                self.notify(
                    &record.maker_id,
                    "ttakji.v1.Challenge",
                    challenge.encode_to_vec(),
                )
                .await;
                Ok(Response::new(pb::JoinChallengeResponse {
                    challenge: Some(challenge),
                    game: Some(game),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn agree_rematch(
        &self,
        request: Request<pb::AgreeRematchRequest>,
    ) -> Result<Response<pb::AgreeRematchResponse>, Status> {
        observe(
            "AgreeRematch",
            async {
                let req = request.into_inner();
                id_ok(&req.game_id, "game_id")?;
                id_ok(&req.user_id, "user_id")?;
                let old = self
                    .inner
                    .authority
                    .clone()
                    .load_game(pb::LoadGameRequest {
                        game_id: req.game_id.clone(),
                        user_id: req.user_id.clone(),
                        include_score_preview: false,
                    })
                    .await?
                    .into_inner()
                    .game
                    .ok_or_else(|| Status::internal("the authority sent no game"))?;
                if old.status != pb::GameStatus::Finished as i32 {
                    return Err(Status::failed_precondition("the game is not over yet"));
                }
                let (black, white) = (
                    old.black.clone().unwrap_or_default(),
                    old.white.clone().unwrap_or_default(),
                );
                let people: Vec<&str> = [&black, &white]
                    .into_iter()
                    .filter(|p| !p.user_id.is_empty())
                    .map(|p| p.user_id.as_str())
                    .collect();
                if !people.contains(&req.user_id.as_str()) {
                    return Err(Status::permission_denied(
                        "only the players of a game may ask for a rematch",
                    ));
                }
                let keep = Duration::from_secs(600);
                let agreed = self
                    .inner
                    .tickets
                    .agree_rematch(&req.game_id, &req.user_id, keep)
                    .await
                    .map_err(|e| store_error(&e))?;
                let mut rematch_id = String::new();
                if people.iter().all(|p| agreed.iter().any(|a| a == p)) {
                    let id = self
                        .inner
                        .tickets
                        .settle_rematch(&req.game_id, &new_game_id(), keep)
                        .await
                        .map_err(|e| store_error(&e))?;
                    let seat = |p: &pb::Player| pb::Seat {
                        user_id: p.user_id.clone(),
                        nickname: p.nickname.clone(),
                        ai_level: if p.user_id.is_empty() { p.ai_level } else { 0 },
                    };
                    // Colours swapped; the same clock and pool.
                    self.create_game(pb::CreateGameRequest {
                        board_size: old.board_size,
                        ruleset: old.ruleset.clone(),
                        black: Some(seat(&white)),
                        white: Some(seat(&black)),
                        seconds_per_move: old.clock.as_ref().map_or(0, |c| c.seconds_per_move),
                        game_id: id.clone(),
                        ranked: false,
                    })
                    .await?;
                    rematch_id = id;
                }
                let answer = pb::AgreeRematchResponse {
                    new_game_id: rematch_id,
                    agreed_user_ids: agreed,
                };
                for p in &people {
                    self.notify(p, "ttakji.v1.AgreeRematchResponse", answer.encode_to_vec())
                        .await;
                }
                Ok(Response::new(answer))
            }
            .await,
        )
    }
}
