//! Monte-Carlo tree search: UCT with RAVE and prior knowledge, over the
//! rules crate's fast board.
//!
//! Each simulation walks down the tree choosing the child with the best
//! blend of its own win rate and its all-moves-as-first (RAVE) win rate,
//! expands a leaf on its second visit, plays the rest of the game with the
//! playout policy and scores it by area with komi. Moves at the root are
//! checked against the game's full rules (superko); inside the tree and the
//! playouts the board's simple-ko rule stands in for superko, as usual.

use std::time::Duration;

use baduk::board::{Board, MAX_VERTICES, NO_VERTEX, SplitMix64, Vertex};
use baduk::playout::{all_playout_candidates, area_margin_by_owner};
use baduk::{ByColor, Color, Game, Move};

use crate::patterns::{Gammas, features};
use crate::policy::{AtariWatch, KO_AGE, Knowledge, Recent, Replies, playout_move, prior};

/// How much search one move gets. The playouts are the budget, the same
/// on every machine, so a level is as strong on a phone as on a server; the
/// time is a cap that keeps a slow device answering, and a search that
/// reaches it plays with what it found so far.
///
/// With [`Tuning::time_extension`] the playouts are what a move aims at: it
/// stops early once no other move can catch the best within them, and goes
/// on by that share again where the two best moves are close and the game
/// undecided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub playouts: u32,
    pub time: Duration,
}

/// Where a search reads the time from, for its time cap: a monotonic clock
/// as a function giving the time since any fixed moment. Natively that is
/// the system's; in a browser the host supplies one (`performance.now()`),
/// since `std::time::Instant` does not exist there.
#[derive(Clone, Copy)]
pub struct Clock(fn() -> Duration);

impl Clock {
    /// A clock read through `now`.
    #[must_use]
    pub const fn new(now: fn() -> Duration) -> Clock {
        Clock(now)
    }

    /// The system's monotonic clock. On `wasm32-unknown-unknown`, which has
    /// none, a clock that never moves: only the playout budget ends a
    /// search there unless the host gives a clock with [`Clock::new`].
    #[must_use]
    pub fn system() -> Clock {
        #[cfg(not(target_arch = "wasm32"))]
        fn now() -> Duration {
            static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
            ORIGIN.get_or_init(std::time::Instant::now).elapsed()
        }
        #[cfg(target_arch = "wasm32")]
        fn now() -> Duration {
            Duration::ZERO
        }
        Clock(now)
    }

    /// The time now, since the clock's fixed moment.
    #[must_use]
    pub fn now(self) -> Duration {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::system()
    }
}

impl PartialEq for Clock {
    fn eq(&self, other: &Clock) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// Root moves with their visits and win rate for the player to move,
    /// most visited first. `None` is a pass.
    pub moves: Vec<RootMove>,
    /// Simulations run (over all threads).
    pub playouts: u32,
    pub elapsed: Duration,
    /// For each vertex: the share of playouts in which Black owned it at
    /// the end, from 0 to 1.
    pub black_ownership: Vec<f32>,
    /// The half-points of komi the player to move gave away beyond the
    /// game's in this search (a dynamic komi; negative when it took some):
    /// the win rates are against that komi.
    pub komi_shift: i32,
}

/// One move at the root.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootMove {
    pub vertex: Option<Vertex>,
    pub visits: u32,
    pub winrate: f32,
}

impl SearchResult {
    /// The most visited move.
    #[must_use]
    pub fn best(&self) -> Option<&RootMove> {
        self.moves.first()
    }

    /// The win rate of the best move for the player to move (0.5 if none).
    #[must_use]
    pub fn winrate(&self) -> f32 {
        self.best().map_or(0.5, |m| m.winrate)
    }
}

/// A node of the tree: 32 bytes, so that a node's children, which
/// selection and the all-moves-as-first update walk in full on every
/// simulation, take as few cache lines as they can.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    /// The move into this node (a [`Vertex`], below [`MAX_VERTICES`]);
    /// `NO_VERTEX` is a pass.
    mv: u16,
    /// How many children it has, from `children` on; 0 until it is
    /// expanded, and at least 1 (the pass) after.
    n_children: u16,
    children: u32,
    /// Wins for the player who made `mv`, priors included.
    wins: f32,
    visits: f32,
    amaf_wins: f32,
    amaf_visits: f32,
    real_visits: u32,
    /// Wins of the simulations through it, without the priors.
    real_wins: f32,
}

const _: () = assert!(MAX_VERTICES <= u16::MAX as usize && std::mem::size_of::<Node>() == 32);

impl Node {
    fn new(mv: Vertex, wins: f32, visits: f32) -> Node {
        Node {
            mv: mv as u16,
            n_children: 0,
            children: 0,
            wins,
            visits,
            amaf_wins: 0.0,
            amaf_visits: 0.0,
            real_visits: 0,
            real_wins: 0.0,
        }
    }

    fn mv(&self) -> Vertex {
        Vertex::from(self.mv)
    }

    fn expanded(&self) -> bool {
        self.n_children > 0
    }
}

