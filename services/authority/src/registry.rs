//! The live games of this authority: one actor per game, started on first
//! use (or at start for every game still being played) and found by id.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Mutex, mpsc};
use tonic::Status;
use ttakji_platform::bus::Bus;
use ttakji_platform::shutdown::Shutdown;
use ttakji_platform::store::Database;
use ttakji_proto::GameId;
use ttakji_proto::v1 as pb;

use crate::actor::{Actor, AiConfig, Command, Mailbox};
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
    /// The store, and the batches its moves are written in.
    writer: store::Writer,
    bus: Bus,
    ai: AiConfig,
    shutdown: Shutdown,
    ownership: Ownership,
    actors: Mutex<HashMap<String, Mailbox>>,
    /// One slot per game being loaded or created: its holder is the only
    /// one doing so, while the map above stays free for every other game.
    loading: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

/// How long letting a game go waits for its actor to finish what it is
/// doing (a store write) and stop.
const LETTING_GO: std::time::Duration = std::time::Duration::from_secs(5);

/// The answer for a game being played that this instance does not serve:
/// a redirect to its owner, or UNAVAILABLE while it has none.
fn not_here(game_id: &str, placement: &Placement) -> Status {
    match placement {
        Placement::Elsewhere(owner) => ttakji_platform::authorities::redirect(game_id, owner),
        Placement::Here { .. } | Placement::Nobody => ttakji_platform::refusal::unavailable(
            format!("game {game_id} is moving between authorities; try again"),
            std::time::Duration::from_millis(100),
        ),
    }
}

