//! One live game: a single-writer actor that owns the game's state.
//!
//! Every request for a game goes through its mailbox, so the game changes
//! in one order only. An action is checked by the rules crate, written to
//! the store in one transaction, and only then applied, acknowledged and
//! published; if the write fails the game is exactly as it was. The
//! computer's seat thinks on the blocking pool and sends its decision back
//! through the mailbox, tagged with a generation that an undo advances, so
//! a decision about a position that was taken back is dropped.

use std::time::{Duration, Instant};

use baduk::sgf::Record;
use baduk::{Action, Color, EndReason, Game, GameResult, IllegalMove, Move, Point, Rules, Score};
use baduk_ai::{Decision, Level, MctsPlayer, Settings};
use prost::Message as _;
use tokio::sync::{mpsc, oneshot};
use tonic::Status;
use tracing::Instrument as _;
use ttakji_platform::bus::{self, Bus};
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::v1 as pb;

use crate::convert::{
    color_to_pb, count_to_pb, end_reason_to_pb, komi_points, level_to_pb, point_to_pb, stones,
};
use crate::store::{self, Change, EventRow, FinishRow, GameRow, MoveRow};

/// A seat at the board.
#[derive(Debug, Clone)]
pub struct Seat {
    /// `None` for the computer.
    pub user_id: Option<String>,
    pub name: String,
    pub ai: Option<Level>,
}

/// What a game is apart from its moves.
#[derive(Debug, Clone)]
pub struct GameMeta {
    pub id: String,
    pub rules: Rules,
    pub black: Seat,
    pub white: Seat,
    pub seconds_per_move: u32,
    pub created_at: i64,
    /// Ranked games change ratings.
    pub ranked: bool,
}

impl GameMeta {
    fn seat(&self, color: Color) -> &Seat {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }

    /// The colour `user_id` plays, if any.
    fn color_of(&self, user_id: &str) -> Option<Color> {
        [Color::Black, Color::White]
            .into_iter()
            .find(|&c| self.seat(c).user_id.as_deref() == Some(user_id))
    }

    fn is_ai_game(&self) -> bool {
        self.black.ai.is_some() || self.white.ai.is_some()
    }
}

/// What a player asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerAction {
    Place(Point),
    Pass,
    Resign,
    /// The side's clock ran out (decided by the authority, not asked for).
    TimeOut,
    /// The side accepted the opponent's draw offer.
    AcceptDraw,
}

/// An action as a request carries it: a point is checked against the
/// game's board by the actor, which knows its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    Place(pb::Point),
    Pass,
    Resign,
}

/// How long a game's actor stays in memory with no request.
pub const IDLE: Duration = Duration::from_secs(600);

/// How the computer seats search, for all games of this authority.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AiConfig {
    /// Caps each level's playouts per move (tests and small machines).
    #[arg(
        long = "ai-max-playouts",
        env = "TTAKJI_AI_MAX_PLAYOUTS",
        value_name = "PLAYOUTS"
    )]
    pub max_playouts: Option<u32>,
    /// Fixes the seed so games repeat (tests).
    #[arg(skip)]
    pub seed: Option<u64>,
}

/// What the actor is asked.
#[derive(Debug)]
pub enum Command {
    Snapshot {
        preview: bool,
        reply: oneshot::Sender<pb::GameSnapshot>,
    },
    Submit {
        /// The request's span: the work is done inside it, so the stored
        /// write and the published events belong to the caller's trace.
        span: tracing::Span,
        user_id: String,
        number: u32,
        action: Requested,
        reply: oneshot::Sender<Result<(Option<pb::Move>, pb::GameSnapshot), Status>>,
    },
    TakeBack {
        span: tracing::Span,
        user_id: String,
        move_count: u32,
        reply: oneshot::Sender<Result<pb::GameSnapshot, Status>>,
    },
    Preview {
        reply: oneshot::Sender<pb::Count>,
    },
    Export {
        reply: oneshot::Sender<String>,
    },
    OfferDraw {
        span: tracing::Span,
        user_id: String,
        reply: oneshot::Sender<Result<pb::GameSnapshot, Status>>,
    },
    AnswerDraw {
        span: tracing::Span,
        user_id: String,
        accept: bool,
        reply: oneshot::Sender<Result<pb::GameSnapshot, Status>>,
    },
    AiDecided {
        generation: u64,
        decision: Decision,
        player: Box<MctsPlayer>,
        think: Duration,
    },
}

/// How a game ended, with its count when it was counted.
#[derive(Debug, Clone)]
struct Finished {
    result: GameResult,
    reason: EndReason,
    count: Option<Score>,
}

