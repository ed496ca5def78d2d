//! The engine for the browser and Node: the rules and AI crates behind a
//! plain C ABI of a few calls, spoken in GTP. Bindings only: every rule and
//! every decision is the AI crate's, so the WebAssembly build plays what
//! the native one plays.
//!
//! The host (`web/engine/engine.mjs`) drives it like this:
//! 1. `engine_new(level, seed_hi, seed_lo, playouts, millis)` starts a
//!    session: level 0 easy, 1 normal, 2 hard; a 64-bit seed, so the same
//!    commands give the same moves; a playout budget and a time cap a move
//!    in place of the level's, where not 0.
//! 2. `engine_input(len)` gives a buffer for a command of `len` bytes
//!    (UTF-8, one GTP line), which the host fills;
//! 3. `engine_gtp(len)` answers it and returns the reply's length, which
//!    the host reads at `engine_output()`: `=…` or `?…`, as GTP prints it.
//!    `engine_ended()` says whether the command was `quit`.
//!
//! The host supplies one import, `env.now_ms() -> f64`, a monotonic clock
//! in milliseconds (`performance.now()`), for the time cap: WebAssembly
//! has no clock of its own.

use std::cell::RefCell;
use std::time::Duration;

use baduk::Rules;
use baduk_ai::gtp::Session;
use baduk_ai::{Clock, Level, MctsPlayer, Settings};

/// What one instance holds: the GTP session, the command being passed in
/// and the last reply.
#[derive(Debug, Default)]
struct Engine {
    session: Option<Session>,
    input: Vec<u8>,
    output: String,
    ended: bool,
}

thread_local! {
    // WebAssembly here has one thread: each Worker has an instance of its own.
    static ENGINE: RefCell<Engine> = RefCell::new(Engine::default());
}

#[cfg(target_arch = "wasm32")]
mod host {
    #[link(wasm_import_module = "env")]
    unsafe extern "C" {
        /// The host's monotonic clock in milliseconds.
        safe fn now_ms() -> f64;
    }

    pub fn now() -> std::time::Duration {
        std::time::Duration::from_secs_f64(now_ms().max(0.0) / 1000.0)
    }
}

/// The clock of the search's time cap: the host's in WebAssembly, the
/// system's natively (where this crate is built only for its tests).
fn clock() -> Clock {
    #[cfg(target_arch = "wasm32")]
    {
        Clock::new(host::now)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        Clock::system()
    }
}

/// The settings of a session: the level's, with a fixed seed, and the
/// playouts and time cap given in place of the level's where not 0.
#[must_use]
pub fn settings(level: Level, seed: u64, playouts: u32, millis: u32) -> Settings {
    let mut settings = Settings::for_level(level);
    settings.seed = Some(seed);
    settings.clock = clock();
    if playouts > 0 {
        settings.budget.playouts = playouts;
        // As `ttakji gtp --playouts`: the given budget on every board.
        settings.scale_with_board = false;
    }
    if millis > 0 {
        settings.budget.time = Duration::from_millis(u64::from(millis));
    }
    settings
}

/// Starts a new session (an empty 9×9 board under Ttakji's rules) at
/// `level` (0 easy, 1 normal, 2 hard; anything else is normal).
#[unsafe(no_mangle)]
pub extern "C" fn engine_new(level: u32, seed_hi: u32, seed_lo: u32, playouts: u32, millis: u32) {
    let level = match level {
        0 => Level::Easy,
        2 => Level::Hard,
        _ => Level::Normal,
    };
    let seed = (u64::from(seed_hi) << 32) | u64::from(seed_lo);
    let player = MctsPlayer::with_settings(level, settings(level, seed, playouts, millis));
    ENGINE.with_borrow_mut(|e| {
        e.session = Some(Session::new(Rules::ttakji(), player));
        e.ended = false;
    });
}

/// A buffer of `len` bytes for the next command, valid until the next
/// call into the engine.
#[unsafe(no_mangle)]
pub extern "C" fn engine_input(len: u32) -> *mut u8 {
    ENGINE.with_borrow_mut(|e| {
        e.input.clear();
        e.input.resize(len as usize, 0);
        e.input.as_mut_ptr()
    })
}

/// Answers the command of `len` bytes in the input buffer; returns the
/// reply's length in bytes (0 for a line with no command). Bytes that are
/// not UTF-8 get a GTP error, and no session yet answers as a fresh one.
#[unsafe(no_mangle)]
pub extern "C" fn engine_gtp(len: u32) -> u32 {
    ENGINE.with_borrow_mut(|e| {
        let len = (len as usize).min(e.input.len());
        let reply = match std::str::from_utf8(&e.input[..len]) {
            Ok(line) => e.session.get_or_insert_with(Session::default).respond(line),
            Err(_) => Some(("? the command is not UTF-8\n\n".to_owned(), false)),
        };
        let (text, ended) = reply.unwrap_or_default();
        e.output = text;
        e.ended = ended;
        e.output.len() as u32
    })
}

/// The last reply, `engine_gtp`'s return value bytes long.
#[unsafe(no_mangle)]
pub extern "C" fn engine_output() -> *const u8 {
    ENGINE.with_borrow(|e| e.output.as_ptr())
}

/// 1 if the last command ended the session (`quit`), else 0.
#[unsafe(no_mangle)]
pub extern "C" fn engine_ended() -> u32 {
    ENGINE.with_borrow(|e| u32::from(e.ended))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gtp(line: &str) -> String {
        let len = u32::try_from(line.len()).expect("a short line");
        let buffer = engine_input(len);
        // SAFETY: `engine_input` gave a buffer of exactly `len` bytes,
        // valid until the next call into the engine.
        unsafe { std::ptr::copy_nonoverlapping(line.as_ptr(), buffer, line.len()) };
        let n = engine_gtp(len) as usize;
        // SAFETY: the reply is `n` bytes at `engine_output`, valid until
        // the next call into the engine.
        let bytes = unsafe { std::slice::from_raw_parts(engine_output(), n) };
        String::from_utf8(bytes.to_vec()).expect("replies are UTF-8")
    }

    #[test]
    fn a_session_speaks_gtp_through_the_buffers() {
        engine_new(0, 0, 7, 200, 0);
        assert_eq!(gtp("1 boardsize 9"), "=1\n\n");
        assert_eq!(gtp("play b E5"), "=\n\n");
        assert!(gtp("play w E5").starts_with("? illegal move"));
        assert!(gtp("genmove w").starts_with("= "));
        assert_eq!(gtp("# only a comment"), "");
        assert_eq!(engine_ended(), 0);
        assert_eq!(gtp("quit"), "=\n\n");
        assert_eq!(engine_ended(), 1);
    }

    #[test]
    fn the_same_seed_gives_the_same_move() {
        let mut moves = Vec::new();
        for _ in 0..2 {
            engine_new(1, 3, 4, 500, 0);
            gtp("play b C3");
            moves.push(gtp("genmove w"));
        }
        assert_eq!(moves[0], moves[1]);
    }
}
