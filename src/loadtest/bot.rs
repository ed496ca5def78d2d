//! A bot player: a guest account with its own connection to the gateway,
//! which finds games (a friend's challenge code, the queue, a rematch) and
//! plays them with random legal moves, keeping its own board from the
//! game's event stream.

use std::future::Future;
use std::time::Duration;

use anyhow::Context as _;
use baduk::{Action, Color, Point, SplitMix64};
use prost::Message as _;
use tokio::time::Instant;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status, Streaming};
use ttakji_proto::convert;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::game_service_client::GameServiceClient;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

use super::Run;
use super::history::Call;
use super::tally::Tally;

/// How long a unary call may take before it counts as DEADLINE_EXCEEDED.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// A game's stream silent this long is opened again (a connection that
/// died without a word). Longer than a move clock's usual 30 s is not
/// needed: the stream says when the opponent moves or the game ends.
const STREAM_IDLE: Duration = Duration::from_secs(20);

/// One bot player.
#[derive(Debug)]
pub struct Bot {
    pub nickname: String,
    pub user_id: String,
    token: MetadataValue<Ascii>,
    games: GameServiceClient<Channel>,
    matches: MatchServiceClient<Channel>,
    rng: SplitMix64,
}

/// Waits a little longer after each failure, from 20 ms up to a second.
#[derive(Debug)]
struct Backoff(Duration);

impl Backoff {
    const FIRST: Duration = Duration::from_millis(20);
    const MOST: Duration = Duration::from_secs(1);

    fn new() -> Backoff {
        Backoff(Backoff::FIRST)
    }

    async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(Backoff::MOST);
    }

    fn reset(&mut self) {
        self.0 = Backoff::FIRST;
    }
}

/// Whether a call refused with `code` may simply be sent again: the
/// service was away or overloaded, not the request wrong.
fn worth_a_retry(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable
            | Code::DeadlineExceeded
            | Code::Cancelled
            | Code::Unknown
            | Code::Internal
            | Code::Aborted
            | Code::ResourceExhausted
    )
}

/// Runs a unary call (or a stream's opening) with [`CALL_TIMEOUT`], and
/// counts a refusal in the tally.
pub async fn call<T>(
    tally: &Tally,
    call: impl Future<Output = Result<tonic::Response<T>, Status>>,
) -> Result<T, Status> {
    let answer = match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(answer) => answer.map(tonic::Response::into_inner),
        Err(_) => Err(Status::deadline_exceeded(format!(
            "no answer within {CALL_TIMEOUT:?}"
        ))),
    };
    if let Err(status) = &answer {
        tally.refused(status);
    }
    answer
}

/// The next message of a matchmaking stream (which says where things
/// stand about twice a second), a failure or [`CALL_TIMEOUT`] of silence
/// counted in the tally; `None` when the stream has ended or failed.
async fn next<T>(tally: &Tally, stream: &mut Streaming<T>) -> Option<T> {
    let status = match tokio::time::timeout(CALL_TIMEOUT, stream.message()).await {
        Ok(Ok(message)) => return message,
        Ok(Err(status)) => status,
        Err(_) => Status::deadline_exceeded(format!("the stream was silent for {CALL_TIMEOUT:?}")),
    };
    tally.refused(&status);
    None
}

/// A connection to the gateway like a client's: Nagle off, and pings that
/// notice a connection gone dead.
pub fn endpoint(url: &str) -> anyhow::Result<Endpoint> {
    Ok(Endpoint::from_shared(url.to_owned())
        .with_context(|| format!("--gateway-url {url:?} is not a valid URL"))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(10))
        .keep_alive_timeout(Duration::from_secs(10)))
}

/// A connection to the gateway at `endpoint`.
///
/// # Errors
/// When it cannot be reached.
pub async fn connect(endpoint: &Endpoint) -> anyhow::Result<Channel> {
    endpoint
        .connect()
        .await
        .with_context(|| format!("connecting to the gateway at {}", endpoint.uri()))
}