/// The search's tunable constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    /// RAVE equivalence: visits at which a node's own statistics weigh as
    /// much as its all-moves-as-first ones.
    pub rave_equivalence: f32,
    /// The share of a simulation's value that comes from the margin.
    pub margin_weight: f32,
    /// Points of margin at which the margin's share is three-quarters spent.
    pub margin_scale: f32,
    /// Virtual visits (at an even win rate) every new move starts with.
    pub prior_even: f32,
    /// Virtual visits of the learned move patterns' prior
    /// ([`crate::patterns`]): a move as strong as the average candidate
    /// gets half of them as wins, a stronger one more, a weaker one fewer.
    /// 0 leaves the patterns out.
    pub pattern_prior: f32,
    /// Above 0, the playouts answer next to the last move with a learned
    /// 3×3 shape whose gamma is at least this, drawn by gamma, instead of
    /// MoGo's hand-picked shapes.
    pub pattern_playouts: f32,
    /// Above 0, the search plays against a komi it moves by a point after
    /// each move: up while it wins more than this share of its lines (so a
    /// won game is played for its full margin), down again below it, and
    /// below zero while it wins less than one minus it (a lost-looking
    /// game is fought for a smaller loss, where a comeback can start).
    pub dynamic_komi: f32,
    /// Above 0, the share of its time a move may think beyond it when the
    /// two best moves are close and the game is undecided; a search also
    /// stops early once the best move cannot be caught, which pays for it.
    pub time_extension: f32,
    /// On, the playouts take the vital point of a small eye space the
    /// last move closed or emptied (nakade) before anything but captures
    /// and escapes.
    pub nakade: bool,
    /// On, the playouts do not run a chain in atari out into a ladder
    /// that catches it, and the priors count such a run against the move.
    pub ladders: bool,
    /// On, the playouts' shapes are looked for next to the move
    /// before the last as well as next to the last.
    pub shapes_near_last2: bool,
    /// The share (0 to 1) of playout moves that go back to a ko taken in
    /// the last few moves once it is open again, to retake or fill it.
    pub ko_fight: f32,
    /// The simulations through a leaf before it is expanded (at least 1):
    /// fewer expansions, each of which weighs every move's priors, leave
    /// more of the time to playouts.
    pub expand_visits: f32,
    /// Above 0, the learned patterns' prior is Pachi's instead: a move
    /// whose share of the patterns' strength is `p` starts with
    /// `sqrt(p)` times this many virtual wins (and no losses), so the
    /// likeliest moves are tried first and longest; `pattern_prior` is
    /// then not used.
    pub pattern_wins: f32,
    /// Above 0, a move's all-moves-as-first result weighs more the sooner
    /// it came after the node: `1 + distance_rave` for the first move,
    /// down to 1 for the last (Pachi's `distance_rave`).
    pub distance_rave: f32,
    /// On, the playouts first try the reply that won the search's
    /// latest playouts after the same last move or two ([`Replies`]).
    pub last_good_reply: bool,
    /// On, a random playout move that would put two stones or more
    /// of the mover's in atari is played instead on the outside liberty of
    /// an enemy chain of two liberties next to it (Pachi's
    /// `selfatari_other`), so that capturing races are played from the
    /// outside in.
    pub outside_liberty: bool,
    /// On, the priors come from the table that weighs the larger
    /// shapes too ([`Gammas::large`]) instead of the 3×3 one.
    pub large_patterns: bool,
    /// On, a playout move that answers nothing next to the last
    /// moves takes a chain of the opponent's in atari anywhere on the
    /// board, if there is one, before a random move (MoGo's third rule).
    pub captures: bool,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            rave_equivalence: 1000.0,
            margin_weight: 0.1,
            margin_scale: 10.0,
            prior_even: 10.0,
            pattern_prior: 20.0,
            pattern_playouts: 0.0,
            dynamic_komi: 0.0,
            time_extension: 0.0,
            nakade: false,
            ladders: false,
            shapes_near_last2: false,
            ko_fight: 0.0,
            expand_visits: 1.0,
            pattern_wins: 0.0,
            distance_rave: 0.0,
            last_good_reply: false,
            outside_liberty: false,
            large_patterns: false,
            captures: false,
        }
    }
}

/// How one constant is set: a number from a value of zero or more,
/// bounded where the search needs it to be, or a switch turned on or off.
#[derive(Clone, Copy)]
enum Setter {
    Number(fn(&mut Tuning, f32)),
    Switch(fn(&mut Tuning, bool)),
}

/// Every constant [`Tuning::set`] knows, by name.
const SETTERS: [(&str, Setter); 19] = [
    (
        "rave_equivalence",
        Setter::Number(|t, v| t.rave_equivalence = v.max(1.0)),
    ),
    (
        "margin_weight",
        Setter::Number(|t, v| t.margin_weight = v.min(1.0)),
    ),
    (
        "margin_scale",
        Setter::Number(|t, v| t.margin_scale = v.max(0.1)),
    ),
    ("prior_even", Setter::Number(|t, v| t.prior_even = v)),
    ("pattern_prior", Setter::Number(|t, v| t.pattern_prior = v)),
    (
        "pattern_playouts",
        Setter::Number(|t, v| t.pattern_playouts = v),
    ),
    (
        "dynamic_komi",
        Setter::Number(|t, v| t.dynamic_komi = v.min(1.0)),
    ),
    (
        "time_extension",
        Setter::Number(|t, v| t.time_extension = v.min(3.0)),
    ),
    ("nakade", Setter::Switch(|t, on| t.nakade = on)),
    ("ladders", Setter::Switch(|t, on| t.ladders = on)),
    (
        "shapes_near_last2",
        Setter::Switch(|t, on| t.shapes_near_last2 = on),
    ),
    ("ko_fight", Setter::Number(|t, v| t.ko_fight = v.min(1.0))),
    (
        "expand_visits",
        Setter::Number(|t, v| t.expand_visits = v.clamp(1.0, 1000.0)),
    ),
    ("pattern_wins", Setter::Number(|t, v| t.pattern_wins = v)),
    ("distance_rave", Setter::Number(|t, v| t.distance_rave = v)),
    (
        "last_good_reply",
        Setter::Switch(|t, on| t.last_good_reply = on),
    ),
    (
        "outside_liberty",
        Setter::Switch(|t, on| t.outside_liberty = on),
    ),
    (
        "large_patterns",
        Setter::Switch(|t, on| t.large_patterns = on),
    ),
    ("captures", Setter::Switch(|t, on| t.captures = on)),
];

impl Tuning {
    /// The names [`Tuning::set`] knows, comma-separated, for help texts and
    /// its own errors.
    #[must_use]
    pub fn names() -> String {
        SETTERS.map(|(name, _)| name).join(", ")
    }

    /// Sets one constant from `name=value`, a name of [`Tuning::names`]: a
    /// number of zero or more, or for a switch `on`/`off` (`true`/`false`,
    /// or a number, 0 for off).
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, value) = assignment
            .split_once('=')
            .ok_or_else(|| format!("`{assignment}` is not name=value"))?;
        let (name, value) = (name.trim(), value.trim());
        let (_, setter) = SETTERS
            .iter()
            .find(|(known, _)| *known == name)
            .ok_or_else(|| format!("unknown tuning `{name}` ({})", Tuning::names()))?;
        match setter {
            Setter::Switch(set) => set(self, switch(name, value)?),
            Setter::Number(set) => set(self, number(name, value)?),
        }
        Ok(())
    }
}

/// A number of zero or more for the constant `name`.
fn number(name: &str, value: &str) -> Result<f32, String> {
    let number: f32 = value
        .parse()
        .map_err(|_| format!("{name}: `{value}` is not a number"))?;
    if !number.is_finite() || number < 0.0 {
        return Err(format!(
            "{name} must be a number of zero or more, not {value}"
        ));
    }
    Ok(number)
}

/// A switch's setting: `on`, `off`, `true`, `false`, or a number (0 is off).
fn switch(name: &str, value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "on" | "true" => Ok(true),
        "off" | "false" => Ok(false),
        _ => number(name, value)
            .map(|n| n > 0.0)
            .map_err(|_| format!("{name} is a switch: on or off, not `{value}`")),
    }
}

/// The prior of a pass: rarely worth trying while moves remain.
const PASS_PRIOR: (f32, f32) = (0.0, 20.0);

