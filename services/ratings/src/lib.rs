//! The ratings service: Elo per board size, applied exactly once per ranked
//! game; the leaderboard and each player's history.
//!
//! Finished games arrive on `ttakji.games.finished`. Pub/sub may lose one,
//! so a reconciliation pass (at start and every minute) asks the authority
//! for the ranked games finished since shortly before the last one applied
//! and applies any without a rating change yet. Applying is one transaction
//! keyed by the game id, so a game delivered twice, or by both paths,
//! changes ratings once. The leaderboard is served from a Redis sorted set
//! per board size, rebuilt from the database when Redis is empty (or from
//! the database alone in the single-process mode).

pub mod elo;
pub mod store;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tonic::{Request, Response, Status};
use ttakji_platform::bus::{self, Bus, Delivery};
use ttakji_platform::grpc::GrpcServer;
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::ratings_service_server::{RatingsService, RatingsServiceServer};

use crate::elo::Outcome;
use crate::store::{RankedGame, Side, Standing};

/// How far back of the last applied game reconciliation looks (clock skew
/// between authorities, games committed out of order).
const RECONCILE_MARGIN_MS: i64 = 10 * 60 * 1000;

/// The ratings service's settings: the flags and `TTAKJI_*` variables of
/// `ttakji ratings`, or [`Config::new`] in code and tests.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Where the gRPC server listens (port 0 picks one): loopback unless
    /// told otherwise, as an internal service; a deployment names the
    /// address the other services reach.
    #[arg(long, env = "TTAKJI_LISTEN", default_value = "127.0.0.1:50054")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served (loopback unless told otherwise); `None`
    /// serves none.
    #[arg(long, env = "TTAKJI_METRICS_LISTEN", default_value = "127.0.0.1:9093")]
    pub metrics_listen: Option<SocketAddr>,
    /// The secret every service shares: calls to this service must carry
    /// it (UNAUTHENTICATED otherwise), and its own calls to other services
    /// carry it. `ttakji ratings` requires it; in code `None` checks nothing.
    #[arg(long, env = "TTAKJI_SERVICE_KEY", hide_env_values = true)]
    pub service_key: Option<ttakji_platform::grpc::ServiceKey>,
    /// The game authorities, for reconciliation: one URL or several
    /// separated by commas; a host name stands for every address.
    #[arg(
        long,
        env = "TTAKJI_AUTHORITY_URL",
        default_value = "http://127.0.0.1:50052"
    )]
    pub authority_url: String,
    /// Redis for the leaderboard; `None` serves it from the database. On
    /// the command line it is required: finished games arrive there too.
    #[arg(
        long,
        env = "TTAKJI_REDIS_URL",
        hide_env_values = true,
        required = true
    )]
    pub redis_url: Option<String>,
    /// The prefix of the leaderboard's Redis keys (`ttakji:ladder:`).
    #[arg(skip = LADDER_PREFIX.to_owned())]
    pub ladder_prefix: String,
    /// Seconds between reconciliation passes (one at the least).
    #[arg(long, env = "TTAKJI_RECONCILE_EVERY", default_value = "60", value_parser = reconcile_interval, value_name = "SECONDS")]
    pub reconcile_every: Duration,
}

impl Config {
    /// Settings for `listen` and `authority_url`: the leaderboard from the
    /// database, reconciling every minute, no metrics.
    #[must_use]
    pub fn new(listen: SocketAddr, authority_url: String) -> Config {
        Config {
            listen,
            metrics_listen: None,
            service_key: None,
            authority_url,
            redis_url: None,
            ladder_prefix: LADDER_PREFIX.to_owned(),
            reconcile_every: Duration::from_secs(60),
        }
    }
}

/// A reconciliation interval from the command line: a pass more often than
/// once a second would only load the authority.
fn reconcile_interval(text: &str) -> Result<Duration, String> {
    ttakji_platform::config::seconds(text).map(|every| every.max(Duration::from_secs(1)))
}

/// Where the leaderboard is read from.
#[derive(Clone)]
enum Ladder {
    Database,
    /// A connection and the key prefix.
    Redis(ttakji_platform::redis_target::SharedConnection, Arc<str>),
}

/// The leaderboard's default key prefix.
pub const LADDER_PREFIX: &str = "ttakji:ladder:";

