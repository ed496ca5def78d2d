//! The actor around one live game: its mailbox, its move clock, the
//! computer's seat, the store write and the bus.
//!
//! Every request for a game goes through its mailbox, so the game changes
//! in one order only. The game's rules ([`crate::game`]) work out a step;
//! the actor stores it in one transaction, commits it, answers and then
//! publishes, so a failed write changes nothing. The computer thinks on the
//! blocking pool and sends its decision back through the mailbox, tagged
//! with the game's generation, so a decision about a position that was
//! taken back is dropped.

use std::time::{Duration, Instant};

use baduk_ai::{Decision, MctsPlayer, Settings};
use prost::Message as _;
use tokio::sync::{mpsc, oneshot};
use tonic::Status;
use tracing::Instrument as _;
use ttakji_platform::bus::{self, Bus};
use ttakji_platform::now_unix_ms;
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::UserId;
use ttakji_proto::v1 as pb;

use crate::game::{CountAction, EventKind, OnlineGame, Refusal, Requested, Step};
use crate::ownership::{Ownership, Placement};
use crate::records::{AiEngine, StoredEvent};
use crate::{codec, store, view};

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
    /// At tables that allow it, how long a player may be away before the
    /// computer plays their seat (seed 001); 60 s unless set.
    #[arg(
        long = "stand-in-after",
        env = "TTAKJI_STAND_IN_AFTER",
        value_name = "SECONDS"
    )]
    pub stand_in_after: Option<u64>,
}

impl AiConfig {
    /// How long a player may be away before the computer stands in, in ms.
    #[must_use]
    pub fn grace_ms(&self) -> i64 {
        i64::try_from(self.stand_in_after.unwrap_or(60).saturating_mul(1000)).unwrap_or(i64::MAX)
    }

    /// The computer's player at `level`, as this authority's settings say.
    fn player(&self, level: baduk_ai::Level) -> Box<MctsPlayer> {
        let mut settings = Settings::for_level(level);
        if let Some(cap) = self.max_playouts {
            settings.budget.playouts = settings.budget.playouts.min(cap);
            // A cap is a cap on every board.
            settings.scale_with_board = false;
        }
        settings.seed = self.seed;
        Box::new(MctsPlayer::with_settings(level, settings))
    }
}

/// A reply to a player's request.
type Reply<T> = oneshot::Sender<Result<T, Status>>;

/// A game's mailbox. Its commands are boxed: the channel sets aside room
/// for a block of them up front, which for commands held inline was 3 KB
/// a live game.
pub type Mailbox = mpsc::Sender<Box<Command>>;

/// What the actor is asked.
#[derive(Debug)]
pub enum Command {
    Snapshot {
        preview: bool,
        reply: oneshot::Sender<pb::GameSnapshot>,
    },
    /// A move, pass or resignation. The request's span goes with it: the
    /// work is done inside it, so the stored write and the published events
    /// belong to the caller's trace.
    Submit {
        span: tracing::Span,
        user_id: UserId,
        number: u32,
        action: Requested,
        /// The computer seat's action, from the player whose client thinks.
        for_computer: bool,
        reply: Reply<(Option<pb::Move>, pb::GameSnapshot)>,
    },
    /// The player moves the computer's thinking to the server or back.
    SetAiEngine {
        span: tracing::Span,
        user_id: UserId,
        engine: AiEngine,
        reply: Reply<pb::GameSnapshot>,
    },
    UndoMove {
        span: tracing::Span,
        user_id: UserId,
        move_count: u32,
        reply: Reply<pb::GameSnapshot>,
    },
    Preview {
        reply: oneshot::Sender<pb::Count>,
    },
    Export {
        reply: oneshot::Sender<String>,
    },
    OfferDraw {
        span: tracing::Span,
        user_id: UserId,
        reply: Reply<pb::GameSnapshot>,
    },
    AnswerDraw {
        span: tracing::Span,
        user_id: UserId,
        accept: bool,
        reply: Reply<pb::GameSnapshot>,
    },
    SettleCount {
        span: tracing::Span,
        user_id: UserId,
        action: CountAction,
        reply: Reply<pb::GameSnapshot>,
    },
    /// A gateway's word that a player is connected or gone.
    Presence {
        span: tracing::Span,
        user_id: UserId,
        connected: bool,
        reply: Reply<()>,
    },
    AiDecided {
        generation: u64,
        decision: Decision,
        player: Box<MctsPlayer>,
        think: Duration,
    },
    /// The game is no longer served here: stop after what came before.
    Release,
}

