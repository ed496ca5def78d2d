//! A stream of changes replays to the same games as a stream of whole
//! snapshots: random games under the online rules (moves, passes, undos,
//! draw offers, counts of territory games, clocks running out, the
//! computer standing in, resignations), each event rendered as the
//! authority stores and sends it, then sent as a watcher that asked for
//! changes gets it (`ttakji_proto::changes`) and applied as a client
//! applies it.

use baduk::{BoardSize, Rules};
use baduk_ai::{Decision, Level};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use ttakji_authority::game::{CountAction, OnlineGame, Refusal, Requested, Step};
use ttakji_authority::records::{AiEngine, GameMeta, Seat};
use ttakji_authority::view;
use ttakji_proto::GameId;
use ttakji_proto::changes;
use ttakji_proto::v1 as pb;

use prost::Message as _;

const START: i64 = 1_000_000;
/// The stand-in's grace period, short enough to come before the clock's.
const GRACE: i64 = 5_000;

fn person(id: &str) -> Seat {
    Seat {
        user_id: Some(id.to_owned()),
        name: id.to_owned(),
        ai: None,
    }
}

/// A game under the preset `rules` picks: between `b` and `w` on a
/// 30-second clock, at a table where the computer stands in for a player
/// who is away, or `b` against the computer with no clock.
fn table(rules: u8, size: u8, opponent: u8) -> OnlineGame {
    let rules = match rules % 3 {
        0 => Rules::ttakji(),
        1 => Rules::japanese(),
        _ => Rules::named("chinese").expect("a preset"),
    };
    let size = match size % 3 {
        0 | 1 => BoardSize::NINE,
        _ => BoardSize::new(13).expect("a size"),
    };
    let computer = Seat {
        user_id: None,
        name: "Easy AI".to_owned(),
        ai: Some(Level::Easy),
    };
    let meta = GameMeta {
        id: GameId::parse("g1").expect("an id"),
        rules: rules.with_board_size(size),
        black: person("b"),
        white: if opponent % 3 == 2 {
            computer
        } else {
            person("w")
        },
        seconds_per_move: if opponent % 3 == 2 { 0 } else { 30 },
        created_at: START,
        ranked: false,
        keep_colors: false,
        stand_in: opponent % 3 == 1,
        ai_engine: AiEngine::Server,
        ladder_rating: 0,
    };
    OnlineGame::new(meta).0
}

fn user(color: baduk::Color) -> &'static str {
    match color {
        baduk::Color::Black => "b",
        baduk::Color::White => "w",
    }
}

/// One random action on the game at time `now`; `None` when there is
/// nothing to do or the rules refuse it.
fn act(game: &OnlineGame, kind: u8, arg: u16, now: i64) -> Option<Step> {
    let refused = |r: Result<Step, Refusal>| r.ok();
    let g = game.game();
    let to_move = g.to_move();
    let number = g.move_number() as u32 + 1;
    let either = if arg.is_multiple_of(2) { "b" } else { "w" };
    let pick =
        |points: &[baduk::Point]| points.get(usize::from(arg) % points.len().max(1)).copied();
    // Past move 30 passes come often, so games reach their counts.
    let kind = match kind % 20 {
        0..=3 if number > 30 => 9,
        k => k,
    };
    match kind {
        0..=8 => {
            if let Some((color, _)) = game.computer_to_move() {
                let decision = pick(&g.legal_points(color)).map_or(Decision::Pass, Decision::Play);
                return game.computer_move(game.generation(), decision, now);
            }
            let p = pick(&g.legal_points(to_move))?;
            let place = Requested::Place {
                column: u32::from(p.col()),
                row: u32::from(p.row()),
            };
            refused(game.submit(user(to_move), number, place, now))
        }
        9 | 10 => refused(game.submit(user(to_move), number, Requested::Pass, now)),
        11 => refused(game.undo("b", number - 1, now)),
        12 => refused(game.offer_draw(either, now)),
        13 => refused(game.answer_draw(either, arg.is_multiple_of(3), now)),
        14 | 15 => {
            let board = g.board();
            let stones: Vec<baduk::Point> = g
                .rules()
                .board_size
                .all_points()
                .filter(|&p| board.get(p).color().is_some())
                .collect();
            let p = pick(&stones)?;
            let mark = CountAction::Mark {
                column: u32::from(p.col()),
                row: u32::from(p.row()),
                dead: !arg.is_multiple_of(3),
            };
            refused(game.settle_count(either, mark, now))
        }
        16 => {
            let version = game.counting()?.version();
            refused(game.settle_count(either, CountAction::Confirm { version }, now))
        }
        17 => {
            let resume = CountAction::Resume {
                after_move: number - 1,
            };
            refused(game.settle_count(either, resume, now))
        }
        18 => match arg % 3 {
            0 => refused(game.presence(either, arg.is_multiple_of(4), now)),
            1 => game.seat_stand_ins(now, GRACE),
            _ => game.time_out(now),
        },
        _ => arg
            .is_multiple_of(4)
            .then(|| refused(game.submit(either, number, Requested::Resign, now)))
            .flatten(),
    }
}

