//! A move's write on PostgreSQL, gathered with the moves of other games
//! into one statement and one commit.
//!
//! Moves are most of the writes, and each is one statement. Written one at
//! a time, every move is a round trip, a transaction and a commit record of
//! its own; gathered, the moves waiting while a commit is under way share
//! the next one. A move is never held back to wait for company: the next
//! batch takes what came while the one before it was being written, so at
//! a low rate a batch is one move, as before.
//!
//! What a batch promises is what one move's write promises: a move is
//! written only by the epoch that holds its game, and a move whose game was
//! taken over is told so, while the others in its batch are written. A
//! batch that fails as a whole (a move stored twice, a lost connection) is
//! undone and its moves are written again one by one, so each gets its own
//! answer.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

/// One move's write: the game's standing columns, the move and its event,
/// as they are bound.
#[derive(Debug)]
pub(crate) struct MoveRow {
    pub game_id: String,
    pub epoch: i64,
    pub deadline_at: Option<i64>,
    pub draw_offered_by: Option<&'static str>,
    pub counting: Option<String>,
    pub resumed_after: String,
    pub away: String,
    pub stand_ins: String,
    pub ai_engine: &'static str,
    pub number: i64,
    pub color: &'static str,
    pub point: Option<String>,
    pub by_stand_in: bool,
    pub seq: i64,
    pub payload: Vec<u8>,
    pub now: i64,
}

/// A move's write as one statement in a transaction of its own; true when
/// the writer held the game.
const ONE_MOVE: &str = "WITH held AS (UPDATE games SET deadline_at = $2, draw_offered_by = $3, \
     counting = $11, resumed_after = $12, away = $13, stand_ins = $14, ai_engine = $16, \
     move_count = $5 WHERE id = $1 AND epoch = $4 RETURNING id), \
     played AS (INSERT INTO moves (game_id, number, color, point, played_at, by_stand_in) \
     SELECT id, $5, $6, $7, $10, $15 FROM held), \
     told AS (INSERT INTO game_events (game_id, seq, payload, created_at) \
     SELECT id, $8, $9, $10 FROM held) \
     SELECT COUNT(*) FROM held";

/// Many games' moves as one statement: the rows come in as arrays, one
/// element per move, and the games held at their writers' epochs come
/// back. No game is twice in one batch.
const MOVES: &str = "WITH input AS (SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[], \
     $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int8[], \
     $11::text[], $12::text[], $13::bool[], $14::int8[], $15::bytea[], $16::int8[]) \
     AS m(game_id, epoch, deadline_at, draw_offered_by, counting, resumed_after, away, \
     stand_ins, ai_engine, number, color, point, by_stand_in, seq, payload, now)), \
     held AS (UPDATE games SET deadline_at = m.deadline_at, draw_offered_by = m.draw_offered_by, \
     counting = m.counting, resumed_after = m.resumed_after, away = m.away, \
     stand_ins = m.stand_ins, ai_engine = m.ai_engine, move_count = m.number \
     FROM input m WHERE games.id = m.game_id AND games.epoch = m.epoch RETURNING games.id), \
     played AS (INSERT INTO moves (game_id, number, color, point, played_at, by_stand_in) \
     SELECT m.game_id, m.number, m.color, m.point, m.now, m.by_stand_in \
     FROM input m JOIN held ON held.id = m.game_id), \
     told AS (INSERT INTO game_events (game_id, seq, payload, created_at) \
     SELECT m.game_id, m.seq, m.payload, m.now FROM input m JOIN held ON held.id = m.game_id) \
     SELECT id FROM held";

/// Batches being written at once, each on a connection of its own: while
/// they are, the next moves gather.
const IN_FLIGHT: usize = 4;
/// The most moves one statement carries.
const MOST: usize = 512;
/// Moves waiting for a batch; past this, a write waits for room.
const QUEUE: usize = 4096;

struct Pending {
    row: MoveRow,
    answer: oneshot::Sender<sqlx::Result<bool>>,
}

/// The moves of every game this process writes, gathered into batches.
#[derive(Debug, Clone)]
pub(crate) struct Moves {
    queue: mpsc::Sender<Pending>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("row", &self.row)
            .finish_non_exhaustive()
    }
}

impl Moves {
    /// Starts the task that writes the batches on `pool`; it ends once
    /// every handle is dropped and what was queued is written.
    pub(crate) fn start(pool: sqlx::PgPool) -> Moves {
        let (queue, waiting) = mpsc::channel(QUEUE);
        tokio::spawn(gather(pool, waiting));
        Moves { queue }
    }

