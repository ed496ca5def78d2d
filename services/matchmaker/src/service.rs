//! The MatchmakerService over gRPC: each handler reads its request into a
//! domain value ([`crate::wire`]), asks the store, and answers; the pairing
//! itself runs in [`crate::rounds`].

use std::time::Duration;

use tonic::Code;
use tonic::{Request, Response, Status};
use ttakji_platform::bus;
use ttakji_platform::now_unix_ms;
use ttakji_platform::refusal::refused;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::matchmaker_service_server::MatchmakerService;
use ttakji_proto::v1 as pb;

use crate::matchmaker::{Matchmaker, first_is_black, random_id};
use crate::tickets::{ChallengeRecord, State, Take, Ticket};
use crate::wire::{
    AcceptChallenge, CODE_ALPHABET, FindMatch, PlayerInPool, RematchAgreement, TicketQuery,
};

/// How many fresh codes a challenge tries before giving up.
const CODE_DRAWS: usize = 8;
/// How long a joined challenge is kept to answer its players.
const JOINED_CHALLENGE_KEPT: Duration = Duration::from_secs(3600);
/// How long a rematch agreement waits for the other player.
const REMATCH_KEPT: Duration = Duration::from_secs(600);

fn new_code() -> String {
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(6)
        .map(|b| char::from(CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()]))
        .collect()
}

/// The seat of a player of a finished game, for its rematch.
fn seat(p: &pb::Player) -> internal::Seat {
    internal::Seat {
        user_id: p.user_id.clone(),
        nickname: p.nickname.clone(),
        ai_level: if p.user_id.is_empty() { p.ai_level } else { 0 },
        // A rematch's computer thinks where the last game's did.
        ai_engine: if p.user_id.is_empty() { p.ai_engine } else { 0 },
    }
}

