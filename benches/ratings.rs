//! The ratings service under load: rating updates applied per second from
//! finished-game events, and a leaderboard read (top 100 and one player's
//! rank with neighbours) with 100,000 rated players.
//!
//! `cargo bench --bench ratings` uses an SQLite file, or
//! `TTAKJI_BENCH_DATABASE_URL=postgres://…`; the leaderboard is in the local
//! Redis under a fresh key prefix; events arrive on the in-process bus.
//! `BENCH_LOG=1` prints the service's log.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use ttakji_platform::bus::{self, Bus};
use ttakji_platform::store::Database;
use ttakji_platform::{on_pool, shutdown};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::ratings_service_client::RatingsServiceClient;
use ttakji_proto::v1 as pb;

const PLAYERS: i64 = 100_000;
const GAMES: usize = 2_000;
const READS: usize = 1_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

fn finished(i: usize, black: &str, white: &str) -> pb::GameEvent {
    let player = |id: &str| pb::Player {
        user_id: id.to_owned(),
        nickname: id.to_owned(),
        ai_level: 0,
        computer_standing_in: false,
        ..Default::default()
    };
    pb::GameEvent {
        game_id: format!("bench{i:08}"),
        seq: 2,
        at_unix_ms: 0,
        snapshot: Some(pb::GameSnapshot {
            game_id: format!("bench{i:08}"),
            board_size: 9,
            status: pb::GameStatus::Finished as i32,
            black: Some(player(black)),
            white: Some(player(white)),
            ranked: true,
            finished_at_unix_ms: ttakji_platform::now_unix_ms(),
            result: Some(pb::GameResult {
                winner: if i.is_multiple_of(3) {
                    pb::Color::White
                } else {
                    pb::Color::Black
                } as i32,
                reason: pb::EndReason::Resignation as i32,
                text: String::new(),
                count: None,
            }),
            ..Default::default()
        }),
        change: None,
        kind: Some(pb::game_event::Kind::Finished(pb::GameFinished::default())),
    }
}

async fn changes(db: &Database) -> anyhow::Result<i64> {
    use sqlx::Row as _;
    Ok(on_pool!(db, |pool| {
        sqlx::query("SELECT COUNT(*) AS n FROM rating_changes")
            .fetch_one(pool)
            .await
            .and_then(|r| r.try_get::<i64, _>("n"))
    })?)
}

async fn run() -> anyhow::Result<()> {
    if std::env::var_os("BENCH_LOG").is_some() {
        let _ = ttakji_platform::telemetry::init(
            &ttakji_platform::telemetry::TelemetryConfig::default(),
        );
    }
    let (trigger, stop) = shutdown::channel();
    let dir = std::env::temp_dir().join(format!("ttakji-bench-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir)?;
    let url = std::env::var("TTAKJI_BENCH_DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}", dir.join("bench.db").display()));
    let db = Database::connect(&url).await?;
    println!("store {}", db.kind());
    let seeded = Instant::now();
    on_pool!(&db, |pool| {
        sqlx::query(
            "INSERT INTO ratings (user_id, board_size, nickname, rating, games, updated_at) \
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1) \
             SELECT 'u' || CAST(i AS TEXT), 9, 'p' || CAST(i AS TEXT), 800 + (i * 7919) % 1600, 10, 0 FROM n",
        )
        .bind(PLAYERS)
        .execute(pool)
        .await
        .map(|_| ())
    })
    .context("seeding players")?;
    println!(
        "{PLAYERS} rated players seeded in {:.1} s",
        seeded.elapsed().as_secs_f64()
    );

    let bus = Bus::in_process();
    let prefix = format!("ttakji-bench-ladder:{}:", uuid::Uuid::new_v4().simple());
    let app = ttakji_ratings::App::build(
        ttakji_ratings::Config {
            listen: "127.0.0.1:0".parse()?,
            metrics_listen: None,
            service_key: None,
            // Nothing to reconcile against here.
            authority_url: "http://127.0.0.1:1".to_owned(),
            redis_url: Some("redis://127.0.0.1:6379".to_owned()),
            ladder_prefix: prefix.clone(),
            reconcile_every: Duration::from_secs(3600),
        },
        db.clone(),
        bus.clone(),
        stop.clone(),
    )
    .await?;
    let addr = app.addr();
    tokio::spawn(app.run_until_stopped());
    let mut client = RatingsServiceClient::connect(format!("http://{addr}")).await?;

    // 1. Leaderboard reads: the first rebuilds the Redis set from the database.
    let first = Instant::now();
    client
        .get_ladder(internal::GetLadderRequest {
            board_size: 9,
            top: 100,
            around_user_id: "u1".to_owned(),
            neighbours: 2,
        })
        .await?;
    println!(
        "first read (rebuilds the Redis ladder): {:.0} ms",
        first.elapsed().as_secs_f64() * 1e3
    );
    let mut reads = Vec::with_capacity(READS);
    for i in 0..READS {
        let who = format!("u{}", 1 + (i * 97) % PLAYERS as usize);
        let t = Instant::now();
        let board = client
            .get_ladder(internal::GetLadderRequest {
                board_size: 9,
                top: 100,
                around_user_id: who,
                neighbours: 2,
            })
            .await?
            .into_inner();
        reads.push(t.elapsed());
        anyhow::ensure!(
            board.top.len() == 100 && !board.around.is_empty(),
            "short leaderboard"
        );
    }
    reads.sort();
    println!(
        "leaderboard read (top 100 + rank and neighbours), {PLAYERS} players: median {:.2} ms, p99 {:.2} ms",
        percentile(&reads, 0.5).as_secs_f64() * 1e3,
        percentile(&reads, 0.99).as_secs_f64() * 1e3,
    );

    // 2. Rating updates from finished-game events.
    let before = changes(&db).await?;
    let started = Instant::now();
    for i in 0..GAMES {
        let (a, b) = (1 + (i * 2) % 50_000, 50_001 + (i * 3) % 50_000);
        let event = finished(i, &format!("u{a}"), &format!("u{b}"));
        bus.publish(&bus::games_finished(), &event).await?;
        if i % 8 == 7 {
            // At most 16 games in flight: the bus drops what a slow
            // subscriber cannot hold (32 messages), and reconciliation
            // (with no authority here) would have to pick it up.
            while changes(&db).await? - before < 2 * (i as i64 + 1) - 32 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }
    while changes(&db).await? - before < 2 * GAMES as i64 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let took = started.elapsed();
    println!(
        "{GAMES} ranked games applied from finished-game events in {:.2} s: {:.0} games/s ({:.0} rating updates/s)",
        took.as_secs_f64(),
        GAMES as f64 / took.as_secs_f64(),
        2.0 * GAMES as f64 / took.as_secs_f64(),
    );

    let client = redis::Client::open("redis://127.0.0.1:6379")?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}9"))
        .query_async(&mut conn)
        .await?;
    trigger.trigger();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
