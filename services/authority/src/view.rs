//! The game as clients see it: snapshots, events and counts in the wire's
//! terms, made from the game's state.

use baduk::{Color, Game, GameResult, Score};
use ttakji_proto::v1 as pb;

use crate::game::{Event, EventKind, OnlineGame, PlayedMove, Step};
use crate::records::{AiEngine, Seat};

#[must_use]
pub fn ai_engine_to_pb(engine: AiEngine) -> pb::AiEngine {
    match engine {
        AiEngine::Server => pb::AiEngine::Server,
        AiEngine::Client => pb::AiEngine::Client,
    }
}

/// Komi as the wire carries it: points, a multiple of 0.5.
#[must_use]
pub fn komi_points(half: i32) -> f64 {
    f64::from(half) / 2.0
}

/// A count as the wire carries it.
#[must_use]
pub fn count_to_pb(score: &Score) -> pb::Count {
    let (winner, margin_half) = match score.result() {
        GameResult::Counted {
            winner,
            margin_half,
        } => (winner, margin_half),
        _ => (None, 0),
    };
    pb::Count {
        black_points: score.black,
        white_points: score.white,
        komi: komi_points(score.komi.half_points()),
        dead_stones: score.dead.iter().copied().map(pb::Point::from).collect(),
        winner: winner.map_or(pb::Color::Unspecified, pb::Color::from) as i32,
        margin: f64::from(margin_half) / 2.0,
        summary: score.preview(),
        uncertain: Vec::new(),
        black_territory: territory_of(score, Color::Black),
        white_territory: territory_of(score, Color::White),
    }
}

/// The points a count gives `color` as territory, in board order.
fn territory_of(score: &Score, color: Color) -> Vec<pb::Point> {
    score
        .territory
        .iter()
        .filter(|&&(_, c)| c == color)
        .map(|&(p, _)| pb::Point::from(p))
        .collect()
}

/// A count "if the game ended now" as the wire carries it, with the groups
/// it keeps only because it is not sure.
#[must_use]
pub fn preview_to_pb(preview: &baduk::Preview) -> pb::Count {
    let reason = |d: baduk::Doubt| match d {
        baduk::Doubt::Seki => pb::UncertainReason::Seki,
        baduk::Doubt::Eyes => pb::UncertainReason::Eyes,
        baduk::Doubt::Escape => pb::UncertainReason::Escape,
        baduk::Doubt::Race => pb::UncertainReason::Race,
        baduk::Doubt::UnclearFight => pb::UncertainReason::UnclearFight,
    };
    pb::Count {
        uncertain: preview
            .doubtful
            .iter()
            .map(|g| pb::UncertainGroup {
                stones: g.stones.iter().copied().map(pb::Point::from).collect(),
                reason: reason(g.reason) as i32,
            })
            .collect(),
        ..count_to_pb(&preview.score)
    }
}

/// The count as it stands: with the players' marks while a territory game
/// is counted, else "if the game ended now".
#[must_use]
pub fn count_now_pb(live: &OnlineGame) -> pb::Count {
    match live.counting() {
        Some(c) => count_to_pb(&live.game().score_with_dead(c.dead())),
        None => preview_to_pb(&live.game().preview()),
    }
}

/// The stones on the board, row by row from the bottom-left.
#[must_use]
pub fn stones(game: &Game) -> Vec<i32> {
    let size = game.rules().board_size;
    size.all_points()
        .map(|p| match game.board().get(p).color() {
            Some(c) => pb::Color::from(c) as i32,
            None => pb::Color::Unspecified as i32,
        })
        .collect()
}

fn played_to_pb(mv: &PlayedMove) -> pb::Move {
    pb::Move {
        number: mv.number as u32,
        color: pb::Color::from(mv.color) as i32,
        point: mv.point.map(pb::Point::from),
        captured: mv.captured.iter().copied().map(pb::Point::from).collect(),
        by_stand_in: mv.by_stand_in,
    }
}

/// Move `number` (from 1) of `game`.
#[must_use]
pub fn move_pb(game: &OnlineGame, number: usize) -> pb::Move {
    played_to_pb(&game.played_move(number))
}

fn result_pb(game: &OnlineGame) -> Option<pb::GameResult> {
    game.finished().map(|f| pb::GameResult {
        winner: f
            .result
            .winner()
            .map_or(pb::Color::Unspecified, pb::Color::from) as i32,
        reason: pb::EndReason::from(f.reason) as i32,
        text: f.result.to_string(),
        count: f.count.as_ref().map(count_to_pb),
    })
}

