//! What idle live games cost: `ttakji serve` as its own process holds N
//! online games (a clock each, nobody moving) with both players watching
//! each one through the gateway; the server's resident memory grows by so
//! much per game, and it spends so much CPU while nothing happens.
//!
//! `cargo bench --bench idle_games` (N = 10,000; `IDLE_GAMES=n` for
//! another count; `IDLE_MOVES=n`, at most 40, plays n moves in every game
//! while both players watch, before it idles; the players watch with
//! changes, as the web page does, unless `IDLE_SNAPSHOTS=1`). Linux only:
//! it reads the server's /proc entries.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tonic::Request;
use tonic::transport::Channel;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::game_service_client::GameServiceClient;

/// Watch streams a connection carries (the server takes at most a few
/// hundred at once on one connection): 10,000 games open 134 connections,
/// 100,000 games 1,334.
const STREAMS_PER_CONNECTION: usize = 150;

/// The key the server's internal ports require: the bench creates the
/// games at the authority's.
const SERVICE_KEY: &str = "service-key-of-the-idle-games-bench";

fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS for {pid}"))
}

/// Process `pid`'s CPU seconds so far.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    ttakji::cpu::seconds(Some(pid)).ok_or_else(|| anyhow::anyhow!("no CPU time for {pid}"))
}

