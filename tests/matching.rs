//! Finding an opponent, end to end over gRPC: the queue, the computer after
//! a wait, cancelling, friend codes, rematches; in one process with the
//! in-memory queue, and across two matchmakers and two gateways on Redis.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use support::{Player, embedded, embedded_with, sign_in, sqlite_memory};
use tonic::Code;
use ttakji_platform::bus::Bus;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

fn matches(p: &Player) -> MatchServiceClient<tonic::transport::Channel> {
    // The games client's channel reaches the same gateway.
    MatchServiceClient::new(p.channel.clone())
}

/// Queues and follows the stream to its end; returns every ticket seen.
async fn queue(p: &Player) -> Vec<pb::Ticket> {
    let mut stream = matches(p)
        .find_match(p.req(pb::FindMatchRequest {
            board_size: 9,
            ranked: false,
            ruleset: String::new(),
        }))
        .await
        .expect("queued")
        .into_inner();
    let mut seen = Vec::new();
    while let Some(message) = tokio::time::timeout(Duration::from_secs(30), stream.message())
        .await
        .expect("the queue answers")
        .expect("stream")
    {
        seen.push(message.ticket.expect("ticket"));
    }
    seen
}

fn matched(tickets: &[pb::Ticket]) -> &pb::Ticket {
    let last = tickets.last().expect("at least one ticket");
    assert_eq!(
        last.state,
        pb::TicketState::Matched as i32,
        "ended as {last:?}"
    );
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_in_the_queue_are_matched_with_each_other() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let (a, b) = (sign_in(&url, "ahn").await, sign_in(&url, "baek").await);
    let (ta, tb) = tokio::join!(queue(&a), queue(&b));
    let (ma, mb) = (matched(&ta), matched(&tb));
    assert_eq!(ma.game_id, mb.game_id);
    assert_ne!(ma.color, mb.color);
    assert_eq!(
        ma.opponent.as_ref().map(|o| o.user_id.as_str()),
        Some(b.user_id.as_str())
    );
    assert_eq!(
        mb.opponent.as_ref().map(|o| o.nickname.as_str()),
        Some("ahn")
    );
    let game = a.game(&ma.game_id).await;
    assert_eq!(
        game.clock.map(|c| c.seconds_per_move),
        Some(30),
        "games between people have the clock"
    );
    let seats = [
        game.black.unwrap_or_default().user_id,
        game.white.unwrap_or_default().user_id,
    ];
    assert!(seats.contains(&a.user_id) && seats.contains(&b.user_id));
}