/// A seat as the wire carries it.
#[must_use]
pub fn seat_pb(seat: &Seat, stood_in: bool, engine: AiEngine) -> pb::Player {
    pb::Player {
        user_id: seat.user_id.clone().unwrap_or_default(),
        nickname: seat.name.clone(),
        ai_level: seat.ai.map_or(pb::AiLevel::Unspecified, pb::AiLevel::from) as i32,
        computer_standing_in: stood_in,
        ai_engine: seat
            .ai
            .map_or(pb::AiEngine::Unspecified, |_| ai_engine_to_pb(engine))
            as i32,
    }
}

/// The game as a client sees it now, with the count if it ended now when
/// `preview` is asked for.
#[must_use]
pub fn snapshot(live: &OnlineGame, preview: bool) -> pb::GameSnapshot {
    let playing = live.is_playing();
    let counting = live.counting();
    // Nobody moves while the stones are counted.
    let moving = playing && counting.is_none();
    let meta = live.meta();
    let game = live.game();
    let moves = game.move_number();
    pb::GameSnapshot {
        game_id: meta.id.to_string(),
        board_size: u32::from(meta.rules.board_size.get()),
        ruleset: meta.rules.preset.name().to_owned(),
        komi: komi_points(meta.rules.komi.half_points()),
        black: Some(seat_pb(
            &meta.black,
            live.stood_in(Color::Black),
            meta.ai_engine,
        )),
        white: Some(seat_pb(
            &meta.white,
            live.stood_in(Color::White),
            meta.ai_engine,
        )),
        status: if playing {
            pb::GameStatus::Playing
        } else {
            pb::GameStatus::Finished
        } as i32,
        stones: stones(game),
        to_move: if moving {
            pb::Color::from(game.to_move())
        } else {
            pb::Color::Unspecified
        } as i32,
        move_count: moves as u32,
        black_captures: game.board().prisoners(Color::Black),
        white_captures: game.board().prisoners(Color::White),
        last_move: (moves > 0).then(|| move_pb(live, moves)),
        ko_forbidden: if playing {
            game.ko_forbidden_points()
                .into_iter()
                .map(pb::Point::from)
                .collect()
        } else {
            Vec::new()
        },
        in_atari: if moving {
            game.board()
                .stones_in_atari()
                .into_iter()
                .map(pb::Point::from)
                .collect()
        } else {
            Vec::new()
        },
        passes_in_a_row: game.passes_in_a_row(),
        result: result_pb(live),
        clock: (moving && meta.seconds_per_move > 0).then(|| pb::Clock {
            seconds_per_move: meta.seconds_per_move,
            deadline_unix_ms: live.deadline().unwrap_or_default(),
        }),
        score_preview: preview.then(|| count_now_pb(live)),
        event_seq: live.seq(),
        undo_allowed: live.undo_allowed(),
        ranked: meta.ranked,
        finished_at_unix_ms: live.finished_at(),
        // The gateway fills these in for the player it answers.
        your_color: pb::Color::Unspecified as i32,
        server_time_unix_ms: 0,
        draw_offered_by: live
            .draw_offer()
            .map_or(pb::Color::Unspecified, pb::Color::from) as i32,
        scoring: pb::Scoring::from(meta.rules.scoring) as i32,
        keep_colors_on_rematch: meta.keep_colors,
        seconds_per_move: meta.seconds_per_move,
        counting: counting.map(|c| pb::Counting {
            dead_stones: c.dead().iter().copied().map(pb::Point::from).collect(),
            proposed: c.proposed().iter().copied().map(pb::Point::from).collect(),
            marks_version: c.version(),
            black_confirmed: c.confirmed(Color::Black),
            white_confirmed: c.confirmed(Color::White),
            deadline_unix_ms: live.deadline().unwrap_or_default(),
            count: Some(count_to_pb(&game.score_with_dead(c.dead()))),
            after_move: moves as u32,
        }),
        computer_stands_in: meta.stand_in,
    }
}

