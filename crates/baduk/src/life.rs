//! Dead stones: a fixed, conservative judgement of which groups are clearly dead.
//!
//! A wrong removal is the worst error a count can make, so a group is taken
//! off only when the reading finds it lost and no tactical check finds a way
//! out for it; any doubt leaves it on the board. Three stages: Benson's
//! pass-alive analysis (certain), playouts with each side moving first
//! (a coarse filter of candidates, [`DEAD_SHARE_PERCENT`]% of the lines for
//! each side), and tactical vetoes (seki, eye room, friends nearby,
//! capturing races whose win would save it, unclear fights) that keep a
//! candidate as a [`DoubtfulGroup`]. On a board ended with the fighting
//! still open (a fifth of its points undecided in the playouts), a group
//! whose empty area is wide and undecided and walled by more than one enemy
//! chain stays. Then a group is removed only if it
//! is shut in: the empty area it can reach holds no friendly stone that
//! stays on the board, as in a game ended with a side still open. Last,
//! the count never takes every stone of a colour off the board.
//!
//! Everything is deterministic: SplitMix64 with the fixed seed
//! [`DEAD_STONE_SEED`], one thread, a fixed number of playouts, so the same
//! position gives the same verdict on every machine and every run.
//! `docs/dead-stones.md` describes each stage in full and what it was
//! measured against.

use crate::board::{Board, MAX_VERTICES, SplitMix64, Vertex};
use crate::doubt::Reading;
pub use crate::doubt::{Doubt, DoubtfulGroup};
use crate::game::Game;
use crate::playout::{owner_at_end, policy_playout};
use crate::point::{ByColor, Color, Point};
use crate::rules::DeadStoneRule;
use crate::score::{GameResult, Score, settled_seki_chains};

/// The seed of the dead-stone playouts. Changing it changes verdicts.
pub const DEAD_STONE_SEED: u64 = 0x6465_6164_2d73_746e; // "dead-stn"

/// Playouts with each side moving first.
pub const PLAYOUTS_PER_SIDE: u32 = 200;

/// Share of playouts, in percent and for each side moving first, in which a
/// group must be lost to be a candidate for removal.
pub const DEAD_SHARE_PERCENT: u32 = 20;

/// Playouts (per side to move first) in which an enclosing enemy chain must
/// be lost for the fight around a candidate to count as unclear: 30%.
const SHAKY: u32 = PLAYOUTS_PER_SIDE * 3 / 10;

/// How far past a candidate's liberties, in steps through empty points, an
/// enemy stone still counts as enclosing it.
const NEAR_STEPS: usize = 2;

/// Playouts, of both sides' together, that each colour must own an empty
/// point at the end of for the point to be undecided: a fifth.
const UNDECIDED_LINES: u32 = 2 * PLAYOUTS_PER_SIDE / 5;

/// Undecided points the empty area a group reaches must hold, on an open
/// board, for the group to keep its room to live.
const OPEN_AREA_POINTS: usize = 12;

