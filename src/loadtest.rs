//! `ttakji loadtest`: drives a deployment through its public gateway API
//! with bot players and reports moves a second, the move round trip (from
//! the mover's call to the opponent's stream), call latencies against a
//! bare health check sent at the same pace, and errors by code; it can
//! inject faults on a schedule and report what each one cost.
//!
//! Each of `--games` games is played by two bots signed in as guests, each
//! on its own connection. They are paired by a friend challenge (one makes
//! it, the other accepts its code) or through the queue, watch their game's
//! stream, keep their own board from its events with the rules engine, and
//! play random legal moves on their turn; when a game ends the two ask for
//! a rematch, so the games stay live. With `--rate` a shared pacer spaces
//! all the moves; otherwise each move is sent as soon as the bot sees its
//! turn.
//!
//! With `--chaos` it starts a deployment of its own and brings faults in
//! turn ([`chaos`]); with `--check-history` (always, with `--chaos`) it
//! records every move and read of every game with when it was sent and
//! answered, and checks each game's history for linearizability
//! ([`history`]).

mod bot;
mod chaos;
mod cpu;
mod faults;
mod histogram;
mod history;
mod tally;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tonic::transport::Endpoint;

use bot::Bot;
use faults::Restartable;
use histogram::Histogram;
use tally::{Fault, Tally, Totals};

/// How games are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pairing {
    /// One bot makes a friend challenge, the other accepts its code.
    Friend,
    /// Both bots queue in the matchmaker's casual pool.
    Queue,
}

impl Pairing {
    fn name(self) -> &'static str {
        match self {
            Pairing::Friend => "friend",
            Pairing::Queue => "queue",
        }
    }
}

/// `ttakji loadtest` options.
#[derive(Debug, clap::Args)]
pub struct LoadtestArgs {
    /// The gateway's public gRPC address.
    #[arg(
        long,
        env = "TTAKJI_GATEWAY_URL",
        default_value = "http://127.0.0.1:50051"
    )]
    pub gateway_url: String,
    /// Games played at once (by twice as many bots).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub games: u32,
    /// Moves a second to aim for across all games; 0 sends each move as
    /// soon as the bot sees its turn.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    pub rate: f64,
    /// Seconds to play for and measure, after the warm-up.
    #[arg(long, default_value_t = 30.0, value_parser = parse_seconds)]
    pub duration: f64,
    /// Seconds played but not measured once every game has begun (the
    /// making of the games and their first moves are not the steady
    /// state); 0 measures from the first move.
    #[arg(long, default_value_t = 5.0, value_parser = parse_warmup)]
    pub warmup: f64,
    /// How bots find games: friend challenges or the queue.
    #[arg(long, value_enum, default_value = "friend")]
    pub pairing: Pairing,
    /// Connections the bots share, in turn; 0 (the default) gives each bot
    /// its own, as players have. Past some 9,000 bots a process's limit
    /// on open files (often 20,000) calls for sharing.
    #[arg(long, default_value_t = 0)]
    pub connections: u32,
    /// Board size: 9, 13 or 19.
    #[arg(long, default_value_t = 9, value_parser = parse_board_size)]
    pub board_size: u32,
    /// Watch games with the whole game in every event, as clients that
    /// do not ask for changes do; by default the bots ask for each
    /// event's change (`WatchGameRequest.changes`), as the web page does.
    #[arg(long)]
    pub snapshots: bool,
    /// Seconds between faults (the first after one interval; 6 with
    /// `--chaos` unless set).
    #[arg(long, value_parser = parse_seconds, requires = "fault")]
    pub fault_every: Option<f64>,
    /// A shell command run at each fault, e.g. "redis-cli -p 6379 shutdown nosave".
    #[arg(long, group = "fault", requires = "fault_every")]
    pub fault_command: Option<String>,
    /// A shell command the load test starts itself before the run (say,
    /// "ttakji serve --database-url sqlite://lt.db") and, at each fault,
    /// kills with SIGKILL and starts again; it is stopped at the end.
    #[arg(long, group = "fault")]
    pub fault_restart: Option<String>,
    /// Start a deployment of its own on `--database-url` (Redis, which
    /// must be installed, three authorities, a matchmaker, the ratings
    /// service and two gateways, as processes of this program), play
    /// through both gateways, and bring faults in turn: an authority
    /// killed, an authority stopped for 2 to 7 s, Redis killed and
    /// restarted, a gateway killed. Checks every game's history.
    #[arg(long, group = "fault", requires = "database_url")]
    pub chaos: bool,
    /// The PostgreSQL database of a `--chaos` run's services.
    #[arg(long, requires = "chaos")]
    pub database_url: Option<String>,
    /// Record every move and read of every game, with when each was sent
    /// and answered, and check each game's history for linearizability.
    #[arg(long)]
    pub check_history: bool,
    /// Where the history of each game that is not linearizable is written
    /// (`history-<game>.json`).
    #[arg(long, default_value = ".")]
    pub history_dir: PathBuf,
    /// Server processes whose CPU time to report beside the load test's
    /// own, and per accepted move (say, `--server-pid $(pgrep -d, ttakji)`
    /// of a `ttakji serve`); read from their `/proc/<pid>/stat`.
    #[arg(long, value_delimiter = ',', value_name = "PID")]
    pub server_pid: Vec<u32>,
    /// Print the final report as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

