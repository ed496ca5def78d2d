//! The gateway's rate limits over real gRPC: a flood of sign-ins from one
//! address and a flood of moves from one address's accounts are refused
//! RESOURCE_EXHAUSTED with when to retry, while a player on another address
//! plays on untouched. The tests' gateway exempts 127.0.0.1 only; these
//! clients connect from 127.0.0.2 (the flood) and 127.0.0.3 (the player).

mod support;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use support::{channel_from, embedded, sign_in_on, sqlite_memory};
use ttakji_platform::bus::Bus;
use ttakji_platform::refusal::RETRY_AFTER_HEADER;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;

const FLOOD: &str = "127.0.0.2";
const PLAYER: &str = "127.0.0.3";

fn ip(s: &str) -> IpAddr {
    s.parse().expect("an address")
}

/// The retry hint of a RESOURCE_EXHAUSTED answer, in milliseconds.
fn retry_hint(status: &tonic::Status) -> u64 {
    assert_eq!(
        status.code(),
        tonic::Code::ResourceExhausted,
        "{}",
        status.message()
    );
    assert!(
        status.message().contains("try again in"),
        "{}",
        status.message()
    );
    assert_eq!(support::documented_reason(status), "RATE_LIMITED");
    status
        .metadata()
        .get(RETRY_AFTER_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("a retry hint in milliseconds")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_sign_ins_from_one_address_make_only_its_burst_of_accounts() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let flood = channel_from(&url, ip(FLOOD)).await;
    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..1000 {
        let mut auth = AuthServiceClient::new(flood.clone());
        calls.spawn(async move {
            auth.sign_in_guest(pb::SignInGuestRequest {
                nickname: format!("bot{n}"),
            })
            .await
        });
    }
    let answers = calls.join_all().await;
    let took = started.elapsed();
    let accepted = answers.iter().filter(|a| a.is_ok()).count();
    let mut hints = Vec::new();
    for answer in &answers {
        if let Err(status) = answer {
            hints.push(retry_hint(status));
        }
    }
    eprintln!(
        "sign-in flood: 1000 in {took:?}, {accepted} accepted, retry hints {:?}..{:?} ms",
        hints.iter().min(),
        hints.iter().max()
    );
    // The burst, and one more for each 3 s the flood took.
    let allowed = 20 + usize::try_from(took.as_secs() / 3).unwrap_or(0) + 1;
    assert!(
        (20..=allowed).contains(&accepted),
        "{accepted} of 1000 sign-ins accepted"
    );
    assert!(
        hints.iter().all(|h| (1..=3000).contains(h)),
        "a sign-in comes back within 3 s"
    );
    // Another address signs in at once.
    let player = sign_in_on(channel_from(&url, ip(PLAYER)).await, "kim").await;
    assert!(!player.user_id.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_moves_is_refused_while_a_player_on_another_address_plays_on() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let flood_channel = channel_from(&url, ip(FLOOD)).await;
    let mut flooders = Vec::new();
    for n in 0..10 {
        flooders.push(sign_in_on(flood_channel.clone(), &format!("flood{n}")).await);
    }
    let player_channel = channel_from(&url, ip(PLAYER)).await;
    let black = sign_in_on(player_channel.clone(), "kim").await;
    let white = sign_in_on(player_channel, "lee").await;
    let game = support::game_between(service.authority, &black, &white, 60, false)
        .await
        .game_id;
    let flood_game =
        support::game_between(service.authority, &flooders[0], &flooders[1], 60, false)
            .await
            .game_id;

    // Ten accounts each send 100 moves a second for 3 s: ten times an
    // account's budget, and ten times the address's.
    let flood_for = Duration::from_secs(3);
    let floods = flooders.into_iter().map(|flooder| {
        let game_id = flood_game.clone();
        tokio::spawn(async move {
            let (mut passed, mut refused) = (0u32, 0u32);
            let mut every = tokio::time::interval(Duration::from_millis(10));
            let until = Instant::now() + flood_for;
            while Instant::now() < until {
                every.tick().await;
                match flooder.play(&game_id, 999, "E5").await {
                    Err(status) if status.code() == tonic::Code::ResourceExhausted => {
                        retry_hint(&status);
                        refused += 1;
                    }
                    _ => passed += 1,
                }
            }
            (passed, refused)
        })
    });
    let floods: Vec<_> = floods.collect();

    // Meanwhile the two players play a move every 100 ms each.
    let points = ["C3", "G7", "C7", "G3", "E5", "E3", "E7", "C5", "G5", "D4"];
    let mut slowest = Duration::ZERO;
    for (n, point) in points.iter().enumerate() {
        let mover = if n % 2 == 0 { &black } else { &white };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let sent = Instant::now();
        mover
            .play(&game, u32::try_from(n + 1).expect("small"), point)
            .await
            .unwrap_or_else(|s| panic!("move {} refused during the flood: {s:?}", n + 1));
        slowest = slowest.max(sent.elapsed());
    }
    let (mut passed, mut refused) = (0, 0);
    for flood in floods {
        let (p, r) = flood.await.expect("flood task");
        passed += p;
        refused += r;
    }
    eprintln!(
        "move flood: {passed} passed the limits, {refused} refused; the player's slowest move {slowest:?}"
    );
    // Each account: its burst of 30 and 10 a second after it.
    let most = 10 * (30 + 10 * (flood_for.as_secs() as u32 + 1));
    assert!(
        passed <= most,
        "{passed} flood moves passed (at most {most})"
    );
    // However fast this machine sent them, the flood went well over the
    // budget, and what went over was refused.
    assert!(
        passed + refused > most && refused > 0,
        "the flood sent only {} moves, too few to test the limits",
        passed + refused
    );
}
