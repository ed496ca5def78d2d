//! Storage: Postgres in a deployment, an SQLite file in the single-process
//! mode, behind one type. Queries are written once in SQL both accept
//! (`$1` placeholders, integers, text, bytes) and run on either pool with
//! [`on_pool!`](crate::on_pool).
//!
//! Migrations live in `migrations/postgres` and `migrations/sqlite` at the
//! top of the repository, one file per change with the same name in both.

pub mod batches;

use std::str::FromStr as _;

use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

/// A pool of either database.
#[derive(Debug, Clone)]
pub enum Database {
    Postgres(sqlx::PgPool),
    Sqlite(Sqlite),
}

/// An SQLite file: one writer connection, which writes wait for in turn
/// (the pool's queue) instead of retrying against the file lock with
/// SQLite's back-off sleeps, and read-only connections beside it (WAL
/// readers never wait for the writer).
#[derive(Debug, Clone)]
pub struct Sqlite {
    pub writer: sqlx::SqlitePool,
    pub readers: sqlx::SqlitePool,
    /// Writes that many callers make at once (moves), committed together.
    pub batches: batches::Batches,
}

/// Runs one expression against whichever pool a [`Database`] holds (the
/// writer of an SQLite file), binding `$pool` to it: the expression is
/// compiled once per database type.
#[macro_export]
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match $db {
            $crate::store::Database::Postgres($pool) => $body,
            $crate::store::Database::Sqlite(sqlite) => {
                let $pool = &sqlite.writer;
                $body
            }
        }
    };
}

/// [`on_pool!`] for a query that only reads: an SQLite file's readers
/// answer it beside the writer.
#[macro_export]
macro_rules! on_reader {
    ($db:expr, |$pool:ident| $body:expr) => {
        match $db {
            $crate::store::Database::Postgres($pool) => $body,
            $crate::store::Database::Sqlite(sqlite) => {
                let $pool = &sqlite.readers;
                $body
            }
        }
    };
}

impl Database {
    /// Connects to `url` (`postgres://…`, `sqlite://path` or `sqlite::memory:`)
    /// and applies the migrations.
    ///
    /// # Errors
    /// When the URL is not one of those, the database cannot be reached, or
    /// a migration fails.
    pub async fn connect(url: &str) -> anyhow::Result<Database> {
        use anyhow::Context as _;
        let db = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(16)
                .connect(url)
                .await
                .with_context(|| format!("connecting to Postgres at {}", redact(url)))?;
            Database::Postgres(pool)
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)
                .with_context(|| format!("reading the SQLite URL {url}"))?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                // WAL with synchronous=FULL: a commit is on disk before the
                // move it holds is acknowledged.
                .synchronous(SqliteSynchronous::Full)
                .foreign_keys(true)
                .busy_timeout(std::time::Duration::from_secs(5));
            let in_memory = url.contains(":memory:");
            // The file's one connection cannot drop as a network one can:
            // no ping (a trip to sqlx's worker thread) each time it is taken.
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .test_before_acquire(false)
                .connect_with(options)
                .await
                .with_context(|| format!("opening the SQLite database {url}"))?;
            // An in-memory database lives in its one connection only.
            let readers = if in_memory {
                writer.clone()
            } else {
                let options = SqliteConnectOptions::from_str(url)
                    .with_context(|| format!("reading the SQLite URL {url}"))?
                    .read_only(true)
                    .foreign_keys(true)
                    .busy_timeout(std::time::Duration::from_secs(5));
                SqlitePoolOptions::new()
                    .max_connections(4)
                    .min_connections(0)
                    .connect_lazy_with(options)
            };
            Database::Sqlite(Sqlite {
                batches: batches::Batches::start(writer.clone()),
                writer,
                readers,
            })
        } else {
            anyhow::bail!(
                "unsupported database URL {:?}: use postgres://… or sqlite://FILE",
                redact(url)
            );
        };
        db.migrate().await?;
        Ok(db)
    }

    /// Applies any migration not yet applied.
    ///
    /// # Errors
    /// When a migration fails.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        use anyhow::Context as _;
        match self {
            Database::Postgres(pool) => sqlx::migrate!("../../migrations/postgres")
                .run(pool)
                .await
                .context("migrating Postgres")?,
            Database::Sqlite(sqlite) => sqlx::migrate!("../../migrations/sqlite")
                .run(&sqlite.writer)
                .await
                .context("migrating SQLite")?,
        }
        Ok(())
    }

    /// "postgres" or "sqlite", for logs and metrics.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Database::Postgres(_) => "postgres",
            Database::Sqlite(_) => "sqlite",
        }
    }
}