/// The pairing loop's games are made in batches: one call, one commit. Each
/// game of a batch is answered on its own, in order; a bad one is refused
/// alone, and a batch repeated after a lost answer makes only what is new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_games_is_made_together_and_each_is_answered_on_its_own() {
    use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let mut authority =
        AuthorityServiceClient::new(support::internal(&format!("http://{}", service.authority)));
    let person = |user: &str| internal::Seat {
        user_id: user.to_owned(),
        nickname: user.to_owned(),
        ..Default::default()
    };
    let computer = internal::Seat {
        ai_level: pb::AiLevel::Easy as i32,
        ai_engine: pb::AiEngine::Server as i32,
        ..Default::default()
    };
    let game =
        |id: &str, black: internal::Seat, white: internal::Seat| internal::CreateGameRequest {
            board_size: 9,
            black: Some(black),
            white: Some(white),
            seconds_per_move: 30,
            game_id: id.to_owned(),
            ..Default::default()
        };
    let ids: Vec<String> = (1..=5).map(|n| format!("{n:032x}")).collect();
    let asked = vec![
        game(&ids[0], person("ahn"), person("baek")),
        game(&ids[1], person("cho"), person("cho")),
        game(&ids[2], computer.clone(), person("choi")),
        game(&ids[0], person("do"), person("eom")),
        game("", person("gang"), person("han")),
    ];
    let made = authority
        .create_games(internal::CreateGamesRequest { games: asked })
        .await
        .expect("the batch is answered")
        .into_inner()
        .games;
    let codes: Vec<Code> = made.iter().map(|g| Code::from(g.code)).collect();
    assert_eq!(
        codes,
        [
            Code::Ok,
            Code::InvalidArgument,
            Code::Ok,
            Code::InvalidArgument,
            Code::InvalidArgument
        ],
        "{made:?}"
    );
    assert!(
        made[1].message.contains("both seats"),
        "{}",
        made[1].message
    );
    assert!(made[3].message.contains("twice"), "{}", made[3].message);
    for (answer, id) in [(&made[0], &ids[0]), (&made[2], &ids[2])] {
        let snapshot = answer.game.as_ref().expect("a made game's snapshot");
        assert_eq!(&snapshot.game_id, id);
        let stored = authority
            .get_game(internal::GetGameRequest {
                game_id: id.clone(),
                ..Default::default()
            })
            .await
            .expect("the game is stored")
            .into_inner()
            .game
            .expect("snapshot");
        assert_eq!(stored.status, pb::GameStatus::Playing as i32);
    }
    // The first game again, as a retry after a lost answer, and a new one:
    // the commit of the two fails on the first, so each is made alone.
    let again = authority
        .create_games(internal::CreateGamesRequest {
            games: vec![
                game(&ids[0], person("ahn"), person("baek")),
                game(&ids[4], person("gang"), person("han")),
            ],
        })
        .await
        .expect("the batch is answered")
        .into_inner()
        .games;
    let answered: Vec<(i32, Option<&str>)> = again
        .iter()
        .map(|g| (g.code, g.game.as_ref().map(|s| s.game_id.as_str())))
        .collect();
    assert_eq!(
        answered,
        [(0, Some(ids[0].as_str())), (0, Some(ids[4].as_str()))]
    );
    let first = again[0].game.as_ref().and_then(|s| s.black.as_ref());
    assert_eq!(
        first.map(|s| s.user_id.as_str()),
        Some("ahn"),
        "the game as first made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_with_nobody_around_plays_the_computer_after_the_wait() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let alone = sign_in(&url, "alone").await;
    let started = std::time::Instant::now();
    let tickets = queue(&alone).await;
    let m = matched(&tickets);
    assert!(
        started.elapsed() >= Duration::from_millis(1400),
        "matched before the wait"
    );
    assert!(
        tickets[0].position == 1 && tickets[0].waiting == 1,
        "{:?}",
        tickets[0]
    );
    let opponent = m.opponent.clone().expect("opponent");
    assert!(opponent.user_id.is_empty());
    // The levels are rated 1620, 1940 and 2250: a newcomer's 1200 is nearest Easy.
    assert_eq!(opponent.ai_level, pb::AiLevel::Easy as i32);
    let game = alone.game(&m.game_id).await;
    assert!(game.clock.is_none(), "no clock against the computer");
    let computer = if m.color == pb::Color::Black as i32 {
        game.white
    } else {
        game.black
    };
    assert_ne!(
        computer.map(|p| p.ai_level),
        Some(pb::AiLevel::Unspecified as i32),
        "the record says it is the computer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_leaves_the_queue_at_once_and_a_gone_player_is_dropped() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let a = sign_in(&url, "ahn").await;
    let mut stream = matches(&a)
        .find_match(a.req(pb::FindMatchRequest::default()))
        .await
        .expect("queued")
        .into_inner();
    let first = stream
        .message()
        .await
        .expect("stream")
        .and_then(|m| m.ticket)
        .expect("ticket");
    let cancelled = matches(&a)
        .cancel_match(a.req(pb::CancelMatchRequest {
            ticket_id: first.ticket_id.clone(),
        }))
        .await
        .expect("cancel")
        .into_inner()
        .ticket
        .expect("ticket");
    assert_eq!(cancelled.state, pb::TicketState::Cancelled as i32);
    let mut last = first.clone();
    while let Some(m) = tokio::time::timeout(Duration::from_secs(5), stream.message())
        .await
        .expect("stream ends")
        .expect("stream")
    {
        last = m.ticket.expect("ticket");
    }
    assert_eq!(
        last.state,
        pb::TicketState::Cancelled as i32,
        "nobody plays a cancelled ticket"
    );

    // A player who closes the stream is dropped after the grace (1.5 s here),
    // before the computer would be offered (2.5 s).
    let b = sign_in(&url, "baek").await;
    let mut stream = matches(&b)
        .find_match(b.req(pb::FindMatchRequest::default()))
        .await
        .expect("queued")
        .into_inner();
    let ticket = stream
        .message()
        .await
        .expect("stream")
        .and_then(|m| m.ticket)
        .expect("ticket");
    drop(stream);
    let mut mm =
        ttakji_proto::internal::v1::matchmaker_service_client::MatchmakerServiceClient::new(
            support::internal(&format!("http://{}", service.matchmaker)),
        );
    // Asking about a ticket does not keep it alive: only the player's own
    // stream does. Wait until the ticket leaves the queue.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let gone = loop {
        let t = mm
            .get_ticket(internal::GetTicketRequest {
                ticket_id: ticket.ticket_id.clone(),
                user_id: String::new(),
            })
            .await
            .expect("ticket")
            .into_inner()
            .ticket
            .expect("ticket");
        if t.state != pb::TicketState::Waiting as i32 || std::time::Instant::now() > deadline {
            break t;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(gone.state, pb::TicketState::Cancelled as i32, "{gone:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_friend_code_starts_one_game_and_works_once() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let (maker, friend, other) = (
        sign_in(&url, "maker").await,
        sign_in(&url, "friend").await,
        sign_in(&url, "other").await,
    );
    let mut stream = matches(&maker)
        .create_challenge(maker.req(pb::CreateChallengeRequest {
            board_size: 9,
            ruleset: String::new(),
            rules: None,
        }))
        .await
        .expect("challenge")
        .into_inner();
    let challenge = stream
        .message()
        .await
        .expect("stream")
        .and_then(|m| m.challenge)
        .expect("challenge");
    assert_eq!(challenge.code.len(), 6);
    assert!(challenge.link.ends_with(&challenge.code));
    let own = matches(&maker)
        .accept_challenge(maker.req(pb::AcceptChallengeRequest {
            code: challenge.code.clone(),
        }))
        .await
        .expect_err("own code");
    assert_eq!(own.code(), Code::FailedPrecondition);

    let accept = |p: &Player| {
        let p = p.clone();
        let code = challenge.code.to_lowercase();
        async move {
            matches(&p)
                .accept_challenge(p.req(pb::AcceptChallengeRequest { code }))
                .await
        }
    };
    let (first, second) = tokio::join!(accept(&friend), accept(&other));
    let winners: Vec<_> = [&first, &second]
        .into_iter()
        .filter(|r| r.is_ok())
        .collect();
    assert_eq!(winners.len(), 1, "a code works once: {first:?} {second:?}");
    let loser = [first, second]
        .into_iter()
        .find_map(Result::err)
        .expect("one refused");
    assert_eq!(loser.code(), Code::FailedPrecondition);

    let mut last = challenge;
    while let Some(m) = tokio::time::timeout(Duration::from_secs(5), stream.message())
        .await
        .expect("the maker hears")
        .expect("stream")
    {
        last = m.challenge.expect("challenge");
    }
    assert!(!last.game_id.is_empty(), "the maker learns the game");
    let game = maker.game(&last.game_id).await;
    let seats = [
        game.black.unwrap_or_default().user_id,
        game.white.unwrap_or_default().user_id,
    ];
    assert!(seats.contains(&maker.user_id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rematch_both_agree_to_starts_with_colours_swapped() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let (a, b) = (sign_in(&url, "ahn").await, sign_in(&url, "baek").await);
    let (ta, _) = tokio::join!(queue(&a), queue(&b));
    let old = a.game(&matched(&ta).game_id).await;
    a.games
        .clone()
        .resign(a.req(pb::ResignRequest {
            game_id: old.game_id.clone(),
            ..Default::default()
        }))
        .await
        .expect("resign");
    let (ra, rb) = tokio::join!(a.rematch(&old.game_id), b.rematch(&old.game_id));
    assert!(!ra.new_game_id.is_empty());
    assert_eq!(ra.new_game_id, rb.new_game_id, "one new game");
    let new = a.game(&ra.new_game_id).await;
    assert_eq!(new.black.map(|p| p.user_id), old.white.map(|p| p.user_id));
    assert_eq!(new.white.map(|p| p.user_id), old.black.map(|p| p.user_id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rematch_offer_waiting_for_the_opponent_is_told_only_what_changes() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let (a, b) = (sign_in(&url, "ahn").await, sign_in(&url, "baek").await);
    let (ta, _) = tokio::join!(queue(&a), queue(&b));
    let old = matched(&ta).game_id.clone();
    a.games
        .clone()
        .resign(a.req(pb::ResignRequest {
            game_id: old.clone(),
            ..Default::default()
        }))
        .await
        .expect("resign");
    let mut asker = matches(&a)
        .rematch(a.req(pb::RematchRequest {
            game_id: old.clone(),
        }))
        .await
        .expect("rematch")
        .into_inner();
    // Three seconds alone: the offer once, not a message per poll (nor
    // thousands, agreeing again on its own notices).
    let mut heard = 0;
    let until = tokio::time::Instant::now() + Duration::from_secs(3);
    while let Ok(message) = tokio::time::timeout_at(until, asker.message()).await {
        message.expect("stream").expect("open");
        heard += 1;
    }
    assert!(
        (1..=2).contains(&heard),
        "{heard} messages while waiting alone"
    );
    // The opponent agrees: one new game, and the asker's stream says so.
    let agreed = matches(&b)
        .rematch(b.req(pb::RematchRequest { game_id: old }))
        .await
        .expect("rematch")
        .into_inner();
    drop(agreed);
    let mut last = pb::RematchResponse::default();
    while let Some(m) = tokio::time::timeout(Duration::from_secs(10), asker.message())
        .await
        .expect("answers")
        .expect("stream")
    {
        last = m;
    }
    assert!(
        !last.new_game_id.is_empty(),
        "the asker learns the new game"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_players_across_two_matchmakers_and_two_gateways_are_each_matched_once() {
    let namespace = format!("ttakji-test:{}:", uuid::Uuid::new_v4().simple());
    let db = sqlite_memory().await;
    let (trigger, shutdown) = ttakji_platform::shutdown::channel();
    let bus = Bus::redis(support::redis_url(), shutdown.clone())
        .await
        .expect("redis");
    let tickets = ttakji_matchmaker::Tickets::redis_in(support::redis_url(), &namespace)
        .await
        .expect("redis");
    let one = embedded_with(db.clone(), bus.clone(), tickets).await;
    // A second matchmaker and gateway on the same Redis and authority.
    let local = "127.0.0.1:0".parse().expect("addr");
    let second_mm = ttakji_matchmaker::App::build(
        support::quick_matching(local, format!("http://{}", one.authority)),
        ttakji_matchmaker::Tickets::redis_in(support::redis_url(), &namespace)
            .await
            .expect("redis"),
        bus.clone(),
        shutdown.clone(),
    )
    .await
    .expect("matchmaker");
    let second_gw = ttakji_gateway::App::build(
        ttakji_gateway::Config {
            listen: local,
            metrics_listen: None,
            service_key: Some(support::service_key()),
            authority_url: format!("http://{}", one.authority),
            matchmaker_url: format!("http://{}", second_mm.addr()),
            ratings_url: format!("http://{}", one.ratings),
            token_keys: support::keys(),
            public: ttakji_gateway::Public::exempting(&["127.0.0.1"]),
        },
        db,
        bus,
        shutdown,
    )
    .await
    .expect("gateway");
    let urls = [
        format!("http://{}", one.gateway),
        format!("http://{}", second_gw.addr()),
    ];
    let tasks = trigger.subscribe();
    tasks.spawn(second_mm.run_until_stopped());
    tasks.spawn(second_gw.run_until_stopped());

    let mut players = Vec::new();
    for i in 0..200 {
        players.push(sign_in(&urls[i % 2], &format!("p{i}")).await);
    }
    let mut queued = tokio::task::JoinSet::new();
    for p in players.clone() {
        queued.spawn(async move {
            let tickets = queue(&p).await;
            (p.user_id.clone(), matched(&tickets).clone())
        });
    }
    let mut by_game: HashMap<String, Vec<String>> = HashMap::new();
    let mut seen_users = Vec::new();
    while let Some(done) = queued.join_next().await {
        let (user, ticket) = done.expect("player task");
        seen_users.push(user.clone());
        by_game
            .entry(ticket.game_id.clone())
            .or_default()
            .push(user);
    }
    seen_users.sort();
    seen_users.dedup();
    assert_eq!(seen_users.len(), 200, "everyone matched once");
    for (game_id, users) in &by_game {
        let game = players[0].game(game_id).await;
        let seats: Vec<String> = [game.black, game.white]
            .into_iter()
            .flatten()
            .map(|p| p.user_id)
            .filter(|u| !u.is_empty())
            .collect();
        let mut expected = users.clone();
        expected.sort();
        let mut seats = seats;
        seats.sort();
        assert_eq!(
            seats, expected,
            "game {game_id} seats the players told of it"
        );
    }
    let people_games = by_game.values().filter(|u| u.len() == 2).count();
    assert!(
        people_games >= 95,
        "{people_games} games between people of 100"
    );
    trigger.trigger();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_the_pairing_never_leaves_half_a_game() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    for round in 0u64..15 {
        let (a, b) = (
            sign_in(&url, &format!("a{round}")).await,
            sign_in(&url, &format!("b{round}")).await,
        );
        let mut sa = matches(&a)
            .find_match(a.req(pb::FindMatchRequest::default()))
            .await
            .expect("queued")
            .into_inner();
        let ta = sa
            .message()
            .await
            .expect("stream")
            .and_then(|m| m.ticket)
            .expect("ticket");
        let b_queue = tokio::spawn({
            let b = b.clone();
            async move { queue(&b).await }
        });
        tokio::time::sleep(Duration::from_millis(round * 3)).await;
        let cancel = matches(&a)
            .cancel_match(a.req(pb::CancelMatchRequest {
                ticket_id: ta.ticket_id.clone(),
            }))
            .await;
        let mut last_a = ta;
        while let Some(m) = tokio::time::timeout(Duration::from_secs(10), sa.message())
            .await
            .expect("a's stream ends")
            .expect("stream")
        {
            last_a = m.ticket.expect("ticket");
        }
        let tb = b_queue.await.expect("b");
        let mb = matched(&tb);
        match cancel {
            Ok(_) => {
                assert_eq!(last_a.state, pb::TicketState::Cancelled as i32);
                assert_ne!(
                    mb.opponent.as_ref().map(|o| o.user_id.clone()),
                    Some(a.user_id.clone()),
                    "b was matched with a cancelled player"
                );
            }
            Err(status) => {
                assert_eq!(status.code(), Code::FailedPrecondition);
                assert_eq!(last_a.state, pb::TicketState::Matched as i32);
                assert_eq!(
                    last_a.game_id, mb.game_id,
                    "both players are in the one game made"
                );
                a.game(&last_a.game_id).await;
            }
        }
    }
}