impl Matchmaker {
    /// The ticket as stored now, which the caller has just changed.
    async fn reread(
        &self,
        id: &str,
        vanished: fn(&'static str) -> Status,
    ) -> Result<pb::Ticket, Status> {
        let t = self
            .tickets()
            .get(id)
            .await?
            .ok_or_else(|| vanished("the ticket vanished"))?;
        Ok(self.ticket_pb(&t).await?)
    }
}

#[tonic::async_trait]
impl MatchmakerService for Matchmaker {
    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id, ticket_id))]
    async fn find_match(
        &self,
        request: Request<internal::FindMatchRequest>,
    ) -> Result<Response<internal::FindMatchResponse>, Status> {
        {
            let FindMatch {
                player,
                rating,
                resume,
            } = FindMatch::try_from(request.into_inner())?;
            let now = now_unix_ms();
            let (ticket_id, waited_ms) = match resume {
                Some((id, waited_ms)) => {
                    // Still there (a gateway asked in a blip): as it is.
                    if let Some(t) = self.tickets().get(&id).await? {
                        if t.user_id != *player.user_id {
                            return Err(Status::permission_denied(format!(
                                "ticket {id} is not this player's"
                            )));
                        }
                        return Ok(Response::new(internal::FindMatchResponse {
                            ticket: Some(self.ticket_pb(&t).await?),
                        }));
                    }
                    let ttl = i64::try_from(self.config().rules.ticket_ttl.as_millis())
                        .unwrap_or(i64::MAX);
                    (id, waited_ms.min(ttl))
                }
                None => (random_id(), 0),
            };
            let mut ticket = Ticket::waiting(
                ticket_id,
                player.user_id.into_string(),
                player.nickname,
                rating,
                player.pool,
                now,
            );
            ticket.enqueued_ms = now - waited_ms;
            if waited_ms > 0 {
                tracing::info!(ticket_id = %ticket.id, waited_ms, "a lost ticket queued again");
            }
            let id = self.tickets().enqueue(&ticket).await?;
            tracing::Span::current().record("ticket_id", id.as_str());
            Ok(Response::new(internal::FindMatchResponse {
                ticket: Some(self.reread(&id, Status::internal).await?),
            }))
        }
    }

    #[tracing::instrument(skip_all, fields(ticket_id = %request.get_ref().ticket_id))]
    async fn get_ticket(
        &self,
        request: Request<internal::GetTicketRequest>,
    ) -> Result<Response<internal::GetTicketResponse>, Status> {
        {
            let query = TicketQuery::try_from(request.into_inner())?;
            let t = self
                .tickets()
                .get(&query.ticket_id)
                .await?
                .filter(|t| query.user_id.as_ref().is_none_or(|u| *u == t.user_id))
                .ok_or_else(|| query.not_yours())?;
            // Asked by the player's own stream (with their id): they are
            // still there.
            if t.state == State::Waiting && query.user_id.is_some() {
                self.tickets().touch(&t.id, now_unix_ms()).await?;
            }
            Ok(Response::new(internal::GetTicketResponse {
                ticket: Some(self.ticket_pb(&t).await?),
            }))
        }
    }

    #[tracing::instrument(skip_all, fields(ticket_id = %request.get_ref().ticket_id))]
    async fn cancel_match(
        &self,
        request: Request<internal::CancelMatchRequest>,
    ) -> Result<Response<internal::CancelMatchResponse>, Status> {
        {
            let query = TicketQuery::try_from(request.into_inner())?;
            let was = self
                .tickets()
                .cancel(&query.ticket_id, query.user_id.as_deref())
                .await?;
            match was {
                None => return Err(query.not_yours()),
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
            Ok(Response::new(internal::CancelMatchResponse {
                ticket: Some(self.reread(&query.ticket_id, Status::not_found).await?),
            }))
        }
    }

    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id))]
    async fn create_challenge(
        &self,
        request: Request<internal::CreateChallengeRequest>,
    ) -> Result<Response<internal::CreateChallengeResponse>, Status> {
        {
            let req = request.into_inner();
            let terms = crate::wire::table_terms(&req)?;
            let maker = PlayerInPool::try_from(req)?;
            let ttl = self.config().challenge_ttl;
            for _ in 0..CODE_DRAWS {
                let record = ChallengeRecord {
                    code: new_code(),
                    maker_id: maker.user_id.to_string(),
                    maker_name: maker.nickname.clone(),
                    pool: maker.pool.clone(),
                    expires_ms: now_unix_ms() + i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
                    game_id: None,
                    terms: terms.clone(),
                };
                if self.tickets().make_challenge(&record, ttl).await? {
                    metrics::counter!("ttakji_challenges_total", "event" => "made").increment(1);
                    tracing::info!(code = %record.code, "challenge made");
                    return Ok(Response::new(internal::CreateChallengeResponse {
                        challenge: Some(self.challenge_pb(&record)),
                    }));
                }
            }
            Err(Status::unavailable("no free challenge code; try again"))
        }
    }

    #[tracing::instrument(skip_all, fields(code = %request.get_ref().code))]
    async fn get_challenge(
        &self,
        request: Request<internal::GetChallengeRequest>,
    ) -> Result<Response<internal::GetChallengeResponse>, Status> {
        {
            let code = request.into_inner().code.to_ascii_uppercase();
            let c = self.tickets().challenge(&code).await?.ok_or_else(|| {
                refused(
                    Code::NotFound,
                    "CHALLENGE_NOT_FOUND",
                    format!("challenge {code} does not exist or has expired"),
                )
            })?;
            Ok(Response::new(internal::GetChallengeResponse {
                challenge: Some(self.challenge_pb(&c)),
            }))
        }
    }

    #[tracing::instrument(skip_all, fields(code = %request.get_ref().code, user_id = %request.get_ref().user_id))]
    async fn accept_challenge(
        &self,
        request: Request<internal::AcceptChallengeRequest>,
    ) -> Result<Response<internal::AcceptChallengeResponse>, Status> {
        {
            let req = AcceptChallenge::try_from(request.into_inner())?;
            let code = &req.code;
            let game_id = random_id();
            let taken = self
                .tickets()
                .accept_challenge(code, &req.joiner_id, &game_id, JOINED_CHALLENGE_KEPT)
                .await?;
            let record = match taken {
                Take::Taken(record) => record,
                Take::Missing => {
                    return Err(refused(
                        Code::NotFound,
                        "CHALLENGE_NOT_FOUND",
                        format!("challenge {code} does not exist or has expired"),
                    ));
                }
                Take::Used => {
                    return Err(refused(
                        Code::FailedPrecondition,
                        "CHALLENGE_USED",
                        format!("challenge {code} has already been used"),
                    ));
                }
                Take::Own => {
                    return Err(refused(
                        Code::FailedPrecondition,
                        "OWN_CHALLENGE",
                        "this is your own challenge: send the code to a friend",
                    ));
                }
            };
            let maker = internal::Seat {
                user_id: record.maker_id.clone(),
                nickname: record.maker_name.clone(),
                ..Default::default()
            };
            let joiner = internal::Seat {
                user_id: req.joiner_id.to_string(),
                nickname: req.joiner_name.clone(),
                ..Default::default()
            };
            let (black, white) = if first_is_black(&game_id) {
                (maker, joiner)
            } else {
                (joiner, maker)
            };
            let game = self
                .create_game(internal::CreateGameRequest {
                    board_size: record.pool.board_size,
                    ruleset: record.pool.ruleset.clone(),
                    black: Some(black),
                    white: Some(white),
                    seconds_per_move: record
                        .terms
                        .seconds_per_move
                        .unwrap_or(self.config().seconds_per_move),
                    game_id: game_id.clone(),
                    ranked: false,
                    komi_half_points: record.terms.komi_half,
                    keep_colors_on_rematch: record.terms.keep_colors,
                    computer_stands_in: record.terms.stand_in,
                    ..Default::default()
                })
                .await?;
            metrics::counter!("ttakji_challenges_total", "event" => "joined").increment(1);
            let challenge = self.challenge_pb(&record);
            self.notify(&bus::challenges(&record.maker_id), &challenge)
                .await;
            Ok(Response::new(internal::AcceptChallengeResponse {
                challenge: Some(challenge),
                game: Some(game),
            }))
        }
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn rematch(
        &self,
        request: Request<internal::RematchRequest>,
    ) -> Result<Response<internal::RematchResponse>, Status> {
        {
            let req = RematchAgreement::try_from(request.into_inner())?;
            let old = self
                .authority()
                .ask(
                    internal::GetGameRequest {
                        game_id: req.game_id.to_string(),
                        user_id: req.user_id.to_string(),
                        include_score_preview: false,
                    },
                    |mut c, r| async move { c.get_game(r).await },
                )
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
            let agreed = self
                .tickets()
                .agree_rematch(&req.game_id, &req.user_id, REMATCH_KEPT)
                .await?;
            let mut rematch_id = String::new();
            if people.iter().all(|p| agreed.iter().any(|a| a == p)) {
                let id = self
                    .tickets()
                    .settle_rematch(&req.game_id, &random_id(), REMATCH_KEPT)
                    .await?;
                // The same table: its size, rules, komi and clock, with
                // colours swapped unless its host chose to keep them.
                let (new_black, new_white) = if old.keep_colors_on_rematch {
                    (&black, &white)
                } else {
                    (&white, &black)
                };
                self.create_game(internal::CreateGameRequest {
                    board_size: old.board_size,
                    ruleset: old.ruleset.clone(),
                    black: Some(seat(new_black)),
                    white: Some(seat(new_white)),
                    seconds_per_move: old.seconds_per_move,
                    game_id: id.clone(),
                    ranked: false,
                    komi_half_points: Some(crate::wire::komi_half_points(old.komi)?),
                    keep_colors_on_rematch: old.keep_colors_on_rematch,
                    computer_stands_in: old.computer_stands_in,
                    // A rematch takes the place of a finished game.
                    server_ai_limit: 0,
                    // Paired by the players, not by rating.
                    ladder_rating: 0,
                })
                .await?;
                rematch_id = id;
            }
            let answer = internal::RematchResponse {
                new_game_id: rematch_id,
                agreed_user_ids: agreed,
            };
            for p in &people {
                self.notify(&bus::rematches(p), &answer).await;
            }
            Ok(Response::new(answer))
        }
    }
}
