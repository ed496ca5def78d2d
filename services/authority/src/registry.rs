//! The live games of this authority: one actor per game, started on first
//! use (or at start for every game still being played) and found by id.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Mutex, mpsc};
use tonic::Status;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::v1 as pb;

use crate::actor::{Actor, AiConfig, Command};
use crate::game::OnlineGame;
use crate::ownership::{Ownership, Placement};
use crate::records::{GameMeta, StoredEvent};
use crate::{store, view};

/// Why stored data could not be made into a game.
fn corrupt(game_id: &str, what: &str) -> Status {
    tracing::error!(game_id, %what, "stored game cannot be replayed");
    Status::data_loss(format!(
        "game {game_id} is stored in a form this server cannot replay: {what}"
    ))
}

/// How long a request waits for an actor that stopped without answering it
/// to be gone before the game is looked up again.
const STOPPING: std::time::Duration = std::time::Duration::from_secs(1);

/// Commands a game's mailbox holds before senders wait.
const MAILBOX: usize = 64;

/// The actors of the live games, by game id.
#[derive(Debug, Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Database,
    bus: Bus,
    ai: AiConfig,
    shutdown: Shutdown,
    ownership: Ownership,
    actors: Mutex<HashMap<String, mpsc::Sender<Command>>>,
}

/// How long letting a game go waits for its actor to finish what it is
/// doing (a store write) and stop.
const LETTING_GO: std::time::Duration = std::time::Duration::from_secs(5);

/// The answer for a game being played that this instance does not serve.
fn not_here(game_id: &str) -> Status {
    ttakji_platform::authorities::unavailable(
        format!("game {game_id} is moving between authorities; try again"),
        std::time::Duration::from_millis(100),
    )
}

