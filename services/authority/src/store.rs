//! The authority's tables: games, moves and game events. Every write a
//! player's action depends on is one transaction, committed before the
//! action is acknowledged.

use baduk::{BoardSize, Komi, Rules};
use sqlx::Row as _;
use ttakji_platform::store::Database;
use ttakji_platform::{on_pool, on_reader};
use ttakji_proto::GameId;

mod moves;

use crate::codec;
use crate::records::{GameMeta, Seat, StoredEvent, StoredGame, StoredMove, Write};

/// Why a game could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Storage(#[from] sqlx::Error),
    /// The row holds something this server never writes.
    #[error("{0}")]
    Unreadable(String),
}

fn seat_columns(seat: &Seat) -> (Option<&str>, &str, Option<&'static str>) {
    (
        seat.user_id.as_deref(),
        seat.name.as_str(),
        seat.ai.map(codec::level_text),
    )
}

/// A new game to store: its terms, its first deadline and its first event.
#[derive(Debug, Clone, Copy)]
pub struct NewGame<'a> {
    pub meta: &'a GameMeta,
    pub deadline_at: Option<i64>,
    pub first_event: &'a StoredEvent,
}

/// Stores a new game with its first event.
#[tracing::instrument(skip_all, fields(game_id = %meta.id))]
pub async fn insert_game(
    db: &Database,
    meta: &GameMeta,
    deadline_at: Option<i64>,
    first_event: &StoredEvent,
) -> sqlx::Result<()> {
    insert_games(
        db,
        &[NewGame {
            meta,
            deadline_at,
            first_event,
        }],
    )
    .await
}

