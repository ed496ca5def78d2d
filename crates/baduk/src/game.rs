//! A game: the board plus its history — whose turn, ko and superko, passes,
//! the move cap, undo and the end.

use std::collections::HashSet;
use std::fmt;

use thiserror::Error;

use crate::board::{Board, PackedBoard, Vertex, zobrist};
use crate::point::{Action, ByColor, Color, Move, Point};
use crate::rules::{KoRule, Rules};

/// Extra Zobrist keys for "this player moves next", used by situational superko.
const SIDE_TO_MOVE: ByColor<u64> = ByColor::new(0x5bd1_e995_9f3c_2a71, 0xc2b2_ae3d_27d4_eb4f);

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// Two passes in a row: the board is counted.
    TwoPasses,
    /// The move cap was reached: counted as if both had passed.
    MoveCap,
    /// A player resigned; the other wins.
    Resignation { winner: Color },
    /// A player ran out of time; the other wins, whatever the board says.
    Timeout { winner: Color },
    /// Both players agreed to a draw.
    DrawAgreed,
}

impl EndReason {
    /// Whether the result comes from counting the board.
    #[must_use]
    pub const fn is_counted(self) -> bool {
        matches!(self, EndReason::TwoPasses | EndReason::MoveCap)
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndReason::TwoPasses => f.write_str("two passes"),
            EndReason::MoveCap => f.write_str("move cap reached"),
            EndReason::Resignation { winner } => write!(f, "{} resigned", winner.opponent()),
            EndReason::Timeout { winner } => write!(f, "{} ran out of time", winner.opponent()),
            EndReason::DrawAgreed => f.write_str("draw agreed"),
        }
    }
}

/// Why a move was refused. The game is unchanged after any of these.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IllegalMove {
    #[error("the game is over")]
    GameOver,
    #[error("it is {to_move}'s turn")]
    NotYourTurn { to_move: Color },
    #[error("{point} is off the {size}x{size} board")]
    OffBoard { point: Point, size: u8 },
    #[error("{point} is occupied")]
    Occupied { point: Point },
    #[error("{point} is suicide: the stone would have no liberty and captures nothing")]
    Suicide { point: Point },
    #[error("{point} retakes the ko at once: play elsewhere first")]
    Ko { point: Point },
    #[error("{point} repeats the position after move {repeats_move} (superko)")]
    Superko { point: Point, repeats_move: usize },
}

/// Why an undo was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UndoError {
    #[error("there is no move to undo")]
    NothingToUndo,
    #[error("the game was ended by {0}; it cannot be taken back")]
    Ended(EndReason),
}

/// Why play cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResumeError {
    #[error("the game goes on: there is nothing to go back to")]
    NotEnded,
    #[error("the game was ended by {0}; play cannot go on")]
    Ended(EndReason),
}

/// What an accepted move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The number of this move (1 for the first).
    pub move_number: usize,
    /// Stones taken off the board by this move, in board order: the
    /// opponent's, or, for a suicide where the rules allow it, the mover's
    /// own chain including the stone just played.
    pub captured: Vec<Point>,
    /// Set when this move ended the game (second pass, move cap).
    pub ended: Option<EndReason>,
}

/// Every position of the game so far, for ko and superko: each one's key,
/// and its stones at two bits a point, so a key match is confirmed by
/// comparing positions (a hash collision can never forbid a legal move).
/// About 40 bytes a move on 9×9, where a box of a byte a point and a map
/// of keys to lists took about 170.
#[derive(Debug, Clone)]
struct History {
    keys: Vec<u64>,
    /// Position `i`'s stones are `stones[i * width..(i + 1) * width]`.
    stones: Vec<u8>,
    width: usize,
    /// Every key in `keys`, so a key never seen is answered without a scan.
    seen: HashSet<u64>,
}

