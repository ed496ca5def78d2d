//! Several authority processes on one PostgreSQL and one Redis, each game
//! owned by one of them: calls reach the owner through any instance, an
//! owner killed or paused hands its games on within seconds with nothing
//! lost, and a rolling restart of every authority fails no call.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{Player, Process, TOKEN_KEYS, fresh_postgres, redis_url, scrape, sign_in, spawn};
use tonic::transport::Channel;
use ttakji_platform::authorities::{Authorities, OWNER_HEADER};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::v1 as pb;

/// Callers of the authorities at `urls`, with the tests' service key.
fn router(urls: &str) -> Authorities {
    Authorities::new(urls)
        .expect("urls")
        .with_service_key(Some(support::service_key()))
}

/// The lease the tests' authorities hold shards with.
const LEASE_MS: u64 = 1000;

/// A port free right now, for a process that must come back on it.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Authorities sharing one database and one Redis namespace.
struct Cluster {
    db: String,
    namespace: String,
    ports: Vec<u16>,
    running: Vec<Option<Process>>,
}

impl Cluster {
    async fn start(n: usize) -> Cluster {
        let db = fresh_postgres().await;
        let namespace = format!("test-{}", uuid::Uuid::new_v4().simple());
        let ports: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let mut cluster = Cluster {
            db,
            namespace,
            ports,
            running: Vec::new(),
        };
        for i in 0..n {
            let p = cluster.spawn(i);
            cluster.running.push(Some(p));
        }
        cluster
    }

    fn spawn(&self, i: usize) -> Process {
        let listen = format!("127.0.0.1:{}", self.ports[i]);
        let lease = LEASE_MS.to_string();
        spawn(&[
            "authority",
            "--listen",
            &listen,
            "--metrics-listen",
            "127.0.0.1:0",
            "--database-url",
            &self.db,
            "--redis-url",
            redis_url(),
            "--redis-namespace",
            &self.namespace,
            "--lease-ms",
            &lease,
            "--ai-max-playouts",
            "50",
            // Tables that allow it: the computer plays for a player away a second.
            "--stand-in-after",
            "1",
        ])
    }

    fn url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[i])
    }

    fn urls(&self) -> String {
        (0..self.ports.len())
            .map(|i| self.url(i))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn process(&self, i: usize) -> &Process {
        self.running[i].as_ref().expect("running")
    }

    /// A router that tries instance `i` first (a fresh one each call, so
    /// the call goes through `i` and not straight to the owner).
    fn through(&self, i: usize) -> Authorities {
        router(&self.url(i))
    }

    /// A gateway in front of every authority.
    fn gateway(&self) -> Process {
        spawn(&[
            "gateway",
            "--database-url",
            &self.db,
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--authority-url",
            &self.urls(),
            "--redis-url",
            redis_url(),
            "--token-keys",
            TOKEN_KEYS,
        ])
    }

    /// Creates a game between two people through instance 0.
    async fn create(&self, black: &str, white: &str, seconds_per_move: u32) -> String {
        self.create_tuned(black, white, |r| r.seconds_per_move = seconds_per_move)
            .await
    }

    /// Creates a game between two people through instance 0, with the
    /// request changed by `tune` (its rules, clock, stand-in).
    async fn create_tuned(
        &self,
        black: &str,
        white: &str,
        tune: impl FnOnce(&mut internal::CreateGameRequest),
    ) -> String {
        let seat = |id: &str| internal::Seat {
            user_id: id.to_owned(),
            nickname: id.chars().take(8).collect(),
            ai_level: 0,
            ..Default::default()
        };
        let id = uuid::Uuid::new_v4().simple().to_string();
        let mut request = internal::CreateGameRequest {
            board_size: 9,
            black: Some(seat(black)),
            white: Some(seat(white)),
            game_id: id.clone(),
            ..Default::default()
        };
        tune(&mut request);
        self.through(0)
            .ask(request, |mut c, r| async move { c.create_game(r).await })
            .await
            .expect("game created");
        id
    }

    /// The index of the instance that owns `game_id`, as its answers say.
    async fn owner_of(&self, game_id: &str) -> usize {
        let answer = self
            .through(0)
            .ask(load(game_id), |mut c, r| async move { c.get_game(r).await })
            .await
            .expect("loaded");
        let owner = answer
            .metadata()
            .get(OWNER_HEADER)
            .and_then(|v| v.to_str().ok())
            .expect("the answer names the owner")
            .to_owned();
        (0..self.ports.len())
            .find(|&i| self.url(i) == owner)
            .unwrap_or_else(|| panic!("{owner} is none of {}", self.urls()))
    }

    /// The moves stored for `game_id`, straight from the database.
    async fn stored_moves(&self, game_id: &str) -> Vec<(i64, Option<String>)> {
        let pool = sqlx::PgPool::connect(&self.db).await.expect("database");
        let rows: Vec<(i64, Option<String>)> =
            sqlx::query_as("SELECT number, point FROM moves WHERE game_id = $1 ORDER BY number")
                .bind(game_id)
                .fetch_all(&pool)
                .await
                .expect("moves");
        pool.close().await;
        rows
    }
}

