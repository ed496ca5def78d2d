//! The services as separate processes: gateway and authority over the local
//! Redis and Postgres, and the single-process server on its SQLite file;
//! each killed in the middle of a game and started again.

mod support;

use std::time::Duration;

use support::{
    TOKEN_KEYS, eventually, fresh_postgres, play_to_the_end, recount, redis_url, scrape, sign_in,
    spawn,
};
use ttakji_proto::v1 as pb;

fn authority_args(db: &str, listen: &str) -> Vec<String> {
    // Authorities on one Redis share games only within a namespace: one
    // per database, as one per deployment.
    let namespace = db.rsplit('/').next().unwrap_or(db);
    [
        "authority",
        "--redis-namespace",
        namespace,
        "--listen",
        listen,
        "--metrics-listen",
        "127.0.0.1:0",
        "--database-url",
        db,
        "--redis-url",
        redis_url(),
        "--ai-max-playouts",
        "150",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_and_authority_processes_over_redis_and_postgres_play_a_game_through_a_restart() {
    let db = fresh_postgres().await;
    let authority = spawn(&strs(&authority_args(&db, "127.0.0.1:0")));
    let authority_addr = authority.addr;
    let gateway = spawn(&[
        "gateway",
        "--database-url",
        &db,
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--authority-url",
        &format!("http://{authority_addr}"),
        "--redis-url",
        redis_url(),
        "--token-keys",
        TOKEN_KEYS,
    ]);
    let url = format!("http://{}", gateway.addr);
    let jin = sign_in(&url, "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    let id = game.game_id.clone();

    // A watcher from the start: it must see every event once, in order,
    // across the authority's restart.
    let mut stream = jin
        .games
        .clone()
        .watch_game(jin.req(pb::WatchGameRequest {
            game_id: id.clone(),
            after_seq: 0,
            changes: false,
        }))
        .await
        .expect("watch")
        .into_inner();
    let watcher = tokio::spawn(async move {
        let mut seqs = Vec::new();
        while let Ok(Some(response)) = stream.message().await {
            if let Some(event) = response.event {
                seqs.push(event.seq);
            }
        }
        seqs
    });

    let mut now = jin.game(&id).await;
    for number in [1, 3] {
        jin.play(&id, number, support::free_point(&now))
            .await
            .expect("legal");
        now = jin.wait_turn(&id, pb::Color::Black).await;
    }
    let before = jin.game(&id).await;
    assert_eq!(before.move_count, 4);
    let metrics = scrape(authority.addrs[1]).await;
    assert!(
        metrics.contains("ttakji_moves_accepted_total 4"),
        "{metrics}"
    );

    // The machine dies; another authority takes the address and the game.
    authority.kill();
    let _authority = spawn(&strs(&authority_args(&db, &authority_addr.to_string())));
    let after = eventually(Duration::from_secs(20), || jin.try_game(&id)).await;
    assert_eq!(after, before, "the game came back different");

    let end = play_to_the_end(&jin, &id, pb::Color::Black, &["G7", "C7", "G3", "E7", "E3"]).await;
    let result = end.result.expect("result");
    let count = result.count.expect("counted");
    let (score, _) = recount(&jin.sgf(&id).await);
    assert_eq!(
        (count.black_points, count.white_points),
        (score.black, score.white)
    );

    let seqs = tokio::time::timeout(Duration::from_secs(20), watcher)
        .await
        .expect("the stream ends with the game")
        .expect("watcher task");
    let expected: Vec<u64> = (1..=end.event_seq).collect();
    assert_eq!(seqs, expected, "the watcher missed or repeated events");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_single_process_server_restarted_on_its_sqlite_file_continues_the_game() {
    let dir = std::env::temp_dir().join(format!("ttakji-test-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = format!("sqlite://{}", dir.join("ttakji.db").display());
    let server = support::serve_on(&db, &["--ai-max-playouts", "150"]);
    let jin = sign_in(&format!("http://{}", server.addr), "jin").await;
    let game = jin.start(pb::ColorChoice::White).await;
    let id = game.game_id.clone();
    let first = jin.wait_turn(&id, pb::Color::White).await;
    jin.play(&id, 2, support::free_point(&first))
        .await
        .expect("legal");
    let before = jin.wait_turn(&id, pb::Color::White).await;
    assert_eq!(before.move_count, 3);
    server.kill();

    let server = support::serve_on(&db, &["--ai-max-playouts", "150"]);
    let mut jin = jin;
    jin.games = ttakji_proto::v1::game_service_client::GameServiceClient::new(
        support::channel(&format!("http://{}", server.addr)).await,
    );
    assert_eq!(jin.game(&id).await, before, "the game came back different");
    jin.play(&id, 4, support::free_point(&before))
        .await
        .expect("the game goes on after the restart");
    let next = jin.wait_turn(&id, pb::Color::White).await;
    assert_eq!(next.move_count, 5);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_matchmakers_and_two_gateways_as_processes_match_everyone_once_and_a_slow_player_loses_on_time()
 {
    use std::collections::HashMap;
    let db = fresh_postgres().await;
    let namespace = format!("ttakji-test:{}:", uuid::Uuid::new_v4().simple());
    let authority = spawn(&strs(&authority_args(&db, "127.0.0.1:0")));
    let authority_url = format!("http://{}", authority.addr);
    let matchmaker = || {
        spawn(&[
            "matchmaker",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--authority-url",
            &authority_url,
            "--redis-url",
            redis_url(),
            "--redis-namespace",
            &namespace,
            "--seconds-per-move",
            "1",
        ])
    };
    let matchmakers = [matchmaker(), matchmaker()];
    let gateways: Vec<_> = matchmakers
        .iter()
        .map(|m| {
            spawn(&[
                "gateway",
                "--database-url",
                &db,
                "--listen",
                "127.0.0.1:0",
                "--metrics-listen",
                "127.0.0.1:0",
                "--authority-url",
                &authority_url,
                "--matchmaker-url",
                &format!("http://{}", m.addr),
                "--redis-url",
                redis_url(),
                "--token-keys",
                TOKEN_KEYS,
            ])
        })
        .collect();
    let mut players = Vec::new();
    for i in 0..20 {
        players.push(
            sign_in(
                &format!("http://{}", gateways[i % 2].addr),
                &format!("p{i}"),
            )
            .await,
        );
    }
    let mut queued = tokio::task::JoinSet::new();
    for p in players.clone() {
        queued.spawn(async move {
            let mut stream =
                ttakji_proto::v1::match_service_client::MatchServiceClient::new(p.channel.clone())
                    .find_match(p.req(pb::FindMatchRequest::default()))
                    .await
                    .expect("queued")
                    .into_inner();
            let mut last = None;
            while let Some(m) = stream.message().await.expect("stream") {
                last = m.ticket;
            }
            (p, last.expect("a ticket"))
        });
    }
    let mut by_game: HashMap<String, Vec<(support::Player, pb::Ticket)>> = HashMap::new();
    while let Some(done) = queued.join_next().await {
        let (p, t) = done.expect("player");
        assert_eq!(t.state, pb::TicketState::Matched as i32, "{t:?}");
        by_game.entry(t.game_id.clone()).or_default().push((p, t));
    }
    assert_eq!(by_game.values().map(Vec::len).sum::<usize>(), 20);
    assert!(
        by_game.values().all(|v| v.len() == 2),
        "everyone against a person, once"
    );

    // One game: Black never moves and loses on time (1 s a move here).
    let (_, pair) = by_game.iter().next().expect("a game");
    let (p, t) = &pair[0];
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let over = p.game(&t.game_id).await;
    let result = over.result.expect("lost on time");
    assert_eq!(result.reason, pb::EndReason::Timeout as i32);
    assert_eq!(result.text, "W+T");
}
