//! The public AuthService and GameService: token checks, input checks, and
//! forwarding to the authority with the caller's id.

use tonic::{Request, Response, Status};
use ttakji_platform::auth::{Claims, TokenError, TokenKeys};
use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::observe;
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_server::AuthService;
use ttakji_proto::v1::game_service_server::GameService;

use crate::AuthorityClient;

/// The gateway's handlers and what they share.
#[derive(Debug, Clone)]
pub struct Gateway {
    /// Google sign-in, when configured.
    pub google: Option<std::sync::Arc<crate::google::GoogleVerifier>>,
    /// Accounts.
    pub db: ttakji_platform::store::Database,
    pub authority: AuthorityClient,
    pub matchmaker: crate::MatchmakerClient,
    pub ratings: crate::RatingsClient,
    pub keys: TokenKeys,
    pub bus: Bus,
    pub shutdown: Shutdown,
}

/// A valid nickname made from a name on a Google account: its letters and
/// digits, 2 to 20 of them ("player" when too few are left).
fn nickname_from(name: Option<&str>) -> String {
    let cleaned: String = name
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
        .take(20)
        .collect();
    if cleaned.chars().count() >= 2 {
        cleaned
    } else {
        "player".to_owned()
    }
}

/// Checks a nickname: 2 to 20 letters, digits, `-` or `_`.
///
/// # Errors
/// INVALID_ARGUMENT saying what is wrong.
pub fn nickname(name: &str) -> Result<&str, Status> {
    let len = name.chars().count();
    if !(2..=20).contains(&len) {
        return Err(Status::invalid_argument(format!(
            "nickname must be 2 to 20 characters, not {len}"
        )));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(Status::invalid_argument(format!(
            "nickname may hold letters, digits, '-' and '_', not {bad:?}"
        )));
    }
    Ok(name)
}

pub(crate) fn game_id(id: &str) -> Result<String, Status> {
    ttakji_platform::grpc::id(id, "game_id").map(str::to_owned)
}

impl Gateway {
    /// The caller, from `authorization: Bearer <token>`.
    pub fn caller<T>(&self, request: &Request<T>) -> Result<Claims, Status> {
        let header = request
            .metadata()
            .get("authorization")
            .ok_or_else(|| Status::unauthenticated("sign in first: no authorization header"))?;
        let value = header
            .to_str()
            .map_err(|_| Status::unauthenticated("the authorization header is not text"))?;
        let token = value.strip_prefix("Bearer ").ok_or_else(|| {
            Status::unauthenticated("the authorization header must be 'Bearer <token>'")
        })?;
        self.keys.verify(token.trim()).map_err(|e| {
            metrics::counter!("ttakji_tokens_refused_total", "reason" => token_error_label(&e))
                .increment(1);
            Status::unauthenticated(e.to_string())
        })
    }

    fn authority(&self) -> AuthorityClient {
        self.authority.clone()
    }
}

fn token_error_label(e: &TokenError) -> &'static str {
    match e {
        TokenError::Malformed(_) => "malformed",
        TokenError::NoKeyId => "no_key_id",
        TokenError::UnknownKey(_) => "unknown_key",
        TokenError::WrongAlgorithm(_) => "wrong_algorithm",
        TokenError::Expired => "expired",
        TokenError::BadSignature => "bad_signature",
        TokenError::Signing(_) => "signing",
    }
}

fn check_enum<E: TryFrom<i32>>(value: i32, field: &str) -> Result<E, Status> {
    E::try_from(value)
        .map_err(|_| Status::invalid_argument(format!("{field} {value} is not a known value")))
}

