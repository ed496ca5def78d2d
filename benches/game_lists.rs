//! Lists of games with 100,000 stored: `ListMyGames`' and `ListLiveGames`'
//! pages as the authority makes them (`ListGameSummaries`: the page token
//! read, the query, the rows turned into summaries), the first page and
//! pages deep into the list, and the store statements each page runs.
//!
//! `cargo bench --bench game_lists` runs on an SQLite file and on a
//! throwaway PostgreSQL cluster (or `TTAKJI_BENCH_DATABASE_URL`, a server
//! with `pg_stat_statements` loaded, for the round trips).

use std::time::{Duration, Instant};

use sqlx::Executor as _;
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1 as internal;

const GAMES: i64 = 100_000;
/// Pages read per list and depth.
const READS: usize = 200;

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// 100,000 games: player `heavy` has every 50th (2,000), the rest are
/// between players of their own; half are live, a tenth of those against
/// the computer, on 9×9 (most), 13×13 and 19×19, ladder ratings spread.
/// `$with` and `$from` give the numbers 1 to $1, `$id` a game id of n.
macro_rules! seed_games {
    ($with:literal, $id:literal, $from:literal) => {
        concat!(
            $with,
            "INSERT INTO games (id, board_size, ruleset, komi_half, black_user_id, black_name, \
             white_user_id, white_name, white_ai_level, status, created_at, ladder_rating, move_count, \
             end_reason, result, finished_at) SELECT ",
            $id,
            ", CASE WHEN n % 10 = 7 THEN 13 WHEN n % 10 = 8 THEN 19 ELSE 9 END, \
             'ttakji', 14, CASE WHEN n % 50 = 0 THEN 'heavy' ELSE 'b' || n END, 'b', \
             CASE WHEN n % 20 = 1 THEN NULL ELSE 'w' || n END, 'w', \
             CASE WHEN n % 20 = 1 THEN 'easy' ELSE NULL END, \
             CASE WHEN n % 2 = 0 THEN 'finished' ELSE 'playing' END, 1700000000000 + n, n % 1800, n % 80, \
             CASE WHEN n % 2 = 0 THEN 'resignation:B' END, CASE WHEN n % 2 = 0 THEN 'B+R' END, \
             CASE WHEN n % 2 = 0 THEN 1700000000000 + n + 600000 END FROM ",
            $from
        )
    };
}

const SEED_POSTGRES: &str = seed_games!(
    "",
    "lpad(to_hex(n), 32, '0')",
    "generate_series(1, $1) AS n"
);

const SEED_SQLITE: &str = seed_games!(
    "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $1) ",
    "printf('%032x', n)",
    "s"
);

async fn run() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("ttakji-bench-lists-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let sqlite = format!("sqlite://{}", dir.join("ttakji.db").display());
    let postgres = match std::env::var("TTAKJI_BENCH_DATABASE_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            let name = format!("ttakji_bench_{}", uuid::Uuid::new_v4().simple());
            ttakji_platform::store::create_postgres_database(
                ttakji_test_support::postgres_admin_url(),
                &name,
            )
            .await?;
            ttakji_test_support::postgres_database_url(&name)
        }
    };
    for url in [sqlite, postgres] {
        measure(&url).await?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

async fn measure(url: &str) -> anyhow::Result<()> {
    let db = Database::connect(url).await?;
    let seeded = Instant::now();
    ttakji_platform::on_pool!(&db, |pool| {
        sqlx::query(if url.starts_with("postgres") {
            SEED_POSTGRES
        } else {
            SEED_SQLITE
        })
        .bind(GAMES)
        .execute(pool)
        .await
        .map(|_| ())
    })?;
    if let Database::Postgres(pool) = &db {
        pool.execute("ANALYZE games").await?;
    }
    println!(
        "\n{} ({GAMES} games seeded in {:.1} s)",
        db.kind(),
        seeded.elapsed().as_secs_f64()
    );

    let mine = |token: String| internal::ListGameSummariesRequest {
        list: Some(internal::list_game_summaries_request::List::UserId(
            "heavy".to_owned(),
        )),
        board_size: 0,
        limit: 20,
        page_token: token,
    };
    let live = |size: u32, token: String| internal::ListGameSummariesRequest {
        list: Some(internal::list_game_summaries_request::List::Live(true)),
        board_size: size,
        limit: 20,
        page_token: token,
    };
    // A token deep in each list: walk 50 pages (1,000 games) once.
    let mut deep = [String::new(), String::new(), String::new()];
    for (i, make) in [
        &(|t| mine(t)) as &dyn Fn(String) -> internal::ListGameSummariesRequest,
        &|t| live(0, t),
        &|t| live(9, t),
    ]
    .into_iter()
    .enumerate()
    {
        for _ in 0..50 {
            deep[i] = page(&db, &make(deep[i].clone())).await?.next_page_token;
        }
    }
    let cases: Vec<(&str, internal::ListGameSummariesRequest)> = vec![
        ("ListMyGames, first page (2,000 games)", mine(String::new())),
        ("ListMyGames, page 51", mine(deep[0].clone())),
        ("ListLiveGames, first page", live(0, String::new())),
        ("ListLiveGames, page 51", live(0, deep[1].clone())),
        ("ListLiveGames 9×9, first page", live(9, String::new())),
        ("ListLiveGames 9×9, page 51", live(9, deep[2].clone())),
    ];
    for (name, request) in cases {
        let counted = statements(&db).await;
        let mut times = Vec::with_capacity(READS);
        for _ in 0..READS {
            let started = Instant::now();
            let games = page(&db, &request).await?.games;
            times.push(started.elapsed());
            anyhow::ensure!(games.len() == 20, "{name}: a full page");
        }
        let per_page = match (counted, statements(&db).await) {
            (Some(before), Some(after)) => {
                format!("{:.2}", (after - before) as f64 / READS as f64)
            }
            _ => "not counted (SQLite)".to_owned(),
        };
        times.sort();
        println!(
            "{name}: p50 {:.2} ms, p99 {:.2} ms, statements per page {per_page}",
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&times, 0.99).as_secs_f64() * 1e3,
        );
    }
    Ok(())
}

async fn page(
    db: &Database,
    request: &internal::ListGameSummariesRequest,
) -> anyhow::Result<internal::ListGameSummariesResponse> {
    ttakji_authority::listing::page(db, request)
        .await
        .map_err(|status| anyhow::anyhow!("{status}"))
}

/// Statements this database has run, from `pg_stat_statements` where it
/// is loaded (the count query itself excluded).
async fn statements(db: &Database) -> Option<i64> {
    let Database::Postgres(pool) = db else {
        return None;
    };
    pool.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .await
        .ok()?;
    sqlx::query_scalar(
        "SELECT COALESCE(SUM(calls), 0)::BIGINT FROM pg_stat_statements s \
         JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() \
         AND s.query NOT LIKE '%pg_stat_statements%'",
    )
    .fetch_one(pool)
    .await
    .ok()
}
