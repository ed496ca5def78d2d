//! Test helpers shared by the end-to-end tests: services on port 0 in this
//! process or as separate processes, a fresh Postgres database per test,
//! signed-in clients, and waiting for asynchronous outcomes.
//!
//! Redis and PostgreSQL come from `ttakji-test-support`: the servers named
//! by `TTAKJI_TEST_REDIS_URL` / `TTAKJI_TEST_DATABASE_URL`, or throwaway
//! ones this test process starts on first use and stops when it ends.

#![allow(dead_code)]

pub mod grpc_web;
pub mod operator;

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tonic::Request;
use tonic::transport::Channel;
use ttakji_platform::auth::TokenKeys;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::{self, ShutdownTrigger};
use ttakji_platform::store::Database;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::game_service_client::GameServiceClient;

pub const TOKEN_KEYS: &str = "t1=test-secret-of-the-ttakji-suite";

/// The service key every service a test starts as a process shares.
pub const SERVICE_KEY: &str = "service-key-of-the-ttakji-suite";

/// A channel to an internal service at `url`, carrying the service key.
pub fn internal(url: &str) -> ttakji_platform::grpc::TracedChannel {
    ttakji_platform::grpc::client(url, "internal service", Some(&service_key()))
        .expect("a valid URL")
}

/// [`SERVICE_KEY`] as the services take it.
pub fn service_key() -> ttakji_platform::grpc::ServiceKey {
    SERVICE_KEY.parse().expect("a valid service key")
}

/// The tests' Redis: `TTAKJI_TEST_REDIS_URL`, or one of this process.
pub fn redis_url() -> &'static str {
    ttakji_test_support::redis_url()
}

pub fn keys() -> TokenKeys {
    TokenKeys::parse(TOKEN_KEYS, Duration::from_secs(3600)).expect("test keys")
}

/// Logs for a test run when `TEST_LOG` is set.
pub fn init_logs() {
    if std::env::var_os("TEST_LOG").is_some() {
        let _ = ttakji_platform::telemetry::init(
            &ttakji_platform::telemetry::TelemetryConfig::default(),
        );
    }
}

/// The computer as tests want it: quick and repeatable.
pub fn quick_ai() -> ttakji_authority::AiConfig {
    ttakji_authority::AiConfig {
        max_playouts: Some(150),
        seed: Some(7),
        // A player away for a second has the computer play their seat
        // (tables that allow it).
        stand_in_after: Some(1),
    }
}

/// Every service in this process, on port 0, with the given store and bus.
/// Stops when dropped.
pub struct Embedded {
    pub gateway: SocketAddr,
    pub authority: SocketAddr,
    pub matchmaker: SocketAddr,
    pub ratings: SocketAddr,
    _running: Running,
}

/// Services a test started in this process; dropping it stops them.
pub struct Running {
    /// The gRPC address of the service started (the first, of several).
    pub addr: SocketAddr,
    trigger: ShutdownTrigger,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.trigger.trigger();
    }
}

/// The ratings service as tests want it: the leaderboard from the store,
/// reconciling every minute, reaching the authority at `authority`.
pub fn ratings_config(authority: SocketAddr) -> ttakji_ratings::Config {
    ttakji_ratings::Config {
        service_key: Some(service_key()),
        ..ttakji_ratings::Config::new(
            "127.0.0.1:0".parse().expect("address"),
            format!("http://{authority}"),
        )
    }
}

/// A ratings service of its own beside the others (say, one that starts
/// late); it stops when the handle drops.
pub async fn start_ratings(config: ttakji_ratings::Config, db: Database, bus: Bus) -> Running {
    init_logs();
    let (trigger, shutdown) = shutdown::channel();
    let app = ttakji_ratings::App::build(config, db, bus, shutdown.clone())
        .await
        .expect("ratings builds");
    let addr = app.addr();
    shutdown.spawn(app.run_until_stopped());
    Running { addr, trigger }
}