/// What a watcher that asked for changes is sent, and what it rebuilds.
struct Watcher {
    /// The game as the stream sent it last (kept by the gateway).
    shown: Option<pb::GameSnapshot>,
    /// The game as the client has rebuilt it from changes.
    rebuilt: Option<pb::GameSnapshot>,
}

impl Watcher {
    /// Receives the event whose snapshot is `whole` and checks that the
    /// change sent in its place rebuilds it exactly.
    fn receive(&mut self, event: &pb::GameEvent) -> Result<(), TestCaseError> {
        let whole = event
            .snapshot
            .clone()
            .expect("every event carries the game");
        let Some(shown) = self.shown.replace(whole.clone()) else {
            self.rebuilt = Some(whole);
            return Ok(());
        };
        let change = changes::change(&shown, &whole);
        let rebuilt = self.rebuilt.as_mut().expect("the first event was whole");
        changes::apply(rebuilt, &change).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(
            &*rebuilt,
            &whole,
            "event {} rebuilt from its change",
            event.seq
        );
        if let Some(pb::game_event::Kind::MovePlayed(m)) = &event.kind {
            // A move changes its own point and the stones it took, and
            // sends a fraction of the game.
            let m = m.r#move.as_ref().expect("the move");
            let stones = usize::from(m.point.is_some()) + m.captured.len();
            prop_assert_eq!(
                change.stones.len(),
                stones,
                "stones changed by move {}",
                m.number
            );
            // A count (shown after a pass, opened or ending the game) is
            // news in itself.
            const COUNTS: [u32; 3] = [16, 18, 30];
            if !change.fields.iter().any(|f| COUNTS.contains(f)) {
                prop_assert!(
                    change.encoded_len() * 2 < whole.encoded_len(),
                    "move {}'s change is {} bytes, the game {}",
                    m.number,
                    change.encoded_len(),
                    whole.encoded_len()
                );
            }
        }
        Ok(())
    }
}

proptest! {
    // From a fixed seed unless PROPTEST_RNG_SEED or PROPTEST_CASES ask for
    // a longer hunt; no regression files are written.
    #![proptest_config(ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            ProptestConfig::default().cases
        } else {
            96
        },
        rng_seed: if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            ProptestConfig::default().rng_seed
        } else {
            RngSeed::Fixed(0x6368_616e_6765_7321)
        },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn changes_replay_to_the_same_games_as_snapshots(
        rules in any::<u8>(),
        size in any::<u8>(),
        opponent in any::<u8>(),
        actions in prop::collection::vec((any::<u8>(), any::<u16>(), 0i64..12_000), 1..200),
    ) {
        let mut game = table(rules, size, opponent);
        let mut watcher = Watcher { shown: None, rebuilt: None };
        let mut now = START;
        // Event 1 (the game began) is the stream's first: whole.
        let first = pb::GameEvent {
            seq: 1,
            snapshot: Some(pb::GameSnapshot { event_seq: 1, ..view::snapshot(&game, false) }),
            ..pb::GameEvent::default()
        };
        watcher.receive(&first)?;
        for (kind, arg, dt) in actions {
            now += dt;
            let Some(step) = act(&game, kind, arg, now) else { continue };
            for event in view::step_events(&game, &step) {
                watcher.receive(&event)?;
            }
            game.commit(step);
            if !game.is_playing() {
                break;
            }
        }
    }
}