fn parse_warmup(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..1e9).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds (0 or more)")),
    }
}

fn parse_board_size(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(size @ (9 | 13 | 19)) => Ok(size),
        _ => Err(format!("{s:?}: games are played on 9, 13 or 19 lines")),
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v == 0.0 || (v.is_finite() && v >= 0.01) => Ok(v),
        _ => Err(format!(
            "{s:?} is not a rate: give moves a second (at least 0.01), or 0 for no limit"
        )),
    }
}

/// The instant `ago` before now (now, should the clock not reach back).
fn since(ago: Duration) -> Instant {
    let now = Instant::now();
    now.checked_sub(ago).unwrap_or(now)
}

/// Spaces calls evenly at a rate shared by every caller: each `wait`
/// takes the next free slot. Time nobody used is saved up only for a few
/// milliseconds (so a timer's lateness does not lower the rate), so there
/// is no burst after a pause.
#[derive(Debug)]
pub struct Pacer {
    interval: Duration,
    next: Mutex<Instant>,
}

impl Pacer {
    pub fn new(per_second: f64) -> Pacer {
        Pacer {
            interval: Duration::from_secs_f64(1.0 / per_second),
            next: Mutex::new(Instant::now()),
        }
    }

    pub async fn wait(&self) {
        let at = {
            let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
            let at = (*next).max(since(PACER_SLACK));
            *next = at + self.interval;
            at
        };
        tokio::time::sleep_until(at).await;
    }
}

/// How far behind the present a [`Pacer`]'s schedule may run.
const PACER_SLACK: Duration = Duration::from_millis(5);

/// What every bot of a run shares.
#[derive(Debug)]
pub struct Run {
    pub tally: Tally,
    pub pacer: Option<Pacer>,
    /// Challenges being made at once: the games begin at the pace the
    /// deployment makes them, not all in one burst that times out.
    pub challenges: tokio::sync::Semaphore,
    pub board_size: u32,
    /// Watch with each event's change instead of the whole game.
    pub changes: bool,
    /// Every game's calls, when histories are checked.
    pub histories: Option<history::Histories>,
}

/// Bots signed in at once.
const SIGN_IN_AT_ONCE: usize = 32;

/// Friend challenges made at once (each is two calls and a new game).
const CHALLENGES_AT_ONCE: usize = 64;
/// How long a gateway started by `--fault-restart` may take to answer.
const START_WAIT: Duration = Duration::from_secs(60);
/// The service the baseline's health check asks about.
const HEALTH_SERVICE: &str = "ttakji.v1.GameService";

pub fn run(args: &LoadtestArgs) -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(drive(args))
}

