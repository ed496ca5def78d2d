//! The ratings tables. A ranked game is applied in one transaction keyed by
//! its id: the rating changes and both players' new ratings are written
//! together or not at all, and a game already applied changes nothing.

use sqlx::Row as _;
use ttakji_platform::store::Database;
use ttakji_platform::{on_pool, on_reader};

use crate::elo::{self, Outcome};

/// One side of a finished ranked game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    pub user_id: String,
    pub nickname: String,
    pub outcome: Outcome,
}

/// A finished ranked game as the ratings service needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedGame {
    pub game_id: String,
    pub board_size: i64,
    pub finished_at: i64,
    pub sides: [Side; 2],
}

/// A player's standing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub user_id: String,
    pub nickname: String,
    pub rating: i64,
    pub games: i64,
}

/// One stored change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub game_id: String,
    pub board_size: i64,
    pub opponent_id: String,
    pub opponent_nickname: String,
    pub before: i64,
    pub after: i64,
    pub score_half: i64,
    pub applied_at: i64,
}

fn score_half(o: Outcome) -> i64 {
    match o {
        Outcome::Win => 2,
        Outcome::Draw => 1,
        Outcome::Loss => 0,
    }
}

/// Reads a player's rating inside the applying transaction: with a row
/// lock on Postgres; SQLite's one writer serialises the transaction already.
const LOCKING_SELECT: [&str; 2] = [
    "SELECT rating, games FROM ratings WHERE user_id = $1 AND board_size = $2",
    "SELECT rating, games FROM ratings WHERE user_id = $1 AND board_size = $2 FOR UPDATE",
];

/// Applies a ranked game once. Returns the players' new standings, or
/// `None` if the game had been applied already.
#[tracing::instrument(skip(db, game), fields(game_id = %game.game_id))]
pub async fn apply(
    db: &Database,
    game: &RankedGame,
    now: i64,
) -> sqlx::Result<Option<[Standing; 2]>> {
    let is_postgres = matches!(db, Database::Postgres(_));
    let result: sqlx::Result<Option<[Standing; 2]>> = on_pool!(db, |pool| {
        let mut tx = pool.begin().await?;
        let done: Option<i64> =
            sqlx::query("SELECT 1 AS one FROM rating_changes WHERE game_id = $1 LIMIT 1")
                .bind(&game.game_id)
                .fetch_optional(&mut *tx)
                .await?
                .map(|r| r.try_get("one"))
                .transpose()?;
        if done.is_some() {
            return Ok(None);
        }
        // Rows exist before they are read, in a fixed order, so two
        // appliers updating the same player queue up instead of losing an
        // update (the write lock on SQLite, the row lock on Postgres).
        let mut order = [0, 1];
        order.sort_by(|&a, &b| game.sides[a].user_id.cmp(&game.sides[b].user_id));
        let mut current = [(i64::from(elo::START), 0i64), (i64::from(elo::START), 0i64)];
        for &i in &order {
            let side = &game.sides[i];
            sqlx::query(
                "INSERT INTO ratings (user_id, board_size, nickname, rating, games, updated_at) \
                 VALUES ($1, $2, $3, $4, 0, $5) ON CONFLICT (user_id, board_size) DO NOTHING",
            )
            .bind(&side.user_id)
            .bind(game.board_size)
            .bind(&side.nickname)
            .bind(i64::from(elo::START))
            .bind(now)
            .execute(&mut *tx)
            .await?;
            let row = sqlx::query(LOCKING_SELECT[usize::from(is_postgres)])
                .bind(&side.user_id)
                .bind(game.board_size)
                .fetch_one(&mut *tx)
                .await?;
            current[i] = (row.try_get("rating")?, row.try_get("games")?);
        }
        let mut standings = Vec::new();
        for i in 0..2 {
            let (side, other) = (&game.sides[i], &game.sides[1 - i]);
            let (rating, games) = current[i];
            let (opp_rating, _) = current[1 - i];
            let after = i64::from(elo::updated(
                i32::try_from(rating).unwrap_or(elo::START),
                u32::try_from(games).unwrap_or(u32::MAX),
                i32::try_from(opp_rating).unwrap_or(elo::START),
                side.outcome,
            ));
            sqlx::query(
                "INSERT INTO rating_changes (game_id, user_id, board_size, opponent_id, opponent_nickname, \
                 rating_before, rating_after, score_half, finished_at, applied_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(&game.game_id)
            .bind(&side.user_id)
            .bind(game.board_size)
            .bind(&other.user_id)
            .bind(&other.nickname)
            .bind(rating)
            .bind(after)
            .bind(score_half(side.outcome))
            .bind(game.finished_at)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE ratings SET rating = $3, games = games + 1, nickname = $4, updated_at = $5 \
                 WHERE user_id = $1 AND board_size = $2",
            )
            .bind(&side.user_id)
            .bind(game.board_size)
            .bind(after)
            .bind(&side.nickname)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            standings.push(Standing {
                user_id: side.user_id.clone(),
                nickname: side.nickname.clone(),
                rating: after,
                games: games + 1,
            });
        }
        tx.commit().await?;
        let [a, b]: [Standing; 2] = standings.try_into().map_err(|_| sqlx::Error::RowNotFound)?;
        Ok(Some([a, b]))
    });
    match result {
        // Another applier committed the same game first.
        Err(e)
            if e.as_database_error()
                .is_some_and(|d| d.is_unique_violation()) =>
        {
            Ok(None)
        }
        other => other,
    }
}

