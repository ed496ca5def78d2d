//! One suite for every store: each case states a promise of [`super::QueueStore`]
//! and runs against memory and against the tests' Redis (a fresh
//! namespace per test, its keys deleted afterwards, pass or fail).

use std::time::Duration;

use baduk::Color;
use baduk_ai::Level;

use super::Tickets;
use super::redis::testing::on_redis;
use super::store::{
    ChallengeRecord, Claim, Match, Opponent, Place, PoolKey, State, TableTerms, Take, Ticket,
};

macro_rules! contract {
    ($($case:ident),+ $(,)?) => {
        mod in_memory {
            $(
                #[tokio::test]
                async fn $case() {
                    super::$case(super::Tickets::memory()).await;
                }
            )+
        }
        mod on_redis {
            $(
                #[tokio::test]
                async fn $case() {
                    super::on_redis(|store| super::$case(super::Tickets::new(store))).await;
                }
            )+
        }
    };
}

contract!(
    a_queued_ticket_reads_back_as_queued,
    a_player_already_waiting_gets_their_first_ticket_back,
    a_player_being_paired_gets_the_claimed_ticket_back,
    a_player_may_queue_again_once_cancelled_or_matched,
    the_queue_is_longest_waiting_first_and_of_one_pool,
    touching_a_ticket_records_when_its_player_was_seen,
    cancelling_a_waiting_ticket_takes_it_out_of_the_queue,
    only_its_player_may_cancel_a_ticket,
    a_claimed_or_matched_ticket_cannot_be_cancelled,
    a_claim_takes_every_ticket_or_none,
    claims_made_together_are_each_all_or_none,
    two_claims_of_one_ticket_never_both_win,
    a_released_ticket_waits_again_in_its_old_place,
    a_finished_ticket_is_matched_with_what_its_player_is_told,
    claims_left_unfinished_are_found_after_the_cutoff,
    a_challenge_code_is_made_once,
    a_challenge_is_taken_once_and_never_by_its_maker,
    an_unused_challenge_expires_and_a_taken_one_outlives_its_expiry,
    a_rematch_counts_each_player_once,
    the_first_rematch_game_settled_stands,
);

fn pool(board_size: u32) -> PoolKey {
    PoolKey {
        board_size,
        ruleset: "ttakji".to_owned(),
        ranked: false,
    }
}

fn ticket(id: &str, user: &str, enqueued_ms: i64) -> Ticket {
    Ticket::waiting(
        id.to_owned(),
        user.to_owned(),
        format!("{user}-name"),
        1200,
        pool(9),
        enqueued_ms,
    )
}

/// Queues a fresh ticket, which must be stored under its own id.
async fn queued(store: &Tickets, t: Ticket) -> Ticket {
    assert_eq!(store.enqueue(&t).await.expect("enqueue"), t.id);
    t
}

/// Claims tickets of the 9×9 pool; true when the claim won.
async fn claim(store: &Tickets, ids: &[&str], game_id: &str, now_ms: i64) -> bool {
    let pool = pool(9);
    let claim = Claim {
        pool: &pool,
        ids,
        game_id,
        now_ms,
    };
    store.claim(claim).await.expect("claim")
}

async fn state(store: &Tickets, id: &str) -> State {
    store.get(id).await.expect("get").expect("ticket").state
}

async fn waiting_ids(store: &Tickets, pool: &PoolKey) -> Vec<String> {
    let waiting = store.waiting(pool).await.expect("waiting");
    waiting.into_iter().map(|t| t.id).collect()
}

fn told(color: Color, opponent: &str) -> Match {
    Match {
        color,
        opponent: Opponent {
            user_id: opponent.to_owned(),
            nickname: format!("{opponent}-name"),
            level: None,
        },
    }
}

fn challenge(code: &str, maker: &str, ttl: Duration) -> ChallengeRecord {
    ChallengeRecord {
        code: code.to_owned(),
        maker_id: maker.to_owned(),
        maker_name: format!("{maker}-name"),
        pool: pool(13),
        expires_ms: ttakji_platform::now_unix_ms()
            + i64::try_from(ttl.as_millis()).expect("short ttl"),
        game_id: None,
        // House rules that differ from every default, to be kept as made.
        terms: TableTerms {
            komi_half: Some(13),
            seconds_per_move: Some(0),
            keep_colors: true,
            stand_in: true,
        },
    }
}

