//! Any text given to the SGF reader gives a record or an error, never a
//! panic; a record that replays writes out and reads back as the same game.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(record) = baduk::sgf::parse(&text) else {
        return;
    };
    if let Ok(game) = record.to_game() {
        let again = baduk::sgf::parse(&record.to_sgf()).expect("our own SGF reads back");
        assert_eq!(again, record);
        let replayed = again.to_game().expect("our own SGF replays");
        assert_eq!(replayed.board(), game.board());
    }
});
