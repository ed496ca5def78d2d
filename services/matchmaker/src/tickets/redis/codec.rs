//! How tickets and challenges are written in Redis hashes, in one place.
//! Every value is text:
//!
//! | field | ticket | written as |
//! |---|---|---|
//! | `user_id`, `nickname` | the player | as given |
//! | `rating` | their rating | decimal |
//! | `pool` | its pool | `9:ttakji:c` ([`PoolKey::encode`]) |
//! | `enqueued_ms`, `seen_ms`, `claimed_ms` | times | decimal Unix ms; `claimed_ms` 0 until claimed |
//! | `state` | where it is | `waiting`, `pairing`, `matched` or `cancelled` |
//! | `game_id` | its game | the id from the claim on; empty before |
//! | `color` | the player's colour | `B` or `W` once matched; empty before |
//! | `opponent_user`, `opponent_name` | who they play | empty user for the computer and before the match |
//! | `opponent_ai` | the computer's level | `easy`, `normal` or `hard`; empty for a person |
//!
//! A challenge: `code`, `maker_id`, `maker_name`, `pool` (as above),
//! `expires_ms` (decimal Unix ms), `game_id` (empty until joined), and its
//! house rules: `komi_half` and `seconds_per_move` (decimal; empty for the
//! defaults), `keep_colors` (`1`, or empty to swap on a rematch) and
//! `stand_in` (`1` when the computer plays the seat of a player who is away).
//!
//! The scripts compare and write the `state` words themselves: a test
//! below pins them.

use std::collections::HashMap;

use baduk::Color;
use baduk_ai::Level;

use crate::tickets::store::{ChallengeRecord, Match, Opponent, PoolKey, State, TableTerms, Ticket};

/// A hash as read with `HGETALL`.
pub(super) type Fields = HashMap<String, String>;

/// The `state` word of a ticket.
pub(super) fn state_word(state: State) -> &'static str {
    match state {
        State::Waiting => "waiting",
        State::Pairing => "pairing",
        State::Matched => "matched",
        State::Cancelled => "cancelled",
    }
}

/// Reads a `state` word; anything unknown counts as cancelled, so a
/// damaged ticket is never paired.
pub(super) fn state_from_word(word: &str) -> State {
    match word {
        "waiting" => State::Waiting,
        "pairing" => State::Pairing,
        "matched" => State::Matched,
        _ => State::Cancelled,
    }
}

fn color_letter(color: Color) -> &'static str {
    match color {
        Color::Black => "B",
        Color::White => "W",
    }
}

fn color_from_letter(letter: &str) -> Option<Color> {
    match letter {
        "B" => Some(Color::Black),
        "W" => Some(Color::White),
        _ => None,
    }
}

