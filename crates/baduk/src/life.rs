//! Dead stones: a fixed, conservative judgement of which groups are clearly dead.
//!
//! A wrong removal is the worst error a count can make, so a group is taken
//! off only when every test below agrees; any doubt leaves it on the board.
//!
//! 1. **Benson's pass-alive analysis** (certain). Chains that are pass-alive
//!    are alive. Stones of the other colour in a region enclosed by
//!    pass-alive chains, where every empty point of the region is a liberty
//!    of those chains, can never make an eye or a seki and are dead.
//! 2. **Playouts** (reading). From the position, [`PLAYOUTS_PER_SIDE`]
//!    playouts with Black moving first and as many with White first, with a
//!    policy that captures, escapes atari, never fills its own eye and avoids
//!    big self-ataris. A group is a candidate only if the opponent owns its
//!    points at the end in at least [`DEAD_SHARE`] of the playouts *for each
//!    side moving first*.
//! 3. **Tactics** (veto). Stones are judged as groups: all the stones of
//!    one colour that reach each other through empty points, so a group that
//!    can escape to a living friend is judged with it and kept. A candidate
//!    group is kept if it already has
//!    two true eyes, if any enemy chain around it has no more liberties
//!    than it has (a capturing race it might win), or if it touches a seki
//!    point (a shared liberty neither side can fill).
//!
//! Everything is deterministic: SplitMix64 with the fixed seed
//! [`DEAD_STONE_SEED`], one thread, a fixed number of playouts, so the same
//! position gives the same verdict on every machine and every run.

use crate::board::{Board, MAX_VERTICES, SplitMix64, Vertex};
use crate::game::Game;
use crate::playout::policy_playout;
use crate::point::{Color, Point};
use crate::rules::DeadStoneRule;
use crate::score::{GameResult, Score, seki_chains};

/// The seed of the dead-stone playouts. Changing it changes verdicts.
pub const DEAD_STONE_SEED: u64 = 0x6465_6164_2d73_746e; // "dead-stn"

/// Playouts with each side moving first.
pub const PLAYOUTS_PER_SIDE: u32 = 200;

/// Share of playouts (per side to move first) in which a group must be lost
/// to be a candidate for removal, as a fraction with denominator 100.
pub const DEAD_SHARE_PERCENT: u32 = 95;

/// [`DEAD_SHARE_PERCENT`] as a fraction, for documentation.
pub const DEAD_SHARE: f64 = DEAD_SHARE_PERCENT as f64 / 100.0;

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
}

/// Judges which stones on `board` are clearly dead. See the module docs.
#[must_use]
pub fn analyse(board: &Board) -> LifeAndDeath {
    let alive_mask = [pass_alive(board, Color::Black), pass_alive(board, Color::White)];
    let mut dead = vec![false; MAX_VERTICES];

    // 1. Benson: stones inside regions enclosed by pass-alive chains whose
    //    empty points all touch those chains.
    for color in [Color::Black, Color::White] {
        let mask = &alive_mask[color.index()];
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

    // 3. Groups: the chains of one colour that can reach each other through
    //    empty points and their own stones. Decide each group as a whole.
    let seki = seki_chains(board);
    let mut grouped = vec![false; MAX_VERTICES];
    for v in board.vertices() {
        let Some(color) = board.color_at(v) else {
            continue;
        };
        if grouped[v] || dead[v] {
            continue;
        }
        let area = reach(board, v, color);
        let stones: Vec<Vertex> = area.iter().copied().filter(|&x| board.color_at(x) == Some(color)).collect();
        for &s in &stones {
            grouped[s] = true;
        }
        if group_is_dead(board, color, &area, &stones, &lost, &alive_mask, &seki) {
            for &s in &stones {
                dead[s] = true;
            }
        }
    }

    let to_points = |mask: &dyn Fn(Vertex) -> bool| -> Vec<Point> {
        board.vertices().filter(|&v| mask(v)).map(|v| board.point(v)).collect()
    };
    LifeAndDeath {
        dead: to_points(&|v| dead[v] && board.color_at(v).is_some()),
        pass_alive: to_points(&|v| alive_mask[0][v] || alive_mask[1][v]),
    }
}

/// For each vertex, in how many playouts (with Black first, with White first)
/// the stone there was lost: the point ended owned by the other colour.
#[derive(Debug)]
pub struct Losses {
    /// Losses with Black moving first, per vertex.
    pub black_first: Vec<u32>,
    /// Losses with White moving first, per vertex.
    pub white_first: Vec<u32>,
}

/// Playout losses of every stone (for diagnostics).
pub fn playout_losses(board: &Board) -> Losses {
    let mut rng = SplitMix64::new(DEAD_STONE_SEED);
    let mut losses = Losses {
        black_first: vec![0; MAX_VERTICES],
        white_first: vec![0; MAX_VERTICES],
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
            for v in board.vertices() {
                if let Some(c) = board.color_at(v) {
                    if owner_at_end(&b, v) == Some(c.opponent()) {
                        tally[v] += 1;
                    }
                }
            }
        }
    }
    losses
}

