//! Accounts, owned by the gateway: every player has one, guests too, so a
//! nickname names one player.
//!
//! Nicknames are unique by their confusable skeleton ([`skeleton`]: UTS #39
//! of the lower-cased name), so neither `JIN` nor a Cyrillic `јin` can pose
//! as `jin`. The names an account changed away from stay its own while it
//! exists (table `nicknames`): its old games show them, so nobody else may
//! take them. A guest whose newest token has expired can never sign in
//! again; such accounts are removed with their names
//! ([`remove_expired_guests`]).

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
    #[error("accounts cannot be used on this server; retrying will not help")]
    Broken(#[source] sqlx::Error),
    /// The store refused the data itself: retrying cannot help.
    #[error("the account cannot be stored as given: {0}")]
    Refused(String),
}

impl From<AccountError> for Status {
    fn from(e: AccountError) -> Status {
        use tonic::Code;
        let (code, reason) = match e {
            AccountError::NicknameTaken(_) => (Code::AlreadyExists, "NICKNAME_TAKEN"),
            AccountError::NoSuchAccount => (Code::NotFound, "ACCOUNT_NOT_FOUND"),
            AccountError::Unavailable(_) => (Code::Unavailable, "UNAVAILABLE"),
            AccountError::Broken(_) => (Code::FailedPrecondition, "ACCOUNT_NOT_STORED"),
            AccountError::Refused(_) => (Code::InvalidArgument, "ACCOUNT_NOT_STORED"),
        };
        ttakji_platform::refusal::refused(code, reason, e.to_string())
    }
}

/// A store error as an [`AccountError`], logged, by
/// [`ttakji_platform::store::failure`]: data the store refuses for good is
/// INVALID_ARGUMENT, a store not as expected FAILED_PRECONDITION, and
/// anything else is worth a retry: the client is told only that accounts
/// cannot be reached.
fn unavailable(e: sqlx::Error) -> AccountError {
    use ttakji_platform::store::Failure;
    match ttakji_platform::store::failure(&e) {
        Failure::Refused => {
            tracing::warn!(error = %e, "accounts store refused the data");
            AccountError::Refused(e.to_string())
        }
        Failure::Broken => {
            tracing::error!(error = %e, "accounts store is not as expected");
            AccountError::Broken(e)
        }
        Failure::Transient => {
            tracing::error!(error = %e, "accounts store");
            AccountError::Unavailable(e)
        }
    }
}

fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.is_unique_violation())
}

/// The key under which nicknames must differ: the UTS #39 confusable
/// skeleton of the lower-cased name, lower-cased again. `Jin`, `JIN`,
/// `јin` (Cyrillic је) and `jіn` (Ukrainian і) all have the key `jin`.
#[must_use]
pub fn skeleton(nickname: &str) -> String {
    unicode_security::skeleton(&nickname.to_lowercase())
        .collect::<String>()
        .to_lowercase()
}

/// When the tokens of an account issued at `now_ms` expire, and a little
/// after: a token's own expiry is in whole seconds.
fn tokens_expire_at(now_ms: i64) -> i64 {
    let ttl = i64::try_from(crate::TOKEN_TTL.as_millis()).unwrap_or(i64::MAX);
    now_ms.saturating_add(ttl).saturating_add(60_000)
}

