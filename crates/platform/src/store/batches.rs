//! The SQLite writer: one connection, and writes queued for it run together
//! in one transaction, so a burst of moves from many games costs one commit
//! (one fsync) instead of one each, and no write ever sleeps on the file
//! lock. Each write runs inside a savepoint of its own: one that fails or
//! is undone (a fenced writer) leaves the others in the batch standing.
//!
//! A batch runs on the writer connection's handle directly, through
//! rusqlite, on the writer's own thread: sqlx would send every statement
//! to the connection's worker thread and wait for the answer, two thread
//! switches a statement and seven statements a move; and a runtime thread
//! that blocked on the commit's `fsync` would hand its core to another
//! thread first (`block_in_place`), a pair of thread switches a batch. The
//! runtime's threads only queue a write and are woken with its answer.
//!
//! The handle is borrowed from sqlx's connection (locked out of its worker
//! meanwhile) for a turn of batches, while writes keep coming and for at
//! most 20 ms, so its statements are prepared once a turn and not once a
//! move, and taking the connection (two more thread switches) is paid once
//! a turn; the other writes, which stay on sqlx, still take turns on the
//! one connection.

use std::borrow::Cow;

use tokio::sync::oneshot;

/// The most writes committed together.
const MAX_BATCH: usize = 128;

/// Writes waiting for the writer before senders wait too.
const QUEUE: usize = 1024;

/// The longest the writer keeps the connection for its batches while
/// writes through sqlx may be waiting for it.
const TURN: std::time::Duration = std::time::Duration::from_millis(20);

/// How long the writer waits for the next write before it gives the
/// connection back to the pool.
const LINGER: std::time::Duration = std::time::Duration::from_millis(2);

/// What a write does in its transaction: `Ok(Ok(_))` keeps what it wrote,
/// `Ok(Err(_))` undoes it (a refusal of its own), `Err` is a failed
/// statement (undone as well).
pub type Outcome<T, E> = Result<Result<T, E>, sqlx::Error>;

/// What a write's statements give, in rusqlite's terms.
pub type Written<T, E> = Result<Result<T, E>, rusqlite::Error>;

/// One queued write, its types erased.
trait Queued: Send {
    /// Runs the write; true to keep it.
    fn run(&mut self, conn: &rusqlite::Connection) -> bool;
    /// Answers the writer once the batch's commit is known.
    fn finish(self: Box<Self>, commit: Result<(), &sqlx::Error>);
}

struct Write<F, T, E> {
    write: Option<F>,
    outcome: Option<Outcome<T, E>>,
    reply: oneshot::Sender<Outcome<T, E>>,
    /// The write's place in the queue, given back when it is answered.
    _room: tokio::sync::OwnedSemaphorePermit,
}

impl<F, T, E> Queued for Write<F, T, E>
where
    F: FnOnce(&rusqlite::Connection) -> Written<T, E> + Send,
    T: Send,
    E: Send,
{
    fn run(&mut self, conn: &rusqlite::Connection) -> bool {
        let Some(write) = self.write.take() else {
            return false;
        };
        let outcome = write(conn).map_err(failed);
        let keep = matches!(outcome, Ok(Ok(_)));
        self.outcome = Some(outcome);
        keep
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

/// A statement that failed on the writer, as sqlx would have reported it:
/// a database error carrying SQLite's extended result code, so
/// [`failure`](super::failure) classes it as it does sqlx's own.
#[derive(Debug)]
struct Failed {
    message: String,
    /// SQLite's extended result code, when SQLite gave one.
    code: Option<i32>,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failed {}

impl sqlx::error::DatabaseError for Failed {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        self.code.map(|c| Cow::Owned(c.to_string()))
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        use rusqlite::ffi;
        match self.code {
            Some(ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
                sqlx::error::ErrorKind::UniqueViolation
            }
            Some(ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => sqlx::error::ErrorKind::ForeignKeyViolation,
            Some(ffi::SQLITE_CONSTRAINT_NOTNULL) => sqlx::error::ErrorKind::NotNullViolation,
            Some(ffi::SQLITE_CONSTRAINT_CHECK) => sqlx::error::ErrorKind::CheckViolation,
            _ => sqlx::error::ErrorKind::Other,
        }
    }
}

/// `e` in sqlx's terms.
fn failed(e: rusqlite::Error) -> sqlx::Error {
    let code = match &e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.extended_code),
        _ => None,
    };
    sqlx::Error::Database(Box::new(Failed {
        message: e.to_string(),
        code,
    }))
}

/// The queue to the writer.
#[derive(Debug, Clone)]
pub struct Batches {
    queue: std::sync::mpsc::Sender<Box<dyn Queued>>,
    /// Room in the queue: a write waits for a place before it is queued.
    room: std::sync::Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for dyn Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queued")
    }
}