/// The actor's state.
pub struct LiveGame {
    meta: GameMeta,
    game: Game,
    /// Stones each move took off, move by move.
    captured: Vec<Vec<Point>>,
    /// The last event's sequence number.
    seq: u64,
    finished: Option<Finished>,
    /// The computer's player while it is not thinking.
    ai_player: Option<Box<MctsPlayer>>,
    ai_config: AiConfig,
    thinking: bool,
    generation: u64,
    /// When the side to move runs out of time (Unix ms); online games only.
    deadline: Option<i64>,
    /// The side whose draw offer stands.
    draw_offer: Option<Color>,
    /// When the game ended (Unix ms); 0 while it goes on.
    finished_at: i64,
    db: Database,
    bus: Bus,
    mailbox: mpsc::Sender<Command>,
}

impl std::fmt::Debug for LiveGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveGame")
            .field("id", &self.meta.id)
            .field("moves", &self.game.move_number())
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

/// Why stored data could not be made into a game.
fn corrupt(game_id: &str, what: impl std::fmt::Display) -> Status {
    tracing::error!(game_id, %what, "stored game cannot be replayed");
    Status::data_loss(format!(
        "game {game_id} is stored in a form this server cannot replay: {what}"
    ))
}

fn storage_error(e: &sqlx::Error) -> Status {
    tracing::error!(error = %e, "storage error");
    Status::unavailable("the game could not be stored; nothing was changed, try again")
}

fn color_letter(c: Color) -> &'static str {
    match c {
        Color::Black => "B",
        Color::White => "W",
    }
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "Black",
        Color::White => "White",
    }
}

fn end_reason_text(reason: EndReason) -> String {
    match reason {
        EndReason::TwoPasses => "two_passes".to_owned(),
        EndReason::MoveCap => "move_cap".to_owned(),
        EndReason::Resignation { winner } => format!("resignation:{}", color_letter(winner)),
        EndReason::Timeout { winner } => format!("timeout:{}", color_letter(winner)),
        EndReason::DrawAgreed => "draw_agreed".to_owned(),
    }
}

/// The refusal reason label for metrics.
fn refusal_reason(e: &IllegalMove) -> &'static str {
    match e {
        IllegalMove::GameOver => "game_over",
        IllegalMove::NotYourTurn { .. } => "not_your_turn",
        IllegalMove::OffBoard { .. } => "off_board",
        IllegalMove::Occupied { .. } => "occupied",
        IllegalMove::Suicide { .. } => "suicide",
        IllegalMove::Ko { .. } => "ko",
        IllegalMove::Superko { .. } => "superko",
    }
}

fn refuse(reason: &'static str, status: Status) -> Status {
    metrics::counter!("ttakji_moves_refused_total", "reason" => reason).increment(1);
    status
}

impl LiveGame {
    /// A new game's actor state and its first event (not yet stored).
    pub fn create(
        meta: GameMeta,
        ai_config: AiConfig,
        db: Database,
        bus: Bus,
        mailbox: mpsc::Sender<Command>,
    ) -> LiveGame {
        let game = Game::new(meta.rules);
        let deadline = (meta.seconds_per_move > 0)
            .then(|| meta.created_at + i64::from(meta.seconds_per_move) * 1000);
        let mut live = LiveGame {
            deadline,
            draw_offer: None,
            finished_at: 0,
            ai_player: None,
            meta,
            game,
            captured: Vec::new(),
            seq: 0,
            finished: None,
            ai_config,
            thinking: false,
            generation: 0,
            db,
            bus,
            mailbox,
        };
        live.ai_player = live.new_ai_player();
        live
    }

    /// The row and first event of a new game, to store before it exists.
    pub fn creation_records(&mut self) -> (GameRow, EventRow, pb::GameEvent) {
        let seat_row = |s: &Seat| store::SeatRow {
            user_id: s.user_id.clone(),
            name: s.name.clone(),
            ai_level: s.ai.map(|l| l.name().to_owned()),
        };
        let row = GameRow {
            id: self.meta.id.clone(),
            board_size: i64::from(self.meta.rules.board_size.get()),
            ruleset: self.meta.rules.preset.name().to_owned(),
            komi_half: i64::from(self.meta.rules.komi.half_points()),
            black: seat_row(&self.meta.black),
            white: seat_row(&self.meta.white),
            seconds_per_move: i64::from(self.meta.seconds_per_move),
            finished: false,
            end_reason: None,
            created_at: self.meta.created_at,
            deadline_at: self.deadline,
            draw_offered_by: None,
            ranked: self.meta.ranked,
            finished_at: None,
        };
        self.seq = 1;
        let event = self.event(1, pb::game_event::Kind::Started(pb::GameStarted {}));
        let stored = EventRow {
            seq: 1,
            payload: event.encode_to_vec(),
        };
        (row, stored, event)
    }

