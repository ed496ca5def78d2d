//! Two authorities on one database: whichever took a game over last is its
//! one writer. The other's writes are fenced off by the game's epoch, so it
//! drops its stale copy instead of refusing turns from it or storing a
//! second history, and takes the game over again from the store to answer
//! the same request: the caller sees one history and no error.

mod support;

use std::time::Duration;

use tonic::transport::Channel;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::{self, ShutdownTrigger};
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::v1 as pb;

type Client = AuthorityServiceClient<Channel>;

/// An authority on `db`, stopped when its trigger is dropped.
async fn authority(db: &str) -> (Client, ShutdownTrigger) {
    let (client, trigger, _) = authority_with_metrics(db, None).await;
    (client, trigger)
}

/// An authority on `db` that serves `/metrics` on `metrics` if given.
async fn authority_with_metrics(
    db: &str,
    metrics: Option<std::net::SocketAddr>,
) -> (Client, ShutdownTrigger, Option<std::net::SocketAddr>) {
    support::init_logs();
    let (trigger, shutdown) = shutdown::channel();
    let db = Database::connect(db).await.expect("the test database");
    let mut config = ttakji_authority::Config::new("127.0.0.1:0".parse().expect("address"));
    config.metrics_listen = metrics;
    let app = ttakji_authority::App::build(config, db, Bus::in_process(), shutdown.clone())
        .await
        .expect("authority builds");
    let url = format!("http://{}", app.addr());
    let metrics = app.metrics_addr();
    shutdown.spawn(app.run_until_stopped());
    let client = AuthorityServiceClient::connect(url)
        .await
        .expect("authority answers");
    (client, trigger, metrics)
}

async fn create(client: &mut Client, seconds_per_move: u32) -> String {
    let seat = |id: &str| internal::Seat {
        user_id: id.to_owned(),
        nickname: id.to_owned(),
        ai_level: 0,
        ..Default::default()
    };
    client
        .create_game(internal::CreateGameRequest {
            board_size: 9,
            ruleset: String::new(),
            black: Some(seat("b")),
            white: Some(seat("w")),
            seconds_per_move,
            game_id: String::new(),
            ranked: false,
            ..Default::default()
        })
        .await
        .expect("created")
        .into_inner()
        .game
        .expect("snapshot")
        .game_id
}

async fn play(
    client: &mut Client,
    game_id: &str,
    user: &str,
    number: u32,
) -> Result<u32, tonic::Status> {
    client
        .submit_action(internal::SubmitActionRequest {
            game_id: game_id.to_owned(),
            user_id: user.to_owned(),
            move_number: number,
            action: Some(internal::submit_action_request::Action::Place(pb::Point {
                column: number % 9,
                row: number / 9,
            })),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner().game.map_or(0, |g| g.move_count))
}

async fn load(client: &mut Client, game_id: &str) -> pb::GameSnapshot {
    client
        .get_game(internal::GetGameRequest {
            game_id: game_id.to_owned(),
            user_id: String::new(),
            include_score_preview: false,
        })
        .await
        .expect("loads")
        .into_inner()
        .game
        .expect("snapshot")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_sent_to_two_authorities_make_one_history() {
    let db = support::fresh_postgres().await;
    let local = "127.0.0.1:0".parse().ok();
    let (mut a, _stop_a, metrics) = authority_with_metrics(&db, local).await;
    let (mut b, _stop_b) = authority(&db).await;
    let id = create(&mut a, 30).await;

    assert_eq!(play(&mut a, &id, "b", 1).await.expect("move 1 at A"), 1);
    // B takes the game over from the store and carries on.
    assert_eq!(play(&mut b, &id, "w", 2).await.expect("move 2 at B"), 2);
    // A's copy is stale (one move): it neither refuses the turn from it nor
    // stores it, but takes the game back with both moves and plays it.
    assert_eq!(play(&mut a, &id, "b", 3).await.expect("move 3 at A"), 3);
    assert_eq!(play(&mut b, &id, "w", 4).await.expect("move 4 at B"), 4);
    // A retry of a move through the authority that lost the game gets the
    // same answer there.
    assert_eq!(play(&mut a, &id, "w", 4).await.expect("a retry at A"), 4);

    let game = load(&mut b, &id).await;
    assert_eq!(game.move_count, 4);
    let numbers: Vec<u32> = b
        .list_events(internal::ListEventsRequest {
            game_id: id.clone(),
            after_seq: 0,
            limit: 0,
        })
        .await
        .expect("events")
        .into_inner()
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(pb::game_event::Kind::MovePlayed(m)) => m.r#move.as_ref().map(|m| m.number),
            _ => None,
        })
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4], "one history, each move once");

    // Operators see each switch: a takeover, and an action a stale copy
    // did not take.
    let page = support::scrape(metrics.expect("metrics served")).await;
    for counter in ["ttakji_game_takeovers_total", "ttakji_fenced_actions_total"] {
        let value = page
            .lines()
            .find_map(|l| l.strip_prefix(counter)?.trim().parse::<f64>().ok());
        assert!(value.is_some_and(|v| v >= 2.0), "{counter} in {page}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_authority_s_clock_does_not_end_the_game_a_second_time() {
    let db = support::fresh_postgres().await;
    let (mut a, _stop_a) = authority(&db).await;
    let (mut b, _stop_b) = authority(&db).await;
    let id = create(&mut a, 1).await;
    // B takes the game over; A's copy keeps its own timer.
    assert_eq!(play(&mut b, &id, "b", 1).await.expect("move 1 at B"), 1);
    tokio::time::sleep(Duration::from_millis(1800)).await;
    let over = load(&mut b, &id).await;
    let result = over.result.expect("White ran out of time");
    assert_eq!(result.text, "B+T");
    // A's timer fired too, on the epoch before: its write was fenced off
    // and it dropped the game, so asking it now reads the stored end.
    let from_a = load(&mut a, &id).await;
    assert_eq!(from_a.result.map(|r| r.text).as_deref(), Some("B+T"));
    assert_eq!(from_a.event_seq, over.event_seq, "the end is stored once");
}