/// A computer's decision as a log field: `E5`, `pass` or `resign`.
fn decision_text(decision: &Decision) -> String {
    match decision {
        Decision::Play(point) => point.to_string(),
        Decision::Pass => "pass".to_owned(),
        Decision::Resign => "resign".to_owned(),
    }
}

fn storage_error(e: &sqlx::Error) -> Status {
    ttakji_platform::store::status(e, "the game could not be stored; nothing was changed")
}

/// Why a step was not taken.
enum NotStored {
    /// Answered to the caller as this status.
    Refused(Status),
    /// The game is another authority's now: the request goes unanswered
    /// here, and the registry asks the game afresh from the store.
    Fenced,
}

/// An event ready to publish.
struct Outgoing {
    finished: bool,
    payload: Vec<u8>,
}

/// One live game's actor.
pub struct Actor {
    state: OnlineGame,
    /// The epoch this actor holds the game at; every write names it.
    epoch: u64,
    /// Set when a write found the game taken over: the actor stops at once.
    fenced: bool,
    /// The computer's player while it is not thinking.
    ai_player: Option<Box<MctsPlayer>>,
    thinking: bool,
    ai_config: AiConfig,
    writer: store::Writer,
    bus: Bus,
    /// The game as its last published event showed it, which the next
    /// event is stored and sent as a change against; `None` after the game
    /// is taken up here, so the next event goes whole.
    shown: Option<view::Shown>,
    /// Whether the game's shard is served here, checked before answering.
    ownership: Ownership,
    mailbox: Mailbox,
    shutdown: Shutdown,
}

impl std::fmt::Debug for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Actor")
            .field("id", &self.state.meta().id)
            .field("moves", &self.state.game().move_number())
            .field("seq", &self.state.seq())
            .finish_non_exhaustive()
    }
}