const KEEP: Duration = Duration::from_secs(60);

async fn a_queued_ticket_reads_back_as_queued(store: Tickets) {
    let mut t = ticket("t1", "u1", 1_000);
    t.rating = 1_875;
    t.seen_ms = 1_500;
    let t = queued(&store, t).await;
    assert_eq!(store.get("t1").await.expect("get"), Some(t));
    assert_eq!(store.get("t2").await.expect("get"), None);
}

async fn a_player_already_waiting_gets_their_first_ticket_back(store: Tickets) {
    queued(&store, ticket("t1", "u1", 1_000)).await;
    let again = store
        .enqueue(&ticket("t2", "u1", 2_000))
        .await
        .expect("enqueue");
    assert_eq!(again, "t1");
    assert_eq!(store.get("t2").await.expect("get"), None, "nothing stored");
    assert_eq!(waiting_ids(&store, &pool(9)).await, ["t1"]);
}

async fn a_player_being_paired_gets_the_claimed_ticket_back(store: Tickets) {
    queued(&store, ticket("t1", "u1", 1_000)).await;
    assert!(claim(&store, &["t1"], "g1", 1_100).await);
    let again = store
        .enqueue(&ticket("t2", "u1", 2_000))
        .await
        .expect("enqueue");
    assert_eq!(again, "t1");
}

async fn a_player_may_queue_again_once_cancelled_or_matched(store: Tickets) {
    queued(&store, ticket("t1", "u1", 1_000)).await;
    store.cancel("t1", Some("u1")).await.expect("cancel");
    let t2 = queued(&store, ticket("t2", "u1", 2_000)).await;
    assert!(claim(&store, &["t2"], "g1", 2_100).await);
    store
        .finish(&t2, &told(Color::Black, "u9"))
        .await
        .expect("finish");
    queued(&store, ticket("t3", "u1", 3_000)).await;
    assert_eq!(waiting_ids(&store, &pool(9)).await, ["t3"]);
}

async fn the_queue_is_longest_waiting_first_and_of_one_pool(store: Tickets) {
    let a = queued(&store, ticket("a", "u1", 3_000)).await;
    let b = queued(&store, ticket("b", "u2", 1_000)).await;
    let c = queued(&store, ticket("c", "u3", 2_000)).await;
    let mut d = ticket("d", "u4", 500);
    d.pool = pool(19);
    let d = queued(&store, d).await;
    assert_eq!(waiting_ids(&store, &pool(9)).await, ["b", "c", "a"]);
    assert_eq!(waiting_ids(&store, &pool(19)).await, ["d"]);
    assert!(waiting_ids(&store, &pool(13)).await.is_empty());
    for (t, position) in [(&b, 1), (&c, 2), (&a, 3)] {
        let place = store.place(t).await.expect("place");
        assert_eq!(
            place,
            Place {
                position,
                waiting: 3
            },
            "{}",
            t.id
        );
    }
    assert_eq!(
        store.place(&d).await.expect("place"),
        Place {
            position: 1,
            waiting: 1
        }
    );
    let pools = store.pools().await.expect("pools");
    assert!(
        pools.contains(&pool(9)) && pools.contains(&pool(19)),
        "{pools:?}"
    );
    assert!(!pools.contains(&pool(13)), "{pools:?}");
}

async fn touching_a_ticket_records_when_its_player_was_seen(store: Tickets) {
    queued(&store, ticket("t1", "u1", 1_000)).await;
    store.touch("t1", 4_000).await.expect("touch");
    assert_eq!(
        store.get("t1").await.expect("get").map(|t| t.seen_ms),
        Some(4_000)
    );
    store.touch("nobody", 4_000).await.expect("touch");
    assert_eq!(store.get("nobody").await.expect("get"), None);
}

async fn cancelling_a_waiting_ticket_takes_it_out_of_the_queue(store: Tickets) {
    let t = queued(&store, ticket("t1", "u1", 1_000)).await;
    queued(&store, ticket("t2", "u2", 2_000)).await;
    assert_eq!(
        store.cancel("t1", Some("u1")).await.expect("cancel"),
        Some(State::Waiting)
    );
    assert_eq!(state(&store, "t1").await, State::Cancelled);
    assert_eq!(waiting_ids(&store, &pool(9)).await, ["t2"]);
    assert_eq!(
        store.place(&t).await.expect("place"),
        Place {
            position: 0,
            waiting: 1
        }
    );
    assert_eq!(
        store.cancel("t1", Some("u1")).await.expect("cancel"),
        Some(State::Cancelled),
        "a second cancel says it was already cancelled"
    );
}