/// The matchmaker as tests want it: pairing at once, the computer after
/// 2.5 s, a 1.5 s grace for players who leave.
pub fn quick_matching(listen: SocketAddr, authority_url: String) -> ttakji_matchmaker::Config {
    let mut config = ttakji_matchmaker::Config::new(listen, authority_url);
    config.rules.ai_after = Duration::from_millis(2500);
    config.rules.grace = Duration::from_millis(1500);
    config.tick = Duration::from_millis(20);
    config.service_key = Some(service_key());
    config
}

pub async fn embedded(db: Database, bus: Bus) -> Embedded {
    embedded_with(db, bus, ttakji_matchmaker::Tickets::memory()).await
}

pub async fn embedded_with(
    db: Database,
    bus: Bus,
    tickets: ttakji_matchmaker::Tickets,
) -> Embedded {
    embedded_full(db, bus, tickets, None).await
}

/// All services, with Google sign-in for `(client id, key set URL)`.
pub async fn embedded_full(
    db: Database,
    bus: Bus,
    tickets: ttakji_matchmaker::Tickets,
    google: Option<(String, String)>,
) -> Embedded {
    embedded_tuned(db, bus, tickets, google, |_| {}).await
}

/// The same, with the matchmaker's settings changed by `tune`.
pub async fn embedded_tuned(
    db: Database,
    bus: Bus,
    tickets: ttakji_matchmaker::Tickets,
    google: Option<(String, String)>,
    tune: impl FnOnce(&mut ttakji_matchmaker::Config),
) -> Embedded {
    init_logs();
    let (trigger, shutdown) = shutdown::channel();
    let mut config = ttakji::stack::StackConfig::local(keys());
    config.service_key = Some(service_key());
    config.authority.ai = quick_ai();
    config.matchmaker = quick_matching(config.matchmaker.listen, String::new());
    tune(&mut config.matchmaker);
    config.gateway.public.limits = ttakji_gateway::limits::Settings::exempting(&["127.0.0.1"]);
    if let Some((client_id, key_set)) = google {
        config.gateway.public.google_client_id = Some(client_id);
        config.gateway.public.google_jwks_url = key_set;
    }
    let stack = ttakji::stack::Stack::build(config, db, bus, tickets, shutdown)
        .await
        .expect("the services build");
    let embedded = Embedded {
        gateway: stack.gateway_addr(),
        authority: stack.authority_addr(),
        matchmaker: stack.matchmaker_addr(),
        ratings: stack.ratings_addr(),
        _running: Running {
            addr: stack.gateway_addr(),
            trigger,
        },
    };
    embedded
        ._running
        .trigger
        .subscribe()
        .spawn(stack.run_until_stopped());
    embedded
}

/// An in-memory SQLite store.
pub async fn sqlite_memory() -> Database {
    Database::connect("sqlite::memory:").await.expect("sqlite")
}

/// A fresh, empty Postgres database on the tests' server; returns its URL.
/// The services migrate it when they connect.
pub async fn fresh_postgres() -> String {
    let name = format!("ttakji_test_{}", uuid::Uuid::new_v4().simple());
    ttakji_platform::store::create_postgres_database(
        ttakji_test_support::postgres_admin_url(),
        &name,
    )
    .await
    .unwrap_or_else(|e| panic!("a database on the tests' Postgres: {e:#}"));
    ttakji_test_support::postgres_database_url(&name)
}

/// A signed-in player talking to a gateway.
#[derive(Clone)]
pub struct Player {
    pub user_id: String,
    pub token: String,
    pub games: GameServiceClient<Channel>,
    /// The connection to the gateway, for the other services' clients.
    pub channel: Channel,
}

/// GET `/metrics` from `addr`: the whole answer, headers and page.
pub async fn scrape(addr: SocketAddr) -> String {
    http(
        addr,
        "GET /metrics HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n",
    )
    .await
}

/// Sends `request` (a whole HTTP/1.1 request) to `addr` and reads the
/// answer to its end.
pub async fn http(addr: SocketAddr, request: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the listener");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("an answer");
    answer
}