    /// Rebuilds a game from its stored row and moves.
    pub fn restore(
        row: GameRow,
        moves: Vec<MoveRow>,
        last_seq: i64,
        ai_config: AiConfig,
        db: Database,
        bus: Bus,
        mailbox: mpsc::Sender<Command>,
    ) -> Result<LiveGame, Status> {
        let id = row.id.clone();
        let size = u32::try_from(row.board_size)
            .ok()
            .and_then(|s| baduk::BoardSize::new(s).ok())
            .ok_or_else(|| corrupt(&id, format!("board size {}", row.board_size)))?;
        let komi = i32::try_from(row.komi_half)
            .ok()
            .and_then(|k| baduk::Komi::from_half_points(k).ok())
            .ok_or_else(|| corrupt(&id, format!("komi {} half points", row.komi_half)))?;
        let rules = Rules::named(&row.ruleset)
            .map_err(|e| corrupt(&id, e))?
            .with_board_size(size)
            .with_komi(komi);
        let seat = |s: &store::SeatRow| -> Result<Seat, Status> {
            Ok(Seat {
                user_id: s.user_id.clone(),
                name: s.name.clone(),
                ai: s
                    .ai_level
                    .as_deref()
                    .map(Level::parse)
                    .transpose()
                    .map_err(|e| corrupt(&id, e))?,
            })
        };
        let meta = GameMeta {
            id: id.clone(),
            rules,
            black: seat(&row.black)?,
            white: seat(&row.white)?,
            seconds_per_move: u32::try_from(row.seconds_per_move).unwrap_or(0),
            created_at: row.created_at,
            ranked: row.ranked,
        };
        let mut live = LiveGame::create(meta, ai_config, db, bus, mailbox);
        for m in &moves {
            let color = match m.color.as_str() {
                "B" => Color::Black,
                "W" => Color::White,
                other => {
                    return Err(corrupt(
                        &id,
                        format!("move {} has colour {other:?}", m.number),
                    ));
                }
            };
            let action = match &m.point {
                None => Action::Pass,
                Some(p) => Action::Play(size.parse_point(p).map_err(|e| corrupt(&id, e))?),
            };
            let outcome = live
                .game
                .play(Move { color, action })
                .map_err(|e| corrupt(&id, format!("move {}: {e}", m.number)))?;
            live.captured.push(outcome.captured);
        }
        if let Some(reason) = row.end_reason.as_deref() {
            let winner = |s: &str| match s {
                "B" => Ok(Color::Black),
                "W" => Ok(Color::White),
                other => Err(corrupt(&id, format!("end reason names colour {other:?}"))),
            };
            match reason.split_once(':') {
                Some(("resignation", w)) => {
                    live.game
                        .resign(winner(w)?.opponent())
                        .map_err(|e| corrupt(&id, e))?;
                }
                Some(("timeout", w)) => {
                    live.game
                        .time_out(winner(w)?.opponent())
                        .map_err(|e| corrupt(&id, e))?;
                }
                None if reason == "draw_agreed" => {
                    live.game.agree_draw().map_err(|e| corrupt(&id, e))?;
                }
                _ => {}
            }
        }
        live.seq = u64::try_from(last_seq).unwrap_or(0);
        live.deadline = row.deadline_at;
        live.finished_at = row.finished_at.unwrap_or_default();
        live.draw_offer = match row.draw_offered_by.as_deref() {
            Some("B") => Some(Color::Black),
            Some("W") => Some(Color::White),
            _ => None,
        };
        if let Some(reason) = live.game.end() {
            live.finished = Some(live.finish_of(reason));
        }
        Ok(live)
    }

    /// Whether the game goes on.
    pub fn is_playing(&self) -> bool {
        self.finished.is_none()
    }

    fn new_ai_player(&self) -> Option<Box<MctsPlayer>> {
        let level = self.meta.black.ai.or(self.meta.white.ai)?;
        let mut settings = Settings::for_level(level);
        if let Some(cap) = self.ai_config.max_playouts {
            settings.budget.playouts = settings.budget.playouts.min(cap);
        }
        settings.seed = self.ai_config.seed;
        Some(Box::new(MctsPlayer::with_settings(level, settings)))
    }

    /// The actor's loop: runs until shutdown.
    /// The actor's loop: runs until shutdown, or until the game has been
    /// left alone for [`IDLE`] with nothing to think about (it is reloaded
    /// from the store on the next request).
    pub async fn run(mut self, mut inbox: mpsc::Receiver<Command>, mut shutdown: Shutdown) {
        self.think_if_computer_to_move();
        loop {
            let deadline = self.deadline.filter(|_| self.is_playing());
            let command = tokio::select! {
                () = shutdown.wait() => break,
                () = ttakji_platform::sleep_until_unix_ms(deadline.unwrap_or(i64::MAX)), if deadline.is_some() => {
                    self.time_out().await;
                    continue;
                }
                command = inbox.recv() => command,
                () = tokio::time::sleep(IDLE), if !self.thinking && deadline.is_none() => {
                    tracing::debug!(game_id = %self.meta.id, "idle game unloaded");
                    break;
                }
            };
            let Some(command) = command else { break };
            self.handle(command).await;
        }
        if self.is_playing() {
            metrics::gauge!("ttakji_live_games").decrement(1.0);
        }
    }

