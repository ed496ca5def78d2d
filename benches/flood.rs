//! Well-behaved players during a flood: `cargo bench --bench flood`.
//!
//! `ttakji serve` runs as a process on an SQLite file. Ten games between
//! twenty players on one address (127.0.0.3) move every 250 ms each, as
//! people do, for 8 s; then the same for another 8 s while ten accounts
//! on another address (127.0.0.2) each send 100 moves a second (ten times an
//! account's budget of moves, and together ten times the address's) and
//! the address asks for a sign-in every 100 ms (ten times its budget of
//! sign-ins). It prints the players' round-trip percentiles in both
//! phases, their ratio, and what the flood got through.

use std::io::{BufRead as _, BufReader};
use std::net::{IpAddr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tonic::Request;
use tonic::transport::Channel;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::game_service_client::GameServiceClient;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

const TOKEN_KEYS: &str = "t1=secret-of-the-flood-bench";
const GAMES: usize = 10;
const PHASE: Duration = Duration::from_secs(8);
const PACE: Duration = Duration::from_millis(250);

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &std::path::Path) -> anyhow::Result<(Serve, SocketAddr)> {
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ttakji"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--authority-listen",
            "127.0.0.1:0",
            "--matchmaker-listen",
            "127.0.0.1:0",
            "--ratings-listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--database-url",
            &db,
            "--token-keys",
            TOKEN_KEYS,
        ])
        .env("RUST_LOG", "warn")
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
    let gateway = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("gateway="))
        .ok_or_else(|| anyhow::anyhow!("no ready line: {line:?}"))?
        .parse()?;
    Ok((Serve(child), gateway))
}

async fn channel(gateway: SocketAddr, local: &str) -> anyhow::Result<Channel> {
    let local: IpAddr = local.parse()?;
    Ok(
        tonic::transport::Endpoint::from_shared(format!("http://{gateway}"))?
            .local_address(Some(local))
            .connect()
            .await?,
    )
}

#[derive(Clone)]
struct Player {
    token: String,
    user_id: String,
    games: GameServiceClient<Channel>,
    matching: MatchServiceClient<Channel>,
}

impl Player {
    async fn sign_in(channel: &Channel, nickname: &str) -> anyhow::Result<Player> {
        let signed = AuthServiceClient::new(channel.clone())
            .sign_in_guest(pb::SignInGuestRequest {
                nickname: nickname.to_owned(),
            })
            .await?
            .into_inner();
        Ok(Player {
            token: signed.access_token,
            user_id: signed.user_id,
            games: GameServiceClient::new(channel.clone()),
            matching: MatchServiceClient::new(channel.clone()),
        })
    }

    fn req<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        if let Ok(value) = format!("Bearer {}", self.token).parse() {
            request.metadata_mut().insert("authorization", value);
        }
        request
    }

    async fn play(
        &self,
        game_id: &str,
        number: u32,
        point: pb::Point,
    ) -> Result<(), tonic::Status> {
        self.games
            .clone()
            .play_move(self.req(pb::PlayMoveRequest {
                game_id: game_id.to_owned(),
                move_number: number,
                point: Some(point),
                ..Default::default()
            }))
            .await
            .map(|_| ())
    }
}

/// Black fills the bottom rows and White the top ones: never a capture.
fn point(number: u32) -> pb::Point {
    let k = (number - 1) / 2;
    pb::Point {
        column: k % 9,
        row: if number % 2 == 1 { k / 9 } else { 5 + k / 9 },
    }
}

/// A game by friend challenge between `a` and `b`: (its id, Black, White).
async fn game(a: &Player, b: &Player) -> anyhow::Result<(String, Player, Player)> {
    let mut challenge = a
        .matching
        .clone()
        .create_challenge(a.req(pb::CreateChallengeRequest {
            board_size: 9,
            ruleset: String::new(),
            rules: None,
        }))
        .await?
        .into_inner();
    let code = challenge
        .message()
        .await?
        .and_then(|m| m.challenge)
        .ok_or_else(|| anyhow::anyhow!("no challenge"))?
        .code;
    let game = b
        .matching
        .clone()
        .accept_challenge(b.req(pb::AcceptChallengeRequest { code }))
        .await?
        .into_inner()
        .game
        .ok_or_else(|| anyhow::anyhow!("no game"))?;
    let black_id = game.black.map(|s| s.user_id).unwrap_or_default();
    let (black, white) = if black_id == a.user_id {
        (a.clone(), b.clone())
    } else {
        (b.clone(), a.clone())
    };
    Ok((game.game_id, black, white))
}

