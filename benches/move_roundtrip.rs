//! The round trip of one move: client → gateway → authority → stored →
//! event back to the client on its WatchGame stream, measured next to a bare
//! unary gRPC call (health check) to the same gateway.
//!
//! `cargo bench --bench move_roundtrip` runs the stack in this process
//! with an SQLite file (WAL, full sync) and the in-process bus, twice: as
//! `ttakji serve` runs it, the services calling one another in process,
//! then over loopback gRPC as between processes; the client reaches the
//! gateway over a real socket in both. It reports the CPU time this whole
//! process spent per native move. With `TTAKJI_BENCH_DATABASE_URL=postgres://…` and
//! `TTAKJI_BENCH_REDIS_URL=redis://…` it uses Postgres and Redis instead.
//! Games are between two people (no computer thinking in the path); each
//! plays 36 moves that capture nothing. Games take turns at how their moves
//! are sent: native gRPC over HTTP/2, or gRPC-web over a kept-alive HTTP/1.1
//! connection as a browser sends them; every move's event is read from a
//! native `WatchGame` stream, so the two differ only in the call.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use tonic::Request;
use ttakji::stack::{Stack, StackConfig};
use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::ServiceKey;
use ttakji_platform::shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::game_service_client::GameServiceClient;

#[path = "../tests/support/grpc_web.rs"]
#[allow(dead_code)]
mod grpc_web;

const MOVES: usize = 2000;
const CALLS: usize = 2000;

fn authed<T>(message: T, token: &str) -> Request<T> {
    let mut r = Request::new(message);
    if let Ok(v) = format!("Bearer {token}").parse() {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "{name:<28} n={:<5} median {:>8.3} ms   p99 {:>8.3} ms   mean {:>8.3} ms",
        samples.len(),
        percentile(&samples, 0.5).as_secs_f64() * 1e3,
        percentile(&samples, 0.99).as_secs_f64() * 1e3,
        mean.as_secs_f64() * 1e3,
    );
}

/// 36 points per game: Black fills rows 1–2, White rows 8–9, alternately.
fn script() -> Vec<pb::Point> {
    let mut points = Vec::new();
    for i in 0..18u32 {
        points.push(pb::Point {
            column: i % 9,
            row: i / 9,
        });
        points.push(pb::Point {
            column: i % 9,
            row: 8 - i / 9,
        });
    }
    points
}

