//! One suite for every way the leaderboard is kept: each case states a
//! promise of [`Ladder`] and runs against the store alone and against the
//! store with Redis's sorted sets, on SQLite and on PostgreSQL (a fresh
//! database and a fresh Redis key prefix per test).

use std::future::Future;
use std::sync::Arc;

use ttakji_platform::on_pool;
use ttakji_platform::redis_target::RedisTarget;
use ttakji_platform::store::Database;

use super::{Ladder, Page, ladder_key};
use crate::elo::Outcome;
use crate::store::{self, RankedGame, Side};

macro_rules! contract {
    ($($case:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    super::on(super::Kind::Sqlite, false, super::$case).await;
                }
            )+
        }
        mod sqlite_and_redis {
            $(
                #[tokio::test]
                async fn $case() {
                    super::on(super::Kind::Sqlite, true, super::$case).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    super::on(super::Kind::Postgres, false, super::$case).await;
                }
            )+
        }
        mod postgres_and_redis {
            $(
                #[tokio::test]
                async fn $case() {
                    super::on(super::Kind::Postgres, true, super::$case).await;
                }
            )+
        }
    };
}

contract!(
    a_page_is_the_top_places_and_a_players_neighbours,
    equal_ratings_are_placed_the_same_way_by_every_ladder,
    a_player_without_a_ranked_game_has_no_place,
    a_page_longer_than_the_ladder_gives_what_there_is,
    an_applied_game_moves_its_players_on_the_ladder,
    a_ladder_that_redis_lost_is_read_whole_again,
);

enum Kind {
    Sqlite,
    Postgres,
}

/// A test's ladder, and what it needs to change the store and Redis.
struct Fixture {
    db: Database,
    ladder: Ladder,
}

/// Runs `case` on a fresh store of `kind`, with Redis when `redis`.
async fn on<F, Fut>(kind: Kind, redis: bool, case: F)
where
    F: FnOnce(Fixture) -> Fut,
    Fut: Future<Output = ()>,
{
    let db = match kind {
        Kind::Sqlite => Database::connect("sqlite::memory:").await,
        Kind::Postgres => {
            let name = format!("ttakji_ladder_{}", random());
            ttakji_platform::store::create_postgres_database(
                ttakji_test_support::postgres_admin_url(),
                &name,
            )
            .await
            .expect("a database on the tests' PostgreSQL");
            Database::connect(&ttakji_test_support::postgres_database_url(&name)).await
        }
    }
    .expect("the store");
    let redis = if redis {
        let conn = RedisTarget::parse(ttakji_test_support::redis_url())
            .expect("a Redis URL")
            .connection()
            .await
            .expect("the tests' Redis");
        Some((conn, Arc::from(format!("ttakji-test-ladder:{}:", random()))))
    } else {
        None
    };
    let ladder = Ladder::new(db.clone(), redis);
    case(Fixture { db, ladder }).await;
}

fn random() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

impl Fixture {
    /// Puts players on the store's ladder as they are: (id, board size,
    /// rating, games).
    async fn seed(&self, players: &[(&str, i64, i64, i64)]) {
        for &(id, size, rating, games) in players {
            on_pool!(&self.db, |pool| {
                sqlx::query(
                    "INSERT INTO ratings (user_id, board_size, nickname, rating, games, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, 0)",
                )
                .bind(id)
                .bind(size)
                .bind(format!("nick {id}"))
                .bind(rating)
                .bind(games)
                .execute(pool)
                .await
                .map(|_| ())
            })
            .expect("seeded");
        }
    }

    async fn page(&self, top: usize, around: Option<(&str, usize)>) -> Page {
        self.ladder.page(9, top, around).await.expect("a page")
    }
}

/// Places and ids.
fn ids(rows: &[(u32, crate::store::Standing)]) -> Vec<(u32, String)> {
    rows.iter().map(|(p, s)| (*p, s.user_id.clone())).collect()
}

fn places(ps: &[(u32, &str)]) -> Vec<(u32, String)> {
    ps.iter().map(|(p, id)| (*p, (*id).to_owned())).collect()
}

async fn a_page_is_the_top_places_and_a_players_neighbours(f: Fixture) {
    let players: Vec<(String, i64)> = (1..=12)
        .map(|i| (format!("p{i:02}"), 1000 + i * 10))
        .collect();
    let seeded: Vec<(&str, i64, i64, i64)> = players
        .iter()
        .map(|(id, rating)| (id.as_str(), 9, *rating, 3))
        .collect();
    f.seed(&seeded).await;
    // p12 is first with 1120, p01 last with 1010; p05 is eighth.
    let page = f.page(3, Some(("p05", 2))).await;
    assert_eq!(
        ids(&page.top),
        places(&[(1, "p12"), (2, "p11"), (3, "p10")])
    );
    assert_eq!(
        ids(&page.around),
        places(&[(6, "p07"), (7, "p06"), (8, "p05"), (9, "p04"), (10, "p03")])
    );
    let (place, me) = page.me.expect("p05 is on the ladder");
    assert_eq!((place, me.rating, me.games), (8, 1050, 3));
    assert_eq!(me.nickname, "nick p05");
    // At the top the neighbours are cut at first place.
    let page = f.page(0, Some(("p11", 3))).await;
    assert!(page.top.is_empty());
    assert_eq!(
        ids(&page.around),
        places(&[(1, "p12"), (2, "p11"), (3, "p10"), (4, "p09"), (5, "p08")])
    );
}