/// Stores new games with their first events, all in one commit or none:
/// one statement for the games and one for the events, however many.
#[tracing::instrument(skip_all, fields(games = games.len()))]
pub async fn insert_games(db: &Database, games: &[NewGame<'_>]) -> sqlx::Result<()> {
    if games.is_empty() {
        return Ok(());
    }
    on_pool!(db, |pool| {
        let mut rows = sqlx::QueryBuilder::new(
            "INSERT INTO games (id, board_size, ruleset, komi_half, black_user_id, black_name, black_ai_level, \
             white_user_id, white_name, white_ai_level, seconds_per_move, status, created_at, deadline_at, ranked, \
             keep_colors, stand_in, ai_engine, ladder_rating) ",
        );
        rows.push_values(games, |mut row, game| {
            let meta = game.meta;
            let (black_user, black_name, black_level) = seat_columns(&meta.black);
            let (white_user, white_name, white_level) = seat_columns(&meta.white);
            row.push_bind(meta.id.as_str())
                .push_bind(i64::from(meta.rules.board_size.get()))
                .push_bind(meta.rules.preset.name())
                .push_bind(i64::from(meta.rules.komi.half_points()))
                .push_bind(black_user)
                .push_bind(black_name)
                .push_bind(black_level)
                .push_bind(white_user)
                .push_bind(white_name)
                .push_bind(white_level)
                .push_bind(i64::from(meta.seconds_per_move))
                .push_bind("playing")
                .push_bind(meta.created_at)
                .push_bind(game.deadline_at)
                .push_bind(meta.ranked)
                .push_bind(meta.keep_colors)
                .push_bind(meta.stand_in)
                .push_bind(codec::ai_engine_text(meta.ai_engine))
                .push_bind(i64::from(meta.ladder_rating));
        });
        let mut events =
            sqlx::QueryBuilder::new("INSERT INTO game_events (game_id, seq, payload, created_at) ");
        events.push_values(games, |mut row, game| {
            row.push_bind(game.meta.id.as_str())
                .push_bind(seq_column(game.first_event.seq))
                .push_bind(game.first_event.payload.as_slice())
                .push_bind(game.meta.created_at);
        });
        let mut tx = pool.begin().await?;
        rows.build().execute(&mut *tx).await?;
        events.build().execute(&mut *tx).await?;
        tx.commit().await
    })
}

fn seq_column(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

fn number_column(number: usize) -> i64 {
    i64::try_from(number).unwrap_or(i64::MAX)
}

/// Why an action was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Storage(#[from] sqlx::Error),
    /// Another authority took the game over: its epoch is newer.
    #[error("the game was taken over by another authority")]
    Fenced,
}

/// The epoch a game's creator holds.
pub const FIRST_EPOCH: u64 = 1;

/// Takes a game over: raises its epoch, so that writes of the epoch before
/// fail from now on. Returns the epoch to write with, or `None` if there is
/// no such game. Read the game after this, not before: what the earlier
/// owner wrote up to here is then in the store. A finished game is never
/// written again, so reading it takes nothing over and writes nothing.
///
/// `give_back_ms` moves the clock's deadline later, in the same write: the
/// time the game had no owner is not the player's to lose.
#[tracing::instrument(skip(db))]
pub async fn take_over(
    db: &Database,
    game_id: &str,
    give_back_ms: i64,
) -> sqlx::Result<Option<u64>> {
    let raised: Option<i64> = on_pool!(db, |pool| {
        sqlx::query_scalar(
            "UPDATE games SET epoch = epoch + 1, deadline_at = deadline_at + $2 \
             WHERE id = $1 AND status = 'playing' RETURNING epoch",
        )
        .bind(game_id)
        .bind(give_back_ms)
        .fetch_optional(pool)
        .await
    })?;
    match raised {
        Some(raised) => Ok(Some(epoch_value(raised))),
        None => epoch(db, game_id).await,
    }
}

/// The epoch a game is held at now, or `None` if there is no such game.
#[tracing::instrument(skip(db))]
pub async fn epoch(db: &Database, game_id: &str) -> sqlx::Result<Option<u64>> {
    let held: Option<i64> = on_reader!(db, |pool| {
        sqlx::query_scalar("SELECT epoch FROM games WHERE id = $1")
            .bind(game_id)
            .fetch_optional(pool)
            .await
    })?;
    Ok(held.map(epoch_value))
}

fn epoch_value(column: i64) -> u64 {
    u64::try_from(column).unwrap_or(0)
}

fn epoch_column(epoch: u64) -> i64 {
    i64::try_from(epoch).unwrap_or(i64::MAX)
}

/// A write's statements, for either store. First, and only for the epoch
/// the writer holds: the row's lock orders the write against a takeover,
/// and a writer that lost the game writes nothing.
const HOLD_GAME: &str = "UPDATE games SET deadline_at = $2, draw_offered_by = $3, counting = $5, \
     resumed_after = $6, away = $7, stand_ins = $8, ai_engine = $9, \
     move_count = COALESCE($10, move_count) WHERE id = $1 AND epoch = $4";
const TRUNCATE_MOVES: &str = "DELETE FROM moves WHERE game_id = $1 AND number > $2";
const INSERT_MOVE: &str = "INSERT INTO moves (game_id, number, color, point, played_at, by_stand_in) \
     VALUES ($1, $2, $3, $4, $5, $6)";
const FINISH_GAME: &str = "UPDATE games SET status = 'finished', end_reason = $2, result = $3, \
     black_points = $4, white_points = $5, dead_stones = $6, sgf = $7, finished_at = $8 WHERE id = $1";
const INSERT_EVENT: &str =
    "INSERT INTO game_events (game_id, seq, payload, created_at) VALUES ($1, $2, $3, $4)";

/// The statements of one write on a PostgreSQL transaction, in order:
/// false when the game's epoch is newer than the writer's (nothing else is
/// run then, and the caller undoes the transaction).
async fn write_on_postgres(
    conn: &mut sqlx::PgConnection,
    game_id: &str,
    epoch: i64,
    write: &Write,
    events: &[StoredEvent],
    now: i64,
) -> sqlx::Result<bool> {
    let held = sqlx::query(HOLD_GAME)
        .bind(game_id)
        .bind(write.deadline_at)
        .bind(write.draw_offered_by.map(codec::color_text))
        .bind(epoch)
        .bind(write.counting.as_ref().map(codec::counting_text))
        .bind(codec::move_counts_text(&write.resumed_after))
        .bind(codec::away_text(&write.away))
        .bind(codec::seats_text(&write.stand_ins))
        .bind(codec::ai_engine_text(write.ai_engine))
        .bind(write.move_count().map(number_column))
        .execute(&mut *conn)
        .await?
        .rows_affected()
        > 0;
    if !held {
        return Ok(false);
    }
    if let Some(after) = write.truncate_after {
        sqlx::query(TRUNCATE_MOVES)
            .bind(game_id)
            .bind(number_column(after))
            .execute(&mut *conn)
            .await?;
    }
    if let Some(m) = &write.insert_move {
        sqlx::query(INSERT_MOVE)
            .bind(game_id)
            .bind(number_column(m.number))
            .bind(codec::color_text(m.color))
            .bind(m.point.map(codec::point_text))
            .bind(now)
            .bind(m.by_stand_in)
            .execute(&mut *conn)
            .await?;
    }
    if let Some(f) = &write.finish {
        sqlx::query(FINISH_GAME)
            .bind(game_id)
            .bind(codec::end_reason_text(f.reason))
            .bind(f.result.to_string())
            .bind(f.points.map(|(b, _)| i64::from(b)))
            .bind(f.points.map(|(_, w)| i64::from(w)))
            .bind(codec::points_text(&f.dead_stones))
            .bind(&f.sgf)
            .bind(now)
            .execute(&mut *conn)
            .await?;
    }
    for e in events {
        sqlx::query(INSERT_EVENT)
            .bind(game_id)
            .bind(seq_column(e.seq))
            .bind(&e.payload)
            .bind(now)
            .execute(&mut *conn)
            .await?;
    }
    Ok(true)
}

/// [`write_on_postgres`] on the SQLite writer's connection, in the batch
/// it runs: the same statements, run where the connection is.
fn write_on_sqlite(
    conn: &rusqlite::Connection,
    game_id: &str,
    epoch: i64,
    write: &Write,
    events: &[StoredEvent],
    now: i64,
) -> rusqlite::Result<bool> {
    use rusqlite::named_params;
    let held = conn.prepare_cached(HOLD_GAME)?.execute(named_params! {
        "$1": game_id,
        "$2": write.deadline_at,
        "$3": write.draw_offered_by.map(codec::color_text),
        "$4": epoch,
        "$5": write.counting.as_ref().map(codec::counting_text),
        "$6": codec::move_counts_text(&write.resumed_after),
        "$7": codec::away_text(&write.away),
        "$8": codec::seats_text(&write.stand_ins),
        "$9": codec::ai_engine_text(write.ai_engine),
        "$10": write.move_count().map(number_column),
    })? > 0;
    if !held {
        return Ok(false);
    }
    if let Some(after) = write.truncate_after {
        conn.prepare_cached(TRUNCATE_MOVES)?
            .execute(named_params! {"$1": game_id, "$2": number_column(after)})?;
    }
    if let Some(m) = &write.insert_move {
        conn.prepare_cached(INSERT_MOVE)?.execute(named_params! {
            "$1": game_id,
            "$2": number_column(m.number),
            "$3": codec::color_text(m.color),
            "$4": m.point.map(codec::point_text),
            "$5": now,
            "$6": m.by_stand_in,
        })?;
    }
    if let Some(f) = &write.finish {
        conn.prepare_cached(FINISH_GAME)?.execute(named_params! {
            "$1": game_id,
            "$2": codec::end_reason_text(f.reason),
            "$3": f.result.to_string(),
            "$4": f.points.map(|(b, _)| i64::from(b)),
            "$5": f.points.map(|(_, w)| i64::from(w)),
            "$6": codec::points_text(&f.dead_stones),
            "$7": &f.sgf,
            "$8": now,
        })?;
    }
    let mut insert_event = conn.prepare_cached(INSERT_EVENT)?;
    for e in events {
        insert_event.execute(named_params! {
            "$1": game_id,
            "$2": seq_column(e.seq),
            "$3": &e.payload,
            "$4": now,
        })?;
    }
    Ok(true)
}

/// Where the games' actions are written: the store and, on PostgreSQL,
/// the batches in which the moves of many games share a statement and a
/// commit ([`moves`]).
#[derive(Debug, Clone)]
pub struct Writer {
    db: Database,
    moves: Option<moves::Moves>,
}

impl Writer {
    /// A writer on `db`. On PostgreSQL this starts the task that writes
    /// the batches, so it is made inside the runtime.
    #[must_use]
    pub fn new(db: Database) -> Writer {
        let moves = match &db {
            Database::Postgres(pool) => Some(moves::Moves::start(pool.clone())),
            Database::Sqlite(_) => None,
        };
        Writer { db, moves }
    }

    /// The store written to.
    #[must_use]
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// Writes one accepted action and its events in one transaction, if
    /// the writer still holds the game at `epoch`.
    ///
    /// # Errors
    /// [`WriteError::Fenced`] when another authority took the game over;
    /// then nothing was written.
    #[tracing::instrument(skip(self, write, events))]
    pub async fn apply(
        &self,
        game_id: &str,
        epoch: u64,
        write: &Write,
        events: &[StoredEvent],
        now: i64,
    ) -> Result<(), WriteError> {
        let epoch = epoch_column(epoch);
        let applied = match &self.db {
            // The usual write, a move and its event, as one statement,
            // gathered with other games' moves into one commit.
            Database::Postgres(pool) => {
                let (Some(m), None, None, [event], Some(batches)) = (
                    &write.insert_move,
                    write.truncate_after,
                    &write.finish,
                    events,
                    &self.moves,
                ) else {
                    return apply_in_transaction(pool, game_id, epoch, write, events, now).await;
                };
                batches
                    .write(moves::MoveRow {
                        game_id: game_id.to_owned(),
                        epoch,
                        deadline_at: write.deadline_at,
                        draw_offered_by: write.draw_offered_by.map(codec::color_text),
                        counting: write.counting.as_ref().map(codec::counting_text),
                        resumed_after: codec::move_counts_text(&write.resumed_after),
                        away: codec::away_text(&write.away),
                        stand_ins: codec::seats_text(&write.stand_ins),
                        ai_engine: codec::ai_engine_text(write.ai_engine),
                        number: number_column(m.number),
                        color: codec::color_text(m.color),
                        point: m.point.map(codec::point_text),
                        by_stand_in: m.by_stand_in,
                        seq: seq_column(event.seq),
                        payload: event.payload.clone(),
                        now,
                    })
                    .await?
            }
            // Queued for the one writer and committed with the writes
            // queued beside it; a fenced write is undone alone.
            Database::Sqlite(sqlite) => {
                let (game_id, write, events) = (game_id.to_owned(), write.clone(), events.to_vec());
                sqlite
                    .batches
                    .write(move |conn| {
                        let applied = write_on_sqlite(conn, &game_id, epoch, &write, &events, now)?;
                        Ok(if applied { Ok(()) } else { Err(()) })
                    })
                    .await?
                    .is_ok()
            }
        };
        if applied {
            Ok(())
        } else {
            Err(WriteError::Fenced)
        }
    }
}

/// A write in a transaction of its own (Postgres).
async fn apply_in_transaction(
    pool: &sqlx::PgPool,
    game_id: &str,
    epoch: i64,
    write: &Write,
    events: &[StoredEvent],
    now: i64,
) -> Result<(), WriteError> {
    let mut tx = pool.begin().await?;
    let applied = write_on_postgres(&mut tx, game_id, epoch, write, events, now).await?;
    if applied {
        tx.commit().await?;
        Ok(())
    } else {
        tx.rollback().await?;
        Err(WriteError::Fenced)
    }
}

/// A nullable column read with `read`: `None` stays `None`.
fn optional<T>(
    text: Option<&str>,
    read: fn(&str) -> Result<T, codec::Unreadable>,
) -> Result<Option<T>, String> {
    text.map(read).transpose().map_err(|e| e.to_string())
}

/// Each seat's user id, name and computer level, Black's then White's, from
/// a row of `games` (of either store).
macro_rules! seat_columns {
    ($r:expr) => {
        [
            (
                $r.try_get("black_user_id")?,
                $r.try_get("black_name")?,
                $r.try_get("black_ai_level")?,
            ),
            (
                $r.try_get("white_user_id")?,
                $r.try_get("white_name")?,
                $r.try_get("white_ai_level")?,
            ),
        ]
    };
}

/// The columns of a game's row, as read.
struct GameColumns {
    id: String,
    board_size: i64,
    ruleset: String,
    komi_half: i64,
    seats: [(Option<String>, String, Option<String>); 2],
    seconds_per_move: i64,
    end_reason: Option<String>,
    created_at: i64,
    deadline_at: Option<i64>,
    draw_offered_by: Option<String>,
    ranked: bool,
    keep_colors: bool,
    finished_at: Option<i64>,
    counting: Option<String>,
    resumed_after: String,
    dead_stones: Option<String>,
    stand_in: bool,
    away: String,
    stand_ins: String,
    ai_engine: String,
    ladder_rating: i64,
}

impl GameColumns {
    /// The typed game, or what in the row is not one.
    fn decode(self, last_seq: i64) -> Result<StoredGame, String> {
        let size = u32::try_from(self.board_size)
            .ok()
            .and_then(|s| BoardSize::new(s).ok())
            .ok_or_else(|| format!("board size {}", self.board_size))?;
        let komi = i32::try_from(self.komi_half)
            .ok()
            .and_then(|k| Komi::from_half_points(k).ok())
            .ok_or_else(|| format!("komi {} half points", self.komi_half))?;
        let rules = Rules::named(&self.ruleset)
            .map_err(|e| e.to_string())?
            .with_board_size(size)
            .with_komi(komi);
        let [black, white] = self.seats.map(|(user_id, name, level)| {
            Ok::<_, String>(Seat {
                user_id,
                name,
                ai: optional(level.as_deref(), codec::level)?,
            })
        });
        Ok(StoredGame {
            meta: GameMeta {
                id: GameId::parse(&self.id).map_err(|e| e.message().to_owned())?,
                rules,
                black: black?,
                white: white?,
                seconds_per_move: u32::try_from(self.seconds_per_move).unwrap_or(0),
                created_at: self.created_at,
                ranked: self.ranked,
                keep_colors: self.keep_colors,
                stand_in: self.stand_in,
                ai_engine: codec::ai_engine(&self.ai_engine).map_err(|e| e.to_string())?,
                ladder_rating: u32::try_from(self.ladder_rating).unwrap_or(0),
            },
            end_reason: optional(self.end_reason.as_deref(), codec::end_reason)?,
            deadline_at: self.deadline_at,
            draw_offered_by: optional(self.draw_offered_by.as_deref(), codec::color)?,
            finished_at: self.finished_at,
            last_seq: u64::try_from(last_seq).unwrap_or(0),
            counting: self
                .counting
                .as_deref()
                .map(|c| codec::counting(c, size))
                .transpose()
                .map_err(|e| e.to_string())?,
            resumed_after: codec::move_counts(&self.resumed_after).map_err(|e| e.to_string())?,
            dead_stones: codec::points(self.dead_stones.as_deref().unwrap_or_default(), size)
                .map_err(|e| e.to_string())?,
            away: codec::away(&self.away).map_err(|e| e.to_string())?,
            stand_ins: codec::seats(&self.stand_ins).map_err(|e| e.to_string())?,
        })
    }
}

/// A game with its moves, or `None` if there is no such game.
///
/// # Errors
/// When the store cannot be read, or holds a game this server cannot read.
#[tracing::instrument(skip(db))]
pub async fn load_game(
    db: &Database,
    game_id: &str,
) -> Result<Option<(StoredGame, Vec<StoredMove>)>, LoadError> {
    type Read = (GameColumns, Vec<(i64, String, Option<String>, bool)>, i64);
    let read: sqlx::Result<Option<Read>> = on_reader!(db, |pool| {
        async {
        let Some(r) = sqlx::query(
            "SELECT id, board_size, ruleset, komi_half, black_user_id, black_name, black_ai_level, white_user_id, \
             white_name, white_ai_level, seconds_per_move, end_reason, created_at, deadline_at, \
             draw_offered_by, ranked, keep_colors, finished_at, counting, resumed_after, dead_stones, \
             stand_in, away, stand_ins, ai_engine, ladder_rating FROM games WHERE id = $1",
        )
        .bind(game_id)
        .fetch_optional(pool)
        .await?
        else {
            return Ok(None);
        };
        let columns = GameColumns {
            id: r.try_get("id")?,
            board_size: r.try_get("board_size")?,
            ruleset: r.try_get("ruleset")?,
            komi_half: r.try_get("komi_half")?,
            seats: seat_columns!(r),
            seconds_per_move: r.try_get("seconds_per_move")?,
            end_reason: r.try_get("end_reason")?,
            created_at: r.try_get("created_at")?,
            deadline_at: r.try_get("deadline_at")?,
            draw_offered_by: r.try_get("draw_offered_by")?,
            ranked: r.try_get("ranked")?,
            keep_colors: r.try_get("keep_colors")?,
            finished_at: r.try_get("finished_at")?,
            counting: r.try_get("counting")?,
            resumed_after: r.try_get("resumed_after")?,
            dead_stones: r.try_get("dead_stones")?,
            stand_in: r.try_get("stand_in")?,
            away: r.try_get("away")?,
            ai_engine: r.try_get("ai_engine")?,
            stand_ins: r.try_get("stand_ins")?,
            ladder_rating: r.try_get("ladder_rating")?,
        };
        let moves = sqlx::query(
            "SELECT number, color, point, by_stand_in FROM moves WHERE game_id = $1 ORDER BY number",
        )
        .bind(game_id)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| {
            Ok((
                r.try_get::<i64, _>("number")?,
                r.try_get::<String, _>("color")?,
                r.try_get::<Option<String>, _>("point")?,
                r.try_get::<bool, _>("by_stand_in")?,
            ))
        })
        .collect::<sqlx::Result<Vec<_>>>()?;
        let last_seq: Option<i64> =
            sqlx::query("SELECT MAX(seq) AS last FROM game_events WHERE game_id = $1")
                .bind(game_id)
                .fetch_one(pool)
                .await?
                .try_get("last")?;
        Ok(Some((columns, moves, last_seq.unwrap_or(0))))
    }
    .await
    });
    let Some((columns, moves, last_seq)) = read? else {
        return Ok(None);
    };
    let game = columns.decode(last_seq).map_err(LoadError::Unreadable)?;
    let size = game.meta.rules.board_size;
    let moves = moves
        .into_iter()
        .map(|(number, color, point, by_stand_in)| {
            let unreadable =
                |e: codec::Unreadable| LoadError::Unreadable(format!("move {number}: {e}"));
            Ok(StoredMove {
                number: usize::try_from(number)
                    .map_err(|_| LoadError::Unreadable(format!("move number {number}")))?,
                color: codec::color(&color).map_err(unreadable)?,
                point: point
                    .as_deref()
                    .map(|p| codec::point(p, size))
                    .transpose()
                    .map_err(unreadable)?,
                by_stand_in,
            })
        })
        .collect::<Result<Vec<_>, LoadError>>()?;
    Ok(Some((game, moves)))
}

