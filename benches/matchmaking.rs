//! The matchmaker under load: how many tickets a second it accepts and
//! pairs, and how long after the second player's ticket both players hear
//! "match found", and how fast one instance pairs tickets already waiting.
//!
//! `cargo bench --bench matchmaking` runs authority (SQLite file, or
//! `TTAKJI_BENCH_DATABASE_URL=postgres://…`), one
//! matchmaker (tickets in the local Redis, under a fresh namespace) and a
//! gateway in this process over real sockets, with the product's pairing
//! tick (50 ms).

use std::time::{Duration, Instant};

use anyhow::Context as _;
use tonic::Request;
use ttakji::stack::{Stack, StackConfig};
use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::grpc::ServiceKey;
use ttakji_platform::shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::matchmaker_service_client::MatchmakerServiceClient;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

const REDIS: &str = "redis://127.0.0.1:6379";
const TICKETS: usize = 20_000;
const CONCURRENCY: usize = 64;
const PAIRS: usize = 200;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let (trigger, stop) = shutdown::channel();
    let dir = std::env::temp_dir().join(format!("ttakji-bench-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir)?;
    let db_url = std::env::var("TTAKJI_BENCH_DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}", dir.join("bench.db").display()));
    let db = Database::connect(&db_url).await?;
    println!("authority store {}", db.kind());
    let bus = Bus::redis(REDIS, stop.clone()).await?;
    let namespace = format!("ttakji-bench:{}:", uuid::Uuid::new_v4().simple());
    let key = ServiceKey::random();
    let mut config = StackConfig::local(TokenKeys::random(Duration::from_secs(3600)));
    config.service_key = Some(key.clone());
    // Nobody plays the computer here: every ticket waits for a person.
    config.matchmaker.rules.ai_after = Duration::from_secs(3600);
    config.matchmaker.rules.grace = Duration::from_secs(3600);
    config.gateway.public.limits = ttakji_gateway::limits::Settings::exempting(&["127.0.0.1"]);
    let stack = Stack::build(
        config,
        db,
        bus.clone(),
        ttakji_matchmaker::Tickets::redis_in(REDIS, &namespace).await?,
        stop.clone(),
    )
    .await?;
    let gateway_url = format!("http://{}", stack.gateway_addr());
    let matchmaker_url = format!("http://{}", stack.matchmaker_addr());
    let stack_authority = stack.authority_addr();
    tokio::spawn(stack.run_until_stopped());

    // 1. From the second player's ticket to both players' "match found".
    let gw = tonic::transport::Endpoint::from_shared(gateway_url)?
        .tcp_nodelay(true)
        .connect()
        .await?;
    let mut auth = AuthServiceClient::new(gw.clone());
    let mut latencies = Vec::with_capacity(PAIRS);
    for i in 0..PAIRS {
        let mut streams = Vec::new();
        // Arrive at a random point of the pairing tick, as players do.
        let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0]) % 50;
        tokio::time::sleep(Duration::from_millis(jitter)).await;
        let mut t0 = Instant::now();
        for side in 0..2 {
            let token = auth
                .sign_in_guest(pb::SignInGuestRequest {
                    nickname: format!("p{i}x{side}"),
                })
                .await?
                .into_inner()
                .access_token;
            let mut request = Request::new(pb::FindMatchRequest::default());
            request
                .metadata_mut()
                .insert("authorization", format!("Bearer {token}").parse()?);
            if side == 1 {
                t0 = Instant::now();
            }
            let mut stream = MatchServiceClient::new(gw.clone())
                .find_match(request)
                .await?
                .into_inner();
            // The first message is the ticket as queued.
            stream.message().await?;
            streams.push(stream);
        }
        for stream in &mut streams {
            loop {
                let t = stream
                    .message()
                    .await?
                    .and_then(|m| m.ticket)
                    .context("stream ended unmatched")?;
                if t.state == pb::TicketState::Matched as i32 {
                    break;
                }
            }
        }
        latencies.push(t0.elapsed());
    }
    latencies.sort();
    println!(
        "second ticket → both players' match found: n={PAIRS} median {:.1} ms, p99 {:.1} ms",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    );
    // 2. Tickets accepted and paired per second.
    let channel = ttakji_platform::grpc::client(&matchmaker_url, "matchmaker", Some(&key))?;
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for w in 0..CONCURRENCY {
        let mut client = MatchmakerServiceClient::new(channel.clone());
        workers.spawn(async move {
            let mut ids = Vec::new();
            for i in (w..TICKETS).step_by(CONCURRENCY) {
                let t = client
                    .find_match(internal::FindMatchRequest {
                        user_id: format!("bench{i}"),
                        nickname: format!("b{i}"),
                        rating: 1200 + (i % 400) as u32,
                        pool: Some(pb::Pool::default()),
                        ..internal::FindMatchRequest::default()
                    })
                    .await?
                    .into_inner()
                    .ticket
                    .context("ticket")?;
                ids.push((format!("bench{i}"), t.ticket_id));
            }
            anyhow::Ok(ids)
        });
    }
    let mut tickets = Vec::new();
    while let Some(done) = workers.join_next().await {
        tickets.extend(done??);
    }
    let accepted = started.elapsed();
    // Wait until every ticket is matched.
    let mut client = MatchmakerServiceClient::new(channel.clone());
    for (user, id) in &tickets {
        loop {
            let t = client
                .get_ticket(internal::GetTicketRequest {
                    ticket_id: id.clone(),
                    user_id: user.clone(),
                })
                .await?
                .into_inner()
                .ticket
                .context("ticket")?;
            if t.state == pb::TicketState::Matched as i32 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let paired = started.elapsed();
    println!(
        "{TICKETS} tickets from {CONCURRENCY} callers: accepted in {:.2} s ({:.0}/s), all paired in {:.2} s ({:.0}/s)",
        accepted.as_secs_f64(),
        TICKETS as f64 / accepted.as_secs_f64(),
        paired.as_secs_f64(),
        TICKETS as f64 / paired.as_secs_f64(),
    );

    // 3. Pairing alone: tickets already waiting in a queue of their own,
    //    paired by one matchmaker instance round after round, its games made
    //    at the stack's authority.
    let authority_url = format!("http://{}", stack_authority);
    let alone = format!("ttakji-bench:{}:", uuid::Uuid::new_v4().simple());
    let queue = ttakji_matchmaker::Tickets::redis_in(REDIS, &alone).await?;
    let pool = ttakji_matchmaker::tickets::PoolKey {
        board_size: 9,
        ruleset: "ttakji".to_owned(),
        ranked: false,
    };
    let now = ttakji_platform::now_unix_ms();
    let mut queuing = tokio::task::JoinSet::new();
    for w in 0..CONCURRENCY {
        let (queue, pool) = (queue.clone(), pool.clone());
        queuing.spawn(async move {
            for i in (w..TICKETS).step_by(CONCURRENCY) {
                let t = ttakji_matchmaker::tickets::Ticket::waiting(
                    format!("alone{i}"),
                    format!("alone{i}"),
                    format!("a{i}"),
                    1200 + (i % 400) as u32,
                    pool.clone(),
                    now,
                );
                queue.enqueue(&t).await?;
            }
            anyhow::Ok(())
        });
    }
    while let Some(done) = queuing.join_next().await {
        done??;
    }
    let mut rules = ttakji_matchmaker::Config::new("127.0.0.1:0".parse()?, authority_url.clone());
    rules.rules.ai_after = Duration::from_secs(3600);
    rules.rules.grace = Duration::from_secs(3600);
    let pairer = ttakji_matchmaker::Matchmaker::new(
        rules,
        queue.clone(),
        bus,
        ttakji_platform::authorities::Authorities::new(&authority_url)?
            .with_service_key(Some(key.clone())),
    );
    // How many wait, read without reading the tickets.
    let probe = ttakji_matchmaker::tickets::Ticket::waiting(
        "nobody".to_owned(),
        "nobody".to_owned(),
        "nobody".to_owned(),
        1200,
        pool.clone(),
        now,
    );
    let started = Instant::now();
    let mut rounds = 0;
    while queue.place(&probe).await?.waiting > 0 {
        pairer.pair_round().await?;
        rounds += 1;
    }
    let pairing = started.elapsed();
    let mut unmatched = 0;
    for i in 0..TICKETS {
        let t = queue.get(&format!("alone{i}")).await?.context("ticket")?;
        if t.state != ttakji_matchmaker::tickets::State::Matched {
            unmatched += 1;
        }
    }
    println!(
        "{TICKETS} tickets waiting, paired by one instance in {:.2} s over {rounds} rounds ({:.0}/s); {unmatched} not matched",
        pairing.as_secs_f64(),
        TICKETS as f64 / pairing.as_secs_f64(),
    );

    trigger.trigger();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
