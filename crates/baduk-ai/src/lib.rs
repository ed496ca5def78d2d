//! Computer players: Monte-Carlo tree search at three levels, and outside
//! engines speaking GTP.
//!
//! A [`Level`] is a search budget and a style. [`MctsPlayer`] searches the
//! position with it and decides like a considerate opponent: it passes when
//! nothing useful is left, but first captures stones it knows are dead and
//! that the server's conservative count would leave alive; it resigns only
//! when the game is hopeless, and Easy never resigns.

pub mod gtp;
pub mod gtp_engine;
pub mod mcts;
pub mod patterns;
pub mod policy;

use std::time::Duration;

use baduk::board::Vertex;
use baduk::{Action, Color, Game, Point};

pub use mcts::{
    Budget, Clock, RootMove, SearchResult, Searcher, TreeSummary, Tuning, search, search_tuned,
};

/// How strong the computer plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Easy,
    Normal,
    Hard,
}

impl Level {
    /// Every level, weakest first.
    pub const ALL: [Level; 3] = [Level::Easy, Level::Normal, Level::Hard];

    /// The name used in the API and on the command line.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Normal => "normal",
            Level::Hard => "hard",
        }
    }

    /// Reads `easy`, `normal` or `hard` in any case.
    pub fn parse(s: &str) -> Result<Level, UnknownLevel> {
        match s.to_ascii_lowercase().as_str() {
            "easy" => Ok(Level::Easy),
            "normal" => Ok(Level::Normal),
            "hard" => Ok(Level::Hard),
            _ => Err(UnknownLevel(s.to_owned())),
        }
    }

    /// The search each move gets on 9×9: [`Level::budget_on`].
    #[must_use]
    pub const fn budget(self) -> Budget {
        self.budget_on(9)
    }

    /// The search each move gets on a board of `size` lines: playouts,
    /// which mean the same on every machine (a level in a browser is the
    /// level on the server), and a time cap that keeps a slow phone
    /// answering. This machine's 2-core Xeon never reaches the caps; a
    /// phone that runs the WebAssembly engine about five times slower can,
    /// on Hard's longest thinks, and then plays with the playouts it
    /// managed.
    ///
    /// Hard's 64,000 playouts on 9×9 are what it aims at: it stops early
    /// once the choice is settled and thinks half as long again where the
    /// choice is open (`Tuning::time_extension`). Natively that is the
    /// search it made in the 1.7 s it used to aim at (37,000 playouts a
    /// move on average in self-play, 0.7–0.9 s). Larger boards get more
    /// playouts at Easy and Normal and fewer at Hard, as their time limits
    /// used to give them: a playout on 19×19 is about five times the work,
    /// and a 250-move game must not keep a player waiting.
    #[must_use]
    pub const fn budget_on(self, size: u8) -> Budget {
        let (playouts, seconds) = match (self, size) {
            (Level::Easy, 0..=9) => (400, 3),
            (Level::Easy, 10..=13) => (1_200, 3),
            (Level::Easy, _) => (1_500, 3),
            (Level::Normal, 0..=9) => (3_000, 5),
            (Level::Normal, 10..=13) => (8_000, 5),
            (Level::Normal, _) => (4_000, 5),
            (Level::Hard, 0..=9) => (64_000, 10),
            (Level::Hard, 10..=13) => (32_000, 10),
            (Level::Hard, _) => (12_000, 10),
        };
        Budget {
            playouts,
            time: Duration::from_secs(seconds),
        }
    }

    /// The search constants of the level. Hard trusts its own statistics
    /// sooner (RAVE equivalence 300): at 0.3 s a move that beat the default
    /// 19–11, and at 1 s it took Hard from 55% to 80% against GNU Go level
    /// 10 (40 games each). It also plays more for points (a fifth of a
    /// simulation's value from the margin, three-quarters spent at 20
    /// points): 83.8% of 40 games against GNU Go level 10, where the
    /// default margin had 76.7% of 60 and 73.3% of 30 with the same build.
    /// With the learned patterns' priors (every level) it manages its time
    /// (early stops paid a third of the time at 0.3 s a move and won 10 of
    /// 18 decided games) and plays against a dynamic komi (11 of 19). Its
    /// playouts try the last good replies first (55.2% of 200 games against
    /// Hard without them at 3,000 playouts a move, for 7% more time a
    /// playout). Its priors weigh the larger shapes as well
    /// (`large_patterns`: 88.0% of 200 games against GNU Go level 10, as
    /// White 85.5%, where six measurements of 200 without pooled to 85.3%
    /// and 81.7%). It expands a leaf only at its second simulation
    /// (`expand_visits`), so less of its time goes to weighing priors, and
    /// spends what that saves on reading in the playouts: the vital point
    /// of a small eye space (`nakade`) and no run into a ladder that
    /// catches the chain (`ladders`). Together: 91.5% of 200 against GNU
    /// Go level 10 (as White 92.0%), at the same 0.89 s a move; 89.1% of
    /// 450 (as White 87.1%) with 250 more, and 44.5% of 200 against Pachi
    /// 12.90 at 5,000 playouts. Its larger-shape table has since learned
    /// from 147 games of Pachi against itself as well as GNU Go's (56.0%
    /// of 200 against the GNU Go table at 3,000 playouts a move; 92.3% of
    /// 300 against GNU Go level 10 at its own time, as Black 90.7%, as
    /// White 94.0%; 42.5% of 200 against Pachi).
    #[must_use]
    pub fn tuning(self) -> Tuning {
        match self {
            Level::Hard => Tuning {
                rave_equivalence: 300.0,
                margin_weight: 0.2,
                margin_scale: 20.0,
                time_extension: 0.5,
                dynamic_komi: 0.8,
                last_good_reply: true,
                large_patterns: true,
                expand_visits: 2.0,
                ladders: true,
                nakade: true,
                ..Tuning::default()
            },
            Level::Easy | Level::Normal => Tuning::default(),
        }
    }

    /// The level's estimated rating on Ttakji's Elo scale, so the matchmaker
    /// can seat the computer nearest a player's rating.
    ///
    /// Measured, not guessed: `ttakji match` games on one core, the levels
    /// as they play now — Hard vs GNU Go 3.8 level 10: 277 of 300 (273
    /// wins, 8 draws, 19 losses; 4 December 2026); Hard vs Pachi 12.90 at
    /// 5,000 playouts: 101.5 of 237 (4 December); Hard vs Normal: 20 of 20;
    /// Normal vs GNU Go 10: 28 of 40; Easy vs GNU Go level 1: 16 of 40;
    /// GNU Go 1 vs GNU Go 10: 10.5 of 20; Normal vs Easy: 37 of 40 (1 and
    /// 4 December) — fitted by `tools/elo_fit.py` with GNU Go level 10 at
    /// 1800, the anchor the 9×9 computer Go server CGOS used: Easy 1623,
    /// Normal 1938, Hard 2249. Rounded to tens; a 40-game match leaves
    /// about ±90 of uncertainty.
    #[must_use]
    pub const fn elo(self) -> u32 {
        match self {
            Level::Easy => 1620,
            Level::Normal => 1940,
            Level::Hard => 2250,
        }
    }

    /// The level whose rating is nearest `rating`.
    #[must_use]
    pub fn nearest(rating: u32) -> Level {
        let mut best = Level::Easy;
        for level in Level::ALL {
            if level.elo().abs_diff(rating) < best.elo().abs_diff(rating) {
                best = level;
            }
        }
        best
    }

    /// How the move is picked from the search: Easy sometimes plays a
    /// reasonable second choice, so it makes mistakes a beginner can punish
    /// while still playing like Go.
    const fn style(self) -> Style {
        match self {
            Level::Easy => Style {
                second_choice_percent: 35,
                resigns: false,
            },
            Level::Normal => Style {
                second_choice_percent: 0,
                resigns: true,
            },
            Level::Hard => Style {
                second_choice_percent: 0,
                resigns: true,
            },
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A level name that is not easy, normal or hard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown level `{0}` (easy, normal or hard)")]
pub struct UnknownLevel(pub String);

#[derive(Debug, Clone, Copy)]
struct Style {
    second_choice_percent: u64,
    resigns: bool,
}

/// Half-points of komi a level with a dynamic komi must already be giving
/// itself back, and still lose, before it resigns: 10 points.
const HOPELESS_KOMI_BACK: i32 = 20;

/// What the computer does on its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Play(Point),
    Pass,
    Resign,
}

impl Decision {
    /// The decision as a move action, or `None` for a resignation.
    #[must_use]
    pub fn action(self) -> Option<Action> {
        match self {
            Decision::Play(p) => Some(Action::Play(p)),
            Decision::Pass => Some(Action::Pass),
            Decision::Resign => None,
        }
    }
}

/// Settings of a search player.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub budget: Budget,
    /// Threads to search on (one tree each, merged at the root).
    pub threads: usize,
    /// A fixed seed makes the search (with a playout budget that ends before
    /// the time limit) repeat exactly; `None` varies it from move to move.
    pub seed: Option<u64>,
    /// Resign when the best win rate is below this after move 30, if the
    /// level resigns at all. `None` never resigns.
    pub resign_below: Option<f32>,
    /// The search's constants.
    pub tuning: Tuning,
    /// The playout budget is a 9×9 board's, and on other boards it is
    /// scaled as the level's own budget is ([`Level::budget_on`]).
    pub scale_with_board: bool,
    /// Where the search reads the time for its cap.
    pub clock: Clock,
}