/// Stored events after `after`, in order, at most `limit` (0: all).
#[tracing::instrument(skip(db))]
pub async fn events_after(
    db: &Database,
    game_id: &str,
    after: i64,
    limit: i64,
) -> sqlx::Result<Vec<Vec<u8>>> {
    let limit = if limit <= 0 { i64::MAX } else { limit };
    on_reader!(db, |pool| {
        sqlx::query(
            "SELECT payload FROM game_events WHERE game_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(game_id)
        .bind(after)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| r.try_get::<Vec<u8>, _>("payload"))
        .collect()
    })
}

/// How many live games `user_id` plays against a computer that thinks on
/// the server, `game_id` aside: what the per-player limit counts (two
/// partial indexes hold just those games).
#[tracing::instrument(skip(db))]
pub async fn server_ai_games(db: &Database, user_id: &str, game_id: &str) -> sqlx::Result<i64> {
    on_reader!(db, |pool| {
        sqlx::query(
            "SELECT (SELECT COUNT(*) FROM games WHERE black_user_id = $1 AND status = 'playing' \
             AND ai_engine = 'server' AND white_ai_level IS NOT NULL AND id <> $2) + (SELECT COUNT(*) \
             FROM games WHERE white_user_id = $1 AND status = 'playing' AND ai_engine = 'server' \
             AND black_ai_level IS NOT NULL AND id <> $2) AS n",
        )
        .bind(user_id)
        .bind(game_id)
        .fetch_one(pool)
        .await?
        .try_get::<i64, _>("n")
    })
}

