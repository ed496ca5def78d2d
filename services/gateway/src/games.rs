//! The public GameService: a player's actions in a game, forwarded to the
//! game authority with the caller's id, and the stream of a game's events.
//! The authority decides what is legal; the gateway checks only that a
//! request is well formed.

use tonic::{Request, Response, Status};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::submit_action_request::Action;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::game_service_server::GameService;

use crate::auth::Caller;
use crate::seen::seen_by;
use crate::state::Gateway;
use crate::streams::Stream;
use crate::validate::{self, AiGame, MarkDead, PlayMove};
use ttakji_proto::GameId;

impl Gateway {
    /// Submits the caller's `action` on a move of a game.
    async fn submit(
        &self,
        me: Caller,
        game_id: GameId,
        move_number: u32,
        action: Action,
        for_computer: bool,
    ) -> Result<internal::SubmitActionResponse, Status> {
        Ok(self
            .authority
            .ask(
                internal::SubmitActionRequest {
                    game_id: game_id.into_string(),
                    user_id: me.user_id,
                    move_number,
                    action: Some(action),
                    for_computer,
                },
                |mut c, r| async move { c.submit_action(r).await },
            )
            .await?
            .into_inner())
    }
}

impl Gateway {
    /// The caller's `action` on the count of a territory game.
    async fn settle(
        &self,
        me: Caller,
        game_id: GameId,
        action: internal::settle_count_request::Action,
    ) -> Result<Option<pb::GameSnapshot>, Status> {
        let viewer = me.user_id.clone();
        let done = self
            .authority
            .ask(
                internal::SettleCountRequest {
                    game_id: game_id.into_string(),
                    user_id: me.user_id,
                    action: Some(action),
                },
                |mut c, r| async move { c.settle_count(r).await },
            )
            .await?
            .into_inner();
        Ok(seen_by(done.game, &viewer))
    }
}

/// The two seats of a game between `me` and the computer at `terms`.
fn ai_game_seats(me: Caller, terms: &AiGame) -> (internal::Seat, internal::Seat) {
    let black = match terms.color {
        pb::ColorChoice::Black => true,
        pb::ColorChoice::White => false,
        pb::ColorChoice::Random | pb::ColorChoice::Unspecified => {
            uuid::Uuid::new_v4().as_bytes()[0] & 1 == 0
        }
    };
    let person = internal::Seat {
        user_id: me.user_id,
        nickname: me.nickname,
        ai_level: pb::AiLevel::Unspecified as i32,
        ai_engine: pb::AiEngine::Unspecified as i32,
    };
    let computer = internal::Seat {
        user_id: String::new(),
        nickname: String::new(),
        ai_level: terms.level as i32,
        ai_engine: terms.engine as i32,
    };
    if black {
        (person, computer)
    } else {
        (computer, person)
    }
}