/// Whether a store error would come back if the same write were retried:
/// the database refused the data itself (PostgreSQL's SQLSTATE classes 22,
/// a value the column cannot hold such as a NUL in text, and 23, a broken
/// constraint; SQLite's TOOBIG, CONSTRAINT and MISMATCH). Anything else (a
/// connection lost, a timeout, a lock) may pass on a retry.
#[must_use]
pub fn is_permanent(e: &sqlx::Error) -> bool {
    let Some(code) = e.as_database_error().and_then(|d| d.code()) else {
        return false;
    };
    if code.starts_with("22") || code.starts_with("23") {
        return true;
    }
    // SQLite reports its (extended) result code as a number.
    code.parse::<u32>()
        .is_ok_and(|n| matches!(n & 0xff, 18..=20))
}

/// What a store error means for the caller: the one classification every
/// service answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The database refused the request's data ([`is_permanent`]): the
    /// same request will always fail. INVALID_ARGUMENT.
    Refused,
    /// The store is not as this code expects (a stored value that does not
    /// decode, a missing table or column, a query the database rejects):
    /// no retry can help until an operator acts. FAILED_PRECONDITION.
    Broken,
    /// The store could not be reached or gave way (a connection, a
    /// timeout, a lock, a serialization conflict): a retry may pass.
    /// UNAVAILABLE.
    Transient,
}

/// The class of `e`.
#[must_use]
pub fn failure(e: &sqlx::Error) -> Failure {
    match e {
        sqlx::Error::Database(d) => {
            if is_permanent(e) {
                return Failure::Refused;
            }
            let code = d.code().unwrap_or_default();
            // PostgreSQL: 42 (syntax, an undefined table or column, no
            // privilege), 0A (not supported). SQLite: ERROR (1, as a
            // missing table is reported), SCHEMA (17).
            let sqlite = code.parse::<u32>().ok().map(|n| n & 0xff);
            if code.starts_with("42") || code.starts_with("0A") || matches!(sqlite, Some(1 | 17)) {
                Failure::Broken
            } else {
                Failure::Transient
            }
        }
        sqlx::Error::ColumnDecode { .. }
        | sqlx::Error::ColumnNotFound(_)
        | sqlx::Error::ColumnIndexOutOfBounds { .. }
        | sqlx::Error::Decode(_)
        | sqlx::Error::TypeNotFound { .. }
        | sqlx::Error::Encode(_)
        | sqlx::Error::Migrate(_)
        | sqlx::Error::Configuration(_) => Failure::Broken,
        _ => Failure::Transient,
    }
}

/// `e` as the status a caller is answered, `doing` saying what failed ("the
/// game could not be stored"), logged at the level it deserves. A refusal
/// names the database's reason; the others only say whether to retry.
#[must_use]
pub fn status(e: &sqlx::Error, doing: &str) -> tonic::Status {
    match failure(e) {
        Failure::Refused => {
            tracing::warn!(error = %e, "{doing}: the store refused the data");
            let reason = e
                .as_database_error()
                .map_or_else(|| e.to_string(), |d| d.message().to_owned());
            tonic::Status::invalid_argument(format!("{doing}: {reason}"))
        }
        Failure::Broken => {
            tracing::error!(error = %e, "{doing}: the store is not as expected");
            tonic::Status::failed_precondition(format!(
                "{doing}: the server's data cannot be used; retrying will not help"
            ))
        }
        Failure::Transient => {
            tracing::error!(error = %e, "{doing}: the store cannot be reached");
            tonic::Status::unavailable(format!("{doing}; try again"))
        }
    }
}