    /// Writes one move with the others waiting beside it; true when the
    /// writer held the game at its epoch (else nothing was written).
    pub(crate) async fn write(&self, row: MoveRow) -> sqlx::Result<bool> {
        let (answer, told) = oneshot::channel();
        self.queue
            .send(Pending { row, answer })
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        told.await.map_err(|_| sqlx::Error::PoolClosed)?
    }
}

/// Takes what is waiting whenever a batch may start.
async fn gather(pool: sqlx::PgPool, mut waiting: mpsc::Receiver<Pending>) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(first) = waiting.recv().await {
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let mut batch = vec![first];
        while batch.len() < MOST {
            match waiting.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let pool = pool.clone();
        tokio::spawn(async move {
            write_batch(&pool, batch).await;
            drop(slot);
        });
    }
}

/// Writes a batch and answers each of its moves.
async fn write_batch(pool: &sqlx::PgPool, batch: Vec<Pending>) {
    if batch.len() == 1 {
        metrics::histogram!("ttakji_postgres_batch_moves").record(1.0);
        write_alone(pool, batch).await;
        return;
    }
    // A game's second write in one batch (its writer gave up waiting on
    // the first) goes after the batch, alone, in the order it came.
    let mut games = HashSet::with_capacity(batch.len());
    let (together, after): (Vec<Pending>, Vec<Pending>) = batch
        .into_iter()
        .partition(|p| games.insert(p.row.game_id.clone()));
    metrics::histogram!("ttakji_postgres_batch_moves").record(together.len() as f64);
    match write_together(pool, &together).await {
        Ok(held) => {
            let held: HashSet<String> = held.into_iter().collect();
            for p in together {
                let _ = p.answer.send(Ok(held.contains(&p.row.game_id)));
            }
        }
        Err(e) => {
            tracing::debug!(error = %e, moves = together.len(), "a batch of moves failed; writing them one by one");
            write_alone(pool, together).await;
        }
    }
    write_alone(pool, after).await;
}

/// Writes each move in a statement and commit of its own, in order, and
/// answers it.
async fn write_alone(pool: &sqlx::PgPool, moves: Vec<Pending>) {
    for p in moves {
        let written = write_one(pool, &p.row).await;
        let _ = p.answer.send(written);
    }
}

/// One move's write alone.
async fn write_one(pool: &sqlx::PgPool, m: &MoveRow) -> sqlx::Result<bool> {
    let held: i64 = sqlx::query_scalar(ONE_MOVE)
        .bind(&m.game_id)
        .bind(m.deadline_at)
        .bind(m.draw_offered_by)
        .bind(m.epoch)
        .bind(m.number)
        .bind(m.color)
        .bind(m.point.as_deref())
        .bind(m.seq)
        .bind(m.payload.as_slice())
        .bind(m.now)
        .bind(m.counting.as_deref())
        .bind(&m.resumed_after)
        .bind(&m.away)
        .bind(&m.stand_ins)
        .bind(m.by_stand_in)
        .bind(m.ai_engine)
        .fetch_one(pool)
        .await?;
    Ok(held > 0)
}

/// Many games' moves in one statement; the ids of the games held.
async fn write_together(pool: &sqlx::PgPool, batch: &[Pending]) -> sqlx::Result<Vec<String>> {
    let rows = || batch.iter().map(|p| &p.row);
    sqlx::query_scalar(MOVES)
        .bind(rows().map(|m| m.game_id.as_str()).collect::<Vec<_>>())
        .bind(rows().map(|m| m.epoch).collect::<Vec<_>>())
        .bind(rows().map(|m| m.deadline_at).collect::<Vec<_>>())
        .bind(rows().map(|m| m.draw_offered_by).collect::<Vec<_>>())
        .bind(rows().map(|m| m.counting.as_deref()).collect::<Vec<_>>())
        .bind(rows().map(|m| m.resumed_after.as_str()).collect::<Vec<_>>())
        .bind(rows().map(|m| m.away.as_str()).collect::<Vec<_>>())
        .bind(rows().map(|m| m.stand_ins.as_str()).collect::<Vec<_>>())
        .bind(rows().map(|m| m.ai_engine).collect::<Vec<_>>())
        .bind(rows().map(|m| m.number).collect::<Vec<_>>())
        .bind(rows().map(|m| m.color).collect::<Vec<_>>())
        .bind(rows().map(|m| m.point.as_deref()).collect::<Vec<_>>())
        .bind(rows().map(|m| m.by_stand_in).collect::<Vec<_>>())
        .bind(rows().map(|m| m.seq).collect::<Vec<_>>())
        .bind(rows().map(|m| m.payload.as_slice()).collect::<Vec<_>>())
        .bind(rows().map(|m| m.now).collect::<Vec<_>>())
        .fetch_all(pool)
        .await
}