/// Creates an account, unless the nickname (or one confusable with it) is
/// another's.
#[tracing::instrument(skip(db))]
pub async fn create(
    db: &Database,
    user_id: &str,
    nickname: &str,
    google_sub: Option<&str>,
) -> Result<Account, AccountError> {
    let now = ttakji_platform::now_unix_ms();
    let key = skeleton(nickname);
    let result = on_pool!(db, |pool| {
        async {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "INSERT INTO nicknames (skeleton, user_id, nickname, since) VALUES ($1, $2, $3, $4)",
            )
            .bind(&key)
            .bind(user_id)
            .bind(nickname)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO accounts (user_id, google_sub, nickname, nickname_key, created_at, tokens_expire_at) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(user_id)
            .bind(google_sub)
            .bind(nickname)
            .bind(nickname.to_lowercase())
            .bind(now)
            .bind(tokens_expire_at(now))
            .execute(&mut *tx)
            .await?;
            tx.commit().await
        }
        .await
    });
    match result {
        Ok(()) => Ok(Account {
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

/// Changes a player's nickname, unless another player has it (or had it,
/// or one confusable with it). The old name stays the player's.
#[tracing::instrument(skip(db))]
pub async fn rename(db: &Database, user_id: &str, nickname: &str) -> Result<(), AccountError> {
    let now = ttakji_platform::now_unix_ms();
    let key = skeleton(nickname);
    let result = on_pool!(db, |pool| {
        async {
            let mut tx = pool.begin().await?;
            // The player's own old name (or a variant of it) may be taken back.
            let claimed = sqlx::query(
                "INSERT INTO nicknames (skeleton, user_id, nickname, since) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (skeleton) DO UPDATE SET nickname = excluded.nickname, since = excluded.since \
                 WHERE nicknames.user_id = excluded.user_id",
            )
            .bind(&key)
            .bind(user_id)
            .bind(nickname)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if claimed == 0 {
                return Ok::<_, sqlx::Error>(None);
            }
            let renamed = sqlx::query(
                "UPDATE accounts SET nickname = $2, nickname_key = $3, tokens_expire_at = $4 WHERE user_id = $1",
            )
            .bind(user_id)
            .bind(nickname)
            .bind(nickname.to_lowercase())
            .bind(tokens_expire_at(now))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if renamed == 1 {
                tx.commit().await?;
            }
            Ok(Some(renamed))
        }
        .await
    });
    match result {
        Ok(Some(1)) => Ok(()),
        Ok(Some(_)) => Err(AccountError::NoSuchAccount),
        Ok(None) => Err(AccountError::NicknameTaken(nickname.to_owned())),
        Err(e) if is_unique_violation(&e) => Err(AccountError::NicknameTaken(nickname.to_owned())),
        Err(e) => Err(unavailable(e)),
    }
}

/// Removes up to `batch` guest accounts whose newest token expired before
/// `now_ms`, with their names; returns how many went.
///
/// # Errors
/// When the store cannot be reached.
pub async fn remove_expired_guests(
    db: &Database,
    now_ms: i64,
    batch: i64,
) -> Result<u64, AccountError> {
    on_pool!(db, |pool| {
        async {
            let mut tx = pool.begin().await?;
            let expired: Vec<String> = sqlx::query_scalar(
                "SELECT user_id FROM accounts WHERE google_sub IS NULL AND tokens_expire_at < $1 \
                 ORDER BY tokens_expire_at LIMIT $2",
            )
            .bind(now_ms)
            .bind(batch)
            .fetch_all(&mut *tx)
            .await?;
            for user_id in &expired {
                sqlx::query("DELETE FROM nicknames WHERE user_id = $1")
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM accounts WHERE user_id = $1")
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(expired.len() as u64)
        }
        .await
    })
    .map_err(unavailable)
}

/// Removes expired guests every `every` until `shutdown`, a batch at a
/// time, counting them in `ttakji_guests_removed_total`.
pub fn sweep_expired_guests(
    db: Database,
    every: std::time::Duration,
    shutdown: &ttakji_platform::shutdown::Shutdown,
) {
    const BATCH: i64 = 500;
    let mut stop = shutdown.clone();
    shutdown.spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.wait() => return,
                _ = tick.tick() => {}
            }
            loop {
                match remove_expired_guests(&db, ttakji_platform::now_unix_ms(), BATCH).await {
                    Ok(0) => break,
                    Ok(n) => {
                        metrics::counter!("ttakji_guests_removed_total").increment(n);
                        tracing::info!(removed = n, "expired guest accounts removed");
                        if n < BATCH.unsigned_abs() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "expired guests not removed; next sweep retries");
                        break;
                    }
                }
            }
        }
    });
}