/// Ids of the games still being played, to take up again at start.
#[tracing::instrument(skip(db))]
pub async fn playing_games(db: &Database) -> sqlx::Result<Vec<String>> {
    on_reader!(db, |pool| {
        sqlx::query("SELECT id FROM games WHERE status = 'playing' ORDER BY created_at")
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|r| r.try_get::<String, _>("id"))
            .collect()
    })
}

/// A game's row as lists show it (`ListMyGames`, `ListLiveGames`, the
/// ratings' reconciliation): read in one query for a whole page, without
/// its moves or events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRow {
    pub id: String,
    pub board_size: i64,
    pub ruleset: String,
    pub komi_half: i64,
    /// User id, name and computer level of Black, then White.
    pub seats: [(Option<String>, String, Option<String>); 2],
    pub seconds_per_move: i64,
    pub status: String,
    pub end_reason: Option<String>,
    pub result: Option<String>,
    pub ranked: bool,
    pub created_at: i64,
    pub finished_at: Option<i64>,
    pub move_count: i64,
    pub ladder_rating: i64,
    pub ai_engine: String,
}

/// The columns a [`SummaryRow`] is read from.
macro_rules! summary_columns {
    () => {
        "id, board_size, ruleset, komi_half, black_user_id, black_name, black_ai_level, \
         white_user_id, white_name, white_ai_level, seconds_per_move, status, end_reason, result, \
         ranked, created_at, finished_at, move_count, ladder_rating, ai_engine"
    };
}