/// `message` as a request carrying the tests' service key.
fn with_key<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(
        ttakji_platform::grpc::SERVICE_KEY_HEADER,
        support::SERVICE_KEY.parse().expect("metadata"),
    );
    request
}

fn load(game_id: &str) -> internal::GetGameRequest {
    internal::GetGameRequest {
        game_id: game_id.to_owned(),
        user_id: String::new(),
        include_score_preview: false,
    }
}

/// The point of move `number` in games that never capture: Black fills
/// the lower four rows, White the upper four, the middle row stays empty.
fn point(number: u32) -> pb::Point {
    let k = (number - 1) / 2;
    let row = if number % 2 == 1 { k / 9 } else { 5 + k / 9 };
    pb::Point { column: k % 9, row }
}

fn submit(game_id: &str, user: &str, number: u32, at: pb::Point) -> internal::SubmitActionRequest {
    internal::SubmitActionRequest {
        game_id: game_id.to_owned(),
        user_id: user.to_owned(),
        move_number: number,
        action: Some(internal::submit_action_request::Action::Place(at)),
        ..Default::default()
    }
}

/// The stored name of move `number`'s point.
fn point_name(number: u32) -> Option<String> {
    let p = point(number);
    let (col, row) = (u8::try_from(p.column), u8::try_from(p.row));
    Some(baduk::Point::new(col.expect("column"), row.expect("row")).to_string())
}

/// Plays move `number` through the gateway as the player whose turn it is.
async fn play(
    players: &[&Player; 2],
    game_id: &str,
    number: u32,
) -> Result<pb::PlayMoveResponse, tonic::Status> {
    let player = players[((number - 1) % 2) as usize];
    player
        .games
        .clone()
        .play_move(player.req(pb::PlayMoveRequest {
            game_id: game_id.to_owned(),
            move_number: number,
            point: Some(point(number)),
            ..Default::default()
        }))
        .await
        .map(tonic::Response::into_inner)
}

/// Every numbered event a player's watch of the game delivers.
fn watch(player: &Player, game_id: &str) -> Arc<Mutex<Vec<pb::GameEvent>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (player, game_id, into) = (player.clone(), game_id.to_owned(), seen.clone());
    tokio::spawn(async move {
        let mut stream = player
            .games
            .clone()
            .watch_game(player.req(pb::WatchGameRequest {
                game_id,
                after_seq: 0,
                changes: false,
            }))
            .await
            .expect("watching")
            .into_inner();
        while let Ok(Some(item)) = stream.message().await {
            if let Some(event) = item.event {
                into.lock().expect("events").push(event);
            }
        }
    });
    seen
}