impl Settings {
    /// The settings of a level: its budget, one thread, varied play,
    /// resigning below 5% where the level resigns.
    #[must_use]
    pub fn for_level(level: Level) -> Settings {
        Settings {
            budget: level.budget(),
            threads: 1,
            seed: None,
            resign_below: level.style().resigns.then_some(0.05),
            tuning: level.tuning(),
            scale_with_board: true,
            clock: Clock::system(),
        }
    }
}

/// What a review reads in one position ([`MctsPlayer::analyse`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// The chance that the player to move wins, from 0 to 1, as the move
    /// the search rates best gives it.
    pub winrate: f32,
    /// Black's lead in points with komi, from the share of the playouts in
    /// which each point ended Black's: the count the search expects.
    pub black_lead: f32,
    /// The move the search rates best (`None` a pass), then the replies it
    /// expects; empty when it found no move.
    pub line: Vec<Option<Point>>,
    /// Playouts the search ran.
    pub playouts: u32,
}

/// A computer player that searches with Monte-Carlo tree search.
#[derive(Debug, Clone)]
pub struct MctsPlayer {
    level: Level,
    settings: Settings,
    moves_made: u64,
    /// The last search's tree, reused when the game goes on from it.
    searcher: Searcher,
}

impl MctsPlayer {
    /// A player at `level` with that level's settings.
    #[must_use]
    pub fn new(level: Level) -> MctsPlayer {
        MctsPlayer::with_settings(level, Settings::for_level(level))
    }

