//! Accounts, owned by the gateway: every player has one, guests too, so a
//! nickname names one player. Nicknames are unique without regard to case.

use sqlx::Row as _;
use tonic::Status;
use ttakji_platform::on_pool;
use ttakji_platform::store::Database;

/// A stored account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user_id: String,
    pub nickname: String,
    /// Set for players signed in with Google.
    pub google_sub: Option<String>,
}

/// Why an account could not be made, found or changed.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("the nickname {0:?} is taken: choose another")]
    NicknameTaken(String),
    #[error("there is no such account")]
    NoSuchAccount,
    #[error("accounts cannot be reached; try again")]
    Unavailable(#[source] sqlx::Error),
    /// The store refused the data itself: retrying cannot help.
    #[error("the account cannot be stored as given: {0}")]
    Refused(String),
}

impl From<AccountError> for Status {
    fn from(e: AccountError) -> Status {
        match e {
            AccountError::NicknameTaken(_) => Status::already_exists(e.to_string()),
            AccountError::NoSuchAccount => Status::not_found(e.to_string()),
            AccountError::Unavailable(_) => Status::unavailable(e.to_string()),
            AccountError::Refused(_) => Status::invalid_argument(e.to_string()),
        }
    }
}

/// A store error as an [`AccountError`], logged: data the store refuses
/// for good is INVALID_ARGUMENT; anything else is worth a retry and the
/// client is told only that accounts cannot be reached.
fn unavailable(e: sqlx::Error) -> AccountError {
    if ttakji_platform::store::is_permanent(&e) {
        tracing::warn!(error = %e, "accounts store refused the data");
        return AccountError::Refused(e.to_string());
    }
    tracing::error!(error = %e, "accounts store");
    AccountError::Unavailable(e)
}

fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.is_unique_violation())
}

