//! What a load test has seen, shared by every bot: moves acknowledged, the
//! round trips and call latencies, refused calls by code, the games being
//! played, and what each fault cost.
//!
//! A move's round trip runs from the first attempt to send it until the
//! opponent's stream delivers it, so a move retried through a fault counts
//! the whole wait. A fault's window runs from the fault until every game
//! that had moved before it has had its next move acknowledged (or has
//! ended), or until the next fault; calls refused in the window are the
//! fault's.
//!
//! The run is measured from [`Tally::begin_measuring`] on: moves first
//! sent before it (the warm-up, while games are still being made) are
//! played but not counted. Refused calls count over the whole run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::histogram::Histogram;

/// The shared tally of one run.
#[derive(Debug)]
pub struct Tally {
    started: Instant,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Moves first sent before this are not counted; `None` counts them
    /// all, from the start.
    measured_from: Option<Instant>,
    /// The user ids of the bots.
    ours: HashSet<String>,
    round_trip: Histogram,
    calls: Histogram,
    baseline: Histogram,
    moves: u64,
    /// Stream messages received since the measuring began, and their
    /// encoded bytes.
    stream_messages: u64,
    stream_bytes: u64,
    errors: BTreeMap<&'static str, u64>,
    error_examples: BTreeMap<&'static str, String>,
    games: HashMap<String, LiveGame>,
    games_started: u64,
    games_finished: u64,
    faults: Vec<Fault>,
}

/// A game the bots are playing.
#[derive(Debug, Default)]
struct LiveGame {
    /// Bots seated in it (1 against the computer, else 2).
    bots: u8,
    /// Bots that have seen it end.
    ended_for: u8,
    /// When each move not yet seen by the opponent was first sent.
    pending: HashMap<u32, Instant>,
    last_ack: Option<Instant>,
}

/// One fault and what it cost.
#[derive(Debug, Clone)]
pub struct Fault {
    pub at: Instant,
    pub what: String,
    /// Calls refused in the fault's window, by code.
    pub errors: BTreeMap<&'static str, u64>,
    /// Games that had moved before the fault.
    pub moving: usize,
    /// Those still waiting for their next acknowledged move, with the time
    /// of their last one before the fault.
    waiting: HashMap<String, Instant>,
    /// Games that ended in the window without another acknowledged move.
    pub ended: usize,
    /// The longest time from a waiting game's last acknowledged move
    /// before the fault to its next one.
    pub longest_gap: Option<Duration>,
    /// From the fault until the last waiting game moved again.
    pub recovered_after: Option<Duration>,
    open: bool,
}

impl Fault {
    /// Games that had not moved again when the window closed.
    pub fn not_recovered(&self) -> usize {
        self.waiting.len()
    }

    fn settle(&mut self, now: Instant) {
        if self.open && self.waiting.is_empty() {
            self.open = false;
            self.recovered_after = Some(now.saturating_duration_since(self.at));
        }
    }
}

/// What the progress line shows.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub moves: u64,
    pub round_trip_p50: Option<Duration>,
    pub round_trip_p99: Option<Duration>,
    pub errors: u64,
    pub live_games: usize,
}

/// Everything at the end of the run.
#[derive(Debug, Clone)]
pub struct Totals {
    pub started: Instant,
    pub elapsed: Duration,
    pub moves: u64,
    pub stream_messages: u64,
    pub stream_bytes: u64,
    pub round_trip: Histogram,
    pub calls: Histogram,
    pub baseline: Histogram,
    pub errors: BTreeMap<&'static str, u64>,
    /// The first message of each code.
    pub error_examples: BTreeMap<&'static str, String>,
    pub games_started: u64,
    pub games_finished: u64,
    pub live_games: usize,
    pub faults: Vec<Fault>,
}

impl State {
    /// Whether a move first sent `at` is measured.
    fn counts(&self, sent: Instant) -> bool {
        self.measured_from.is_none_or(|from| sent >= from)
    }
}