impl Actor {
    #[must_use]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        state: OnlineGame,
        epoch: u64,
        shown: Option<view::Shown>,
        ai_config: &AiConfig,
        writer: store::Writer,
        bus: Bus,
        ownership: Ownership,
        mailbox: Mailbox,
        shutdown: Shutdown,
    ) -> Actor {
        let ai_player = state.meta().ai_level().map(|level| ai_config.player(level));
        Actor {
            state,
            epoch,
            fenced: false,
            ai_player,
            thinking: false,
            ai_config: ai_config.clone(),
            writer,
            bus,
            shown,
            ownership,
            mailbox,
            shutdown,
        }
    }

    /// The game as it stands.
    #[must_use]
    pub fn state(&self) -> &OnlineGame {
        &self.state
    }

    /// The actor's loop: runs until shutdown, or until the game has been
    /// left alone for [`IDLE`] with nothing to think about (it is reloaded
    /// from the store on the next request).
    pub async fn run(mut self, mut inbox: mpsc::Receiver<Box<Command>>) {
        let mut shutdown = self.shutdown.clone();
        self.think_if_computer_to_move();
        loop {
            // A waiting game holds its board in a few bytes, not kilobytes.
            self.state.pack();
            let grace = self.ai_config.grace_ms();
            let deadline = match (self.state.deadline(), self.state.stand_in_due(grace)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let command = tokio::select! {
                () = shutdown.wait() => break,
                () = ttakji_platform::sleep_until_unix_ms(deadline.unwrap_or(i64::MAX)), if deadline.is_some() => {
                    Box::pin(self.time_out()).await;
                    Box::pin(self.seat_stand_ins()).await;
                    if self.fenced {
                        break;
                    }
                    continue;
                }
                command = inbox.recv() => command,
                () = tokio::time::sleep(IDLE), if !self.thinking && deadline.is_none() => {
                    tracing::debug!(game_id = %self.state.meta().id, "idle game unloaded");
                    break;
                }
            };
            let Some(command) = command else { break };
            if matches!(*command, Command::Release) {
                break;
            }
            // The work of a command (the store, the bus) is boxed while it
            // runs, so a live game waiting for its next command holds only
            // the loop's own small state (measured: 13 KB a game before).
            Box::pin(self.handle(*command)).await;
            if self.fenced {
                // Another authority holds the game now: drop it here. A
                // later request takes it over again from the store.
                tracing::warn!(game_id = %self.state.meta().id, epoch = self.epoch, "game taken over elsewhere; dropped here");
                break;
            }
        }
        if self.state.is_playing() {
            metrics::gauge!("ttakji_live_games").decrement(1.0);
        }
    }

    async fn handle(&mut self, command: Command) {
        if !self.current().await {
            // Another authority may have moved the game on: leave the
            // command unanswered and stop; the registry asks afresh.
            self.fence();
            drop(command);
            return;
        }
        // A request that arrives after the deadline, before the timer has
        // fired, finds the game already lost on time.
        if self.state.out_of_time(now_unix_ms()) {
            self.time_out().await;
            if self.fenced {
                // The game is another authority's now: leave the command
                // unanswered, and the registry asks the game afresh.
                drop(command);
                return;
            }
        }
        match command {
            // Stops the loop before it gets here.
            Command::Release => {}
            // A count if the game ended now reads the board with hundreds
            // of playouts (once per position): not on the thread's time.
            Command::Snapshot {
                preview: true,
                reply,
            } => {
                let shown = ttakji_platform::blocking(|| view::snapshot(&self.state, true));
                let _ = reply.send(shown);
            }
            Command::Snapshot { preview, reply } => {
                let _ = reply.send(view::snapshot(&self.state, preview));
            }
            Command::Preview { reply } => {
                let _ = reply.send(ttakji_platform::blocking(|| {
                    view::count_now_pb(&self.state)
                }));
            }
            Command::Export { reply } => {
                let _ = reply.send(self.state.sgf());
            }
            Command::Presence {
                span,
                user_id,
                connected,
                reply,
            } => {
                let step = self.state.presence(&user_id, connected, now_unix_ms());
                let result = self.store_step(step).instrument(span.clone()).await;
                self.answer(result, reply, span, |_, _| ()).await;
                self.think_if_computer_to_move();
            }
            Command::Submit {
                span,
                user_id,
                number,
                action,
                for_computer,
                reply,
            } => {
                self.here(&user_id).await;
                let started = Instant::now();
                let step = if for_computer {
                    self.state
                        .submit_for_computer(&user_id, number, action, now_unix_ms())
                } else {
                    self.state.submit(&user_id, number, action, now_unix_ms())
                };
                let step = step.inspect_err(|refusal| {
                    metrics::counter!("ttakji_moves_refused_total", "reason" => refusal.reason())
                        .increment(1);
                });
                let result = self.store_step(step).instrument(span.clone()).await;
                metrics::histogram!("ttakji_move_handling_seconds")
                    .record(started.elapsed().as_secs_f64());
                self.answer(result, reply, span, |state, played| {
                    (
                        played.map(|n| view::move_pb(state, n)),
                        view::snapshot(state, false),
                    )
                })
                .await;
                self.think_if_computer_to_move();
            }
            Command::SetAiEngine {
                span,
                user_id,
                engine,
                reply,
            } => {
                let step = self.state.set_ai_engine(&user_id, engine, now_unix_ms());
                let switched = step.is_ok() && self.state.meta().ai_engine != engine;
                self.store_and_show(step, reply, span).await;
                if switched {
                    metrics::counter!("ttakji_ai_engine_switches_total", "to" => codec::ai_engine_text(engine))
                        .increment(1);
                }
                self.think_if_computer_to_move();
            }
            Command::UndoMove {
                span,
                user_id,
                move_count,
                reply,
            } => {
                self.here(&user_id).await;
                let step = self.state.undo(&user_id, move_count, now_unix_ms());
                self.store_and_show(step, reply, span).await;
                self.think_if_computer_to_move();
            }
            Command::OfferDraw {
                span,
                user_id,
                reply,
            } => {
                self.here(&user_id).await;
                let step = self.state.offer_draw(&user_id, now_unix_ms());
                self.store_and_show(step, reply, span).await;
            }
            Command::AnswerDraw {
                span,
                user_id,
                accept,
                reply,
            } => {
                self.here(&user_id).await;
                let step = self.state.answer_draw(&user_id, accept, now_unix_ms());
                self.store_and_show(step, reply, span).await;
            }
            Command::SettleCount {
                span,
                user_id,
                action,
                reply,
            } => {
                self.here(&user_id).await;
                let step = self.state.settle_count(&user_id, action, now_unix_ms());
                self.store_and_show(step, reply, span).await;
                // Back to play, the computer may be to move.
                self.think_if_computer_to_move();
            }
            Command::AiDecided {
                generation,
                decision,
                player,
                think,
            } => {
                self.thinking = false;
                // A finished game needs no player (nor its search tree).
                self.ai_player = self.state.is_playing().then_some(player);
                self.play_computer_move(generation, decision, think).await;
                self.think_if_computer_to_move();
            }
        }
    }

    /// Stores a step and answers with the game's snapshot after it.
    async fn store_and_show(
        &mut self,
        step: Result<Step, Refusal>,
        reply: Reply<pb::GameSnapshot>,
        span: tracing::Span,
    ) {
        let result = self.store_step(step).instrument(span.clone()).await;
        self.answer(result, reply, span, |state, _| view::snapshot(state, false))
            .await;
    }

    /// Answers a request with what `reply_of` makes of the committed game,
    /// then publishes the step's events.
    async fn answer<T>(
        &mut self,
        result: Result<(Option<usize>, Vec<Outgoing>), NotStored>,
        reply: Reply<T>,
        span: tracing::Span,
        reply_of: impl FnOnce(&OnlineGame, Option<usize>) -> T,
    ) {
        match result {
            Ok((played, events)) => {
                let _ = reply.send(Ok(reply_of(&self.state, played)));
                self.publish(events).instrument(span).await;
            }
            Err(NotStored::Refused(status)) => {
                let _ = reply.send(Err(status));
            }
            Err(NotStored::Fenced) => drop(reply),
        }
    }

    /// Stores a step and commits it: the one way the game changes. Returns
    /// the move the answer names and the events to publish; a refusal or a
    /// failed write leaves the game as it was.
    async fn store_step(
        &mut self,
        step: Result<Step, Refusal>,
    ) -> Result<(Option<usize>, Vec<Outgoing>), NotStored> {
        let step = match step {
            Ok(step) => step,
            Err(refusal) => {
                // A game taken over elsewhere may have moved on since this
                // actor last wrote: refuse only what the store still says.
                if self.taken_over().await {
                    return Err(self.fence());
                }
                return Err(NotStored::Refused(Status::from(refusal)));
            }
        };
        // A pass shows the count if the game ended now: hundreds of
        // playouts (some 12 ms on 9×9), which the thread's other tasks do
        // not wait for.
        let reads = step.events().iter().any(|e| {
            matches!(
                e.kind,
                EventKind::MovePlayed {
                    with_count: true,
                    ..
                }
            )
        });
        let events = if reads {
            ttakji_platform::blocking(|| view::step_events(&self.state, &step))
        } else {
            view::step_events(&self.state, &step)
        };
        // Each event is stored and sent as what it changed.
        let (events, shown) = view::as_changes(self.shown.as_deref(), events);
        let stored: Vec<StoredEvent> = events
            .iter()
            .map(|e| StoredEvent {
                seq: e.seq,
                payload: e.encode_to_vec(),
            })
            .collect();
        if let Some(write) = step.write() {
            let id = &self.state.meta().id;
            match self
                .writer
                .apply(id, self.epoch, write, &stored, step.at())
                .await
            {
                Ok(()) => {}
                Err(store::WriteError::Storage(e)) => {
                    return Err(NotStored::Refused(storage_error(&e)));
                }
                Err(store::WriteError::Fenced) => return Err(self.fence()),
            }
        }
        if step.is_action() {
            metrics::counter!("ttakji_moves_accepted_total").increment(1);
        }
        if step.ends(&self.state) {
            metrics::gauge!("ttakji_live_games").decrement(1.0);
        }
        let played = step.played();
        self.state.commit(step);
        if shown.is_some() {
            self.shown = shown;
        }
        let outgoing = events
            .iter()
            .zip(stored)
            .map(|(e, s)| Outgoing {
                finished: matches!(e.kind, Some(pb::game_event::Kind::Finished(_))),
                payload: s.payload,
            })
            .collect();
        Ok((played, outgoing))
    }

    /// Whether this actor's copy of the game is current, so it may answer
    /// from it. While the game's shard is served here (its lease renewed
    /// within the serving window) no other instance can have taken the
    /// game. Past that window (Redis unreachable, or this process paused)
    /// a game being played is answered only once the store confirms its
    /// epoch is still this actor's: every owner takes a game over in the
    /// store before it acknowledges anything, so a newer owner's moves are
    /// never hidden behind this copy. A finished game never changes.
    async fn current(&self) -> bool {
        let id = &self.state.meta().id;
        if !self.state.is_playing()
            || matches!(self.ownership.placement(id), Placement::Here { .. })
        {
            return true;
        }
        matches!(store::epoch(self.writer.db(), id).await, Ok(Some(epoch)) if epoch == self.epoch)
    }

    /// Whether another authority has taken the game over since this actor
    /// loaded it. A store that cannot be read says nothing either way.
    async fn taken_over(&self) -> bool {
        match store::epoch(self.writer.db(), &self.state.meta().id).await {
            Ok(Some(epoch)) => epoch != self.epoch,
            Ok(None) | Err(_) => false,
        }
    }

    /// This actor's copy of the game is stale: it stops at once.
    fn fence(&mut self) -> NotStored {
        metrics::counter!("ttakji_fenced_actions_total").increment(1);
        self.fenced = true;
        NotStored::Fenced
    }

    /// The side to move ran out of time: it loses, whatever the board says.
    async fn time_out(&mut self) {
        let Some(step) = self.state.time_out(now_unix_ms()) else {
            return;
        };
        if self.state.counting().is_some() {
            tracing::info!(game_id = %self.state.meta().id, "the count's time ran out; counted with the server's verdict");
        } else {
            let loser = self.state.game().to_move();
            tracing::info!(game_id = %self.state.meta().id, %loser, "time ran out");
        }
        if !self.store_own(step, "timeout").await {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Stores and publishes a step nobody waits on (a timeout, a stand-in,
    /// a player's return, the computer's move); false when it could not be
    /// stored (a fenced actor stops, which is not a failure here).
    async fn store_own(&mut self, step: Step, what: &str) -> bool {
        match self.store_step(Ok(step)).await {
            Ok((_, events)) => {
                self.publish(events).await;
                true
            }
            Err(NotStored::Fenced) => true,
            Err(NotStored::Refused(status)) => {
                tracing::error!(game_id = %self.state.meta().id, %status, "{what} not stored");
                false
            }
        }
    }

    /// A player who acts is here: the seat is theirs again if the computer
    /// held it, before the action is taken.
    async fn here(&mut self, user_id: &str) {
        if !self.state.missed(user_id) {
            return;
        }
        match self.state.presence(user_id, true, now_unix_ms()) {
            Ok(step) => {
                self.store_own(step, "a player's return").await;
            }
            Err(refusal) => {
                tracing::warn!(game_id = %self.state.meta().id, %refusal, "a player's return refused");
            }
        }
    }

    /// The computer takes the seats of players away for the grace period.
    async fn seat_stand_ins(&mut self) {
        if self.fenced {
            return;
        }
        let Some(step) = self
            .state
            .seat_stand_ins(now_unix_ms(), self.ai_config.grace_ms())
        else {
            return;
        };
        tracing::info!(game_id = %self.state.meta().id, "the computer stands in for a player who is away");
        if !self.store_own(step, "stand-in").await {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        self.think_if_computer_to_move();
    }

    fn think_if_computer_to_move(&mut self) {
        if self.thinking || self.fenced {
            return;
        }
        let Some((_, level)) = self.state.computer_to_move() else {
            return;
        };
        // The computer standing in for a player is made when first needed.
        let mut player = match self.ai_player.take() {
            Some(player) => player,
            None => self.ai_config.player(level),
        };
        self.thinking = true;
        let game = self.state.game().clone();
        let generation = self.state.generation();
        let mailbox = self.mailbox.clone();
        let span = tracing::info_span!("ai.think", game_id = %self.state.meta().id, level = player.level().name(), move_number = game.move_number() + 1);
        // The search is CPU-bound: it runs on the blocking pool so it never
        // stalls the runtime's other games.
        self.shutdown.spawn_blocking(move || {
            let _entered = span.enter();
            let started = Instant::now();
            let decision = player.decide(&game);
            let think = started.elapsed();
            metrics::histogram!("ttakji_ai_think_seconds", "level" => player.level().name())
                .record(think.as_secs_f64());
            tracing::debug!(decision = %decision_text(&decision), think_ms = think.as_millis(), "computer decided");
            let _ = mailbox.blocking_send(Box::new(Command::AiDecided {
                generation,
                decision,
                player,
                think,
            }));
        });
    }

    async fn play_computer_move(&mut self, generation: u64, decision: Decision, think: Duration) {
        let game_id = self.state.meta().id.clone();
        if let (Decision::Play(p), Some((color, _))) = (decision, self.state.computer_to_move())
            && generation == self.state.generation()
            && self.state.game().check(color, p).is_err()
        {
            tracing::warn!(%game_id, point = %p, "computer chose an illegal point; it passes");
        }
        let Some(step) = self
            .state
            .computer_move(generation, decision, now_unix_ms())
        else {
            return;
        };
        tracing::info!(%game_id, decision = %decision_text(&decision), think_ms = think.as_millis(), "computer moves");
        self.store_own(step, "computer's move").await;
    }

    /// Publishes events on the game's channel, and a game's end on the
    /// finished-games channel too. The bus delivers at most once: what it
    /// drops, watchers and the ratings service read from the store.
    async fn publish(&self, events: Vec<Outgoing>) {
        let topic = bus::game_events(&self.state.meta().id);
        for event in events {
            if event.finished
                && let Err(e) = self
                    .bus
                    .publish_encoded(&bus::games_finished(), event.payload.clone())
                    .await
            {
                tracing::warn!(error = %e, "finished game not announced; consumers reconcile from the store");
            }
            if let Err(e) = self.bus.publish_encoded(&topic, event.payload).await {
                tracing::warn!(error = %e, "event not published; watchers fill the gap from the store");
            }
        }
    }
}