/// Asks the gateway's health service until it answers SERVING, for up to
/// `wait`; a gateway that cannot be reached is an error that says so.
async fn reach(endpoint: &Endpoint, url: &str, wait: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + wait;
    loop {
        let answer = async {
            let channel = endpoint.connect().await.map_err(|e| {
                let cause =
                    std::error::Error::source(&e).map_or_else(String::new, |c| format!(": {c}"));
                format!("{e}{cause}")
            })?;
            let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
            let checked = tokio::time::timeout(
                bot::CALL_TIMEOUT,
                health.check(tonic_health::pb::HealthCheckRequest {
                    service: HEALTH_SERVICE.to_owned(),
                }),
            )
            .await
            .map_err(|_| "no answer to a health check".to_owned())?
            .map_err(|s| format!("health check refused: {:?} {}", s.code(), s.message()))?;
            let serving = tonic_health::pb::health_check_response::ServingStatus::Serving as i32;
            if checked.into_inner().status == serving {
                Ok(())
            } else {
                Err("the gateway is not serving yet".to_owned())
            }
        }
        .await;
        match answer {
            Ok(()) => return Ok(()),
            Err(why) if Instant::now() >= deadline => {
                anyhow::bail!("cannot reach the gateway at {url}: {why}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Signs in `count` bots with nicknames unique to this run, bot `i`
/// through `endpoints[i % endpoints.len()]`.
async fn sign_in_bots(
    endpoints: &[Endpoint],
    count: usize,
    connections: usize,
) -> anyhow::Result<Vec<Bot>> {
    let mut shared = Vec::with_capacity(connections.min(count));
    for i in 0..connections.min(count) {
        shared.push(bot::connect(&endpoints[i % endpoints.len()]).await?);
    }
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let prefix = format!("lt{}", run_id.get(..6).unwrap_or("000000"));
    let seed = uuid::Uuid::new_v4().as_u64_pair().0;
    let gate = Arc::new(tokio::sync::Semaphore::new(SIGN_IN_AT_ONCE));
    let mut signing = JoinSet::new();
    for i in 0..count {
        let endpoint = endpoints[i % endpoints.len()].clone();
        let gate = gate.clone();
        let channel = (!shared.is_empty()).then(|| shared[i % shared.len()].clone());
        let nickname = format!("{prefix}-{i}");
        let seed = seed
            .wrapping_add(i as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        signing.spawn(async move {
            let _permit = gate.acquire_owned().await;
            let channel = match channel {
                Some(channel) => channel,
                None => bot::connect(&endpoint).await?,
            };
            bot::sign_in(channel, nickname, seed)
                .await
                .map(|bot| (i, bot))
        });
    }
    let mut bots: Vec<Option<Bot>> = (0..count).map(|_| None).collect();
    while let Some(done) = signing.join_next().await {
        let (i, bot) = done.context("a sign-in task failed")??;
        if let Some(slot) = bots.get_mut(i) {
            *slot = Some(bot);
        }
    }
    Ok(bots.into_iter().flatten().collect())
}

/// Two bots of a friend's table: a challenge, then rematches for as long
/// as both agree (a new challenge when they do not).
async fn friend_table(mut a: Bot, mut b: Bot, run: Arc<Run>) {
    loop {
        let mut game = a.challenge(&b, &run).await;
        loop {
            tokio::join!(a.play(&game, &run), b.play(&game, &run));
            let (ra, rb) = (a.rematch(&game, &run), b.rematch(&game, &run));
            match both(ra, rb).await {
                Some((ga, gb)) if ga == gb => game = ga,
                _ => break,
            }
        }
    }
}

/// A bot in the queue: matched with whoever the matchmaker picks, then
/// rematches with them for as long as both agree.
async fn queue_seat(mut bot: Bot, run: Arc<Run>) {
    loop {
        let mut game = bot.find_match(&run).await;
        loop {
            bot.play(&game, &run).await;
            match bot.rematch(&game, &run).await {
                Some(next) => game = next,
                None => break,
            }
        }
    }
}

/// Both answers, or `None` as soon as either is `None`.
async fn both<A, B>(
    a: impl std::future::Future<Output = Option<A>>,
    b: impl std::future::Future<Output = Option<B>>,
) -> Option<(A, B)> {
    tokio::pin!(a, b);
    let (mut got_a, mut got_b) = (None, None);
    loop {
        tokio::select! {
            answer = &mut a, if got_a.is_none() => got_a = Some(answer?),
            answer = &mut b, if got_b.is_none() => got_b = Some(answer?),
        }
        if let (Some(_), Some(_)) = (&got_a, &got_b) {
            return got_a.zip(got_b);
        }
    }
}

/// One line a second on standard error; keeps `moves_last_second` for the
/// baseline's pace.
async fn progress(run: Arc<Run>, moves_last_second: Arc<AtomicU64>) {
    let start = run.tally.started();
    let mut tick = tokio::time::interval_at(start + Duration::from_secs(1), Duration::from_secs(1));
    let mut last = 0;
    loop {
        tick.tick().await;
        let now = run.tally.progress();
        // The count starts again when the measuring begins.
        let per_second = if now.moves >= last {
            now.moves - last
        } else {
            now.moves
        };
        last = now.moves;
        moves_last_second.store(per_second, Ordering::Relaxed);
        eprintln!(
            "{:>5.0} s  {per_second:>6} moves/s  round trip p50 {} p99 {}  errors {}  live games {}",
            start.elapsed().as_secs_f64(),
            millis(now.round_trip_p50),
            millis(now.round_trip_p99),
            now.errors,
            now.live_games
        );
    }
}

/// The baseline: one task sending health checks at the moves' pace (the
/// `--rate`, or without one the moves acknowledged in the last second,
/// at least ten a second).
async fn baseline(endpoint: Endpoint, run: Arc<Run>, rate: f64, moves_last_second: Arc<AtomicU64>) {
    let mut health = tonic_health::pb::health_client::HealthClient::new(endpoint.connect_lazy());
    let mut next = Instant::now();
    loop {
        let per_second = if rate > 0.0 {
            rate
        } else {
            (moves_last_second.load(Ordering::Relaxed) as f64).max(10.0)
        };
        // Keep to the schedule through timer lateness (the timer's grain is
        // a millisecond), but start afresh after a stall of a second.
        next = next.max(since(Duration::from_secs(1))) + Duration::from_secs_f64(1.0 / per_second);
        tokio::time::sleep_until(next).await;
        let sent = Instant::now();
        let checked = bot::call(
            &run.tally,
            health.check(tonic_health::pb::HealthCheckRequest {
                service: HEALTH_SERVICE.to_owned(),
            }),
        )
        .await;
        if checked.is_ok() {
            run.tally.baseline_call(sent.elapsed());
        }
    }
}

/// Runs `act` on what `shared` holds, on the blocking pool (it waits for
/// processes, and for a fault under way that holds the lock).
async fn blocking<T: Send + 'static, R: Send + 'static>(
    shared: &Arc<Mutex<T>>,
    act: impl FnOnce(&mut T) -> R + Send + 'static,
) -> Result<R, tokio::task::JoinError> {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || {
        act(&mut shared.lock().unwrap_or_else(PoisonError::into_inner))
    })
    .await
}

/// The fault to inject at each interval.
#[derive(Debug)]
enum Injection {
    Command(String),
    Restart(Arc<Mutex<Restartable>>),
    /// The faults of a chaos run, in turn, with a seed for their lengths.
    Chaos(Arc<Mutex<chaos::Deployment>>, u64),
}

/// Injects a fault every `every` until the run ends at `end` (none at
/// the very end, where it would cost nothing that could be measured).
async fn inject(run: Arc<Run>, every: Duration, end: Instant, injection: Injection) {
    let start = run.tally.measured_from();
    let mut tick = tokio::time::interval_at(start + every, every);
    for n in 1.. {
        if tick.tick().await >= end {
            return;
        }
        let at = Instant::now();
        let elapsed = at.duration_since(start).as_secs_f64();
        match &injection {
            Injection::Command(command) => {
                run.tally.fault(format!("command {command:?}"), at);
                eprintln!("fault {n} at {elapsed:.1} s: running {command:?}");
                let command = command.clone();
                tokio::task::spawn_blocking(move || match faults::run_command(&command) {
                    Ok(status) if status.success() => {}
                    Ok(status) => eprintln!("fault command {command:?} exited with {status}"),
                    Err(e) => eprintln!("fault command {command:?} did not start: {e}"),
                });
            }
            Injection::Restart(process) => {
                run.tally.fault("restart".to_owned(), at);
                eprintln!("fault {n} at {elapsed:.1} s: killing the process and starting it again");
                let restarted = blocking(process, Restartable::restart).await;
                match restarted {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => eprintln!("the process did not start again: {e}"),
                    Err(e) => eprintln!("restarting the process failed: {e}"),
                }
            }
            Injection::Chaos(deployment, seed) => {
                let kind = chaos::Kind::of(n - 1);
                run.tally.fault(kind.name().to_owned(), at);
                eprintln!("fault {n} at {elapsed:.1} s: {}", kind.name());
                let seed = *seed;
                // Waits out a stopped process's pause: one fault at a time.
                let brought = blocking(deployment, move |d| d.fault(n - 1, seed)).await;
                match brought {
                    Ok(Ok(what)) => eprintln!("fault {n}: {what}"),
                    Ok(Err(e)) => eprintln!("fault {n} went wrong: {e}"),
                    Err(e) => eprintln!("fault {n} failed: {e}"),
                }
            }
        }
    }
}

async fn drive(args: &LoadtestArgs) -> anyhow::Result<()> {
    let process = match &args.fault_restart {
        Some(command) => Some(Arc::new(Mutex::new(Restartable::start(command)?))),
        None => None,
    };
    let deployment = match (&args.database_url, args.chaos) {
        (Some(database_url), true) => Some(Arc::new(Mutex::new(chaos::Deployment::start(
            database_url,
        )?))),
        _ => None,
    };
    let urls = match &deployment {
        Some(d) => d
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .gateway_urls
            .clone(),
        None => vec![args.gateway_url.clone()],
    };
    let wait = if process.is_some() || deployment.is_some() {
        START_WAIT
    } else {
        Duration::ZERO
    };
    let mut endpoints = Vec::new();
    for url in &urls {
        let endpoint = bot::endpoint(url)?;
        reach(&endpoint, url, wait).await?;
        endpoints.push(endpoint);
    }
    let url = urls.join(", ");
    let count = args.games as usize * 2;
    eprintln!(
        "signing in {count} bots at {url}, then playing {} games for {} s",
        args.games, args.duration
    );
    // One more bot reads every game at the end.
    let mut bots = sign_in_bots(&endpoints, count + 1, args.connections as usize).await?;
    let reader = bots.pop().context("no bot signed in")?;
    let run = Arc::new(Run {
        tally: Tally::new(),
        pacer: (args.rate > 0.0).then(|| Pacer::new(args.rate)),
        challenges: tokio::sync::Semaphore::new(CHALLENGES_AT_ONCE),
        board_size: args.board_size,
        changes: !args.snapshots,
        histories: (args.check_history || args.chaos).then(history::Histories::new),
    });
    for bot in &bots {
        run.tally.add_bot(&bot.user_id);
    }
    let mut tasks = JoinSet::new();
    let mut bots = bots.into_iter();
    match args.pairing {
        Pairing::Friend => {
            while let (Some(a), Some(b)) = (bots.next(), bots.next()) {
                tasks.spawn(friend_table(a, b, run.clone()));
            }
        }
        Pairing::Queue => {
            for bot in bots {
                tasks.spawn(queue_seat(bot, run.clone()));
            }
        }
    }
    let moves_last_second = Arc::new(AtomicU64::new(0));
    tasks.spawn(progress(run.clone(), moves_last_second.clone()));
    tasks.spawn(baseline(
        endpoints[0].clone(),
        run.clone(),
        args.rate,
        moves_last_second,
    ));
    if args.warmup > 0.0 {
        warm_up(&run, args).await;
    }
    let measured_from = Instant::now();
    run.tally.begin_measuring(measured_from);
    let cpu_since = cpu::Since::now(&args.server_pid);
    let end = measured_from + Duration::from_secs_f64(args.duration);
    let fault_every = args
        .fault_every
        .or(deployment.as_ref().map(|_| CHAOS_FAULT_EVERY));
    if let Some(every) = fault_every {
        let injection = match (&args.fault_command, &process, &deployment) {
            (Some(command), _, _) => Some(Injection::Command(command.clone())),
            (None, Some(process), _) => Some(Injection::Restart(process.clone())),
            (None, None, Some(deployment)) => Some(Injection::Chaos(
                deployment.clone(),
                uuid::Uuid::new_v4().as_u64_pair().0,
            )),
            (None, None, None) => None,
        };
        if let Some(injection) = injection {
            tasks.spawn(inject(
                run.clone(),
                Duration::from_secs_f64(every),
                end,
                injection,
            ));
        }
    }
    tokio::time::sleep_until(end).await;
    let totals = run.tally.totals();
    let cpu = cpu_since.used();
    tasks.shutdown().await;
    let checked = match &run.histories {
        Some(histories) => {
            if let Some(deployment) = &deployment {
                // A fault under way (a stopped authority) ends first.
                let _ = blocking(deployment, |_| ()).await;
            }
            Some(check_histories(histories, &reader, &run, &args.history_dir).await?)
        }
        None => None,
    };
    if let Some(deployment) = &deployment {
        let _ = blocking(deployment, chaos::Deployment::stop).await;
    }
    if let Some(process) = &process {
        let _ = blocking(process, Restartable::stop).await;
    }
    let report = Report {
        args,
        url,
        totals,
        checked,
        cpu,
    };
    if args.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.text());
    }
    Ok(())
}

/// How long the warm-up waits for every game to have begun.
const GAMES_BEGUN_WAIT: Duration = Duration::from_secs(120);

/// Waits until every game has begun (or [`GAMES_BEGUN_WAIT`] has passed),
/// then plays `--warmup` seconds more.
async fn warm_up(run: &Run, args: &LoadtestArgs) {
    let games = args.games as usize;
    let given_up = Instant::now() + GAMES_BEGUN_WAIT;
    loop {
        let live = run.tally.progress().live_games;
        if live >= games {
            break;
        }
        if Instant::now() >= given_up {
            eprintln!(
                "{live} of {games} games had begun after {} s; measuring anyway",
                GAMES_BEGUN_WAIT.as_secs()
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "every game has begun; warming up for {} s, then measuring for {} s",
        args.warmup, args.duration
    );
    tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
}

/// Seconds between a chaos run's faults unless `--fault-every` says.
const CHAOS_FAULT_EVERY: f64 = 6.0;

/// How long the reads of every game at the end keep trying.
const FINAL_READ_WAIT: Duration = Duration::from_secs(30);

/// What the check of the games' histories found.
#[derive(Debug, Default)]
struct Checked {
    games: usize,
    calls: usize,
    linearizable: usize,
    /// Games not linearizable, and the file each one's history is in.
    violations: Vec<(String, String, PathBuf)>,
    /// Acknowledged moves the record read at the end does not hold.
    lost_moves: u64,
    /// Games whose record holds more moves than were ever sent.
    duplicated: usize,
    /// Games whose record could not be read at the end.
    unread: usize,
}

/// Reads every game once more at the end (the record as it stands, after
/// every fault), then checks each game's history.
async fn check_histories(
    histories: &history::Histories,
    reader: &Bot,
    run: &Run,
    dir: &std::path::Path,
) -> anyhow::Result<Checked> {
    let mut checked = Checked::default();
    for game_id in histories.game_ids() {
        let deadline = Instant::now() + FINAL_READ_WAIT;
        while reader.read_game(&game_id, run).await.is_none() {
            if Instant::now() > deadline {
                checked.unread += 1;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    (checked.games, checked.calls) = histories.size();
    for (game_id, ops) in histories.all() {
        let last_read = ops
            .iter()
            .filter_map(|o| match o.call {
                history::Call::Read { moves } => Some((o.sent_us, moves)),
                _ => None,
            })
            .max()
            .map(|(_, moves)| moves);
        let acknowledged = ops
            .iter()
            .filter_map(|o| match o.call {
                history::Call::Move { number, .. } => Some(number),
                _ => None,
            })
            .max();
        let sent = ops
            .iter()
            .filter_map(|o| match o.call {
                history::Call::Move { number, .. }
                | history::Call::Refused { number }
                | history::Call::Unknown { number } => Some(number),
                history::Call::Read { .. } => None,
            })
            .max()
            .unwrap_or(0);
        if let (Some(read), Some(acked)) = (last_read, acknowledged) {
            checked.lost_moves += u64::from(acked.saturating_sub(read));
        }
        if last_read.is_some_and(|read| read > sent) {
            checked.duplicated += 1;
        }
        match history::check(&ops) {
            Ok(()) => checked.linearizable += 1,
            Err(violation) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let path = dir.join(format!("history-{game_id}.json"));
                let written = serde_json::json!({
                    "game_id": game_id,
                    "first_unexplained": violation.op,
                    "ops": ops,
                });
                std::fs::write(&path, format!("{written:#}\n"))
                    .with_context(|| format!("writing {}", path.display()))?;
                checked
                    .violations
                    .push((game_id, format!("{:?}", violation.op), path));
            }
        }
    }
    Ok(checked)
}

/// A duration as milliseconds, to the microsecond.
fn ms(d: Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}

fn millis(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".to_owned(), |d| format!("{:.3} ms", ms(d)))
}

/// The final report of a run.
struct Report<'a> {
    args: &'a LoadtestArgs,
    /// The gateways played through.
    url: String,
    totals: Totals,
    checked: Option<Checked>,
    /// The CPU the load test and the named servers used while playing.
    cpu: cpu::Used,
}

fn latencies(h: &Histogram) -> serde_json::Value {
    let q = |q: f64| h.quantile(q).map(ms);
    serde_json::json!({
        "count": h.count(),
        "p50": q(0.5),
        "p99": q(0.99),
        "p99_9": q(0.999),
        "max": (h.count() > 0).then(|| ms(h.max())),
        "mean": h.mean().map(ms),
    })
}

fn codes(errors: &BTreeMap<&'static str, u64>) -> String {
    if errors.is_empty() {
        return "none".to_owned();
    }
    errors
        .iter()
        .map(|(code, n)| format!("{code} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Report<'_> {
    fn seconds(&self) -> f64 {
        self.totals.elapsed.as_secs_f64()
    }

    fn moves_per_second(&self) -> f64 {
        self.totals.moves as f64 / self.seconds().max(1e-9)
    }

    /// Bytes the bots' streams received per accepted move (messages as
    /// encoded, before gRPC's and HTTP/2's framing).
    fn stream_bytes_per_move(&self) -> f64 {
        self.totals.stream_bytes as f64 / (self.totals.moves.max(1)) as f64
    }

    /// Server CPU microseconds per accepted move.
    fn server_us_per_move(&self) -> Option<f64> {
        let seconds = self.cpu.servers?;
        (self.totals.moves > 0).then(|| seconds * 1e6 / self.totals.moves as f64)
    }

    /// The CPU line: the load test's own, and the servers'.
    fn cpu_line(&self) -> String {
        let cores = |s: f64| s / self.seconds().max(1e-9);
        let mut line = match self.cpu.own {
            Some(own) => format!(
                "CPU               load test {own:.2} s ({:.0}% of a core)",
                cores(own) * 100.0
            ),
            None => "CPU               load test unknown".to_owned(),
        };
        match (self.cpu.servers, self.cpu.pids.is_empty()) {
            (_, true) => line.push_str("; server not measured (--server-pid)"),
            (None, false) => line.push_str("; server processes could not be read"),
            (Some(s), false) => line.push_str(&format!(
                "; server {s:.2} s ({:.0}% of a core, pids {}), {:.0} µs per accepted move",
                cores(s) * 100.0,
                self.cpu
                    .pids
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                self.server_us_per_move().unwrap_or(0.0)
            )),
        }
        line.push('\n');
        line
    }

    /// Round trip p50 over the baseline's p50.
    fn ratio(&self) -> Option<f64> {
        let rt = self.totals.round_trip.quantile(0.5)?;
        let base = self.totals.baseline.quantile(0.5)?;
        (base > Duration::ZERO).then(|| rt.as_secs_f64() / base.as_secs_f64())
    }

    fn fault_at(&self, fault: &Fault) -> f64 {
        fault
            .at
            .saturating_duration_since(self.totals.started)
            .as_secs_f64()
    }

    fn fault_line(&self, n: usize, fault: &Fault) -> String {
        let failed: u64 = fault.errors.values().sum();
        let mut line = format!(
            "fault {n} at {:.1} s ({}): {failed} failed calls ({})",
            self.fault_at(fault),
            fault.what,
            codes(&fault.errors)
        );
        let moved = fault
            .moving
            .saturating_sub(fault.not_recovered() + fault.ended);
        match fault.recovered_after {
            Some(after) => line.push_str(&format!(
                "; all {} moving games moved again within {:.3} s",
                fault.moving,
                after.as_secs_f64()
            )),
            None => line.push_str(&format!(
                "; {} of {} moving games had not moved again when the window closed",
                fault.not_recovered(),
                fault.moving
            )),
        }
        if fault.ended > 0 {
            line.push_str(&format!(" ({} ended instead)", fault.ended));
        }
        if let Some(gap) = fault.longest_gap {
            line.push_str(&format!(
                "; longest gap between accepted moves {:.3} s ({moved} games)",
                gap.as_secs_f64()
            ));
        }
        line
    }

    fn text(&self) -> String {
        let t = &self.totals;
        let a = self.args;
        let pace = if a.rate > 0.0 {
            format!("paced at {} moves a second", a.rate)
        } else {
            "each move sent as soon as its turn came".to_owned()
        };
        let q = |h: &Histogram, q: f64| millis(h.quantile(q));
        let mut out = format!(
            "ttakji loadtest against {}: {} games ({} pairing, {}x{}), {pace}, {:.1} s measured after every game had begun and {} s of warm-up\n",
            self.url,
            a.games,
            a.pairing.name(),
            a.board_size,
            a.board_size,
            self.seconds(),
            a.warmup
        );
        out.push_str(&format!(
            "moves accepted    {} ({:.1} a second)\n",
            t.moves,
            self.moves_per_second()
        ));
        out.push_str(&format!(
            "move round trip   p50 {}  p99 {}  p99.9 {}  max {}  ({} moves, from the call to the opponent's stream)\n",
            q(&t.round_trip, 0.5),
            q(&t.round_trip, 0.99),
            q(&t.round_trip, 0.999),
            millis((t.round_trip.count() > 0).then(|| t.round_trip.max())),
            t.round_trip.count()
        ));
        out.push_str(&format!(
            "move call         p50 {}  p99 {}  ({} calls)\n",
            q(&t.calls, 0.5),
            q(&t.calls, 0.99),
            t.calls.count()
        ));
        out.push_str(&format!(
            "baseline          p50 {}  p99 {}  ({} health checks at the same pace)",
            q(&t.baseline, 0.5),
            q(&t.baseline, 0.99),
            t.baseline.count()
        ));
        match self.ratio() {
            Some(r) => out.push_str(&format!("; round trip p50 / baseline p50 = {r:.1}\n")),
            None => out.push('\n'),
        }
        out.push_str(&self.cpu_line());
        out.push_str(&format!(
            "streams           {} messages, {} bytes ({}), {:.0} bytes a move\n",
            t.stream_messages,
            t.stream_bytes,
            if a.snapshots {
                "whole games"
            } else {
                "changes"
            },
            self.stream_bytes_per_move()
        ));
        out.push_str(&format!("errors            {}\n", codes(&t.errors)));
        for (code, message) in &t.error_examples {
            out.push_str(&format!("  first {code}: {message}\n"));
        }
        out.push_str(&format!(
            "games             {} finished, {} started, {} live at the end\n",
            t.games_finished, t.games_started, t.live_games
        ));
        if t.faults.is_empty() {
            out.push_str("faults            none\n");
        }
        for (i, fault) in t.faults.iter().enumerate() {
            out.push_str(&self.fault_line(i + 1, fault));
            out.push('\n');
        }
        for (kind, longest) in self.longest_gaps() {
            out.push_str(&format!(
                "longest a game waited, {kind}: {}\n",
                longest.map_or_else(|| "-".to_owned(), |d| format!("{:.3} s", d.as_secs_f64()))
            ));
        }
        if let Some(c) = &self.checked {
            out.push_str(&format!(
                "histories         {} of {} games linearizable ({} calls); {} acknowledged moves lost, {} games with duplicated moves, {} games unread at the end\n",
                c.linearizable, c.games, c.calls, c.lost_moves, c.duplicated, c.unread
            ));
            for (game_id, op, path) in &c.violations {
                out.push_str(&format!(
                    "  game {game_id} not linearizable at {op}: {}\n",
                    path.display()
                ));
            }
        }
        out
    }

    /// The longest gap between a game's accepted moves, per kind of fault.
    fn longest_gaps(&self) -> BTreeMap<&str, Option<Duration>> {
        let mut gaps: BTreeMap<&str, Option<Duration>> = BTreeMap::new();
        for fault in &self.totals.faults {
            let longest = gaps.entry(fault.what.as_str()).or_default();
            *longest = (*longest).max(fault.longest_gap);
        }
        gaps
    }

    fn json(&self) -> serde_json::Value {
        let t = &self.totals;
        let a = self.args;
        let faults: Vec<serde_json::Value> = t
            .faults
            .iter()
            .map(|f| {
                serde_json::json!({
                    "at_s": self.fault_at(f),
                    "what": f.what,
                    "failed_calls": f.errors,
                    "failed_calls_total": f.errors.values().sum::<u64>(),
                    "moving_games": f.moving,
                    "recovered_after_ms": f.recovered_after.map(ms),
                    "longest_gap_ms": f.longest_gap.map(ms),
                    "not_recovered": f.not_recovered(),
                    "ended": f.ended,
                })
            })
            .collect();
        let checked = self.checked.as_ref().map(|c| {
            serde_json::json!({
                "games": c.games,
                "calls": c.calls,
                "linearizable": c.linearizable,
                "not_linearizable": c.violations.iter().map(|(game_id, op, path)| serde_json::json!({
                    "game_id": game_id,
                    "first_unexplained": op,
                    "history": path,
                })).collect::<Vec<_>>(),
                "lost_moves": c.lost_moves,
                "duplicated_games": c.duplicated,
                "unread_games": c.unread,
            })
        });
        let longest_gaps: BTreeMap<&str, Option<f64>> = self
            .longest_gaps()
            .into_iter()
            .map(|(kind, gap)| (kind, gap.map(ms)))
            .collect();
        serde_json::json!({
            "gateway_url": self.url,
            "games": a.games,
            "pairing": a.pairing.name(),
            "board_size": a.board_size,
            "rate": a.rate,
            "duration_s": self.seconds(),
            "warmup_s": a.warmup,
            "moves": t.moves,
            "moves_per_second": self.moves_per_second(),
            "round_trip_ms": latencies(&t.round_trip),
            "call_ms": latencies(&t.calls),
            "baseline_ms": latencies(&t.baseline),
            "round_trip_over_baseline_p50": self.ratio(),
            "cpu": {
                "load_test_s": self.cpu.own,
                "server_s": self.cpu.servers,
                "server_pids": self.cpu.pids,
                "server_us_per_move": self.server_us_per_move(),
            },
            "streams": {
                "changes": !a.snapshots,
                "messages": t.stream_messages,
                "bytes": t.stream_bytes,
                "bytes_per_move": self.stream_bytes_per_move(),
            },
            "errors": t.errors,
            "errors_total": t.errors.values().sum::<u64>(),
            "error_examples": t.error_examples,
            "games_started": t.games_started,
            "games_finished": t.games_finished,
            "live_games": t.live_games,
            "faults": faults,
            "longest_gap_ms_by_fault": longest_gaps,
            "histories": checked,
        })
    }
}