/// Signs a guest in as `nickname` on `channel` (a connection of its own,
/// or one shared with other bots), retrying while the gateway is busy or
/// away.
pub async fn sign_in(channel: Channel, nickname: String, seed: u64) -> anyhow::Result<Bot> {
    let mut auth = AuthServiceClient::new(channel.clone());
    let mut backoff = Backoff::new();
    let mut tries = 0;
    let signed = loop {
        tries += 1;
        let answer = tokio::time::timeout(
            CALL_TIMEOUT,
            auth.sign_in_guest(pb::SignInGuestRequest {
                nickname: nickname.clone(),
            }),
        )
        .await
        .unwrap_or_else(|_| Err(Status::deadline_exceeded("no answer")));
        match answer {
            Ok(signed) => break signed.into_inner(),
            Err(status) if worth_a_retry(status.code()) && tries < 8 => backoff.wait().await,
            Err(status) => anyhow::bail!(
                "the gateway refused to sign in {nickname}: {:?} {}",
                status.code(),
                status.message()
            ),
        }
    };
    let token = format!("Bearer {}", signed.access_token)
        .parse()
        .context("the gateway's token is not a header value")?;
    Ok(Bot {
        nickname,
        user_id: signed.user_id,
        token,
        games: GameServiceClient::new(channel.clone()),
        matches: MatchServiceClient::new(channel),
        rng: SplitMix64::new(seed),
    })
}

/// What a bot knows of its game, from the events its stream delivered.
#[derive(Debug)]
struct View {
    game: baduk::Game,
    snapshot: pb::GameSnapshot,
    seq: u64,
    mine: Color,
    finished: bool,
}

/// Why a bot's own board must be built again from the first event.
#[derive(Debug)]
struct Resync(String);

impl View {
    /// The view at the start of a game, from its first event's snapshot.
    fn start(snapshot: pb::GameSnapshot, seq: u64, me: &str) -> Result<View, Resync> {
        if snapshot.move_count != 0 {
            return Err(Resync(format!(
                "the first event of game {} is after move {}",
                snapshot.game_id, snapshot.move_count
            )));
        }
        let size = baduk::BoardSize::new(snapshot.board_size)
            .map_err(|e| Resync(format!("board size: {e}")))?;
        let ruleset = if snapshot.ruleset.is_empty() {
            "ttakji"
        } else {
            &snapshot.ruleset
        };
        let mut rules = baduk::Rules::named(ruleset)
            .map_err(|e| Resync(format!("ruleset {ruleset:?}: {e}")))?
            .with_board_size(size);
        if let Ok(komi) = baduk::Komi::from_half_points((snapshot.komi * 2.0).round() as i32) {
            rules = rules.with_komi(komi);
        }
        let seat = |p: &Option<pb::Player>| p.as_ref().is_some_and(|p| p.user_id == me);
        let mine = if seat(&snapshot.black) {
            Color::Black
        } else if seat(&snapshot.white) {
            Color::White
        } else {
            return Err(Resync(format!(
                "the bot has no seat in game {}",
                snapshot.game_id
            )));
        };
        Ok(View {
            game: baduk::Game::new(rules),
            snapshot,
            seq,
            mine,
            finished: false,
        })
    }

    /// Whether the bot is to move. The event of a game's last move carries
    /// the game as it was just before it ended, so the bot's own board
    /// says whether the game is over.
    fn my_turn(&self) -> bool {
        !self.finished
            && !self.game.is_over()
            && self.snapshot.to_move == pb::Color::from(self.mine) as i32
            && self.game.to_move() == self.mine
            && self.game.move_number() == self.snapshot.move_count as usize
    }