/// Waits until a watcher has seen the game at `moves` moves; then checks it
/// saw every event once, in order, with no gap.
async fn saw_every_event(events: &Arc<Mutex<Vec<pb::GameEvent>>>, moves: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        {
            let events = events.lock().expect("events");
            if events
                .iter()
                .any(|e| e.snapshot.as_ref().is_some_and(|s| s.move_count == moves))
            {
                let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
                let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
                assert_eq!(seqs, expected, "a watcher's events, in order without a gap");
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the watcher never saw move {moves}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn signal(process: &Process, name: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(process.child.id().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name}");
}

/// CPU time a process has used (user and system), from /proc.
fn cpu_ticks(process: &Process) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", process.child.id()))
        .expect("the process's stat");
    // After the command name in parentheses: state is field 3, utime 14,
    // stime 15.
    let after = stat.rsplit_once(')').expect("stat format").1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// A metric's value on a `/metrics` page, summed over its labels.
fn metric(page: &str, name: &str, with: &str) -> f64 {
    page.lines()
        .filter(|l| {
            l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']) && l.contains(with)
        })
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_played_through_each_of_three_authorities_in_turn_is_one_game() {
    let cluster = Cluster::start(3).await;
    let id = cluster.create("b", "w", 0).await;
    for number in 1..=12 {
        let user = if number % 2 == 1 { "b" } else { "w" };
        let through = cluster.through(number as usize % 3);
        let answer = through
            .ask(
                submit(&id, user, number, point(number)),
                |mut c, r| async move { c.submit_action(r).await },
            )
            .await
            .unwrap_or_else(|e| panic!("move {number} through authority {}: {e:?}", number % 3))
            .into_inner();
        assert_eq!(answer.game.expect("snapshot").move_count, number);
        // The same move again through the next instance: the same answer,
        // applied once.
        let again = cluster
            .through((number as usize + 1) % 3)
            .ask(
                submit(&id, user, number, point(number)),
                |mut c, r| async move { c.submit_action(r).await },
            )
            .await
            .expect("a repeated move is answered")
            .into_inner();
        assert_eq!(again.r#move.expect("the move").number, number);
    }
    let mut seen = Vec::new();
    for i in 0..3 {
        let game = cluster
            .through(i)
            .ask(load(&id), |mut c, r| async move { c.get_game(r).await })
            .await
            .expect("loaded")
            .into_inner()
            .game
            .expect("snapshot");
        let events = cluster
            .through(i)
            .ask(
                internal::ListEventsRequest {
                    game_id: id.clone(),
                    after_seq: 0,
                    limit: 0,
                },
                |mut c, r| async move { c.list_events(r).await },
            )
            .await
            .expect("events")
            .into_inner()
            .events;
        seen.push((game.move_count, game.stones, events.len()));
    }
    assert_eq!(seen[0].0, 12);
    assert_eq!(seen[0].2, 13, "the start and one event a move");
    assert!(
        seen.iter().all(|s| *s == seen[0]),
        "every instance tells the same game"
    );
    let stored = cluster.stored_moves(&id).await;
    assert_eq!(stored.len(), 12, "each move stored once");
    for (i, stored) in stored.iter().enumerate() {
        let number = i as u32 + 1;
        assert_eq!(*stored, (i64::from(number), point_name(number)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_killed_mid_game_hands_it_on_within_seconds_with_nothing_lost() {
    let mut cluster = Cluster::start(3).await;
    let gateway = cluster.gateway();
    let url = format!("http://{}", gateway.addr);
    let black = sign_in(&url, "kim").await;
    let white = sign_in(&url, "lee").await;
    let players = [&black, &white];
    let id = cluster.create(&black.user_id, &white.user_id, 30).await;
    let watchers = [watch(&black, &id), watch(&white, &id)];
    for number in 1..=6 {
        play(&players, &id, number).await.expect("move");
    }
    let before = black.game(&id).await;
    let deadline_before = before.clock.expect("clock").deadline_unix_ms;

    let owner = cluster.owner_of(&id).await;
    let killed_at = Instant::now();
    cluster.running[owner].take().expect("running").kill();
    let taken_over = black.game(&id).await;
    play(&players, &id, 7)
        .await
        .expect("the next move is accepted by another authority");
    let failover = killed_at.elapsed();
    assert!(
        failover < Duration::from_secs(5),
        "the kill to the next accepted move took {failover:?}"
    );
    // The clock is honest: the player to move lost none of the time the
    // game had no owner, and got no more back than that.
    let deadline_after = taken_over.clock.expect("clock").deadline_unix_ms;
    let given_back = deadline_after - deadline_before;
    eprintln!(
        "failover: {failover:?} from the kill to the next accepted move; {given_back} ms given back"
    );
    assert!(
        given_back > 0 && u128::try_from(given_back).unwrap_or(0) <= failover.as_millis() + 500,
        "{given_back} ms given back after a failover of {failover:?}"
    );
    assert_eq!(taken_over.move_count, 6, "no acknowledged move lost");

    for number in 8..=10 {
        play(&players, &id, number).await.expect("move");
    }
    assert_eq!(black.game(&id).await.move_count, 10);
    assert_eq!(cluster.stored_moves(&id).await.len(), 10);
    for events in &watchers {
        saw_every_event(events, 10).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_paused_past_its_lease_is_fenced_off_and_lets_the_game_go() {
    let cluster = Cluster::start(2).await;
    let id = cluster.create("b", "w", 0).await;
    for number in 1..=4 {
        let user = if number % 2 == 1 { "b" } else { "w" };
        cluster
            .through(0)
            .ask(
                submit(&id, user, number, point(number)),
                |mut c, r| async move { c.submit_action(r).await },
            )
            .await
            .expect("move");
    }
    let owner = cluster.owner_of(&id).await;
    let other = 1 - owner;
    // A connection to the owner, open before it stops.
    let channel = Channel::from_shared(cluster.url(owner))
        .expect("url")
        .connect()
        .await
        .expect("connects");
    let mut stale = AuthorityServiceClient::new(channel);
    stale
        .get_game(with_key(load(&id)))
        .await
        .expect("the owner answers");

    signal(cluster.process(owner), "STOP");
    // A move and a read sent to the stopped owner itself.
    let late_move = submit(&id, "b", 5, pb::Point { column: 8, row: 3 });
    let mut stale_reader = stale.clone();
    let late = tokio::spawn(async move { stale.submit_action(with_key(late_move)).await });
    let late_read = {
        let id = id.clone();
        tokio::spawn(async move { stale_reader.get_game(with_key(load(&id))).await })
    };
    tokio::time::sleep(Duration::from_millis(LEASE_MS * 2)).await;
    let moved_on = cluster
        .through(other)
        .ask(submit(&id, "b", 5, point(5)), |mut c, r| async move {
            c.submit_action(r).await
        })
        .await
        .expect("the other authority took the game over")
        .into_inner();
    assert_eq!(moved_on.game.expect("snapshot").move_count, 5);

    signal(cluster.process(owner), "CONT");
    let late = tokio::time::timeout(Duration::from_secs(10), late)
        .await
        .expect("the late move is answered")
        .expect("task");
    let refused = late.expect_err("the late move is refused");
    assert_eq!(refused.code(), tonic::Code::Unavailable, "{refused:?}");
    // The read it took before it stopped is answered only with what the
    // new owner acknowledged, or refused (to be asked there): never the
    // position from before its pause.
    let read = tokio::time::timeout(Duration::from_secs(10), late_read)
        .await
        .expect("the late read is answered")
        .expect("task");
    match read {
        Ok(answer) => assert!(
            answer
                .get_ref()
                .game
                .as_ref()
                .is_some_and(|g| g.move_count >= 5),
            "a stale read after the pause: {:?}",
            answer.get_ref().game.as_ref().map(|g| g.move_count)
        ),
        Err(status) => assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}"),
    }

    // It learns it lost its leases, and burns no CPU afterwards.
    let metrics = cluster.process(owner).listener("metrics");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let page = scrape(metrics).await;
        if metric(&page, "ttakji_lease_renewals_total", "outcome=\"lost\"") >= 1.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the paused owner never noticed:\n{page}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let cpu_before = cpu_ticks(cluster.process(owner));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_ticks(cluster.process(owner)) - cpu_before;
    assert!(used < 40, "{used} ticks of CPU in 2 s after waking");

    // One history: move 5 is the one the new owner accepted.
    let stored = cluster.stored_moves(&id).await;
    assert_eq!(stored.len(), 5);
    assert_eq!(stored[4], (5, point_name(5)));
    cluster
        .through(owner)
        .ask(submit(&id, "w", 6, point(6)), |mut c, r| async move {
            c.submit_action(r).await
        })
        .await
        .expect("the game goes on through either instance");
}

/// A stopped owner holds no game for the length of its pause: a caller
/// that knew it abandons the call stuck there, and the game takes moves
/// again soon after the lease runs out. Resumed, the old owner answers
/// nothing older than what the new one acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_whose_owner_is_stopped_for_five_seconds_takes_moves_again_within_the_lease_and_a_second()
 {
    let cluster = Cluster::start(2).await;
    // Players through a gateway, whose router learns the owner.
    let gateway = cluster.gateway();
    let url = format!("http://{}", gateway.addr);
    let black = sign_in(&url, "park").await;
    let white = sign_in(&url, "choi").await;
    let players = [&black, &white];
    let id = cluster.create(&black.user_id, &white.user_id, 0).await;
    let watchers = [watch(&black, &id), watch(&white, &id)];
    for number in 1..=2 {
        play(&players, &id, number).await.expect("move");
    }
    let owner = cluster.owner_of(&id).await;
    signal(cluster.process(owner), "STOP");
    let stopped = Instant::now();
    let answer = play(&players, &id, 3)
        .await
        .expect("the move is accepted while the owner is stopped");
    let waited = stopped.elapsed();
    // Accepted while its owner was stopped: by the other authority.
    assert_eq!(answer.game.map(|g| g.move_count), Some(3));
    // The lease is 1 s and a stuck try is abandoned after 1 s: about 2 s,
    // with room for a busy machine, and far from the 5 s pause.
    assert!(
        waited < Duration::from_millis(3_500),
        "the game waited {waited:?} for its stopped owner"
    );
    tokio::time::sleep(Duration::from_secs(5).saturating_sub(stopped.elapsed())).await;
    signal(cluster.process(owner), "CONT");
    // The first answers of the resumed process about the game: a refusal
    // (a redirect, or no owner) or the game with move 3.
    let mut resumed = AuthorityServiceClient::new(
        Channel::from_shared(cluster.url(owner))
            .expect("url")
            .connect()
            .await
            .expect("connects"),
    );
    for _ in 0..5 {
        match resumed.get_game(with_key(load(&id))).await {
            Ok(answer) => assert_eq!(
                answer.get_ref().game.as_ref().map(|g| g.move_count),
                Some(3),
                "the resumed owner answered a position older than the new owner's"
            ),
            Err(status) => assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}"),
        }
    }
    // Play goes on, and each watcher saw every event once, in order: no
    // stream went back or skipped through the pause.
    for number in 4..=5 {
        play(&players, &id, number).await.expect("move");
    }
    for events in &watchers {
        saw_every_event(events, 5).await;
    }
    let stored = cluster.stored_moves(&id).await;
    assert_eq!(stored.len(), 5, "{stored:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_of_every_authority_fails_no_call() {
    let mut cluster = Cluster::start(3).await;
    let gateway = cluster.gateway();
    let url = format!("http://{}", gateway.addr);
    let black = sign_in(&url, "park").await;
    let white = sign_in(&url, "choi").await;
    let first = cluster.create(&black.user_id, &white.user_id, 30).await;

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let games = Arc::new(Mutex::new(vec![(first, 0u32)]));
    let player = {
        let (stop, failures, games) = (stop.clone(), failures.clone(), games.clone());
        let (black, white) = (black.clone(), white.clone());
        let cluster_urls = cluster.urls();
        tokio::spawn(async move {
            let router = router(&cluster_urls);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let (id, played) = games
                    .lock()
                    .expect("games")
                    .last()
                    .cloned()
                    .expect("a game");
                if played == 60 {
                    // A full board's worth of safe moves: a new game.
                    let new = uuid::Uuid::new_v4().simple().to_string();
                    let seat = |p: &Player| internal::Seat {
                        user_id: p.user_id.clone(),
                        nickname: "p".into(),
                        ai_level: 0,
                        ..Default::default()
                    };
                    let made = router
                        .ask(
                            internal::CreateGameRequest {
                                board_size: 9,
                                ruleset: String::new(),
                                black: Some(seat(&black)),
                                white: Some(seat(&white)),
                                seconds_per_move: 30,
                                game_id: new.clone(),
                                ranked: false,
                                ..Default::default()
                            },
                            |mut c, r| async move { c.create_game(r).await },
                        )
                        .await;
                    match made {
                        Ok(_) => games.lock().expect("games").push((new, 0)),
                        Err(e) => failures.lock().expect("failures").push(e),
                    }
                    continue;
                }
                match play(&[&black, &white], &id, played + 1).await {
                    Ok(_) => {
                        if let Some(last) = games.lock().expect("games").last_mut() {
                            last.1 += 1;
                        }
                    }
                    Err(e) => failures.lock().expect("failures").push(e),
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };

    tokio::time::sleep(Duration::from_secs(1)).await;
    for i in 0..3 {
        let mut process = cluster.running[i].take().expect("running");
        signal(&process, "TERM");
        let exited = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(20) {
                if let Ok(Some(status)) = process.child.try_wait() {
                    return Some((status, started.elapsed()));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            None
        })
        .await
        .expect("waits")
        .expect("the authority exits after SIGTERM");
        assert!(
            exited.0.success(),
            "authority {i} exited with {:?}",
            exited.0
        );
        cluster.running[i] = Some(cluster.spawn(i));
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    player.await.expect("the player ran");

    let failures = failures.lock().expect("failures").clone();
    assert!(failures.is_empty(), "failed calls: {failures:?}");
    let games = games.lock().expect("games").clone();
    let played: u32 = games.iter().map(|(_, n)| n).sum();
    eprintln!(
        "rolling restart: {played} moves in {} games, no call failed",
        games.len()
    );
    assert!(played > 20, "only {played} moves were played");
    for (id, moves) in &games {
        assert_eq!(
            cluster.stored_moves(id).await.len(),
            *moves as usize,
            "every acknowledged move of {id} is stored"
        );
        assert_eq!(black.game(id).await.move_count, *moves);
    }
}

/// Each running instance's `ttakji_shards_owned`, once they add up to every
/// shard and differ by at most one (or panics after `within`).
async fn shards_settle(cluster: &Cluster, within: Duration) -> Vec<f64> {
    let deadline = Instant::now() + within;
    loop {
        let mut owned = Vec::new();
        for p in cluster.running.iter().flatten() {
            owned.push(metric(
                &scrape(p.listener("metrics")).await,
                "ttakji_shards_owned",
                "",
            ));
        }
        let total: f64 = owned.iter().sum();
        let (min, max) = owned
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &n| (lo.min(n), hi.max(n)));
        if total == f64::from(ttakji_platform::authorities::SHARDS) && max - min <= 1.0 {
            return owned;
        }
        assert!(Instant::now() < deadline, "shards never settled: {owned:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_spread_evenly_over_the_instances_and_follow_one_that_dies() {
    let mut cluster = Cluster::start(3).await;
    let owned = shards_settle(&cluster, Duration::from_secs(15)).await;
    assert_eq!(owned.len(), 3);
    // New games land where their shard is: spread over all three.
    let mut owners = std::collections::HashSet::new();
    for _ in 0..24 {
        let id = cluster.create("b", "w", 0).await;
        owners.insert(cluster.owner_of(&id).await);
    }
    assert_eq!(owners.len(), 3, "24 new games all landed on {owners:?}");

    cluster.running[0].take().expect("running").kill();
    let owned = shards_settle(&cluster, Duration::from_secs(15)).await;
    assert_eq!(
        owned,
        [32.0, 32.0],
        "the dead instance's shards split between the others"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_against_the_computer_goes_on_after_its_owner_dies() {
    let mut cluster = Cluster::start(2).await;
    let id = uuid::Uuid::new_v4().simple().to_string();
    let router = router(&cluster.urls());
    router
        .ask(
            internal::CreateGameRequest {
                board_size: 9,
                ruleset: String::new(),
                black: Some(internal::Seat {
                    user_id: "b".into(),
                    nickname: "b".into(),
                    ai_level: 0,
                    ..Default::default()
                }),
                white: Some(internal::Seat {
                    user_id: String::new(),
                    nickname: String::new(),
                    ai_level: pb::AiLevel::Easy as i32,
                    ..Default::default()
                }),
                seconds_per_move: 0,
                game_id: id.clone(),
                ranked: false,
                ..Default::default()
            },
            |mut c, r| async move { c.create_game(r).await },
        )
        .await
        .expect("created");
    let snapshot = |router: Authorities, id: String| async move {
        router
            .ask(load(&id), |mut c, r| async move { c.get_game(r).await })
            .await
            .expect("loaded")
            .into_inner()
            .game
            .expect("snapshot")
    };
    // Black plays; the computer answers.
    let free = |game: &pb::GameSnapshot| {
        (0..81u32)
            .find(|&i| game.stones.get(i as usize) == Some(&(pb::Color::Unspecified as i32)))
            .map(|i| pb::Point {
                column: i % 9,
                row: i / 9,
            })
            .expect("an empty point")
    };
    for round in 0..2u32 {
        if round == 1 {
            let owner = cluster.owner_of(&id).await;
            cluster.running[owner].take().expect("running").kill();
        }
        let game = snapshot(router.clone(), id.clone()).await;
        let number = game.move_count + 1;
        router
            .ask(
                submit(&id, "b", number, free(&game)),
                |mut c, r| async move { c.submit_action(r).await },
            )
            .await
            .expect("black's move");
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let game = snapshot(router.clone(), id.clone()).await;
            if game.move_count == number + 1 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the computer never answered move {number}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    assert_eq!(
        cluster.stored_moves(&id).await.len(),
        4,
        "each move stored once"
    );
}

/// A territory game's count is the game's, not its owner's: marks made
/// before the owner is killed are there on the next one, and the count is
/// agreed there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_of_dead_stones_survives_its_owner_being_killed() {
    let mut cluster = Cluster::start(2).await;
    let gateway = cluster.gateway();
    let url = format!("http://{}", gateway.addr);
    let black = sign_in(&url, "kwon").await;
    let white = sign_in(&url, "song").await;
    let id = cluster
        .create_tuned(&black.user_id, &white.user_id, |r| {
            r.ruleset = "japanese".to_owned();
        })
        .await;
    black.play(&id, 1, "D5").await.expect("D5");
    white.play(&id, 2, "F5").await.expect("F5");
    black.pass(&id, 3).await.expect("pass");
    white.pass(&id, 4).await.expect("pass");
    let d5 = pb::Point { column: 3, row: 4 };
    let marked = white
        .games
        .clone()
        .mark_dead_stones(white.req(pb::MarkDeadStonesRequest {
            game_id: id.clone(),
            point: Some(d5),
            dead: true,
        }))
        .await
        .expect("marked")
        .into_inner()
        .game
        .and_then(|g| g.counting)
        .expect("counting");
    assert_eq!(marked.dead_stones, [d5]);

    let owner = cluster.owner_of(&id).await;
    cluster.running[owner].take().expect("running").kill();
    let after = black.game(&id).await;
    let counting = after.counting.expect("still counting on the next owner");
    assert_eq!(counting.dead_stones, [d5], "the mark survived");
    assert_eq!(counting.marks_version, marked.marks_version);

    // Black disagrees; then both confirm the marks as they are.
    black
        .games
        .clone()
        .mark_dead_stones(black.req(pb::MarkDeadStonesRequest {
            game_id: id.clone(),
            point: Some(d5),
            dead: false,
        }))
        .await
        .expect("marked alive");
    let version = black
        .game(&id)
        .await
        .counting
        .expect("counting")
        .marks_version;
    let mut result = None;
    for p in [&black, &white] {
        result = p
            .games
            .clone()
            .confirm_count(p.req(pb::ConfirmCountRequest {
                game_id: id.clone(),
                marks_version: version,
            }))
            .await
            .expect("confirmed")
            .into_inner()
            .game
            .and_then(|g| g.result);
    }
    let result = result.expect("counted once both confirmed");
    // Nothing is dead and the open board is nobody's: komi 6.5 decides.
    assert_eq!(result.text, "W+6.5");
}

/// A player whose gateway dies without a word (kill -9) is noticed as gone
/// by the opponent's gateway, and at a table that allows it the computer
/// plays their seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_computer_stands_in_for_a_player_whose_gateway_died() {
    let cluster = Cluster::start(1).await;
    let (near, far) = (cluster.gateway(), cluster.gateway());
    let black = sign_in(&format!("http://{}", near.addr), "moon").await;
    let white = sign_in(&format!("http://{}", far.addr), "yoon").await;
    let id = cluster
        .create_tuned(&black.user_id, &white.user_id, |r| {
            r.computer_stands_in = true;
        })
        .await;
    let seen = watch(&black, &id);
    let _white_watching = watch(&white, &id);
    tokio::time::sleep(Duration::from_millis(500)).await;
    black.play(&id, 1, "E5").await.expect("E5");
    far.kill();
    // The far gateway falls silent; the near one notices within seconds
    // and the computer plays White's move after the grace period.
    let started = Instant::now();
    let reply = loop {
        let game = black.game(&id).await;
        if game.move_count >= 2 {
            break game;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "nobody played for the player whose gateway died"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(reply.white.is_some_and(|p| p.computer_standing_in));
    assert!(reply.last_move.is_some_and(|m| m.by_stand_in));
    let events = seen.lock().expect("events").clone();
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, Some(pb::game_event::Kind::StandInSeated(_)))),
        "Black was told the computer sits in for White"
    );
}