impl Batches {
    /// Starts the writer, a thread of its own, on `pool`'s one
    /// connection; it stops when the last [`Batches`] is dropped. Called
    /// inside the runtime whose tasks write.
    #[must_use]
    pub fn start(pool: sqlx::SqlitePool) -> Batches {
        let (queue, jobs) = std::sync::mpsc::channel();
        let runtime = tokio::runtime::Handle::current();
        let started = std::thread::Builder::new()
            .name("sqlite-writer".to_owned())
            .spawn(move || write_batches(&runtime, &pool, &jobs));
        if let Err(e) = started {
            // Every write is refused as the store being closed.
            tracing::error!(error = %e, "the SQLite writer's thread could not start");
        }
        Batches {
            queue,
            room: std::sync::Arc::new(tokio::sync::Semaphore::new(QUEUE)),
        }
    }

    /// Runs `write` in the writer's next transaction, beside whatever else
    /// is queued, and answers once that transaction has committed. `write`
    /// runs its statements on the writer's connection, blocking: it must
    /// do nothing else that waits.
    ///
    /// # Errors
    /// The write's own failure, or the batch's commit failing, or the
    /// writer gone.
    pub async fn write<T, E, F>(&self, write: F) -> Outcome<T, E>
    where
        F: FnOnce(&rusqlite::Connection) -> Written<T, E> + Send + 'static,
        T: Send + 'static,
        E: Send + 'static,
    {
        let room = self
            .room
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Write {
            write: Some(write),
            outcome: None,
            reply,
            _room: room,
        });
        self.queue.send(job).map_err(|_| sqlx::Error::PoolClosed)?;
        answer.await.map_err(|_| sqlx::Error::WorkerCrashed)?
    }
}

/// The writer's thread: a turn on the connection whenever writes wait.
fn write_batches(
    runtime: &tokio::runtime::Handle,
    pool: &sqlx::SqlitePool,
    jobs: &std::sync::mpsc::Receiver<Box<dyn Queued>>,
) {
    // sqlx gives a connection back to its pool from a task of the runtime.
    let _runtime = runtime.enter();
    while let Ok(first) = jobs.recv() {
        let mut next = Some(first);
        if let Err(e) = take_turn(runtime, pool, jobs, &mut next) {
            // The connection could not be had: the write waiting for it
            // fails, and the next one tries again.
            if let Some(job) = next {
                job.finish(Err(&e));
            }
        }
    }
}

/// The writer's turn on the connection: batches run back to back on it,
/// its statements prepared once, while writes keep coming (one within
/// [`LINGER`]) and for at most [`TURN`]; then it goes back to the pool,
/// where the writes made through sqlx wait their turn. `next` is the write
/// the turn begins with; it is left there if the turn cannot begin.
fn take_turn(
    runtime: &tokio::runtime::Handle,
    pool: &sqlx::SqlitePool,
    jobs: &std::sync::mpsc::Receiver<Box<dyn Queued>>,
    next: &mut Option<Box<dyn Queued>>,
) -> Result<(), sqlx::Error> {
    let mut conn = runtime.block_on(pool.acquire())?;
    let mut handle = runtime.block_on(conn.lock_handle())?;
    let raw = handle.as_raw_handle();
    // SAFETY: `handle` keeps the connection locked out of sqlx's worker,
    // and the pool connection keeps it open, until after `db` is dropped
    // at the end of this function, on this thread; nothing else uses the
    // handle meanwhile. Made by `from_handle`, `db` never closes it;
    // dropping it finalizes the statements it prepared, on the connection
    // that is still open.
    #[allow(unsafe_code)]
    let db = unsafe { rusqlite::Connection::from_handle(raw.as_ptr()) }.map_err(failed)?;
    let ends = std::time::Instant::now() + TURN;
    while let Some(first) = next.take() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        metrics::histogram!("ttakji_sqlite_batch_writes").record(batch.len() as f64);
        let commit = run_on(&db, &mut batch).map_err(failed);
        for job in batch {
            job.finish(commit.as_ref().map(|_| ()));
        }
        if std::time::Instant::now() >= ends {
            break;
        }
        *next = jobs.recv_timeout(LINGER).ok();
    }
    drop(db);
    drop(handle);
    drop(conn);
    Ok(())
}

