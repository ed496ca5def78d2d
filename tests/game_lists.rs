//! Lists of games (`ListMyGames`, `ListLiveGames`) through the gateway, on
//! PostgreSQL: a player's own games only, newest first, pages that stay
//! stable while games begin, a finished game in both players' lists at
//! once, the live list without games against the computer and the ladder's
//! strongest first, and one store round trip per page.

mod support;

use std::collections::BTreeSet;

use support::{Player, embedded, fresh_postgres, sign_in};
use tonic::Code;
use ttakji_platform::bus::Bus;
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;
use ttakji_proto::v1 as pb;

async fn service() -> (support::Embedded, String) {
    let db = Database::connect(&fresh_postgres().await)
        .await
        .expect("the test database");
    let service = embedded(db, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    (service, url)
}

/// A game against the computer, which thinks in the player's client.
async fn ai_game(player: &Player) -> String {
    player
        .start_thinking(pb::ColorChoice::Black, pb::AiEngine::Client)
        .await
        .game_id
}

/// A game between two people, made as the matchmaker makes one.
async fn people_game(
    authority: std::net::SocketAddr,
    black: &Player,
    white: &Player,
    board_size: u32,
    ladder_rating: u32,
) -> String {
    let seat = |p: &Player| internal::Seat {
        user_id: p.user_id.clone(),
        ..Default::default()
    };
    AuthorityServiceClient::new(support::internal(&format!("http://{authority}")))
        .create_game(internal::CreateGameRequest {
            board_size,
            black: Some(seat(black)),
            white: Some(seat(white)),
            seconds_per_move: 30,
            ranked: ladder_rating > 0,
            ladder_rating,
            ..Default::default()
        })
        .await
        .expect("the authority makes the game")
        .into_inner()
        .game
        .expect("snapshot")
        .game_id
}

async fn my_page(
    player: &Player,
    page_size: i32,
    page_token: &str,
) -> Result<pb::ListMyGamesResponse, tonic::Status> {
    player
        .games
        .clone()
        .list_my_games(player.req(pb::ListMyGamesRequest {
            page_size,
            page_token: page_token.to_owned(),
        }))
        .await
        .map(tonic::Response::into_inner)
}

async fn live_page(
    player: &Player,
    board_size: u32,
    page_size: i32,
    page_token: &str,
) -> Result<pb::ListLiveGamesResponse, tonic::Status> {
    player
        .games
        .clone()
        .list_live_games(player.req(pb::ListLiveGamesRequest {
            page_size,
            page_token: page_token.to_owned(),
            board_size,
        }))
        .await
        .map(tonic::Response::into_inner)
}

fn ids(games: &[pb::GameSummary]) -> Vec<String> {
    games.iter().map(|g| g.game_id.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_sees_only_their_games_newest_first_in_pages_that_stay_stable() {
    let (service, url) = service().await;
    let (jin, mina, other) = (
        sign_in(&url, "jin").await,
        sign_in(&url, "mina").await,
        sign_in(&url, "sora").await,
    );
    // Jin's games, oldest first: four against the computer, one against
    // Mina (Jin White). Others play games Jin has no part in.
    let mut jins = Vec::new();
    for _ in 0..4 {
        jins.push(ai_game(&jin).await);
    }
    jins.push(people_game(service.authority, &mina, &jin, 9, 0).await);
    let minas_own = ai_game(&mina).await;
    let others = people_game(service.authority, &other, &mina, 9, 0).await;

    let mut seen = Vec::new();
    let first = my_page(&jin, 2, "").await.expect("first page");
    assert_eq!(first.games.len(), 2);
    seen.extend(first.games.clone());
    // A game that begins between pages is on a new first page, never on
    // a later page of this walk.
    let late = ai_game(&jin).await;
    let mut token = first.next_page_token;
    while !token.is_empty() {
        let page = my_page(&jin, 2, &token).await.expect("next page");
        assert!(page.games.len() <= 2);
        seen.extend(page.games.clone());
        token = page.next_page_token;
    }
    let newest_first: Vec<String> = jins.iter().rev().cloned().collect();
    assert_eq!(
        ids(&seen),
        newest_first,
        "each of Jin's games once, newest first"
    );
    assert!(!ids(&seen).contains(&late));
    let again = my_page(&jin, 0, "").await.expect("a new first page");
    assert_eq!(again.games.first().map(|g| g.game_id.clone()), Some(late));
    assert_eq!(again.games.len(), 6);
    assert!(again.next_page_token.is_empty(), "all fit in a page of 20");

    // What each entry says, seen by Jin.
    let against_mina = seen.iter().find(|g| g.game_id == jins[4]).expect("listed");
    assert_eq!(against_mina.your_color, pb::Color::White as i32);
    assert!(!against_mina.against_computer);
    assert_eq!(against_mina.status, pb::GameStatus::Playing as i32);
    assert_eq!(against_mina.board_size, 9);
    assert!(against_mina.created_at_unix_ms > 0);
    let against_computer = seen.iter().find(|g| g.game_id == jins[0]).expect("listed");
    assert!(against_computer.against_computer);
    assert_eq!(against_computer.your_color, pb::Color::Black as i32);

    // Mina's list holds her games and not the ones she had no part in.
    let minas = ids(&my_page(&mina, 100, "").await.expect("Mina's games").games);
    let expected: BTreeSet<String> = [minas_own, others, jins[4].clone()].into();
    assert_eq!(minas.iter().cloned().collect::<BTreeSet<_>>(), expected);
    assert_eq!(minas.len(), 3);

    // A negative page size, and a token that is not one, are refused.
    let negative = my_page(&jin, -1, "").await.expect_err("page_size -1");
    assert_eq!(negative.code(), Code::InvalidArgument);
    assert_eq!(
        ttakji_platform::refusal::reason(&negative).as_deref(),
        Some("PAGE_SIZE_INVALID")
    );
    let forged = my_page(&jin, 2, "p.1.abc'; DROP TABLE games")
        .await
        .expect_err("a forged token");
    assert_eq!(forged.code(), Code::InvalidArgument);
    assert_eq!(
        ttakji_platform::refusal::reason(&forged).as_deref(),
        Some("PAGE_TOKEN_INVALID")
    );
    // Unsigned callers get nothing.
    let anonymous = pb::game_service_client::GameServiceClient::new(support::channel(&url).await)
        .list_my_games(pb::ListMyGamesRequest::default())
        .await
        .expect_err("no token");
    assert_eq!(anonymous.code(), Code::Unauthenticated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_is_in_both_players_lists_at_once() {
    let (service, url) = service().await;
    let (jin, mina) = (sign_in(&url, "jin").await, sign_in(&url, "mina").await);
    let game = people_game(service.authority, &jin, &mina, 9, 0).await;
    jin.play(&game, 1, "E5").await.expect("Jin plays E5");
    mina.games
        .clone()
        .resign(mina.req(pb::ResignRequest {
            game_id: game.clone(),
            ..Default::default()
        }))
        .await
        .expect("Mina resigns");
    for (player, color) in [(&jin, pb::Color::Black), (&mina, pb::Color::White)] {
        let listed = my_page(player, 10, "").await.expect("listed").games;
        let entry = listed
            .iter()
            .find(|g| g.game_id == game)
            .expect("the game is listed");
        assert_eq!(entry.status, pb::GameStatus::Finished as i32);
        assert_eq!(entry.your_color, color as i32);
        assert_eq!(entry.move_count, 1);
        assert!(entry.finished_at_unix_ms >= entry.created_at_unix_ms);
        let result = entry.result.as_ref().expect("a result");
        assert_eq!(result.winner, pb::Color::Black as i32);
        assert_eq!(result.reason, pb::EndReason::Resignation as i32);
        assert_eq!(result.text, "B+R");
    }
    // It has left the live list.
    let live = live_page(&jin, 0, 100, "").await.expect("live games");
    assert!(!ids(&live.games).contains(&game));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_games_are_between_people_strongest_first_and_filtered_by_size() {
    let (service, url) = service().await;
    let players = [
        sign_in(&url, "a1").await,
        sign_in(&url, "a2").await,
        sign_in(&url, "a3").await,
        sign_in(&url, "a4").await,
    ];
    let [a, b, c, d] = &players;
    let casual = people_game(service.authority, a, b, 9, 0).await;
    let strong = people_game(service.authority, c, d, 9, 1720).await;
    let middling = people_game(service.authority, a, c, 9, 1510).await;
    let larger = people_game(service.authority, b, d, 13, 0).await;
    let computer = ai_game(a).await;

    let all = live_page(a, 0, 0, "").await.expect("live games");
    assert_eq!(
        ids(&all.games),
        vec![
            strong.clone(),
            middling.clone(),
            larger.clone(),
            casual.clone()
        ],
        "the strongest first, then the newest; none against the computer"
    );
    assert!(!ids(&all.games).contains(&computer));
    assert_eq!(all.games[0].ladder_rating, 1720);
    assert!(
        all.games
            .iter()
            .all(|g| g.your_color == pb::Color::Unspecified as i32)
    );

    // Page by page on 9×9: the same order, 13×13 left out.
    let first = live_page(a, 9, 2, "").await.expect("page 1");
    assert_eq!(ids(&first.games), vec![strong, middling]);
    let second = live_page(a, 9, 2, &first.next_page_token)
        .await
        .expect("page 2");
    assert_eq!(ids(&second.games), vec![casual]);
    assert!(second.next_page_token.is_empty());
    let thirteen = live_page(a, 13, 10, "").await.expect("13×13");
    assert_eq!(ids(&thirteen.games), vec![larger]);

    // A token made for 9×9 is refused with another size, and so is a size
    // that is not offered.
    let wrong = live_page(a, 13, 2, &first.next_page_token)
        .await
        .expect_err("another board size");
    assert_eq!(
        ttakji_platform::refusal::reason(&wrong).as_deref(),
        Some("PAGE_TOKEN_INVALID")
    );
    let eleven = live_page(a, 11, 2, "").await.expect_err("11×11");
    assert_eq!(
        ttakji_platform::refusal::reason(&eleven).as_deref(),
        Some("BOARD_SIZE_NOT_OFFERED")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_a_hundred_games_is_one_store_round_trip() {
    use sqlx::Executor as _;
    let url = fresh_postgres().await;
    let name = url.rsplit('/').next().expect("a database name").to_owned();
    let db = Database::connect(&url).await.expect("the test database");
    let Database::Postgres(pool) = &db else {
        panic!("a Postgres URL gives a Postgres store");
    };
    // 300 games: 150 of player u1 (half each colour), 150 live between
    // others, some against the computer.
    pool.execute(
        "INSERT INTO games (id, board_size, ruleset, komi_half, black_user_id, black_name, \
         white_user_id, white_name, white_ai_level, status, created_at, ladder_rating, move_count) \
         SELECT md5(n::text), 9, 'ttakji', 14, \
         CASE WHEN n % 2 = 0 THEN 'u1' ELSE 'o' || n END, 'b', \
         CASE WHEN n % 2 = 0 THEN 'x' || n ELSE 'u1' END, 'w', NULL, 'playing', n, n % 7, n % 50 \
         FROM generate_series(1, 150) AS n",
    )
    .await
    .expect("seed u1's games");
    pool.execute(
        "INSERT INTO games (id, board_size, ruleset, komi_half, black_user_id, black_name, \
         white_user_id, white_name, white_ai_level, status, created_at, ladder_rating) \
         SELECT md5('l' || n), 9, 'ttakji', 14, 'p' || n, 'b', \
         CASE WHEN n % 5 = 0 THEN NULL ELSE 'q' || n END, 'w', \
         CASE WHEN n % 5 = 0 THEN 'easy' ELSE NULL END, 'playing', 1000 + n, n % 11 \
         FROM generate_series(1, 150) AS n",
    )
    .await
    .expect("seed live games");

    let counts = support::StatementCounts::open().await;
    let mine = ttakji_authority::store::Listing::Player {
        user_id: "u1".to_owned(),
        before: None,
    };
    let live = ttakji_authority::store::Listing::Live {
        board_size: Some(9),
        before: None,
    };
    for listing in [mine, live] {
        counts.reset().await;
        let rows = ttakji_authority::store::list_games(&db, &listing, 101)
            .await
            .expect("a page");
        assert_eq!(rows.len(), 101, "{listing:?}");
        let statements = counts.in_database(&name).await;
        let calls: i64 = statements.iter().map(|(_, calls)| calls).sum();
        assert_eq!(
            calls, 1,
            "one statement for a page of {listing:?}: {statements:#?}"
        );
    }
    // The page's rows are what the list says: u1's newest first.
    let rows = ttakji_authority::store::list_games(
        &db,
        &ttakji_authority::store::Listing::Player {
            user_id: "u1".to_owned(),
            before: Some((100, String::new())),
        },
        3,
    )
    .await
    .expect("a page");
    let created: Vec<i64> = rows.iter().map(|r| r.created_at).collect();
    assert_eq!(created, vec![99, 98, 97]);
}
