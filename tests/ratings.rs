//! Ranked games move ratings exactly once: from the finished-games channel,
//! or from reconciliation when that message never came.

mod support;

use std::time::Duration;

use support::{Player, embedded, sign_in, sqlite_memory};
use ttakji_platform::bus::Bus;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::internal::v1::ratings_service_client::RatingsServiceClient;
use ttakji_proto::v1 as pb;

async fn ranked_game(authority: std::net::SocketAddr, black: &Player, white: &Player) -> String {
    support::game_between(authority, black, white, 0, true)
        .await
        .game_id
}

/// A ratings service reconciling every 300 ms and a client of it; it stops
/// when the handle drops.
async fn start_ratings(
    db: ttakji_platform::store::Database,
    bus: Bus,
    authority: std::net::SocketAddr,
) -> (
    RatingsServiceClient<ttakji_platform::grpc::TracedChannel>,
    support::Running,
) {
    start_ratings_on(db, bus, authority, None).await
}

/// The same; with `ladder` (a Redis key prefix) the leaderboard is in the tests' Redis.
async fn start_ratings_on(
    db: ttakji_platform::store::Database,
    bus: Bus,
    authority: std::net::SocketAddr,
    ladder: Option<String>,
) -> (
    RatingsServiceClient<ttakji_platform::grpc::TracedChannel>,
    support::Running,
) {
    let mut config = support::ratings_config(authority);
    config.reconcile_every = Duration::from_millis(300);
    if let Some(prefix) = ladder {
        config.redis_url = Some(support::redis_url().to_owned());
        config.ladder_prefix = prefix;
    }
    let service = support::start_ratings(config, db, bus).await;
    let client = RatingsServiceClient::new(support::internal(&format!("http://{}", service.addr)));
    (client, service)
}

async fn rating(
    client: &mut RatingsServiceClient<ttakji_platform::grpc::TracedChannel>,
    user: &str,
) -> pb::LadderEntry {
    client
        .get_rating(internal::GetRatingRequest {
            user_id: user.to_owned(),
            board_size: 9,
        })
        .await
        .expect("rating")
        .into_inner()
        .entry
        .expect("entry")
}

