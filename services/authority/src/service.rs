//! The authority's gRPC service: requests become domain values here and
//! go to the game's actor.

use baduk::Rules;
use tonic::{Request, Response, Status};
use ttakji_platform::grpc::observe;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::authority_service_server::AuthorityService;

use crate::actor::Command;
use crate::convert;
use crate::game::Requested;
use crate::records::{GameMeta, Seat};
use crate::registry::Registry;

/// The AuthorityService implementation.
#[derive(Debug, Clone)]
pub struct Authority {
    pub registry: Registry,
}

/// The longest name a seat may carry.
const MAX_NAME_LEN: usize = 40;

fn seat(seat: Option<&pb::Seat>, which: &str) -> Result<Seat, Status> {
    let seat = seat.ok_or_else(|| Status::invalid_argument(format!("{which} seat is missing")))?;
    if seat.nickname.chars().count() > MAX_NAME_LEN || seat.user_id.len() > convert::MAX_ID_LEN {
        return Err(Status::invalid_argument(format!(
            "{which} seat's name or id is too long"
        )));
    }
    if seat.user_id.is_empty() {
        let level = convert::level(seat.ai_level)?;
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
        if seat.ai_level != pb::AiLevel::Unspecified as i32 {
            return Err(Status::invalid_argument(format!(
                "{which} seat has both a user and a computer level"
            )));
        }
        Ok(Seat {
            user_id: Some(seat.user_id.clone()),
            name: seat.nickname.clone(),
            ai: None,
        })
    }
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[tonic::async_trait]
impl AuthorityService for Authority {
    #[tracing::instrument(skip_all)]
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        observe(
            "CreateGame",
            async {
                let req = request.into_inner();
                let size = convert::board_size(req.board_size)?;
                let ruleset = if req.ruleset.is_empty() {
                    "ttakji"
                } else {
                    req.ruleset.as_str()
                };
                let rules = Rules::named(ruleset)
                    .map_err(|e| Status::invalid_argument(e.to_string()))?
                    .with_board_size(size);
                let black = seat(req.black.as_ref(), "black")?;
                let white = seat(req.white.as_ref(), "white")?;
                if black.ai.is_some() && white.ai.is_some() {
                    return Err(Status::invalid_argument("a game needs at least one person"));
                }
                if black.user_id.is_some() && black.user_id == white.user_id {
                    return Err(Status::invalid_argument("a player cannot take both seats"));
                }
                let meta = GameMeta {
                    id: if req.game_id.is_empty() {
                        uuid::Uuid::new_v4().simple().to_string()
                    } else if req.game_id.len() == 32
                        && req
                            .game_id
                            .bytes()
                            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                    {
                        req.game_id.clone()
                    } else {
                        return Err(Status::invalid_argument(
                            "game_id must be 32 lowercase hex digits",
                        ));
                    },
                    ranked: req.ranked && black.ai.is_none() && white.ai.is_none(),
                    rules,
                    black,
                    white,
                    seconds_per_move: req.seconds_per_move,
                    created_at: ttakji_platform::now_unix_ms(),
                };
                tracing::info!(game_id = %meta.id, "game created");
                let game = self.registry.create(meta).await?;
                Ok(Response::new(pb::CreateGameResponse { game: Some(game) }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn load_game(
        &self,
        request: Request<pb::LoadGameRequest>,
    ) -> Result<Response<pb::LoadGameResponse>, Status> {
        observe(
            "LoadGame",
            async {
                let req = request.into_inner();
                let id = convert::game_id(&req.game_id)?;
                let preview = req.include_score_preview;
                let game = self
                    .registry
                    .ask(id, |reply| Command::Snapshot { preview, reply })
                    .await?;
                Ok(Response::new(pb::LoadGameResponse { game: Some(game) }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id, move_number = request.get_ref().move_number))]
    async fn submit_action(
        &self,
        request: Request<pb::SubmitActionRequest>,
    ) -> Result<Response<pb::SubmitActionResponse>, Status> {
        observe(
            "SubmitAction",
            async {
                let req = request.into_inner();
                let id = convert::game_id(&req.game_id)?.to_owned();
                if req.user_id.is_empty() {
                    return Err(Status::invalid_argument("user_id is empty"));
                }
                let action = match &req.action {
                    None => {
                        return Err(Status::invalid_argument("no action: place, pass or resign"));
                    }
                    Some(pb::submit_action_request::Action::Pass(_)) => Requested::Pass,
                    Some(pb::submit_action_request::Action::Resign(_)) => Requested::Resign,
                    Some(pb::submit_action_request::Action::Place(p)) => Requested::Place {
                        column: p.column,
                        row: p.row,
                    },
                };
                let (mv, game) = self
                    .registry
                    .ask(&id, |reply| Command::Submit {
                        span: tracing::Span::current(),
                        user_id: req.user_id.clone(),
                        number: req.move_number,
                        action,
                        reply,
                    })
                    .await??;
                Ok(Response::new(pb::SubmitActionResponse {
                    r#move: mv,
                    game: Some(game),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn take_back(
        &self,
        request: Request<pb::TakeBackRequest>,
    ) -> Result<Response<pb::TakeBackResponse>, Status> {
        observe(
            "TakeBack",
            async {
                let req = request.into_inner();
                let id = convert::game_id(&req.game_id)?.to_owned();
                let game = self
                    .registry
                    .ask(&id, |reply| Command::TakeBack {
                        span: tracing::Span::current(),
                        user_id: req.user_id.clone(),
                        move_count: req.move_count,
                        reply,
                    })
                    .await??;
                Ok(Response::new(pb::TakeBackResponse { game: Some(game) }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn preview_score(
        &self,
        request: Request<pb::PreviewScoreRequest>,
    ) -> Result<Response<pb::PreviewScoreResponse>, Status> {
        observe(
            "PreviewScore",
            async {
                let id = convert::game_id(&request.get_ref().game_id)?;
                let count = self
                    .registry
                    .ask(id, |reply| Command::Preview { reply })
                    .await?;
                Ok(Response::new(pb::PreviewScoreResponse {
                    count: Some(count),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn export_record(
        &self,
        request: Request<pb::ExportRecordRequest>,
    ) -> Result<Response<pb::ExportRecordResponse>, Status> {
        observe(
            "ExportRecord",
            async {
                let id = convert::game_id(&request.get_ref().game_id)?;
                let sgf = self
                    .registry
                    .ask(id, |reply| Command::Export { reply })
                    .await?;
                Ok(Response::new(pb::ExportRecordResponse { sgf }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, after_seq = request.get_ref().after_seq))]
    async fn list_events(
        &self,
        request: Request<pb::ListEventsRequest>,
    ) -> Result<Response<pb::ListEventsResponse>, Status> {
        observe(
            "ListEvents",
            async {
                let req = request.into_inner();
                let id = convert::game_id(&req.game_id)?;
                // Make sure the game exists (NOT_FOUND otherwise).
                self.registry.mailbox(id).await?;
                let events = self
                    .registry
                    .events_after(id, req.after_seq, req.limit)
                    .await?;
                Ok(Response::new(pb::ListEventsResponse { events }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn propose_draw(
        &self,
        request: Request<pb::ProposeDrawRequest>,
    ) -> Result<Response<pb::ProposeDrawResponse>, Status> {
        observe(
            "OfferDraw",
            async {
                let req = request.into_inner();
                let id = convert::game_id(&req.game_id)?.to_owned();
                let game = self
                    .registry
                    .ask(&id, |reply| Command::OfferDraw {
                        span: tracing::Span::current(),
                        user_id: req.user_id.clone(),
                        reply,
                    })
                    .await??;
                Ok(Response::new(pb::ProposeDrawResponse { game: Some(game) }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id = %request.get_ref().user_id))]
    async fn respond_to_draw(
        &self,
        request: Request<pb::RespondToDrawRequest>,
    ) -> Result<Response<pb::RespondToDrawResponse>, Status> {
        observe(
            "AnswerDraw",
            async {
                let req = request.into_inner();
                let id = convert::game_id(&req.game_id)?.to_owned();
                let game = self
                    .registry
                    .ask(&id, |reply| Command::AnswerDraw {
                        span: tracing::Span::current(),
                        user_id: req.user_id.clone(),
                        accept: req.accept,
                        reply,
                    })
                    .await??;
                Ok(Response::new(pb::RespondToDrawResponse {
                    game: Some(game),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(since = request.get_ref().finished_since_unix_ms))]
    async fn list_finished_games(
        &self,
        request: Request<pb::ListFinishedGamesRequest>,
    ) -> Result<Response<pb::ListFinishedGamesResponse>, Status> {
        observe(
            "ListFinishedGames",
            async {
                let req = request.into_inner();
                let limit = match req.limit {
                    0 => 500,
                    n => i64::from(n.min(5000)),
                };
                let ids = self
                    .registry
                    .finished_since(req.finished_since_unix_ms, req.ranked_only, limit)
                    .await?;
                let mut games = Vec::with_capacity(ids.len());
                for id in ids {
                    games.push(
                        self.registry
                            .ask(&id, |reply| Command::Snapshot {
                                preview: false,
                                reply,
                            })
                            .await?,
                    );
                }
                Ok(Response::new(pb::ListFinishedGamesResponse { games }))
            }
            .await,
        )
    }
}