impl Tally {
    pub fn new() -> Tally {
        Tally {
            started: Instant::now(),
            state: Mutex::default(),
        }
    }

    /// Counts moves and latencies afresh from `at`: what was sent before
    /// it is not counted, even if it is answered later.
    pub fn begin_measuring(&self, at: Instant) {
        let mut state = self.state();
        state.measured_from = Some(at);
        state.round_trip = Histogram::default();
        state.calls = Histogram::default();
        state.baseline = Histogram::default();
        state.moves = 0;
        state.stream_messages = 0;
        state.stream_bytes = 0;
    }

    /// When the measured part of the run began.
    pub fn measured_from(&self) -> Instant {
        self.state().measured_from.unwrap_or(self.started)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere leaves counters that are still worth reporting.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn started(&self) -> Instant {
        self.started
    }

    /// Adds a bot's user id: its seats count as ours.
    pub fn add_bot(&self, user_id: &str) {
        self.state().ours.insert(user_id.to_owned());
    }

    /// Whether `user_id` is one of the bots.
    pub fn is_bot(&self, user_id: &str) -> bool {
        self.state().ours.contains(user_id)
    }

    /// A bot has sat down at `game_id`, with `bots` of the seats ours.
    pub fn game_seen(&self, game_id: &str, bots: u8) {
        let mut state = self.state();
        if !state.games.contains_key(game_id) {
            state.games_started += 1;
            state.games.insert(
                game_id.to_owned(),
                LiveGame {
                    bots,
                    ..LiveGame::default()
                },
            );
        }
    }

    /// A bot has seen `game_id` end. The game stops being live when every
    /// bot in it has.
    pub fn game_ended(&self, game_id: &str) {
        let mut state = self.state();
        let Some(game) = state.games.get_mut(game_id) else {
            return;
        };
        game.ended_for += 1;
        if game.ended_for < game.bots {
            return;
        }
        state.games.remove(game_id);
        state.games_finished += 1;
        let now = Instant::now();
        if let Some(fault) = state.faults.last_mut().filter(|f| f.open)
            && fault.waiting.remove(game_id).is_some()
        {
            fault.ended += 1;
            fault.settle(now);
        }
    }

    /// Move `number` of `game_id` is about to be sent (its first attempt
    /// starts the round trip; a retry keeps it).
    pub fn move_sent(&self, game_id: &str, number: u32, at: Instant) {
        if let Some(game) = self.state().games.get_mut(game_id)
            && game.bots == 2
        {
            game.pending.entry(number).or_insert(at);
        }
    }

    /// A move call was acknowledged `at`, after being sent at `sent`.
    pub fn move_acknowledged(&self, game_id: &str, sent: Instant, at: Instant) {
        let mut state = self.state();
        if state.counts(sent) {
            state.moves += 1;
            state.calls.record(at.saturating_duration_since(sent));
        }
        if let Some(game) = state.games.get_mut(game_id) {
            game.last_ack = Some(at);
        }
        if let Some(fault) = state.faults.last_mut().filter(|f| f.open)
            && let Some(before) = fault.waiting.remove(game_id)
        {
            let gap = at.saturating_duration_since(before);
            fault.longest_gap = Some(fault.longest_gap.map_or(gap, |g| g.max(gap)));
            fault.settle(at);
        }
    }

    /// The opponent's stream has delivered move `number` of `game_id`.
    pub fn move_delivered(&self, game_id: &str, number: u32, at: Instant) {
        let mut state = self.state();
        let sent = state
            .games
            .get_mut(game_id)
            .and_then(|game| game.pending.remove(&number));
        if let Some(sent) = sent.filter(|&sent| state.counts(sent)) {
            state.round_trip.record(at.saturating_duration_since(sent));
        }
    }

    /// A stream delivered a message of `bytes` (encoded) at `at`.
    pub fn stream_message(&self, bytes: usize, at: Instant) {
        let mut state = self.state();
        if state.counts(at) {
            state.stream_messages += 1;
            state.stream_bytes += bytes as u64;
        }
    }

    pub fn baseline_call(&self, took: Duration) {
        self.state().baseline.record(took);
    }

    /// A call was refused (or failed) with `status`.
    pub fn refused(&self, status: &tonic::Status) {
        let name = ttakji_platform::refusal::code_name(status.code());
        let mut state = self.state();
        *state.errors.entry(name).or_default() += 1;
        state
            .error_examples
            .entry(name)
            .or_insert_with(|| status.message().to_owned());
        if let Some(fault) = state.faults.last_mut().filter(|f| f.open) {
            *fault.errors.entry(name).or_default() += 1;
        }
    }

    /// A fault happened `at` (`what` says which). Any window still open
    /// closes: its games had not all moved again before this one.
    pub fn fault(&self, what: String, at: Instant) {
        let mut state = self.state();
        if let Some(last) = state.faults.last_mut() {
            last.open = false;
        }
        let waiting: HashMap<String, Instant> = state
            .games
            .iter()
            .filter_map(|(id, game)| Some((id.clone(), game.last_ack?)))
            .collect();
        let mut fault = Fault {
            at,
            what,
            errors: BTreeMap::new(),
            moving: waiting.len(),
            waiting,
            ended: 0,
            longest_gap: None,
            recovered_after: None,
            open: true,
        };
        fault.settle(at);
        state.faults.push(fault);
    }

    pub fn progress(&self) -> Progress {
        let state = self.state();
        Progress {
            moves: state.moves,
            round_trip_p50: state.round_trip.quantile(0.5),
            round_trip_p99: state.round_trip.quantile(0.99),
            errors: state.errors.values().sum(),
            live_games: state.games.len(),
        }
    }

    pub fn totals(&self) -> Totals {
        let state = self.state();
        let started = state.measured_from.unwrap_or(self.started);
        Totals {
            started,
            elapsed: started.elapsed(),
            moves: state.moves,
            stream_messages: state.stream_messages,
            stream_bytes: state.stream_bytes,
            round_trip: state.round_trip.clone(),
            calls: state.calls.clone(),
            baseline: state.baseline.clone(),
            errors: state.errors.clone(),
            error_examples: state.error_examples.clone(),
            games_started: state.games_started,
            games_finished: state.games_finished,
            live_games: state.games.len(),
            faults: state.faults.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_round_trip_runs_from_the_first_attempt_to_the_opponents_stream() {
        let tally = Tally::new();
        let t = Instant::now();
        tally.game_seen("g1", 2);
        tally.move_sent("g1", 1, t);
        tally.move_sent("g1", 1, t + ms(50));
        tally.move_acknowledged("g1", t + ms(50), t + ms(52));
        tally.move_delivered("g1", 1, t + ms(60));
        tally.move_delivered("g1", 1, t + ms(90));
        let totals = tally.totals();
        assert_eq!(totals.moves, 1);
        assert_eq!(totals.round_trip.count(), 1, "a move is delivered once");
        assert_eq!(totals.round_trip.max(), ms(60));
        assert_eq!(totals.calls.max(), ms(2));
    }

    #[test]
    fn moves_sent_before_the_measuring_began_are_played_but_not_counted() {
        let tally = Tally::new();
        let t = Instant::now();
        tally.game_seen("g1", 2);
        tally.move_sent("g1", 1, t);
        tally.move_acknowledged("g1", t, t + ms(400));
        // A stream message of the warm-up, and one after it.
        tally.stream_message(1_000, t + ms(50));
        tally.begin_measuring(t + ms(100));
        tally.stream_message(60, t + ms(110));
        // Move 1, sent in the warm-up, arrives after it: not counted.
        tally.move_delivered("g1", 1, t + ms(500));
        tally.move_sent("g1", 2, t + ms(600));
        tally.move_acknowledged("g1", t + ms(600), t + ms(601));
        tally.move_delivered("g1", 2, t + ms(603));
        tally.refused(&tonic::Status::unavailable("away"));
        let totals = tally.totals();
        assert_eq!(totals.moves, 1);
        assert_eq!(totals.round_trip.count(), 1);
        assert_eq!(totals.round_trip.max(), ms(3));
        assert_eq!(totals.calls.max(), ms(1));
        assert_eq!(totals.started, t + ms(100));
        assert_eq!(totals.errors.values().sum::<u64>(), 1);
        assert_eq!((totals.stream_messages, totals.stream_bytes), (1, 60));
    }

    #[test]
    fn against_the_computer_no_round_trip_is_kept() {
        let tally = Tally::new();
        let t = Instant::now();
        tally.game_seen("g1", 1);
        tally.move_sent("g1", 1, t);
        tally.move_delivered("g1", 1, t + ms(5));
        assert_eq!(tally.totals().round_trip.count(), 0);
    }

    #[test]
    fn a_game_is_live_until_both_bots_have_seen_it_end() {
        let tally = Tally::new();
        tally.game_seen("g1", 2);
        tally.game_seen("g1", 2);
        tally.game_ended("g1");
        assert_eq!(tally.progress().live_games, 1);
        tally.game_ended("g1");
        let totals = tally.totals();
        assert_eq!((totals.live_games, totals.games_started), (0, 1));
        assert_eq!(totals.games_finished, 1);
    }

    #[test]
    fn a_fault_costs_the_refusals_until_every_moving_game_has_moved_again() {
        let tally = Tally::new();
        let t = Instant::now();
        for id in ["g1", "g2", "g3"] {
            tally.game_seen(id, 2);
        }
        tally.move_acknowledged("g1", t, t + ms(10));
        tally.move_acknowledged("g2", t, t + ms(20));
        tally.refused(&tonic::Status::internal("broken"));
        tally.fault("restart".into(), t + ms(100));
        tally.refused(&tonic::Status::unavailable("away"));
        tally.refused(&tonic::Status::unavailable("away"));
        tally.move_acknowledged("g3", t + ms(150), t + ms(160));
        tally.move_acknowledged("g1", t + ms(300), t + ms(310));
        tally.refused(&tonic::Status::cancelled("gone"));
        tally.move_acknowledged("g2", t + ms(500), t + ms(520));
        tally.refused(&tonic::Status::unavailable("away"));
        let totals = tally.totals();
        let fault = &totals.faults[0];
        assert_eq!(fault.moving, 2, "g3 had not moved before the fault");
        assert_eq!(
            fault.errors,
            BTreeMap::from([("CANCELLED", 1), ("UNAVAILABLE", 2)])
        );
        assert_eq!(fault.recovered_after, Some(ms(420)));
        assert_eq!(fault.longest_gap, Some(ms(500)), "g2: 20 ms to 520 ms");
        assert_eq!(fault.not_recovered(), 0);
        assert_eq!(totals.errors.values().sum::<u64>(), 5);
        assert_eq!(totals.error_examples["UNAVAILABLE"], "away");
    }

    #[test]
    fn a_game_that_ends_in_the_window_is_not_waited_for() {
        let tally = Tally::new();
        let t = Instant::now();
        tally.game_seen("g1", 1);
        tally.game_seen("g2", 2);
        tally.move_acknowledged("g1", t, t);
        tally.move_acknowledged("g2", t, t);
        tally.fault("restart".into(), t + ms(10));
        tally.game_ended("g1");
        tally.fault("restart".into(), t + ms(20));
        let totals = tally.totals();
        let first = &totals.faults[0];
        assert_eq!((first.ended, first.not_recovered()), (1, 1));
        assert_eq!(first.recovered_after, None, "closed by the next fault");
        assert_eq!(totals.faults[1].moving, 1);
    }
}