/// The service's state.
#[derive(Clone)]
pub struct Ratings {
    db: Database,
    ladder: Ladder,
    authority: ttakji_platform::authorities::Authorities,
    cursor: Arc<tokio::sync::Mutex<i64>>,
}

impl std::fmt::Debug for Ratings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ratings")
            .field("db", &self.db.kind())
            .finish_non_exhaustive()
    }
}

fn ladder_key(prefix: &str, board_size: i64) -> String {
    format!("{prefix}{board_size}")
}

/// The ranked game a finished snapshot describes, if it is one.
#[must_use]
pub fn ranked_game(snapshot: &pb::GameSnapshot) -> Option<RankedGame> {
    finished_ranked(
        &snapshot.game_id,
        snapshot.board_size,
        snapshot.finished_at_unix_ms,
        snapshot.ranked && snapshot.status == pb::GameStatus::Finished as i32,
        snapshot.result.as_ref(),
        [snapshot.black.as_ref(), snapshot.white.as_ref()],
    )
}

/// The ranked game a finished game's stored summary describes, if it is one.
#[must_use]
pub fn ranked_summary(summary: &pb::GameSummary) -> Option<RankedGame> {
    finished_ranked(
        &summary.game_id,
        summary.board_size,
        summary.finished_at_unix_ms,
        summary.ranked && summary.status == pb::GameStatus::Finished as i32,
        summary.result.as_ref(),
        [summary.black.as_ref(), summary.white.as_ref()],
    )
}

fn finished_ranked(
    game_id: &str,
    board_size: u32,
    finished_at: i64,
    ranked_and_finished: bool,
    result: Option<&pb::GameResult>,
    [black, white]: [Option<&pb::Player>; 2],
) -> Option<RankedGame> {
    if !ranked_and_finished {
        return None;
    }
    let (result, black, white) = (result?, black?, white?);
    if black.user_id.is_empty() || white.user_id.is_empty() {
        return None;
    }
    let black_outcome = match pb::Color::try_from(result.winner) {
        Ok(pb::Color::Black) => Outcome::Win,
        Ok(pb::Color::White) => Outcome::Loss,
        _ => Outcome::Draw,
    };
    Some(RankedGame {
        game_id: game_id.to_owned(),
        board_size: i64::from(board_size),
        finished_at,
        sides: [
            Side {
                user_id: black.user_id.clone(),
                nickname: black.nickname.clone(),
                outcome: black_outcome,
            },
            Side {
                user_id: white.user_id.clone(),
                nickname: white.nickname.clone(),
                outcome: black_outcome.opposite(),
            },
        ],
    })
}

impl Ratings {
    /// Applies a finished ranked game (once) and updates the leaderboard.
    pub async fn apply(&self, game: &RankedGame) -> Result<bool, Status> {
        let applied = store::apply(&self.db, game, ttakji_platform::now_unix_ms())
            .await
            .map_err(|e| ttakji_platform::store::status(&e, "ratings not stored"))?;
        let Some(standings) = applied else {
            return Ok(false);
        };
        metrics::counter!("ttakji_rating_updates_total").increment(1);
        tracing::info!(game_id = %game.game_id, a = standings[0].rating, b = standings[1].rating, "ratings updated");
        if let Ladder::Redis(conn, prefix) = &self.ladder {
            let mut conn = conn.clone();
            let mut pipe = redis::pipe();
            for s in &standings {
                pipe.cmd("ZADD")
                    .arg(ladder_key(prefix, game.board_size))
                    .arg(s.rating)
                    .arg(&s.user_id);
            }
            if let Err(e) = pipe.query_async::<()>(&mut conn).await {
                // The next rebuild (an empty set) or update corrects it.
                tracing::warn!(error = %e, "leaderboard not updated");
            }
        }
        Ok(true)
    }