    async fn handle(&mut self, command: Command) {
        // A request that arrives after the deadline, before the timer has
        // fired, finds the game already lost on time.
        if self.is_playing()
            && self
                .deadline
                .is_some_and(|d| ttakji_platform::now_unix_ms() >= d)
        {
            self.time_out().await;
        }
        match command {
            Command::Snapshot { preview, reply } => {
                let _ = reply.send(self.snapshot(preview));
            }
            Command::Preview { reply } => {
                let _ = reply.send(count_to_pb(&self.game.score_preview()));
            }
            Command::Export { reply } => {
                let _ = reply.send(self.sgf());
            }
            Command::Submit {
                span,
                user_id,
                number,
                action,
                reply,
            } => {
                let started = Instant::now();
                let result = match action {
                    Requested::Pass => Ok(PlayerAction::Pass),
                    Requested::Resign => Ok(PlayerAction::Resign),
                    Requested::Place(p) => crate::convert::point(&p, self.meta.rules.board_size)
                        .map(PlayerAction::Place),
                };
                let result = match result {
                    Ok(action) => {
                        self.submit(&user_id, number, action)
                            .instrument(span.clone())
                            .await
                    }
                    Err(status) => Err(status),
                };
                metrics::histogram!("ttakji_move_handling_seconds")
                    .record(started.elapsed().as_secs_f64());
                let events = match result {
                    Ok((mv, snapshot, events)) => {
                        let _ = reply.send(Ok((mv, snapshot)));
                        events
                    }
                    Err(status) => {
                        let _ = reply.send(Err(status));
                        Vec::new()
                    }
                };
                self.publish(events).instrument(span).await;
                self.think_if_computer_to_move();
            }
            Command::TakeBack {
                span,
                user_id,
                move_count,
                reply,
            } => {
                match self
                    .take_back(&user_id, move_count)
                    .instrument(span.clone())
                    .await
                {
                    Ok((snapshot, events)) => {
                        let _ = reply.send(Ok(snapshot));
                        self.publish(events).instrument(span).await;
                    }
                    Err(status) => {
                        let _ = reply.send(Err(status));
                    }
                }
                self.think_if_computer_to_move();
            }
            Command::OfferDraw {
                span,
                user_id,
                reply,
            } => {
                let result = self.offer_draw(&user_id).instrument(span.clone()).await;
                self.answer_with_events(result, reply, span).await;
            }
            Command::AnswerDraw {
                span,
                user_id,
                accept,
                reply,
            } => {
                let result = self
                    .answer_draw(&user_id, accept)
                    .instrument(span.clone())
                    .await;
                self.answer_with_events(result, reply, span).await;
            }
            Command::AiDecided {
                generation,
                decision,
                player,
                think,
            } => {
                self.thinking = false;
                // A finished game needs no player (nor its search tree).
                self.ai_player = self.is_playing().then_some(player);
                if generation == self.generation {
                    self.play_computer_move(decision, think).await;
                }
                self.think_if_computer_to_move();
            }
        }
    }

    async fn answer_with_events(
        &mut self,
        result: Result<(pb::GameSnapshot, Vec<pb::GameEvent>), Status>,
        reply: oneshot::Sender<Result<pb::GameSnapshot, Status>>,
        span: tracing::Span,
    ) {
        match result {
            Ok((snapshot, events)) => {
                let _ = reply.send(Ok(snapshot));
                self.publish(events).instrument(span).await;
            }
            Err(status) => {
                let _ = reply.send(Err(status));
            }
        }
    }