/// Chains of `color` that are pass-alive (Benson): they cannot be captured
/// even if their owner passes every turn. Returned as a mask over vertices.
#[must_use]
pub fn pass_alive(board: &Board, color: Color) -> Vec<bool> {
    let regions = enclosed_regions(board, color);
    let mut heads: Vec<Vertex> = board
        .vertices()
        .filter(|&v| board.color_at(v) == Some(color) && board.chain_head(v) == v)
        .collect();
    let mut region_alive = vec![true; regions.len()];
    loop {
        // Chains with fewer than two healthy regions die; regions bordered
        // by a dead chain stop counting.
        let before = heads.len();
        heads.retain(|&h| {
            regions
                .iter()
                .enumerate()
                .filter(|(i, r)| region_alive[*i] && r.vital_to.contains(&h))
                .count()
                >= 2
        });
        let mut changed = heads.len() != before;
        for (i, r) in regions.iter().enumerate() {
            if region_alive[i] && r.borders.iter().any(|b| !heads.contains(b)) {
                region_alive[i] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut mask = vec![false; MAX_VERTICES];
    for &h in &heads {
        for s in board.chain_stones(h) {
            mask[s] = true;
        }
    }
    mask
}

/// A maximal connected set of points not occupied by `color`, with the
/// `color` chains bordering it and those of them it is vital to (every empty
/// point of the region is a liberty of the chain).
struct EnclosedRegion {
    points: Vec<Vertex>,
    borders: Vec<Vertex>,
    vital_to: Vec<Vertex>,
}

fn enclosed_regions(board: &Board, color: Color) -> Vec<EnclosedRegion> {
    let mut seen = vec![false; MAX_VERTICES];
    let mut regions = Vec::new();
    let mut stack = Vec::new();
    for v in board.vertices() {
        if seen[v] || board.color_at(v) == Some(color) {
            continue;
        }
        let mut points = Vec::new();
        let mut borders: Vec<Vertex> = Vec::new();
        seen[v] = true;
        stack.push(v);
        while let Some(x) = stack.pop() {
            points.push(x);
            for n in board.neighbours(x) {
                if board.is_border(n) {
                    continue;
                }
                if board.color_at(n) == Some(color) {
                    let h = board.chain_head(n);
                    if !borders.contains(&h) {
                        borders.push(h);
                    }
                } else if !seen[n] {
                    seen[n] = true;
                    stack.push(n);
                }
            }
        }
        let vital_to = borders
            .iter()
            .copied()
            .filter(|&h| {
                points.iter().all(|&p| {
                    !board.is_empty(p)
                        || board
                            .neighbours(p)
                            .iter()
                            .any(|&n| board.color_at(n) == Some(color) && board.chain_head(n) == h)
                })
            })
            .collect();
        regions.push(EnclosedRegion {
            points,
            borders,
            vital_to,
        });
    }
    regions
}

/// The verdict on every stone of a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifeAndDeath {
    /// Stones judged dead, in board order.
    pub dead: Vec<Point>,
    /// Stones that are pass-alive (certainly alive), in board order.
    pub pass_alive: Vec<Point>,
    /// Groups the playouts lose but a tactical check keeps on the board,
    /// with the reason: a player who wants them off should capture them.
    pub doubtful: Vec<DoubtfulGroup>,
}

/// The judgement on one group.
enum Verdict {
    Alive,
    Dead,
    Doubtful(Doubt),
}

/// Judges which stones on `board` are clearly dead. See the module docs.
#[must_use]
pub fn analyse(board: &Board) -> LifeAndDeath {
    let alive_mask = ByColor::from_fn(|c| pass_alive(board, c));
    let mut dead = vec![false; MAX_VERTICES];

    // 1. Benson: stones inside regions enclosed by pass-alive chains whose
    //    empty points all touch those chains.
    for color in [Color::Black, Color::White] {
        let mask = &alive_mask[color];
        for region in enclosed_regions(board, color) {
            let sealed = !region.borders.is_empty() && region.borders.iter().all(|&h| mask[h]);
            let every_empty_touches = region.points.iter().all(|&p| {
                !board.is_empty(p)
                    || board
                        .neighbours(p)
                        .iter()
                        .any(|&n| board.color_at(n) == Some(color) && mask[n])
            });
            if sealed && every_empty_touches {
                for &p in &region.points {
                    if board.color_at(p) == Some(color.opponent()) {
                        dead[p] = true;
                    }
                }
            }
        }
    }

    // 2. Playouts with each side first: how often each point ends up owned
    //    by Black, and by White.
    let lost = playout_losses(board);

    // 3. Groups: chains of one colour joined through shared liberties.
    //    Decide each group as a whole.
    let seki = settled_seki_chains(board);
    let threshold = PLAYOUTS_PER_SIDE * DEAD_SHARE_PERCENT / 100;
    let is_lost = |v: Vertex| lost.black_first[v] >= threshold && lost.white_first[v] >= threshold;
    let mut grouped = vec![false; MAX_VERTICES];
    let mut verdicts: Vec<(Vec<Vertex>, Verdict)> = Vec::new();
    for v in board.vertices() {
        if board.color_at(v).is_none() || grouped[v] || dead[v] {
            continue;
        }
        let stones = group_of(board, v);
        for &s in &stones {
            grouped[s] = true;
        }
        let judge = Judge {
            board,
            lost: &lost,
            alive_mask: &alive_mask,
            seki: &seki,
            is_lost: &is_lost,
        };
        let verdict = judge.judge(&stones);
        if matches!(verdict, Verdict::Dead) {
            for &s in &stones {
                dead[s] = true;
            }
        }
        verdicts.push((stones, verdict));
    }

    // 4. Open boards: on a board where at least a fifth of the points are
    //    undecided (each side owns them in a fifth of the lines), the game
    //    was ended with the fighting still open, and a group whose empty
    //    area holds 12 or more undecided points has room the playouts
    //    cannot judge: it stays. Not when one enemy chain walls the whole
    //    area off: a lone invader in a territory closed by one wall is dead
    //    however wide the territory.
    let undecided = |v: Vertex| {
        board.is_empty(v)
            && lost.owned.black[v] >= UNDECIDED_LINES
            && lost.owned.white[v] >= UNDECIDED_LINES
    };
    if board.vertices().filter(|&v| undecided(v)).count() >= board.size().points() / 5 {
        for (stones, verdict) in &mut verdicts {
            if !matches!(verdict, Verdict::Dead) {
                continue;
            }
            let (area, walls) = open_area(board, stones);
            if walls >= 2 && area.iter().filter(|&&v| undecided(v)).count() >= OPEN_AREA_POINTS {
                for &s in stones.iter() {
                    dead[s] = false;
                }
                *verdict = Verdict::Doubtful(Doubt::Escape);
            }
        }
    }

    // 5. Open areas: a group is shut in only if the empty area it can
    //    reach holds no friendly stone that stays on the board. If it does,
    //    the two can still join and the group can still live, however far
    //    apart they are: it stays, and so may another group that was to be
    //    removed and reaches it, until nothing changes.
    loop {
        let mut changed = false;
        for (stones, verdict) in &mut verdicts {
            if matches!(verdict, Verdict::Dead) && open_to_a_friend(board, stones, &dead) {
                for &s in stones.iter() {
                    dead[s] = false;
                }
                *verdict = Verdict::Doubtful(Doubt::Escape);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // 6. Nobody is left with nothing: if the reading would take every
    //    stone of a colour off the board, the game was ended before it was
    //    played out (no finished game of the measured sets has that), its
    //    groups lean on one another across open areas, and they stay as
    //    doubtful. Stones Benson's analysis finds dead stay dead.
    for color in [Color::Black, Color::White] {
        let mut stones = board
            .vertices()
            .filter(|&v| board.color_at(v) == Some(color));
        if !stones.all(|v| dead[v]) {
            continue;
        }
        for (stones, verdict) in &mut verdicts {
            if matches!(verdict, Verdict::Dead) && board.color_at(stones[0]) == Some(color) {
                for &s in stones.iter() {
                    dead[s] = false;
                }
                *verdict = Verdict::Doubtful(Doubt::UnclearFight);
            }
        }
    }
    let doubtful = verdicts
        .into_iter()
        .filter_map(|(stones, verdict)| match verdict {
            Verdict::Doubtful(reason) => Some(DoubtfulGroup {
                stones: stones.iter().map(|&s| board.point(s)).collect(),
                reason,
            }),
            Verdict::Alive | Verdict::Dead => None,
        })
        .collect();

    let to_points = |mask: &dyn Fn(Vertex) -> bool| -> Vec<Point> {
        board
            .vertices()
            .filter(|&v| mask(v))
            .map(|v| board.point(v))
            .collect()
    };
    LifeAndDeath {
        dead: to_points(&|v| dead[v] && board.color_at(v).is_some()),
        pass_alive: to_points(&|v| alive_mask.black[v] || alive_mask.white[v]),
        doubtful,
    }
}

/// The empty area reached from the group's liberties through empty points
/// however far, and how many enemy chains border it.
fn open_area(board: &Board, stones: &[Vertex]) -> (Vec<Vertex>, usize) {
    let Some(color) = stones.first().and_then(|&s| board.color_at(s)) else {
        return (Vec::new(), 0);
    };
    let mut walls: Vec<Vertex> = Vec::new();
    let (area, _) = walk_area(board, &group_liberties(board, stones), |n| {
        if board.color_at(n) != Some(color) {
            let head = board.chain_head(n);
            if !walls.contains(&head) {
                walls.push(head);
            }
        }
        false
    });
    (area, walls.len())
}

/// Whether the empty area reached from the group's liberties, through empty
/// points however far, borders a stone of its colour outside it that is
/// not `dead`.
fn open_to_a_friend(board: &Board, stones: &[Vertex], dead: &[bool]) -> bool {
    let Some(color) = stones.first().and_then(|&s| board.color_at(s)) else {
        return false;
    };
    let libs = group_liberties(board, stones);
    area_reaches_friend(board, color, stones, &libs, |v| dead[v])
}

/// Whether the empty area reached from `libs` through empty points borders
/// a stone of `color` outside `stones` that is not `gone`.
fn area_reaches_friend(
    board: &Board,
    color: Color,
    stones: &[Vertex],
    libs: &[Vertex],
    gone: impl Fn(Vertex) -> bool,
) -> bool {
    walk_area(board, libs, |n| {
        board.color_at(n) == Some(color) && !stones.contains(&n) && !gone(n)
    })
    .1
}

/// Walks the empty area reached from `libs` through empty points, however
/// far, showing `stone` each stone that borders it until it answers true:
/// the empty points walked, and whether `stone` stopped the walk.
fn walk_area(
    board: &Board,
    libs: &[Vertex],
    mut stone: impl FnMut(Vertex) -> bool,
) -> (Vec<Vertex>, bool) {
    let mut seen = vec![false; MAX_VERTICES];
    let mut stack = libs.to_vec();
    for &l in libs {
        seen[l] = true;
    }
    let mut area = Vec::new();
    while let Some(x) = stack.pop() {
        area.push(x);
        for n in board.neighbours(x) {
            if board.is_border(n) || seen[n] {
                continue;
            }
            if board.is_empty(n) {
                seen[n] = true;
                stack.push(n);
            } else if stone(n) {
                return (area, true);
            }
        }
    }
    (area, false)
}

/// For each vertex, in how many playouts (with Black first, with White first)
/// the stone there was lost: the point ended owned by the other colour.
#[derive(Debug)]
pub struct Losses {
    /// Losses with Black moving first, per vertex.
    pub black_first: Vec<u32>,
    /// Losses with White moving first, per vertex.
    pub white_first: Vec<u32>,
    /// For each playout (those with Black first, then those with White
    /// first), the stones lost in it, as a bit set over vertices.
    lines: Vec<[u64; MAX_VERTICES / 64]>,
    /// For each empty point, in how many playouts (either side first) each
    /// colour owned it at the end.
    owned: ByColor<Vec<u32>>,
}

impl Losses {
    /// Whether every stone of `stones` was lost in playout `line`.
    fn all_lost_in(&self, line: usize, stones: &[Vertex]) -> bool {
        let lost = &self.lines[line];
        stones.iter().all(|&s| lost[s / 64] >> (s % 64) & 1 == 1)
    }
}

/// Playout losses of every stone (for diagnostics).
pub fn playout_losses(board: &Board) -> Losses {
    let mut rng = SplitMix64::new(DEAD_STONE_SEED);
    let mut losses = Losses {
        black_first: vec![0; MAX_VERTICES],
        white_first: vec![0; MAX_VERTICES],
        lines: Vec::with_capacity(2 * PLAYOUTS_PER_SIDE as usize),
        owned: ByColor::from_fn(|_| vec![0; MAX_VERTICES]),
    };
    for first in [Color::Black, Color::White] {
        for _ in 0..PLAYOUTS_PER_SIDE {
            let mut b = board.clone();
            b.clear_ko();
            policy_playout(&mut b, first, &mut rng);
            let tally = match first {
                Color::Black => &mut losses.black_first,
                Color::White => &mut losses.white_first,
            };
            let mut line = [0u64; MAX_VERTICES / 64];
            for v in board.vertices() {
                match (board.color_at(v), owner_at_end(&b, v)) {
                    (Some(c), Some(owner)) if owner == c.opponent() => {
                        tally[v] += 1;
                        line[v / 64] |= 1 << (v % 64);
                    }
                    (None, Some(owner)) => losses.owned[owner][v] += 1,
                    _ => {}
                }
            }
            losses.lines.push(line);
        }
    }
    losses
}

/// The stones of the group on `v`: its chain and every chain of the same
/// colour joined to it through a shared liberty, transitively.
fn group_of(board: &Board, v: Vertex) -> Vec<Vertex> {
    let Some(color) = board.color_at(v) else {
        return Vec::new();
    };
    let mut seen = vec![false; MAX_VERTICES];
    let mut stones = Vec::new();
    let mut heads = vec![board.chain_head(v)];
    seen[board.chain_head(v)] = true;
    while let Some(h) = heads.pop() {
        for s in board.chain_stones(h) {
            stones.push(s);
        }
        for lib in board.liberties(h) {
            for n in board.neighbours(lib) {
                if board.color_at(n) == Some(color) {
                    let nh = board.chain_head(n);
                    if !seen[nh] {
                        seen[nh] = true;
                        heads.push(nh);
                    }
                }
            }
        }
    }
    stones.sort_unstable();
    stones
}

/// What the tactical checks need to know about the position.
#[derive(Clone, Copy)]
struct Judge<'a> {
    board: &'a Board,
    lost: &'a Losses,
    alive_mask: &'a ByColor<Vec<bool>>,
    seki: &'a [Vertex],
    is_lost: &'a dyn Fn(Vertex) -> bool,
}

impl Judge<'_> {
    fn judge(&self, stones: &[Vertex]) -> Verdict {
        let board = self.board;
        let Some(color) = stones.first().and_then(|&s| board.color_at(s)) else {
            return Verdict::Alive;
        };
        // Pass-alive stones are alive, whatever the playouts say.
        if stones.iter().any(|&s| self.alive_mask[color][s]) {
            return Verdict::Alive;
        }
        // Lost in most playouts, with either side moving first.
        if !stones.iter().all(|&s| (self.is_lost)(s)) {
            return Verdict::Alive;
        }
        // Seki stays alive: a shared liberty neither side can fill, where
        // neither has room to extend first (see `settled_seki_chains`).
        if stones
            .iter()
            .any(|&s| self.seki.contains(&board.chain_head(s)))
        {
            return Verdict::Doubtful(Doubt::Seki);
        }
        let libs = group_liberties(board, stones);
        // Eyes: two true eyes, or room for two inside its own walls.
        if !self.cannot_make_two_eyes(color, stones, &libs, 3) {
            return Verdict::Doubtful(Doubt::Eyes);
        }
        // Escape: a friendly stone that is not lost, two steps away through
        // empty points (the group and it could join with one move).
        let friend_near = |x: Vertex| {
            board.neighbours(x).iter().any(|&n| {
                board.color_at(n) == Some(color) && !stones.contains(&n) && !(self.is_lost)(n)
            })
        };
        let escapes = libs.iter().any(|&l| {
            friend_near(l)
                || board
                    .neighbours(l)
                    .iter()
                    .any(|&n| board.is_empty(n) && friend_near(n))
        });
        if escapes {
            return Verdict::Doubtful(Doubt::Escape);
        }
        // The enemy groups around it: those touching it, and those on the
        // edge of the empty area around it (flooding from its liberties
        // through empty points, at most `NEAR_STEPS` further: a weak group
        // across the board does not make this fight unclear). An enemy
        // whose liberties are all this group's sits inside its eye space,
        // which the playouts and the eye check judge.
        let enemy_alive = &self.alive_mask[color.opponent()];
        let mut heads: Vec<(Vertex, bool)> = Vec::new();
        let mut add = |v: Vertex, touching: bool| {
            if board.color_at(v) == Some(color.opponent()) {
                let h = board.chain_head(v);
                match heads.iter_mut().find(|(x, _)| *x == h) {
                    Some(entry) => entry.1 |= touching,
                    None => heads.push((h, touching)),
                }
            }
        };
        for &s in stones {
            for n in board.neighbours(s) {
                add(n, true);
            }
        }
        let mut seen = vec![false; MAX_VERTICES];
        // Breadth first, so each empty point is reached at its shortest
        // distance in steps from the liberties.
        let mut queue: Vec<(Vertex, usize)> = libs.iter().map(|&l| (l, 0)).collect();
        for &l in &libs {
            seen[l] = true;
        }
        let mut next = 0;
        while let Some(&(x, steps)) = queue.get(next) {
            next += 1;
            for n in board.neighbours(x) {
                if !board.is_empty(n) {
                    add(n, false);
                } else if steps < NEAR_STEPS && !seen[n] {
                    seen[n] = true;
                    queue.push((n, steps + 1));
                }
            }
        }
        let first = |s: Vertex| match color {
            Color::Black => self.lost.black_first[s],
            Color::White => self.lost.white_first[s],
        };
        for (h, touching) in heads {
            if enemy_alive[h] {
                continue;
            }
            let group = group_of(board, h);
            let enemy_libs = group_liberties(board, &group);
            if enemy_libs.iter().all(|l| libs.contains(l)) {
                // Inside its eye space. A chain there short of liberties
                // that the playouts capture in a fifth of the lines, where
                // the group then survives in most, and whose capture leaves
                // room for two eyes, is the group's eye to make, not a
                // killing shape. Each liberty it has is a move the capture
                // takes and the enemy can spend shrinking the space: the
                // room asked for is two points and one for each.
                if touching
                    && enemy_libs.len() <= 2
                    && self.lives_when_lost(stones, &group)
                    && self.capture_frees(color, stones, &group, 2 + enemy_libs.len())
                {
                    return Verdict::Doubtful(Doubt::Eyes);
                }
                continue;
            }
            // A capturing race it might win: no more liberties than this
            // group, and captured in a fifth of the lines where it moves
            // first. It counts only if the win would save the group: taking
            // stones that neither shut it in nor give it a second eye leaves
            // it as dead as before.
            if touching
                && enemy_libs.len() <= libs.len()
                && group.iter().any(|&s| first(s) >= PLAYOUTS_PER_SIDE / 5)
                && self.capture_frees(color, stones, &group, 3)
            {
                return Verdict::Doubtful(Doubt::Race);
            }
            // An enclosing chain that is itself lost in many lines makes the
            // fight unclear. The chain, not its whole group: a group joined
            // through shared liberties can reach across the board to a weak
            // corner that has nothing to do with this fight.
            let shaky = board
                .chain_stones(h)
                .any(|s| self.lost.black_first[s] >= SHAKY || self.lost.white_first[s] >= SHAKY);
            if shaky {
                return Verdict::Doubtful(Doubt::UnclearFight);
            }
            // A group inside the eye space of a larger enemy group lives
            // when that group dies: if the playouts lose the enemy group as
            // a whole in a fifth of the lines and this group survives in
            // most of those lines, taking it off would take that group's
            // life for granted.
            if group.len() >= stones.len() && self.lives_when_lost(stones, &group) {
                return Verdict::Doubtful(Doubt::UnclearFight);
            }
        }
        Verdict::Dead
    }

    /// Whether taking the `enemy` stones off would save the group: with
    /// their points empty, it has room for two eyes (`room` points in its
    /// own regions, see [`Judge::cannot_make_two_eyes`]), or the empty area
    /// around it reaches a friendly stone that is not lost.
    fn capture_frees(
        &self,
        color: Color,
        stones: &[Vertex],
        enemy: &[Vertex],
        room: usize,
    ) -> bool {
        let mut after = self.board.clone();
        for &s in enemy {
            if !after.is_empty(s) {
                after.remove_chain(s);
            }
        }
        let judge = Judge {
            board: &after,
            ..*self
        };
        let libs = group_liberties(&after, stones);
        !judge.cannot_make_two_eyes(color, stones, &libs, room)
            || judge.area_reaches_friend(color, stones, &libs)
    }

    /// Whether the empty area reached from `libs` through empty points
    /// borders a stone of `color` outside the group that is not lost.
    fn area_reaches_friend(&self, color: Color, stones: &[Vertex], libs: &[Vertex]) -> bool {
        area_reaches_friend(self.board, color, stones, libs, self.is_lost)
    }

    /// Whether `enemy` is lost as a whole in at least a fifth of the lines
    /// with one side moving first, and `stones` survive (are not all lost)
    /// in most of the lines where it is.
    fn lives_when_lost(&self, stones: &[Vertex], enemy: &[Vertex]) -> bool {
        let per_side = PLAYOUTS_PER_SIDE as usize;
        let (mut enemy_lost, mut survives) = ([0u32; 2], 0u32);
        for line in 0..self.lost.lines.len() {
            if self.lost.all_lost_in(line, enemy) {
                enemy_lost[line / per_side] += 1;
                if !self.lost.all_lost_in(line, stones) {
                    survives += 1;
                }
            }
        }
        let fifth = PLAYOUTS_PER_SIDE / 5;
        (enemy_lost[0] >= fifth || enemy_lost[1] >= fifth)
            && 2 * survives > enemy_lost[0] + enemy_lost[1]
    }

    /// No two true eyes, and no room for two eyes inside its own walls:
    /// the empty regions bordered by this group alone hold fewer than
    /// `room_for_two` points in all (three, unless the room is only there
    /// once something has been captured) and there are fewer than two of
    /// them.
    fn cannot_make_two_eyes(
        &self,
        color: Color,
        stones: &[Vertex],
        libs: &[Vertex],
        room_for_two: usize,
    ) -> bool {
        let board = self.board;
        let true_eyes = libs
            .iter()
            .filter(|&&l| board.is_true_eye(l, color))
            .count();
        if true_eyes >= 2 {
            return false;
        }
        let mut seen = vec![false; MAX_VERTICES];
        let (mut regions, mut room) = (0, 0);
        for &l in libs {
            if seen[l] {
                continue;
            }
            let mut size = 0;
            let mut own_only = true;
            let mut stack = vec![l];
            seen[l] = true;
            while let Some(x) = stack.pop() {
                size += 1;
                for n in board.neighbours(x) {
                    match board.color_at(n) {
                        Some(c) if c == color => {
                            if !stones.contains(&n) {
                                own_only = false;
                            }
                        }
                        Some(_) => own_only = false,
                        None => {
                            if board.is_empty(n) && !seen[n] {
                                seen[n] = true;
                                stack.push(n);
                            }
                        }
                    }
                }
            }
            if own_only && !(size == 1 && self.is_false_eye(l, color)) {
                regions += 1;
                room += size;
            }
        }
        regions < 2 && room < room_for_two
    }
}

impl Judge<'_> {
    /// Whether the one-point eye shape `v` of `color` is false for good:
    /// enemy stones on its diagonals (one on the edge, two in the centre)
    /// that are not in atari, so the group cannot take them and the enemy
    /// can atari the wall and fill the point.
    fn is_false_eye(&self, v: Vertex, color: Color) -> bool {
        let board = self.board;
        let mut edge = false;
        let mut firm = 0;
        for d in board.diagonals(v) {
            if board.is_border(d) {
                edge = true;
            } else if board.color_at(d) == Some(color.opponent()) && !board.in_atari(d) {
                firm += 1;
            }
        }
        firm >= if edge { 1 } else { 2 }
    }
}

/// The liberties of a group of stones, each once.
fn group_liberties(board: &Board, stones: &[Vertex]) -> Vec<Vertex> {
    let mut libs: Vec<Vertex> = stones
        .iter()
        .flat_map(|&s| board.neighbours(s))
        .filter(|&n| board.is_empty(n))
        .collect();
    libs.sort_unstable();
    libs.dedup();
    libs
}

/// The count if the game ended now, and the groups it keeps on the board
/// only because it is not sure they are dead: a player who wants them off
/// should capture them before passing (seed 000's advice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    pub score: Score,
    pub doubtful: Vec<DoubtfulGroup>,
}

impl Game {
    /// The count if the game ended now, with the doubtful groups it keeps
    /// (one reading of the board for both).
    #[must_use]
    pub fn preview(&self) -> Preview {
        let reading = self.reading();
        Preview {
            score: self.score_with_dead(&reading.dead),
            doubtful: reading.doubtful.clone(),
        }
    }

    /// The automatic proposal of dead stones for the current position.
    /// Under Tromp-Taylor rules (no removal) it is empty.
    #[must_use]
    pub fn dead_stones(&self) -> Vec<Point> {
        self.reading().dead.clone()
    }

    /// The stones the rules' dead-stone calculation takes off, and the
    /// groups it keeps only because it is not sure; none of either under
    /// Tromp-Taylor rules. It is made once per position (see [`Reading`]).
    fn reading(&self) -> &Reading {
        static NONE: Reading = Reading {
            dead: Vec::new(),
            doubtful: Vec::new(),
        };
        match self.rules().dead_stones {
            DeadStoneRule::None => &NONE,
            DeadStoneRule::Automatic | DeadStoneRule::Agreement => self.reading_with(|board| {
                let analysis = analyse(board);
                Reading {
                    dead: analysis.dead,
                    doubtful: analysis.doubtful,
                }
            }),
        }
    }

    /// The count with the automatic dead stones removed: the final score of
    /// a finished game under area rules, and the preview at any time
    /// ("If the game ended now: …").
    #[must_use]
    pub fn score_preview(&self) -> Score {
        self.score_with_dead(&self.reading().dead)
    }

    /// The result of a finished game, counted with the automatic dead
    /// stones when it ended on the board; `None` while it goes on.
    #[must_use]
    pub fn result(&self) -> Option<GameResult> {
        let end = self.end()?;
        Some(
            end.uncounted_result()
                .unwrap_or_else(|| self.score_preview().result()),
        )
    }
}