fn with_token<T>(message: T, token: &str) -> anyhow::Result<Request<T>> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse()?);
    Ok(request)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let games: usize = std::env::var("IDLE_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    // IDLE_WATCHED=0 holds the games with nobody watching: what the
    // authority's side costs alone.
    let watched = std::env::var("IDLE_WATCHED").map_or(true, |v| v != "0");
    // The players' streams send each event's change, as the page asks,
    // and the gateway keeps the game each stream sent last; IDLE_SNAPSHOTS=1
    // watches with whole snapshots instead.
    let changes = std::env::var("IDLE_SNAPSHOTS").map_or(true, |v| v != "1");
    // IDLE_MOVES=n plays n moves in every game before it idles (at most
    // 40): what a game's history adds.
    let moves: u32 = std::env::var("IDLE_MOVES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
        .min(40);
    let dir = std::env::temp_dir().join(format!("ttakji-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    let key = dir.join("token.key").display().to_string();
    // IDLE_SERVER_BIN=path measures another build of the server (to
    // compare two in one session).
    let bin = std::env::var("IDLE_SERVER_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_ttakji").to_owned());
    let mut server = Command::new(bin)
        .args(["serve", "--database-url", &db, "--token-key-file", &key])
        // Two players watch every game from one address.
        .args(["--limits-exempt", "127.0.0.1"])
        .args(
            [
                "--listen",
                "--authority-listen",
                "--matchmaker-listen",
                "--ratings-listen",
                "--metrics-listen",
            ]
            .iter()
            .flat_map(|flag| [*flag, "127.0.0.1:0"]),
        )
        .env("RUST_LOG", "warn")
        .env("TTAKJI_SERVICE_KEY", SERVICE_KEY)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = server.id();
    let mut line = String::new();
    BufReader::new(
        server
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("stdout"))?,
    )
    .read_line(&mut line)?;
    let addr = |name: &str| {
        line.split_whitespace()
            .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
            .map(|a| format!("http://{a}"))
            .ok_or_else(|| anyhow::anyhow!("no {name} in {line:?}"))
    };
    let gateway = addr("gateway")?;
    let authority = addr("authority")?;

    let connections_wanted = (games * 2).div_ceil(STREAMS_PER_CONNECTION).max(1);
    let mut connections = Vec::with_capacity(connections_wanted);
    for _ in 0..connections_wanted {
        connections.push(Channel::from_shared(gateway.clone())?.connect().await?);
    }
    let mut players = Vec::new();
    for name in ["kim", "lee"] {
        let signed = AuthServiceClient::new(connections[0].clone())
            .sign_in_guest(pb::SignInGuestRequest {
                nickname: name.to_owned(),
            })
            .await?
            .into_inner();
        players.push((signed.user_id, signed.access_token));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = rss_kib(pid)?;

    let mut authority = AuthorityServiceClient::new(ttakji_platform::grpc::client(
        &authority,
        "authority",
        Some(&SERVICE_KEY.parse().map_err(anyhow::Error::msg)?),
    )?);
    let started = Instant::now();
    let seat = |(id, _): &(String, String)| internal::Seat {
        user_id: id.clone(),
        nickname: "p".into(),
        ai_level: 0,
        ..Default::default()
    };
    let mut game_ids = Vec::with_capacity(games);
    for _ in 0..games {
        let game = authority
            .create_game(internal::CreateGameRequest {
                board_size: 9,
                ruleset: String::new(),
                black: Some(seat(&players[0])),
                white: Some(seat(&players[1])),
                // A long clock: the games stay live and idle.
                seconds_per_move: 3600,
                game_id: String::new(),
                ranked: false,
                ..Default::default()
            })
            .await?
            .into_inner()
            .game
            .ok_or_else(|| anyhow::anyhow!("no game"))?;
        game_ids.push(game.game_id);
    }
    // Every stream is read from the start, as clients do, so the server
    // holds no unsent buffers (a game's past events, presence).
    let mut readers = Vec::with_capacity(games * 2);
    for (i, game_id) in game_ids.iter().enumerate() {
        for (_, token) in players.iter().filter(|_| watched) {
            let mut client =
                GameServiceClient::new(connections[readers.len() % connections_wanted].clone());
            let mut stream = client
                .watch_game(with_token(
                    pb::WatchGameRequest {
                        game_id: game_id.clone(),
                        after_seq: 0,
                        changes,
                    },
                    token,
                )?)
                .await?
                .into_inner();
            readers.push(tokio::spawn(async move {
                while let Ok(Some(_)) = stream.message().await {}
            }));
        }
        if (i + 1) % 2000 == 0 {
            eprintln!("{} games live, {} watchers", i + 1, readers.len());
        }
    }
    // The moves are played with both players watching, as in a game.
    if moves > 0 {
        play_openings(&game_ids, moves, &players, &connections).await?;
        eprintln!("{moves} moves played in each game");
    }
    let made = started.elapsed();
    // Then the server settles.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_after = rss_kib(pid)?;
    let cpu_start = cpu_seconds(pid)?;
    let idle = Duration::from_secs(10);
    let idle_started = Instant::now();
    tokio::time::sleep(idle).await;
    let cpu = (cpu_seconds(pid)? - cpu_start) / idle_started.elapsed().as_secs_f64();
    let per_game = (rss_after.saturating_sub(rss_before)) as f64 / games as f64;
    println!(
        "idle games: {games} live games of {moves} moves, {} watch streams ({}), made in {:.1?}",
        if watched { games * 2 } else { 0 },
        if changes {
            "changes"
        } else {
            "whole snapshots"
        },
        made
    );
    println!(
        "idle games: server memory {:.0} MiB before, {:.0} MiB after: {per_game:.1} KiB per live game",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0
    );
    println!(
        "idle games: server CPU while idle {:.1}% of a core",
        cpu * 100.0
    );
    for r in readers {
        r.abort();
    }
    server.kill()?;
    server.wait()?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// Plays `moves` moves in every game, many games at a time: Black from the
/// first line up, White from the last line down, so no stone is ever
/// captured.
async fn play_openings(
    game_ids: &[String],
    moves: u32,
    players: &[(String, String)],
    connections: &[Channel],
) -> anyhow::Result<()> {
    const AT_ONCE: usize = 64;
    let mut next = 0;
    while next < game_ids.len() {
        let mut batch = tokio::task::JoinSet::new();
        for (k, game_id) in game_ids.iter().enumerate().skip(next).take(AT_ONCE) {
            let game_id = game_id.clone();
            let tokens = [players[0].1.clone(), players[1].1.clone()];
            let mut client = GameServiceClient::new(connections[k % connections.len()].clone());
            batch.spawn(async move {
                for number in 1..=moves {
                    let i = (number - 1) / 2;
                    let (token, row) = if number % 2 == 1 {
                        (&tokens[0], i / 9)
                    } else {
                        (&tokens[1], 8 - i / 9)
                    };
                    client
                        .play_move(with_token(
                            pb::PlayMoveRequest {
                                game_id: game_id.clone(),
                                move_number: number,
                                point: Some(pb::Point { column: i % 9, row }),
                                for_computer: false,
                            },
                            token,
                        )?)
                        .await?;
                }
                anyhow::Ok(())
            });
        }
        while let Some(played) = batch.join_next().await {
            played??;
        }
        next += AT_ONCE;
    }
    Ok(())
}