impl Registry {
    #[must_use]
    pub fn new(
        db: Database,
        bus: Bus,
        ai: AiConfig,
        shutdown: Shutdown,
        ownership: Ownership,
    ) -> Registry {
        Registry {
            inner: Arc::new(Inner {
                db,
                bus,
                ai,
                shutdown,
                ownership,
                actors: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// What this instance owns.
    #[must_use]
    pub fn ownership(&self) -> &Ownership {
        &self.inner.ownership
    }

    /// The store the games are kept in.
    #[must_use]
    pub fn db(&self) -> &Database {
        &self.inner.db
    }

    /// Takes up every game still being played in `shards`, just taken
    /// over: their clocks run again (with the time they had no owner given
    /// back) and computer seats to move start thinking. Returns how many
    /// were loaded.
    pub async fn take_up(&self, shards: &[u32]) -> usize {
        self.load_playing(|id| shards.contains(&ttakji_platform::authorities::shard_of(id)))
            .await
            .unwrap_or_else(|e| {
                // Each game is still loaded on its first request.
                tracing::error!(error = %e, "cannot list the games of shards taken over");
                0
            })
    }

    /// Loads every game still being played that `keep` picks; returns how
    /// many were loaded (one that cannot be is logged and left).
    async fn load_playing(&self, keep: impl Fn(&str) -> bool) -> sqlx::Result<usize> {
        let ids = store::playing_games(&self.inner.db).await?;
        let mut loaded = 0;
        for id in ids.iter().filter(|id| keep(id)) {
            match self.mailbox(id).await {
                Ok(_) => loaded += 1,
                Err(status) => tracing::error!(game_id = %id, %status, "game not loaded"),
            }
        }
        Ok(loaded)
    }

    /// Stops the actors of every game in `shards` (each after what it is
    /// doing) and forgets them: the shards are no longer served here.
    pub async fn let_go(&self, shards: &[u32]) {
        let leaving: Vec<mpsc::Sender<Command>> = {
            let mut actors = self.inner.actors.lock().await;
            let ids: Vec<String> = actors
                .keys()
                .filter(|id| shards.contains(&ttakji_platform::authorities::shard_of(id)))
                .cloned()
                .collect();
            ids.iter().filter_map(|id| actors.remove(id)).collect()
        };
        let stopped = async {
            for tx in &leaving {
                let _ = tx.send(Command::Release).await;
            }
            for tx in &leaving {
                tx.closed().await;
            }
        };
        if tokio::time::timeout(LETTING_GO, stopped).await.is_err() {
            tracing::warn!(
                games = leaving.len(),
                "games let go did not all stop in time"
            );
        }
        tracing::debug!(games = leaving.len(), "games let go");
    }

    /// Takes up every game still being played (after a restart): computer
    /// seats to move start thinking again.
    ///
    /// # Errors
    /// When the store cannot be read.
    pub async fn resume_playing(&self) -> Result<usize, Status> {
        self.load_playing(|_| true)
            .await
            .map_err(|e| ttakji_platform::store::status(&e, "cannot list games to resume"))
    }

    /// Creates a game: stored first, then its actor starts.
    pub async fn create(&self, meta: GameMeta) -> Result<pb::GameSnapshot, Status> {
        if !matches!(
            self.inner.ownership.placement(&meta.id),
            Placement::Here { .. }
        ) {
            return Err(not_here(&meta.id));
        }
        let (state, started) = OnlineGame::new(meta);
        let event = view::event(&state, &started);
        let payload = prost::Message::encode_to_vec(&event);
        let first = StoredEvent {
            seq: started.seq,
            payload: payload.clone(),
        };
        let id = state.meta().id.clone();
        if let Err(e) =
            store::insert_game(&self.inner.db, state.meta(), state.deadline(), &first).await
        {
            // A retried creation with the game id the caller chose: the
            // game exists already; answer with it.
            if e.as_database_error()
                .is_some_and(|d| d.is_unique_violation())
            {
                return self
                    .ask(&id, |reply| Command::Snapshot {
                        preview: false,
                        reply,
                    })
                    .await;
            }
            tracing::error!(error = %e, "game not stored");
            return Err(Status::unavailable(
                "the game could not be stored; try again",
            ));
        }
        let snapshot = view::snapshot(&state, false);
        {
            let mut actors = self.inner.actors.lock().await;
            // A request for the new game may have loaded it from the store
            // already: then that actor is the game's one writer.
            if actors.get(&id).is_none_or(mpsc::Sender::is_closed) {
                metrics::gauge!("ttakji_live_games").increment(1.0);
                let tx = self.start(state, store::FIRST_EPOCH);
                actors.insert(id.clone(), tx);
            }
        }
        let _ = self
            .inner
            .bus
            .publish(
                &ttakji_platform::bus::game_channel(&id),
                "ttakji.v1.GameEvent",
                payload,
            )
            .await;
        Ok(snapshot)
    }

    /// Starts the actor of a game; returns its mailbox.
    fn start(&self, state: OnlineGame, epoch: u64) -> mpsc::Sender<Command> {
        let (tx, rx) = mpsc::channel(MAILBOX);
        let actor = Actor::new(
            state,
            epoch,
            &self.inner.ai,
            self.inner.db.clone(),
            self.inner.bus.clone(),
            tx.clone(),
            self.inner.shutdown.clone(),
        );
        self.inner.shutdown.spawn(actor.run(rx));
        tx
    }

    /// The mailbox of a game's actor, loading the game if it is not live
    /// here. A game being played is loaded only where it is served; a
    /// finished one anywhere (it is never written again).
    pub async fn mailbox(&self, game_id: &str) -> Result<mpsc::Sender<Command>, Status> {
        let mut actors = self.inner.actors.lock().await;
        if let Some(tx) = actors.get(game_id)
            && !tx.is_closed()
        {
            return Ok(tx.clone());
        }
        let placement = self.inner.ownership.placement(game_id);
        let epoch = match placement {
            // Take the game over first, then read it: a writer of the
            // epoch before is fenced off from here, so what is read is
            // final. The time its shard had no owner goes back on its clock.
            Placement::Here { give_back_ms } => {
                store::take_over(&self.inner.db, game_id, give_back_ms).await
            }
            Placement::Elsewhere(_) | Placement::Nobody => {
                store::epoch(&self.inner.db, game_id).await
            }
        }
        .map_err(|e| ttakji_platform::store::status(&e, &format!("cannot read game {game_id}")))?
        .ok_or_else(|| Status::not_found(format!("there is no game {game_id}")))?;
        let (stored, moves) = store::load_game(&self.inner.db, game_id)
            .await
            .map_err(|e| match e {
                store::LoadError::Storage(e) => {
                    ttakji_platform::store::status(&e, &format!("cannot read game {game_id}"))
                }
                store::LoadError::Unreadable(what) => corrupt(game_id, &what),
            })?
            .ok_or_else(|| Status::not_found(format!("there is no game {game_id}")))?;
        let state = OnlineGame::restore(stored, &moves).map_err(|what| corrupt(game_id, &what))?;
        if state.is_playing() {
            if !matches!(placement, Placement::Here { .. }) {
                return Err(not_here(game_id));
            }
            metrics::gauge!("ttakji_live_games").increment(1.0);
            if epoch > store::FIRST_EPOCH {
                metrics::counter!("ttakji_game_takeovers_total").increment(1);
            }
        }
        tracing::info!(
            game_id,
            epoch,
            moves = state.game().move_number(),
            "game loaded"
        );
        let tx = self.start(state, epoch);
        actors.insert(game_id.to_owned(), tx.clone());
        Ok(tx)
    }

    /// Stored events of a game after `after`.
    pub async fn events_after(
        &self,
        game_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<Vec<pb::GameEvent>, Status> {
        let rows = store::events_after(
            &self.inner.db,
            game_id,
            i64::try_from(after).unwrap_or(i64::MAX),
            i64::from(limit),
        )
        .await
        .map_err(|e| {
            ttakji_platform::store::status(&e, &format!("cannot read events of game {game_id}"))
        })?;
        rows.iter()
            .map(|bytes| {
                <pb::GameEvent as prost::Message>::decode(bytes.as_slice()).map_err(|e| {
                    Status::data_loss(format!("stored event of game {game_id} is unreadable: {e}"))
                })
            })
            .collect()
    }

    /// Sends a command and waits for its answer.
    pub async fn ask<T>(
        &self,
        game_id: &str,
        make: impl Fn(tokio::sync::oneshot::Sender<T>) -> Command,
    ) -> Result<T, Status> {
        // An actor that has just unloaded itself (idle), or found the game
        // taken over elsewhere, stops without taking the command: the game
        // is loaded again and asked once more.
        for _ in 0..3 {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let tx = self.mailbox(game_id).await?;
            if tx.send(make(reply)).await.is_err() {
                continue;
            }
            if let Ok(answer) = answer.await {
                return Ok(answer);
            }
            // The actor left the command unanswered and is stopping: wait
            // until it has gone, so the next look loads the game afresh.
            let _ = tokio::time::timeout(STOPPING, tx.closed()).await;
        }
        Err(Status::unavailable(format!(
            "game {game_id} is moving between authorities or shutting down; try again"
        )))
    }
}