/// Plays `game` at the players' pace for `PHASE` from move `first`; returns
/// each move's round trip and the next move number.
async fn play_phase(
    (id, black, white): (String, Player, Player),
    first: u32,
) -> anyhow::Result<(Vec<Duration>, u32)> {
    let mut times = Vec::new();
    let until = Instant::now() + PHASE;
    let mut number = first;
    let mut pace = tokio::time::interval(PACE);
    while Instant::now() < until {
        pace.tick().await;
        let mover = if number % 2 == 1 { &black } else { &white };
        let sent = Instant::now();
        mover
            .play(&id, number, point(number))
            .await
            .map_err(|s| anyhow::anyhow!("move {number} of a player refused: {s:?}"))?;
        times.push(sent.elapsed());
        number += 1;
    }
    Ok((times, number))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn report(phase: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let p99 = percentile(&times, 0.99);
    println!(
        "{phase:>11}: {} moves, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        times.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
    p99
}

#[derive(Default)]
struct FloodCount {
    passed: AtomicU64,
    refused: AtomicU64,
}

fn main() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("ttakji-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (_serve, gateway) = serve(&dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        let players_channel = channel(gateway, "127.0.0.3").await?;
        let mut games = Vec::new();
        for g in 0..GAMES {
            let a = Player::sign_in(&players_channel, &format!("a{g}")).await?;
            let b = Player::sign_in(&players_channel, &format!("b{g}")).await?;
            games.push(game(&a, &b).await?);
        }
        let flood_channel = channel(gateway, "127.0.0.2").await?;
        let mut flooders = Vec::new();
        for f in 0..10 {
            flooders.push(Player::sign_in(&flood_channel, &format!("flood{f}")).await?);
        }
        let flood_game = game(&flooders[0], &flooders[1]).await?.0;

        let run = |first: u32| {
            let games = games.clone();
            async move {
                let mut set = tokio::task::JoinSet::new();
                for g in games {
                    set.spawn(play_phase(g, first));
                }
                let mut all = Vec::new();
                for done in set.join_all().await {
                    all.extend(done?.0);
                }
                anyhow::Ok(all)
            }
        };
        let quiet = run(1).await?;
        let moves_so_far = u32::try_from(quiet.len() / GAMES).unwrap_or(0) + 1;

        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(FloodCount::default());
        let mut flood = tokio::task::JoinSet::new();
        for flooder in flooders {
            let (stop, count, game_id) = (stop.clone(), count.clone(), flood_game.clone());
            flood.spawn(async move {
                let mut every = tokio::time::interval(Duration::from_millis(10));
                while !stop.load(Ordering::Relaxed) {
                    every.tick().await;
                    let flooder = flooder.clone();
                    let (count, game_id) = (count.clone(), game_id.clone());
                    tokio::spawn(async move {
                        match flooder.play(&game_id, 999, point(1)).await {
                            Err(s) if s.code() == tonic::Code::ResourceExhausted => {
                                count.refused.fetch_add(1, Ordering::Relaxed)
                            }
                            _ => count.passed.fetch_add(1, Ordering::Relaxed),
                        };
                    });
                }
            });
        }
        let sign_ins = Arc::new(FloodCount::default());
        {
            let (stop, sign_ins, channel) = (stop.clone(), sign_ins.clone(), flood_channel.clone());
            flood.spawn(async move {
                let mut every = tokio::time::interval(Duration::from_millis(100));
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    every.tick().await;
                    n += 1;
                    let answer = AuthServiceClient::new(channel.clone())
                        .sign_in_guest(pb::SignInGuestRequest {
                            nickname: format!("more{n}"),
                        })
                        .await;
                    match answer {
                        Err(s) if s.code() == tonic::Code::ResourceExhausted => {
                            sign_ins.refused.fetch_add(1, Ordering::Relaxed)
                        }
                        _ => sign_ins.passed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            });
        }
        let flooded = run(moves_so_far).await;
        stop.store(true, Ordering::Relaxed);
        flood.join_all().await;
        let flooded = flooded?;

        println!("flood bench: {GAMES} games, a move every {PACE:?} each, {PHASE:?} per phase");
        let quiet_p99 = report("no flood", quiet);
        let flood_p99 = report("during flood", flooded);
        println!(
            "p99 during the flood / without: {:.2}",
            flood_p99.as_secs_f64() / quiet_p99.as_secs_f64().max(1e-9)
        );
        println!(
            "flood moves: {} passed the limits, {} refused; sign-ins: {} accepted, {} refused",
            count.passed.load(Ordering::Relaxed),
            count.refused.load(Ordering::Relaxed),
            sign_ins.passed.load(Ordering::Relaxed),
            sign_ins.refused.load(Ordering::Relaxed)
        );
        anyhow::Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}