/// A player's games, newest first, after ($2 created at, $3 id): each
/// seat's index gives its newest games after the cursor, and the page is
/// the newest of the two lists.
const PLAYER_PAGE: &str = concat!(
    "SELECT ",
    summary_columns!(),
    " FROM (SELECT ",
    summary_columns!(),
    " FROM games WHERE black_user_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
     ORDER BY created_at DESC, id DESC LIMIT $4) AS as_black UNION ALL SELECT ",
    summary_columns!(),
    " FROM (SELECT ",
    summary_columns!(),
    " FROM games WHERE white_user_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
     ORDER BY created_at DESC, id DESC LIMIT $4) AS as_white ORDER BY created_at DESC, id DESC LIMIT $4"
);

/// Live games between people after ($1 ladder rating, $2 created at, $3
/// id), the strongest first, then the newest.
macro_rules! live_page {
    ($size:literal) => {
        concat!(
            "SELECT ", summary_columns!(),
            " FROM games WHERE status = 'playing' AND black_ai_level IS NULL AND white_ai_level IS NULL ",
            $size,
            " AND (ladder_rating < $1 OR (ladder_rating = $1 AND (created_at < $2 \
             OR (created_at = $2 AND id < $3)))) ORDER BY ladder_rating DESC, created_at DESC, id DESC LIMIT $4"
        )
    };
}

