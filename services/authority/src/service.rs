//! The authority's gRPC service: requests become domain values here and
//! go to the game's actor.

use baduk::Rules;
use tonic::{Request, Response, Status};
use ttakji_proto::convert as wire;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_server::AuthorityService;
use ttakji_proto::v1 as pb;
use ttakji_proto::{GameId, UserId};

use crate::actor::Command;
use crate::convert;
use crate::game::{CountAction, Requested};
use crate::ownership::Placement;
use crate::records::{AiEngine, GameMeta, Seat};
use crate::registry::Registry;
use crate::{codec, listing, store};
use ttakji_platform::authorities::{OWNER_HEADER, redirect};
use ttakji_platform::refusal::{resource_exhausted, unavailable};

/// The AuthorityService implementation.
#[derive(Debug, Clone)]
pub struct Authority {
    registry: Registry,
    /// This instance's URL as the owner metadata of its answers.
    me: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
}

impl Authority {
    #[must_use]
    pub fn new(registry: Registry) -> Authority {
        let me = registry.ownership().me().parse().ok();
        Authority { registry, me }
    }

    /// Whether this instance serves `game_id` now (its answers then name
    /// it as the owner); a call about a game another instance serves is
    /// redirected there. A game served nowhere right now goes to the
    /// registry, which answers a finished game from anywhere and refuses
    /// one being played until an owner has it.
    fn serves(&self, game_id: &str) -> Result<bool, Status> {
        match self.registry.ownership().placement(game_id) {
            Placement::Here { .. } => Ok(true),
            Placement::Elsewhere(owner) => Err(redirect(game_id, &owner)),
            Placement::Nobody => Ok(false),
        }
    }

    /// A call about a game: its id parsed, then whether this instance
    /// serves it ([`Self::serves`]).
    fn about(&self, game_id: &str) -> Result<(GameId, bool), Status> {
        let id = GameId::parse(game_id)?;
        let owner = self.serves(&id)?;
        Ok((id, owner))
    }

    /// A call by one of a game's players: [`Self::about`], and the
    /// player's id parsed.
    fn by_player(&self, game_id: &str, user_id: &str) -> Result<(GameId, UserId, bool), Status> {
        let (id, owner) = self.about(game_id)?;
        Ok((id, UserId::parse(user_id)?, owner))
    }

    /// An answer from here, naming this instance when it owns the game.
    fn answer<T>(&self, message: T, owner: bool) -> Response<T> {
        let mut response = Response::new(message);
        if owner && let Some(me) = &self.me {
            response.metadata_mut().insert(OWNER_HEADER, me.clone());
        }
        response
    }
}

/// The longest name a seat may carry.
const MAX_NAME_LEN: usize = 40;

fn seat(seat: Option<&internal::Seat>, which: &str) -> Result<Seat, Status> {
    let seat = seat.ok_or_else(|| Status::invalid_argument(format!("{which} seat is missing")))?;
    if seat.nickname.chars().count() > MAX_NAME_LEN {
        return Err(Status::invalid_argument(format!(
            "{which} seat's name is longer than {MAX_NAME_LEN} characters"
        )));
    }
    if seat.user_id.is_empty() {
        let level = wire::level(seat.ai_level)?;
        let name = if seat.nickname.is_empty() {
            format!("{} AI", capitalised(level.name()))
        } else {
            seat.nickname.clone()
        };
        Ok(Seat {
            user_id: None,
            name,
            ai: Some(level),
        })
    } else {
        if seat.ai_level != pb::AiLevel::Unspecified as i32
            || seat.ai_engine != pb::AiEngine::Unspecified as i32
        {
            return Err(Status::invalid_argument(format!(
                "{which} seat has both a user and a computer level or engine"
            )));
        }
        Ok(Seat {
            user_id: Some(UserId::parse(&seat.user_id)?.into_string()),
            name: seat.nickname.clone(),
            ai: None,
        })
    }
}

/// How long a player refused a game whose computer thinks on the server
/// is told to wait: about a game's last moves against the computer.
const SERVER_AI_RETRY: std::time::Duration = std::time::Duration::from_secs(60);