/// Every player with a ranked game on a board size, best first; equal
/// ratings in the reverse order of their ids, as Redis's sorted sets give
/// them, so the ladder reads the same from either.
pub async fn ladder(db: &Database, board_size: i64) -> sqlx::Result<Vec<Standing>> {
    on_pool!(db, |pool| {
        sqlx::query(
            "SELECT user_id, nickname, rating, games FROM ratings WHERE board_size = $1 AND games > 0 \
             ORDER BY rating DESC, user_id DESC",
        )
        .bind(board_size)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| {
            Ok(Standing {
                user_id: r.try_get("user_id")?,
                nickname: r.try_get("nickname")?,
                rating: r.try_get("rating")?,
                games: r.try_get("games")?,
            })
        })
        .collect()
    })
}

/// The statement of [`ladder_page`]: the ladder numbered in one pass, the
/// place of the player it is read around (none when `$2` is no one on it),
/// and the places wanted from it. Equal ratings are placed as [`ladder`]
/// orders them.
const LADDER_PAGE: &str = "WITH ranked AS (\
     SELECT user_id, nickname, rating, games, \
     ROW_NUMBER() OVER (ORDER BY rating DESC, user_id DESC) AS place \
     FROM ratings WHERE board_size = $1 AND games > 0), \
     me AS (SELECT place FROM ranked WHERE user_id = $2) \
     SELECT user_id, nickname, rating, games, place FROM ranked \
     WHERE place <= $3 \
     OR place BETWEEN (SELECT place FROM me) - $4 AND (SELECT place FROM me) + $4 \
     ORDER BY place";

/// The first `top` places of the ladder and, when `around` names a player
/// on it, the `neighbours` places either side of theirs, each with its place
/// (1 is the best): one statement, whatever the page's length.
pub async fn ladder_page(
    db: &Database,
    board_size: i64,
    top: usize,
    around: Option<(&str, usize)>,
) -> sqlx::Result<Vec<(u64, Standing)>> {
    let (user_id, neighbours) = around.unwrap_or(("", 0));
    let top = i64::try_from(top).unwrap_or(i64::MAX);
    let neighbours = i64::try_from(neighbours).unwrap_or(i64::MAX);
    on_reader!(db, |pool| {
        sqlx::query(LADDER_PAGE)
            .bind(board_size)
            .bind(user_id)
            .bind(top)
            .bind(neighbours)
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|r| {
                let place: i64 = r.try_get("place")?;
                Ok((
                    u64::try_from(place).unwrap_or(0),
                    Standing {
                        user_id: r.try_get("user_id")?,
                        nickname: r.try_get("nickname")?,
                        rating: r.try_get("rating")?,
                        games: r.try_get("games")?,
                    },
                ))
            })
            .collect()
    })
}