impl History {
    fn new(size: crate::point::BoardSize) -> History {
        History {
            keys: Vec::new(),
            stones: Vec::new(),
            width: Board::packed_stones_len(size),
            seen: HashSet::new(),
        }
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    fn push(&mut self, key: u64, board: &Board) {
        self.keys.push(key);
        board.push_packed_stones(&mut self.stones);
        self.seen.insert(key);
    }

    fn key(&self, i: usize) -> u64 {
        self.keys[i]
    }

    /// Gives back the room a push left over: a game copied for a step has
    /// its lists exactly full, and the move's push doubled them.
    fn shrink(&mut self) {
        self.keys.shrink_to_fit();
        self.stones.shrink_to_fit();
        self.seen.shrink_to_fit();
    }

    fn stones(&self, i: usize) -> &[u8] {
        &self.stones[i * self.width..(i + 1) * self.width]
    }

    /// The positions whose key is `key`, oldest first; the keys are
    /// scanned only when the set has seen `key`.
    fn with_key(&self, key: u64) -> impl Iterator<Item = usize> + '_ {
        let scanned = if self.seen.contains(&key) {
            &self.keys[..]
        } else {
            &[]
        };
        scanned
            .iter()
            .enumerate()
            .filter(move |&(_, &k)| k == key)
            .map(|(i, _)| i)
    }
}

/// The empty board of `size`, made once.
fn empty_board(size: crate::point::BoardSize) -> &'static Board {
    const SIZES: usize = crate::point::BoardSize::MAX as usize + 1;
    static EMPTY: [std::sync::OnceLock<Board>; SIZES] =
        [const { std::sync::OnceLock::new() }; SIZES];
    EMPTY[usize::from(size.get())].get_or_init(|| Board::new(size))
}

/// The current position: the board, or while the game is packed away
/// ([`Game::pack`]) its few bytes, made into the board again when next read.
#[derive(Debug, Clone)]
struct HeldBoard {
    /// Set unless the game is packed.
    live: std::sync::OnceLock<Box<Board>>,
    /// The position while `live` is empty; stale while it is set.
    packed: PackedBoard,
    /// The dead-stone reading of this position, once made (it is hundreds
    /// of playouts): a game ended by two passes reads the same position for
    /// the count shown after the first pass and the count after the second.
    /// Emptied whenever the board changes.
    reading: std::sync::OnceLock<Box<crate::doubt::Reading>>,
}

impl HeldBoard {
    fn new(board: Board) -> HeldBoard {
        let packed = PackedBoard::empty(board.size());
        HeldBoard {
            live: std::sync::OnceLock::from(Box::new(board)),
            packed,
            reading: std::sync::OnceLock::new(),
        }
    }

    fn get(&self) -> &Board {
        self.live.get_or_init(|| Box::new(self.packed.unpack()))
    }

    fn get_mut(&mut self) -> &mut Board {
        self.reading = std::sync::OnceLock::new();
        if self.live.get().is_none() {
            self.live = std::sync::OnceLock::from(Box::new(self.packed.unpack()));
        }
        match self.live.get_mut() {
            Some(board) => board,
            None => unreachable!("the board was made live just above"),
        }
    }

    fn pack(&mut self) {
        if let Some(board) = self.live.take() {
            self.packed = board.pack();
        }
    }

    /// A pass: the ko point goes, and with it the reading only if there was
    /// one (the reading of a position without a ko point stays good).
    fn clear_ko(&mut self) {
        if self.get().ko_point().is_some() {
            self.get_mut().clear_ko();
        }
    }
}

/// A game under one ruleset: the board plus everything the rules need to
/// know about the past.
#[derive(Debug, Clone)]
pub struct Game {
    rules: Rules,
    /// The set-up position; `None` for the empty board of the rules' size,
    /// the usual start (a board is ten kilobytes, kept once per game).
    start: Option<Box<Board>>,
    start_to_move: Color,
    board: HeldBoard,
    to_move: Color,
    moves: Vec<Move>,
    /// Position `i` is the one after move `i`; 0 is the start.
    positions: History,
    passes_in_a_row: u32,
    end: Option<EndReason>,
    /// The move counts after which play went on past two passes: the
    /// players did not agree which stones were dead (territory rules).
    resumed_after: Vec<u32>,
}

impl Game {
    /// A new game on an empty board, Black to move.
    #[must_use]
    pub fn new(rules: Rules) -> Game {
        Game::from_setup(rules, Board::new(rules.board_size), Color::Black)
    }

    /// A game starting from a set-up position (SGF `AB`/`AW`, handicap).
    /// `setup` must be on the rules' board size.
    #[must_use]
    pub fn from_setup(rules: Rules, setup: Board, to_move: Color) -> Game {
        let rules = if rules.board_size == setup.size() {
            rules
        } else {
            rules.with_board_size(setup.size())
        };
        let start = (setup != *empty_board(rules.board_size)).then(|| Box::new(setup.clone()));
        let mut game = Game {
            rules,
            start,
            start_to_move: to_move,
            board: HeldBoard::new(setup),
            to_move,
            moves: Vec::new(),
            positions: History::new(rules.board_size),
            passes_in_a_row: 0,
            end: None,
            resumed_after: Vec::new(),
        };
        game.record_position();
        game
    }

