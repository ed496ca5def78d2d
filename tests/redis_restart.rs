//! Redis restarted in the middle of a game: a move made while it is away is
//! acknowledged at once (actions never wait on the bus) and reaches the
//! opponent's stream soon after Redis is back, and watchers see every
//! event once, in order.

mod support;

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{Player, embedded, sign_in, sqlite_memory};
use ttakji_platform::bus::Bus;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::authority_service_client::AuthorityServiceClient;

/// A Redis of this test's own, on `port`, keeping nothing on disk.
fn redis(port: u16) -> Child {
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// What a watcher saw: each event's seq and move count, and when.
type Seen = Arc<Mutex<Vec<(u64, u32, Instant)>>>;

fn watch(player: &Player, game_id: &str) -> Seen {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (player, game_id, into) = (player.clone(), game_id.to_owned(), seen.clone());
    tokio::spawn(async move {
        let mut stream = player
            .games
            .clone()
            .watch_game(player.req(pb::WatchGameRequest {
                game_id,
                after_seq: 0,
            }))
            .await
            .expect("watching")
            .into_inner();
        while let Ok(Some(item)) = stream.message().await {
            if let Some(event) = item.event {
                let moves = event.snapshot.map_or(0, |s| s.move_count);
                into.lock()
                    .expect("events")
                    .push((event.seq, moves, Instant::now()));
            }
        }
    });
    seen
}

/// When the watcher first saw the game at `moves` moves.
async fn seen_at(events: &Seen, moves: u32) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(at) = events
            .lock()
            .expect("events")
            .iter()
            .find_map(|(_, m, at)| (*m == moves).then_some(*at))
        {
            return at;
        }
        assert!(
            Instant::now() < deadline,
            "move {moves} never reached the watcher"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_made_while_redis_is_away_is_acknowledged_at_once_and_watched_when_it_is_back() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut server = redis(port);
    let (_bus_stop, bus_shutdown) = ttakji_platform::shutdown::channel();
    let bus = Bus::redis(&format!("redis://127.0.0.1:{port}"), bus_shutdown)
        .await
        .expect("redis");
    let service = embedded(sqlite_memory().await, bus).await;
    let url = format!("http://{}", service.gateway);
    let black = sign_in(&url, "kim").await;
    let white = sign_in(&url, "lee").await;
    let seat = |p: &Player| pb::Seat {
        user_id: p.user_id.clone(),
        nickname: "p".into(),
        ai_level: 0,
    };
    let game =
        AuthorityServiceClient::new(support::internal(&format!("http://{}", service.authority)))
            .create_game(pb::CreateGameRequest {
                board_size: 9,
                ruleset: String::new(),
                black: Some(seat(&black)),
                white: Some(seat(&white)),
                seconds_per_move: 60,
                game_id: String::new(),
                ranked: false,
            })
            .await
            .expect("created")
            .into_inner()
            .game
            .expect("game");
    let id = game.game_id;
    let (black_view, white_view) = (watch(&black, &id), watch(&white, &id));
    black.play(&id, 1, "C3").await.expect("move 1");
    seen_at(&white_view, 1).await;

    // Redis goes away; White moves: acknowledged without waiting for it.
    server.kill().expect("kill redis");
    server.wait().expect("redis gone");
    let sent = Instant::now();
    white
        .play(&id, 2, "G7")
        .await
        .expect("move 2 while Redis is away");
    let acknowledged = sent.elapsed();
    assert!(
        acknowledged < Duration::from_secs(2),
        "the move waited {acknowledged:?} for the bus"
    );

    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut server = redis(port);
    let back = Instant::now();
    let delivered = seen_at(&black_view, 2).await;
    let late = delivered.saturating_duration_since(back);
    eprintln!(
        "redis restart: move 2 acknowledged in {acknowledged:?} while Redis was away, on Black's stream {late:?} after Redis was back"
    );
    assert!(
        late < Duration::from_secs(3),
        "the move reached the opponent {late:?} after Redis was back"
    );

    black.play(&id, 3, "C7").await.expect("move 3");
    for view in [&black_view, &white_view] {
        seen_at(view, 3).await;
        let seqs: Vec<u64> = view.lock().expect("events").iter().map(|e| e.0).collect();
        let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
        assert_eq!(seqs, expected, "each event once, in order");
    }
    let _ = server.kill();
    let _ = server.wait();
}