    /// A player at `level` with other settings (threads, seed, budget).
    #[must_use]
    pub fn with_settings(level: Level, settings: Settings) -> MctsPlayer {
        MctsPlayer {
            level,
            moves_made: 0,
            searcher: Searcher::with_clock(settings.clock),
            settings,
        }
    }

    /// The player's level.
    #[must_use]
    pub fn level(&self) -> Level {
        self.level
    }

    /// The settings in force.
    #[must_use]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Sets one search constant from `name=value` ([`Tuning::set`]).
    pub fn tune(&mut self, assignment: &str) -> Result<(), String> {
        self.settings.tuning.set(assignment)
    }

    /// Replaces the time limit per move (GTP `time_left`, say).
    pub fn set_time(&mut self, time: Duration) {
        self.settings.budget.time = time;
    }

    /// Decides the move for the player to move in `game`.
    pub fn decide(&mut self, game: &Game) -> Decision {
        self.decide_with_search(game).0
    }

    /// Like [`MctsPlayer::decide`], but never passes while opponent stones
    /// it considers dead are on the board: it captures them first.
    pub fn decide_cleanup(&mut self, game: &Game) -> Decision {
        let (decision, result) = self.decide_with_search(game);
        if decision == Decision::Pass
            && let Some(v) = capture_dead(game, &result, &[])
        {
            return Decision::Play(game.board().point(v));
        }
        decision
    }

    /// Reads the position of `game` for a review: a search of `playouts`
    /// (on one board size as on another; the time cap stays the level's)
    /// with the game's own komi throughout, so that its win rates are the
    /// game's, and the line of play it expects, at most `depth` moves.
    pub fn analyse(&mut self, game: &Game, playouts: u32, depth: usize) -> Analysis {
        let seed = self.move_seed();
        self.moves_made += 1;
        let mut tuning = self.settings.tuning;
        tuning.dynamic_komi = 0.0;
        let budget = Budget {
            playouts: playouts.max(1),
            time: self.settings.budget.time,
        };
        let result = self
            .searcher
            .search(game, budget, self.settings.threads, seed, tuning);
        let board = game.board();
        let owned: f32 = board
            .vertices()
            .map(|v| 2.0 * result.black_ownership.get(v).copied().unwrap_or(0.5) - 1.0)
            .sum();
        let line = result.best().map_or_else(Vec::new, |best| {
            self.searcher
                .principal_variation(best.vertex, depth)
                .into_iter()
                .map(|v| v.map(|v| board.point(v)))
                .collect()
        });
        Analysis {
            winrate: result.winrate(),
            black_lead: owned - game.rules().komi.half_points() as f32 / 2.0,
            line,
            playouts: result.playouts,
        }
    }