/// The batch's transaction on `db`: every write in a savepoint of its own.
fn run_on(db: &rusqlite::Connection, batch: &mut [Box<dyn Queued>]) -> rusqlite::Result<()> {
    let run = |sql: &str| db.prepare_cached(sql)?.execute([]).map(|_| ());
    run("BEGIN IMMEDIATE")?;
    let ran = (|| {
        for job in batch.iter_mut() {
            run("SAVEPOINT write")?;
            if !job.run(db) {
                run("ROLLBACK TO write")?;
            }
            run("RELEASE write")?;
        }
        run("COMMIT")
    })();
    if ran.is_err() {
        let _ = db.execute_batch("ROLLBACK");
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
    ) -> impl FnOnce(&rusqlite::Connection) -> Written<i64, &'static str> + Send + 'static {
        move |conn| {
            conn.execute(
                "INSERT INTO t (k) VALUES ($1)",
                rusqlite::named_params! {"$1": k},
            )?;
            if k < 0 {
                return Ok(Err("negative keys are undone"));
            }
            Ok(Ok(k))
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
        match &results[3] {
            Err(e) => assert_eq!(
                crate::store::failure(e),
                crate::store::Failure::Refused,
                "a duplicate key is the data's fault: {e}"
            ),
            other => panic!("a duplicate key fails alone, not {other:?}"),
        }
        assert!(matches!(results[4], Ok(Ok(4))));
        let kept: Vec<i64> = sqlx::query_scalar("SELECT k FROM t ORDER BY k")
            .fetch_all(&pool)
            .await
            .expect("read");
        assert_eq!(kept, [1, 2, 4]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_through_sqlx_gets_the_connection_while_batches_keep_coming() {
        let (_dir, pool) = file_db().await;
        let batches = Batches::start(pool.clone());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Four writers that never let the queue go empty for long.
        let mut writers = Vec::new();
        for w in 0..4_i64 {
            let (batches, stop) = (batches.clone(), stop.clone());
            writers.push(tokio::spawn(async move {
                let mut k = w;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let written = batches.write(insert(k)).await;
                    assert!(matches!(written, Ok(Ok(_))), "{written:?}");
                    k += 4;
                }
                k / 4
            }));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        // The batches hold the connection for a turn at most, so this
        // write gets it while they go on.
        let sqlx_write = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            sqlx::query("INSERT INTO t (k) VALUES (-1)").execute(&pool),
        )
        .await;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut batched = 0;
        for writer in writers {
            batched += writer.await.expect("writer");
        }
        assert!(
            matches!(sqlx_write, Ok(Ok(_))),
            "the sqlx write waited behind the batches: {sqlx_write:?}"
        );
        assert!(batched > 40, "only {batched} batched writes landed");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_a_runtime_of_many_threads_batches_take_turns_with_sqlx_on_the_one_connection() {
        let (_dir, pool) = file_db().await;
        let batches = Batches::start(pool.clone());
        // Batched writes from many tasks, and sqlx's own writes on the same
        // connection between them: every one lands, none waits on the file
        // lock, and sqlx's connection works after its handle was lent.
        let mut tasks = Vec::new();
        for k in 0..200_i64 {
            let batches = batches.clone();
            tasks.push(tokio::spawn(async move { batches.write(insert(k)).await }));
        }
        for k in 1000..1020_i64 {
            sqlx::query("INSERT INTO t (k) VALUES ($1)")
                .bind(k)
                .execute(&pool)
                .await
                .expect("sqlx writes between the batches");
        }
        for (k, task) in tasks.into_iter().enumerate() {
            let written = task.await.expect("task");
            assert!(
                matches!(written, Ok(Ok(w)) if w == i64::try_from(k).expect("small")),
                "{written:?}"
            );
        }
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(&pool)
            .await
            .expect("read");
        assert_eq!(count, 220);
    }
}