async fn eventually_rated(
    client: &mut RatingsServiceClient<ttakji_platform::grpc::TracedChannel>,
    user: &str,
    games: u32,
) -> pb::LadderEntry {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = rating(client, user).await;
        if r.games >= games || std::time::Instant::now() > deadline {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ranked_win_moves_both_ratings_once_and_unranked_games_move_nothing() {
    let db = sqlite_memory().await;
    let bus = Bus::in_process();
    let service = embedded(db.clone(), bus.clone()).await;
    let (mut ratings, _ratings) = start_ratings(db, bus.clone(), service.authority).await;
    let url = format!("http://{}", service.gateway);
    let (a, b) = (sign_in(&url, "ahn").await, sign_in(&url, "baek").await);

    let id = ranked_game(service.authority, &a, &b).await;
    a.games
        .clone()
        .resign(a.req(pb::ResignRequest {
            game_id: id.clone(),
            ..Default::default()
        }))
        .await
        .expect("resign");
    let winner = eventually_rated(&mut ratings, &b.user_id, 1).await;
    let loser = rating(&mut ratings, &a.user_id).await;
    assert_eq!((winner.rating, winner.games, winner.rank), (1220, 1, 1));
    assert_eq!((loser.rating, loser.games, loser.rank), (1180, 1, 2));

    // Reconciliation runs every 300 ms here and sees the same game: nothing more.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(rating(&mut ratings, &b.user_id).await.rating, 1220);

    // The same finished event delivered twice more changes nothing more.
    let finished =
        AuthorityServiceClient::new(support::internal(&format!("http://{}", service.authority)))
            .list_events(internal::ListEventsRequest {
                game_id: id.clone(),
                after_seq: 0,
                limit: 0,
            })
            .await
            .expect("events")
            .into_inner()
            .events
            .into_iter()
            .find(|e| matches!(e.kind, Some(pb::game_event::Kind::Finished(_))))
            .expect("the finished event");
    for _ in 0..2 {
        bus.publish(&ttakji_platform::bus::games_finished(), &finished)
            .await
            .expect("publish");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = rating(&mut ratings, &b.user_id).await;
    assert_eq!((again.rating, again.games), (1220, 1));

    // A casual game between the same players changes nothing.
    let (ta, tb) = (a.clone(), b.clone());
    let casual = {
        let seat = |p: &Player| internal::Seat {
            user_id: p.user_id.clone(),
            nickname: String::new(),
            ai_level: 0,
            ..Default::default()
        };
        AuthorityServiceClient::new(support::internal(&format!("http://{}", service.authority)))
            .create_game(internal::CreateGameRequest {
                board_size: 9,
                ruleset: String::new(),
                black: Some(seat(&ta)),
                white: Some(seat(&tb)),
                seconds_per_move: 0,
                game_id: String::new(),
                ranked: false,
                ..Default::default()
            })
            .await
            .expect("create")
            .into_inner()
            .game
            .expect("game")
            .game_id
    };
    b.games
        .clone()
        .resign(b.req(pb::ResignRequest {
            game_id: casual,
            ..Default::default()
        }))
        .await
        .expect("resign");
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(rating(&mut ratings, &a.user_id).await.rating, 1180);

    let history = ratings
        .get_rating_history(internal::GetRatingHistoryRequest {
            user_id: b.user_id.clone(),
            board_size: 9,
            limit: 0,
        })
        .await
        .expect("history")
        .into_inner()
        .changes;
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].before, history[0].after, history[0].score),
        (1200, 1220, 1.0)
    );
    assert_eq!(history[0].opponent_user_id, a.user_id);
    let board = ratings
        .get_ladder(internal::GetLadderRequest {
            board_size: 9,
            top: 10,
            around_user_id: a.user_id.clone(),
            neighbours: 1,
        })
        .await
        .expect("leaderboard")
        .into_inner();
    assert_eq!(
        board
            .top
            .iter()
            .map(|e| e.user_id.clone())
            .collect::<Vec<_>>(),
        vec![b.user_id.clone(), a.user_id.clone()]
    );
    assert_eq!(board.around.len(), 2);

    // The same, as a player sees it through the gateway.
    let mut ladder =
        ttakji_proto::v1::ladder_service_client::LadderServiceClient::new(b.channel.clone());
    let mine = ladder
        .get_my_rating(b.req(pb::GetMyRatingRequest { board_size: 9 }))
        .await
        .expect("my rating")
        .into_inner()
        .entry
        .expect("entry");
    assert_eq!((mine.rating, mine.rank), (1220, 1));
    let top = ladder
        .get_ladder(a.req(pb::GetLadderRequest {
            board_size: 9,
            top: 5,
        }))
        .await
        .expect("ladder")
        .into_inner();
    assert_eq!(top.top.len(), 2);
    assert_eq!(
        top.around_me.iter().map(|e| e.rank).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_finished_while_the_ratings_service_was_away_are_each_applied_once_by_reconciliation()
{
    // The embedded services include a ratings service: this test's store is
    // a separate one, so only the service started below rates its games.
    let db = sqlite_memory().await;
    let bus = Bus::in_process();
    let service = embedded(sqlite_memory().await, bus.clone()).await;
    let url = format!("http://{}", service.gateway);
    let (a, b) = (sign_in(&url, "ahn").await, sign_in(&url, "baek").await);
    for _ in 0..3 {
        let id = ranked_game(service.authority, &a, &b).await;
        b.games
            .clone()
            .resign(b.req(pb::ResignRequest {
                game_id: id,
                ..Default::default()
            }))
            .await
            .expect("resign");
    }
    // The finished-game messages went out before this ratings service started.
    let (mut ratings, _ratings) = start_ratings(db, bus, service.authority).await;
    let winner = eventually_rated(&mut ratings, &a.user_id, 3).await;
    // 1200 → 1220 → 1238 → 1254: K 40, and each game expects more of the
    // stronger player (E = 0.557, then 0.608).
    assert_eq!((winner.rating, winner.games), (1254, 3));
    tokio::time::sleep(Duration::from_millis(700)).await;
    let later = rating(&mut ratings, &a.user_id).await;
    assert_eq!((later.rating, later.games), (1254, 3), "each game once");
    assert_eq!(rating(&mut ratings, &b.user_id).await.games, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaderboard_is_rebuilt_from_the_database_when_redis_loses_it() {
    // As above, the embedded ratings service has a store of its own: were
    // it to share this one, it could apply a game first, and the service
    // below would then never put that player on its Redis leaderboard.
    let db = sqlite_memory().await;
    let bus = Bus::in_process();
    let service = embedded(sqlite_memory().await, bus.clone()).await;
    let prefix = format!("ttakji-test-ladder:{}:", uuid::Uuid::new_v4().simple());
    let (mut ratings, _ratings) =
        start_ratings_on(db, bus, service.authority, Some(prefix.clone())).await;
    let url = format!("http://{}", service.gateway);
    let players = [
        sign_in(&url, "ahn").await,
        sign_in(&url, "baek").await,
        sign_in(&url, "cho").await,
    ];
    for (w, l) in [(0, 1), (2, 1), (0, 2)] {
        let id = ranked_game(service.authority, &players[w], &players[l]).await;
        players[l]
            .games
            .clone()
            .resign(players[l].req(pb::ResignRequest {
                game_id: id,
                ..Default::default()
            }))
            .await
            .expect("resign");
    }
    eventually_rated(&mut ratings, &players[0].user_id, 2).await;
    eventually_rated(&mut ratings, &players[1].user_id, 2).await;
    eventually_rated(&mut ratings, &players[2].user_id, 2).await;
    let board = |ratings: &mut RatingsServiceClient<ttakji_platform::grpc::TracedChannel>| {
        let mut r = ratings.clone();
        let around = players[1].user_id.clone();
        async move {
            r.get_ladder(internal::GetLadderRequest {
                board_size: 9,
                top: 10,
                around_user_id: around,
                neighbours: 1,
            })
            .await
            .expect("leaderboard")
            .into_inner()
        }
    };
    let before = board(&mut ratings).await;
    assert_eq!(before.top.len(), 3);
    assert_eq!(before.top[0].user_id, players[0].user_id);
    let client = redis::Client::open(support::redis_url()).expect("redis");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("redis");
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}9"))
        .query_async(&mut conn)
        .await
        .expect("flush");
    let after = board(&mut ratings).await;
    assert_eq!(after, before, "rebuilt from the database");
    // Lost, then one new result put back before anyone looked: the set is
    // not empty, but it is not the ladder either.
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}9"))
        .query_async(&mut conn)
        .await
        .expect("flush");
    let _: () = redis::cmd("ZADD")
        .arg(format!("{prefix}9"))
        .arg(before.top[2].rating)
        .arg(&before.top[2].user_id)
        .query_async(&mut conn)
        .await
        .expect("one result");
    let after = board(&mut ratings).await;
    assert_eq!(after, before, "made whole again from the database");
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}9"))
        .query_async(&mut conn)
        .await
        .expect("tidy");
}

/// A page of the leaderboard (the top hundred and one player's neighbours),
/// and one player's rating, each cost one statement, whether the ladder is
/// read from Redis or from the store alone; and both read the same places.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaderboard_page_of_a_hundred_is_one_store_round_trip() {
    use sqlx::Executor as _;
    let url = support::fresh_postgres().await;
    let name = url.rsplit('/').next().expect("a database name").to_owned();
    let db = ttakji_platform::store::Database::connect(&url)
        .await
        .expect("the test database");
    let ttakji_platform::store::Database::Postgres(pool) = &db else {
        panic!("a Postgres URL gives a Postgres store");
    };
    // 300 rated players on 9×9 with ratings all different (37 and 500 share
    // no factor), one who has not played, and one on 13×13 only.
    pool.execute(
        "INSERT INTO ratings (user_id, board_size, nickname, rating, games, updated_at) \
         SELECT 'p' || lpad(n::text, 4, '0'), 9, 'n' || n, 1000 + (n * 37) % 500, 1 + n % 9, 0 \
         FROM generate_series(1, 300) AS n \
         UNION ALL SELECT 'unplayed', 9, 'u', 1500, 0, 0 \
         UNION ALL SELECT 'elsewhere', 13, 'e', 1600, 4, 0",
    )
    .await
    .expect("seed the ladder");
    let ladder: Vec<(String, i64)> = sqlx::query_as(
        "SELECT user_id, rating FROM ratings WHERE board_size = 9 AND games > 0 \
         ORDER BY rating DESC",
    )
    .fetch_all(pool)
    .await
    .expect("the ladder");
    let counts = support::StatementCounts::open().await;

    // No authority: reconciliation fails quietly, once, at start.
    let nowhere: std::net::SocketAddr = "127.0.0.1:9".parse().expect("address");
    let around = &ladder[150].0;
    for redis in [false, true] {
        let mut config = support::ratings_config(nowhere);
        config.reconcile_every = Duration::from_secs(3600);
        if redis {
            config.redis_url = Some(support::redis_url().to_owned());
            config.ladder_prefix = format!("ttakji-test-ladder:{}:", uuid::Uuid::new_v4().simple());
        }
        let service = support::start_ratings(config, db.clone(), Bus::in_process()).await;
        let mut client =
            RatingsServiceClient::new(support::internal(&format!("http://{}", service.addr)));
        let request = internal::GetLadderRequest {
            board_size: 9,
            top: 100,
            around_user_id: around.clone(),
            neighbours: 3,
        };
        // The first read fills the empty Redis set from the store.
        client
            .get_ladder(request.clone())
            .await
            .expect("a first page");
        tokio::time::sleep(Duration::from_millis(300)).await;

        counts.reset().await;
        let page = client
            .get_ladder(request.clone())
            .await
            .expect("a page")
            .into_inner();
        let statements = counts.in_database(&name).await;
        let calls: i64 = statements.iter().map(|(_, calls)| calls).sum();
        assert_eq!(calls, 1, "redis {redis}: one statement: {statements:#?}");
        let places = |entries: &[pb::LadderEntry]| -> Vec<(u32, String, i64)> {
            entries
                .iter()
                .map(|e| (e.rank, e.user_id.clone(), i64::from(e.rating)))
                .collect()
        };
        let want = |from: usize, to: usize| -> Vec<(u32, String, i64)> {
            (from..to)
                .map(|i| (i as u32 + 1, ladder[i].0.clone(), ladder[i].1))
                .collect()
        };
        assert_eq!(places(&page.top), want(0, 100), "redis {redis}: the top");
        assert_eq!(
            places(&page.around),
            want(147, 154),
            "redis {redis}: around"
        );

        counts.reset().await;
        let mine = client
            .get_rating(internal::GetRatingRequest {
                user_id: around.clone(),
                board_size: 9,
            })
            .await
            .expect("a rating")
            .into_inner()
            .entry
            .expect("an entry");
        let statements = counts.in_database(&name).await;
        let calls: i64 = statements.iter().map(|(_, calls)| calls).sum();
        assert_eq!(calls, 1, "redis {redis}: one statement: {statements:#?}");
        assert_eq!((mine.rank, mine.rating), (151, ladder[150].1 as i32));
        let unplayed = rating(&mut client, "unplayed").await;
        assert_eq!((unplayed.rank, unplayed.games), (0, 0), "redis {redis}");
    }
}
