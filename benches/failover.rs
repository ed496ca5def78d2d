//! Failover and rolling restarts of the authority, as processes over the
//! tests' own PostgreSQL and Redis (brought up and torn down by
//! `ttakji-test-support` unless `TTAKJI_TEST_DATABASE_URL` /
//! `TTAKJI_TEST_REDIS_URL` name servers to use).
//!
//! `cargo bench --bench failover`: three authorities with the default
//! lease, and a caller that follows their announcements of shards taken
//! as the gateways do; 20 times the owner of a game being played is
//! killed with SIGKILL (and started again), timing the kill to the next
//! accepted move and counting acknowledged moves the store does not hold;
//! then every
//! authority is restarted in turn (SIGTERM, wait, start) while a game is
//! played as fast as it is acknowledged, counting failed calls.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ttakji_platform::authorities::{Authorities, OWNER_HEADER};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

const KILLS: usize = 20;
const SERVICE_KEY: &str = "service-key-of-the-failover-bench";
const AUTHORITIES: usize = 3;

struct Cluster {
    db: String,
    namespace: String,
    ports: Vec<u16>,
    children: Vec<Option<Child>>,
}

impl Cluster {
    fn spawn(&self, i: usize) -> anyhow::Result<Child> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ttakji"))
            .args([
                "authority",
                "--listen",
                &format!("127.0.0.1:{}", self.ports[i]),
                "--metrics-listen",
                "127.0.0.1:0",
                "--database-url",
                &self.db,
                "--redis-url",
                ttakji_test_support::redis_url(),
                "--redis-namespace",
                &self.namespace,
            ])
            .env("RUST_LOG", "warn")
            .env("TTAKJI_SERVICE_KEY", SERVICE_KEY)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut line = String::new();
        BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| anyhow::anyhow!("stdout"))?,
        )
        .read_line(&mut line)?;
        anyhow::ensure!(line.starts_with("listening "), "no ready line: {line:?}");
        Ok(child)
    }

    fn url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[i])
    }

    fn router(&self) -> anyhow::Result<Authorities> {
        let urls: Vec<String> = (0..self.ports.len()).map(|i| self.url(i)).collect();
        Ok(Authorities::new(&urls.join(","))?.with_service_key(Some(
            SERVICE_KEY
                .parse()
                .map_err(|e: String| anyhow::anyhow!(e))?,
        )))
    }
}

fn point(number: u32) -> pb::Point {
    let k = (number - 1) / 2;
    pb::Point {
        column: k % 9,
        row: if number % 2 == 1 { k / 9 } else { 5 + k / 9 },
    }
}

async fn create(router: &Authorities) -> anyhow::Result<String> {
    let seat = |id: &str| internal::Seat {
        user_id: id.to_owned(),
        nickname: id.to_owned(),
        ai_level: 0,
        ..Default::default()
    };
    let id = uuid::Uuid::new_v4().simple().to_string();
    router
        .ask(
            internal::CreateGameRequest {
                board_size: 9,
                ruleset: String::new(),
                black: Some(seat("b")),
                white: Some(seat("w")),
                seconds_per_move: 30,
                game_id: id.clone(),
                ranked: false,
                ..Default::default()
            },
            |mut c, r| async move { c.create_game(r).await },
        )
        .await?;
    Ok(id)
}