/// One search tree.
struct Tree<'g> {
    game: &'g Game,
    root_board: Board,
    root_color: Color,
    komi_half: i32,
    tuning: Tuning,
    nodes: Vec<Node>,
    rng: SplitMix64,
    ownership: Vec<u32>,
    playouts: u32,
    // Scratch space reused by every simulation.
    path: Vec<usize>,
    played: Vec<(Vertex, Color)>,
    /// For all-moves-as-first: for each vertex played after the node
    /// being updated, the simulation's stamp and the colour (index) that
    /// played it there first, as `stamp << 1 | colour`.
    seen: Vec<u32>,
    /// For each vertex marked in `seen`, the index in `played` of the move
    /// that played there first.
    first_at: Vec<u32>,
    stamp: u32,
    /// The patterns' strength of each move being expanded.
    strengths: Vec<f32>,
    /// The playouts' last good replies, with `last_good_reply`.
    replies: Option<Replies>,
}

/// Searches the position for the player to move with `budget`, on
/// `threads` threads (each its own tree, merged at the root), seeded by
/// `seed` (thread `i` uses `seed + i`).
#[must_use]
pub fn search(game: &Game, budget: Budget, threads: usize, seed: u64) -> SearchResult {
    search_tuned(game, budget, threads, seed, Tuning::default())
}

/// [`search`] with other constants.
#[must_use]
pub fn search_tuned(
    game: &Game,
    budget: Budget,
    threads: usize,
    seed: u64,
    tuning: Tuning,
) -> SearchResult {
    Searcher::default().search(game, budget, threads, seed, tuning)
}

/// Search trees kept from one move to the next: the part of the last search
/// below the moves played since is searched on instead of thrown away.
#[derive(Debug, Default, Clone)]
pub struct Searcher {
    clock: Clock,
    kept: Option<Kept>,
    /// For each colour, the half-points of komi it gives away beyond the
    /// game's own in its searches (see [`Tuning::dynamic_komi`]).
    komi_shift: ByColor<i32>,
}

/// The most a dynamic komi moves from the game's, in half-points per
/// point of the board (30 points on 9×9, 15 the other way).
const KOMI_SHIFT_UP: i32 = 60;
const KOMI_SHIFT_DOWN: i32 = 30;

#[derive(Debug, Clone)]
struct Kept {
    moves: Vec<Move>,
    root_color: Color,
    /// One per thread of the search; a host that searched one tree of
    /// several ([`Searcher::search_tree`]) keeps that one only.
    trees: Vec<Option<Vec<Node>>>,
}

/// At most this many moves may have been played since the kept search.
const REUSE_DEPTH: usize = 4;

impl Searcher {
    /// A searcher that reads the time for its cap from `clock`.
    #[must_use]
    pub fn with_clock(clock: Clock) -> Searcher {
        Searcher {
            clock,
            ..Searcher::default()
        }
    }

    /// Searches like [`search_tuned`], starting from what the last search of
    /// this game kept when the game has gone on from it by a few moves.
    pub fn search(
        &mut self,
        game: &Game,
        budget: Budget,
        threads: usize,
        seed: u64,
        tuning: Tuning,
    ) -> SearchResult {
        let clock = self.clock;
        let start = clock.now();
        let threads = threads.max(1);
        let (share, komi_half) = self.begin(game, budget, threads);
        let mut reused = self.reusable(game, threads);
        let trees: Vec<TreeOutcome> = if threads == 1 {
            let nodes = reused.pop().flatten();
            vec![run_tree(
                game,
                share,
                seed,
                (clock, start),
                tuning,
                komi_half,
                nodes,
            )]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = reused
                    .into_iter()
                    .enumerate()
                    .map(|(i, nodes)| {
                        scope.spawn(move || {
                            run_tree(
                                game,
                                share,
                                seed.wrapping_add(i as u64),
                                (clock, start),
                                tuning,
                                komi_half,
                                nodes,
                            )
                        })
                    })
                    .collect();
                handles.into_iter().filter_map(|h| h.join().ok()).collect()
            })
        };
        let (summaries, nodes): (Vec<TreeSummary>, Vec<_>) = trees
            .into_iter()
            .map(|t| (t.summary, Some(t.nodes)))
            .unzip();
        self.keep(game, threads, nodes);
        let mut result = self.merge_trees(game, &summaries, tuning);
        result.elapsed = clock.now().saturating_sub(start);
        result
    }

    /// One of the `threads` trees of a search like [`Searcher::search`],
    /// tree `index`, for a search spread over several hosts that share no
    /// memory (the browser's Workers): each host keeps a searcher of its own
    /// that has seen the same game, searches its tree with the same `seed`,
    /// and [`Searcher::merge_trees`] merges what they found, on every host
    /// alike. The trees, merged, are the same as `search` on `threads`
    /// threads gives. The searcher keeps its tree for the next move.
    pub fn search_tree(
        &mut self,
        game: &Game,
        budget: Budget,
        (index, threads): (usize, usize),
        seed: u64,
        tuning: Tuning,
    ) -> TreeSummary {
        let clock = self.clock;
        let start = clock.now();
        let threads = threads.max(1);
        let index = index.min(threads - 1);
        let (share, komi_half) = self.begin(game, budget, threads);
        let nodes = self.reusable(game, threads).swap_remove(index);
        let tree = run_tree(
            game,
            share,
            seed.wrapping_add(index as u64),
            (clock, start),
            tuning,
            komi_half,
            nodes,
        );
        let mut trees = vec![None; threads];
        trees[index] = Some(tree.nodes);
        self.keep(game, threads, trees);
        tree.summary
    }

    /// The line of play the last search expects from its position: `first`
    /// (`None` a pass), then at each step the reply it searched most, up to
    /// `depth` moves in all while the tree goes that deep, read from its
    /// first tree. Empty when no search was kept or `first` was not searched.
    #[must_use]
    pub fn principal_variation(&self, first: Option<Vertex>, depth: usize) -> Vec<Option<Vertex>> {
        let Some(nodes) = self
            .kept
            .as_ref()
            .and_then(|k| k.trees.first())
            .and_then(Option::as_ref)
        else {
            return Vec::new();
        };
        let children = |at: usize| {
            let node = &nodes[at];
            let from = node.children as usize;
            from..from + node.n_children as usize
        };
        let wanted = first.unwrap_or(NO_VERTEX);
        let Some(mut at) = children(0).find(|&c| nodes[c].mv() == wanted) else {
            return Vec::new();
        };
        let mut line = Vec::with_capacity(depth);
        while line.len() < depth && nodes[at].real_visits > 0 {
            let mv = nodes[at].mv();
            line.push((mv != NO_VERTEX).then_some(mv));
            match children(at).max_by_key(|&c| nodes[c].real_visits) {
                Some(next) => at = next,
                None => break,
            }
        }
        line
    }

    /// What the trees of one search found, merged, with the dynamic komi
    /// moved on for the next search; `elapsed` is left at zero.
    pub fn merge_trees(
        &mut self,
        game: &Game,
        trees: &[TreeSummary],
        tuning: Tuning,
    ) -> SearchResult {
        let color = game.to_move();
        let shift = self.komi_shift[color];
        let mut result = merge(trees);
        result.komi_shift = shift;
        if tuning.dynamic_komi > 0.0 {
            self.komi_shift[color] = next_komi_shift(shift, result.winrate(), tuning.dynamic_komi);
        }
        result
    }

    /// Each tree's share of `budget`, and the komi the search plays with:
    /// the game's, and the dynamic komi of the side to move, which starts
    /// from zero again when the game is not the one searched last.
    fn begin(&mut self, game: &Game, budget: Budget, threads: usize) -> (Budget, i32) {
        let share = Budget {
            playouts: budget.playouts.div_ceil(threads as u32),
            time: budget.time,
        };
        if self
            .kept
            .as_ref()
            .is_none_or(|k| !game.moves().starts_with(&k.moves))
        {
            self.komi_shift = ByColor::both(0);
        }
        let color = game.to_move();
        let shift = self.komi_shift[color];
        // The side to move gives `shift` half-points more away than the
        // game says.
        let komi_half = game.rules().komi.half_points()
            + match color {
                Color::Black => shift,
                Color::White => -shift,
            };
        (share, komi_half)
    }

    fn keep(&mut self, game: &Game, threads: usize, mut trees: Vec<Option<Vec<Node>>>) {
        trees.resize_with(threads, || None);
        self.kept = Some(Kept {
            moves: game.moves().to_vec(),
            root_color: game.to_move(),
            trees,
        });
    }

    /// The kept trees re-rooted at the current position, one per thread
    /// (`None` where there is none to go on from), if the game went on from
    /// the kept search by a few moves in turn.
    fn reusable(&mut self, game: &Game, threads: usize) -> Vec<Option<Vec<Node>>> {
        let none = || vec![None; threads];
        let Some(kept) = self.kept.take() else {
            return none();
        };
        let moves = game.moves();
        if kept.trees.len() != threads
            || !moves.starts_with(&kept.moves)
            || moves.len() == kept.moves.len()
            || moves.len() - kept.moves.len() > REUSE_DEPTH
        {
            return none();
        }
        let extra = &moves[kept.moves.len()..];
        let mut color = kept.root_color;
        let mut path = Vec::with_capacity(extra.len());
        for mv in extra {
            if mv.color != color {
                return none();
            }
            path.push(match mv.action {
                baduk::Action::Play(p) => game.board().vertex(p),
                baduk::Action::Pass => NO_VERTEX,
            });
            color = color.opponent();
        }
        if color != game.to_move() {
            return none();
        }
        kept.trees
            .into_iter()
            .map(|nodes| nodes.and_then(|nodes| reroot(nodes, &path)))
            .collect()
    }
}

