//! One game's online rules as a pure state machine.
//!
//! Each action takes the time `now` and returns either a [`Refusal`] or a
//! [`Step`]: what to store, the events to send and what to answer. The
//! game changes only when a step is [committed](OnlineGame::commit), which
//! the caller does once the step's write is stored, so a failed write
//! leaves the game exactly as it was. Nothing here does I/O or reads a
//! clock.
//!
//! The rules on top of the rules engine's: a move names the number it will
//! have (a retry of a move already played gets the same answer, any other
//! number is refused); the move clock gives the next player full time after
//! every move and running out loses; a standing draw offer lapses with the
//! next move; undo is offered only against the computer and takes back the
//! player's last move with the reply.

mod captures;
mod counting;
mod refusal;
mod stand_in;
mod step;
#[cfg(test)]
mod tests;

use baduk::sgf::Record;
use baduk::{Action, ByColor, Color, EndReason, Game, GameResult, Move, Point, Score};
use baduk_ai::{Decision, Level};

pub use counting::{COUNTING_SECONDS, Counting};
pub use refusal::{Refusal, RefusalKind};
pub use stand_in::STAND_IN_LEVEL;
pub use step::{Event, EventKind, PlayedMove, Step};

use captures::Captures;

use crate::records::{AiEngine, Finish, GameMeta, StoredGame, StoredMove, Write};

/// An action as a request carries it; a point is checked against the
/// game's board here, where its size is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    Place { column: u32, row: u32 },
    Pass,
    Resign,
}

/// What a player does while a territory game is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountAction {
    /// Marks the chain at a point dead, or alive again.
    Mark { column: u32, row: u32, dead: bool },
    /// Confirms the marks of a version.
    Confirm { version: u32 },
    /// Goes back to play from the count after this many moves.
    Resume { after_move: u32 },
}

/// What a side does, once checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Place(Point),
    Pass,
    Resign,
    /// The side's clock ran out (decided by the authority, not asked for).
    TimeOut,
    /// The side accepted the opponent's draw offer.
    AcceptDraw,
}

/// How a game ended, with its count when it was counted.
#[derive(Debug, Clone)]
pub struct Finished {
    pub result: GameResult,
    pub reason: EndReason,
    pub count: Option<Score>,
}

/// A live game under the online rules.
#[derive(Debug, Clone)]
pub struct OnlineGame {
    meta: GameMeta,
    /// Boxed: the board is kilobytes, and a step copies the game once (as a
    /// rollback copy did before) rather than again each time it is moved.
    game: Box<Game>,
    captured: Captures,
    /// The last event's sequence number.
    seq: u64,
    finished: Option<Finished>,
    /// Advanced by every undo, so a computer decision about a position that
    /// was taken back is dropped.
    generation: u64,
    /// When the side to move runs out of time (Unix ms); online games only.
    deadline: Option<i64>,
    /// The side whose draw offer stands.
    draw_offer: Option<Color>,
    /// When the game ended (Unix ms); 0 while it goes on.
    finished_at: i64,
    /// The open count of a territory game after two passes.
    counting: Option<Counting>,
    /// Since when each seat's player has been away (Unix ms), by colour.
    away: ByColor<Option<i64>>,
    /// The seats the computer plays now for a player who is away.
    stand_ins: ByColor<bool>,
    /// The numbers of the moves the computer played standing in.
    stand_in_moves: Vec<u32>,
}

impl OnlineGame {
    /// A new game and its first event (its step is the creation itself).
    #[must_use]
    pub fn new(meta: GameMeta) -> (OnlineGame, Event) {
        let deadline = (meta.seconds_per_move > 0)
            .then(|| meta.created_at + i64::from(meta.seconds_per_move) * 1000);
        let at = meta.created_at;
        let game = OnlineGame {
            game: Box::new(Game::new(meta.rules)),
            meta,
            captured: Captures::default(),
            seq: 1,
            finished: None,
            generation: 0,
            deadline,
            draw_offer: None,
            finished_at: 0,
            counting: None,
            away: ByColor::both(None),
            stand_ins: ByColor::both(false),
            stand_in_moves: Vec::new(),
        };
        let started = Event {
            seq: 1,
            at,
            kind: EventKind::Started,
        };
        (game, started)
    }

