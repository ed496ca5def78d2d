//! What an event changed in a game (`GameChange`), for streams that asked
//! for changes instead of whole snapshots (`WatchGameRequest.changes`):
//! made by comparing the snapshot a stream sent last with the next one, and
//! applied by clients to the game they hold.

use std::fmt;

use crate::v1::{GameChange, GameSnapshot, Point, StoneChange};

/// Why a change cannot be applied to a snapshot: it was made against
/// another game, or by a newer contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeError {
    /// A stone off the snapshot's board.
    OffTheBoard { column: u32, row: u32 },
    /// A field number the snapshot does not have.
    UnknownField(u32),
}

impl fmt::Display for ChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeError::OffTheBoard { column, row } => {
                write!(
                    f,
                    "the change puts a stone off the board, at column {column}, row {row}"
                )
            }
            ChangeError::UnknownField(number) => {
                write!(
                    f,
                    "the change names field {number}, which a game does not have"
                )
            }
        }
    }
}

impl std::error::Error for ChangeError {}

/// Lists the snapshot's fields once, with their numbers, for making a
/// change and for applying one (the stones are compared point by point
/// instead).
macro_rules! compared_fields {
    ($($field:ident = $number:literal),* $(,)?) => {
        /// The snapshot's fields a change may name, by name and number: all
        /// but `stones`.
        pub const FIELDS: &[(&str, u32)] = &[$((stringify!($field), $number)),*];

        /// Names every field that differs in `change` and copies its new
        /// value from `after`.
        #[allow(clippy::float_cmp)] // komi is a multiple of 0.5: exact.
        fn compare(before: &GameSnapshot, after: &GameSnapshot, change: &mut GameChange) {
            let values = change.values.get_or_insert_with(GameSnapshot::default);
            $(
                if before.$field != after.$field {
                    change.fields.push($number);
                    values.$field = after.$field.clone();
                }
            )*
        }

        /// Copies field `number` from `values` into `snapshot`; false for
        /// a number the snapshot does not have.
        fn copy(snapshot: &mut GameSnapshot, values: &GameSnapshot, number: u32) -> bool {
            match number {
                $($number => snapshot.$field = values.$field.clone(),)*
                _ => return false,
            }
            true
        }
    };
}

compared_fields!(
    game_id = 1,
    board_size = 2,
    ruleset = 3,
    komi = 4,
    black = 5,
    white = 6,
    status = 7,
    to_move = 9,
    move_count = 10,
    black_captures = 11,
    white_captures = 12,
    last_move = 13,
    ko_forbidden = 14,
    passes_in_a_row = 15,
    result = 16,
    clock = 17,
    score_preview = 18,
    event_seq = 19,
    undo_allowed = 20,
    draw_offered_by = 21,
    ranked = 22,
    finished_at_unix_ms = 23,
    your_color = 24,
    server_time_unix_ms = 25,
    in_atari = 26,
    scoring = 27,
    keep_colors_on_rematch = 28,
    seconds_per_move = 29,
    counting = 30,
    computer_stands_in = 31,
);

/// What turns `before` into `after`: the points whose stones differ, and
/// the other fields that differ with their new values.
#[must_use]
pub fn change(before: &GameSnapshot, after: &GameSnapshot) -> GameChange {
    let mut change = GameChange::default();
    let size = after.board_size.max(1);
    for (i, &color) in after.stones.iter().enumerate() {
        if before.stones.get(i) != Some(&color) {
            // An index of a board of at most 19×19 fits u32.
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            change.stones.push(StoneChange {
                point: Some(Point {
                    column: i % size,
                    row: i / size,
                }),
                color,
            });
        }
    }
    compare(before, after, &mut change);
    change
}