#[tonic::async_trait]
impl GameService for Gateway {
    #[tracing::instrument(skip_all)]
    async fn start_ai_game(
        &self,
        request: Request<pb::StartAiGameRequest>,
    ) -> Result<Response<pb::StartAiGameResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let terms = AiGame::try_from(request.into_inner())?;
        let (black, white) = ai_game_seats(me, &terms);
        let created = self
            .authority
            .ask(
                internal::CreateGameRequest {
                    board_size: terms.board_size,
                    ruleset: String::new(),
                    black: Some(black),
                    white: Some(white),
                    seconds_per_move: 0,
                    // Chosen here, so a retried call makes one game, at the
                    // authority that owns its shard.
                    game_id: uuid::Uuid::new_v4().simple().to_string(),
                    ranked: false,
                    server_ai_limit: self.server_ai_games,
                    ..Default::default()
                },
                |mut c, r| async move { c.create_game(r).await },
            )
            .await?
            .into_inner();
        Ok(Response::new(pb::StartAiGameResponse {
            game: seen_by(created.game, &viewer),
        }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let req = request.into_inner();
        let loaded = self
            .authority
            .ask(
                internal::GetGameRequest {
                    game_id: validate::game_id(&req.game_id)?.into_string(),
                    user_id: me.user_id,
                    include_score_preview: req.include_score_preview,
                },
                |mut c, r| async move { c.get_game(r).await },
            )
            .await?
            .into_inner();
        Ok(Response::new(pb::GetGameResponse {
            game: seen_by(loaded.game, &viewer),
        }))
    }

    async fn play_move(
        &self,
        request: Request<pb::PlayMoveRequest>,
    ) -> Result<Response<pb::PlayMoveResponse>, Status> {
        let asked = request.get_ref();
        ttakji_platform::observed::record_move(&asked.game_id, None, asked.move_number);
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let play = PlayMove::try_from(request.into_inner())?;
        let place = Action::Place(play.point);
        let done = self
            .submit(me, play.game_id, play.move_number, place, play.for_computer)
            .await?;
        Ok(Response::new(pb::PlayMoveResponse {
            r#move: done.r#move,
            game: seen_by(done.game, &viewer),
        }))
    }

    async fn pass(
        &self,
        request: Request<pb::PassRequest>,
    ) -> Result<Response<pb::PassResponse>, Status> {
        let asked = request.get_ref();
        ttakji_platform::observed::record_move(&asked.game_id, None, asked.move_number);
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let req = request.into_inner();
        let game_id = validate::game_id(&req.game_id)?;
        let pass = Action::Pass(internal::PassAction {});
        let done = self
            .submit(me, game_id, req.move_number, pass, req.for_computer)
            .await?;
        Ok(Response::new(pb::PassResponse {
            r#move: done.r#move,
            game: seen_by(done.game, &viewer),
        }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn resign(
        &self,
        request: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let game_id = validate::game_id(&request.get_ref().game_id)?;
        let for_computer = request.get_ref().for_computer;
        let resign = Action::Resign(internal::ResignAction {});
        let done = self.submit(me, game_id, 0, resign, for_computer).await?;
        Ok(Response::new(pb::ResignResponse {
            game: seen_by(done.game, &viewer),
        }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn undo_move(
        &self,
        request: Request<pb::UndoMoveRequest>,
    ) -> Result<Response<pb::UndoMoveResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let req = request.into_inner();
        let done = self
            .authority
            .ask(
                internal::UndoMoveRequest {
                    game_id: validate::game_id(&req.game_id)?.into_string(),
                    user_id: me.user_id,
                    move_count: req.move_count,
                },
                |mut c, r| async move { c.undo_move(r).await },
            )
            .await?
            .into_inner();
        Ok(Response::new(pb::UndoMoveResponse {
            game: seen_by(done.game, &viewer),
        }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn set_ai_engine(
        &self,
        request: Request<pb::SetAiEngineRequest>,
    ) -> Result<Response<pb::SetAiEngineResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let req = request.into_inner();
        let done = self
            .authority
            .ask(
                internal::SetAiEngineRequest {
                    game_id: validate::game_id(&req.game_id)?.into_string(),
                    user_id: me.user_id,
                    engine: req.engine,
                    server_ai_limit: self.server_ai_games,
                },
                |mut c, r| async move { c.set_ai_engine(r).await },
            )
            .await?
            .into_inner();
        Ok(Response::new(pb::SetAiEngineResponse {
            game: seen_by(done.game, &viewer),
        }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_score_preview(
        &self,
        request: Request<pb::GetScorePreviewRequest>,
    ) -> Result<Response<pb::GetScorePreviewResponse>, Status> {
        Caller::of(&request)?;
        let game_id = validate::game_id(&request.get_ref().game_id)?.into_string();
        let count = self
            .authority
            .ask(
                internal::GetScorePreviewRequest { game_id },
                |mut c, r| async move { c.get_score_preview(r).await },
            )
            .await?
            .into_inner()
            .count;
        Ok(Response::new(pb::GetScorePreviewResponse { count }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_sgf(
        &self,
        request: Request<pb::GetSgfRequest>,
    ) -> Result<Response<pb::GetSgfResponse>, Status> {
        Caller::of(&request)?;
        let game_id = validate::game_id(&request.get_ref().game_id)?.into_string();
        let sgf = self
            .authority
            .ask(internal::GetSgfRequest { game_id }, |mut c, r| async move {
                c.get_sgf(r).await
            })
            .await?
            .into_inner()
            .sgf;
        Ok(Response::new(pb::GetSgfResponse { sgf }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn offer_draw(
        &self,
        request: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let game_id = validate::game_id(&request.get_ref().game_id)?.into_string();
        let done = self
            .authority
            .ask(
                internal::OfferDrawRequest {
                    game_id,
                    user_id: me.user_id,
                },
                |mut c, r| async move { c.offer_draw(r).await },
            )
            .await?
            .into_inner();
        Ok(Response::new(pb::OfferDrawResponse {
            game: seen_by(done.game, &viewer),
        }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn answer_draw(
        &self,
        request: Request<pb::AnswerDrawRequest>,
    ) -> Result<Response<pb::AnswerDrawResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let req = request.into_inner();
        let done = self
            .authority
            .ask(
                internal::AnswerDrawRequest {
                    game_id: validate::game_id(&req.game_id)?.into_string(),
                    user_id: me.user_id,
                    accept: req.accept,
                },
                |mut c, r| async move { c.answer_draw(r).await },
            )
            .await?
            .into_inner();
        Ok(Response::new(pb::AnswerDrawResponse {
            game: seen_by(done.game, &viewer),
        }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn mark_dead_stones(
        &self,
        request: Request<pb::MarkDeadStonesRequest>,
    ) -> Result<Response<pb::MarkDeadStonesResponse>, Status> {
        let me = Caller::of(&request)?;
        let mark = MarkDead::try_from(request.into_inner())?;
        let action = internal::settle_count_request::Action::Mark(internal::MarkDeadStonesAction {
            point: Some(mark.point),
            dead: mark.dead,
        });
        let game = self.settle(me, mark.game_id, action).await?;
        Ok(Response::new(pb::MarkDeadStonesResponse { game }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn confirm_count(
        &self,
        request: Request<pb::ConfirmCountRequest>,
    ) -> Result<Response<pb::ConfirmCountResponse>, Status> {
        let me = Caller::of(&request)?;
        let req = request.into_inner();
        let game_id = validate::game_id(&req.game_id)?;
        let action =
            internal::settle_count_request::Action::Confirm(internal::ConfirmCountAction {
                marks_version: req.marks_version,
            });
        let game = self.settle(me, game_id, action).await?;
        Ok(Response::new(pb::ConfirmCountResponse { game }))
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn resume_play(
        &self,
        request: Request<pb::ResumePlayRequest>,
    ) -> Result<Response<pb::ResumePlayResponse>, Status> {
        let me = Caller::of(&request)?;
        let req = request.into_inner();
        let game_id = validate::game_id(&req.game_id)?;
        let action = internal::settle_count_request::Action::Resume(internal::ResumePlayAction {
            after_move: req.after_move,
        });
        let game = self.settle(me, game_id, action).await?;
        Ok(Response::new(pb::ResumePlayResponse { game }))
    }

    type WatchGameStream = Stream<pb::WatchGameResponse>;

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, after_seq = request.get_ref().after_seq))]
    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let me = Caller::of(&request)?;
        let req = request.into_inner();
        let game_id = validate::game_id(&req.game_id)?;
        let from = crate::watch::Start {
            after_seq: req.after_seq,
            changes: req.changes,
        };
        let stream = crate::watch::watch(self, game_id, from, me.user_id).await?;
        Ok(Response::new(stream))
    }

    #[tracing::instrument(skip_all)]
    async fn list_my_games(
        &self,
        request: Request<pb::ListMyGamesRequest>,
    ) -> Result<Response<pb::ListMyGamesResponse>, Status> {
        let me = Caller::of(&request)?;
        let req = request.into_inner();
        let page = self
            .list_games(internal::ListGameSummariesRequest {
                list: Some(internal::list_game_summaries_request::List::UserId(
                    me.user_id,
                )),
                board_size: 0,
                limit: page_size(req.page_size)?,
                page_token: req.page_token,
            })
            .await?;
        Ok(Response::new(pb::ListMyGamesResponse {
            games: page.games,
            next_page_token: page.next_page_token,
        }))
    }

    #[tracing::instrument(skip_all, fields(board_size = request.get_ref().board_size))]
    async fn list_live_games(
        &self,
        request: Request<pb::ListLiveGamesRequest>,
    ) -> Result<Response<pb::ListLiveGamesResponse>, Status> {
        Caller::of(&request)?;
        let req = request.into_inner();
        let page = self
            .list_games(internal::ListGameSummariesRequest {
                list: Some(internal::list_game_summaries_request::List::Live(true)),
                board_size: req.board_size,
                limit: page_size(req.page_size)?,
                page_token: req.page_token,
            })
            .await?;
        Ok(Response::new(pb::ListLiveGamesResponse {
            games: page.games,
            next_page_token: page.next_page_token,
        }))
    }
}

/// The games a page holds (AIP-158): 0 means 20, above 100 means 100.
fn page_size(asked: i32) -> Result<u32, Status> {
    match asked {
        0 => Ok(20),
        n if n < 0 => Err(ttakji_platform::refusal::refused(
            tonic::Code::InvalidArgument,
            "PAGE_SIZE_INVALID",
            format!("page_size {n} is negative: ask for 1 to 100 games, or 0 for 20"),
        )),
        n => Ok(u32::try_from(n).unwrap_or(100).min(100)),
    }
}

impl Gateway {
    /// A page of games from the stored rows, by any authority instance.
    async fn list_games(
        &self,
        request: internal::ListGameSummariesRequest,
    ) -> Result<internal::ListGameSummariesResponse, Status> {
        Ok(self
            .authority
            .ask(
                request,
                |mut c, r| async move { c.list_game_summaries(r).await },
            )
            .await?
            .into_inner())
    }
}
