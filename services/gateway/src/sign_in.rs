//! The public AuthService: signing in as a guest or with Google, and
//! changing one's nickname, each answered with a fresh access token.

use tonic::{Request, Response, Status};
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_server::AuthService;

use crate::accounts::{self, Account, AccountError};
use crate::auth::{self, Caller};
use crate::state::Gateway;
use crate::validate::{self, Nickname};

/// How many nicknames are tried for a new Google account that did not
/// choose one: its own name, then numbered ones.
const NICKNAME_ATTEMPTS: u32 = 8;

fn new_user_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl Gateway {
    /// An account for a new Google player, named after their Google name
    /// (or a numbered variant when it is taken).
    async fn named_after_google(
        &self,
        user_id: &str,
        google: &crate::google::GoogleClaims,
    ) -> Result<Account, Status> {
        let base =
            Nickname::from_account_name(google.given_name.as_deref().or(google.name.as_deref()));
        for attempt in 0..NICKNAME_ATTEMPTS {
            let candidate = if attempt == 0 {
                base.clone()
            } else {
                base.numbered(uuid::Uuid::new_v4().as_u128())
            };
            match accounts::create(&self.db, user_id, candidate.as_str(), Some(&google.sub)).await {
                Ok(account) => return Ok(account),
                Err(AccountError::NicknameTaken(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(ttakji_platform::refusal::refused(
            tonic::Code::AlreadyExists,
            "NO_FREE_NICKNAME",
            "no free nickname: choose one",
        ))
    }
}

#[tonic::async_trait]
impl AuthService for Gateway {
    #[tracing::instrument(skip_all)]
    async fn sign_in_guest(
        &self,
        request: Request<pb::SignInGuestRequest>,
    ) -> Result<Response<pb::SignInGuestResponse>, Status> {
        let name = Nickname::parse(&request.get_ref().nickname)?;
        let user_id = new_user_id();
        accounts::create(&self.db, &user_id, name.as_str(), None).await?;
        let token = auth::issue(&self.keys, &user_id, name.as_str(), true)?;
        tracing::info!(user_id = %user_id, "guest signed in");
        Ok(Response::new(pb::SignInGuestResponse {
            access_token: token.access_token,
            expires_at_unix_ms: token.expires_at_unix_ms,
            user_id,
        }))
    }

    #[tracing::instrument(skip_all)]
    async fn change_nickname(
        &self,
        request: Request<pb::ChangeNicknameRequest>,
    ) -> Result<Response<pb::ChangeNicknameResponse>, Status> {
        let me = Caller::of(&request)?;
        let name = Nickname::parse(&request.get_ref().nickname)?;
        accounts::rename(&self.db, &me.user_id, name.as_str()).await?;
        self.known.renamed(&me.user_id, name.as_str());
        let token = auth::issue(&self.keys, &me.user_id, name.as_str(), me.guest)?;
        Ok(Response::new(pb::ChangeNicknameResponse {
            access_token: token.access_token,
            expires_at_unix_ms: token.expires_at_unix_ms,
        }))
    }

    #[tracing::instrument(skip_all, fields(user_id))]
    async fn sign_in_google(
        &self,
        request: Request<pb::SignInGoogleRequest>,
    ) -> Result<Response<pb::SignInGoogleResponse>, Status> {
        let google = self.google.as_ref().ok_or_else(|| {
            ttakji_platform::refusal::refused(
                tonic::Code::FailedPrecondition,
                "GOOGLE_SIGN_IN_NOT_CONFIGURED",
                "Google sign-in is not configured on this server",
            )
        })?;
        let req = request.into_inner();
        let claims = google.verify(validate::id_token(&req.id_token)?).await?;
        let (account, new_account) = match accounts::by_google_sub(&self.db, &claims.sub).await? {
            Some(account) => (account, false),
            None if req.nickname.is_empty() => (
                self.named_after_google(&new_user_id(), &claims).await?,
                true,
            ),
            None => {
                let name = Nickname::parse(&req.nickname)?;
                let account =
                    accounts::create(&self.db, &new_user_id(), name.as_str(), Some(&claims.sub))
                        .await?;
                (account, true)
            }
        };
        // The caller is known only now: this method needs no token.
        tracing::Span::current().record("user_id", account.user_id.as_str());
        let token = auth::issue(&self.keys, &account.user_id, &account.nickname, false)?;
        Ok(Response::new(pb::SignInGoogleResponse {
            access_token: token.access_token,
            expires_at_unix_ms: token.expires_at_unix_ms,
            user_id: account.user_id,
            nickname: account.nickname,
            new_account,
        }))
    }
}