/// The next move's komi shift after a search that won `winrate` of its
/// lines with `shift`: a point more while it wins more than `high`, a point
/// back when it falls a little below it, and the same way down from zero
/// while it wins less than `1 - high`.
fn next_komi_shift(shift: i32, winrate: f32, high: f32) -> i32 {
    const BAND: f32 = 0.15;
    let low = 1.0 - high;
    if winrate > high {
        (shift + 2).min(KOMI_SHIFT_UP)
    } else if winrate < low {
        (shift - 2).max(-KOMI_SHIFT_DOWN)
    } else if shift > 0 && winrate < high - BAND {
        shift - 2
    } else if shift < 0 && winrate > low + BAND {
        shift + 2
    } else {
        shift
    }
}

/// What one tree's search gives back.
struct TreeOutcome {
    summary: TreeSummary,
    nodes: Vec<Node>,
}

/// What one tree of a search found, all that merging the trees needs: its
/// root moves, its playouts, and for each vertex in how many of them Black
/// owned it at the end. It travels between hosts as text
/// ([`TreeSummary::to_text`]), exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeSummary {
    pub moves: Vec<RootMove>,
    pub playouts: u32,
    pub ownership: Vec<u32>,
}

impl TreeSummary {
    /// One line, no spaces: `playouts/moves/ownership`, the moves as
    /// `vertex:visits:winrate` separated by commas (a pass's vertex is `-`,
    /// the win rate is its `f32` bits in hex, so that it comes back to the
    /// bit), then the ownership counts of the vertices that have any, as
    /// `vertex:count`.
    #[must_use]
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut text = format!("{}/", self.playouts);
        for (i, m) in self.moves.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = match m.vertex {
                Some(v) => write!(text, "{sep}{v}:{}:{:x}", m.visits, m.winrate.to_bits()),
                None => write!(text, "{sep}-:{}:{:x}", m.visits, m.winrate.to_bits()),
            };
        }
        text.push('/');
        let mut first = true;
        for (v, &count) in self.ownership.iter().enumerate() {
            if count > 0 {
                let _ = write!(text, "{}{v}:{count}", if first { "" } else { "," });
                first = false;
            }
        }
        text
    }

    /// Reads [`TreeSummary::to_text`]'s line back; says what is wrong with
    /// one that is not such a line.
    pub fn from_text(text: &str) -> Result<TreeSummary, String> {
        let bad = |what: &str| format!("not a tree's summary: {what}");
        let mut parts = text.split('/');
        let (Some(playouts), Some(moves), Some(ownership), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("it has not three parts separated by `/`"));
        };
        let playouts = playouts.parse().map_err(|_| bad("the playouts"))?;
        let vertex = |v: &str| -> Result<Vertex, String> {
            v.parse::<Vertex>()
                .ok()
                .filter(|&v| v < MAX_VERTICES)
                .ok_or_else(|| bad(&format!("vertex `{v}`")))
        };
        let mut root = Vec::new();
        for m in moves.split(',').filter(|m| !m.is_empty()) {
            let mut fields = m.split(':');
            let (Some(v), Some(visits), Some(winrate), None) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return Err(bad(&format!("move `{m}`")));
            };
            root.push(RootMove {
                vertex: if v == "-" { None } else { Some(vertex(v)?) },
                visits: visits.parse().map_err(|_| bad(&format!("move `{m}`")))?,
                winrate: u32::from_str_radix(winrate, 16)
                    .map(f32::from_bits)
                    .map_err(|_| bad(&format!("move `{m}`")))?,
            });
        }
        let mut owned = vec![0u32; MAX_VERTICES];
        for o in ownership.split(',').filter(|o| !o.is_empty()) {
            let (v, count) = o.split_once(':').ok_or_else(|| bad(&format!("`{o}`")))?;
            owned[vertex(v)?] = count.parse().map_err(|_| bad(&format!("`{o}`")))?;
        }
        Ok(TreeSummary {
            moves: root,
            playouts,
            ownership: owned,
        })
    }
}