/// The statement of [`standings_of`] on PostgreSQL and on SQLite, which
/// differ only in how they read the JSON array of user ids (`$2`). Each id
/// is looked up by the primary key (SQLite's CROSS JOIN keeps the ids
/// outside: without statistics its planner would scan the board's ladder
/// and read the array at every row), and the players found are joined to
/// the count's one row, so even a page of no one still says how long the
/// ladder is. The count reads only the index `ratings_rated`.
const STANDINGS_OF: [&str; 2] = [
    "SELECT t.total, r.user_id, r.nickname, r.rating, r.games \
     FROM (SELECT COUNT(*) AS total FROM ratings WHERE board_size = $1 AND games > 0) t \
     LEFT JOIN (SELECT r.user_id, r.nickname, r.rating, r.games \
     FROM jsonb_array_elements_text($2::jsonb) AS j(value) \
     JOIN ratings r ON r.user_id = j.value AND r.board_size = $1 AND r.games > 0) r ON TRUE",
    "SELECT t.total, r.user_id, r.nickname, r.rating, r.games \
     FROM (SELECT COUNT(*) AS total FROM ratings WHERE board_size = $1 AND games > 0) t \
     LEFT JOIN (SELECT r.user_id, r.nickname, r.rating, r.games \
     FROM json_each($2) AS j CROSS JOIN ratings r \
     WHERE r.user_id = j.value AND r.board_size = $1 AND r.games > 0) r ON TRUE",
];

/// How many players are on the ladder, and the standings of those of
/// `user_ids` who are: one statement, however many are asked for.
pub async fn standings_of(
    db: &Database,
    board_size: i64,
    user_ids: &[String],
) -> sqlx::Result<(u64, Vec<Standing>)> {
    let sql = STANDINGS_OF[usize::from(!matches!(db, Database::Postgres(_)))];
    let ids = serde_json::to_string(user_ids).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    on_reader!(db, |pool| {
        let rows = sqlx::query(sql)
            .bind(board_size)
            .bind(&ids)
            .fetch_all(pool)
            .await?;
        let mut total = 0;
        let mut standings = Vec::with_capacity(rows.len());
        for r in rows {
            total = u64::try_from(r.try_get::<i64, _>("total")?).unwrap_or(0);
            if let Some(user_id) = r.try_get::<Option<String>, _>("user_id")? {
                standings.push(Standing {
                    user_id,
                    nickname: r.try_get("nickname")?,
                    rating: r.try_get("rating")?,
                    games: r.try_get("games")?,
                });
            }
        }
        Ok((total, standings))
    })
}

/// A player's changes, the newest first.
pub async fn history(
    db: &Database,
    user_id: &str,
    board_size: i64,
    limit: i64,
) -> sqlx::Result<Vec<Change>> {
    on_pool!(db, |pool| {
        sqlx::query(
            "SELECT game_id, board_size, opponent_id, opponent_nickname, rating_before, rating_after, score_half, \
             applied_at FROM rating_changes WHERE user_id = $1 AND (board_size = $2 OR $2 = 0) \
             ORDER BY applied_at DESC, game_id LIMIT $3",
        )
        .bind(user_id)
        .bind(board_size)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| {
            Ok(Change {
                game_id: r.try_get("game_id")?,
                board_size: r.try_get("board_size")?,
                opponent_id: r.try_get("opponent_id")?,
                opponent_nickname: r.try_get("opponent_nickname")?,
                before: r.try_get("rating_before")?,
                after: r.try_get("rating_after")?,
                score_half: r.try_get("score_half")?,
                applied_at: r.try_get("applied_at")?,
            })
        })
        .collect()
    })
}

/// The latest finish time of any applied game (where reconciling resumes).
pub async fn latest_applied(db: &Database) -> sqlx::Result<i64> {
    on_pool!(db, |pool| {
        let latest: Option<i64> =
            sqlx::query("SELECT MAX(finished_at) AS latest FROM rating_changes")
                .fetch_one(pool)
                .await?
                .try_get("latest")?;
        Ok(latest.unwrap_or(0))
    })
}