async fn only_its_player_may_cancel_a_ticket(store: Tickets) {
    queued(&store, ticket("t1", "u1", 1_000)).await;
    assert_eq!(store.cancel("t1", Some("u2")).await.expect("cancel"), None);
    assert_eq!(state(&store, "t1").await, State::Waiting);
    assert_eq!(store.cancel("nobody", None).await.expect("cancel"), None);
    // The matchmaker itself (dropping a ticket) names no player.
    assert_eq!(
        store.cancel("t1", None).await.expect("cancel"),
        Some(State::Waiting)
    );
    assert_eq!(state(&store, "t1").await, State::Cancelled);
}

async fn a_claimed_or_matched_ticket_cannot_be_cancelled(store: Tickets) {
    let a = queued(&store, ticket("a", "u1", 1_000)).await;
    queued(&store, ticket("b", "u2", 1_000)).await;
    assert!(claim(&store, &["a", "b"], "g1", 1_100).await);
    assert_eq!(
        store.cancel("a", Some("u1")).await.expect("cancel"),
        Some(State::Pairing)
    );
    assert_eq!(state(&store, "a").await, State::Pairing);
    store
        .finish(&a, &told(Color::White, "u2"))
        .await
        .expect("finish");
    assert_eq!(
        store.cancel("a", Some("u1")).await.expect("cancel"),
        Some(State::Matched)
    );
    assert_eq!(state(&store, "a").await, State::Matched);
}

async fn a_claim_takes_every_ticket_or_none(store: Tickets) {
    queued(&store, ticket("a", "u1", 1_000)).await;
    queued(&store, ticket("b", "u2", 2_000)).await;
    queued(&store, ticket("c", "u3", 3_000)).await;
    let mut d = ticket("d", "u4", 500);
    d.pool = pool(19);
    queued(&store, d).await;
    store.cancel("b", None).await.expect("cancel");
    let p = pool(9);
    assert!(!claim(&store, &["a", "b"], "g1", 5_000).await);
    assert!(
        !claim(&store, &["a", "d"], "g1", 5_000).await,
        "another pool"
    );
    assert!(!claim(&store, &["a", "zz"], "g1", 5_000).await, "unknown");
    assert_eq!(state(&store, "a").await, State::Waiting);
    assert_eq!(waiting_ids(&store, &p).await, ["a", "c"]);
    assert!(claim(&store, &["a", "c"], "g1", 5_000).await);
    for id in ["a", "c"] {
        let t = store.get(id).await.expect("get").expect("ticket");
        assert_eq!(
            (t.state, t.game_id.as_deref(), t.claimed_ms),
            (State::Pairing, Some("g1"), 5_000)
        );
    }
    assert!(waiting_ids(&store, &p).await.is_empty());
    assert!(!claim(&store, &["a"], "g2", 5_001).await, "claimed once");
}

async fn claims_made_together_are_each_all_or_none(store: Tickets) {
    for (id, at) in [
        ("a", 1_000),
        ("b", 2_000),
        ("c", 3_000),
        ("d", 4_000),
        ("e", 5_000),
    ] {
        queued(&store, ticket(id, &format!("u-{id}"), at)).await;
    }
    store.cancel("c", None).await.expect("cancel");
    let p = pool(9);
    let claims = [
        (&["a", "b"][..], "g1"),
        (&["c", "d"][..], "g2"),
        (&["d"][..], "g3"),
        (&["b", "e"][..], "g4"),
    ]
    .map(|(ids, game_id)| Claim {
        pool: &p,
        ids,
        game_id,
        now_ms: 6_000,
    });
    let won = store.claim_all(&claims).await.expect("claims");
    assert_eq!(won, [true, false, true, false]);
    for (id, game) in [("a", "g1"), ("b", "g1"), ("d", "g3")] {
        let t = store.get(id).await.expect("get").expect("ticket");
        assert_eq!(
            (t.state, t.game_id.as_deref()),
            (State::Pairing, Some(game))
        );
    }
    assert_eq!(state(&store, "c").await, State::Cancelled);
    assert_eq!(waiting_ids(&store, &p).await, ["e"]);
    let stale: Vec<String> = store
        .stale_claims(&p, 7_000)
        .await
        .expect("claims")
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(
        stale.len(),
        3,
        "each claimed ticket is in the claims: {stale:?}"
    );
    assert!(store.claim_all(&[]).await.expect("none").is_empty());
}