/// A [`SummaryRow`] from a row of `summary_columns!()` (of either store).
macro_rules! summary_row {
    ($r:expr) => {{
        let r = $r;
        Ok::<_, sqlx::Error>(SummaryRow {
            id: r.try_get("id")?,
            board_size: r.try_get("board_size")?,
            ruleset: r.try_get("ruleset")?,
            komi_half: r.try_get("komi_half")?,
            seats: seat_columns!(r),
            seconds_per_move: r.try_get("seconds_per_move")?,
            status: r.try_get("status")?,
            end_reason: r.try_get("end_reason")?,
            result: r.try_get("result")?,
            ranked: r.try_get("ranked")?,
            created_at: r.try_get("created_at")?,
            finished_at: r.try_get("finished_at")?,
            move_count: r.try_get("move_count")?,
            ladder_rating: r.try_get("ladder_rating")?,
            ai_engine: r.try_get("ai_engine")?,
        })
    }};
}

/// Which games a page lists, and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// A player's games from either seat, newest first, after the game
    /// created at `before.0` with id `before.1` (the first page: `None`).
    Player {
        user_id: String,
        before: Option<(i64, String)>,
    },
    /// Games between people being played now (on `board_size`, or every
    /// size for `None`), the highest ladder rating first, then the newest,
    /// after the game at `before` = (ladder rating, created at, id).
    Live {
        board_size: Option<i64>,
        before: Option<(i64, i64, String)>,
    },
}

/// A page of games: one query, however long the page.
#[tracing::instrument(skip(db))]
pub async fn list_games(
    db: &Database,
    listing: &Listing,
    limit: i64,
) -> sqlx::Result<Vec<SummaryRow>> {
    on_reader!(db, |pool| {
        let rows = match listing {
            Listing::Player { user_id, before } => {
                let (created, id) = before.clone().unwrap_or((i64::MAX, String::new()));
                sqlx::query(PLAYER_PAGE)
                    .bind(user_id)
                    .bind(created)
                    .bind(id)
                    .bind(limit)
                    .fetch_all(pool)
                    .await?
            }
            Listing::Live { board_size, before } => {
                let (rating, created, id) =
                    before
                        .clone()
                        .unwrap_or((i64::MAX, i64::MAX, String::new()));
                let query = match board_size {
                    Some(_) => sqlx::query(live_page!("AND board_size = $5")),
                    None => sqlx::query(live_page!("AND $5 = 0")),
                };
                query
                    .bind(rating)
                    .bind(created)
                    .bind(id)
                    .bind(limit)
                    .bind(board_size.unwrap_or(0))
                    .fetch_all(pool)
                    .await?
            }
        };
        rows.iter().map(|r| summary_row!(r)).collect()
    })
}

/// Games that finished at or after `since` (Unix ms), in the order they
/// ended, read from their rows in one query.
#[tracing::instrument(skip(db))]
pub async fn finished_since(
    db: &Database,
    since: i64,
    ranked_only: bool,
    limit: i64,
) -> sqlx::Result<Vec<SummaryRow>> {
    on_reader!(db, |pool| {
        sqlx::query(concat!(
            "SELECT ",
            summary_columns!(),
            " FROM games WHERE status = 'finished' AND finished_at >= $1 \
             AND (ranked OR NOT $2) ORDER BY finished_at, id LIMIT $3"
        ))
        .bind(since)
        .bind(ranked_only)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .iter()
        .map(|r| summary_row!(r))
        .collect()
    })
}

#[cfg(test)]
mod tests {
    use baduk::{ByColor, Color, Point, Rules};
    use ttakji_proto::GameId;

    use super::{FIRST_EPOCH, WriteError};
    use crate::records::{GameMeta, Seat, StoredEvent, StoredMove, Write};

    fn seat(id: &str) -> Seat {
        Seat {
            user_id: Some(id.to_owned()),
            name: id.to_owned(),
            ai: None,
        }
    }

    fn a_move(number: usize) -> Write {
        Write {
            insert_move: Some(StoredMove {
                number,
                color: if number % 2 == 1 {
                    Color::Black
                } else {
                    Color::White
                },
                point: Some(Point::new(u8::try_from(number).unwrap_or(0), 0)),
                by_stand_in: number == 1,
            }),
            ..Write::default()
        }
    }

    fn event(seq: u64) -> StoredEvent {
        StoredEvent {
            seq,
            payload: vec![1, 2, 3],
        }
    }