    /// Decides the move and returns the search it rests on.
    pub fn decide_with_search(&mut self, game: &Game) -> (Decision, SearchResult) {
        let seed = self.move_seed();
        self.moves_made += 1;
        let result = self.searcher.search(
            game,
            self.move_budget(game),
            self.settings.threads,
            seed,
            self.settings.tuning,
        );
        (self.decide_from(game, &result, seed), result)
    }

    /// Searches tree `index` of `threads` for the move to decide in
    /// `game`, for a decision spread over several hosts that share no
    /// memory (the browser's Workers): each host's player, made with the
    /// same settings and a fixed seed and shown the same game, searches one
    /// tree, and every host then decides from all the trees with
    /// [`MctsPlayer::decide_from_trees`]. The move is the one this player
    /// would decide on `threads` threads ([`Settings::threads`]).
    pub fn search_tree(&mut self, game: &Game, index: usize, threads: usize) -> TreeSummary {
        let seed = self.move_seed();
        self.searcher.search_tree(
            game,
            self.move_budget(game),
            (index, threads),
            seed,
            self.settings.tuning,
        )
    }

    /// Decides the move from the trees the hosts searched for it
    /// ([`MctsPlayer::search_tree`]), in order of their index.
    pub fn decide_from_trees(
        &mut self,
        game: &Game,
        trees: &[TreeSummary],
    ) -> (Decision, SearchResult) {
        let seed = self.move_seed();
        self.moves_made += 1;
        let result = self.searcher.merge_trees(game, trees, self.settings.tuning);
        (self.decide_from(game, &result, seed), result)
    }

    /// The seed of the next move's search.
    fn move_seed(&self) -> u64 {
        match self.settings.seed {
            Some(s) => s.wrapping_add(self.moves_made.wrapping_mul(0x9E37_79B9)),
            None => random_seed(self.moves_made),
        }
    }

    /// The playouts and time cap of a move in `game`.
    fn move_budget(&self, game: &Game) -> Budget {
        let mut budget = self.settings.budget;
        if self.settings.scale_with_board {
            let level = self.level.budget().playouts;
            let on_board = self.level.budget_on(game.rules().board_size.get()).playouts;
            budget.playouts =
                u32::try_from(u64::from(budget.playouts) * u64::from(on_board) / u64::from(level))
                    .unwrap_or(u32::MAX);
        }
        budget
    }

    /// The move the search `result`, seeded with `seed`, says to play.
    fn decide_from(&self, game: &Game, result: &SearchResult, seed: u64) -> Decision {
        let color = game.to_move();
        let board = game.board();
        let Some(best) = result.best().copied() else {
            return Decision::Pass;
        };
        // A level that plays against a dynamic komi fights a position that
        // looks lost: the komi comes its way a point a move while it loses,
        // and only when it still loses with `HOPELESS_KOMI_BACK` half-points
        // back is the game hopeless (a group that dies costs fewer points
        // than the first low win rate says, and an opponent can still err).
        let hopeless_shift = if self.settings.tuning.dynamic_komi > 0.0 {
            -HOPELESS_KOMI_BACK
        } else {
            0
        };
        if let Some(threshold) = self.settings.resign_below
            && self.level.style().resigns
            && game.move_number() >= 30
            && best.winrate < threshold
            && result.komi_shift <= hopeless_shift
        {
            return Decision::Resign;
        }
        let mut choice = best.vertex;
        // Easy: sometimes the second choice, if it is a real candidate: a
        // third of the best's visits, and not a blunder by the search's own
        // reckoning (on 13×13 and 19×19, where the search is shallower, a
        // second choice far below the best lost whole boards).
        let style = self.level.style();
        if style.second_choice_percent > 0
            && seed % 100 < style.second_choice_percent
            && let Some(second) = result.moves.get(1)
            && second.vertex.is_some()
            && second.visits * 3 >= best.visits
            && second.winrate >= best.winrate - 0.1
        {
            choice = second.vertex;
        }
        // Passing: when the best move is a pass; when every empty area is
        // closed (bordered by one colour) and the best move changes nothing
        // — its point is settled for one side and it touches no chain short
        // of liberties; when the opponent has passed and the count as it
        // stands is a win; or when the opponent has passed and every move
        // loses (a level that does not resign would otherwise play on into
        // its own eyes, each move as hopeless as the next). Dead stones the
        // count would leave on the board are captured first.
        let (one_colour, closed) = settled_areas(board);
        let useless = |v: Vertex| {
            let black = result.black_ownership[v];
            !(0.1..=0.9).contains(&black)
                && one_colour[v]
                && !board
                    .neighbours(v)
                    .iter()
                    .any(|&n| board.color_at(n).is_some() && board.liberty_count_up_to(n, 3) < 3)
        };
        let opponent_passed = game.last_move().is_some_and(|m| m.action == Action::Pass);
        // The server's dead stones, worked out at most once (it reads).
        let counted = std::cell::OnceCell::new();
        let counted_dead = || counted.get_or_init(|| game.dead_stones());
        let wins_now = || game.score_with_dead(counted_dead()).result().winner() == Some(color);
        if choice.is_some_and(useless) {
            // A move nearly as good that does change something comes first.
            let alternative = result.moves.iter().find(|m| {
                m.vertex.is_some_and(|v| !useless(v))
                    && m.visits * 4 >= best.visits
                    && m.winrate >= best.winrate - 0.03
            });
            if let Some(m) = alternative {
                choice = m.vertex;
            }
        }
        // Against a raised komi a low win rate says nothing of the game.
        let hopeless = best.winrate < 0.05 && result.komi_shift <= hopeless_shift;
        if choice.is_none()
            || (choice.is_some_and(useless) && closed)
            || (opponent_passed && (hopeless || wins_now()))
        {
            if let Some(v) = capture_dead(game, result, counted_dead()) {
                return Decision::Play(board.point(v));
            }
            return Decision::Pass;
        }
        match choice {
            Some(v) => Decision::Play(board.point(v)),
            None => Decision::Pass,
        }
    }
}