/// Gives every account that has no row in `nicknames` (made before names
/// were kept by skeleton) its row, unless another account's name is
/// confusable with it: then the older name stays as it is, unprotected,
/// and this is logged. Returns how many rows were written.
///
/// # Errors
/// When the store cannot be reached.
pub async fn backfill_skeletons(db: &Database) -> Result<u64, AccountError> {
    let missing: Vec<(String, String, i64)> = on_pool!(db, |pool| {
        sqlx::query_as(
            "SELECT a.user_id, a.nickname, a.created_at FROM accounts a \
             WHERE NOT EXISTS (SELECT 1 FROM nicknames n WHERE n.user_id = a.user_id)",
        )
        .fetch_all(pool)
        .await
    })
    .map_err(unavailable)?;
    let mut written = 0;
    for (user_id, nickname, since) in missing {
        let key = skeleton(&nickname);
        let done = on_pool!(db, |pool| {
            sqlx::query(
                "INSERT INTO nicknames (skeleton, user_id, nickname, since) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (skeleton) DO NOTHING",
            )
            .bind(&key)
            .bind(&user_id)
            .bind(&nickname)
            .bind(since)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(unavailable)?;
        if done == 1 {
            written += 1;
        } else {
            tracing::warn!(%user_id, %nickname, "a nickname made before skeletons is confusable with another's; left as it is");
        }
    }
    Ok(written)
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
        assert!(
            matches!(
                rename(&db, "u2", "Jin").await,
                Err(AccountError::NicknameTaken(_))
            ),
            "an old name stays its player's"
        );
        rename(&db, "u1", "JIN")
            .await
            .expect("taken back by its player");
        assert_eq!(
            super::nickname_of(&db, "u1")
                .await
                .expect("read")
                .as_deref(),
            Some("JIN")
        );
    }

    #[tokio::test]
    async fn a_look_alike_in_another_script_is_the_same_nickname() {
        let db = store().await;
        create(&db, "u1", "jin", None).await.expect("jin");
        // Cyrillic је and Ukrainian і, and the digit 1 for l.
        for look_alike in ["\u{458}in", "j\u{456}n", "J\u{406}N"] {
            let taken = create(&db, "u2", look_alike, None).await;
            assert!(
                matches!(taken, Err(AccountError::NicknameTaken(_))),
                "{look_alike:?}: {taken:?}"
            );
        }
        create(&db, "u3", "paul", None).await.expect("paul");
        assert!(matches!(
            create(&db, "u4", "pau1", None).await,
            Err(AccountError::NicknameTaken(_))
        ));
        assert_eq!(super::skeleton("jin"), super::skeleton("\u{458}IN"));
        assert_ne!(super::skeleton("jin"), super::skeleton("jun"));
    }

    #[tokio::test]
    async fn a_guest_whose_tokens_have_all_expired_is_removed_with_its_names() {
        let db = store().await;
        create(&db, "guest", "kim", None).await.expect("guest");
        rename(&db, "guest", "kim2").await.expect("renamed");
        create(&db, "signed", "lee", Some("g-1"))
            .await
            .expect("google");
        let now = ttakji_platform::now_unix_ms();
        let ttl = i64::try_from(crate::TOKEN_TTL.as_millis()).expect("ttl");
        assert_eq!(
            super::remove_expired_guests(&db, now + ttl - 1_000, 100)
                .await
                .expect("clean"),
            0,
            "its token is still good"
        );
        let later = now + ttl + 120_000;
        assert_eq!(
            super::remove_expired_guests(&db, later, 100)
                .await
                .expect("clean"),
            1
        );
        assert_eq!(super::nickname_of(&db, "guest").await.expect("read"), None);
        assert!(
            super::nickname_of(&db, "signed")
                .await
                .expect("read")
                .is_some(),
            "a Google account stays"
        );
        create(&db, "new", "kim", None)
            .await
            .expect("its old name is free");
        create(&db, "new2", "kim2", None)
            .await
            .expect("and its last");
    }

    #[tokio::test]
    async fn accounts_made_before_skeletons_get_theirs_unless_confusable() {
        let db = store().await;
        let Database::Sqlite(sqlite) = &db else {
            unreachable!("an SQLite store")
        };
        for (id, name) in [("old1", "jin"), ("old2", "\u{458}in"), ("old3", "lee")] {
            sqlx::query(
                "INSERT INTO accounts (user_id, nickname, nickname_key, created_at) VALUES ($1, $2, $3, 0)",
            )
            .bind(id)
            .bind(name)
            .bind(name.to_lowercase())
            .execute(&sqlite.writer)
            .await
            .expect("an old account");
        }
        assert_eq!(super::backfill_skeletons(&db).await.expect("backfill"), 2);
        assert_eq!(super::backfill_skeletons(&db).await.expect("again"), 0);
        assert!(matches!(
            create(&db, "u9", "LEE", None).await,
            Err(AccountError::NicknameTaken(_))
        ));
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