/// A new game, its first event as it is stored, and the game that event
/// shows (the next event's change is made against it).
fn founded(meta: GameMeta) -> (OnlineGame, StoredEvent, Option<view::Shown>) {
    let (state, started) = OnlineGame::new(meta);
    let event = view::event(&state, &started);
    let shown = event
        .snapshot
        .as_ref()
        .map(|s| prost::Message::encode_to_vec(s).into_boxed_slice());
    let first = StoredEvent {
        seq: started.seq,
        payload: prost::Message::encode_to_vec(&event),
    };
    (state, first, shown)
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
                writer: store::Writer::new(db),
                bus,
                ai,
                shutdown,
                ownership,
                actors: Mutex::new(HashMap::new()),
                loading: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// What this instance owns.
    #[must_use]
    pub fn ownership(&self) -> &Ownership {
        &self.inner.ownership
    }

    /// The bus its games' events are published on.
    #[must_use]
    pub fn bus(&self) -> &Bus {
        &self.inner.bus
    }

    /// The store the games are kept in.
    #[must_use]
    pub fn db(&self) -> &Database {
        self.inner.writer.db()
    }

    /// Takes up every game still being played in `shards`, just taken
    /// over: their clocks run again (with the time they had no owner given
    /// back) and computer seats to move start thinking. Returns how many
    /// were loaded.
    pub async fn load_shards(&self, shards: &[u32]) -> usize {
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
        let ids = store::playing_games(self.db()).await?;
        let mut loaded = 0;
        for id in ids.iter().filter(|id| keep(id)) {
            let started = match GameId::parse(id) {
                Ok(game) => self.mailbox(&game).await.map(drop),
                Err(status) => Err(status),
            };
            match started {
                Ok(()) => loaded += 1,
                Err(status) => tracing::error!(game_id = %id, %status, "game not loaded"),
            }
        }
        Ok(loaded)
    }

    /// Stops the actors of every game in `shards` (each after what it is
    /// doing) and forgets them: the shards are no longer served here.
    pub async fn unload_shards(&self, shards: &[u32]) {
        let leaving: Vec<Mailbox> = {
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
                let _ = tx.send(Box::new(Command::Release)).await;
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
        let placement = self.inner.ownership.placement(&meta.id);
        if !matches!(placement, Placement::Here { .. }) {
            return Err(not_here(&meta.id, &placement));
        }
        let (state, first, shown) = founded(meta);
        let id = state.meta().id.clone();
        let slot = self.loading_slot(&id).await;
        let creating = slot.lock().await;
        let stored = store::insert_game(self.db(), state.meta(), state.deadline(), &first).await;
        if let Err(e) = stored {
            drop(creating);
            self.forget_slot(&id, &slot).await;
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
        let snapshot = self.go_live(state, shown).await;
        drop(creating);
        self.forget_slot(&id, &slot).await;
        self.publish_first(&id, first.payload).await;
        Ok(snapshot)
    }

    /// Starts the actor of a new game just stored, and counts it live;
    /// returns its first snapshot. The caller holds the game's slot.
    async fn go_live(&self, state: OnlineGame, shown: Option<view::Shown>) -> pb::GameSnapshot {
        let snapshot = view::snapshot(&state, false);
        metrics::gauge!("ttakji_live_games").increment(1.0);
        let id = state.meta().id.to_string();
        let tx = self.start(state, store::FIRST_EPOCH, shown);
        self.inner.actors.lock().await.insert(id, tx);
        snapshot
    }

    /// Publishes a new game's first event (best effort: a watcher reads
    /// the store when it subscribes).
    async fn publish_first(&self, id: &GameId, payload: Vec<u8>) {
        let _ = self
            .inner
            .bus
            .publish_encoded(&ttakji_platform::bus::game_events(id), payload)
            .await;
    }

    /// Creates games in one store commit, then starts their actors; the
    /// answers are in the order of `metas`. A game of a shard not served
    /// here is refused on its own, and so is an id asked twice. If the
    /// commit fails (a game of the batch was stored by an earlier try, say)
    /// each game is made on its own, as [`Registry::create`] makes it.
    pub async fn create_many(&self, metas: Vec<GameMeta>) -> Vec<Result<pb::GameSnapshot, Status>> {
        let mut answers: Vec<Option<Result<pb::GameSnapshot, Status>>> = Vec::new();
        let mut new: Vec<(usize, OnlineGame, StoredEvent, Option<view::Shown>)> = Vec::new();
        let mut asked = std::collections::HashSet::new();
        for meta in metas {
            let placement = self.inner.ownership.placement(&meta.id);
            let refusal = if !matches!(placement, Placement::Here { .. }) {
                Some(not_here(&meta.id, &placement))
            } else if !asked.insert(meta.id.to_string()) {
                Some(Status::invalid_argument(format!(
                    "game {} is asked for twice",
                    meta.id
                )))
            } else {
                None
            };
            if let Some(refusal) = refusal {
                answers.push(Some(Err(refusal)));
                continue;
            }
            let (state, first, shown) = founded(meta);
            new.push((answers.len(), state, first, shown));
            answers.push(None);
        }
        // Each game's slot is held while it is stored and its actor starts,
        // taken in the order of the ids so two batches never wait on each
        // other.
        new.sort_by(|a, b| a.1.meta().id.as_str().cmp(b.1.meta().id.as_str()));
        let mut slots = Vec::with_capacity(new.len());
        for (_, state, _, _) in &new {
            let slot = self.loading_slot(state.meta().id.as_str()).await;
            let held = slot.clone().lock_owned().await;
            slots.push((slot, held));
        }
        let rows: Vec<store::NewGame<'_>> = new
            .iter()
            .map(|(_, state, first, _)| store::NewGame {
                meta: state.meta(),
                deadline_at: state.deadline(),
                first_event: first,
            })
            .collect();
        let stored = store::insert_games(self.db(), &rows).await;
        if let Err(e) = stored {
            tracing::warn!(error = %e, games = new.len(), "games not stored together; made one by one");
            for ((_, state, _, _), (slot, held)) in new.iter().zip(slots) {
                drop(held);
                self.forget_slot(state.meta().id.as_str(), &slot).await;
            }
            for (i, state, _, _) in new {
                answers[i] = Some(self.create(state.meta().clone()).await);
            }
            return answers
                .into_iter()
                .map(|a| a.unwrap_or_else(|| Err(Status::internal("a game was not answered"))))
                .collect();
        }
        let mut published = Vec::with_capacity(new.len());
        for ((i, state, first, shown), (slot, held)) in new.into_iter().zip(slots) {
            let id = state.meta().id.clone();
            answers[i] = Some(Ok(self.go_live(state, shown).await));
            drop(held);
            self.forget_slot(id.as_str(), &slot).await;
            published.push((id, first.payload));
        }
        futures_util::future::join_all(
            published
                .into_iter()
                .map(|(id, payload)| async move { self.publish_first(&id, payload).await }),
        )
        .await;
        answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| Err(Status::internal("a game was not answered"))))
            .collect()
    }

    /// Starts the actor of a game; returns its mailbox.
    fn start(&self, state: OnlineGame, epoch: u64, shown: Option<view::Shown>) -> Mailbox {
        let (tx, rx) = mpsc::channel(MAILBOX);
        let actor = Actor::new(
            state,
            epoch,
            shown,
            &self.inner.ai,
            self.inner.writer.clone(),
            self.inner.bus.clone(),
            self.inner.ownership.clone(),
            tx.clone(),
            self.inner.shutdown.clone(),
        );
        self.inner.shutdown.spawn(actor.run(rx));
        tx
    }

    /// The mailbox of a game's actor, loading the game if it is not live
    /// here. A game being played is loaded only where it is served; a
    /// finished one anywhere (it is never written again). A game is loaded
    /// (or created) by one caller at a time, in its own slot: a slow load
    /// holds up that game's callers and no other game's.
    pub async fn mailbox(&self, id: &GameId) -> Result<Mailbox, Status> {
        let game_id = id.as_str();
        if let Some(tx) = self.live(game_id).await {
            return Ok(tx);
        }
        let slot = self.loading_slot(game_id).await;
        let loading = slot.lock().await;
        // Whoever held the slot before may have loaded it.
        let loaded = match self.live(game_id).await {
            Some(tx) => Ok(tx),
            None => match self.load(game_id).await {
                Ok(tx) => {
                    let mut actors = self.inner.actors.lock().await;
                    actors.insert(game_id.to_owned(), tx.clone());
                    Ok(tx)
                }
                Err(status) => Err(status),
            },
        };
        drop(loading);
        self.forget_slot(game_id, &slot).await;
        loaded
    }

    /// The mailbox of a game's running actor, if there is one.
    async fn live(&self, game_id: &str) -> Option<Mailbox> {
        self.inner
            .actors
            .lock()
            .await
            .get(game_id)
            .filter(|tx| !tx.is_closed())
            .cloned()
    }

    /// The slot whose holder alone loads or creates `game_id`.
    async fn loading_slot(&self, game_id: &str) -> Arc<Mutex<()>> {
        self.inner
            .loading
            .lock()
            .await
            .entry(game_id.to_owned())
            .or_default()
            .clone()
    }

    /// Drops the slot of a game that is loaded: a later caller finds the
    /// actor. (One still waiting on this slot finds it too.)
    async fn forget_slot(&self, game_id: &str, slot: &Arc<Mutex<()>>) {
        let mut slots = self.inner.loading.lock().await;
        if slots.get(game_id).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            slots.remove(game_id);
        }
    }

    /// Reads a game from the store and starts its actor.
    async fn load(&self, game_id: &str) -> Result<Mailbox, Status> {
        let placement = self.inner.ownership.placement(game_id);
        let epoch = match placement {
            // Take the game over first, then read it: a writer of the
            // epoch before is fenced off from here, so what is read is
            // final. The time its shard had no owner goes back on its clock.
            Placement::Here { give_back_ms } => {
                store::take_over(self.db(), game_id, give_back_ms).await
            }
            Placement::Elsewhere(_) | Placement::Nobody => store::epoch(self.db(), game_id).await,
        }
        .map_err(|e| ttakji_platform::store::status(&e, &format!("cannot read game {game_id}")))?
        .ok_or_else(|| Status::not_found(format!("there is no game {game_id}")))?;
        let (stored, moves) = store::load_game(self.db(), game_id)
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
                return Err(not_here(game_id, &placement));
            }
            metrics::gauge!("ttakji_live_games").increment(1.0);
            if epoch > store::FIRST_EPOCH {
                metrics::counter!("ttakji_game_takeovers_total").increment(1);
            }
            self.announce_last_event(game_id, state.seq()).await;
        }
        tracing::info!(
            game_id,
            epoch,
            moves = state.game().move_number(),
            "game loaded"
        );
        // Nothing here knows the game its last event showed: the next
        // event goes whole.
        Ok(self.start(state, epoch, None))
    }

    /// Publishes a game's last stored event again as it is taken up. Its
    /// last owner may have stored a step and died or stopped before
    /// publishing it; then every watcher would wait for an event that
    /// never comes (each player waiting on the other) until the next one.
    /// Watchers drop an event they have seen, and fill a gap before it
    /// from the store. Best effort: a stream reopened reads the store too.
    async fn announce_last_event(&self, game_id: &str, seq: u64) {
        let after = i64::try_from(seq).unwrap_or(i64::MAX).saturating_sub(1);
        match store::events_after(self.db(), game_id, after, 1).await {
            Ok(mut last) => {
                if let Some(payload) = last.pop() {
                    let topic = ttakji_platform::bus::game_events(game_id);
                    let published = self.inner.bus.publish_encoded(&topic, payload).await;
                    if let Err(e) = published {
                        tracing::warn!(game_id, error = %e, "last event not published again");
                    }
                }
            }
            Err(e) => tracing::warn!(game_id, error = %e, "last event not read"),
        }
    }

    /// Stored events of a game after `after`.
    pub async fn events_after(
        &self,
        game_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<Vec<pb::GameEvent>, Status> {
        let rows = store::events_after(
            self.db(),
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
        game_id: &GameId,
        make: impl Fn(tokio::sync::oneshot::Sender<T>) -> Command,
    ) -> Result<T, Status> {
        // An actor that has just unloaded itself (idle), or found the game
        // taken over elsewhere, stops without taking the command: the game
        // is loaded again and asked once more.
        for _ in 0..3 {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let tx = self.mailbox(game_id).await?;
            if tx.send(Box::new(make(reply))).await.is_err() {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use baduk::Rules;
    use ttakji_platform::bus::Bus;
    use ttakji_platform::store::Database;
    use ttakji_proto::GameId;

    use super::Registry;
    use crate::ownership::Ownership;
    use crate::records::{AiEngine, GameMeta, Seat};

    fn meta(id: &str) -> GameMeta {
        let seat = |name: &str| Seat {
            user_id: Some(name.to_owned()),
            name: name.to_owned(),
            ai: None,
        };
        GameMeta {
            id: GameId::parse(id).expect("an id"),
            rules: Rules::ttakji(),
            black: seat("b"),
            white: seat("w"),
            seconds_per_move: 0,
            created_at: 1,
            ranked: false,
            keep_colors: false,
            stand_in: false,
            ai_engine: AiEngine::Server,
            ladder_rating: 0,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_game_being_loaded_holds_up_its_own_callers_and_no_other_games() {
        let db = Database::connect("sqlite::memory:").await.expect("sqlite");
        let (_trigger, shutdown) = ttakji_platform::shutdown::channel();
        let registry = Registry::new(
            db,
            Bus::in_process(),
            crate::actor::AiConfig::default(),
            shutdown,
            Ownership::single("http://me".into()),
        );
        let slow = "a".repeat(32);
        let other = "b".repeat(32);
        registry.create(meta(&other)).await.expect("created");
        // Someone is loading the slow game and has not finished.
        let slot = registry.loading_slot(&slow).await;
        let loading = slot.lock().await;

        let found = tokio::time::timeout(
            Duration::from_secs(5),
            registry.mailbox(&GameId::parse(&other).expect("an id")),
        )
        .await;
        assert!(
            matches!(found, Ok(Ok(_))),
            "another game's lookup waits for the load: {found:?}"
        );
        let waiting = registry.clone();
        let slow_id = slow.clone();
        let behind = tokio::spawn(async move {
            waiting
                .mailbox(&GameId::parse(&slow_id).expect("an id"))
                .await
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            !behind.is_finished(),
            "the slow game's caller did not wait for its slot"
        );
        drop(loading);
        let answered = tokio::time::timeout(Duration::from_secs(5), behind)
            .await
            .expect("answered once the slot is free")
            .expect("joined");
        assert_eq!(
            answered.map(|_| ()).map_err(|s| s.code()),
            Err(tonic::Code::NotFound),
            "then it loads the game itself (here there is none)"
        );
        assert!(
            registry.inner.loading.lock().await.is_empty(),
            "no slot is left behind"
        );
    }

    /// An owner that stored a step and died before publishing it leaves
    /// watchers waiting for an event that never comes: whoever takes the
    /// game up next publishes its last stored event again.
    #[tokio::test]
    async fn a_game_taken_up_publishes_its_last_stored_event_again() {
        let db = Database::connect("sqlite::memory:").await.expect("sqlite");
        let (_trigger, shutdown) = ttakji_platform::shutdown::channel();
        let registry = |bus: Bus| {
            Registry::new(
                db.clone(),
                bus,
                crate::actor::AiConfig::default(),
                shutdown.clone(),
                Ownership::single("http://me".into()),
            )
        };
        let id = "c".repeat(32);
        // The first owner publishes on a bus the watcher does not hear.
        let created = registry(Bus::in_process())
            .create(meta(&id))
            .await
            .expect("created");
        let heard = Bus::in_process();
        let mut watcher = heard
            .subscribe(&ttakji_platform::bus::game_events(&id))
            .await
            .expect("subscribed");
        registry(heard)
            .mailbox(&GameId::parse(&id).expect("an id"))
            .await
            .expect("taken up");
        match tokio::time::timeout(Duration::from_secs(5), watcher.recv()).await {
            Ok(ttakji_platform::bus::Delivery::Message { message, .. }) => {
                assert_eq!(message.seq, created.event_seq, "the last stored event");
                assert_eq!(message.game_id, id);
            }
            other => panic!("no event after the game was taken up: {other:?}"),
        }
    }
}
