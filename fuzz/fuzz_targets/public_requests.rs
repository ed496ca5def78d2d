//! Arbitrary bytes as the request of a public method: the first byte picks
//! the method, the rest is decoded as its request and, when it decodes,
//! checked the way the gateway checks it at the edge. Nothing may panic;
//! a value the checks accept must be one the services can take (a point
//! on a board, a nickname of 2 to 20 allowed characters, text without
//! control characters).

#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use ttakji_gateway::validate::{self, AiGame, GameId, Nickname, PlayMove};
use ttakji_proto::v1 as pb;

fn nickname(name: &str) {
    if let Ok(n) = Nickname::parse(name) {
        let len = n.as_str().chars().count();
        assert!((2..=20).contains(&len));
        assert!(!n.as_str().chars().any(char::is_control));
    }
    let made = Nickname::from_account_name(Some(name));
    assert!(Nickname::parse(made.as_str()).is_ok(), "{made:?}");
    assert!(Nickname::parse(made.numbered(u128::from(name.len() as u64)).as_str()).is_ok());
}

fn text(value: &str, field: &'static str) {
    if let Ok(v) = validate::text(value, field) {
        assert!(!v.chars().any(char::is_control));
    }
}

fn game_id(id: &str) {
    let _ = GameId::parse(id);
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    match which % 12 {
        0 => {
            if let Ok(r) = pb::SignInGuestRequest::decode(body) {
                nickname(&r.nickname);
            }
        }
        1 => {
            if let Ok(r) = pb::SignInGoogleRequest::decode(body) {
                let _ = validate::id_token(&r.id_token);
                if !r.nickname.is_empty() {
                    nickname(&r.nickname);
                }
            }
        }
        2 => {
            if let Ok(r) = pb::ChangeNicknameRequest::decode(body) {
                nickname(&r.nickname);
            }
        }
        3 => {
            if let Ok(r) = pb::PlayMoveRequest::decode(body)
                && let Ok(m) = PlayMove::try_from(r)
            {
                assert!(m.point.column < 25 && m.point.row < 25);
            }
        }
        4 => {
            if let Ok(r) = pb::StartAiGameRequest::decode(body) {
                let _ = AiGame::try_from(r);
            }
        }
        5 => {
            if let Ok(r) = pb::FindMatchRequest::decode(body) {
                text(&r.ruleset, "ruleset");
            }
        }
        6 => {
            if let Ok(r) = pb::CreateChallengeRequest::decode(body) {
                text(&r.ruleset, "ruleset");
            }
        }
        7 => {
            if let Ok(r) = pb::AcceptChallengeRequest::decode(body) {
                text(&r.code, "code");
            }
        }
        8 => {
            if let Ok(r) = pb::CancelMatchRequest::decode(body) {
                text(&r.ticket_id, "ticket_id");
            }
        }
        9 => {
            if let Ok(r) = pb::RematchRequest::decode(body) {
                game_id(&r.game_id);
            }
        }
        10 => {
            if let Ok(r) = pb::GetGameRequest::decode(body) {
                game_id(&r.game_id);
            }
        }
        _ => {
            if let Ok(r) = pb::WatchGameRequest::decode(body) {
                game_id(&r.game_id);
            }
        }
    }
});