    /// Plays the event's move on the bot's board; returns the move's
    /// number and colour when it was one.
    fn apply(&mut self, event: pb::GameEvent) -> Result<Option<(u32, Color)>, Resync> {
        if event.seq != self.seq + 1 {
            return Err(Resync(format!(
                "event {} came after event {}",
                event.seq, self.seq
            )));
        }
        let mut played = None;
        match event.kind {
            Some(pb::game_event::Kind::MovePlayed(pb::MovePlayed { r#move: Some(m) })) => {
                let color = convert::color(m.color)
                    .ok_or_else(|| Resync(format!("move {} has no colour", m.number)))?;
                let action = match &m.point {
                    Some(p) => Action::Play(
                        convert::point(p, self.game.rules().board_size)
                            .ok_or_else(|| Resync(format!("move {} is off the board", m.number)))?,
                    ),
                    None => Action::Pass,
                };
                self.game
                    .play(baduk::Move { color, action })
                    .map_err(|e| Resync(format!("move {}: {e}", m.number)))?;
                played = Some((m.number, color));
            }
            Some(pb::game_event::Kind::Finished(_)) => self.finished = true,
            _ => {}
        }
        self.seq = event.seq;
        if let Some(snapshot) = event.snapshot {
            self.snapshot = snapshot;
        } else if let Some(change) = &event.change {
            ttakji_proto::changes::apply(&mut self.snapshot, change)
                .map_err(|e| Resync(format!("event {}: {e}", event.seq)))?;
        }
        if self.snapshot.status == pb::GameStatus::Finished as i32 {
            self.finished = true;
        }
        if self.game.move_number() != self.snapshot.move_count as usize {
            return Err(Resync(format!(
                "the board has {} moves, the game {}",
                self.game.move_number(),
                self.snapshot.move_count
            )));
        }
        Ok(played)
    }
}

/// A random legal point that does not fill the bot's own eye, or a pass
/// when there is none, and now and then when few are left.
fn choose(view: &View, excluded: &[Point], rng: &mut SplitMix64) -> Action {
    let board = view.game.board();
    let size = view.game.rules().board_size;
    let ko: Vec<Point> = view
        .snapshot
        .ko_forbidden
        .iter()
        .filter_map(|p| convert::point(p, size))
        .collect();
    let candidates: Vec<Point> = view
        .game
        .legal_points(view.mine)
        .into_iter()
        .filter(|p| {
            !excluded.contains(p)
                && !ko.contains(p)
                && !board.is_eye_shape(board.vertex(*p), view.mine)
        })
        .collect();
    let few = (board.size().points() / 16).max(2);
    if candidates.is_empty() || (candidates.len() <= few && rng.below(3) == 0) {
        return Action::Pass;
    }
    candidates
        .get(rng.below(candidates.len()))
        .map_or(Action::Pass, |&p| Action::Play(p))
}

/// Follows one event of the game in the bot's view (making the view from
/// the game's first event); returns the move it reported, if any.
fn follow(
    view: &mut Option<View>,
    event: pb::GameEvent,
    me: &str,
    game_id: &str,
    tally: &Tally,
) -> Result<Option<(u32, Color)>, Resync> {
    match view {
        Some(v) if event.seq <= v.seq => Ok(None),
        Some(v) => v.apply(event),
        None => {
            let first = event
                .snapshot
                .clone()
                .ok_or_else(|| Resync("an event without the game".to_owned()))?;
            let mut started = View::start(first, event.seq.saturating_sub(1), me)?;
            let played = started.apply(event)?;
            let bots = [&started.snapshot.black, &started.snapshot.white]
                .into_iter()
                .flatten()
                .filter(|p| tally.is_bot(&p.user_id))
                .count();
            tally.game_seen(game_id, u8::try_from(bots).unwrap_or(2));
            *view = Some(started);
            Ok(played)
        }
    }
}

/// How a turn went.
#[derive(Debug)]
enum Turn {
    /// The move was acknowledged.
    Played(u32),
    /// The move was refused for what it was: look at the game again.
    Refused(Action),
}

impl Bot {
    fn req<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        request
            .metadata_mut()
            .insert("authorization", self.token.clone());
        request
    }

    /// Makes a friend challenge, which `friend` accepts by its code;
    /// returns the game, trying until it is made.
    pub async fn challenge(&self, friend: &Bot, run: &Run) -> String {
        let _turn = run.challenges.acquire().await;
        let tally = &run.tally;
        let mut backoff = Backoff::new();
        loop {
            let made = call(
                tally,
                self.matches
                    .clone()
                    .create_challenge(self.req(pb::CreateChallengeRequest {
                        board_size: run.board_size,
                        ruleset: String::new(),
                        rules: None,
                    })),
            )
            .await;
            if let Ok(mut stream) = made
                && let Some(challenge) = next(tally, &mut stream).await.and_then(|m| m.challenge)
            {
                let joined = call(
                    tally,
                    friend.matches.clone().accept_challenge(friend.req(
                        pb::AcceptChallengeRequest {
                            code: challenge.code,
                        },
                    )),
                )
                .await;
                if let Some(game) = joined.ok().and_then(|j| j.game) {
                    return game.game_id;
                }
            }
            backoff.wait().await;
        }
    }

    /// Queues until matched; returns the game.
    pub async fn find_match(&self, run: &Run) -> String {
        let tally = &run.tally;
        let mut backoff = Backoff::new();
        loop {
            let queued = call(
                tally,
                self.matches
                    .clone()
                    .find_match(self.req(pb::FindMatchRequest {
                        board_size: run.board_size,
                        ranked: false,
                        ruleset: String::new(),
                    })),
            )
            .await;
            if let Ok(mut stream) = queued {
                while let Some(ticket) = next(tally, &mut stream).await.and_then(|m| m.ticket) {
                    if ticket.state == pb::TicketState::Matched as i32 && !ticket.game_id.is_empty()
                    {
                        return ticket.game_id;
                    }
                    if ticket.state == pb::TicketState::Cancelled as i32 {
                        break;
                    }
                }
            }
            backoff.wait().await;
        }
    }

    /// Asks for a rematch of `game_id`; the new game once the opponent
    /// agrees, `None` if it does not come.
    pub async fn rematch(&self, game_id: &str, run: &Run) -> Option<String> {
        let tally = &run.tally;
        let mut stream = call(
            tally,
            self.matches.clone().rematch(self.req(pb::RematchRequest {
                game_id: game_id.to_owned(),
            })),
        )
        .await
        .ok()?;
        while let Some(answer) = next(tally, &mut stream).await {
            if !answer.new_game_id.is_empty() {
                return Some(answer.new_game_id);
            }
        }
        None
    }

    /// Plays `game_id` to its end.
    pub async fn play(&mut self, game_id: &str, run: &Run) {
        let tally = &run.tally;
        let mut view: Option<View> = None;
        let mut stream: Option<Streaming<pb::WatchGameResponse>> = None;
        let mut backoff = Backoff::new();
        // Acknowledged up to this move: the bot waits for its stream to
        // show it before playing again.
        let mut awaiting = 0u32;
        // Points refused at the move being tried.
        let mut refused: (u32, Vec<Point>) = (0, Vec::new());
        loop {
            let Some(events) = stream.as_mut() else {
                let after_seq = view.as_ref().map_or(0, |v| v.seq);
                let watched = call(
                    tally,
                    self.games
                        .clone()
                        .watch_game(self.req(pb::WatchGameRequest {
                            game_id: game_id.to_owned(),
                            after_seq,
                            changes: run.changes,
                        })),
                )
                .await;
                match watched {
                    Ok(s) => stream = Some(s),
                    Err(_) => backoff.wait().await,
                }
                continue;
            };
            if let Some(v) = &view {
                if v.finished {
                    tally.game_ended(game_id);
                    return;
                }
                if v.my_turn() && v.snapshot.move_count >= awaiting {
                    let number = v.snapshot.move_count + 1;
                    if refused.0 != number {
                        refused = (number, Vec::new());
                    }
                    match self.turn(game_id, number, v, &refused.1, run).await {
                        Turn::Played(n) => {
                            awaiting = n;
                            backoff.reset();
                        }
                        Turn::Refused(action) => {
                            match action {
                                Action::Play(p) => refused.1.push(p),
                                Action::Pass => {}
                            }
                            awaiting = self.fresh_look(game_id, number, tally).await;
                        }
                    }
                    continue;
                }
            }
            let message = match tokio::time::timeout(STREAM_IDLE, events.message()).await {
                Ok(Ok(Some(message))) => message,
                Ok(Ok(None)) | Err(_) => {
                    // Ended before the game did, or gone quiet: watch again.
                    stream = None;
                    backoff.wait().await;
                    continue;
                }
                Ok(Err(status)) => {
                    tally.refused(&status);
                    stream = None;
                    backoff.wait().await;
                    continue;
                }
            };
            backoff.reset();
            let at = Instant::now();
            tally.stream_message(message.encoded_len(), at);
            let Some(event) = message.event else { continue };
            match follow(&mut view, event, &self.user_id, game_id, tally) {
                Ok(Some((number, color))) if view.as_ref().is_some_and(|v| v.mine != color) => {
                    tally.move_delivered(game_id, number, at);
                }
                Ok(_) => {}
                Err(Resync(why)) => {
                    eprintln!("{}: game {game_id}: {why}; reading it again", self.nickname);
                    view = None;
                    stream = None;
                    backoff.wait().await;
                }
            }
        }
    }

    /// Sends move `number`, retrying the same move while the gateway is
    /// away (a retry of a move already played gets the same answer).
    async fn turn(
        &mut self,
        game_id: &str,
        number: u32,
        view: &View,
        excluded: &[Point],
        run: &Run,
    ) -> Turn {
        if let Some(pacer) = &run.pacer {
            pacer.wait().await;
        }
        let action = choose(view, excluded, &mut self.rng);
        let tally = &run.tally;
        if run.histories.is_some() {
            self.read_game(game_id, run).await;
        }
        tally.move_sent(game_id, number, Instant::now());
        let mut backoff = Backoff::new();
        loop {
            let sent = Instant::now();
            let recorded = run.histories.as_ref().map(|h| h.sent(game_id, number));
            let mut games = self.games.clone();
            let answer = match action {
                Action::Play(p) => call(
                    tally,
                    games.play_move(self.req(pb::PlayMoveRequest {
                        game_id: game_id.to_owned(),
                        move_number: number,
                        point: Some(pb::Point::from(p)),
                        ..Default::default()
                    })),
                )
                .await
                .map(|answer| answer.game.map(|g| g.move_count)),
                Action::Pass => call(
                    tally,
                    games.pass(self.req(pb::PassRequest {
                        game_id: game_id.to_owned(),
                        move_number: number,
                        ..Default::default()
                    })),
                )
                .await
                .map(|answer| answer.game.map(|g| g.move_count)),
            };
            if let (Some(histories), Some(recorded)) = (&run.histories, recorded) {
                let call = match &answer {
                    Ok(Some(moves)) => Call::Move {
                        number,
                        moves: *moves,
                    },
                    Err(status) if !worth_a_retry(status.code()) => Call::Refused { number },
                    Ok(None) | Err(_) => Call::Unknown { number },
                };
                histories.answered(&recorded, call);
            }
            match answer {
                Ok(_) => {
                    tally.move_acknowledged(game_id, sent, Instant::now());
                    return Turn::Played(number);
                }
                Err(status) if worth_a_retry(status.code()) => backoff.wait().await,
                Err(_) => return Turn::Refused(action),
            }
        }
    }

    /// Reads the game (`GetGame`) and records the read in the run's
    /// histories; the number of moves it shows, if it was answered.
    pub async fn read_game(&self, game_id: &str, run: &Run) -> Option<u32> {
        let sent_us = run.histories.as_ref().map(|h| h.now_us());
        let look = call(
            &run.tally,
            self.games.clone().get_game(self.req(pb::GetGameRequest {
                game_id: game_id.to_owned(),
                include_score_preview: false,
            })),
        )
        .await;
        let moves = look.ok().and_then(|g| g.game).map(|g| g.move_count);
        if let (Some(histories), Some(sent_us), Some(moves)) = (&run.histories, sent_us, moves) {
            histories.read(game_id, sent_us, moves);
        }
        moves
    }

    /// After a refused move: the move count to wait for on the stream
    /// before trying again (the game may have moved on, or ended).
    async fn fresh_look(&self, game_id: &str, number: u32, tally: &Tally) -> u32 {
        let look = call(
            tally,
            self.games.clone().get_game(self.req(pb::GetGameRequest {
                game_id: game_id.to_owned(),
                include_score_preview: false,
            })),
        )
        .await;
        match look.ok().and_then(|g| g.game) {
            Some(game) if game.status == pb::GameStatus::Finished as i32 => u32::MAX,
            Some(game) => game.move_count,
            None => {
                tokio::time::sleep(Backoff::FIRST * 5).await;
                number - 1
            }
        }
    }
}
