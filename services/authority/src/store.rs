//! The authority's tables: games, moves and game events. Every write a
//! player's action depends on is one transaction, committed before the
//! action is acknowledged.

use sqlx::Row as _;
use ttakji_platform::on_pool;
use ttakji_platform::store::Database;

/// One seat as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatRow {
    pub user_id: Option<String>,
    pub name: String,
    /// The level name for a computer seat.
    pub ai_level: Option<String>,
}

/// A game's row.
#[derive(Debug, Clone)]
pub struct GameRow {
    pub id: String,
    pub board_size: i64,
    pub ruleset: String,
    pub komi_half: i64,
    pub black: SeatRow,
    pub white: SeatRow,
    pub seconds_per_move: i64,
    pub finished: bool,
    /// How a finished game ended: "resign:B" (Black won), "timeout:W", "draw"; counted ends
    /// are replayed from the moves.
    pub end_reason: Option<String>,
    pub created_at: i64,
    /// When the side to move runs out of time (Unix ms); `None` without a clock.
    pub deadline_at: Option<i64>,
    /// "B" or "W" while that side's draw offer stands.
    pub draw_offered_by: Option<String>,
    pub ranked: bool,
    /// When a finished game ended.
    pub finished_at: Option<i64>,
}

/// A stored move: `point` is `None` for a pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveRow {
    pub number: i64,
    pub color: String,
    pub point: Option<String>,
}

/// The result of a finished game, written with its last event.
#[derive(Debug, Clone)]
pub struct FinishRow {
    pub end_reason: String,
    pub result: String,
    pub black_points: Option<i64>,
    pub white_points: Option<i64>,
    pub dead_stones: String,
    pub sgf: String,
}

/// An event to store.
#[derive(Debug, Clone)]
pub struct EventRow {
    pub seq: i64,
    pub payload: Vec<u8>,
}

/// What one accepted action writes.
#[derive(Debug, Default)]
pub struct Change {
    /// The clock's deadline and the standing draw offer after the action.
    pub deadline_at: Option<i64>,
    pub draw_offered_by: Option<String>,
    pub insert_move: Option<MoveRow>,
    /// Moves numbered above this are deleted (an undo).
    pub truncate_after: Option<i64>,
    pub finish: Option<FinishRow>,
    pub events: Vec<EventRow>,
}