    /// The game again from its stored row and moves.
    ///
    /// # Errors
    /// What in the stored game the rules cannot replay.
    pub fn restore(stored: StoredGame, moves: &[StoredMove]) -> Result<OnlineGame, String> {
        let (mut live, _) = OnlineGame::new(stored.meta);
        for m in moves {
            if live.game.is_over() && stored.resumed_after.contains(&(m.number as u32 - 1)) {
                // Play went on here after two passes.
                live.game
                    .resume_play()
                    .map_err(|e| format!("move {}: {e}", m.number))?;
            }
            let action = m.point.map_or(Action::Pass, Action::Play);
            let outcome = live
                .game
                .play(Move {
                    color: m.color,
                    action,
                })
                .map_err(|e| format!("move {}: {e}", m.number))?;
            live.captured.push(&outcome.captured);
            if m.by_stand_in {
                live.stand_in_moves.push(m.number as u32);
            }
        }
        live.away = stored.away;
        live.stand_ins = stored.stand_ins;
        let played = u32::try_from(live.game.move_number()).unwrap_or(u32::MAX);
        let ended_off_the_board = stored.end_reason.is_some_and(|r| !r.is_counted());
        if ended_off_the_board
            && live.game.end() == Some(EndReason::TwoPasses)
            && stored.resumed_after.contains(&played)
        {
            // Play went on after the last two passes, and the game ended
            // before another move (a resignation during the count, a
            // timeout or a draw right after going back to play).
            live.game.resume_play().map_err(|e| e.to_string())?;
        }
        let ended = match stored.end_reason {
            Some(EndReason::Resignation { winner }) => live.game.resign(winner.opponent()).err(),
            Some(EndReason::Timeout { winner }) => live.game.time_out(winner.opponent()).err(),
            Some(EndReason::DrawAgreed) => live.game.agree_draw().err(),
            _ => None,
        };
        if let Some(e) = ended {
            return Err(e.to_string());
        }
        live.seq = stored.last_seq;
        live.deadline = stored.deadline_at;
        live.finished_at = stored.finished_at.unwrap_or_default();
        live.draw_offer = stored.draw_offered_by;
        match (live.game.end(), stored.end_reason) {
            (Some(EndReason::TwoPasses), None) if live.counts_by_agreement() => {
                // The players are agreeing on the dead stones.
                let stored_count = stored
                    .counting
                    .as_ref()
                    .ok_or("two passes ended play but no count is stored")?;
                live.counting = Some(Counting::restored(stored_count, &live.game));
            }
            (Some(reason), _) => {
                let agreed = (reason == EndReason::TwoPasses && live.counts_by_agreement())
                    .then_some(stored.dead_stones.as_slice());
                live.finished = Some(live.finish_with_dead(reason, agreed));
            }
            (None, _) => {}
        }
        Ok(live)
    }

    #[must_use]
    pub fn meta(&self) -> &GameMeta {
        &self.meta
    }

    /// The rules engine's game: the board, the moves, the superko history.
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Keeps the board in a few bytes while the game waits for its next
    /// command ([`Game::pack`]); it is made again when next read.
    pub fn pack(&mut self) {
        self.game.pack();
        self.captured.shrink();
    }