    /// The rules of this game.
    #[must_use]
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Replaces the komi (GTP `komi` before or during a game); nothing else changes.
    pub fn set_komi(&mut self, komi: crate::rules::Komi) {
        self.rules.komi = komi;
    }

    /// The current position.
    #[must_use]
    pub fn board(&self) -> &Board {
        self.board.get()
    }

    /// Keeps the current position in a few bytes instead of the board's
    /// kilobytes until the board is next read or played on, when it is made
    /// again (a few microseconds), and gives back the room the last push
    /// left in its lists. For a game held while it waits for a player:
    /// nothing about the game changes.
    pub fn pack(&mut self) {
        self.board.pack();
        self.moves.shrink_to_fit();
        self.positions.shrink();
    }

    /// The position the game started from.
    #[must_use]
    pub fn setup(&self) -> &Board {
        self.start
            .as_deref()
            .unwrap_or_else(|| empty_board(self.rules.board_size))
    }

    /// Who is to move in the starting position.
    #[must_use]
    pub fn setup_to_move(&self) -> Color {
        self.start_to_move
    }

    /// Whose turn it is.
    #[must_use]
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// The moves so far, passes included.
    #[must_use]
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The number of moves played so far (passes count).
    #[must_use]
    pub fn move_number(&self) -> usize {
        self.moves.len()
    }

    /// The last move, if any.
    #[must_use]
    pub fn last_move(&self) -> Option<Move> {
        self.moves.last().copied()
    }

    /// Gives the turn to `color` without a move (GTP `genmove` for the side
    /// not to move, or a set-up position). Nothing is recorded.
    pub fn set_to_move(&mut self, color: Color) {
        self.to_move = color;
    }

    /// Passes in a row at the end of the game so far.
    #[must_use]
    pub fn passes_in_a_row(&self) -> u32 {
        self.passes_in_a_row
    }

    /// Why the game ended, or `None` while it goes on.
    #[must_use]
    pub fn end(&self) -> Option<EndReason> {
        self.end
    }