/// Applies `change` to `snapshot`, which becomes the game after the event.
///
/// # Errors
/// When the change puts a stone off the board or names a field the
/// snapshot does not have; `snapshot` is then unchanged.
pub fn apply(snapshot: &mut GameSnapshot, change: &GameChange) -> Result<(), ChangeError> {
    let unset = GameSnapshot::default();
    let values = change.values.as_ref().unwrap_or(&unset);
    let mut next = snapshot.clone();
    for &number in &change.fields {
        if !copy(&mut next, values, number) {
            return Err(ChangeError::UnknownField(number));
        }
    }
    let size = next.board_size;
    let points = (size as usize) * (size as usize);
    next.stones.resize(points, 0);
    for stone in &change.stones {
        let p = stone.point.unwrap_or_default();
        if p.column >= size || p.row >= size {
            return Err(ChangeError::OffTheBoard {
                column: p.column,
                row: p.row,
            });
        }
        next.stones[(p.row * size + p.column) as usize] = stone.color;
    }
    *snapshot = next;
    Ok(())
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;
    use crate::v1::{Clock, Color, Move};

    fn empty(size: u32) -> GameSnapshot {
        GameSnapshot {
            game_id: "g1".to_owned(),
            board_size: size,
            stones: vec![0; (size * size) as usize],
            to_move: Color::Black as i32,
            clock: Some(Clock {
                seconds_per_move: 30,
                deadline_unix_ms: 1_000,
            }),
            ..GameSnapshot::default()
        }
    }

    #[test]
    fn a_move_changes_its_stone_and_the_fields_it_moves_and_nothing_else() {
        let before = empty(9);
        let mut after = before.clone();
        // D5 is column 3, row 4.
        after.stones[4 * 9 + 3] = Color::Black as i32;
        after.to_move = Color::White as i32;
        after.move_count = 1;
        after.last_move = Some(Move {
            number: 1,
            color: Color::Black as i32,
            point: Some(Point { column: 3, row: 4 }),
            ..Move::default()
        });
        after.clock = Some(Clock {
            seconds_per_move: 30,
            deadline_unix_ms: 31_000,
        });
        let change = change(&before, &after);
        assert_eq!(
            change.stones,
            [StoneChange {
                point: Some(Point { column: 3, row: 4 }),
                color: Color::Black as i32,
            }]
        );
        assert_eq!(change.fields, [9, 10, 13, 17]);
        let mut replayed = before.clone();
        apply(&mut replayed, &change).expect("applies");
        assert_eq!(replayed, after);
        assert!(
            change.encoded_len() * 2 < after.encoded_len(),
            "a move's change ({} bytes) is a fraction of the snapshot ({})",
            change.encoded_len(),
            after.encoded_len()
        );
    }

    #[test]
    fn a_field_named_but_unset_goes_back_to_its_default() {
        let before = empty(9);
        let after = GameSnapshot {
            clock: None,
            to_move: Color::Unspecified as i32,
            ..before.clone()
        };
        let change = change(&before, &after);
        assert_eq!(change.fields, [9, 17]);
        let mut replayed = before;
        apply(&mut replayed, &change).expect("applies");
        assert_eq!(replayed, after);
    }

    #[test]
    fn a_change_that_does_not_fit_the_game_is_refused_and_changes_nothing() {
        let before = empty(9);
        let off = GameChange {
            stones: vec![StoneChange {
                point: Some(Point { column: 9, row: 0 }),
                color: Color::White as i32,
            }],
            fields: vec![10],
            values: Some(GameSnapshot {
                move_count: 5,
                ..GameSnapshot::default()
            }),
        };
        let mut snapshot = before.clone();
        assert_eq!(
            apply(&mut snapshot, &off),
            Err(ChangeError::OffTheBoard { column: 9, row: 0 })
        );
        assert_eq!(snapshot, before);
        let unknown = GameChange {
            fields: vec![10, 8],
            ..off
        };
        assert_eq!(
            apply(&mut snapshot, &unknown),
            Err(ChangeError::UnknownField(8))
        );
        assert_eq!(snapshot, before);
    }

    /// A field added to the snapshot must be added to `FIELDS` too, or a
    /// change would never carry it and a client's game would go stale.
    #[test]
    fn every_field_of_the_snapshot_but_its_stones_is_compared() {
        let set = prost_types::FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET)
            .expect("the contracts' descriptors");
        let snapshot = set
            .file
            .iter()
            .filter(|f| f.package() == "ttakji.v1")
            .flat_map(|f| &f.message_type)
            .find(|m| m.name() == "GameSnapshot")
            .expect("GameSnapshot is described");
        let mut described: Vec<(&str, u32)> = snapshot
            .field
            .iter()
            .map(|f| (f.name(), u32::try_from(f.number()).expect("a field number")))
            .filter(|&(n, _)| n != "stones")
            .collect();
        let mut compared = FIELDS.to_vec();
        described.sort_unstable();
        compared.sort_unstable();
        assert_eq!(compared, described);
    }
}