    /// Applies every ranked game finished since shortly before the last
    /// applied one that has no rating change yet.
    pub async fn reconcile(&self) -> Result<usize, Status> {
        let mut cursor = self.cursor.lock().await;
        if *cursor == 0 {
            *cursor = store::latest_applied(&self.db)
                .await
                .map_err(store_status)?;
        }
        let mut since = (*cursor - RECONCILE_MARGIN_MS).max(0);
        let mut applied = 0;
        loop {
            let games = self
                .authority
                .ask(
                    pb::ListFinishedGamesRequest {
                        finished_since_unix_ms: since,
                        ranked_only: true,
                        limit: 500,
                    },
                    |mut c, r| async move { c.list_finished_games(r).await },
                )
                .await?
                .into_inner()
                .summaries;
            let full = games.len() == 500;
            for summary in &games {
                if let Some(game) = ranked_summary(summary) {
                    if self.apply(&game).await? {
                        applied += 1;
                    }
                    *cursor = (*cursor).max(game.finished_at);
                }
                since = since.max(summary.finished_at_unix_ms);
            }
            if !full {
                break;
            }
        }
        if applied > 0 {
            tracing::warn!(
                applied,
                "reconciliation applied games the bus did not deliver"
            );
        }
        Ok(applied)
    }

    /// The first `top` places of the ladder, and the `neighbours` places
    /// either side of `around`'s when that player is on it: one store round
    /// trip, however long the page. From Redis, the set is checked against
    /// the ladder's length the same statement reads, and rebuilt from the
    /// store when they differ (Redis restarted or flushed).
    async fn page(
        &self,
        board_size: i64,
        top: usize,
        around: Option<(&str, usize)>,
    ) -> Result<Page, Status> {
        let Ladder::Redis(conn, prefix) = &self.ladder else {
            let rows = store::ladder_page(&self.db, board_size, top, around)
                .await
                .map_err(store_status)?;
            return Ok(Page::from_places(rows, top, around));
        };
        let mut conn = conn.clone();
        let key = ladder_key(prefix, board_size);
        let mut rebuilt = false;
        loop {
            let mut pipe = redis::pipe();
            pipe.cmd("ZCARD").arg(&key);
            // ZREVRANGE 0 -1 would be the whole set.
            pipe.cmd("ZREVRANGE").arg(&key).arg(0).arg(top.max(1) - 1);
            pipe.cmd("ZREVRANK")
                .arg(&key)
                .arg(around.map_or("", |a| a.0));
            let (count, mut top_ids, rank): (u64, Vec<String>, Option<usize>) =
                pipe.query_async(&mut conn).await.map_err(redis_status)?;
            top_ids.truncate(top);
            let (start, around_ids) = match (around, rank) {
                (Some((_, n)), Some(rank)) => {
                    let start = rank.saturating_sub(n);
                    let ids: Vec<String> = redis::cmd("ZREVRANGE")
                        .arg(&key)
                        .arg(start)
                        .arg(rank + n)
                        .query_async(&mut conn)
                        .await
                        .map_err(redis_status)?;
                    (start, ids)
                }
                _ => (0, Vec::new()),
            };
            let mut wanted = top_ids.clone();
            wanted.extend(
                around_ids
                    .iter()
                    .filter(|id| !top_ids.contains(id))
                    .cloned(),
            );
            let (total, standings) = store::standings_of(&self.db, board_size, &wanted)
                .await
                .map_err(store_status)?;
            if total != count && !rebuilt {
                rebuilt = true;
                self.rebuild(&mut conn, &key, board_size).await?;
                continue;
            }
            let by_id: HashMap<&str, &Standing> =
                standings.iter().map(|s| (s.user_id.as_str(), s)).collect();
            let placed = |first: usize, ids: &[String]| -> Vec<(u32, Standing)> {
                ids.iter()
                    .enumerate()
                    .filter_map(|(i, id)| {
                        let s = by_id.get(id.as_str())?;
                        Some((place(first + i + 1), (*s).clone()))
                    })
                    .collect()
            };
            return Ok(Page {
                top: placed(0, &top_ids),
                around: placed(start, &around_ids),
                me: rank.and_then(|rank| {
                    let s = by_id.get(around?.0)?;
                    Some((place(rank + 1), (*s).clone()))
                }),
            });
        }
    }

    /// Writes the whole ladder of a board size into its Redis set.
    async fn rebuild(
        &self,
        conn: &mut ttakji_platform::redis_target::SharedConnection,
        key: &str,
        board_size: i64,
    ) -> Result<(), Status> {
        let all = store::ladder(&self.db, board_size)
            .await
            .map_err(store_status)?;
        tracing::warn!(
            players = all.len(),
            key,
            "rebuilding the leaderboard from the store"
        );
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("DEL").arg(key);
        if !all.is_empty() {
            let cmd = pipe.cmd("ZADD").arg(key);
            for s in &all {
                cmd.arg(s.rating).arg(&s.user_id);
            }
        }
        pipe.query_async::<()>(conn).await.map_err(redis_status)
    }
}