/// An SQLite file of its own in a new temporary folder, as a database URL.
pub fn temp_sqlite() -> String {
    let dir = std::env::temp_dir().join(format!("ttakji-test-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    format!("sqlite://{}", dir.join("ttakji.db").display())
}

/// Retries `f` until it succeeds or `within` passes (a service restarting).
pub async fn eventually<T, F, Fut>(within: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    let deadline = Instant::now() + within;
    loop {
        match f().await {
            Ok(v) => return v,
            Err(status) if Instant::now() < deadline => {
                let _ = status;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(status) => panic!("still failing after {within:?}: {status:?}"),
        }
    }
}

pub async fn channel(addr: &str) -> Channel {
    tonic::transport::Endpoint::from_shared(addr.to_owned())
        .expect("endpoint")
        .connect()
        .await
        .expect("connects")
}

/// A channel to `addr` whose connection comes from `local` (a loopback
/// address other than 127.0.0.1 is a client the tests' limits apply to).
pub async fn channel_from(addr: &str, local: std::net::IpAddr) -> Channel {
    tonic::transport::Endpoint::from_shared(addr.to_owned())
        .expect("endpoint")
        .local_address(Some(local))
        .connect()
        .await
        .expect("connects")
}

pub async fn sign_in(gateway: &str, nickname: &str) -> Player {
    sign_in_on(channel(gateway).await, nickname).await
}

/// A guest signed in over `channel`, which the player then uses.
pub async fn sign_in_on(channel: Channel, nickname: &str) -> Player {
    let signed = AuthServiceClient::new(channel.clone())
        .sign_in_guest(pb::SignInGuestRequest {
            nickname: nickname.to_owned(),
        })
        .await
        .expect("sign in")
        .into_inner();
    Player {
        user_id: signed.user_id,
        token: signed.access_token,
        games: GameServiceClient::new(channel.clone()),
        channel,
    }
}

impl Player {
    /// A request carrying this player's token.
    pub fn req<T>(&self, message: T) -> Request<T> {
        with_token(message, &self.token)
    }

    pub async fn start(&self, color: pb::ColorChoice) -> pb::GameSnapshot {
        self.start_thinking(color, pb::AiEngine::Unspecified).await
    }

    /// A 9×9 game against Easy whose computer thinks where `engine` says.
    pub async fn start_thinking(
        &self,
        color: pb::ColorChoice,
        engine: pb::AiEngine,
    ) -> pb::GameSnapshot {
        self.games
            .clone()
            .start_ai_game(self.req(pb::StartAiGameRequest {
                board_size: 9,
                color: color as i32,
                level: pb::AiLevel::Easy as i32,
                engine: engine as i32,
            }))
            .await
            .expect("start a game")
            .into_inner()
            .game
            .expect("snapshot")
    }

    pub async fn game(&self, game_id: &str) -> pb::GameSnapshot {
        self.try_game(game_id).await.expect("get game")
    }

    pub async fn try_game(&self, game_id: &str) -> Result<pb::GameSnapshot, tonic::Status> {
        self.games
            .clone()
            .get_game(self.req(pb::GetGameRequest {
                game_id: game_id.to_owned(),
                include_score_preview: false,
            }))
            .await
            .map(|r| r.into_inner().game.unwrap_or_default())
            .map(|mut game| {
                // When it was sent differs from one read to the next; the
                // tests compare the game itself.
                game.server_time_unix_ms = 0;
                game
            })
    }

    pub async fn play(
        &self,
        game_id: &str,
        number: u32,
        point: &str,
    ) -> Result<pb::PlayMoveResponse, tonic::Status> {
        self.play_as(game_id, number, point, false).await
    }

    /// Plays `point` as move `number`; with `for_computer`, the computer
    /// seat's move in a game whose computer thinks in this player's client.
    pub async fn play_as(
        &self,
        game_id: &str,
        number: u32,
        point: &str,
        for_computer: bool,
    ) -> Result<pb::PlayMoveResponse, tonic::Status> {
        let p = baduk::BoardSize::NINE
            .parse_point(point)
            .expect("test point");
        self.games
            .clone()
            .play_move(self.req(pb::PlayMoveRequest {
                game_id: game_id.to_owned(),
                move_number: number,
                point: Some(pb::Point {
                    column: u32::from(p.col()),
                    row: u32::from(p.row()),
                }),
                for_computer,
            }))
            .await
            .map(tonic::Response::into_inner)
    }

    pub async fn pass(
        &self,
        game_id: &str,
        number: u32,
    ) -> Result<pb::PassResponse, tonic::Status> {
        self.games
            .clone()
            .pass(self.req(pb::PassRequest {
                game_id: game_id.to_owned(),
                move_number: number,
                ..Default::default()
            }))
            .await
            .map(tonic::Response::into_inner)
    }

    /// Waits until it is `color`'s turn or the game is over.
    pub async fn wait_turn(&self, game_id: &str, color: pb::Color) -> pb::GameSnapshot {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let game = self.game(game_id).await;
            if game.to_move == color as i32 || game.status == pb::GameStatus::Finished as i32 {
                return game;
            }
            assert!(
                Instant::now() < deadline,
                "the computer never moved in game {game_id}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Asks for a rematch of `game_id` and follows the answers to their
    /// end: the last says the new game, once both players have asked.
    pub async fn rematch(&self, game_id: &str) -> pb::RematchResponse {
        let mut stream =
            ttakji_proto::v1::match_service_client::MatchServiceClient::new(self.channel.clone())
                .rematch(self.req(pb::RematchRequest {
                    game_id: game_id.to_owned(),
                }))
                .await
                .expect("rematch")
                .into_inner();
        let mut last = pb::RematchResponse::default();
        while let Some(m) = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("answers")
            .expect("stream")
        {
            last = m;
        }
        last
    }

    /// The game's stream from after event `after_seq`, whole or as changes.
    pub async fn watch(
        &self,
        game_id: &str,
        after_seq: u64,
        changes: bool,
    ) -> tonic::Streaming<pb::WatchGameResponse> {
        self.games
            .clone()
            .watch_game(self.req(pb::WatchGameRequest {
                game_id: game_id.to_owned(),
                after_seq,
                changes,
            }))
            .await
            .expect("watch")
            .into_inner()
    }

    pub async fn sgf(&self, game_id: &str) -> String {
        self.games
            .clone()
            .get_sgf(self.req(pb::GetSgfRequest {
                game_id: game_id.to_owned(),
            }))
            .await
            .expect("sgf")
            .into_inner()
            .sgf
    }
}

pub fn with_token<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header value"),
    );
    request
}

/// Plays a whole game as `color` against the computer: the given points
/// (skipping any that are illegal by then), then passes until the game ends
/// by two passes or the move cap. Returns the final snapshot.
pub async fn play_to_the_end(
    player: &Player,
    game_id: &str,
    color: pb::Color,
    points: &[&str],
) -> pb::GameSnapshot {
    let mut points = points.iter();
    loop {
        let game = player.wait_turn(game_id, color).await;
        if game.status == pb::GameStatus::Finished as i32 {
            return game;
        }
        let number = game.move_count + 1;
        let mut played = false;
        for p in points.by_ref() {
            if player.play(game_id, number, p).await.is_ok() {
                played = true;
                break;
            }
        }
        if !played {
            player
                .pass(game_id, number)
                .await
                .expect("a pass is always legal");
        }
    }
}

/// The same count computed here from the game's record with the rules crate.
pub fn recount(sgf: &str) -> (baduk::Score, String) {
    let (record, game) = baduk::sgf::read_game(sgf).expect("the record reads back");
    let result = record.result.map(|r| r.to_string()).unwrap_or_default();
    (game.score_preview(), result)
}

/// Keeps every finished span, for tests of traces.
#[derive(Debug, Clone, Default)]
pub struct Collected(pub std::sync::Arc<std::sync::Mutex<Vec<opentelemetry_sdk::trace::SpanData>>>);

impl opentelemetry_sdk::trace::SpanExporter for Collected {
    fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> impl std::future::Future<Output = opentelemetry_sdk::error::OTelSdkResult> + Send {
        if let Ok(mut spans) = self.0.lock() {
            spans.extend(batch);
        }
        async { Ok(()) }
    }
}

/// A `ttakji` service as a child process, at the addresses its first line
/// on standard output announced.
pub struct Process {
    pub child: Child,
    /// Where it serves gRPC.
    pub addr: SocketAddr,
    /// Every address it announced, in order (its gRPC listener, then the
    /// others; `metrics` last).
    pub addrs: Vec<SocketAddr>,
    /// The same, by listener name (`authority`, `metrics`, …).
    pub listeners: Vec<(String, SocketAddr)>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    /// Kills the process at once, as a machine that dies would.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The address of the listener `name` announced.
    pub fn listener(&self, name: &str) -> SocketAddr {
        self.listeners
            .iter()
            .find_map(|(n, addr)| (n == name).then_some(*addr))
            .unwrap_or_else(|| panic!("no {name} listener in {:?}", self.listeners))
    }
}

/// The listeners a service's ready line names: `listening`, then
/// `name=address` pairs (see docs/operating.md).
pub fn parse_ready_line(line: &str) -> Option<Vec<(String, SocketAddr)>> {
    let pairs = line.trim_end().strip_prefix("listening ")?;
    pairs
        .split(' ')
        .map(|pair| {
            let (name, addr) = pair.split_once('=')?;
            Some((name.to_owned(), addr.parse().ok()?))
        })
        .collect()
}

/// Where a child process's log goes: to the test's output with `TEST_LOG`
/// set, nowhere otherwise.
pub fn child_log() -> Stdio {
    if std::env::var_os("TEST_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

pub fn spawn(args: &[&str]) -> Process {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ttakji"));
    command
        .args(args)
        .env("TTAKJI_SERVICE_KEY", SERVICE_KEY)
        .env("TTAKJI_LIMITS_EXEMPT", "127.0.0.1")
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned()),
        )
        .stderr(child_log());
    Process::start(command)
}

impl Process {
    /// Runs `command` (a `ttakji` service) and waits for the ready line
    /// its first line on standard output is.
    pub fn start(mut command: Command) -> Process {
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .expect("the ttakji binary starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reads the first line");
        let listeners = parse_ready_line(&line)
            .filter(|listeners| !listeners.is_empty())
            .unwrap_or_else(|| panic!("no ready line but {line:?} from {command:?}"));
        let addrs: Vec<SocketAddr> = listeners.iter().map(|(_, addr)| *addr).collect();
        Process {
            child,
            addr: addrs[0],
            addrs,
            listeners,
        }
    }
}

/// `ttakji authority` as a process on `db` and the tests' Redis, sharing
/// games only within a namespace of its database's own.
pub fn authority_process(db: &str) -> Process {
    let namespace = db.rsplit('/').next().unwrap_or(db);
    spawn(&[
        "authority",
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--database-url",
        db,
        "--redis-url",
        redis_url(),
        "--redis-namespace",
        namespace,
    ])
}

/// An empty point among a few: the computer plays where it likes, so a
/// test's own moves go where there is room.
pub fn free_point(game: &pb::GameSnapshot) -> &'static str {
    ["E5", "C3", "G7", "C7", "G3", "E3", "E7", "C5", "G5"]
        .into_iter()
        .find(|name| {
            let p = baduk::BoardSize::NINE.parse_point(name).expect("point");
            let index = usize::from(p.row()) * 9 + usize::from(p.col());
            game.stones.get(index) == Some(&(pb::Color::Unspecified as i32))
        })
        .expect("one of nine points is empty early in a game")
}

/// A game between two signed-in players, made on the authority at
/// `authority` as the matchmaker makes one: `seconds_per_move` 0 for no
/// clock. Returns its snapshot.
pub async fn game_between(
    authority: SocketAddr,
    black: &Player,
    white: &Player,
    seconds_per_move: u32,
    ranked: bool,
) -> pb::GameSnapshot {
    let seat = |p: &Player| internal::Seat {
        user_id: p.user_id.clone(),
        nickname: String::new(),
        ai_level: 0,
        ..Default::default()
    };
    ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient::new(internal(
        &format!("http://{authority}"),
    ))
    .create_game(internal::CreateGameRequest {
        board_size: 9,
        ruleset: String::new(),
        black: Some(seat(black)),
        white: Some(seat(white)),
        seconds_per_move,
        game_id: String::new(),
        ranked,
        ..Default::default()
    })
    .await
    .expect("the authority makes the game")
    .into_inner()
    .game
    .expect("snapshot")
}

/// A free TCP port on loopback.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A `redis-server` of the test's own on `port`, keeping nothing on disk,
/// with `extra` arguments; up and answering when this returns.
pub fn redis_server(port: u16, extra: &[&str]) -> Child {
    let port_arg = port.to_string();
    let child = Command::new("redis-server")
        .args(["--port", &port_arg, "--save", "", "--appendonly", "no"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server runs");
    wait_for_port(port);
    child
}

/// Waits up to 10 s for something to listen on `port`.
pub fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing came up on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The arguments of `ttakji serve` on the database `db`, its gateway on
/// `listen` and every other listener on a port of its own choosing.
pub fn serve_args(db: &str, listen: &str) -> Vec<String> {
    [
        "serve",
        "--listen",
        listen,
        "--authority-listen",
        "127.0.0.1:0",
        "--matchmaker-listen",
        "127.0.0.1:0",
        "--ratings-listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--database-url",
        db,
        "--token-keys",
        TOKEN_KEYS,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `ttakji serve` as a process on the database `db`, every listener on a
/// port of its own choosing, with `extra` arguments.
pub fn serve_on(db: &str, extra: &[&str]) -> Process {
    let mut args = serve_args(db, "127.0.0.1:0");
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    spawn(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The refusal reasons `docs/errors.md` lists (every `UPPER_SNAKE` word in
/// backquotes).
pub fn documented_reasons() -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/errors.md"))
        .expect("docs/errors.md is readable");
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .map(str::to_owned)
        .collect()
}

/// The reason a refusal carries; fails the test if it carries none or one
/// `docs/errors.md` does not list.
pub fn documented_reason(status: &tonic::Status) -> String {
    use tonic_types::StatusExt as _;
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    assert_eq!(info.domain, "ttakji.app");
    assert!(
        documented_reasons().contains(&info.reason),
        "{} is not in docs/errors.md ({status:?})",
        info.reason
    );
    info.reason
}

/// The statements run in each database, counted by `pg_stat_statements`
/// (which the tests' own cluster preloads; a server named by
/// `TTAKJI_TEST_DATABASE_URL` must too), for tests that bound the round
/// trips a call makes.
pub struct StatementCounts {
    admin: sqlx::PgPool,
}

impl StatementCounts {
    /// Connects to the tests' PostgreSQL and makes sure the counts are kept.
    pub async fn open() -> StatementCounts {
        use sqlx::Executor as _;
        let admin = sqlx::PgPool::connect(ttakji_test_support::postgres_admin_url())
            .await
            .expect("the tests' Postgres");
        admin
            .execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .await
            .expect(
                "pg_stat_statements loads (the tests' own cluster preloads it; a server named \
                 by TTAKJI_TEST_DATABASE_URL must too)",
            );
        StatementCounts { admin }
    }

    /// Starts counting again from zero.
    pub async fn reset(&self) {
        use sqlx::Executor as _;
        self.admin
            .execute("SELECT pg_stat_statements_reset()")
            .await
            .expect("reset the counts");
    }

    /// Statements run in database `name` since the last reset, with how
    /// many times each.
    pub async fn in_database(&self, name: &str) -> Vec<(String, i64)> {
        sqlx::query_as(
            "SELECT query, calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid \
             WHERE d.datname = $1 ORDER BY query",
        )
        .bind(name)
        .fetch_all(&self.admin)
        .await
        .expect("pg_stat_statements is readable")
    }
}

/// The next message on a game's stream that `pick` takes, within 10 s.
pub async fn next_taken<T>(
    stream: &mut tonic::Streaming<pb::WatchGameResponse>,
    pick: impl Fn(pb::WatchGameResponse) -> Option<T>,
) -> T {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("a message in time")
            .expect("the stream goes on")
            .expect("a message");
        if let Some(taken) = pick(message) {
            return taken;
        }
    }
}