/// Who owns `v` at the end of a playout: its stone, or the colour of all
/// its neighbours if it is empty and they agree.
fn owner_at_end(board: &Board, v: Vertex) -> Option<Color> {
    if let Some(c) = board.color_at(v) {
        return Some(c);
    }
    let mut owner = None;
    for n in board.neighbours(v) {
        match (board.color_at(n), owner) {
            (None, _) => {}
            (Some(c), None) => owner = Some(c),
            (Some(c), Some(o)) if c != o => return None,
            _ => {}
        }
    }
    owner
}

/// Points reachable from `v` through empty points and `color` stones.
fn reach(board: &Board, v: Vertex, color: Color) -> Vec<Vertex> {
    let mut seen = vec![false; MAX_VERTICES];
    let mut out = Vec::new();
    let mut stack = vec![v];
    seen[v] = true;
    while let Some(x) = stack.pop() {
        out.push(x);
        for n in board.neighbours(x) {
            if !seen[n] && !board.is_border(n) && board.color_at(n) != Some(color.opponent()) {
                seen[n] = true;
                stack.push(n);
            }
        }
    }
    out
}

fn group_is_dead(
    board: &Board,
    color: Color,
    area: &[Vertex],
    stones: &[Vertex],
    lost: &Losses,
    alive_mask: &[Vec<bool>; 2],
    seki: &[Vertex],
) -> bool {
    let threshold = PLAYOUTS_PER_SIDE * DEAD_SHARE_PERCENT / 100;
    // Pass-alive stones are alive, whatever the playouts say.
    if stones.iter().any(|&s| alive_mask[color.index()][s]) {
        return false;
    }
    // Lost in nearly every playout, with either side moving first.
    if !stones
        .iter()
        .all(|&s| lost.black_first[s] >= threshold && lost.white_first[s] >= threshold)
    {
        return false;
    }
    // Seki stays alive.
    if stones.iter().any(|&s| seki.contains(&board.chain_head(s))) {
        return false;
    }
    // Two true eyes: alive.
    let eyes = area
        .iter()
        .filter(|&&p| board.is_empty(p) && board.is_true_eye(p, color))
        .count();
    if eyes >= 2 {
        return false;
    }
    // A capturing race it might win: an enemy chain around it with no more
    // liberties than the group's weakest chain, and not pass-alive.
    let mut min_libs = usize::MAX;
    let mut heads: Vec<Vertex> = Vec::new();
    for &s in stones {
        let h = board.chain_head(s);
        if !heads.contains(&h) {
            heads.push(h);
            min_libs = min_libs.min(board.liberties(h).len());
        }
    }
    let mut enemies: Vec<Vertex> = Vec::new();
    for &s in stones {
        for n in board.neighbours(s) {
            if board.color_at(n) == Some(color.opponent()) {
                let h = board.chain_head(n);
                if !enemies.contains(&h) {
                    enemies.push(h);
                }
            }
        }
    }
    let enemy_mask = &alive_mask[color.opponent().index()];
    if enemies
        .iter()
        .any(|&h| !enemy_mask[h] && board.liberties(h).len() <= min_libs)
    {
        return false;
    }
    // The surrounding enemy stones must themselves be judged alive: an
    // enemy chain that is also lost in the playouts makes the fight unclear.
    let enemy_lost = |h: Vertex| {
        board
            .chain_stones(h)
            .any(|s| lost.black_first[s] >= threshold / 2 || lost.white_first[s] >= threshold / 2)
    };
    if enemies.iter().any(|&h| !enemy_mask[h] && enemy_lost(h)) {
        return false;
    }
    true
}

impl Game {
    /// The automatic proposal of dead stones for the current position.
    /// Under Tromp-Taylor rules (no removal) it is empty.
    #[must_use]
    pub fn dead_stones(&self) -> Vec<Point> {
        match self.rules().dead_stones {
            DeadStoneRule::None => Vec::new(),
            DeadStoneRule::Automatic | DeadStoneRule::Agreement => analyse(self.board()).dead,
        }
    }

    /// The count with the automatic dead stones removed: the final score of
    /// a finished game under area rules, and the preview at any time
    /// ("If the game ended now: …").
    #[must_use]
    pub fn score_preview(&self) -> Score {
        self.score_with_dead(&self.dead_stones())
    }

    /// The result of a finished game, counted with the automatic dead
    /// stones when it ended on the board; `None` while it goes on.
    #[must_use]
    pub fn result(&self) -> Option<GameResult> {
        let end = self.end()?;
        Some(end.uncounted_result().unwrap_or_else(|| self.score_preview().result()))
    }
}
