//! The stones each move of a game took off.

use baduk::Point;

/// The stones each move took off, kept flat so that copying a game for a
/// step costs two allocations whatever its length.
#[derive(Debug, Clone, Default)]
pub(super) struct Captures {
    points: Vec<Point>,
    /// Where each move's stones end in `points`.
    ends: Vec<usize>,
}

impl Captures {
    pub(super) fn push(&mut self, captured: &[Point]) {
        self.points.extend_from_slice(captured);
        self.ends.push(self.points.len());
    }

    /// Gives back the room a push left over.
    pub(super) fn shrink(&mut self) {
        self.points.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    pub(super) fn pop(&mut self) {
        self.ends.pop();
        self.points.truncate(self.ends.last().copied().unwrap_or(0));
    }

    /// The stones move `number` (from 1) took off.
    pub(super) fn of(&self, number: usize) -> &[Point] {
        let end = self.ends.get(number - 1).copied().unwrap_or(0);
        let start = if number >= 2 {
            self.ends.get(number - 2).copied().unwrap_or(0)
        } else {
            0
        };
        self.points.get(start..end).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use baduk::Point;

    #[test]
    fn each_move_keeps_its_own_captures_through_an_undo() {
        let mut c = super::Captures::default();
        c.push(&[]);
        c.push(&[Point::new(1, 1), Point::new(1, 2)]);
        c.push(&[Point::new(3, 3)]);
        assert!(c.of(1).is_empty());
        assert_eq!(c.of(2), [Point::new(1, 1), Point::new(1, 2)]);
        assert_eq!(c.of(3), [Point::new(3, 3)]);
        c.pop();
        c.push(&[]);
        assert!(c.of(3).is_empty(), "the undone move's stones are gone");
        assert_eq!(c.of(2).len(), 2);
    }
}
