//! The SQLite writer: one connection, and writes queued for it run together
//! in one transaction, so a burst of moves from many games costs one commit
//! (one fsync) instead of one each, and no write ever sleeps on the file
//! lock. Each write runs inside a savepoint of its own: one that fails or
//! is undone (a fenced writer) leaves the others in the batch standing.

use futures_util::future::BoxFuture;
use sqlx::SqliteConnection;
use tokio::sync::{mpsc, oneshot};

/// The most writes committed together.
const MAX_BATCH: usize = 128;

/// Writes waiting for the writer before senders wait too.
const QUEUE: usize = 1024;

/// What a write does in its transaction: `Ok(Ok(_))` keeps what it wrote,
/// `Ok(Err(_))` undoes it (a refusal of its own), `Err` is a failed
/// statement (undone as well).
pub type Outcome<T, E> = Result<Result<T, E>, sqlx::Error>;

/// One queued write, its types erased.
trait Queued: Send {
    /// Runs the write; true to keep it.
    fn run<'c>(&'c mut self, conn: &'c mut SqliteConnection) -> BoxFuture<'c, bool>;
    /// Answers the writer once the batch's commit is known.
    fn finish(self: Box<Self>, commit: Result<(), &sqlx::Error>);
}

struct Write<F, T, E> {
    write: Option<F>,
    outcome: Option<Outcome<T, E>>,
    reply: oneshot::Sender<Outcome<T, E>>,
}

impl<F, T, E> Queued for Write<F, T, E>
where
    F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Outcome<T, E>> + Send,
    T: Send,
    E: Send,
{
    fn run<'c>(&'c mut self, conn: &'c mut SqliteConnection) -> BoxFuture<'c, bool> {
        Box::pin(async move {
            let Some(write) = self.write.take() else {
                return false;
            };
            let outcome = write(conn).await;
            let keep = matches!(outcome, Ok(Ok(_)));
            self.outcome = Some(outcome);
            keep
        })
    }

    fn finish(self: Box<Self>, commit: Result<(), &sqlx::Error>) {
        let answer = match (self.outcome, commit) {
            (Some(Ok(Ok(kept))), Ok(())) => Ok(Ok(kept)),
            (Some(Ok(Ok(_))), Err(e)) => Err(failed_commit(e)),
            (Some(undone), _) => undone,
            (None, Err(e)) => Err(failed_commit(e)),
            (None, Ok(())) => Err(sqlx::Error::WorkerCrashed),
        };
        let _ = self.reply.send(answer);
    }
}

fn failed_commit(e: &sqlx::Error) -> sqlx::Error {
    sqlx::Error::Protocol(format!("the batch this write was in did not commit: {e}"))
}

/// The queue to the writer.
#[derive(Debug, Clone)]
pub struct Batches {
    queue: mpsc::Sender<Box<dyn Queued>>,
}

impl std::fmt::Debug for dyn Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queued")
    }
}

impl Batches {
    /// Starts the writer on `pool`'s one connection; it stops when the
    /// last [`Batches`] is dropped.
    #[must_use]
    pub fn start(pool: sqlx::SqlitePool) -> Batches {
        let (queue, jobs) = mpsc::channel(QUEUE);
        tokio::spawn(write_batches(pool, jobs));
        Batches { queue }
    }

    /// Runs `write` in the writer's next transaction, beside whatever else
    /// is queued, and answers once that transaction has committed.
    ///
    /// # Errors
    /// The write's own failure, or the batch's commit failing, or the
    /// writer gone.
    pub async fn write<T, E, F>(&self, write: F) -> Outcome<T, E>
    where
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Outcome<T, E>>
            + Send
            + 'static,
        T: Send + 'static,
        E: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Write {
            write: Some(write),
            outcome: None,
            reply,
        });
        self.queue
            .send(job)
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        answer.await.map_err(|_| sqlx::Error::WorkerCrashed)?
    }
}

async fn write_batches(pool: sqlx::SqlitePool, mut jobs: mpsc::Receiver<Box<dyn Queued>>) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        metrics::histogram!("ttakji_sqlite_batch_writes").record(batch.len() as f64);
        let commit = run_batch(&pool, &mut batch).await;
        for job in batch {
            job.finish(commit.as_ref().map(|_| ()));
        }
    }
}

async fn run_batch(
    pool: &sqlx::SqlitePool,
    batch: &mut [Box<dyn Queued>],
) -> Result<(), sqlx::Error> {
    let mut conn = pool.acquire().await?;
    sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
    let ran = async {
        for job in batch.iter_mut() {
            sqlx::query("SAVEPOINT write").execute(&mut *conn).await?;
            if !job.run(&mut conn).await {
                sqlx::query("ROLLBACK TO write").execute(&mut *conn).await?;
            }
            sqlx::query("RELEASE write").execute(&mut *conn).await?;
        }
        sqlx::query("COMMIT").execute(&mut *conn).await?;
        Ok::<(), sqlx::Error>(())
    }
    .await;
    if ran.is_err() {
        let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
    }
    ran
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn file_db() -> (tempdir::Dir, sqlx::SqlitePool) {
        let dir = tempdir::Dir::new();
        let url = format!("sqlite://{}", dir.path.join("b.db").display());
        let options: sqlx::sqlite::SqliteConnectOptions = url
            .parse::<sqlx::sqlite::SqliteConnectOptions>()
            .expect("url")
            .create_if_missing(true);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .expect("open");
        sqlx::query("CREATE TABLE t (k INTEGER PRIMARY KEY)")
            .execute(&pool)
            .await
            .expect("table");
        (dir, pool)
    }

    mod tempdir {
        pub struct Dir {
            pub path: std::path::PathBuf,
        }
        impl Dir {
            pub fn new() -> Dir {
                let path = std::env::temp_dir()
                    .join(format!("ttakji-batches-{}", uuid::Uuid::new_v4().simple()));
                std::fs::create_dir_all(&path).expect("temp dir");
                Dir { path }
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }

    fn insert(
        k: i64,
    ) -> impl for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Outcome<i64, &'static str>>
    + Send
    + 'static {
        move |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO t (k) VALUES ($1)")
                    .bind(k)
                    .execute(&mut *conn)
                    .await?;
                if k < 0 {
                    return Ok(Err("negative keys are undone"));
                }
                Ok(Ok(k))
            })
        }
    }

    #[tokio::test]
    async fn writes_queued_together_commit_together_and_a_failed_one_alone_is_undone() {
        let (_dir, pool) = file_db().await;
        let batches = Batches::start(pool.clone());
        // On this one-threaded runtime all five are queued before the
        // writer runs: one batch.
        let results =
            futures_util::future::join_all([1, 2, -3, 2, 4].map(|k| batches.write(insert(k))))
                .await;
        assert!(matches!(results[0], Ok(Ok(1))));
        assert!(matches!(results[1], Ok(Ok(2))));
        assert!(
            matches!(results[2], Ok(Err(_))),
            "undone by the write itself"
        );
        assert!(results[3].is_err(), "a duplicate key fails alone");
        assert!(matches!(results[4], Ok(Ok(4))));
        let kept: Vec<i64> = sqlx::query_scalar("SELECT k FROM t ORDER BY k")
            .fetch_all(&pool)
            .await
            .expect("read");
        assert_eq!(kept, [1, 2, 4]);
    }
}
