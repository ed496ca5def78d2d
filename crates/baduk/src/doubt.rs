//! What the count is not sure of: the groups it keeps on the board
//! although the playouts lose them, and the reading of a position that a
//! game keeps until its board changes. Apart from [`crate::life`], which
//! makes them, so the game can keep a reading without depending on how it
//! is made.

use crate::point::Point;

/// A group lost in most playouts that the count keeps all the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoubtfulGroup {
    /// Its stones, in board order.
    pub stones: Vec<Point>,
    pub reason: Doubt,
}

/// Why a group the playouts lose is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubt {
    /// It shares a liberty in seki that no chain beside it can come out of
    /// first.
    Seki,
    /// It has two true eyes, or room for two inside its own walls, or
    /// would have once it took an enemy chain short of liberties inside
    /// them that the playouts take in a fifth of the lines.
    Eyes,
    /// A living friendly stone is two steps away, or the empty area it
    /// can reach, however far, holds a friendly stone that stays on the
    /// board: it is not shut in.
    Escape,
    /// A touching enemy group has no more liberties, is captured in a
    /// fifth of the lines where this group moves first, and taking it off
    /// would give this group room for two eyes or a way to a friend.
    Race,
    /// An enclosing enemy chain is itself lost in many lines, or an
    /// enclosing group is at least as large, lost as a whole in a fifth of
    /// the lines and this group survives in most of those: it lives if
    /// that group dies. Also every group of a colour the reading would
    /// otherwise take off whole, leaving that player no stone on the board.
    UnclearFight,
}

/// What the count reads of a position: the stones it takes off and the
/// groups it keeps only because it is not sure. A game keeps it until its
/// board changes, so a game ended by two passes reads its last position
/// once, for the count shown after the first pass and the one after the
/// second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reading {
    pub(crate) dead: Vec<Point>,
    pub(crate) doubtful: Vec<DoubtfulGroup>,
}
