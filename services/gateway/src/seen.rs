//! What a viewer is sent of a game: the snapshot with their own colour in
//! it, and the server's time for the client's clock.

use ttakji_proto::v1 as pb;

/// `game` as sent to `viewer`: with their colour in it and the server's
/// time now, for the client's clock offset.
pub(crate) fn seen_by(game: Option<pb::GameSnapshot>, viewer: &str) -> Option<pb::GameSnapshot> {
    game.map(|mut game| {
        let seat = |p: &Option<pb::Player>| p.as_ref().is_some_and(|p| p.user_id == viewer);
        game.your_color = if seat(&game.black) {
            pb::Color::Black as i32
        } else if seat(&game.white) {
            pb::Color::White as i32
        } else {
            pb::Color::Unspecified as i32
        };
        game.server_time_unix_ms = ttakji_platform::now_unix_ms();
        game
    })
}