    /// A new game between `b` and `w`.
    fn meta(id: &str) -> GameMeta {
        GameMeta {
            id: GameId::parse(id).expect("an id"),
            rules: Rules::ttakji(),
            black: seat("b"),
            white: seat("w"),
            seconds_per_move: 30,
            created_at: 1,
            ranked: false,
            keep_colors: false,
            stand_in: true,
            ai_engine: crate::records::AiEngine::Server,
            ladder_rating: 0,
        }
    }

    /// A store holding one new game between `b` and `w`, by its creator.
    async fn store_with(id: &str) -> ttakji_platform::store::Database {
        let db = ttakji_platform::store::Database::connect("sqlite::memory:")
            .await
            .expect("sqlite");
        super::insert_game(&db, &meta(id), Some(30_001), &event(1))
            .await
            .expect("stored");
        db
    }

    /// A fresh PostgreSQL database holding new games `ids`.
    async fn postgres_with(ids: &[String]) -> ttakji_platform::store::Database {
        let name = format!("ttakji_moves_{}", uuid::Uuid::new_v4().simple());
        ttakji_platform::store::create_postgres_database(
            ttakji_test_support::postgres_admin_url(),
            &name,
        )
        .await
        .expect("a database on the tests' PostgreSQL");
        let db = ttakji_platform::store::Database::connect(
            &ttakji_test_support::postgres_database_url(&name),
        )
        .await
        .expect("the store");
        for id in ids {
            super::insert_game(&db, &meta(id), Some(30_001), &event(1))
                .await
                .expect("stored");
        }
        db
    }

    /// The moves stored, as (game, number), and how many transactions
    /// wrote them (rows written by one transaction share its `xmin`).
    async fn stored_moves(db: &ttakji_platform::store::Database) -> (Vec<(String, i64)>, i64) {
        let ttakji_platform::store::Database::Postgres(pool) = db else {
            panic!("a PostgreSQL store");
        };
        let moves = sqlx::query_as("SELECT game_id, number FROM moves ORDER BY game_id, number")
            .fetch_all(pool)
            .await
            .expect("read");
        let transactions = sqlx::query_scalar("SELECT COUNT(DISTINCT xmin::text) FROM moves")
            .fetch_one(pool)
            .await
            .expect("read");
        (moves, transactions)
    }

    /// Moves of 40 games sent at once share a statement and a commit.
    /// Of these, a game taken over by another authority is told so and
    /// writes nothing, and a game's second move (sent before its first was
    /// answered) is written after the first.
    #[tokio::test]
    async fn moves_of_many_games_share_a_commit_and_a_fenced_one_is_told_alone() {
        let ids: Vec<String> = (0..40).map(|i| format!("game{i:02}")).collect();
        let db = postgres_with(&ids).await;
        super::take_over(&db, "game07", 0)
            .await
            .expect("taken over");
        let writer = super::Writer::new(db.clone());
        let mut sent = Vec::new();
        for (id, number) in ids
            .iter()
            .map(|id| (id.clone(), 1))
            .chain([("game03".to_owned(), 2)])
        {
            let writer = writer.clone();
            sent.push(tokio::spawn(async move {
                let seq = u64::try_from(number).expect("small") + 1;
                let written = writer
                    .apply(&id, FIRST_EPOCH, &a_move(number), &[event(seq)], 2)
                    .await;
                (id, number, written)
            }));
        }
        for task in sent {
            let (id, number, written) = task.await.expect("joined");
            if id == "game07" {
                assert!(matches!(written, Err(WriteError::Fenced)), "{written:?}");
            } else {
                assert!(written.is_ok(), "{id} move {number}: {written:?}");
            }
        }
        let (moves, transactions) = stored_moves(&db).await;
        let mut expected: Vec<(String, i64)> = ids
            .iter()
            .filter(|id| *id != "game07")
            .map(|id| (id.clone(), 1))
            .collect();
        expected.push(("game03".to_owned(), 2));
        expected.sort();
        assert_eq!(moves, expected);
        assert!(
            transactions <= 3,
            "40 moves sent at once took {transactions} commits"
        );
        let (game, _) = super::load_game(&db, "game03")
            .await
            .expect("read")
            .expect("the game");
        assert_eq!(game.last_seq, 3, "both events of the game moved twice");
        let (fenced, moves) = super::load_game(&db, "game07")
            .await
            .expect("read")
            .expect("the game");
        assert_eq!(
            (fenced.last_seq, moves.len()),
            (1, 0),
            "nothing of the fenced move"
        );
    }

    /// A move stored already (a retry) makes its batch's statement fail:
    /// that move alone is refused, and the others are written one by one.
    #[tokio::test]
    async fn a_move_stored_twice_is_refused_alone_and_its_batch_is_written() {
        let ids: Vec<String> = (0..20).map(|i| format!("game{i:02}")).collect();
        let db = postgres_with(&ids).await;
        let writer = super::Writer::new(db.clone());
        writer
            .apply("game05", FIRST_EPOCH, &a_move(1), &[event(2)], 2)
            .await
            .expect("written");
        let mut sent = Vec::new();
        for id in &ids {
            let (writer, id) = (writer.clone(), id.clone());
            sent.push(tokio::spawn(async move {
                let written = writer
                    .apply(&id, FIRST_EPOCH, &a_move(1), &[event(2)], 3)
                    .await;
                (id, written)
            }));
        }
        for task in sent {
            let (id, written) = task.await.expect("joined");
            if id == "game05" {
                assert!(
                    matches!(written, Err(WriteError::Storage(_))),
                    "{written:?}"
                );
            } else {
                assert!(written.is_ok(), "{id}: {written:?}");
            }
        }
        let (moves, _) = stored_moves(&db).await;
        assert_eq!(moves.len(), 20, "one move of every game, game05's once");
    }