fn main() -> anyhow::Result<()> {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing we need.
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

/// This process's CPU time so far (client and services alike), in seconds.
fn cpu_seconds() -> anyhow::Result<f64> {
    ttakji::cpu::seconds(None).ok_or_else(|| anyhow::anyhow!("no CPU time for this process"))
}

async fn run() -> anyhow::Result<()> {
    // The stack as `ttakji serve` runs it, its services calling one another
    // in process, then the same over loopback gRPC as between processes.
    for in_process in [true, false] {
        let between = if in_process {
            "in process"
        } else {
            "over loopback gRPC"
        };
        println!("\n-- services calling one another {between}");
        measure(in_process).await?;
    }
    Ok(())
}

async fn measure(in_process: bool) -> anyhow::Result<()> {
    let (trigger, stop) = shutdown::channel();
    let dir = std::env::temp_dir().join(format!("ttakji-bench-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir)?;
    let db_url = std::env::var("TTAKJI_BENCH_DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}", dir.join("bench.db").display()));
    let db = Database::connect(&db_url).await?;
    let bus = match std::env::var("TTAKJI_BENCH_REDIS_URL") {
        Ok(url) => Bus::redis(&url, stop.clone()).await?,
        Err(_) => Bus::in_process(),
    };
    println!("store {}, bus {:?}", db.kind(), bus);
    let key = ServiceKey::random();
    let mut config = StackConfig::local(TokenKeys::random(Duration::from_secs(3600)));
    config.service_key = Some(key.clone());
    config.in_process = in_process;
    config.gateway.public.limits = ttakji_gateway::limits::Settings::exempting(&["127.0.0.1"]);
    let stack = Stack::build(
        config,
        db,
        bus,
        ttakji_matchmaker::Tickets::memory(),
        stop.clone(),
    )
    .await?;
    let gateway_addr = stack.gateway_addr();
    let gateway_url = format!("http://{gateway_addr}");
    let authority_url = format!("http://{}", stack.authority_addr());
    tokio::spawn(stack.run_until_stopped());

    let channel = tonic::transport::Endpoint::from_shared(gateway_url)?
        .tcp_nodelay(true)
        .connect()
        .await
        .context("connecting to the gateway")?;
    let mut auth = AuthServiceClient::new(channel.clone());
    let mut players = Vec::new();
    for name in ["black", "white"] {
        let signed = auth
            .sign_in_guest(pb::SignInGuestRequest {
                nickname: name.to_owned(),
            })
            .await?
            .into_inner();
        players.push((signed.user_id, signed.access_token));
    }
    let mut authority_client = AuthorityServiceClient::new(ttakji_platform::grpc::client(
        &authority_url,
        "authority",
        Some(&key),
    )?);
    let games = GameServiceClient::new(channel.clone());

    // Warm up, then the bare unary call.
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    let mut calls = Vec::with_capacity(CALLS);
    for i in 0..CALLS + 200 {
        let t = Instant::now();
        health
            .check(tonic_health::pb::HealthCheckRequest {
                service: "ttakji.v1.GameService".to_owned(),
            })
            .await?;
        if i >= 200 {
            calls.push(t.elapsed());
        }
    }

    let script = script();
    let mut moves = Vec::with_capacity(MOVES);
    let mut web_moves = Vec::with_capacity(MOVES);
    let mut web = grpc_web::Connection::open(gateway_addr).await;
    let mut warm = 72;
    let mut over_web = false;
    let mut cpu = 0.0;
    while moves.len() < MOVES || web_moves.len() < MOVES {
        over_web = !over_web;
        let seat = |(id, _): &(String, String)| internal::Seat {
            user_id: id.clone(),
            nickname: String::new(),
            ai_level: 0,
            ..Default::default()
        };
        let game = authority_client
            .create_game(internal::CreateGameRequest {
                board_size: 9,
                ruleset: String::new(),
                black: Some(seat(&players[0])),
                white: Some(seat(&players[1])),
                seconds_per_move: 0,
                game_id: String::new(),
                ranked: false,
                ..Default::default()
            })
            .await?
            .into_inner()
            .game
            .context("no snapshot")?;
        let mut stream = games
            .clone()
            .watch_game(authed(
                pb::WatchGameRequest {
                    game_id: game.game_id.clone(),
                    after_seq: game.event_seq,
                    changes: false,
                },
                &players[0].1,
            ))
            .await?
            .into_inner();
        for (i, point) in script.iter().enumerate() {
            let token = &players[i % 2].1;
            let number = i as u32 + 1;
            let request = pb::PlayMoveRequest {
                game_id: game.game_id.clone(),
                move_number: number,
                point: Some(*point),
                ..Default::default()
            };
            let t = Instant::now();
            let cpu_before = cpu_seconds()?;
            if over_web {
                use prost::Message as _;
                let answer = web
                    .unary(
                        "/ttakji.v1.GameService/PlayMove",
                        Some(token),
                        &request.encode_to_vec(),
                    )
                    .await;
                anyhow::ensure!(
                    answer.grpc_status().as_deref() == Some("0"),
                    "move {number} over gRPC-web: {answer:?}"
                );
            } else {
                games
                    .clone()
                    .play_move(authed(request, token))
                    .await
                    .with_context(|| format!("move {number}"))?;
            }
            loop {
                let event = stream
                    .message()
                    .await?
                    .and_then(|r| r.event)
                    .context("stream ended")?;
                if event.snapshot.map(|s| s.move_count) == Some(number) {
                    break;
                }
            }
            let samples = if over_web { &mut web_moves } else { &mut moves };
            if warm > 0 {
                warm -= 1;
            } else if samples.len() < MOVES {
                samples.push(t.elapsed());
                if !over_web {
                    cpu += cpu_seconds()? - cpu_before;
                }
            }
        }
    }
    report("unary health check", calls);
    report("move round trip", moves);
    report("move round trip, gRPC-web", web_moves);
    println!(
        "CPU per native move, this whole process (client, gateway, authority, store): {:.0} µs",
        cpu / MOVES as f64 * 1e6
    );
    trigger.trigger();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