/// Creates an empty PostgreSQL database `name` (lower-case letters,
/// digits and underscores) on the server `admin_url` reaches: a throwaway
/// database for a test or a measurement, migrated when connected to.
///
/// # Errors
/// When the name is not such a name, the server cannot be reached, or the
/// database cannot be made.
pub async fn create_postgres_database(admin_url: &str, name: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use sqlx::Executor as _;
    anyhow::ensure!(
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
        "{name:?} is not a database name of lower-case letters, digits and underscores"
    );
    let admin = sqlx::PgPool::connect(admin_url)
        .await
        .with_context(|| format!("connecting to Postgres at {}", redact(admin_url)))?;
    let made = admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .with_context(|| format!("creating the database {name}"));
    admin.close().await;
    made.map(|_| ())
}

/// The URL with any password replaced, for messages.
#[must_use]
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_redacted_from_database_urls() {
        assert_eq!(
            super::redact("postgres://app:s3cret@db:5432/ttakji"),
            "postgres://app:***@db:5432/ttakji"
        );
        assert_eq!(super::redact("sqlite://ttakji.db"), "sqlite://ttakji.db");
    }

    #[tokio::test]
    async fn a_database_name_that_is_not_a_plain_identifier_is_refused_before_connecting() {
        for name in ["", "Upper", "a; DROP DATABASE test", "a-b", "\"q\""] {
            let refused = super::create_postgres_database("postgres://nowhere.invalid/x", name)
                .await
                .expect_err(name);
            assert!(
                refused.to_string().contains("is not a database name"),
                "{refused:#}"
            );
        }
    }

    #[tokio::test]
    async fn a_nul_in_text_is_refused_for_good_by_postgres_and_a_lost_connection_is_not() {
        let pool = sqlx::PgPool::connect(ttakji_test_support::postgres_admin_url())
            .await
            .expect("the tests' Postgres");
        let nul = sqlx::query("SELECT $1::text")
            .bind("a\0b")
            .fetch_one(&pool)
            .await
            .expect_err("a NUL cannot be text");
        assert!(super::is_permanent(&nul), "{nul:?}");
        pool.close().await;
        let closed = sqlx::query("SELECT 1")
            .fetch_one(&pool)
            .await
            .expect_err("closed");
        assert!(!super::is_permanent(&closed));
    }

    #[tokio::test]
    async fn a_broken_constraint_is_refused_for_good_by_sqlite() {
        let pool = sqlx::SqlitePool::connect("sqlite::memory:")
            .await
            .expect("sqlite");
        sqlx::query("CREATE TABLE t (n INTEGER NOT NULL CHECK (n > 0))")
            .execute(&pool)
            .await
            .expect("table");
        let broken = sqlx::query("INSERT INTO t (n) VALUES (0)")
            .execute(&pool)
            .await
            .expect_err("checked");
        assert!(super::is_permanent(&broken), "{broken:?}");
        assert_eq!(
            super::status(&broken, "the row could not be stored").code(),
            tonic::Code::InvalidArgument
        );
    }

    #[tokio::test]
    async fn store_errors_are_answered_by_whether_a_retry_can_help() {
        use super::{Failure, failure, status};
        let pool = sqlx::SqlitePool::connect("sqlite::memory:")
            .await
            .expect("sqlite");
        let missing = sqlx::query("SELECT n FROM no_such_table")
            .fetch_one(&pool)
            .await
            .expect_err("no table");
        assert_eq!(failure(&missing), Failure::Broken, "{missing:?}");
        let answer = status(&missing, "the game could not be read");
        assert_eq!(answer.code(), tonic::Code::FailedPrecondition);
        assert_eq!(
            answer.message(),
            "the game could not be read: the server's data cannot be used; retrying will not help"
        );
        let undecodable = sqlx::query_scalar::<_, i64>("SELECT 'not a number'")
            .fetch_one(&pool)
            .await
            .expect_err("text is no integer");
        assert_eq!(failure(&undecodable), Failure::Broken, "{undecodable:?}");
        pool.close().await;
        let closed = sqlx::query("SELECT 1")
            .fetch_one(&pool)
            .await
            .expect_err("closed");
        assert_eq!(failure(&closed), Failure::Transient);
        let answer = status(&closed, "the game could not be read");
        assert_eq!(answer.code(), tonic::Code::Unavailable);
        assert_eq!(answer.message(), "the game could not be read; try again");
    }
}
