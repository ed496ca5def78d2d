//! Redis behind Sentinel, through the Redis URL alone
//! (`redis+sentinel://host:port/<master>`): a master, a replica and one
//! Sentinel of this test's own. The master is killed with SIGKILL in the
//! middle of a game; Sentinel promotes the replica, and the services follow
//! it: the move made meanwhile reaches the opponent, the moves after it
//! too, and two players who queue after the failover are paired.

mod support;

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{Player, sign_in, sqlite_memory};
use ttakji_platform::bus::Bus;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::game_service_client::GameServiceClient;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

/// Stops the process when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn redis(port: u16, replica_of: Option<u16>) -> Server {
    let master = replica_of.map(|m| m.to_string());
    let replica = match &master {
        Some(master) => vec!["--replicaof", "127.0.0.1", master.as_str()],
        None => Vec::new(),
    };
    Server(support::redis_server(port, &replica))
}

/// One Sentinel watching the master on `master` as group `ttakji`, quick
/// to call it down (1 s) and to fail over.
fn sentinel(dir: &std::path::Path, port: u16, master: u16) -> Server {
    let conf = dir.join("sentinel.conf");
    std::fs::write(
        &conf,
        format!(
            "port {port}\n\
             dir {}\n\
             sentinel monitor ttakji 127.0.0.1 {master} 1\n\
             sentinel down-after-milliseconds ttakji 1000\n\
             sentinel failover-timeout ttakji 3000\n\
             sentinel parallel-syncs ttakji 1\n",
            dir.display()
        ),
    )
    .expect("sentinel.conf");
    let child = Command::new("redis-server")
        .arg(&conf)
        .arg("--sentinel")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server runs as a Sentinel");
    support::wait_for_port(port);
    Server(child)
}

async fn master_of(sentinel: u16) -> u16 {
    let client = redis::Client::open(format!("redis://127.0.0.1:{sentinel}")).expect("url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("sentinel");
    let (_, port): (String, u16) = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg("ttakji")
        .query_async(&mut conn)
        .await
        .expect("a master");
    port
}

/// Move counts each event carried, as a watcher saw them.
type Seen = Arc<Mutex<Vec<u32>>>;

fn watch(player: &Player, game_id: &str) -> Seen {
    let seen: Seen = Arc::default();
    let mut games = GameServiceClient::new(player.channel.clone());
    let request = player.req(pb::WatchGameRequest {
        game_id: game_id.to_owned(),
        after_seq: 0,
        changes: false,
    });
    let log = seen.clone();
    tokio::spawn(async move {
        let Ok(answer) = games.watch_game(request).await else {
            return;
        };
        let mut stream = answer.into_inner();
        while let Ok(Some(message)) = stream.message().await {
            if let Some(snapshot) = message.event.and_then(|e| e.snapshot) {
                log.lock().expect("log").push(snapshot.move_count);
            }
        }
    });
    seen
}

async fn seen(view: &Seen, moves: u32, within: Duration) -> Duration {
    let started = Instant::now();
    while !view.lock().expect("log").contains(&moves) {
        assert!(
            started.elapsed() < within,
            "move {moves} not seen within {within:?}: {:?}",
            view.lock().expect("log")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_services_follow_a_sentinel_failover_from_the_redis_url_alone() {
    let dir =
        std::env::temp_dir().join(format!("ttakji-sentinel-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (first, second, watcher) = (
        support::free_port(),
        support::free_port(),
        support::free_port(),
    );
    let master = redis(first, None);
    let _replica = redis(second, Some(first));
    let _sentinel = sentinel(&dir, watcher, first);
    assert_eq!(master_of(watcher).await, first);
    let url = format!("redis+sentinel://127.0.0.1:{watcher}/ttakji");

    let (_bus_stop, bus_shutdown) = ttakji_platform::shutdown::channel();
    let bus = Bus::redis(&url, bus_shutdown)
        .await
        .expect("the bus through Sentinel");
    let tickets = ttakji_matchmaker::Tickets::redis(&url)
        .await
        .expect("the queue through Sentinel");
    let service = support::embedded_with(sqlite_memory().await, bus, tickets).await;
    let gateway = format!("http://{}", service.gateway);
    let black = sign_in(&gateway, "kim").await;
    let white = sign_in(&gateway, "lee").await;
    let game = support::game_between(service.authority, &black, &white, 60, false)
        .await
        .game_id;
    let black_view = watch(&black, &game);
    black.play(&game, 1, "C3").await.expect("move 1");
    seen(&watch(&white, &game), 1, Duration::from_secs(5)).await;

    // The master dies; White moves while Sentinel fails over.
    drop(master);
    let killed = Instant::now();
    white
        .play(&game, 2, "G7")
        .await
        .expect("move 2 without a master");
    let deadline = Instant::now() + Duration::from_secs(20);
    while master_of(watcher).await != second {
        assert!(
            Instant::now() < deadline,
            "Sentinel never promoted the replica"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let promoted = killed.elapsed();
    let late = seen(&black_view, 2, Duration::from_secs(10)).await;
    black
        .play(&game, 3, "C7")
        .await
        .expect("move 3 on the new master");
    let third = seen(&black_view, 3, Duration::from_secs(5)).await;
    eprintln!(
        "sentinel: replica promoted {promoted:?} after the kill; move 2 seen {late:?} after that, move 3 in {third:?}"
    );

    // The queue works on the new master.
    let mut found = Vec::new();
    for name in ["park", "choi"] {
        let player = sign_in(&gateway, name).await;
        let stream = MatchServiceClient::new(player.channel.clone())
            .find_match(player.req(pb::FindMatchRequest {
                board_size: 9,
                ruleset: String::new(),
                ranked: false,
            }))
            .await
            .expect("queued on the new master")
            .into_inner();
        found.push((player, stream));
    }
    let mut games = Vec::new();
    for (_, stream) in &mut found {
        let game = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let ticket = stream
                    .message()
                    .await
                    .expect("the queue stream")
                    .and_then(|m| m.ticket)
                    .expect("a ticket");
                if !ticket.game_id.is_empty() {
                    return ticket;
                }
            }
        })
        .await
        .expect("matched");
        games.push(game);
    }
    assert_eq!(games[0].game_id, games[1].game_id, "paired with each other");
    assert_eq!(
        games[0].opponent.as_ref().map(|o| o.ai_level),
        Some(pb::AiLevel::Unspecified as i32),
        "a person, not the computer"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