#[tracing::instrument(skip(db, row), fields(game_id = %row.id))]
pub async fn insert_game(db: &Database, row: &GameRow, first_event: &EventRow) -> sqlx::Result<()> {
    on_pool!(db, |pool| {
        let mut tx = pool.begin().await?;
        sqlx::query(
            "INSERT INTO games (id, board_size, ruleset, komi_half, black_user_id, black_name, black_ai_level, \
             white_user_id, white_name, white_ai_level, seconds_per_move, status, created_at, deadline_at, ranked) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'playing', $12, $13, $14)",
        )
        .bind(&row.id)
        .bind(row.board_size)
        .bind(&row.ruleset)
        .bind(row.komi_half)
        .bind(&row.black.user_id)
        .bind(&row.black.name)
        .bind(&row.black.ai_level)
        .bind(&row.white.user_id)
        .bind(&row.white.name)
        .bind(&row.white.ai_level)
        .bind(row.seconds_per_move)
        .bind(row.created_at)
        .bind(row.deadline_at)
        .bind(row.ranked)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO game_events (game_id, seq, payload, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(&row.id)
        .bind(first_event.seq)
        .bind(&first_event.payload)
        .bind(row.created_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await
    })
}

/// Writes one accepted action in one transaction.
#[tracing::instrument(skip(db, change), fields(game_id))]
pub async fn apply(db: &Database, game_id: &str, change: &Change, now: i64) -> sqlx::Result<()> {
    on_pool!(db, |pool| {
        let mut tx = pool.begin().await?;
        if let Some(after) = change.truncate_after {
            sqlx::query("DELETE FROM moves WHERE game_id = $1 AND number > $2")
                .bind(game_id)
                .bind(after)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(m) = &change.insert_move {
            sqlx::query("INSERT INTO moves (game_id, number, color, point, played_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(game_id)
                .bind(m.number)
                .bind(&m.color)
                .bind(&m.point)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("UPDATE games SET deadline_at = $2, draw_offered_by = $3 WHERE id = $1")
            .bind(game_id)
            .bind(change.deadline_at)
            .bind(&change.draw_offered_by)
            .execute(&mut *tx)
            .await?;
        if let Some(f) = &change.finish {
            sqlx::query(
                "UPDATE games SET status = 'finished', end_reason = $2, result = $3, black_points = $4, \
                 white_points = $5, dead_stones = $6, sgf = $7, finished_at = $8 WHERE id = $1",
            )
            .bind(game_id)
            .bind(&f.end_reason)
            .bind(&f.result)
            .bind(f.black_points)
            .bind(f.white_points)
            .bind(&f.dead_stones)
            .bind(&f.sgf)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        for e in &change.events {
            sqlx::query("INSERT INTO game_events (game_id, seq, payload, created_at) VALUES ($1, $2, $3, $4)")
                .bind(game_id)
                .bind(e.seq)
                .bind(&e.payload)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await
    })
}

/// A game with its moves, or `None` if there is no such game.
#[tracing::instrument(skip(db))]
pub async fn load_game(
    db: &Database,
    game_id: &str,
) -> sqlx::Result<Option<(GameRow, Vec<MoveRow>, i64)>> {
    on_pool!(db, |pool| {
        let Some(r) = sqlx::query(
            "SELECT id, board_size, ruleset, komi_half, black_user_id, black_name, black_ai_level, white_user_id, \
             white_name, white_ai_level, seconds_per_move, status, end_reason, created_at, deadline_at, \
             draw_offered_by, ranked, finished_at FROM games WHERE id = $1",
        )
        .bind(game_id)
        .fetch_optional(pool)
        .await?
        else {
            return Ok(None);
        };
        let status: String = r.try_get("status")?;
        let row = GameRow {
            id: r.try_get("id")?,
            board_size: r.try_get("board_size")?,
            ruleset: r.try_get("ruleset")?,
            komi_half: r.try_get("komi_half")?,
            black: SeatRow {
                user_id: r.try_get("black_user_id")?,
                name: r.try_get("black_name")?,
                ai_level: r.try_get("black_ai_level")?,
            },
            white: SeatRow {
                user_id: r.try_get("white_user_id")?,
                name: r.try_get("white_name")?,
                ai_level: r.try_get("white_ai_level")?,
            },
            seconds_per_move: r.try_get("seconds_per_move")?,
            finished: status == "finished",
            end_reason: r.try_get("end_reason")?,
            created_at: r.try_get("created_at")?,
            deadline_at: r.try_get("deadline_at")?,
            draw_offered_by: r.try_get("draw_offered_by")?,
            ranked: r.try_get("ranked")?,
            finished_at: r.try_get("finished_at")?,
        };
        let moves = sqlx::query(
            "SELECT number, color, point FROM moves WHERE game_id = $1 ORDER BY number",
        )
        .bind(game_id)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| {
            Ok(MoveRow {
                number: r.try_get("number")?,
                color: r.try_get("color")?,
                point: r.try_get("point")?,
            })
        })
        .collect::<sqlx::Result<Vec<_>>>()?;
        let last_seq: Option<i64> =
            sqlx::query("SELECT MAX(seq) AS last FROM game_events WHERE game_id = $1")
                .bind(game_id)
                .fetch_one(pool)
                .await?
                .try_get("last")?;
        Ok(Some((row, moves, last_seq.unwrap_or(0))))
    })
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
    on_pool!(db, |pool| {
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

/// Ids of the games still being played, to take up again at start.
#[tracing::instrument(skip(db))]
pub async fn playing_games(db: &Database) -> sqlx::Result<Vec<String>> {
    on_pool!(db, |pool| {
        sqlx::query("SELECT id FROM games WHERE status = 'playing' ORDER BY created_at")
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|r| r.try_get::<String, _>("id"))
            .collect()
    })
}

/// Ids of games that finished at or after `since` (Unix ms), oldest first.
#[tracing::instrument(skip(db))]
pub async fn finished_since(
    db: &Database,
    since: i64,
    ranked_only: bool,
    limit: i64,
) -> sqlx::Result<Vec<String>> {
    on_pool!(db, |pool| {
        sqlx::query(
            "SELECT id FROM games WHERE status = 'finished' AND finished_at >= $1 AND (ranked OR NOT $2) \
             ORDER BY finished_at, id LIMIT $3",
        )
        .bind(since)
        .bind(ranked_only)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| r.try_get::<String, _>("id"))
        .collect()
    })
}