/// One event as it is stored and sent, with the game after the event's
/// step (`game`).
#[must_use]
pub fn event(game: &OnlineGame, event: &Event) -> pb::GameEvent {
    use pb::game_event::Kind;
    let live = game;
    let mut snapshot = pb::GameSnapshot {
        event_seq: event.seq,
        ..snapshot(live, false)
    };
    let kind = match &event.kind {
        EventKind::Started => Kind::Started(pb::GameStarted {}),
        EventKind::MovePlayed { number, with_count } => {
            if *with_count {
                snapshot.score_preview = Some(preview_to_pb(&live.game().preview()));
            }
            Kind::MovePlayed(pb::MovePlayed {
                r#move: Some(move_pb(live, *number)),
            })
        }
        EventKind::Finished => Kind::Finished(pb::GameFinished {
            result: result_pb(live),
        }),
        EventKind::DrawOffered(by) => Kind::DrawOffered(pb::DrawOffered {
            by: pb::Color::from(*by) as i32,
        }),
        EventKind::DrawDeclined(by) => Kind::DrawDeclined(pb::DrawDeclined {
            by: pb::Color::from(*by) as i32,
        }),
        EventKind::MovesUndone(moves) => Kind::MovesUndone(pb::MovesUndone {
            moves: moves.iter().map(played_to_pb).collect(),
        }),
        EventKind::CountingStarted => Kind::CountingStarted(pb::CountingStarted {}),
        EventKind::DeadStonesMarked { by, stones, dead } => {
            Kind::DeadStonesMarked(pb::DeadStonesMarked {
                by: pb::Color::from(*by) as i32,
                stones: stones.iter().copied().map(pb::Point::from).collect(),
                dead: *dead,
            })
        }
        EventKind::CountConfirmed(by) => Kind::CountConfirmed(pb::CountConfirmed {
            by: pb::Color::from(*by) as i32,
        }),
        EventKind::PlayResumed(by) => Kind::PlayResumed(pb::PlayResumed {
            by: pb::Color::from(*by) as i32,
        }),
        EventKind::StandInSeated(color) => Kind::StandInSeated(pb::StandInSeated {
            color: pb::Color::from(*color) as i32,
        }),
        EventKind::StandInLeft(color) => Kind::StandInLeft(pb::StandInLeft {
            color: pb::Color::from(*color) as i32,
        }),
        EventKind::AiEngineChanged(engine) => Kind::AiEngineChanged(pb::AiEngineChanged {
            engine: ai_engine_to_pb(*engine) as i32,
        }),
    };
    pb::GameEvent {
        game_id: live.meta().id.to_string(),
        seq: event.seq,
        at_unix_ms: event.at,
        snapshot: Some(snapshot),
        change: None,
        kind: Some(kind),
    }
}

/// The events of a step, given the game before it.
#[must_use]
pub fn step_events(before: &OnlineGame, step: &Step) -> Vec<pb::GameEvent> {
    let after = step.after(before);
    step.events().iter().map(|e| event(after, e)).collect()
}

/// The game as the last published event left it, encoded: what the next
/// event's change is made against (some 300 bytes on 9×9, where the
/// decoded snapshot holds 1.6 KB).
pub type Shown = Box<[u8]>;

/// A step's events as they are stored and published: each one's change
/// against the game the event before it showed, so a move travels as the
/// stones and fields it changed. An event goes whole when there is nothing
/// to compare it with (`shown` is `None`: a game just taken up here) and
/// when it ends the game, so the finished game's consumers read it alone.
/// Returns the events and the game the last of them shows (`None` for no
/// events: the game is as `shown` was).
#[must_use]
pub fn as_changes(
    shown: Option<&[u8]>,
    events: Vec<pb::GameEvent>,
) -> (Vec<pb::GameEvent>, Option<Shown>) {
    use prost::Message as _;
    if events.is_empty() {
        return (events, None);
    }
    let mut before = shown.and_then(|b| pb::GameSnapshot::decode(b).ok());
    let mut out = Vec::with_capacity(events.len());
    for mut event in events {
        let finished = matches!(event.kind, Some(pb::game_event::Kind::Finished(_)));
        if let Some(after) = event.snapshot.take() {
            if let (Some(base), false) = (&before, finished) {
                event.change = Some(ttakji_proto::changes::change(base, &after));
            } else {
                event.snapshot = Some(after.clone());
            }
            before = Some(after);
        }
        out.push(event);
    }
    let shown = before.map(|s| s.encode_to_vec().into_boxed_slice());
    (out, shown)
}