/// The fields a match sets on its ticket (with `state`, which the script writes).
pub(super) fn match_fields(told: &Match) -> [(&'static str, String); 4] {
    [
        ("color", color_letter(told.color).to_owned()),
        ("opponent_user", told.opponent.user_id.clone()),
        ("opponent_name", told.opponent.nickname.clone()),
        (
            "opponent_ai",
            told.opponent.level.map_or("", Level::name).to_owned(),
        ),
    ]
}

/// Every field of a ticket but its id, which is in its key.
pub(super) fn ticket_fields(t: &Ticket) -> Vec<(&'static str, String)> {
    let mut fields = vec![
        ("user_id", t.user_id.clone()),
        ("nickname", t.nickname.clone()),
        ("rating", t.rating.to_string()),
        ("pool", t.pool.encode()),
        ("enqueued_ms", t.enqueued_ms.to_string()),
        ("seen_ms", t.seen_ms.to_string()),
        ("state", state_word(t.state).to_owned()),
        ("game_id", t.game_id.clone().unwrap_or_default()),
        ("claimed_ms", t.claimed_ms.to_string()),
    ];
    match &t.matched {
        Some(told) => fields.extend(match_fields(told)),
        None => fields.extend(
            ["color", "opponent_user", "opponent_name", "opponent_ai"].map(|f| (f, String::new())),
        ),
    }
    fields
}

fn text(f: &Fields, field: &str) -> String {
    f.get(field).cloned().unwrap_or_default()
}

fn millis(f: &Fields, field: &str) -> i64 {
    f.get(field).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn nonempty(f: &Fields, field: &str) -> Option<String> {
    f.get(field).filter(|v| !v.is_empty()).cloned()
}

/// The ticket `id` from its fields; `None` when it has no player or pool
/// (it expired, or was never written).
pub(super) fn ticket_from_fields(id: &str, f: &Fields) -> Option<Ticket> {
    let matched = color_from_letter(&text(f, "color")).map(|color| Match {
        color,
        opponent: Opponent {
            user_id: text(f, "opponent_user"),
            nickname: text(f, "opponent_name"),
            level: Level::parse(&text(f, "opponent_ai")).ok(),
        },
    });
    Some(Ticket {
        id: id.to_owned(),
        user_id: f.get("user_id")?.clone(),
        nickname: text(f, "nickname"),
        rating: f.get("rating").and_then(|r| r.parse().ok()).unwrap_or(1200),
        pool: PoolKey::decode(f.get("pool")?)?,
        enqueued_ms: millis(f, "enqueued_ms"),
        seen_ms: millis(f, "seen_ms"),
        state: state_from_word(&text(f, "state")),
        game_id: nonempty(f, "game_id"),
        matched,
        claimed_ms: millis(f, "claimed_ms"),
    })
}

/// Every field of a challenge.
pub(super) fn challenge_fields(c: &ChallengeRecord) -> Vec<(&'static str, String)> {
    vec![
        ("code", c.code.clone()),
        ("maker_id", c.maker_id.clone()),
        ("maker_name", c.maker_name.clone()),
        ("pool", c.pool.encode()),
        ("expires_ms", c.expires_ms.to_string()),
        ("game_id", c.game_id.clone().unwrap_or_default()),
        (
            "komi_half",
            c.terms.komi_half.map(|k| k.to_string()).unwrap_or_default(),
        ),
        (
            "seconds_per_move",
            c.terms
                .seconds_per_move
                .map(|s| s.to_string())
                .unwrap_or_default(),
        ),
        (
            "keep_colors",
            if c.terms.keep_colors { "1" } else { "" }.to_owned(),
        ),
        (
            "stand_in",
            if c.terms.stand_in { "1" } else { "" }.to_owned(),
        ),
    ]
}

/// A challenge from its fields; `None` when it has expired (no fields).
pub(super) fn challenge_from_fields(f: &Fields) -> Option<ChallengeRecord> {
    Some(ChallengeRecord {
        code: f.get("code")?.clone(),
        maker_id: f.get("maker_id")?.clone(),
        maker_name: text(f, "maker_name"),
        pool: PoolKey::decode(f.get("pool")?)?,
        expires_ms: millis(f, "expires_ms"),
        game_id: nonempty(f, "game_id"),
        // A challenge made before tables had house rules has none of these.
        terms: TableTerms {
            komi_half: nonempty(f, "komi_half").and_then(|k| k.parse().ok()),
            seconds_per_move: nonempty(f, "seconds_per_move").and_then(|s| s.parse().ok()),
            keep_colors: nonempty(f, "keep_colors").is_some(),
            stand_in: nonempty(f, "stand_in").is_some(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as_fields(pairs: Vec<(&'static str, String)>) -> Fields {
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }

    fn pool() -> PoolKey {
        PoolKey {
            board_size: 13,
            ruleset: "ttakji".to_owned(),
            ranked: true,
        }
    }

    #[test]
    fn the_state_words_are_the_ones_the_scripts_compare() {
        for (state, word) in [
            (State::Waiting, "waiting"),
            (State::Pairing, "pairing"),
            (State::Matched, "matched"),
            (State::Cancelled, "cancelled"),
        ] {
            assert_eq!(state_word(state), word);
            assert_eq!(state_from_word(word), state);
        }
        assert_eq!(state_from_word("lost"), State::Cancelled);
    }

    #[test]
    fn a_matched_ticket_reads_back_as_written() {
        let mut t = Ticket::waiting("t1".into(), "u1".into(), "ahn".into(), 1650, pool(), 7);
        t.state = State::Matched;
        t.game_id = Some("g1".to_owned());
        t.claimed_ms = 9;
        t.matched = Some(Match {
            color: Color::White,
            opponent: Opponent {
                user_id: String::new(),
                nickname: "Hard AI".to_owned(),
                level: Some(Level::Hard),
            },
        });
        let fields = as_fields(ticket_fields(&t));
        assert_eq!(fields["color"], "W");
        assert_eq!(fields["opponent_ai"], "hard");
        assert_eq!(fields["pool"], "13:ttakji:r");
        assert_eq!(ticket_from_fields("t1", &fields), Some(t));
    }

    #[test]
    fn a_waiting_ticket_has_no_game_and_no_match() {
        let t = Ticket::waiting("t1".into(), "u1".into(), "ahn".into(), 1200, pool(), 7);
        let fields = as_fields(ticket_fields(&t));
        assert_eq!(fields["game_id"], "");
        assert_eq!(fields["color"], "");
        assert_eq!(ticket_from_fields("t1", &fields), Some(t));
    }

    #[test]
    fn a_ticket_without_player_or_pool_is_no_ticket() {
        let t = Ticket::waiting("t1".into(), "u1".into(), "ahn".into(), 1200, pool(), 7);
        for missing in ["user_id", "pool"] {
            let mut fields = as_fields(ticket_fields(&t));
            fields.remove(missing);
            assert_eq!(ticket_from_fields("t1", &fields), None, "without {missing}");
        }
    }

    #[test]
    fn a_joined_challenge_reads_back_as_written() {
        let c = ChallengeRecord {
            code: "ABC234".to_owned(),
            maker_id: "u1".to_owned(),
            maker_name: "ahn".to_owned(),
            pool: pool(),
            expires_ms: 99,
            game_id: Some("g1".to_owned()),
            terms: TableTerms {
                komi_half: Some(0),
                seconds_per_move: Some(60),
                keep_colors: true,
                stand_in: true,
            },
        };
        let fields = as_fields(challenge_fields(&c));
        assert_eq!(fields["komi_half"], "0", "komi none is not the default");
        assert_eq!(challenge_from_fields(&fields), Some(c.clone()));
        let open = ChallengeRecord {
            game_id: None,
            terms: TableTerms::default(),
            ..c
        };
        let fields = as_fields(challenge_fields(&open));
        assert_eq!(fields["game_id"], "");
        assert_eq!(challenge_from_fields(&fields), Some(open.clone()));
        // Written before tables had house rules: the defaults.
        let mut older = as_fields(challenge_fields(&open));
        for field in ["komi_half", "seconds_per_move", "keep_colors"] {
            older.remove(field);
        }
        assert_eq!(challenge_from_fields(&older), Some(open));
    }
}