/// What [`Ratings::page`] read: the top places, the places around the
/// player asked about, and that player's own place.
#[derive(Debug, Default)]
struct Page {
    top: Vec<(u32, Standing)>,
    around: Vec<(u32, Standing)>,
    me: Option<(u32, Standing)>,
}

impl Page {
    /// Sorts the rows of [`store::ladder_page`] into a page.
    fn from_places(rows: Vec<(u64, Standing)>, top: usize, around: Option<(&str, usize)>) -> Page {
        let me = around.and_then(|(id, _)| {
            rows.iter()
                .find(|(_, s)| s.user_id == id)
                .map(|(p, s)| (*p, s.clone()))
        });
        let mut page = Page::default();
        for (p, s) in rows {
            let index = usize::try_from(p).unwrap_or(usize::MAX);
            if let (Some((me_place, _)), Some((_, n))) = (&me, around)
                && p.abs_diff(*me_place) <= n as u64
            {
                page.around.push((place(index), s.clone()));
            }
            if index <= top {
                page.top.push((place(index), s));
            }
        }
        page.me = me.map(|(p, s)| (place(usize::try_from(p).unwrap_or(usize::MAX)), s));
        page
    }
}

/// A place on the ladder as the API carries it.
fn place(p: usize) -> u32 {
    u32::try_from(p).unwrap_or(u32::MAX)
}

/// The ratings tables could not be read or written.
fn store_status(e: sqlx::Error) -> Status {
    ttakji_platform::store::status(&e, "ratings could not be read")
}

fn redis_status(e: redis::RedisError) -> Status {
    Status::unavailable(format!("leaderboard: {e}"))
}

fn entry(rank: u32, s: &Standing) -> pb::LadderEntry {
    pb::LadderEntry {
        rank,
        user_id: s.user_id.clone(),
        nickname: s.nickname.clone(),
        rating: i32::try_from(s.rating).unwrap_or(elo::START),
        games: u32::try_from(s.games).unwrap_or(0),
    }
}

fn board_size(size: u32) -> Result<i64, Status> {
    match size {
        0 => Ok(9),
        9 | 13 | 19 => Ok(i64::from(size)),
        other => Err(Status::invalid_argument(format!(
            "board size {other}: use 9, 13 or 19"
        ))),
    }
}

#[tonic::async_trait]
impl RatingsService for Ratings {
    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id))]
    async fn get_rating(
        &self,
        request: Request<pb::GetRatingRequest>,
    ) -> Result<Response<pb::GetRatingResponse>, Status> {
        {
            let req = request.into_inner();
            let size = board_size(req.board_size)?;
            let me = self.page(size, 0, Some((&req.user_id, 0))).await?.me;
            let entry = match me {
                Some((rank, s)) => entry(rank, &s),
                None => pb::LadderEntry {
                    rank: 0,
                    user_id: req.user_id,
                    nickname: String::new(),
                    rating: elo::START,
                    games: 0,
                },
            };
            Ok(Response::new(pb::GetRatingResponse { entry: Some(entry) }))
        }
    }

    #[tracing::instrument(skip_all, fields(board_size = request.get_ref().board_size))]
    async fn get_leaderboard(
        &self,
        request: Request<pb::GetLeaderboardRequest>,
    ) -> Result<Response<pb::GetLeaderboardResponse>, Status> {
        {
            let req = request.into_inner();
            let size = board_size(req.board_size)?;
            let top = match req.top {
                0 => 10,
                n => n.min(100) as usize,
            };
            let around = (!req.around_user_id.is_empty()).then(|| {
                let n = match req.neighbours {
                    0 => 2,
                    n => n.min(10) as usize,
                };
                (req.around_user_id.as_str(), n)
            });
            let page = self.page(size, top, around).await?;
            let entries = |rows: Vec<(u32, Standing)>| -> Vec<pb::LadderEntry> {
                rows.iter().map(|(r, s)| entry(*r, s)).collect()
            };
            let (top, around) = (entries(page.top), entries(page.around));
            Ok(Response::new(pb::GetLeaderboardResponse { top, around }))
        }
    }

    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id))]
    async fn get_rating_history(
        &self,
        request: Request<pb::GetRatingHistoryRequest>,
    ) -> Result<Response<pb::GetRatingHistoryResponse>, Status> {
        {
            let req = request.into_inner();
            let size = if req.board_size == 0 {
                0
            } else {
                board_size(req.board_size)?
            };
            let limit = match req.limit {
                0 => 50,
                n => i64::from(n.min(500)),
            };
            let changes = store::history(&self.db, &req.user_id, size, limit)
                .await
                .map_err(store_status)?
                .into_iter()
                .map(|c| pb::RatingChange {
                    game_id: c.game_id,
                    board_size: u32::try_from(c.board_size).unwrap_or(9),
                    opponent_user_id: c.opponent_id,
                    opponent_nickname: c.opponent_nickname,
                    before: i32::try_from(c.before).unwrap_or(elo::START),
                    after: i32::try_from(c.after).unwrap_or(elo::START),
                    score: c.score_half as f64 / 2.0,
                    at_unix_ms: c.applied_at,
                })
                .collect();
            Ok(Response::new(pb::GetRatingHistoryResponse { changes }))
        }
    }
}