/// For each vertex, whether it is an empty point in an area bordered by
/// exactly one colour; and whether every empty area is. An empty board's
/// one area borders neither colour and is anything but settled.
fn settled_areas(board: &baduk::board::Board) -> (Vec<bool>, bool) {
    let mut one_colour = vec![false; baduk::board::MAX_VERTICES];
    let mut closed = true;
    for region in baduk::score::empty_regions(board) {
        let one = region.borders_black != region.borders_white;
        closed &= one;
        for &v in &region.points {
            one_colour[v] = one;
        }
    }
    (one_colour, closed)
}

/// A move that takes a liberty of an opponent group the search owns (it is
/// dead), so that passing does not give those points away. Stones in
/// `counted_dead` (those the server's count removes anyway) are left alone;
/// with none, every such group is taken (GTP's `kgs-genmove_cleanup`).
fn capture_dead(game: &Game, result: &SearchResult, counted_dead: &[Point]) -> Option<Vertex> {
    let board = game.board();
    let color = game.to_move();
    let mine = |v: Vertex| {
        let black = result.black_ownership[v];
        if color == Color::Black {
            black
        } else {
            1.0 - black
        }
    };
    for v in board.vertices() {
        if board.color_at(v) != Some(color.opponent())
            || counted_dead.contains(&board.point(v))
            || mine(v) < 0.8
        {
            continue;
        }
        for l in board.liberties(v) {
            let p = board.point(l);
            if game.check(color, p).is_ok()
                && !baduk::playout::is_big_self_atari(board, l, color)
                && !board.is_eye_shape(l, color)
            {
                return Some(l);
            }
        }
    }
    None
}

/// A seed that varies from call to call: each `RandomState` has keys of
/// its own (random per process natively; in WebAssembly, which has no
/// source of randomness, the host passes a seed instead).
fn random_seed(salt: u64) -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(salt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_board_has_nothing_settled() {
        let board = baduk::board::Board::new(baduk::BoardSize::new(9).expect("9"));
        let (one_colour, closed) = settled_areas(&board);
        assert!(!closed);
        assert!(one_colour.iter().all(|&x| !x));
        // A corner walled off by Black is settled; the rest, touching
        // both colours, is not.
        let board = baduk::board::Board::from_ascii(
            ". X . . .\n\
             X X . . .\n\
             . . . . .\n\
             . . . O .\n\
             . . . . .",
        )
        .expect("a board");
        let (one_colour, closed) = settled_areas(&board);
        assert!(!closed);
        let at = |s: &str| board.vertex(board.size().parse_point(s).expect("point"));
        assert!(one_colour[at("A5")]);
        assert!(!one_colour[at("C3")]);
    }
}