async fn play(router: &Authorities, id: &str, number: u32) -> Result<String, tonic::Status> {
    let answer = router
        .ask(
            internal::SubmitActionRequest {
                game_id: id.to_owned(),
                user_id: if number % 2 == 1 { "b" } else { "w" }.to_owned(),
                move_number: number,
                action: Some(internal::submit_action_request::Action::Place(point(
                    number,
                ))),
                ..Default::default()
            },
            |mut c, r| async move { c.submit_action(r).await },
        )
        .await?;
    Ok(answer
        .metadata()
        .get(OWNER_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned())
}

async fn stored_moves(db: &str, id: &str) -> anyhow::Result<i64> {
    let pool = sqlx::PgPool::connect(db).await?;
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM moves WHERE game_id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await?;
    pool.close().await;
    Ok(n)
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let name = format!("ttakji_failover_{}", uuid::Uuid::new_v4().simple());
    ttakji_platform::store::create_postgres_database(
        ttakji_test_support::postgres_admin_url(),
        &name,
    )
    .await?;
    let mut cluster = Cluster {
        db: ttakji_test_support::postgres_database_url(&name),
        namespace: name.clone(),
        ports: (0..AUTHORITIES)
            .map(|_| free_port())
            .collect::<anyhow::Result<_>>()?,
        children: Vec::new(),
    };
    for i in 0..AUTHORITIES {
        let child = cluster.spawn(i)?;
        cluster.children.push(Some(child));
    }
    let router = cluster.router()?;
    // The caller follows the authorities' announcements of shards taken,
    // as the gateways do.
    let (_stop, shutdown) = ttakji_platform::shutdown::channel();
    let bus = ttakji_platform::bus::Bus::redis(ttakji_test_support::redis_url(), shutdown.clone())
        .await?;
    router.follow_owners(&bus, &shutdown).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let mut failovers = Vec::with_capacity(KILLS);
    let mut lost = 0;
    for round in 0..KILLS {
        let id = create(&router).await?;
        let mut owner = String::new();
        for number in 1..=4 {
            owner = play(&router, &id, number).await?;
        }
        let i = (0..AUTHORITIES)
            .find(|&i| cluster.url(i) == owner)
            .ok_or_else(|| anyhow::anyhow!("owner {owner:?} unknown"))?;
        let mut child = cluster.children[i]
            .take()
            .ok_or_else(|| anyhow::anyhow!("not running"))?;
        let killed = Instant::now();
        child.kill()?;
        child.wait()?;
        play(&router, &id, 5).await?;
        let took = killed.elapsed();
        play(&router, &id, 6).await?;
        let stored = stored_moves(&cluster.db, &id).await?;
        lost += 6 - stored;
        eprintln!("kill {}: next move accepted after {took:.2?}", round + 1);
        failovers.push(took);
        cluster.children[i] = Some(cluster.spawn(i)?);
        // Let the restarted instance take its share again.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    failovers.sort();
    println!(
        "failover: {KILLS} kills -9 of a game's owner among {AUTHORITIES} authorities (the default 1 s lease): \
         kill to next accepted move median {:.2?}, worst {:.2?}; acknowledged moves lost: {lost}",
        failovers[KILLS / 2],
        failovers[KILLS - 1]
    );

    // Rolling restart while a game is played as fast as it is acknowledged.
    let stop = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(AtomicU32::new(0));
    let played = Arc::new(AtomicU32::new(0));
    let player = {
        let (stop, failed, played, router) =
            (stop.clone(), failed.clone(), played.clone(), router.clone());
        tokio::spawn(async move {
            let mut id = String::new();
            let mut number = 60;
            while !stop.load(Ordering::Relaxed) {
                if number == 60 {
                    match create(&router).await {
                        Ok(new) => {
                            id = new;
                            number = 0;
                        }
                        Err(e) => {
                            eprintln!("create failed: {e}");
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    continue;
                }
                match play(&router, &id, number + 1).await {
                    Ok(_) => {
                        number += 1;
                        played.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        eprintln!("move failed: {e:?}");
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        })
    };
    let started = Instant::now();
    for i in 0..AUTHORITIES {
        let child = cluster.children[i]
            .take()
            .ok_or_else(|| anyhow::anyhow!("not running"))?;
        let stopped = Instant::now();
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()?;
        let mut child = child;
        child.wait()?;
        eprintln!(
            "authority {i} drained and exited in {:.2?}",
            stopped.elapsed()
        );
        cluster.children[i] = Some(cluster.spawn(i)?);
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    stop.store(true, Ordering::Relaxed);
    player.await?;
    println!(
        "rolling restart: {AUTHORITIES} authorities restarted in turn over {:.1?}, {} moves played, failed calls: {}",
        started.elapsed(),
        played.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed)
    );
    for child in cluster.children.iter_mut().flatten() {
        let _ = child.kill();
        let _ = child.wait();
    }
    Ok(())
}