/// The subtree under `path` (moves from the root), moved to the front of
/// the same arena with its root first, the rest dropped; `None` (and the
/// arena dropped) if the path leaves the tree. The arena keeps its memory
/// for the next search, which would otherwise map and fault in the whole
/// tree afresh every move.
fn reroot(mut nodes: Vec<Node>, path: &[Vertex]) -> Option<Vec<Node>> {
    let mut at = 0usize;
    for &mv in path {
        let node = nodes.get(at)?;
        if !node.expanded() {
            return None;
        }
        let first = node.children as usize;
        at = (first..first + node.n_children as usize).find(|&c| nodes[c].mv() == mv)?;
    }
    // The subtree's blocks of children, by where they start. A block
    // always lies after the node it belongs to (a node is expanded after it
    // is made), so moving the blocks down in this order, packed behind the
    // new root, never writes over a node still to be moved.
    let mut blocks: Vec<(u32, u32)> = Vec::new();
    let mut queue = vec![at];
    while let Some(old) = queue.pop() {
        let node = &nodes[old];
        if node.expanded() {
            let first = node.children as usize;
            let count = node.n_children as usize;
            blocks.push((node.children, u32::from(node.n_children)));
            queue.extend(first..first + count);
        }
    }
    blocks.sort_unstable();
    nodes[0] = nodes[at];
    nodes[0].mv = NO_VERTEX as u16;
    let mut len = 1usize;
    let mut moved: Vec<(u32, u32)> = Vec::with_capacity(blocks.len());
    for &(first, count) in &blocks {
        let (first, count) = (first as usize, count as usize);
        nodes.copy_within(first..first + count, len);
        moved.push((first as u32, len as u32));
        len += count;
    }
    nodes.truncate(len);
    for node in &mut nodes {
        if node.expanded() {
            let block = moved.partition_point(|&(old, _)| old < node.children);
            node.children = moved[block].1;
        }
    }
    Some(nodes)
}

fn merge(trees: &[TreeSummary]) -> SearchResult {
    // Sum visits and wins per root move over the trees.
    let mut merged: Vec<RootMove> = Vec::new();
    let mut ownership = vec![0u32; MAX_VERTICES];
    let mut playouts = 0;
    for tree in trees {
        playouts += tree.playouts;
        for (o, x) in ownership.iter_mut().zip(&tree.ownership) {
            *o += x;
        }
        for m in &tree.moves {
            match merged.iter_mut().find(|x| x.vertex == m.vertex) {
                Some(x) => {
                    let total = x.visits + m.visits;
                    if total > 0 {
                        x.winrate = (x.winrate * x.visits as f32 + m.winrate * m.visits as f32)
                            / total as f32;
                    }
                    x.visits = total;
                }
                None => merged.push(*m),
            }
        }
    }
    merged.sort_by(|a, b| {
        b.visits
            .cmp(&a.visits)
            .then(b.winrate.total_cmp(&a.winrate))
    });
    let denominator = playouts.max(1) as f32;
    SearchResult {
        moves: merged,
        playouts,
        elapsed: Duration::ZERO,
        black_ownership: ownership.iter().map(|&o| o as f32 / denominator).collect(),
        komi_shift: 0,
    }
}

/// The hyperbolic tangent from `+`, `-`, `*` and `/` alone, which IEEE 754
/// rounds the same way everywhere: the platform's `tanh` may differ in its
/// last bit between a native build and WebAssembly, and one bit in a
/// simulation's value can send the search down another line. Within 1e-6
/// of the true value, more than the value needs.
fn tanh(x: f32) -> f32 {
    // tanh is within 2e-8 of ±1 beyond 9.
    let x = f64::from(x).clamp(-9.0, 9.0);
    // e^(2x) as (e^(2x/64))^64, the small power by its Taylor series.
    let r = 2.0 * x / 64.0;
    let mut term = 1.0;
    let mut small = 1.0;
    for k in 1..=10 {
        term *= r / f64::from(k);
        small += term;
    }
    let mut e = small;
    for _ in 0..6 {
        e *= e;
    }
    ((e - 1.0) / (e + 1.0)) as f32
}

/// One tree's search from `game`, timed by `clock` from `start`.
fn run_tree(
    game: &Game,
    budget: Budget,
    seed: u64,
    (clock, start): (Clock, Duration),
    tuning: Tuning,
    komi_half: i32,
    nodes: Option<Vec<Node>>,
) -> TreeOutcome {
    let mut tree = Tree::new(game, seed, tuning);
    tree.komi_half = komi_half;
    match nodes {
        Some(nodes) if nodes.first().is_some_and(|root| root.expanded()) => {
            tree.nodes = nodes;
            tree.keep_legal_root_moves();
        }
        _ => tree.expand_root(),
    }
    let extension = tuning.time_extension;
    // The playouts this move aims at, extended once where it is worth it.
    let mut aim = budget.playouts;
    let mut extended = extension <= 0.0;
    loop {
        if tree.playouts >= aim {
            // Where the choice is still open and the game not yet decided,
            // think longer, once.
            if extended || !tree.worth_more_time() {
                break;
            }
            extended = true;
            aim = (f64::from(budget.playouts) * (1.0 + f64::from(extension))) as u32;
        }
        if tree.playouts.is_multiple_of(64) {
            // The cap on a slow machine: play what was found so far.
            if clock.now().saturating_sub(start) >= budget.time {
                break;
            }
            // Stop early once no other move can catch the best in the
            // playouts left: what that saves pays for the longer thinks.
            if extension > 0.0 && tree.playouts.is_multiple_of(256) && tree.playouts >= aim / 4 {
                let (best, second, _) = tree.top_two();
                if best - second > aim - tree.playouts {
                    break;
                }
            }
        }
        tree.simulate();
    }
    TreeOutcome {
        summary: TreeSummary {
            moves: tree.root_moves(),
            playouts: tree.playouts,
            ownership: tree.ownership,
        },
        nodes: tree.nodes,
    }
}