/// A built ratings service, bound and ready to run.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    server: GrpcServer,
    ratings: Ratings,
    bus: Bus,
    reconcile_every: Duration,
    shutdown: Shutdown,
}

impl App {
    /// Binds the listeners and connects to Redis for the leaderboard.
    ///
    /// # Errors
    /// When an address cannot be bound or Redis cannot be reached.
    pub async fn build(
        config: Config,
        db: Database,
        bus: Bus,
        shutdown: Shutdown,
    ) -> anyhow::Result<App> {
        let server = GrpcServer::bind("ratings service", config.listen)
            .await?
            .requiring(config.service_key.clone());
        let addr = server.local_addr()?;
        let metrics_addr = ttakji_platform::metrics::serve_if(
            config.metrics_listen,
            shutdown.clone(),
            "ratings service",
        )
        .await?;
        let ladder = match &config.redis_url {
            Some(url) => Ladder::Redis(
                ttakji_platform::redis_target::RedisTarget::parse(url)?
                    .connection()
                    .await
                    .context("connecting the leaderboard to Redis")?,
                Arc::from(config.ladder_prefix.as_str()),
            ),
            None => Ladder::Database,
        };
        let ratings = Ratings {
            db,
            ladder,
            authority: ttakji_platform::authorities::Authorities::new(&config.authority_url)?
                .with_service_key(config.service_key.clone()),
            cursor: Arc::new(tokio::sync::Mutex::new(0)),
        };
        Ok(App {
            addr,
            metrics_addr,
            server,
            ratings,
            bus,
            reconcile_every: config.reconcile_every,
            shutdown,
        })
    }

    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `/metrics` address, if served.
    #[must_use]
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Serves, applies finished games and reconciles until shutdown.
    ///
    /// # Errors
    /// When the server fails.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let mut finished = self
            .bus
            .subscribe(&bus::games_finished())
            .await
            .context("subscribing to finished games")?;
        let consumer = self.ratings.clone();
        let mut stop = self.shutdown.clone();
        self.shutdown.spawn(async move {
            loop {
                let delivery = tokio::select! {
                    () = stop.wait() => return,
                    d = finished.recv() => d,
                };
                match delivery {
                    Delivery::Message { message: event, .. } => {
                        if let Some(game) = event.snapshot.as_ref().and_then(ranked_game)
                            && let Err(status) = consumer.apply(&game).await
                        {
                            tracing::warn!(%status, "finished game not applied; reconciliation will");
                        }
                    }
                    Delivery::Gap => {
                        let _ = consumer.reconcile().await;
                    }
                    Delivery::Closed => return,
                }
            }
        });
        let reconciler = self.ratings.clone();
        let every = self.reconcile_every;
        let mut stop = self.shutdown.clone();
        self.shutdown.spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tokio::select! {
                    () = stop.wait() => return,
                    _ = tick.tick() => {}
                }
                if let Err(status) = reconciler.reconcile().await {
                    tracing::warn!(%status, "reconciliation failed; it runs again");
                }
            }
        });
        self.server
            .add_service(RatingsServiceServer::new(self.ratings))
            .serve(self.shutdown)
            .await
    }
}
