//! Outside engines as players: the GTP controller drives `ttakji gtp` as a
//! separate process, and restarts an engine that dies.

use std::time::Duration;

use baduk::{Game, Move, Rules};
use baduk_ai::Decision;
use baduk_ai::gtp_engine::{EngineError, GtpEngine};

fn ttakji_gtp_args() -> Vec<String> {
    ["gtp", "--level", "easy", "--seed", "3", "--playouts", "200"]
        .map(String::from)
        .to_vec()
}

#[test]
fn an_outside_engine_plays_a_game_it_is_kept_in_sync_with() {
    let mut engine = GtpEngine::start(
        env!("CARGO_BIN_EXE_ttakji"),
        &ttakji_gtp_args(),
        Duration::from_secs(30),
    )
    .expect("the engine starts");
    let mut game = Game::new(Rules::ttakji());
    for _ in 0..6 {
        let decision = engine.genmove(&game).expect("the engine answers");
        let color = game.to_move();
        let action = decision.action().expect("no resignation in the opening");
        game.play(Move { color, action })
            .expect("the engine's move is legal");
    }
    // An undo on our side: the engine is brought back to the same position.
    game.undo().expect("undo");
    game.undo().expect("undo");
    let decision = engine.genmove(&game).expect("answers after the undo");
    let action = decision.action().expect("a move");
    assert!(
        game.is_legal(game.to_move(), action),
        "{decision:?} is legal in the rewound game"
    );
    assert_eq!(engine.send("kata-get-rules").expect("rules"), "ttakji");
}

#[test]
fn an_engine_that_dies_is_restarted_and_asked_again() {
    let dir = std::env::temp_dir().join(format!("ttakji-seat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let marker = dir.join("started-once");
    // The first start dies at once; the second becomes a real engine.
    let script = format!(
        "if [ -e '{m}' ]; then exec '{bin}' {args}; else touch '{m}'; exit 1; fi",
        m = marker.display(),
        bin = env!("CARGO_BIN_EXE_ttakji"),
        args = ttakji_gtp_args().join(" ")
    );
    let mut engine = GtpEngine::start("sh", &["-c".to_owned(), script], Duration::from_secs(30))
        .expect("sh starts");
    std::thread::sleep(Duration::from_millis(100));
    let game = Game::new(Rules::ttakji());
    let decision = engine.genmove(&game).expect("the restarted engine answers");
    assert!(matches!(decision, Decision::Play(_)), "{decision:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_engine_or_a_silent_one_is_a_clear_error() {
    let missing = GtpEngine::start("/nonexistent/engine", &[], Duration::from_secs(1))
        .expect_err("no such program");
    assert!(matches!(missing, EngineError::Start { .. }), "{missing}");
    let mut silent = GtpEngine::start("sleep", &["30".to_owned()], Duration::from_millis(200))
        .expect("sleep starts");
    let err = silent
        .send("protocol_version")
        .expect_err("sleep never answers");
    assert!(matches!(err, EngineError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("did not answer"), "{err}");
}