impl<'g> Tree<'g> {
    fn new(game: &'g Game, seed: u64, tuning: Tuning) -> Tree<'g> {
        let mut root_board = game.board().clone();
        // The board's own ko point is the game's simple-ko state; superko
        // is checked at the root from the game itself.
        if game
            .last_move()
            .is_some_and(|m| m.action == baduk::Action::Pass)
        {
            root_board.clear_ko();
        }
        Tree {
            game,
            root_board,
            root_color: game.to_move(),
            tuning,
            komi_half: game.rules().komi.half_points(),
            nodes: vec![Node::new(NO_VERTEX, 0.0, 0.0)],
            rng: SplitMix64::new(seed),
            ownership: vec![0; MAX_VERTICES],
            playouts: 0,
            path: Vec::with_capacity(64),
            played: Vec::with_capacity(3 * MAX_VERTICES),
            seen: vec![0; MAX_VERTICES],
            first_at: vec![0; MAX_VERTICES],
            stamp: 0,
            strengths: Vec::with_capacity(MAX_VERTICES),
            replies: tuning.last_good_reply.then(Replies::default),
        }
    }

    fn last_vertex(&self) -> Vertex {
        self.vertex_back(1)
    }

    /// The vertex of the move `back` moves ago (1 the last), `NO_VERTEX`
    /// for a pass or none.
    fn vertex_back(&self, back: usize) -> Vertex {
        let moves = self.game.moves();
        match moves.len().checked_sub(back).map(|i| moves[i].action) {
            Some(baduk::Action::Play(p)) => self.root_board.vertex(p),
            _ => NO_VERTEX,
        }
    }

    /// The root's children: every move the game's rules allow (superko
    /// included) that does not fill an own eye, and a pass.
    fn expand_root(&mut self) {
        let board = self.root_board.clone();
        let color = self.root_color;
        let (last, last2) = (self.last_vertex(), self.vertex_back(2));
        let legal: Vec<Vertex> = self
            .game
            .legal_points(color)
            .into_iter()
            .map(|p| board.vertex(p))
            .filter(|&v| !board.is_eye_shape(v, color))
            .collect();
        self.add_children(0, &board, color, (last, last2), &legal);
    }

    /// A kept root's children, less the moves the game's rules (superko)
    /// forbid here, as a fresh block at the end of the arena.
    fn keep_legal_root_moves(&mut self) {
        let color = self.root_color;
        let first = self.nodes[0].children as usize;
        let n = self.nodes[0].n_children as usize;
        let legal: Vec<Node> = (first..first + n)
            .filter(|&c| {
                let mv = self.nodes[c].mv();
                mv == NO_VERTEX || self.game.check(color, self.root_board.point(mv)).is_ok()
            })
            .map(|c| self.nodes[c])
            .collect();
        let new_first = self.nodes.len() as u32;
        self.nodes[0].n_children = legal.len() as u16;
        self.nodes[0].children = new_first;
        self.nodes.extend(legal);
    }

    fn add_children(
        &mut self,
        at: usize,
        board: &Board,
        color: Color,
        (last, last2): (Vertex, Vertex),
        moves: &[Vertex],
    ) {
        let first = self.nodes.len() as u32;
        for &v in moves {
            let p = prior(
                board,
                v,
                color,
                last,
                self.tuning.prior_even,
                self.tuning.ladders,
            );
            self.nodes.push(Node::new(v, p.wins, p.visits));
        }
        let pachi = self.tuning.pattern_wins;
        let weight = self.tuning.pattern_prior;
        if (pachi > 0.0 || weight > 0.0) && !moves.is_empty() {
            let gammas = if self.tuning.large_patterns {
                Gammas::large()
            } else {
                Gammas::in_force()
            };
            self.strengths.clear();
            self.strengths.extend(
                moves
                    .iter()
                    .map(|&v| gammas.strength(&features(board, v, color, last, last2))),
            );
            let total = self.strengths.iter().sum::<f32>().max(f32::MIN_POSITIVE);
            let n = moves.len() as f32;
            for (node, &s) in self.nodes[first as usize..].iter_mut().zip(&self.strengths) {
                if pachi > 0.0 {
                    // Pachi's: virtual wins from the move's share.
                    let p = s / total;
                    if p >= 0.001 {
                        node.wins += p.sqrt() * pachi;
                        node.visits += p.sqrt() * pachi;
                    }
                } else {
                    // The patterns' share of each move, against the average one's.
                    let r = s * n / total;
                    node.wins += weight * r / (r + 1.0);
                    node.visits += weight;
                }
            }
        }
        self.nodes
            .push(Node::new(NO_VERTEX, PASS_PRIOR.0, PASS_PRIOR.1));
        let node = &mut self.nodes[at];
        node.children = first;
        node.n_children = (moves.len() + 1) as u16;
    }

    fn expand(&mut self, at: usize, board: &Board, color: Color, last: (Vertex, Vertex)) {
        let moves = all_playout_candidates(board, color);
        self.add_children(at, board, color, last, &moves);
    }

    /// The child to visit: the best blend of its own and its RAVE win rate.
    ///
    /// A node always stands for the same position (the moves from the root
    /// that lead to it), and its children were the moves playable there when
    /// it was expanded, so none needs checking again here; the descent still
    /// treats a move it cannot play as a pass.
    fn select(&self, at: usize) -> usize {
        let node = &self.nodes[at];
        let first = node.children as usize;
        let mut best = first;
        let mut best_value = f32::MIN;
        for c in first..first + node.n_children as usize {
            let child = &self.nodes[c];
            let q = child.wins / child.visits.max(1.0);
            let value = if child.amaf_visits > 0.0 {
                let beta = child.amaf_visits
                    / (child.amaf_visits
                        + child.visits
                        + child.amaf_visits * child.visits / self.tuning.rave_equivalence);
                (1.0 - beta) * q + beta * (child.amaf_wins / child.amaf_visits)
            } else {
                q
            };
            if value > best_value {
                best_value = value;
                best = c;
            }
        }
        best
    }

    fn simulate(&mut self) {
        let mut board = self.root_board.clone();
        let mut color = self.root_color;
        let mut last = self.last_vertex();
        let mut last2 = self.vertex_back(2);
        let before_root = [last2, last];
        let mut passes = u32::from(last == NO_VERTEX && self.game.last_move().is_some());
        self.path.clear();
        self.played.clear();
        self.path.push(0);
        let mut at = 0;
        // Moves made in this simulation, and the last ko taken in it (its
        // point and the move that took it).
        let mut step = 0usize;
        let mut ko_taken: Option<(Vertex, usize)> = None;
        let expand_visits = self.tuning.expand_visits as u32;
        // Down the tree.
        loop {
            if !self.nodes[at].expanded() {
                if self.nodes[at].real_visits >= expand_visits && passes < 2 {
                    self.expand(at, &board, color, (last, last2));
                } else {
                    break;
                }
            }
            let child = self.select(at);
            let mv = self.nodes[child].mv();
            step += 1;
            if mv == NO_VERTEX || !board.is_playable(mv, color, false) {
                board.clear_ko();
                passes += 1;
                (last2, last) = (last, NO_VERTEX);
                self.played.push((NO_VERTEX, color));
            } else {
                board.play(mv, color);
                passes = 0;
                (last2, last) = (last, mv);
                self.played.push((mv, color));
                if let Some(k) = board.ko_point() {
                    ko_taken = Some((k, step));
                }
            }
            self.path.push(child);
            at = child;
            color = color.opponent();
            if passes >= 2 {
                break;
            }
        }
        // The rest of the game by the playout policy.
        let limit = 3 * board.size().points();
        let t = self.tuning;
        let knows = Knowledge {
            shapes: (t.pattern_playouts > 0.0).then(|| (Gammas::in_force(), t.pattern_playouts)),
            nakade: t.nakade,
            ladders: t.ladders,
            shapes_near_last2: t.shapes_near_last2,
            ko_fight: t.ko_fight,
            replies: self.replies.as_ref(),
            outside_liberties: t.outside_liberty,
            captures: t.captures,
        };
        let mut ataris = knows.captures.then(|| AtariWatch::of(&board));
        while passes < 2 && self.played.len() < limit {
            let open_ko = match ko_taken {
                Some((k, at)) if board.ko_point().is_none() && step - at < KO_AGE => Some(k),
                _ => None,
            };
            let recent = Recent {
                last,
                last2,
                open_ko,
                ataris: ataris.as_ref().map_or(&[], AtariWatch::stones),
            };
            step += 1;
            match playout_move(&board, color, recent, &mut self.rng, &knows) {
                Some(v) => {
                    board.play(v, color);
                    if let Some(watch) = &mut ataris {
                        watch.note(&board, v);
                    }
                    passes = 0;
                    (last2, last) = (last, v);
                    self.played.push((v, color));
                    if let Some(k) = board.ko_point() {
                        ko_taken = Some((k, step));
                    }
                }
                None => {
                    board.clear_ko();
                    passes += 1;
                    (last2, last) = (last, NO_VERTEX);
                }
            }
            color = color.opponent();
        }
        let ownership = &mut self.ownership;
        let area = area_margin_by_owner(&board, |v| ownership[v] += 1);
        let margin_half = 2 * area - self.komi_half;
        let (win, winner) = match margin_half.cmp(&0) {
            std::cmp::Ordering::Greater => (1.0, Some(Color::Black)),
            std::cmp::Ordering::Less => (0.0, Some(Color::White)),
            std::cmp::Ordering::Equal => (0.5, None),
        };
        if let Some(replies) = &mut self.replies {
            replies.learn(before_root, &self.played, winner);
        }
        // Mostly the win; a little the margin, so that a won game is won
        // cleanly (captures taken) rather than by any move at all.
        let margin = margin_half as f32 / 2.0;
        let black_wins = (1.0 - t.margin_weight) * win
            + t.margin_weight * (0.5 + 0.5 * tanh(margin / t.margin_scale));
        self.backup(black_wins);
        self.playouts += 1;
    }

    fn backup(&mut self, black_wins: f32) {
        // Moves played from each depth on, for all-moves-as-first: a point
        // counts for the colour that played there first (a stone played
        // where the other side's was captured says nothing of the point).
        // Marking from the last move back lets the earliest play win.
        self.stamp += 1;
        if self.stamp > u32::MAX >> 1 {
            self.seen.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        let mark = |c: Color| (stamp << 1) | c.index() as u32;
        let tree_moves = self.path.len() - 1;
        let len = self.played.len();
        for i in (tree_moves..len).rev() {
            let (v, c) = self.played[i];
            if v != NO_VERTEX {
                self.seen[v] = mark(c);
                self.first_at[v] = i as u32;
            }
        }
        let distance_rave = self.tuning.distance_rave;
        for depth in (0..self.path.len()).rev() {
            let at = self.path[depth];
            // The player who made the move into `at`.
            let mover = if depth % 2 == 1 {
                self.root_color
            } else {
                self.root_color.opponent()
            };
            let result = if mover == Color::Black {
                black_wins
            } else {
                1.0 - black_wins
            };
            let node = &mut self.nodes[at];
            node.visits += 1.0;
            node.real_visits += 1;
            node.wins += result;
            node.real_wins += result;
            if node.expanded() {
                // Children are moves by the player to move at `at`.
                let to_move = mover.opponent();
                let child_result = if to_move == Color::Black {
                    black_wins
                } else {
                    1.0 - black_wins
                };
                let first = node.children as usize;
                let n = node.n_children as usize;
                let played_first = mark(to_move);
                // The moves after this node start at `played[depth]`.
                let span = (len - depth + 1) as f32;
                for c in first..first + n {
                    let mv = self.nodes[c].mv();
                    if mv != NO_VERTEX && self.seen[mv] == played_first {
                        let weight = if distance_rave > 0.0 {
                            let after = (len - self.first_at[mv] as usize) as f32;
                            1.0 + distance_rave * after / span
                        } else {
                            1.0
                        };
                        let child = &mut self.nodes[c];
                        child.amaf_visits += weight;
                        child.amaf_wins += weight * child_result;
                    }
                }
            }
            if depth > 0 {
                let (v, c) = self.played[depth - 1];
                if v != NO_VERTEX {
                    self.seen[v] = mark(c);
                    self.first_at[v] = (depth - 1) as u32;
                }
            }
        }
    }

    /// The visits of the two most visited root moves and the win rate of
    /// the first.
    fn top_two(&self) -> (u32, u32, f32) {
        let root = &self.nodes[0];
        let first = root.children as usize;
        let (mut best, mut second, mut rate) = (0u32, 0u32, 0.5f32);
        for n in &self.nodes[first..first + root.n_children as usize] {
            if n.real_visits > best {
                second = best;
                best = n.real_visits;
                rate = n.real_wins / n.real_visits as f32;
            } else if n.real_visits > second {
                second = n.real_visits;
            }
        }
        (best, second, rate)
    }

    /// Whether the search is worth extending: the two best moves are
    /// close in visits and the game is not yet decided either way.
    fn worth_more_time(&self) -> bool {
        let (best, second, rate) = self.top_two();
        (0.15..=0.85).contains(&rate) && best * 2 < second * 3
    }

    fn root_moves(&self) -> Vec<RootMove> {
        let root = &self.nodes[0];
        let first = root.children as usize;
        let mut moves: Vec<RootMove> = (first..first + root.n_children as usize)
            .map(|c| {
                let n = &self.nodes[c];
                // The win rate of its own simulations: the priors steer
                // the search, but a move's worth is what its lines found.
                let winrate = if n.real_visits > 0 {
                    n.real_wins / n.real_visits as f32
                } else {
                    n.wins / n.visits.max(1.0)
                };
                RootMove {
                    vertex: (n.mv() != NO_VERTEX).then_some(n.mv()),
                    visits: n.real_visits,
                    winrate,
                }
            })
            .collect();
        moves.sort_by(|a, b| {
            b.visits
                .cmp(&a.visits)
                .then(b.winrate.total_cmp(&a.winrate))
        });
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tuning_name_listed_is_one_that_sets_a_constant() {
        let names = Tuning::names();
        let names: Vec<&str> = names.split(", ").collect();
        assert_eq!(names.len(), 19);
        for name in &names {
            let mut tuning = Tuning::default();
            tuning.set(&format!("{name}=7")).expect("a listed name");
            assert_ne!(tuning, Tuning::default(), "{name} changed nothing");
        }
        let err = Tuning::default().set("speed=2").expect_err("not a name");
        assert!(err.contains("unknown tuning `speed`") && err.contains(&Tuning::names()));
    }

    #[test]
    fn a_switch_is_turned_on_and_off_by_word_or_number_and_refuses_anything_else() {
        let mut tuning = Tuning::default();
        for (value, on) in [("on", true), ("off", false), ("TRUE", true), ("0", false)] {
            tuning.set(&format!("nakade = {value}")).expect("a setting");
            assert_eq!(tuning.nakade, on, "nakade={value}");
        }
        tuning
            .set("ladders=1")
            .expect("the form the strength notes use");
        assert!(tuning.ladders);
        let err = tuning.set("ladders=maybe").expect_err("not a setting");
        assert!(err.contains("ladders is a switch"), "{err}");
        let err = tuning.set("rave_equivalence=on").expect_err("a number");
        assert!(err.contains("not a number"), "{err}");
        let err = tuning.set("margin_weight=-1").expect_err("negative");
        assert!(err.contains("zero or more"), "{err}");
        assert!(tuning.ladders, "a refused setting changed nothing");
    }

    /// The same tree, node for node, under `a` in `x` and `b` in `y`.
    fn same_subtree(x: &[Node], a: usize, y: &[Node], b: usize) -> usize {
        let (p, q) = (&x[a], &y[b]);
        assert_eq!(p.n_children, q.n_children);
        assert_eq!(
            (p.visits, p.wins, p.real_visits),
            (q.visits, q.wins, q.real_visits)
        );
        let mut count = 1;
        for c in 0..p.n_children as usize {
            let (pc, qc) = (p.children as usize + c, q.children as usize + c);
            assert_eq!(x[pc].mv, y[qc].mv);
            count += same_subtree(x, pc, y, qc);
        }
        count
    }

    #[test]
    fn a_kept_tree_rerooted_in_place_is_the_subtree_it_was() {
        let game = Game::new(baduk::Rules::default());
        let budget = Budget {
            playouts: 3_000,
            time: Duration::from_secs(30),
        };
        let tuning = Tuning::default();
        let komi = game.rules().komi.half_points();
        let clock = Clock::system();
        let tree = run_tree(&game, budget, 7, (clock, clock.now()), tuning, komi, None);
        let nodes = tree.nodes;
        // Down the most visited line two moves.
        let most_visited = |at: usize| {
            let first = nodes[at].children as usize;
            (first..first + nodes[at].n_children as usize)
                .max_by(|&a, &b| nodes[a].visits.total_cmp(&nodes[b].visits))
                .expect("expanded")
        };
        let one = most_visited(0);
        let two = most_visited(one);
        let path = [nodes[one].mv(), nodes[two].mv()];
        let copy = nodes.clone();
        let capacity = copy.capacity();
        let rerooted = reroot(copy, &path).expect("on the tree");
        let count = same_subtree(&nodes, two, &rerooted, 0);
        assert!(count > 100, "a real subtree: {count} nodes");
        assert_eq!(rerooted.len(), count, "nothing else kept");
        assert_eq!(rerooted[0].mv(), NO_VERTEX);
        assert!(rerooted.capacity() >= capacity, "the arena's memory kept");
        // A path that leaves the tree keeps nothing.
        assert!(reroot(nodes, &[path[0], path[0]]).is_none());
    }

    #[test]
    fn the_portable_tanh_is_the_tangent() {
        for i in -400..=400 {
            let x = i as f32 / 20.0;
            assert!((tanh(x) - x.tanh()).abs() < 1e-6, "tanh({x})");
        }
    }

    #[test]
    fn a_dynamic_komi_follows_the_win_rate_within_its_bounds() {
        let high = 0.8;
        // Winning clearly: a point more each move, up to the cap.
        let mut shift = 0;
        for _ in 0..100 {
            shift = next_komi_shift(shift, 0.9, high);
        }
        assert_eq!(shift, KOMI_SHIFT_UP);
        // Inside the band it holds; a little below it, it comes back.
        assert_eq!(next_komi_shift(10, 0.7, high), 10);
        assert_eq!(next_komi_shift(10, 0.6, high), 8);
        // Losing clearly: below zero, down to its floor.
        let mut shift = 0;
        for _ in 0..100 {
            shift = next_komi_shift(shift, 0.1, high);
        }
        assert_eq!(shift, -KOMI_SHIFT_DOWN);
        assert_eq!(next_komi_shift(-10, 0.3, high), -10);
        assert_eq!(next_komi_shift(-10, 0.4, high), -8);
        // An even game stays at the game's komi.
        assert_eq!(next_komi_shift(0, 0.5, high), 0);
    }

    #[test]
    fn the_search_plays_with_the_shifted_komi_and_starts_afresh_each_game() {
        let tuning = Tuning {
            dynamic_komi: 0.8,
            ..Tuning::default()
        };
        let budget = Budget {
            playouts: 300,
            time: Duration::from_secs(10),
        };
        // Black has four stones in the centre and White none: Black wins
        // every line, so its komi rises by a point for the next search.
        let mut game = Game::new(baduk::Rules::default());
        for point in ["E5", "D5", "F5", "E4"] {
            let p = game.board().size().parse_point(point).expect("a point");
            game.play(Move::play(Color::Black, p)).expect("legal");
            game.play(Move::pass(Color::White)).expect("legal");
        }
        let mut searcher = Searcher::default();
        let first = searcher.search(&game, budget, 1, 1, tuning);
        assert_eq!(first.komi_shift, 0);
        assert!(
            first.winrate() > 0.8,
            "Black is far ahead: {}",
            first.winrate()
        );
        let p = game.board().size().parse_point("E6").expect("E6");
        game.play(Move::play(Color::Black, p)).expect("legal");
        game.play(Move::pass(Color::White)).expect("legal");
        let second = searcher.search(&game, budget, 1, 2, tuning);
        assert_eq!(second.komi_shift, 2, "a point more after a clear lead");
        // A new game forgets it.
        let fresh = searcher.search(&Game::new(baduk::Rules::default()), budget, 1, 3, tuning);
        assert_eq!(fresh.komi_shift, 0);
    }
}