    /// The side to move ran out of time: it loses, whatever the board says.
    async fn time_out(&mut self) {
        if !self.is_playing() {
            return;
        }
        let loser = self.game.to_move();
        tracing::info!(game_id = %self.meta.id, loser = color_name(loser), "time ran out");
        match self.apply(loser, PlayerAction::TimeOut).await {
            Ok((_, _, events)) => self.publish(events).await,
            Err(status) => {
                tracing::error!(game_id = %self.meta.id, %status, "timeout not stored; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }

    /// The player of `user_id` and a check that the game is an online one
    /// still being played, for draw offers.
    fn draw_player(&self, user_id: &str) -> Result<Color, Status> {
        let color = self.meta.color_of(user_id).ok_or_else(|| {
            Status::permission_denied(format!("you are not a player in game {}", self.meta.id))
        })?;
        if let Some(finished) = &self.finished {
            return Err(Status::failed_precondition(format!(
                "game {} is over: {}",
                self.meta.id, finished.reason
            )));
        }
        if self.meta.is_ai_game() {
            return Err(Status::failed_precondition(
                "the computer does not take draw offers: resign or play on",
            ));
        }
        Ok(color)
    }

    #[tracing::instrument(skip(self), fields(game_id = %self.meta.id, user_id))]
    async fn offer_draw(
        &mut self,
        user_id: &str,
    ) -> Result<(pb::GameSnapshot, Vec<pb::GameEvent>), Status> {
        let color = self.draw_player(user_id)?;
        match self.draw_offer {
            // Offered already: the same answer.
            Some(c) if c == color => Ok((self.snapshot(false), Vec::new())),
            // Both want a draw.
            Some(_) => self
                .apply(color, PlayerAction::AcceptDraw)
                .await
                .map(|(_, snapshot, events)| (snapshot, events)),
            None => {
                let kind = pb::game_event::Kind::DrawOffered(pb::DrawOffered {
                    by: color_to_pb(color) as i32,
                });
                self.store_draw_state(Some(color), kind).await
            }
        }
    }

    #[tracing::instrument(skip(self), fields(game_id = %self.meta.id, user_id))]
    async fn answer_draw(
        &mut self,
        user_id: &str,
        accept: bool,
    ) -> Result<(pb::GameSnapshot, Vec<pb::GameEvent>), Status> {
        let color = self.draw_player(user_id)?;
        if self.draw_offer != Some(color.opponent()) {
            return Err(Status::failed_precondition(
                "there is no draw offer from your opponent to answer",
            ));
        }
        if accept {
            return self
                .apply(color, PlayerAction::AcceptDraw)
                .await
                .map(|(_, snapshot, events)| (snapshot, events));
        }
        let kind = pb::game_event::Kind::DrawDeclined(pb::DrawDeclined {
            by: color_to_pb(color) as i32,
        });
        self.store_draw_state(None, kind).await
    }

    /// Sets the standing draw offer, with its event, stored first.
    async fn store_draw_state(
        &mut self,
        offer: Option<Color>,
        kind: pb::game_event::Kind,
    ) -> Result<(pb::GameSnapshot, Vec<pb::GameEvent>), Status> {
        let previous = (self.draw_offer, self.seq);
        self.draw_offer = offer;
        self.seq += 1;
        let event = self.event(self.seq, kind);
        let change = Change {
            deadline_at: self.deadline,
            draw_offered_by: offer.map(|c| color_letter(c).to_owned()),
            events: vec![EventRow {
                seq: event.seq as i64,
                payload: event.encode_to_vec(),
            }],
            ..Change::default()
        };
        if let Err(e) = store::apply(
            &self.db,
            &self.meta.id,
            &change,
            ttakji_platform::now_unix_ms(),
        )
        .await
        {
            (self.draw_offer, self.seq) = previous;
            return Err(storage_error(&e));
        }
        Ok((self.snapshot(false), vec![event]))
    }

    /// The computer's seat colour, if it is to move now.
    fn computer_to_move(&self) -> Option<(Color, Level)> {
        if !self.is_playing() {
            return None;
        }
        let color = self.game.to_move();
        self.meta.seat(color).ai.map(|level| (color, level))
    }

    fn think_if_computer_to_move(&mut self) {
        if self.thinking || self.computer_to_move().is_none() {
            return;
        }
        let Some(mut player) = self.ai_player.take() else {
            return;
        };
        self.thinking = true;
        let game = self.game.clone();
        let generation = self.generation;
        let mailbox = self.mailbox.clone();
        let game_id = self.meta.id.clone();
        let span = tracing::info_span!("ai.think", game_id = %game_id, level = player.level().name(), move_number = game.move_number() + 1);
        // The search is CPU-bound: it runs on the blocking pool so it never
        // stalls the runtime's other games.
        tokio::task::spawn_blocking(move || {
            let _entered = span.enter();
            let started = Instant::now();
            let decision = player.decide(&game);
            let think = started.elapsed();
            metrics::histogram!("ttakji_ai_think_seconds", "level" => player.level().name())
                .record(think.as_secs_f64());
            tracing::debug!(?decision, think_ms = think.as_millis(), "computer decided");
            let _ = mailbox.blocking_send(Command::AiDecided {
                generation,
                decision,
                player,
                think,
            });
        });
    }

    async fn play_computer_move(&mut self, decision: Decision, think: Duration) {
        let Some((color, _)) = self.computer_to_move() else {
            return;
        };
        let action = match decision {
            Decision::Play(p) if self.game.check(color, p).is_ok() => PlayerAction::Place(p),
            Decision::Play(p) => {
                tracing::warn!(game_id = %self.meta.id, point = %p, "computer chose an illegal point; it passes");
                PlayerAction::Pass
            }
            Decision::Pass => PlayerAction::Pass,
            Decision::Resign => PlayerAction::Resign,
        };
        tracing::info!(game_id = %self.meta.id, ?action, think_ms = think.as_millis(), "computer moves");
        match self.apply(color, action).await {
            Ok((_, _, events)) => self.publish(events).await,
            Err(status) => {
                tracing::error!(game_id = %self.meta.id, %status, "computer's move not stored")
            }
        }
    }

    #[tracing::instrument(skip(self), fields(game_id = %self.meta.id, user_id))]
    async fn submit(
        &mut self,
        user_id: &str,
        number: u32,
        action: PlayerAction,
    ) -> Result<(Option<pb::Move>, pb::GameSnapshot, Vec<pb::GameEvent>), Status> {
        let color = self.meta.color_of(user_id).ok_or_else(|| {
            refuse(
                "not_a_player",
                Status::permission_denied(format!("you are not a player in game {}", self.meta.id)),
            )
        })?;
        if action == PlayerAction::Resign {
            if let Some(Finished {
                reason: EndReason::Resignation { winner },
                ..
            }) = &self.finished
                && *winner == color.opponent()
            {
                // A retried resignation: the same answer.
                return Ok((None, self.snapshot(false), Vec::new()));
            }
            return self.apply(color, action).await;
        }
        let played = self.game.move_number();
        let expected = played + 1;
        let number = number as usize;
        if number == 0 {
            return Err(refuse(
                "bad_number",
                Status::invalid_argument(format!(
                    "move_number is 0: the next move is number {expected}"
                )),
            ));
        }
        if number < expected {
            // A retry of a move already played gets the same answer.
            let earlier = self.game.moves()[number - 1];
            let asked = match action {
                PlayerAction::Place(p) => Action::Play(p),
                _ => Action::Pass,
            };
            if earlier.color == color && earlier.action == asked {
                return Ok((Some(self.move_pb(number)), self.snapshot(false), Vec::new()));
            }
            return Err(refuse(
                "stale",
                Status::failed_precondition(format!(
                    "move {number} has already been played; the next move is number {expected}"
                )),
            ));
        }
        if number > expected {
            return Err(refuse(
                "stale",
                Status::failed_precondition(format!(
                    "move {number} is not next: the next move is number {expected}"
                )),
            ));
        }
        self.apply(color, action).await
    }

    /// Checks, stores, then applies an action of `color`.
    async fn apply(
        &mut self,
        color: Color,
        action: PlayerAction,
    ) -> Result<(Option<pb::Move>, pb::GameSnapshot, Vec<pb::GameEvent>), Status> {
        if let Some(finished) = &self.finished {
            return Err(refuse(
                "game_over",
                Status::failed_precondition(format!(
                    "game {} is over: {}",
                    self.meta.id, finished.reason
                )),
            ));
        }
        let backup = (
            self.game.clone(),
            self.captured.len(),
            self.seq,
            self.finished.clone(),
            self.deadline,
            self.draw_offer,
        );
        let mut change = Change::default();
        let mut events = Vec::new();
        let mut played = None;
        match action {
            PlayerAction::Resign => {
                self.game.resign(color).map_err(|e| {
                    refuse(
                        refusal_reason(&e),
                        Status::failed_precondition(e.to_string()),
                    )
                })?;
            }
            PlayerAction::TimeOut => {
                self.game.time_out(color).map_err(|e| {
                    refuse(
                        refusal_reason(&e),
                        Status::failed_precondition(e.to_string()),
                    )
                })?;
            }
            PlayerAction::AcceptDraw => {
                self.game.agree_draw().map_err(|e| {
                    refuse(
                        refusal_reason(&e),
                        Status::failed_precondition(e.to_string()),
                    )
                })?;
            }
            PlayerAction::Place(_) | PlayerAction::Pass => {
                let mv = Move {
                    color,
                    action: match action {
                        PlayerAction::Place(p) => Action::Play(p),
                        _ => Action::Pass,
                    },
                };
                if self.game.to_move() != color {
                    return Err(refuse(
                        "not_your_turn",
                        Status::failed_precondition(format!(
                            "it is {}'s turn",
                            color_name(self.game.to_move())
                        )),
                    ));
                }
                let outcome = self.game.play(mv).map_err(|e| {
                    refuse(
                        refusal_reason(&e),
                        Status::failed_precondition(e.to_string()),
                    )
                })?;
                self.captured.push(outcome.captured);
                let number = outcome.move_number;
                change.insert_move = Some(MoveRow {
                    number: number as i64,
                    color: color_letter(color).to_owned(),
                    point: match mv.action {
                        Action::Play(p) => Some(p.to_string()),
                        Action::Pass => None,
                    },
                });
                // The next move has its full time again; a standing draw
                // offer lapses with the move.
                self.draw_offer = None;
                if self.meta.seconds_per_move > 0 {
                    self.deadline = Some(
                        ttakji_platform::now_unix_ms()
                            + i64::from(self.meta.seconds_per_move) * 1000,
                    );
                }
                let mv_pb = self.move_pb(number);
                self.seq += 1;
                let mut event = self.event(
                    self.seq,
                    pb::game_event::Kind::MovePlayed(pb::MovePlayed {
                        r#move: Some(mv_pb.clone()),
                    }),
                );
                // After a pass the opponent sees, unasked, how the game
                // would be counted if they passed too.
                if mv.action == Action::Pass
                    && !self.game.is_over()
                    && let Some(snapshot) = event.snapshot.as_mut()
                {
                    snapshot.score_preview = Some(count_to_pb(&self.game.score_preview()));
                }
                events.push(event);
                played = Some(mv_pb);
            }
        }
        if let Some(reason) = self.game.end() {
            self.deadline = None;
            self.draw_offer = None;
            self.finished_at = ttakji_platform::now_unix_ms();
            let finished = self.finish_of(reason);
            change.finish = Some(FinishRow {
                end_reason: end_reason_text(reason),
                result: finished.result.to_string(),
                black_points: finished.count.as_ref().map(|c| i64::from(c.black)),
                white_points: finished.count.as_ref().map(|c| i64::from(c.white)),
                dead_stones: finished
                    .count
                    .as_ref()
                    .map(|c| {
                        c.dead
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default(),
                sgf: String::new(),
            });
            self.finished = Some(finished);
            if let Some(f) = change.finish.as_mut() {
                f.sgf = self.sgf();
            }
            self.seq += 1;
            let result = self.result_pb();
            events.push(self.event(
                self.seq,
                pb::game_event::Kind::Finished(pb::GameFinished { result }),
            ));
        }
        change.events = events
            .iter()
            .map(|e| EventRow {
                seq: e.seq as i64,
                payload: e.encode_to_vec(),
            })
            .collect();
        change.deadline_at = self.deadline;
        change.draw_offered_by = self.draw_offer.map(|c| color_letter(c).to_owned());
        if let Err(e) = store::apply(
            &self.db,
            &self.meta.id,
            &change,
            ttakji_platform::now_unix_ms(),
        )
        .await
        {
            (
                self.game,
                self.seq,
                self.finished,
                self.deadline,
                self.draw_offer,
            ) = (backup.0, backup.2, backup.3, backup.4, backup.5);
            self.captured.truncate(backup.1);
            return Err(storage_error(&e));
        }
        metrics::counter!("ttakji_moves_accepted_total").increment(1);
        if self.finished.is_some() {
            metrics::gauge!("ttakji_live_games").decrement(1.0);
        }
        Ok((played, self.snapshot(false), events))
    }

    #[tracing::instrument(skip(self), fields(game_id = %self.meta.id, user_id))]
    async fn take_back(
        &mut self,
        user_id: &str,
        move_count: u32,
    ) -> Result<(pb::GameSnapshot, Vec<pb::GameEvent>), Status> {
        let color = self.meta.color_of(user_id).ok_or_else(|| {
            Status::permission_denied(format!("you are not a player in game {}", self.meta.id))
        })?;
        if !self.meta.is_ai_game() {
            return Err(Status::failed_precondition(
                "undo is offered only in games against the computer",
            ));
        }
        if self.finished.is_some() {
            return Err(Status::failed_precondition(format!(
                "game {} is over",
                self.meta.id
            )));
        }
        let played = self.game.move_number();
        if move_count as usize != played {
            return Err(Status::failed_precondition(format!(
                "the game is at move {played}, not {move_count}: look again before undoing"
            )));
        }
        // Back to the player's last turn: their move, and the reply if any.
        let mine = self.game.moves().iter().rposition(|m| m.color == color);
        let Some(mine) = mine else {
            return Err(Status::failed_precondition("you have no move to undo"));
        };
        let backup = (self.game.clone(), self.captured.clone(), self.seq);
        let mut undone = Vec::new();
        while self.game.move_number() > mine {
            let number = self.game.move_number();
            let mv_pb = self.move_pb(number);
            self.game
                .undo()
                .map_err(|e| Status::failed_precondition(e.to_string()))?;
            self.captured.pop();
            undone.push(mv_pb);
        }
        self.generation += 1;
        self.seq += 1;
        let event = self.event(
            self.seq,
            pb::game_event::Kind::MovesUndone(pb::MovesUndone { moves: undone }),
        );
        let change = Change {
            truncate_after: Some(mine as i64),
            deadline_at: self.deadline,
            draw_offered_by: self.draw_offer.map(|c| color_letter(c).to_owned()),
            events: vec![EventRow {
                seq: event.seq as i64,
                payload: event.encode_to_vec(),
            }],
            ..Change::default()
        };
        if let Err(e) = store::apply(
            &self.db,
            &self.meta.id,
            &change,
            ttakji_platform::now_unix_ms(),
        )
        .await
        {
            (self.game, self.captured, self.seq) = backup;
            return Err(storage_error(&e));
        }
        Ok((self.snapshot(false), vec![event]))
    }

    fn finish_of(&self, reason: EndReason) -> Finished {
        let count = reason.is_counted().then(|| self.game.score_preview());
        let result = match &count {
            Some(score) => score.result(),
            None => self.game.result().unwrap_or(GameResult::DrawAgreed),
        };
        Finished {
            result,
            reason,
            count,
        }
    }

    async fn publish(&self, events: Vec<pb::GameEvent>) {
        let channel = bus::game_channel(&self.meta.id);
        for event in events {
            let finished = matches!(event.kind, Some(pb::game_event::Kind::Finished(_)));
            let payload = event.encode_to_vec();
            if finished
                && let Err(e) = self
                    .bus
                    .publish(bus::GAMES_FINISHED, "ttakji.v1.GameEvent", payload.clone())
                    .await
            {
                tracing::warn!(error = %e, "finished game not announced; consumers reconcile from the store");
            }
            if let Err(e) = self
                .bus
                .publish(&channel, "ttakji.v1.GameEvent", payload)
                .await
            {
                tracing::warn!(error = %e, "event not published; watchers fill the gap from the store");
            }
        }
    }

    fn move_pb(&self, number: usize) -> pb::Move {
        let mv = self.game.moves()[number - 1];
        pb::Move {
            number: number as u32,
            color: color_to_pb(mv.color) as i32,
            point: match mv.action {
                Action::Play(p) => Some(point_to_pb(p)),
                Action::Pass => None,
            },
            captured: self.captured[number - 1]
                .iter()
                .copied()
                .map(point_to_pb)
                .collect(),
        }
    }

    fn result_pb(&self) -> Option<pb::GameResult> {
        self.finished.as_ref().map(|f| pb::GameResult {
            winner: f
                .result
                .winner()
                .map_or(pb::Color::Unspecified, color_to_pb) as i32,
            reason: end_reason_to_pb(f.reason) as i32,
            text: f.result.to_string(),
            count: f.count.as_ref().map(count_to_pb),
        })
    }

    fn seat_pb(seat: &Seat) -> pb::Player {
        pb::Player {
            user_id: seat.user_id.clone().unwrap_or_default(),
            nickname: seat.name.clone(),
            ai_level: seat.ai.map_or(pb::AiLevel::Unspecified, level_to_pb) as i32,
        }
    }

    /// The game as a client sees it now.
    pub fn snapshot(&self, preview: bool) -> pb::GameSnapshot {
        let playing = self.is_playing();
        let human_has_move = self.meta.is_ai_game()
            && self
                .game
                .moves()
                .iter()
                .any(|m| self.meta.seat(m.color).ai.is_none());
        pb::GameSnapshot {
            game_id: self.meta.id.clone(),
            board_size: u32::from(self.meta.rules.board_size.get()),
            ruleset: self.meta.rules.preset.name().to_owned(),
            komi: komi_points(self.meta.rules.komi.half_points()),
            black: Some(Self::seat_pb(&self.meta.black)),
            white: Some(Self::seat_pb(&self.meta.white)),
            status: if playing {
                pb::GameStatus::Playing
            } else {
                pb::GameStatus::Finished
            } as i32,
            stones: stones(&self.game),
            to_move: if playing {
                color_to_pb(self.game.to_move())
            } else {
                pb::Color::Unspecified
            } as i32,
            move_count: self.game.move_number() as u32,
            black_captures: self.game.board().prisoners(Color::Black),
            white_captures: self.game.board().prisoners(Color::White),
            last_move: (self.game.move_number() > 0).then(|| self.move_pb(self.game.move_number())),
            ko_forbidden: if playing {
                self.game
                    .ko_forbidden_points()
                    .into_iter()
                    .map(point_to_pb)
                    .collect()
            } else {
                Vec::new()
            },
            passes_in_a_row: self.game.passes_in_a_row(),
            result: self.result_pb(),
            clock: (playing && self.meta.seconds_per_move > 0).then(|| pb::Clock {
                seconds_per_move: self.meta.seconds_per_move,
                deadline_unix_ms: self.deadline.unwrap_or_default(),
            }),
            score_preview: preview.then(|| count_to_pb(&self.game.score_preview())),
            event_seq: self.seq,
            undo_allowed: playing && human_has_move,
            ranked: self.meta.ranked,
            finished_at_unix_ms: if playing { 0 } else { self.finished_at },
            draw_offered_by: self
                .draw_offer
                .filter(|_| playing)
                .map_or(pb::Color::Unspecified, color_to_pb) as i32,
        }
    }

    fn event(&self, seq: u64, kind: pb::game_event::Kind) -> pb::GameEvent {
        pb::GameEvent {
            game_id: self.meta.id.clone(),
            seq,
            at_unix_ms: ttakji_platform::now_unix_ms(),
            snapshot: Some(pb::GameSnapshot {
                event_seq: seq,
                ..self.snapshot(false)
            }),
            kind: Some(kind),
        }
    }

    /// The record as SGF, with names, date and result.
    pub fn sgf(&self) -> String {
        let mut record = Record::from_game(&self.game);
        record.black = Some(self.meta.black.name.clone());
        record.white = Some(self.meta.white.name.clone());
        record.date = Some(date_of(self.meta.created_at));
        record.result = self.finished.as_ref().map(|f| f.result);
        record.to_sgf()
    }
}

/// `YYYY-MM-DD` of a Unix time in milliseconds (UTC).
fn date_of(unix_ms: i64) -> String {
    let days = unix_ms.div_euclid(86_400_000);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_written_as_sgf_wants_them() {
        assert_eq!(super::date_of(0), "1970-01-01");
        assert_eq!(super::date_of(1_795_910_400_000), "2026-11-29");
    }
}
