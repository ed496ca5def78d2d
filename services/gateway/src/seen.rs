//! What a viewer is sent of a game: the snapshot with their own colour in
//! it, and the server's time for the client's clock.

use ttakji_proto::v1 as pb;

/// `GameSnapshot.server_time_unix_ms`, as a change names it.
const SERVER_TIME_FIELD: u32 = 25;

/// `viewer`'s colour in `game`; unspecified for someone who only watches.
pub(crate) fn color_of(game: &pb::GameSnapshot, viewer: &str) -> i32 {
    let seat = |p: &Option<pb::Player>| p.as_ref().is_some_and(|p| p.user_id == viewer);
    if seat(&game.black) {
        pb::Color::Black as i32
    } else if seat(&game.white) {
        pb::Color::White as i32
    } else {
        pb::Color::Unspecified as i32
    }
}

/// `game` as sent to `viewer`: with their colour in it and the server's
/// time now, for the client's clock offset.
pub(crate) fn seen_by(game: Option<pb::GameSnapshot>, viewer: &str) -> Option<pb::GameSnapshot> {
    game.map(|mut game| {
        game.your_color = color_of(&game, viewer);
        game.server_time_unix_ms = ttakji_platform::now_unix_ms();
        game
    })
}

/// `change` as sent: with the server's time now among its fields, as a
/// whole game carries it.
pub(crate) fn stamp(change: &mut pb::GameChange) {
    if let Some(at) = change.fields.iter().position(|&f| f >= SERVER_TIME_FIELD) {
        if change.fields[at] != SERVER_TIME_FIELD {
            change.fields.insert(at, SERVER_TIME_FIELD);
        }
    } else {
        change.fields.push(SERVER_TIME_FIELD);
    }
    change
        .values
        .get_or_insert_with(pb::GameSnapshot::default)
        .server_time_unix_ms = ttakji_platform::now_unix_ms();
}
