//! Redis restarted under the services, coming back with nothing: a move
//! made while it is away is acknowledged at once (actions never wait on the
//! bus) and reaches the opponent's stream soon after Redis is back, and
//! watchers see every event once, in order; queued players keep their
//! tickets, places and waits; ranked results are each applied once and the
//! ladder is whole again.

mod support;

use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{Player, embedded, sign_in, sqlite_memory};
use ttakji_platform::bus::Bus;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

/// A Redis of this test's own, on `port`, keeping nothing on disk.
fn redis(port: u16) -> Child {
    support::redis_server(port, &[])
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
                changes: false,
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
    let port = support::free_port();
    let mut server = redis(port);
    let (_bus_stop, bus_shutdown) = ttakji_platform::shutdown::channel();
    let bus = Bus::redis(&format!("redis://127.0.0.1:{port}"), bus_shutdown)
        .await
        .expect("redis");
    let service = embedded(sqlite_memory().await, bus).await;
    let url = format!("http://{}", service.gateway);
    let black = sign_in(&url, "kim").await;
    let white = sign_in(&url, "lee").await;
    let game = support::game_between(service.authority, &black, &white, 60, false).await;
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

/// What a queued player's stream said, in order.
type Said = Arc<Mutex<Vec<Result<pb::Ticket, tonic::Status>>>>;

fn queue(player: &Player) -> Said {
    let said: Said = Arc::default();
    let mut matching =
        ttakji_proto::v1::match_service_client::MatchServiceClient::new(player.channel.clone());
    let request = player.req(pb::FindMatchRequest {
        board_size: 9,
        ruleset: String::new(),
        ranked: false,
    });
    let log = said.clone();
    tokio::spawn(async move {
        let mut stream = match matching.find_match(request).await {
            Ok(answer) => answer.into_inner(),
            Err(status) => {
                log.lock().expect("log").push(Err(status));
                return;
            }
        };
        loop {
            let next = stream.message().await;
            let mut log = log.lock().expect("log");
            match next {
                Ok(Some(m)) => log.push(Ok(m.ticket.unwrap_or_default())),
                Ok(None) => return,
                Err(status) => {
                    log.push(Err(status));
                    return;
                }
            }
        }
    });
    said
}

fn last_ticket(said: &Said) -> pb::Ticket {
    let said = said.lock().expect("log");
    match said.last() {
        Some(Ok(ticket)) => ticket.clone(),
        other => panic!("the queue stream said {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_players_keep_their_tickets_places_and_waits_across_a_redis_restart() {
    let port = support::free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let mut server = redis(port);
    let (_bus_stop, bus_shutdown) = ttakji_platform::shutdown::channel();
    let bus = Bus::redis(&url, bus_shutdown).await.expect("redis");
    let tickets = ttakji_matchmaker::Tickets::redis(&url)
        .await
        .expect("the queue on redis");
    // No pairing after the first round: the three stay in the queue, in
    // the order they came.
    let service = support::embedded_tuned(sqlite_memory().await, bus, tickets, None, |m| {
        m.tick = Duration::from_secs(3600);
    })
    .await;
    let gateway = format!("http://{}", service.gateway);
    let mut players = Vec::new();
    let mut streams = Vec::new();
    for name in ["kim", "lee", "park"] {
        let player = sign_in(&gateway, name).await;
        streams.push(queue(&player));
        players.push(player);
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let before: Vec<pb::Ticket> = streams.iter().map(last_ticket).collect();
    let places: Vec<u32> = before.iter().map(|t| t.position).collect();
    assert_eq!(places, [1, 2, 3], "{before:?}");

    // Redis goes away for 2 s and comes back with nothing.
    server.kill().expect("kill redis");
    server.wait().expect("redis gone");
    let gone = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut server = redis(port);
    let back = Instant::now();
    let outage = back.duration_since(gone);

    // Each stream goes on with its ticket, queued again where it was.
    let after = support::eventually(Duration::from_secs(10), || {
        let streams = streams.clone();
        let before = before.clone();
        async move {
            let after: Vec<pb::Ticket> = streams.iter().map(last_ticket).collect();
            let requeued = after.iter().zip(&before).all(|(a, b)| {
                a.waited_ms >= b.waited_ms + i64::try_from(outage.as_millis()).unwrap_or(0)
                    && a.waiting == 3
            });
            if requeued {
                Ok(after)
            } else {
                Err(tonic::Status::unavailable(format!("not yet: {after:?}")))
            }
        }
    })
    .await;
    let settled = back.elapsed();
    eprintln!(
        "redis restart: three queued tickets back in their places {settled:?} after Redis was back"
    );
    for (a, b) in after.iter().zip(&before) {
        assert_eq!(a.ticket_id, b.ticket_id, "the same ticket");
        assert_eq!(a.position, b.position, "the same place: {after:?}");
        assert_eq!(a.state, pb::TicketState::Waiting as i32);
    }
    for said in &streams {
        let said = said.lock().expect("log");
        assert!(said.iter().all(Result::is_ok), "no stream ended: {said:?}");
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// A ranked game between `black` and `white` that White resigns at once.
async fn ranked_win(service: &support::Embedded, black: &Player, white: &Player) -> String {
    let id = support::game_between(service.authority, black, white, 0, true)
        .await
        .game_id;
    white
        .games
        .clone()
        .resign(white.req(pb::ResignRequest {
            game_id: id.clone(),
            ..Default::default()
        }))
        .await
        .expect("resign");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranked_results_across_a_redis_restart_are_each_applied_once_and_the_ladder_is_whole() {
    use ttakji_proto::internal::v1::ratings_service_client::RatingsServiceClient;
    let port = support::free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let mut server = redis(port);
    let (_bus_stop, bus_shutdown) = ttakji_platform::shutdown::channel();
    let bus = Bus::redis(&url, bus_shutdown).await.expect("redis");
    let service = embedded(sqlite_memory().await, bus.clone()).await;
    // The ratings service under test: its own store (the embedded one
    // applies the same games to the services' store), its ladder in this
    // Redis, reconciling every 300 ms.
    let mut config = support::ratings_config(service.authority);
    config.redis_url = Some(url.clone());
    config.reconcile_every = Duration::from_millis(300);
    let ratings_service = support::start_ratings(config, sqlite_memory().await, bus).await;
    let ratings = RatingsServiceClient::new(support::internal(&format!(
        "http://{}",
        ratings_service.addr
    )));
    let gateway = format!("http://{}", service.gateway);
    let mut players = Vec::new();
    for name in ["ahn", "baek", "cho", "deok"] {
        players.push(sign_in(&gateway, name).await);
    }
    let games_of = |ratings: &RatingsServiceClient<_>, user: String| {
        let mut r: RatingsServiceClient<ttakji_platform::grpc::TracedChannel> = ratings.clone();
        async move {
            r.get_rating(internal::GetRatingRequest {
                user_id: user,
                board_size: 9,
            })
            .await
            .map(|r| r.into_inner().entry.unwrap_or_default())
        }
    };
    ranked_win(&service, &players[0], &players[1]).await;
    ranked_win(&service, &players[2], &players[3]).await;
    for p in &players {
        support::eventually(Duration::from_secs(10), || {
            let rated = games_of(&ratings, p.user_id.clone());
            async move {
                let entry = rated.await?;
                if entry.games == 1 {
                    Ok(())
                } else {
                    Err(tonic::Status::unavailable(format!("{entry:?}")))
                }
            }
        })
        .await;
    }

    // Redis goes away; two more ranked games end meanwhile.
    server.kill().expect("kill redis");
    server.wait().expect("redis gone");
    ranked_win(&service, &players[0], &players[2]).await;
    ranked_win(&service, &players[1], &players[3]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut server = redis(port);
    let back = Instant::now();

    // Everyone has played two, each counted once, and the ladder lists all.
    let ladder = support::eventually(Duration::from_secs(15), || {
        let mut r = ratings.clone();
        let rated: Vec<_> = players
            .iter()
            .map(|p| games_of(&ratings, p.user_id.clone()))
            .collect();
        async move {
            for rated in rated {
                let entry = rated.await?;
                if entry.games != 2 {
                    return Err(tonic::Status::unavailable(format!("{entry:?}")));
                }
            }
            let board = r
                .get_ladder(internal::GetLadderRequest {
                    board_size: 9,
                    top: 10,
                    around_user_id: String::new(),
                    neighbours: 0,
                })
                .await?
                .into_inner();
            if board.top.len() == 4 {
                Ok(board)
            } else {
                Err(tonic::Status::unavailable(format!("{board:?}")))
            }
        }
    })
    .await;
    let whole = back.elapsed();
    eprintln!(
        "redis restart: 4 ranked results (2 while Redis was away) applied once each, ladder of 4 whole {whole:?} after Redis was back"
    );
    // And no result is applied twice later on.
    tokio::time::sleep(Duration::from_millis(900)).await;
    for p in &players {
        let entry = games_of(&ratings, p.user_id.clone()).await.expect("rating");
        assert_eq!(entry.games, 2, "each result once: {entry:?}");
        let listed = ladder
            .top
            .iter()
            .find(|e| e.user_id == p.user_id)
            .expect("on the ladder");
        assert_eq!(listed.rating, entry.rating);
    }
    let _ = server.kill();
    let _ = server.wait();
}