#[tonic::async_trait]
impl AuthService for Gateway {
    #[tracing::instrument(skip_all)]
    async fn sign_in_guest(
        &self,
        request: Request<pb::SignInGuestRequest>,
    ) -> Result<Response<pb::SignInGuestResponse>, Status> {
        observe(
            "SignInGuest",
            async {
                let name = nickname(&request.get_ref().nickname)?;
                let user_id = uuid::Uuid::new_v4().simple().to_string();
                crate::accounts::create(&self.db, &user_id, name, None).await?;
                let (access_token, claims) = self
                    .keys
                    .issue(&user_id, name, true)
                    .map_err(|e| Status::internal(e.to_string()))?;
                tracing::info!(user_id = %user_id, "guest signed in");
                Ok(Response::new(pb::SignInGuestResponse {
                    access_token,
                    expires_at_unix_ms: i64::try_from(claims.exp)
                        .unwrap_or(i64::MAX)
                        .saturating_mul(1000),
                    user_id,
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(user_id))]
    async fn change_nickname(
        &self,
        request: Request<pb::ChangeNicknameRequest>,
    ) -> Result<Response<pb::ChangeNicknameResponse>, Status> {
        observe(
            "ChangeNickname",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let name = nickname(&request.get_ref().nickname)?;
                crate::accounts::rename(&self.db, &me.sub, name).await?;
                let (access_token, claims) = self
                    .keys
                    .issue(&me.sub, name, me.guest)
                    .map_err(|e| Status::internal(e.to_string()))?;
                Ok(Response::new(pb::ChangeNicknameResponse {
                    access_token,
                    expires_at_unix_ms: i64::try_from(claims.exp)
                        .unwrap_or(i64::MAX)
                        .saturating_mul(1000),
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(user_id))]
    async fn sign_in_google(
        &self,
        request: Request<pb::SignInGoogleRequest>,
    ) -> Result<Response<pb::SignInGoogleResponse>, Status> {
        observe(
            "SignInGoogle",
            async {
                let google = self.google.as_ref().ok_or_else(|| {
                    Status::failed_precondition("Google sign-in is not configured on this server")
                })?;
                let req = request.into_inner();
                if req.id_token.len() > 8192 {
                    return Err(Status::invalid_argument("the ID token is too long"));
                }
                let claims = google.verify(&req.id_token).await?;
                let (account, new_account) =
                    match crate::accounts::by_google_sub(&self.db, &claims.sub).await? {
                        Some(account) => (account, false),
                        None => {
                            let user_id = uuid::Uuid::new_v4().simple().to_string();
                            let account = if req.nickname.is_empty() {
                                let base = nickname_from(
                                    claims.given_name.as_deref().or(claims.name.as_deref()),
                                );
                                let mut made = None;
                                for attempt in 0..8u32 {
                                    let candidate = if attempt == 0 {
                                        base.clone()
                                    } else {
                                        let suffix = uuid::Uuid::new_v4().as_u128() % 10_000;
                                        format!(
                                            "{}{suffix}",
                                            base.chars().take(15).collect::<String>()
                                        )
                                    };
                                    match crate::accounts::create(
                                        &self.db,
                                        &user_id,
                                        &candidate,
                                        Some(&claims.sub),
                                    )
                                    .await
                                    {
                                        Ok(a) => {
                                            made = Some(a);
                                            break;
                                        }
                                        Err(s) if s.code() == tonic::Code::AlreadyExists => {}
                                        Err(s) => return Err(s),
                                    }
                                }
                                made.ok_or_else(|| {
                                    Status::already_exists("no free nickname: choose one")
                                })?
                            } else {
                                crate::accounts::create(
                                    &self.db,
                                    &user_id,
                                    nickname(&req.nickname)?,
                                    Some(&claims.sub),
                                )
                                .await?
                            };
                            (account, true)
                        }
                    };
                tracing::Span::current().record("user_id", account.user_id.as_str());
                let (access_token, issued) = self
                    .keys
                    .issue(&account.user_id, &account.nickname, false)
                    .map_err(|e| Status::internal(e.to_string()))?;
                Ok(Response::new(pb::SignInGoogleResponse {
                    access_token,
                    expires_at_unix_ms: i64::try_from(issued.exp)
                        .unwrap_or(i64::MAX)
                        .saturating_mul(1000),
                    user_id: account.user_id,
                    nickname: account.nickname,
                    new_account,
                }))
            }
            .await,
        )
    }
}

#[tonic::async_trait]
impl GameService for Gateway {
    #[tracing::instrument(skip_all, fields(user_id))]
    async fn start_ai_game(
        &self,
        request: Request<pb::StartAiGameRequest>,
    ) -> Result<Response<pb::StartAiGameResponse>, Status> {
        observe(
            "StartAiGame",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let choice: pb::ColorChoice = check_enum(req.color, "color")?;
                let level: pb::AiLevel = check_enum(req.level, "level")?;
                let level = if level == pb::AiLevel::Unspecified {
                    pb::AiLevel::Normal
                } else {
                    level
                };
                let black = match choice {
                    pb::ColorChoice::Black => true,
                    pb::ColorChoice::White => false,
                    pb::ColorChoice::Random | pb::ColorChoice::Unspecified => {
                        uuid::Uuid::new_v4().as_bytes()[0] & 1 == 0
                    }
                };
                let person = pb::Seat {
                    user_id: me.sub.clone(),
                    nickname: me.name.clone(),
                    ai_level: pb::AiLevel::Unspecified as i32,
                };
                let computer = pb::Seat {
                    user_id: String::new(),
                    nickname: String::new(),
                    ai_level: level as i32,
                };
                let (black, white) = if black {
                    (person, computer)
                } else {
                    (computer, person)
                };
                let created = self
                    .authority()
                    .create_game(pb::CreateGameRequest {
                        board_size: req.board_size,
                        ruleset: String::new(),
                        black: Some(black),
                        white: Some(white),
                        seconds_per_move: 0,
                        game_id: String::new(),
                        ranked: false,
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::StartAiGameResponse {
                    game: created.game,
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, Status> {
        observe(
            "GetGame",
            async {
                let me = self.caller(&request)?;
                let req = request.into_inner();
                let loaded = self
                    .authority()
                    .load_game(pb::LoadGameRequest {
                        game_id: game_id(&req.game_id)?,
                        user_id: me.sub,
                        include_score_preview: req.include_score_preview,
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::GetGameResponse { game: loaded.game }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, move_number = request.get_ref().move_number, user_id))]
    async fn play_move(
        &self,
        request: Request<pb::PlayMoveRequest>,
    ) -> Result<Response<pb::PlayMoveResponse>, Status> {
        observe(
            "PlayMove",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let point = req
                    .point
                    .ok_or_else(|| Status::invalid_argument("point is missing"))?;
                if point.column >= 25 || point.row >= 25 {
                    return Err(Status::invalid_argument(format!(
                        "point (column {}, row {}) is off any board",
                        point.column, point.row
                    )));
                }
                let done = self
                    .authority()
                    .submit_action(pb::SubmitActionRequest {
                        game_id: game_id(&req.game_id)?,
                        user_id: me.sub,
                        move_number: req.move_number,
                        action: Some(pb::submit_action_request::Action::Place(point)),
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::PlayMoveResponse {
                    r#move: done.r#move,
                    game: done.game,
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, move_number = request.get_ref().move_number, user_id))]
    async fn pass(
        &self,
        request: Request<pb::PassRequest>,
    ) -> Result<Response<pb::PassResponse>, Status> {
        observe(
            "Pass",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let done = self
                    .authority()
                    .submit_action(pb::SubmitActionRequest {
                        game_id: game_id(&req.game_id)?,
                        user_id: me.sub,
                        move_number: req.move_number,
                        action: Some(pb::submit_action_request::Action::Pass(pb::PassAction {})),
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::PassResponse {
                    r#move: done.r#move,
                    game: done.game,
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id))]
    async fn resign(
        &self,
        request: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        observe(
            "Resign",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let done = self
                    .authority()
                    .submit_action(pb::SubmitActionRequest {
                        game_id: game_id(&req.game_id)?,
                        user_id: me.sub,
                        move_number: 0,
                        action: Some(pb::submit_action_request::Action::Resign(
                            pb::ResignAction {},
                        )),
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::ResignResponse { game: done.game }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id))]
    async fn undo_move(
        &self,
        request: Request<pb::UndoMoveRequest>,
    ) -> Result<Response<pb::UndoMoveResponse>, Status> {
        observe(
            "UndoMove",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let done = self
                    .authority()
                    .take_back(pb::TakeBackRequest {
                        game_id: game_id(&req.game_id)?,
                        user_id: me.sub,
                        move_count: req.move_count,
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::UndoMoveResponse { game: done.game }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_score_preview(
        &self,
        request: Request<pb::GetScorePreviewRequest>,
    ) -> Result<Response<pb::GetScorePreviewResponse>, Status> {
        observe(
            "GetScorePreview",
            async {
                self.caller(&request)?;
                let id = game_id(&request.get_ref().game_id)?;
                let count = self
                    .authority()
                    .preview_score(pb::PreviewScoreRequest { game_id: id })
                    .await?
                    .into_inner()
                    .count;
                Ok(Response::new(pb::GetScorePreviewResponse { count }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn get_sgf(
        &self,
        request: Request<pb::GetSgfRequest>,
    ) -> Result<Response<pb::GetSgfResponse>, Status> {
        observe(
            "GetSgf",
            async {
                self.caller(&request)?;
                let id = game_id(&request.get_ref().game_id)?;
                let sgf = self
                    .authority()
                    .export_record(pb::ExportRecordRequest { game_id: id })
                    .await?
                    .into_inner()
                    .sgf;
                Ok(Response::new(pb::GetSgfResponse { sgf }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id))]
    async fn offer_draw(
        &self,
        request: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, Status> {
        observe(
            "OfferDraw",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let done = self
                    .authority()
                    .propose_draw(pb::ProposeDrawRequest {
                        game_id: game_id(&req.game_id)?,
                        user_id: me.sub,
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::OfferDrawResponse { game: done.game }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id))]
    async fn answer_draw(
        &self,
        request: Request<pb::AnswerDrawRequest>,
    ) -> Result<Response<pb::AnswerDrawResponse>, Status> {
        observe(
            "AnswerDraw",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let done = self
                    .authority()
                    .respond_to_draw(pb::RespondToDrawRequest {
                        game_id: game_id(&req.game_id)?,
                        user_id: me.sub,
                        accept: req.accept,
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::AnswerDrawResponse { game: done.game }))
            }
            .await,
        )
    }

    type WatchGameStream = crate::watch::EventStream;

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, after_seq = request.get_ref().after_seq))]
    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        observe(
            "WatchGame",
            async {
                let me = self.caller(&request)?;
                let req = request.into_inner();
                let id = game_id(&req.game_id)?;
                let stream = crate::watch::watch(self.clone(), id, req.after_seq, me.sub).await?;
                Ok(Response::new(stream))
            }
            .await,
        )
    }
}