    #[tokio::test]
    async fn a_write_from_the_epoch_before_a_takeover_changes_nothing() {
        let db = store_with("g1").await;
        super::Writer::new(db.clone())
            .apply("g1", FIRST_EPOCH, &a_move(1), &[event(2)], 2)
            .await
            .expect("the creator holds the game");

        let taken = super::take_over(&db, "g1", 0).await.expect("read");
        assert_eq!(taken, Some(FIRST_EPOCH + 1));
        assert_eq!(super::epoch(&db, "g1").await.expect("read"), taken);
        let stale = super::Writer::new(db.clone())
            .apply("g1", FIRST_EPOCH, &a_move(2), &[event(3)], 3)
            .await;
        assert!(matches!(stale, Err(WriteError::Fenced)), "{stale:?}");
        let (game, moves) = super::load_game(&db, "g1")
            .await
            .expect("read")
            .expect("the game");
        assert_eq!(moves.len(), 1, "the fenced move was not stored");
        assert_eq!(game.last_seq, 2, "nor its event");

        super::Writer::new(db.clone())
            .apply("g1", FIRST_EPOCH + 1, &a_move(2), &[event(3)], 3)
            .await
            .expect("the new owner writes");
        assert_eq!(super::take_over(&db, "nope", 0).await.expect("read"), None);
    }

    #[tokio::test]
    async fn reading_a_finished_game_takes_nothing_over() {
        let db = store_with("g2").await;
        let resigned = Write {
            finish: Some(crate::records::Finish {
                reason: baduk::EndReason::Resignation {
                    winner: Color::White,
                },
                result: baduk::GameResult::Resignation {
                    winner: Color::White,
                },
                points: None,
                dead_stones: Vec::new(),
                sgf: String::new(),
            }),
            ..Write::default()
        };
        super::Writer::new(db.clone())
            .apply("g2", FIRST_EPOCH, &resigned, &[event(2)], 2)
            .await
            .expect("the end is stored");
        assert_eq!(
            super::take_over(&db, "g2", 0).await.expect("read"),
            Some(FIRST_EPOCH),
            "the epoch stays where the last writer left it"
        );
    }

    #[tokio::test]
    async fn a_takeover_gives_the_unowned_time_back_to_the_clock_once() {
        let db = store_with("g3").await;
        super::take_over(&db, "g3", 1_500).await.expect("read");
        let (game, _) = super::load_game(&db, "g3")
            .await
            .expect("read")
            .expect("game");
        assert_eq!(game.deadline_at, Some(31_501));
        super::take_over(&db, "g3", 0).await.expect("read");
        let (game, _) = super::load_game(&db, "g3")
            .await
            .expect("read")
            .expect("game");
        assert_eq!(game.deadline_at, Some(31_501), "given back once, not again");
    }

    #[tokio::test]
    async fn an_open_count_and_where_play_went_on_are_read_back_as_written() {
        let db = store_with("g4").await;
        let counting = crate::records::StoredCounting {
            version: 7,
            confirmed: vec![Color::White],
            dead: vec![Point::new(1, 4), Point::new(6, 4)],
        };
        let counted = Write {
            counting: Some(counting.clone()),
            resumed_after: vec![12, 30],
            deadline_at: Some(300_000),
            away: ByColor::new(None, Some(1_234)),
            stand_ins: ByColor::new(false, true),
            ai_engine: crate::records::AiEngine::Client,
            ..Write::default()
        };
        super::Writer::new(db.clone())
            .apply("g4", FIRST_EPOCH, &counted, &[event(2)], 2)
            .await
            .expect("stored");
        let (game, _) = super::load_game(&db, "g4")
            .await
            .expect("read")
            .expect("game");
        assert_eq!(game.counting, Some(counting));
        assert_eq!(game.resumed_after, [12, 30]);
        assert_eq!(game.deadline_at, Some(300_000));
        assert_eq!(game.away, ByColor::new(None, Some(1_234)));
        assert_eq!(game.stand_ins, ByColor::new(false, true));
        assert_eq!(game.meta.ai_engine, crate::records::AiEngine::Client);
        assert!(game.meta.stand_in, "the table's choice is kept");
        // The next write says the count is over, and it is.
        let back_to_play = Write {
            resumed_after: vec![12, 30, 44],
            ..a_move(1)
        };
        super::Writer::new(db.clone())
            .apply("g4", FIRST_EPOCH, &back_to_play, &[event(3)], 3)
            .await
            .expect("stored");
        let (game, moves) = super::load_game(&db, "g4")
            .await
            .expect("read")
            .expect("game");
        assert_eq!(game.counting, None);
        assert_eq!(game.resumed_after, [12, 30, 44]);
        assert_eq!(game.stand_ins, ByColor::both(false));
        assert_eq!(game.meta.ai_engine, crate::records::AiEngine::Server);
        assert!(moves[0].by_stand_in, "the computer's move is marked");
    }
}