async fn two_claims_of_one_ticket_never_both_win(store: Tickets) {
    for id in ["a", "b", "c"] {
        queued(&store, ticket(id, &format!("u-{id}"), 1_000)).await;
    }
    let (first, second) = tokio::join!(
        claim(&store, &["a", "b"], "g1", 2_000),
        claim(&store, &["b", "c"], "g2", 2_000),
    );
    let wins = [first, second];
    assert_eq!(wins.iter().filter(|w| **w).count(), 1, "{wins:?}");
    let b = store.get("b").await.expect("get").expect("ticket");
    let winner = if wins[0] { "g1" } else { "g2" };
    assert_eq!(b.game_id.as_deref(), Some(winner));
}

async fn a_released_ticket_waits_again_in_its_old_place(store: Tickets) {
    let a = queued(&store, ticket("a", "u1", 1_000)).await;
    queued(&store, ticket("b", "u2", 2_000)).await;
    queued(&store, ticket("c", "u3", 3_000)).await;
    let p = pool(9);
    assert!(claim(&store, &["a", "b"], "g1", 4_000).await);
    store.release(&p, &["a", "b", "c"]).await.expect("release");
    assert_eq!(waiting_ids(&store, &p).await, ["a", "b", "c"]);
    let back = store.get("a").await.expect("get").expect("ticket");
    assert_eq!((back.state, back.game_id), (State::Waiting, None));
    assert_eq!(store.place(&a).await.expect("place").position, 1);
    assert!(
        store
            .stale_claims(&p, i64::MAX)
            .await
            .expect("stale")
            .is_empty()
    );
    assert!(claim(&store, &["a", "b"], "g2", 5_000).await);
}

async fn a_finished_ticket_is_matched_with_what_its_player_is_told(store: Tickets) {
    let a = queued(&store, ticket("a", "u1", 1_000)).await;
    let b = queued(&store, ticket("b", "u2", 2_000)).await;
    assert!(claim(&store, &["a"], "g1", 3_000).await);
    let computer = Match {
        color: Color::White,
        opponent: Opponent {
            user_id: String::new(),
            nickname: "Normal AI".to_owned(),
            level: Some(Level::Normal),
        },
    };
    store.finish(&a, &computer).await.expect("finish");
    let done = store.get("a").await.expect("get").expect("ticket");
    assert_eq!(done.state, State::Matched);
    assert_eq!(done.game_id.as_deref(), Some("g1"));
    assert_eq!(done.matched, Some(computer));
    // Only a claimed ticket is finished.
    store
        .finish(&b, &told(Color::Black, "u1"))
        .await
        .expect("finish");
    let b = store.get("b").await.expect("get").expect("ticket");
    assert_eq!((b.state, b.matched), (State::Waiting, None));
}

async fn claims_left_unfinished_are_found_after_the_cutoff(store: Tickets) {
    let a = queued(&store, ticket("a", "u1", 1_000)).await;
    queued(&store, ticket("b", "u2", 1_000)).await;
    let p = pool(9);
    assert!(claim(&store, &["a", "b"], "g1", 5_000).await);
    let stale = |before| {
        let store = store.clone();
        let p = p.clone();
        async move {
            let mut ids: Vec<String> = store
                .stale_claims(&p, before)
                .await
                .expect("stale")
                .into_iter()
                .map(|t| t.id)
                .collect();
            ids.sort();
            ids
        }
    };
    assert!(
        stale(5_000).await.is_empty(),
        "claimed at the cutoff is not stale"
    );
    assert_eq!(stale(5_001).await, ["a", "b"]);
    assert!(
        store
            .stale_claims(&pool(19), 5_001)
            .await
            .expect("stale")
            .is_empty()
    );
    store
        .finish(&a, &told(Color::Black, "u2"))
        .await
        .expect("finish");
    assert_eq!(stale(5_001).await, ["b"]);
    store.release(&p, &["b"]).await.expect("release");
    assert!(stale(5_001).await.is_empty());
}

