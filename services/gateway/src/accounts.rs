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

fn taken(nickname: &str) -> Status {
    Status::already_exists(format!(
        "the nickname {nickname:?} is taken: choose another"
    ))
}

fn unavailable(e: &sqlx::Error) -> Status {
    tracing::error!(error = %e, "accounts store");
    Status::unavailable("accounts cannot be reached; try again")
}

fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.is_unique_violation())
}

/// Creates an account; ALREADY_EXISTS if the nickname is taken.
#[tracing::instrument(skip(db))]
pub async fn create(
    db: &Database,
    user_id: &str,
    nickname: &str,
    google_sub: Option<&str>,
) -> Result<Account, Status> {
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
        Err(e) if is_unique_violation(&e) => Err(taken(nickname)),
        Err(e) => Err(unavailable(&e)),
    }
}

/// The account of a Google subject, if there is one.
#[tracing::instrument(skip(db))]
pub async fn by_google_sub(db: &Database, sub: &str) -> Result<Option<Account>, Status> {
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
    .map_err(|e| unavailable(&e))
}

/// Changes a player's nickname; ALREADY_EXISTS if another player has it.
#[tracing::instrument(skip(db))]
pub async fn rename(db: &Database, user_id: &str, nickname: &str) -> Result<(), Status> {
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
        Ok(_) => Err(Status::not_found("there is no such account")),
        Err(e) if is_unique_violation(&e) => Err(taken(nickname)),
        Err(e) => Err(unavailable(&e)),
    }
}