/// Creates an account, unless the nickname is taken.
#[tracing::instrument(skip(db))]
pub async fn create(
    db: &Database,
    user_id: &str,
    nickname: &str,
    google_sub: Option<&str>,
) -> Result<Account, AccountError> {
    let result = on_pool!(db, |pool| {
        sqlx::query(
            "INSERT INTO accounts (user_id, google_sub, nickname, nickname_key, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(user_id)
        .bind(google_sub)
        .bind(nickname)
        .bind(nickname.to_lowercase())
        .bind(ttakji_platform::now_unix_ms())
        .execute(pool)
        .await
        .map(|_| ())
    });
    match result {
        Ok(_) => Ok(Account {
            user_id: user_id.to_owned(),
            nickname: nickname.to_owned(),
            google_sub: google_sub.map(str::to_owned),
        }),
        Err(e) if is_unique_violation(&e) => Err(AccountError::NicknameTaken(nickname.to_owned())),
        Err(e) => Err(unavailable(e)),
    }
}

/// The account of a Google subject, if there is one.
#[tracing::instrument(skip(db))]
pub async fn by_google_sub(db: &Database, sub: &str) -> Result<Option<Account>, AccountError> {
    on_pool!(db, |pool| {
        sqlx::query("SELECT user_id, nickname, google_sub FROM accounts WHERE google_sub = $1")
            .bind(sub)
            .fetch_optional(pool)
            .await
            .and_then(|row| {
                row.map(|r| {
                    Ok(Account {
                        user_id: r.try_get("user_id")?,
                        nickname: r.try_get("nickname")?,
                        google_sub: r.try_get("google_sub")?,
                    })
                })
                .transpose()
            })
    })
    .map_err(unavailable)
}

/// The nickname of account `user_id`, if there is one.
pub async fn nickname_of(db: &Database, user_id: &str) -> Result<Option<String>, AccountError> {
    on_pool!(db, |pool| {
        sqlx::query_scalar::<_, String>("SELECT nickname FROM accounts WHERE user_id = $1")
            .bind(user_id)
            .fetch_optional(pool)
            .await
    })
    .map_err(unavailable)
}

/// The accounts a gateway has seen, with their nicknames: a caller's token
/// is matched to its account once in a while rather than on every call,
/// and the caller is known by the account's nickname, not the one the
/// token was issued with (a renamed player's old token still works, under
/// the new name).
#[derive(Debug, Clone)]
pub struct Known {
    db: Database,
    seen: std::sync::Arc<
        std::sync::Mutex<std::collections::HashMap<String, (String, std::time::Instant)>>,
    >,
}

/// How long an account seen is taken on trust (and a rename made through
/// another gateway may go unseen here).
const KNOWN_FOR: std::time::Duration = std::time::Duration::from_secs(30);

/// The most accounts remembered; past it the memory starts again.
const KNOWN_AT_MOST: usize = 100_000;

impl Known {
    #[must_use]
    pub fn new(db: Database) -> Known {
        Known {
            db,
            seen: std::sync::Arc::default(),
        }
    }

    fn remember(&self, user_id: &str, nickname: &str) {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.len() >= KNOWN_AT_MOST {
            seen.clear();
        }
        seen.insert(
            user_id.to_owned(),
            (nickname.to_owned(), std::time::Instant::now()),
        );
    }

    /// The account's nickname now; UNAUTHENTICATED when `user_id` has no
    /// account (a token signed for a subject never made, or gone).
    ///
    /// # Errors
    /// UNAUTHENTICATED, or UNAVAILABLE when accounts cannot be read.
    pub async fn check(&self, user_id: &str) -> Result<String, Status> {
        let fresh = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(user_id)
            .filter(|(_, at)| at.elapsed() < KNOWN_FOR)
            .map(|(name, _)| name.clone());
        if let Some(name) = fresh {
            return Ok(name);
        }
        let Some(name) = nickname_of(&self.db, user_id).await? else {
            return Err(Status::unauthenticated(
                "this token's account does not exist: sign in again",
            ));
        };
        self.remember(user_id, &name);
        Ok(name)
    }

    /// The account was renamed through this gateway.
    pub fn renamed(&self, user_id: &str, nickname: &str) {
        self.remember(user_id, nickname);
    }
}

/// Changes a player's nickname, unless another player has it.
#[tracing::instrument(skip(db))]
pub async fn rename(db: &Database, user_id: &str, nickname: &str) -> Result<(), AccountError> {
    let result = on_pool!(db, |pool| {
        sqlx::query("UPDATE accounts SET nickname = $2, nickname_key = $3 WHERE user_id = $1")
            .bind(user_id)
            .bind(nickname)
            .bind(nickname.to_lowercase())
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
    });
    match result {
        Ok(1) => Ok(()),
        Ok(_) => Err(AccountError::NoSuchAccount),
        Err(e) if is_unique_violation(&e) => Err(AccountError::NicknameTaken(nickname.to_owned())),
        Err(e) => Err(unavailable(e)),
    }
}

#[cfg(test)]
mod tests {
    use ttakji_platform::store::Database;

    use super::{AccountError, by_google_sub, create, rename};

    async fn store() -> Database {
        Database::connect("sqlite::memory:")
            .await
            .expect("an in-memory store")
    }

    #[tokio::test]
    async fn a_nickname_names_one_player_whatever_its_case() {
        let db = store().await;
        create(&db, "u1", "Jin", None)
            .await
            .expect("a new nickname");
        let taken = create(&db, "u2", "jIN", None).await.expect_err("taken");
        assert!(
            matches!(&taken, AccountError::NicknameTaken(n) if n == "jIN"),
            "{taken:?}"
        );
        let status = tonic::Status::from(taken);
        assert_eq!(status.code(), tonic::Code::AlreadyExists);
        assert_eq!(
            status.message(),
            "the nickname \"jIN\" is taken: choose another"
        );
        create(&db, "u2", "lee", None)
            .await
            .expect("another nickname");
        assert!(matches!(
            rename(&db, "u2", "JIN").await,
            Err(AccountError::NicknameTaken(_))
        ));
        rename(&db, "u1", "jin-2").await.expect("a free nickname");
        rename(&db, "u2", "Jin").await.expect("freed by the rename");
    }

    #[tokio::test]
    async fn renaming_an_unknown_account_is_not_found() {
        let db = store().await;
        let missing = rename(&db, "nobody", "jin").await.expect_err("no account");
        assert!(matches!(missing, AccountError::NoSuchAccount));
        assert_eq!(tonic::Status::from(missing).code(), tonic::Code::NotFound);
    }

    #[tokio::test]
    async fn a_google_account_is_found_by_its_subject() {
        let db = store().await;
        assert_eq!(by_google_sub(&db, "g-1").await.expect("readable"), None);
        let made = create(&db, "u1", "jin", Some("g-1")).await.expect("made");
        assert_eq!(
            by_google_sub(&db, "g-1").await.expect("readable"),
            Some(made)
        );
    }
}