async fn equal_ratings_are_placed_the_same_way_by_every_ladder(f: Fixture) {
    f.seed(&[
        ("amy", 9, 1500, 1),
        ("bob", 9, 1500, 2),
        ("cat", 9, 1600, 1),
        ("dan", 9, 1500, 1),
    ])
    .await;
    let page = f.page(10, Some(("bob", 1))).await;
    assert_eq!(
        ids(&page.top),
        places(&[(1, "cat"), (2, "dan"), (3, "bob"), (4, "amy")])
    );
    assert_eq!(
        ids(&page.around),
        places(&[(2, "dan"), (3, "bob"), (4, "amy")])
    );
}

async fn a_player_without_a_ranked_game_has_no_place(f: Fixture) {
    f.seed(&[
        ("played", 9, 1500, 2),
        ("unplayed", 9, 1900, 0),
        ("elsewhere", 13, 1700, 5),
    ])
    .await;
    for someone in ["unplayed", "elsewhere", "nobody"] {
        let page = f.page(10, Some((someone, 2))).await;
        assert!(page.me.is_none(), "{someone}");
        assert!(page.around.is_empty(), "{someone}");
        assert_eq!(ids(&page.top), places(&[(1, "played")]), "{someone}");
    }
}

async fn a_page_longer_than_the_ladder_gives_what_there_is(f: Fixture) {
    let empty = f.page(100, Some(("nobody", 2))).await;
    assert!(empty.top.is_empty() && empty.around.is_empty() && empty.me.is_none());
    f.seed(&[("a", 9, 1400, 1), ("b", 9, 1450, 1)]).await;
    let page = f.page(100, Some(("a", 10))).await;
    assert_eq!(ids(&page.top), places(&[(1, "b"), (2, "a")]));
    assert_eq!(ids(&page.around), places(&[(1, "b"), (2, "a")]));
}

async fn an_applied_game_moves_its_players_on_the_ladder(f: Fixture) {
    f.seed(&[
        ("low", 9, 1400, 5),
        ("high", 9, 1600, 5),
        ("mid", 9, 1500, 5),
    ])
    .await;
    assert_eq!(
        ids(&f.page(3, None).await.top),
        places(&[(1, "high"), (2, "mid"), (3, "low")])
    );
    // "low" beats "high" five times: 1400 and 1600 pass each other.
    for n in 0..5 {
        let game = RankedGame {
            game_id: format!("g{n}"),
            board_size: 9,
            finished_at: n,
            sides: [
                Side {
                    user_id: "low".to_owned(),
                    nickname: "low".to_owned(),
                    outcome: Outcome::Win,
                },
                Side {
                    user_id: "high".to_owned(),
                    nickname: "high".to_owned(),
                    outcome: Outcome::Loss,
                },
            ],
        };
        let standings = store::apply(&f.db, &game, n)
            .await
            .expect("applied")
            .expect("a new game");
        f.ladder.record(9, &standings).await;
    }
    let page = f.page(3, Some(("low", 0))).await;
    assert_eq!(ids(&page.top)[0], (1, "low".to_owned()), "{:?}", page.top);
    assert_eq!(
        page.top.last().map(|(_, s)| s.user_id.as_str()),
        Some("high")
    );
    assert_eq!(page.me.map(|(p, s)| (p, s.games)), Some((1, 10)));
}

async fn a_ladder_that_redis_lost_is_read_whole_again(f: Fixture) {
    f.seed(&[("a", 9, 1400, 1), ("b", 9, 1450, 1), ("c", 9, 1500, 1)])
        .await;
    let before = ids(&f.page(10, Some(("a", 1))).await.top);
    assert_eq!(before, places(&[(1, "c"), (2, "b"), (3, "a")]));
    if let Some((conn, prefix)) = &f.ladder.redis {
        let mut conn = conn.clone();
        // Lost, then one player put back before anyone read: the set is
        // not empty, but it is not the ladder either.
        let key = ladder_key(prefix, 9);
        let _: () = redis::pipe()
            .cmd("DEL")
            .arg(&key)
            .cmd("ZADD")
            .arg(&key)
            .arg(1400)
            .arg("a")
            .query_async(&mut conn)
            .await
            .expect("Redis");
    }
    let page = f.page(10, Some(("a", 1))).await;
    assert_eq!(ids(&page.top), before);
    assert_eq!(ids(&page.around), places(&[(2, "b"), (3, "a")]));
}