/// Refuses, with RESOURCE_EXHAUSTED and a retry hint, a game `game_id` of
/// `user_id` whose computer would think on the server when the player
/// already has `limit` such games being played (0: no limit).
async fn within_server_ai_limit(
    registry: &Registry,
    user_id: &str,
    game_id: &str,
    limit: u32,
) -> Result<(), Status> {
    if limit == 0 {
        return Ok(());
    }
    let live = store::server_ai_games(registry.db(), user_id, game_id)
        .await
        .map_err(|e| Status::unavailable(format!("the store cannot be read: {e}")))?;
    if live < i64::from(limit) {
        return Ok(());
    }
    Err(resource_exhausted(
        "SERVER_AI_LIMIT",
        format!(
            "you already play {live} games against the computer thinking on the server (at most {limit}): \
             finish one, or let the computer think in your browser; try again in {} s",
            SERVER_AI_RETRY.as_secs()
        ),
        SERVER_AI_RETRY,
    ))
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

impl Authority {
    /// A game asked for, checked as a new game: its rules, seats, clock
    /// and id (the one given, or a new one of a shard served here).
    async fn new_game(&self, req: &internal::CreateGameRequest) -> Result<GameMeta, Status> {
        let size = wire::board_size(req.board_size)?;
        let ruleset = if req.ruleset.is_empty() {
            "ttakji"
        } else {
            req.ruleset.as_str()
        };
        let mut rules = Rules::named(ruleset)
            .map_err(|e| Status::invalid_argument(e.to_string()))?
            .with_board_size(size);
        if let Some(half) = req.komi_half_points {
            rules = rules.with_komi(wire::komi(half)?);
        }
        let black = seat(req.black.as_ref(), "black")?;
        let white = seat(req.white.as_ref(), "white")?;
        let computer = [&req.black, &req.white]
            .into_iter()
            .flatten()
            .find(|s| s.user_id.is_empty());
        let ai_engine = convert::ai_engine(computer.map_or(0, |s| s.ai_engine))?;
        if black.ai.is_some() && white.ai.is_some() {
            return Err(Status::invalid_argument("a game needs at least one person"));
        }
        if black.user_id.is_some() && black.user_id == white.user_id {
            return Err(Status::invalid_argument("a player cannot take both seats"));
        }
        let meta = GameMeta {
            id: if req.game_id.is_empty() {
                self.registry.ownership().new_local_id().ok_or_else(|| {
                    unavailable(
                        "this authority serves no games right now; try again",
                        std::time::Duration::from_millis(100),
                    )
                })?
            } else if req.game_id.len() == 32
                && req
                    .game_id
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            {
                GameId::parse(&req.game_id)?
            } else {
                return Err(Status::invalid_argument(
                    "game_id must be 32 lowercase hex digits",
                ));
            },
            ranked: req.ranked && black.ai.is_none() && white.ai.is_none(),
            rules,
            black,
            white,
            seconds_per_move: convert::seconds_per_move(req.seconds_per_move)?,
            keep_colors: req.keep_colors_on_rematch,
            created_at: ttakji_platform::now_unix_ms(),
            stand_in: false,
            ai_engine,
            ladder_rating: req.ladder_rating,
        };
        // A stand-in only between two people in a casual game: in
        // a ranked one the clock runs for a player who is away.
        let meta = GameMeta {
            stand_in: req.computer_stands_in && !meta.ranked && !req.ranked && !meta.is_ai_game(),
            ..meta
        };
        if meta.is_ai_game() && meta.ai_engine == AiEngine::Server {
            let person = meta.black.user_id.as_ref().or(meta.white.user_id.as_ref());
            if let Some(person) = person {
                within_server_ai_limit(&self.registry, person, &meta.id, req.server_ai_limit)
                    .await?;
            }
        }
        Ok(meta)
    }
}

/// Where the computer of a game thinks; `None` for a game between people.
fn computer_engine(meta: &GameMeta) -> Option<AiEngine> {
    meta.is_ai_game().then_some(meta.ai_engine)
}

/// Counts a game made, against the computer by where it thinks.
fn count_made(id: &GameId, engine: Option<AiEngine>) {
    tracing::info!(game_id = %id, "game created");
    if let Some(engine) = engine {
        metrics::counter!("ttakji_ai_games_started_total", "engine" => codec::ai_engine_text(engine))
            .increment(1);
    }
}

/// The most games one CreateGames call may ask for.
const MAX_GAMES_AT_ONCE: usize = 256;

#[tonic::async_trait]
impl AuthorityService for Authority {
    #[tracing::instrument(skip_all)]
    async fn create_game(
        &self,
        request: Request<internal::CreateGameRequest>,
    ) -> Result<Response<internal::CreateGameResponse>, Status> {
        let given = request.get_ref().game_id.clone();
        let owner = if given.is_empty() {
            true
        } else {
            self.serves(&given)?
        };
        let req = request.into_inner();
        let meta = self.new_game(&req).await?;
        let (id, engine) = (meta.id.clone(), computer_engine(&meta));
        let game = self.registry.create(meta).await?;
        count_made(&id, engine);
        Ok(self.answer(internal::CreateGameResponse { game: Some(game) }, owner))
    }

    #[tracing::instrument(skip_all, fields(games = request.get_ref().games.len()))]
    async fn create_games(
        &self,
        request: Request<internal::CreateGamesRequest>,
    ) -> Result<Response<internal::CreateGamesResponse>, Status> {
        let asked = request.into_inner().games;
        if asked.len() > MAX_GAMES_AT_ONCE {
            return Err(Status::invalid_argument(format!(
                "{} games asked at once; at most {MAX_GAMES_AT_ONCE}",
                asked.len()
            )));
        }
        // Each game is checked on its own; the ones that pass are made
        // together, in one commit, and answered in the order asked.
        let mut checked = Vec::with_capacity(asked.len());
        let mut metas = Vec::new();
        for req in &asked {
            let meta = if req.game_id.is_empty() {
                Err(Status::invalid_argument(
                    "each game of CreateGames needs its game_id",
                ))
            } else {
                match self.serves(&req.game_id) {
                    Ok(_) => self.new_game(req).await,
                    Err(redirect) => Err(redirect),
                }
            };
            checked.push(meta.map(|meta| {
                let made_as = (meta.id.clone(), computer_engine(&meta));
                metas.push(meta);
                made_as
            }));
        }
        let mut made = self.registry.create_many(metas).await.into_iter();
        let games = checked
            .into_iter()
            .map(|checked| {
                let answer = checked.and_then(|(id, engine)| {
                    let answer = made.next().unwrap_or_else(|| {
                        Err(Status::internal("the registry answered fewer games"))
                    });
                    if answer.is_ok() {
                        count_made(&id, engine);
                    }
                    answer
                });
                match answer {
                    Ok(game) => internal::CreatedGame {
                        game: Some(game),
                        code: 0,
                        message: String::new(),
                    },
                    Err(status) => internal::CreatedGame {
                        game: None,
                        code: status.code() as i32,
                        message: status.message().to_owned(),
                    },
                }
            })
            .collect();
        Ok(Response::new(internal::CreateGamesResponse { games }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_game(
        &self,
        request: Request<internal::GetGameRequest>,
    ) -> Result<Response<internal::GetGameResponse>, Status> {
        let req = request.into_inner();
        let (id, owner) = self.about(&req.game_id)?;
        let preview = req.include_score_preview;
        let game = self
            .registry
            .ask(&id, |reply| Command::Snapshot { preview, reply })
            .await?;
        Ok(self.answer(internal::GetGameResponse { game: Some(game) }, owner))
    }

    async fn submit_action(
        &self,
        request: Request<internal::SubmitActionRequest>,
    ) -> Result<Response<internal::SubmitActionResponse>, Status> {
        let req = request.into_inner();
        ttakji_platform::observed::record_move(&req.game_id, Some(&req.user_id), req.move_number);
        let (id, user, owner) = self.by_player(&req.game_id, &req.user_id)?;
        let action = match &req.action {
            None => {
                return Err(Status::invalid_argument("no action: place, pass or resign"));
            }
            Some(internal::submit_action_request::Action::Pass(_)) => Requested::Pass,
            Some(internal::submit_action_request::Action::Resign(_)) => Requested::Resign,
            Some(internal::submit_action_request::Action::Place(p)) => Requested::Place {
                column: p.column,
                row: p.row,
            },
        };
        let (mv, game) = self
            .registry
            .ask(&id, |reply| Command::Submit {
                span: tracing::Span::current(),
                user_id: user.clone(),
                number: req.move_number,
                action,
                for_computer: req.for_computer,
                reply,
            })
            .await??;
        Ok(self.answer(
            internal::SubmitActionResponse {
                r#move: mv,
                game: Some(game),
            },
            owner,
        ))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn set_ai_engine(
        &self,
        request: Request<internal::SetAiEngineRequest>,
    ) -> Result<Response<internal::SetAiEngineResponse>, Status> {
        let req = request.into_inner();
        let (id, user, owner) = self.by_player(&req.game_id, &req.user_id)?;
        if req.engine == pb::AiEngine::Unspecified as i32 {
            return Err(Status::invalid_argument(
                "engine is unspecified: AI_ENGINE_SERVER or AI_ENGINE_CLIENT",
            ));
        }
        let engine = convert::ai_engine(req.engine)?;
        if engine == AiEngine::Server {
            within_server_ai_limit(&self.registry, &user, &id, req.server_ai_limit).await?;
        }
        let game = self
            .registry
            .ask(&id, |reply| Command::SetAiEngine {
                span: tracing::Span::current(),
                user_id: user.clone(),
                engine,
                reply,
            })
            .await??;
        Ok(self.answer(internal::SetAiEngineResponse { game: Some(game) }, owner))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn undo_move(
        &self,
        request: Request<internal::UndoMoveRequest>,
    ) -> Result<Response<internal::UndoMoveResponse>, Status> {
        let req = request.into_inner();
        let (id, user, owner) = self.by_player(&req.game_id, &req.user_id)?;
        let game = self
            .registry
            .ask(&id, |reply| Command::UndoMove {
                span: tracing::Span::current(),
                user_id: user.clone(),
                move_count: req.move_count,
                reply,
            })
            .await??;
        Ok(self.answer(internal::UndoMoveResponse { game: Some(game) }, owner))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_score_preview(
        &self,
        request: Request<internal::GetScorePreviewRequest>,
    ) -> Result<Response<internal::GetScorePreviewResponse>, Status> {
        let (id, owner) = self.about(&request.get_ref().game_id)?;
        let count = self
            .registry
            .ask(&id, |reply| Command::Preview { reply })
            .await?;
        Ok(self.answer(
            internal::GetScorePreviewResponse { count: Some(count) },
            owner,
        ))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_sgf(
        &self,
        request: Request<internal::GetSgfRequest>,
    ) -> Result<Response<internal::GetSgfResponse>, Status> {
        let (id, owner) = self.about(&request.get_ref().game_id)?;
        let sgf = self
            .registry
            .ask(&id, |reply| Command::Export { reply })
            .await?;
        Ok(self.answer(internal::GetSgfResponse { sgf }, owner))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, after_seq = request.get_ref().after_seq))]
    async fn list_events(
        &self,
        request: Request<internal::ListEventsRequest>,
    ) -> Result<Response<internal::ListEventsResponse>, Status> {
        let req = request.into_inner();
        let (id, owner) = self.about(&req.game_id)?;
        // Make sure the game exists (NOT_FOUND otherwise).
        self.registry.mailbox(&id).await?;
        let events = self
            .registry
            .events_after(&id, req.after_seq, req.limit)
            .await?;
        Ok(self.answer(internal::ListEventsResponse { events }, owner))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn offer_draw(
        &self,
        request: Request<internal::OfferDrawRequest>,
    ) -> Result<Response<internal::OfferDrawResponse>, Status> {
        let req = request.into_inner();
        let (id, user, owner) = self.by_player(&req.game_id, &req.user_id)?;
        let game = self
            .registry
            .ask(&id, |reply| Command::OfferDraw {
                span: tracing::Span::current(),
                user_id: user.clone(),
                reply,
            })
            .await??;
        Ok(self.answer(internal::OfferDrawResponse { game: Some(game) }, owner))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn answer_draw(
        &self,
        request: Request<internal::AnswerDrawRequest>,
    ) -> Result<Response<internal::AnswerDrawResponse>, Status> {
        let req = request.into_inner();
        let (id, user, owner) = self.by_player(&req.game_id, &req.user_id)?;
        let game = self
            .registry
            .ask(&id, |reply| Command::AnswerDraw {
                span: tracing::Span::current(),
                user_id: user.clone(),
                accept: req.accept,
                reply,
            })
            .await??;
        Ok(self.answer(internal::AnswerDrawResponse { game: Some(game) }, owner))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn settle_count(
        &self,
        request: Request<internal::SettleCountRequest>,
    ) -> Result<Response<internal::SettleCountResponse>, Status> {
        let req = request.into_inner();
        let (id, user, owner) = self.by_player(&req.game_id, &req.user_id)?;
        use internal::settle_count_request::Action;
        let action = match &req.action {
            None => {
                return Err(Status::invalid_argument(
                    "no action: mark, confirm or resume",
                ));
            }
            Some(Action::Mark(m)) => {
                let Some(p) = &m.point else {
                    return Err(Status::invalid_argument("mark names no point"));
                };
                CountAction::Mark {
                    column: p.column,
                    row: p.row,
                    dead: m.dead,
                }
            }
            Some(Action::Confirm(c)) => CountAction::Confirm {
                version: c.marks_version,
            },
            Some(Action::Resume(r)) => CountAction::Resume {
                after_move: r.after_move,
            },
        };
        let game = self
            .registry
            .ask(&id, |reply| Command::SettleCount {
                span: tracing::Span::current(),
                user_id: user.clone(),
                action,
                reply,
            })
            .await??;
        Ok(self.answer(internal::SettleCountResponse { game: Some(game) }, owner))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id, connected = request.get_ref().connected))]
    async fn report_presence(
        &self,
        request: Request<internal::ReportPresenceRequest>,
    ) -> Result<Response<internal::ReportPresenceResponse>, Status> {
        let req = request.into_inner();
        let (id, user, owner) = self.by_player(&req.game_id, &req.user_id)?;
        self.registry
            .ask(&id, |reply| Command::Presence {
                span: tracing::Span::current(),
                user_id: user.clone(),
                connected: req.connected,
                reply,
            })
            .await??;
        Ok(self.answer(internal::ReportPresenceResponse {}, owner))
    }

    #[tracing::instrument(skip_all, fields(since = request.get_ref().finished_since_unix_ms))]
    async fn list_finished_games(
        &self,
        request: Request<internal::ListFinishedGamesRequest>,
    ) -> Result<Response<internal::ListFinishedGamesResponse>, Status> {
        let req = request.into_inner();
        let limit = match req.limit {
            0 => 500,
            n => i64::from(n.min(5000)),
        };
        let rows = store::finished_since(
            self.registry.db(),
            req.finished_since_unix_ms,
            req.ranked_only,
            limit,
        )
        .await
        .map_err(|e| ttakji_platform::store::status(&e, "cannot list finished games"))?;
        let summaries = rows
            .iter()
            .map(|row| {
                listing::summary(row, None).map_err(|e| listing::unreadable_row(&row.id, &e))
            })
            .collect::<Result<_, Status>>()?;
        Ok(Response::new(internal::ListFinishedGamesResponse {
            summaries,
        }))
    }

    #[tracing::instrument(skip_all)]
    async fn list_game_summaries(
        &self,
        request: Request<internal::ListGameSummariesRequest>,
    ) -> Result<Response<internal::ListGameSummariesResponse>, Status> {
        let req = request.into_inner();
        Ok(Response::new(
            listing::page(self.registry.db(), &req).await?,
        ))
    }
}