    /// Whether the game is over.
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.end.is_some()
    }

    /// Plays a move for the player whose turn it is.
    pub fn play(&mut self, mv: Move) -> Result<Outcome, IllegalMove> {
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        if mv.color != self.to_move {
            return Err(IllegalMove::NotYourTurn {
                to_move: self.to_move,
            });
        }
        self.play_as(mv)
    }

    /// Plays a move for either colour, whoever's turn it is (GTP `play` and
    /// SGF records allow two moves of one colour in a row). All other rules
    /// apply as in [`Game::play`].
    pub fn play_as(&mut self, mv: Move) -> Result<Outcome, IllegalMove> {
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        let captured = match mv.action {
            Action::Pass => {
                self.board.clear_ko();
                self.passes_in_a_row += 1;
                Vec::new()
            }
            Action::Play(point) => {
                let v = self.check_stone(mv.color, point)?;
                let mut captured = self.captured_by(v, mv.color);
                let own_chain: Vec<Point> =
                    if captured.is_empty() && self.board.get().is_suicide(v, mv.color) {
                        self.chain_through(v, mv.color)
                    } else {
                        Vec::new()
                    };
                self.board.get_mut().play(v, mv.color);
                if self.board.get().is_empty(v) {
                    // Suicide, where the rules allow it: the mover's stones go.
                    captured = own_chain;
                }
                self.passes_in_a_row = 0;
                captured
            }
        };
        self.moves.push(mv);
        self.to_move = mv.color.opponent();
        self.record_position();
        let n = self.moves.len();
        if self.passes_in_a_row >= 2 {
            self.end = Some(EndReason::TwoPasses);
        } else if self.rules.move_cap.is_some_and(|cap| n >= cap as usize) {
            self.end = Some(EndReason::MoveCap);
        }
        Ok(Outcome {
            move_number: n,
            captured,
            ended: self.end,
        })
    }

    /// Checks whether `color` may play at `point` now, without playing it.
    /// Turn order is not checked: it answers for either colour.
    pub fn check(&self, color: Color, point: Point) -> Result<(), IllegalMove> {
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        self.check_stone(color, point).map(|_| ())
    }

    /// Whether `color` may play `action` now (a pass always may while the game goes on).
    #[must_use]
    pub fn is_legal(&self, color: Color, action: Action) -> bool {
        match action {
            Action::Pass => self.end.is_none(),
            Action::Play(p) => self.check(color, p).is_ok(),
        }
    }

    /// Every point where `color` may put a stone now.
    #[must_use]
    pub fn legal_points(&self, color: Color) -> Vec<Point> {
        if self.end.is_some() {
            return Vec::new();
        }
        self.board
            .get()
            .vertices()
            .filter(|&v| self.check_vertex(color, v).is_ok())
            .map(|v| self.board.get().point(v))
            .collect()
    }

    /// The empty points where the player to move may not play right now
    /// because of ko or superko (the client draws a small square there).
    /// Occupied points and suicide are not included.
    #[must_use]
    pub fn ko_forbidden_points(&self) -> Vec<Point> {
        if self.end.is_some() {
            return Vec::new();
        }
        let color = self.to_move;
        self.board
            .get()
            .vertices()
            .filter(|&v| {
                matches!(
                    self.check_vertex(color, v),
                    Err(IllegalMove::Ko { .. } | IllegalMove::Superko { .. })
                )
            })
            .map(|v| self.board.get().point(v))
            .collect()
    }

    /// Ends the game by resignation of `loser`.
    pub fn resign(&mut self, loser: Color) -> Result<EndReason, IllegalMove> {
        self.end_with(EndReason::Resignation {
            winner: loser.opponent(),
        })
    }

    /// Ends the game because `loser` ran out of time.
    pub fn time_out(&mut self, loser: Color) -> Result<EndReason, IllegalMove> {
        self.end_with(EndReason::Timeout {
            winner: loser.opponent(),
        })
    }

    /// Ends the game as a draw both players agreed to.
    pub fn agree_draw(&mut self) -> Result<EndReason, IllegalMove> {
        self.end_with(EndReason::DrawAgreed)
    }

    fn end_with(&mut self, reason: EndReason) -> Result<EndReason, IllegalMove> {
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        self.end = Some(reason);
        Ok(reason)
    }

    /// Goes back to play after two passes ended the game: under territory
    /// rules, when the players do not agree which stones are dead, they
    /// settle it on the board. The player after the second pass moves, and
    /// two passes in a row end the game again.
    pub fn resume_play(&mut self) -> Result<(), ResumeError> {
        match self.end {
            Some(EndReason::TwoPasses) => {}
            Some(other) => return Err(ResumeError::Ended(other)),
            None => return Err(ResumeError::NotEnded),
        }
        self.end = None;
        self.passes_in_a_row = 0;
        self.resumed_after
            .push(u32::try_from(self.moves.len()).unwrap_or(u32::MAX));
        Ok(())
    }

    /// The move counts after which play went back on past two passes.
    #[must_use]
    pub fn resumed_after(&self) -> &[u32] {
        &self.resumed_after
    }

    /// Takes back the last move (a stone or a pass), restoring exactly the
    /// earlier state: stones, prisoners, ko, history and whose turn. A game
    /// ended by passes or the move cap reopens; one ended by resignation,
    /// time or agreement cannot be undone.
    pub fn undo(&mut self) -> Result<Move, UndoError> {
        match self.end {
            Some(reason) if !reason.is_counted() => return Err(UndoError::Ended(reason)),
            _ => {}
        }
        let mut moves = std::mem::take(&mut self.moves);
        let Some(last) = moves.pop() else {
            return Err(UndoError::NothingToUndo);
        };
        let mut replay = Game::from_setup(self.rules, self.setup().clone(), self.start_to_move);
        let resumed = std::mem::take(&mut self.resumed_after);
        for mv in moves {
            // Every one of these moves was accepted before, in this order,
            // and play went on where it went on before.
            let replayed = replay.play_as(mv);
            debug_assert!(replayed.is_ok(), "replaying an accepted move failed");
            let count = u32::try_from(replay.moves.len()).unwrap_or(u32::MAX);
            if resumed.contains(&count) {
                let again = replay.resume_play();
                debug_assert!(again.is_ok(), "going on where play went on before failed");
            }
        }
        *self = replay;
        Ok(last)
    }

    /// The dead-stone reading of the position: made by `read` the first
    /// time it is asked for, kept until the board changes.
    pub(crate) fn reading_with(
        &self,
        read: impl FnOnce(&Board) -> crate::doubt::Reading,
    ) -> &crate::doubt::Reading {
        self.board
            .reading
            .get_or_init(|| Box::new(read(self.board.get())))
    }

    // ----- legality -----

    fn check_stone(&self, color: Color, point: Point) -> Result<Vertex, IllegalMove> {
        let size = self.rules.board_size;
        if !size.contains(point) {
            return Err(IllegalMove::OffBoard {
                point,
                size: size.get(),
            });
        }
        let v = self.board.get().vertex(point);
        self.check_vertex(color, v).map(|()| v)
    }

    fn check_vertex(&self, color: Color, v: Vertex) -> Result<(), IllegalMove> {
        let board = self.board.get();
        let point = board.point(v);
        if !board.is_empty(v) {
            return Err(IllegalMove::Occupied { point });
        }
        let suicide = board.is_suicide(v, color);
        if suicide && !self.rules.suicide_allowed {
            return Err(IllegalMove::Suicide { point });
        }
        let after_key = if suicide {
            None
        } else {
            Some(self.key_after(v, color))
        };
        match self.rules.ko {
            KoRule::Simple => {
                // Only the position before the opponent's last move is
                // forbidden: the immediate retake.
                let n = self.positions.len();
                if n >= 2 && after_key.is_none_or(|k| k == self.positions.key(n - 2)) {
                    let after = self.board_after(v, color);
                    if after.matches_packed_stones(self.positions.stones(n - 2)) {
                        return Err(IllegalMove::Ko { point });
                    }
                }
                Ok(())
            }
            KoRule::PositionalSuperko | KoRule::SituationalSuperko => {
                let key = match after_key {
                    Some(k) => k,
                    None => self.position_key_of(&self.board_after(v, color), color.opponent()),
                };
                let mut candidates = self.positions.with_key(key).peekable();
                if candidates.peek().is_none() {
                    return Ok(());
                }
                let after = self.board_after(v, color);
                for i in candidates {
                    if after.matches_packed_stones(self.positions.stones(i)) {
                        return Err(IllegalMove::Superko {
                            point,
                            repeats_move: i,
                        });
                    }
                }
                Ok(())
            }
        }
    }

    /// The board after `color` plays at `v` (which must be empty).
    fn board_after(&self, v: Vertex, color: Color) -> Board {
        let mut after = self.board.get().clone();
        after.play(v, color);
        after
    }

    /// The superko key after `color` plays at the empty vertex `v`, when the
    /// move is not suicide: computed from the hash without playing it.
    fn key_after(&self, v: Vertex, color: Color) -> u64 {
        let board = self.board.get();
        let enemy = color.opponent();
        let mut hash = board.hash() ^ zobrist(color, v);
        for h in board.captured_heads(v, color) {
            for s in board.chain_stones(h) {
                hash ^= zobrist(enemy, s);
            }
        }
        self.key_of_hash(hash, enemy)
    }

    fn key_of_hash(&self, hash: u64, next_to_move: Color) -> u64 {
        match self.rules.ko {
            KoRule::SituationalSuperko => hash ^ SIDE_TO_MOVE[next_to_move],
            KoRule::PositionalSuperko | KoRule::Simple => hash,
        }
    }

    fn position_key_of(&self, board: &Board, next_to_move: Color) -> u64 {
        self.key_of_hash(board.hash(), next_to_move)
    }

    /// The stones `color` would capture by playing at `v`.
    fn captured_by(&self, v: Vertex, color: Color) -> Vec<Point> {
        let board = self.board.get();
        let mut captured: Vec<Point> = board
            .captured_heads(v, color)
            .flat_map(|h| board.chain_stones(h).map(|s| board.point(s)))
            .collect();
        captured.sort_unstable_by_key(|p| (p.row(), p.col()));
        captured
    }

    /// The stones of the chain `color` would form by playing at `v`: the
    /// point itself and the friendly chains next to it.
    fn chain_through(&self, v: Vertex, color: Color) -> Vec<Point> {
        let board = self.board.get();
        let mut stones = vec![board.point(v)];
        let mut heads: Vec<Vertex> = Vec::new();
        for n in board.neighbours(v) {
            if board.color_at(n) == Some(color) && !heads.contains(&board.chain_head(n)) {
                heads.push(board.chain_head(n));
                stones.extend(board.chain_stones(n).map(|s| board.point(s)));
            }
        }
        stones.sort_unstable_by_key(|p| (p.row(), p.col()));
        stones
    }

    fn record_position(&mut self) {
        let key = self.position_key_of(self.board.get(), self.to_move);
        self.positions.push(key, self.board.get());
    }
}