    /// The last event's sequence number.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.seq
    }

    #[must_use]
    pub fn finished(&self) -> Option<&Finished> {
        self.finished.as_ref()
    }

    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.finished.is_none()
    }

    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// When the side to move loses on time, while the game goes on.
    #[must_use]
    pub fn deadline(&self) -> Option<i64> {
        self.deadline.filter(|_| self.is_playing())
    }

    /// The side whose draw offer stands, while the game goes on.
    #[must_use]
    pub fn draw_offer(&self) -> Option<Color> {
        self.draw_offer.filter(|_| self.is_playing())
    }

    /// When the game ended; 0 while it goes on.
    #[must_use]
    pub fn finished_at(&self) -> i64 {
        if self.is_playing() {
            0
        } else {
            self.finished_at
        }
    }

    /// Whether the side to move has run out of time at `now`.
    #[must_use]
    pub fn out_of_time(&self, now: i64) -> bool {
        self.deadline().is_some_and(|d| now >= d)
    }

    /// Move `number` (from 1) as events name it.
    ///
    /// # Panics
    /// When no move has that number.
    #[must_use]
    pub fn played_move(&self, number: usize) -> PlayedMove {
        let mv = self.game.moves()[number - 1];
        PlayedMove {
            number,
            color: mv.color,
            point: match mv.action {
                Action::Play(p) => Some(p),
                Action::Pass => None,
            },
            captured: self.captured.of(number).to_vec(),
            by_stand_in: self.by_stand_in(number),
        }
    }

    /// Whether a person in a game against the computer has a move that an
    /// undo could take back.
    #[must_use]
    pub fn undo_allowed(&self) -> bool {
        self.is_playing()
            && self.counting.is_none()
            && self.meta.is_ai_game()
            && self
                .game
                .moves()
                .iter()
                .any(|m| self.meta.seat(m.color).ai.is_none())
    }

    /// The computer's colour and level, if it is to move now.
    #[must_use]
    pub fn computer_to_move(&self) -> Option<(Color, Level)> {
        if !self.is_playing() || self.counting.is_some() {
            return None;
        }
        let color = self.game.to_move();
        // A computer whose engine runs in its player's client thinks there.
        let level = self
            .meta
            .seat(color)
            .ai
            .filter(|_| self.meta.ai_engine == AiEngine::Server);
        level
            .or_else(|| self.stand_ins[color].then_some(STAND_IN_LEVEL))
            .map(|level| (color, level))
    }

    /// The record as SGF, with names, date and result.
    #[must_use]
    pub fn sgf(&self) -> String {
        let mut record = Record::from_game(&self.game);
        record.black = Some(self.meta.black.name.clone());
        record.white = Some(self.meta.white.name.clone());
        record.date = Some(date_of(self.meta.created_at));
        record.result = self.finished.as_ref().map(|f| f.result);
        record.seconds_per_move = Some(self.meta.seconds_per_move).filter(|&s| s > 0);
        record.game_comment = [&self.meta.black, &self.meta.white]
            .into_iter()
            .find(|seat| seat.ai.is_some())
            .map(|computer| {
                let name = &computer.name;
                match self.meta.ai_engine {
                    AiEngine::Server => format!("{name} thought on the server."),
                    AiEngine::Client => {
                        format!("{name} thought in the player's client, not on the server.")
                    }
                }
            });
        record.comments = self
            .stand_in_moves
            .iter()
            .map(|&n| {
                let color = self.game.moves()[n as usize - 1].color;
                let name = &self.meta.seat(color).name;
                (
                    n as usize - 1,
                    format!("played by the computer for {name}, who was away"),
                )
            })
            .collect();
        record.to_sgf()
    }

    /// Makes the step's game the game. Call it once the step's write is
    /// stored; a step that was not stored is dropped instead.
    pub fn commit(&mut self, step: Step) {
        if let Some(next) = step.next {
            *self = *next;
        }
    }

    /// A player's move, pass or resignation, numbered as the request says.
    ///
    /// # Errors
    /// Why the action is refused.
    pub fn submit(
        &self,
        user_id: &str,
        number: u32,
        requested: Requested,
        now: i64,
    ) -> Result<Step, Refusal> {
        let color = self.player(user_id)?;
        self.submit_as(color, number, requested, now)
    }

    /// The computer seat's move, pass or resignation, sent by the game's
    /// player because the computer thinks in the player's client; checked
    /// like any other.
    ///
    /// # Errors
    /// Why the action is refused: as [`OnlineGame::submit`], and when the
    /// game has no computer seat or its computer thinks on the server.
    pub fn submit_for_computer(
        &self,
        user_id: &str,
        number: u32,
        requested: Requested,
        now: i64,
    ) -> Result<Step, Refusal> {
        let color = self.computer_seat_of(user_id)?;
        self.submit_as(color, number, requested, now)
    }

    fn submit_as(
        &self,
        color: Color,
        number: u32,
        requested: Requested,
        now: i64,
    ) -> Result<Step, Refusal> {
        let act = match requested {
            Requested::Pass => Act::Pass,
            Requested::Resign => Act::Resign,
            Requested::Place { column, row } => Act::Place(self.point(column, row)?),
        };
        if act == Act::Resign {
            if let Some(Finished {
                reason: EndReason::Resignation { winner },
                ..
            }) = &self.finished
                && *winner == color.opponent()
            {
                // A retried resignation: the same answer.
                return Ok(Step::unchanged(None, now));
            }
            return self.act(color, act, now);
        }
        if self.counting.is_some() {
            return Err(Refusal::Counting);
        }
        let expected = self.game.move_number() + 1;
        let number = number as usize;
        if number == 0 {
            return Err(Refusal::MoveNumberZero { expected });
        }
        if number < expected {
            // A retry of a move already played gets the same answer.
            let earlier = self.game.moves()[number - 1];
            let asked = match act {
                Act::Place(p) => Action::Play(p),
                _ => Action::Pass,
            };
            if earlier.color == color && earlier.action == asked {
                return Ok(Step::unchanged(Some(number), now));
            }
            return Err(Refusal::AlreadyPlayed { number, expected });
        }
        if number > expected {
            return Err(Refusal::NotNext { number, expected });
        }
        self.act(color, act, now)
    }

    /// A player's action on the count of a territory game.
    ///
    /// # Errors
    /// Why the action is refused.
    pub fn settle_count(
        &self,
        user_id: &str,
        action: CountAction,
        now: i64,
    ) -> Result<Step, Refusal> {
        match action {
            CountAction::Mark { column, row, dead } => {
                self.mark_dead(user_id, column, row, dead, now)
            }
            CountAction::Confirm { version } => self.confirm_count(user_id, version, now),
            CountAction::Resume { after_move } => self.resume_play(user_id, after_move, now),
        }
    }

    /// The side to move loses on time (or the open count is counted with
    /// the server's verdict); `None` before the deadline or once the game
    /// is over.
    #[must_use]
    pub fn time_out(&self, now: i64) -> Option<Step> {
        if !self.out_of_time(now) {
            return None;
        }
        if self.counting.is_some() {
            return self.count_timed_out(now);
        }
        self.act(self.game.to_move(), Act::TimeOut, now).ok()
    }

    /// The computer's decision, made for `generation`: `None` when the
    /// position it was made for was taken back or it is not its turn. A
    /// point the rules refuse becomes a pass.
    #[must_use]
    pub fn computer_move(&self, generation: u64, decision: Decision, now: i64) -> Option<Step> {
        if generation != self.generation {
            return None;
        }
        let (color, _) = self.computer_to_move()?;
        let act = match decision {
            Decision::Play(p) if self.game.check(color, p).is_ok() => Act::Place(p),
            Decision::Play(_) | Decision::Pass => Act::Pass,
            // Standing in, the computer never gives up the player's game.
            Decision::Resign if self.stand_ins[color] => Act::Pass,
            Decision::Resign => Act::Resign,
        };
        self.act(color, act, now).ok()
    }

    /// A player offers a draw; a second offer is answered as the first,
    /// and an offer when the opponent's stands is a draw.
    ///
    /// # Errors
    /// When the caller is not a player, the game is over or the opponent is
    /// the computer.
    pub fn offer_draw(&self, user_id: &str, now: i64) -> Result<Step, Refusal> {
        let color = self.draw_player(user_id)?;
        match self.draw_offer {
            Some(c) if c == color => Ok(Step::unchanged(None, now)),
            Some(_) => self.act(color, Act::AcceptDraw, now),
            None => Ok(self.set_draw_offer(Some(color), EventKind::DrawOffered(color), now)),
        }
    }

    /// A player answers the opponent's standing draw offer.
    ///
    /// # Errors
    /// As [`OnlineGame::offer_draw`], and when no offer of the opponent's stands.
    pub fn answer_draw(&self, user_id: &str, accept: bool, now: i64) -> Result<Step, Refusal> {
        let color = self.draw_player(user_id)?;
        if self.draw_offer != Some(color.opponent()) {
            return Err(Refusal::NoDrawOffer);
        }
        if accept {
            return self.act(color, Act::AcceptDraw, now);
        }
        Ok(self.set_draw_offer(None, EventKind::DrawDeclined(color), now))
    }

    /// Takes back the player's last move and the computer's reply, asked
    /// at `move_count` moves (so a repeated undo never takes back two).
    ///
    /// # Errors
    /// When the game is not against the computer, is over, has moved on
    /// since `move_count`, or the player has no move to take back.
    pub fn undo(&self, user_id: &str, move_count: u32, now: i64) -> Result<Step, Refusal> {
        let color = self.player(user_id)?;
        if !self.meta.is_ai_game() {
            return Err(Refusal::UndoOnlyAgainstComputer);
        }
        if self.finished.is_some() {
            return Err(Refusal::UndoAfterTheEnd {
                game_id: self.meta.id.to_string(),
            });
        }
        if self.counting.is_some() {
            return Err(Refusal::Counting);
        }
        let played = self.game.move_number();
        if move_count as usize != played {
            return Err(Refusal::UndoAtAnotherMove {
                played,
                asked: move_count,
            });
        }
        // Back to the player's last turn: their move, and the reply if any.
        let Some(mine) = self.game.moves().iter().rposition(|m| m.color == color) else {
            return Err(Refusal::NothingToUndo);
        };
        let mut next = self.clone();
        let mut undone = Vec::new();
        while next.game.move_number() > mine {
            undone.push(next.played_move(next.game.move_number()));
            next.game.undo().map_err(Refusal::Undo)?;
            next.captured.pop();
        }
        next.stand_in_moves.retain(|&n| n as usize <= mine);
        next.generation += 1;
        next.seq += 1;
        let event = Event {
            seq: next.seq,
            at: now,
            kind: EventKind::MovesUndone(undone),
        };
        let write = next.standing(Write {
            truncate_after: Some(mine),
            ..Write::default()
        });
        Ok(Step::one_event(next, write, event))
    }

    /// The computer's colour, for its player to play it: only in a game
    /// against the computer whose engine runs in the player's client.
    fn computer_seat_of(&self, user_id: &str) -> Result<Color, Refusal> {
        let color = self.computer_against(user_id)?;
        if self.meta.ai_engine != AiEngine::Client {
            return Err(Refusal::ComputerThinksOnServer {
                game_id: self.meta.id.to_string(),
            });
        }
        Ok(color)
    }

    /// Moves the computer's thinking to `engine` for its player.
    ///
    /// # Errors
    /// When the caller is not the game's player, the game has no computer
    /// seat, or is over.
    pub fn set_ai_engine(
        &self,
        user_id: &str,
        engine: AiEngine,
        now: i64,
    ) -> Result<Step, Refusal> {
        self.computer_against(user_id)?;
        if let Some(finished) = &self.finished {
            return Err(Refusal::GameOver {
                game_id: self.meta.id.to_string(),
                reason: finished.reason,
            });
        }
        if self.meta.ai_engine == engine {
            return Ok(Step::unchanged(None, now));
        }
        let mut next = self.clone();
        next.meta.ai_engine = engine;
        next.seq += 1;
        let event = Event {
            seq: next.seq,
            at: now,
            kind: EventKind::AiEngineChanged(engine),
        };
        let write = next.standing(Write::default());
        Ok(Step::one_event(next, write, event))
    }

    /// The colour of the computer `user_id` plays against.
    fn computer_against(&self, user_id: &str) -> Result<Color, Refusal> {
        let color = self.player(user_id)?.opponent();
        if self.meta.seat(color).ai.is_none() {
            return Err(Refusal::NoComputerSeat {
                game_id: self.meta.id.to_string(),
            });
        }
        Ok(color)
    }

    fn player(&self, user_id: &str) -> Result<Color, Refusal> {
        self.meta
            .color_of(user_id)
            .ok_or_else(|| Refusal::NotAPlayer {
                game_id: self.meta.id.to_string(),
            })
    }

    fn point(&self, column: u32, row: u32) -> Result<Point, Refusal> {
        let size = self.meta.rules.board_size.get();
        let n = u32::from(size);
        if column >= n || row >= n {
            return Err(Refusal::OffBoard { column, row, size });
        }
        // Both are below the board size, itself at most 19, here.
        Ok(Point::new(column as u8, row as u8))
    }

    /// The player of `user_id`, in an online game still being played.
    fn draw_player(&self, user_id: &str) -> Result<Color, Refusal> {
        let color = self.player(user_id)?;
        if let Some(finished) = &self.finished {
            return Err(Refusal::GameOver {
                game_id: self.meta.id.to_string(),
                reason: finished.reason,
            });
        }
        if self.meta.is_ai_game() {
            return Err(Refusal::ComputerTakesNoDraws);
        }
        if self.counting.is_some() {
            return Err(Refusal::Counting);
        }
        Ok(color)
    }

    fn set_draw_offer(&self, offer: Option<Color>, kind: EventKind, now: i64) -> Step {
        let mut next = self.clone();
        next.draw_offer = offer;
        next.seq += 1;
        let event = Event {
            seq: next.seq,
            at: now,
            kind,
        };
        let write = next.standing(Write::default());
        Step::one_event(next, write, event)
    }

    /// Checks an action of `color` with the rules engine and works out
    /// everything it changes.
    fn act(&self, color: Color, act: Act, now: i64) -> Result<Step, Refusal> {
        if let Some(finished) = &self.finished {
            return Err(Refusal::GameOver {
                game_id: self.meta.id.to_string(),
                reason: finished.reason,
            });
        }
        let mut next = self.clone();
        let mut write = Write::default();
        let mut events = Vec::new();
        let mut played = None;
        match act {
            Act::Resign => {
                if next.counting.take().is_some() {
                    // Resigning during the count: play goes on, to resign.
                    next.game.resume_play().map_err(Refusal::Resume)?;
                }
                next.game.resign(color).map_err(Refusal::Illegal)?;
            }
            Act::TimeOut => {
                next.game.time_out(color).map_err(Refusal::Illegal)?;
            }
            Act::AcceptDraw => {
                next.game.agree_draw().map_err(Refusal::Illegal)?;
            }
            Act::Place(_) | Act::Pass => {
                if next.game.to_move() != color {
                    return Err(Refusal::NotYourTurn {
                        to_move: next.game.to_move(),
                    });
                }
                let action = match act {
                    Act::Place(p) => Action::Play(p),
                    _ => Action::Pass,
                };
                let outcome = next
                    .game
                    .play(Move { color, action })
                    .map_err(Refusal::Illegal)?;
                next.captured.push(&outcome.captured);
                let number = outcome.move_number;
                let by_stand_in = next.stand_ins[color];
                if by_stand_in {
                    next.stand_in_moves.push(number as u32);
                }
                write.insert_move = Some(StoredMove {
                    number,
                    color,
                    point: match action {
                        Action::Play(p) => Some(p),
                        Action::Pass => None,
                    },
                    by_stand_in,
                });
                // The next move has its full time again; a standing draw
                // offer lapses with the move.
                next.draw_offer = None;
                if next.meta.seconds_per_move > 0 {
                    next.deadline = Some(now + i64::from(next.meta.seconds_per_move) * 1000);
                }
                next.seq += 1;
                events.push(Event {
                    seq: next.seq,
                    at: now,
                    kind: EventKind::MovePlayed {
                        number,
                        with_count: action == Action::Pass && !next.game.is_over(),
                    },
                });
                played = Some(number);
            }
        }
        if next.game.end() == Some(EndReason::TwoPasses) && next.counts_by_agreement() {
            // Territory rules: the players agree on the dead stones first.
            next.open_count(now);
            events.push(Event {
                seq: next.seq,
                at: now,
                kind: EventKind::CountingStarted,
            });
        } else if let Some(reason) = next.game.end() {
            let (finish, finished) = next.end_now(reason, None, now);
            write.finish = Some(finish);
            events.push(finished);
        }
        let write = next.standing(write);
        Ok(Step {
            next: Some(Box::new(next)),
            write: Some(write),
            events,
            played,
            at: now,
            is_action: true,
        })
    }

    /// The game's standing state (deadline, draw offer, open count, where
    /// play went on) written over `write`'s.
    fn standing(&self, write: Write) -> Write {
        Write {
            deadline_at: self.deadline,
            draw_offered_by: self.draw_offer,
            counting: self.counting.as_ref().map(Counting::stored),
            resumed_after: self.game.resumed_after().to_vec(),
            away: self.away,
            stand_ins: self.stand_ins,
            ai_engine: self.meta.ai_engine,
            ..write
        }
    }

    /// Ends the game now for `reason`, counted with `dead` taken off when
    /// given (an agreed count) or with the server's verdict: what to store,
    /// and the event that says it ended.
    fn end_now(&mut self, reason: EndReason, dead: Option<&[Point]>, now: i64) -> (Finish, Event) {
        let finished = self.finish_with_dead(reason, dead);
        self.counting = None;
        self.deadline = None;
        self.draw_offer = None;
        self.finished_at = now;
        let finish = Finish {
            reason,
            result: finished.result,
            points: finished.count.as_ref().map(|c| (c.black, c.white)),
            dead_stones: finished
                .count
                .as_ref()
                .map(|c| c.dead.clone())
                .unwrap_or_default(),
            sgf: String::new(),
        };
        self.finished = Some(finished);
        self.seq += 1;
        let event = Event {
            seq: self.seq,
            at: now,
            kind: EventKind::Finished,
        };
        let finish = Finish {
            sgf: self.sgf(),
            ..finish
        };
        (finish, event)
    }

    /// How the game ended, counted with `dead` taken off when given (an
    /// agreed count), else with the server's own verdict.
    fn finish_with_dead(&self, reason: EndReason, dead: Option<&[Point]>) -> Finished {
        let count = reason.is_counted().then(|| match dead {
            Some(dead) => self.game.score_with_dead(dead),
            None => self.game.score_preview(),
        });
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