async fn a_challenge_code_is_made_once(store: Tickets) {
    let c = challenge("ABC234", "u1", KEEP);
    assert!(store.make_challenge(&c, KEEP).await.expect("make"));
    let clash = challenge("ABC234", "u2", KEEP);
    assert!(!store.make_challenge(&clash, KEEP).await.expect("make"));
    assert_eq!(store.challenge("ABC234").await.expect("read"), Some(c));
    assert_eq!(store.challenge("ZZZ999").await.expect("read"), None);
}

async fn a_challenge_is_taken_once_and_never_by_its_maker(store: Tickets) {
    let c = challenge("ABC234", "maker", KEEP);
    assert!(store.make_challenge(&c, KEEP).await.expect("make"));
    let take = |joiner: &'static str, game: &'static str| {
        let store = store.clone();
        async move {
            store
                .accept_challenge("ABC234", joiner, game, KEEP)
                .await
                .expect("take")
        }
    };
    assert_eq!(take("maker", "g0").await, Take::Own);
    let missing = store
        .accept_challenge("ZZZ999", "u1", "g0", KEEP)
        .await
        .expect("take");
    assert_eq!(missing, Take::Missing);
    let (first, second) = tokio::join!(take("u1", "g1"), take("u2", "g2"));
    let (taken, other) = match (&first, &second) {
        (Take::Taken(r), other) | (other, Take::Taken(r)) => (r.clone(), other.clone()),
        _ => panic!("nobody took it: {first:?} {second:?}"),
    };
    assert_eq!(other, Take::Used);
    assert!(
        matches!(taken.game_id.as_deref(), Some("g1" | "g2")),
        "{taken:?}"
    );
    assert_eq!(
        taken,
        ChallengeRecord {
            game_id: taken.game_id.clone(),
            ..c
        }
    );
    let stored = store.challenge("ABC234").await.expect("read");
    assert_eq!(stored, Some(taken));
}

async fn an_unused_challenge_expires_and_a_taken_one_outlives_its_expiry(store: Tickets) {
    let ttl = Duration::from_millis(300);
    let unused = challenge("ABC234", "u1", ttl);
    let taken = challenge("DEF567", "u1", ttl);
    assert!(store.make_challenge(&unused, ttl).await.expect("make"));
    assert!(store.make_challenge(&taken, ttl).await.expect("make"));
    let joined = store
        .accept_challenge("DEF567", "u2", "g1", KEEP)
        .await
        .expect("take");
    assert!(matches!(joined, Take::Taken(_)), "{joined:?}");
    tokio::time::sleep(ttl + Duration::from_millis(200)).await;
    assert_eq!(store.challenge("ABC234").await.expect("read"), None);
    let late = store
        .accept_challenge("ABC234", "u2", "g2", KEEP)
        .await
        .expect("take");
    assert_eq!(late, Take::Missing);
    let kept = store
        .challenge("DEF567")
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(kept.game_id.as_deref(), Some("g1"));
    let again = challenge("ABC234", "u3", KEEP);
    assert!(
        store.make_challenge(&again, KEEP).await.expect("make"),
        "the code is free again"
    );
}

async fn a_rematch_counts_each_player_once(store: Tickets) {
    let agree = |user: &'static str| {
        let store = store.clone();
        async move {
            let mut agreed = store.agree_rematch("g1", user, KEEP).await.expect("agree");
            agreed.sort();
            agreed
        }
    };
    assert_eq!(agree("u1").await, ["u1"]);
    assert_eq!(agree("u1").await, ["u1"]);
    assert_eq!(agree("u2").await, ["u1", "u2"]);
    let other = store.agree_rematch("g2", "u3", KEEP).await.expect("agree");
    assert_eq!(other, ["u3"], "each game has its own agreement");
}

async fn the_first_rematch_game_settled_stands(store: Tickets) {
    assert_eq!(
        store
            .settle_rematch("g1", "n1", KEEP)
            .await
            .expect("settle"),
        "n1"
    );
    assert_eq!(
        store
            .settle_rematch("g1", "n2", KEEP)
            .await
            .expect("settle"),
        "n1"
    );
    assert_eq!(
        store
            .settle_rematch("g2", "n3", KEEP)
            .await
            .expect("settle"),
        "n3"
    );
}

#[tokio::test]
async fn the_single_process_always_holds_the_pairing_lease() {
    let store = Tickets::memory();
    for instance in ["a", "b"] {
        assert!(store.lease(&pool(9), instance, KEEP).await.expect("lease"));
    }
}
