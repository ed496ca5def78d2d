//! Requests from the wire turned into values the gateway can trust, once,
//! at the edge: a nickname, a game id, a move on the board, the terms of a
//! game against the computer. Whatever is wrong becomes [`Invalid`], which
//! a client sees as INVALID_ARGUMENT saying what was wrong.

use tonic::Status;
use ttakji_proto::GameId;
use ttakji_proto::v1 as pb;

/// The longest Google ID token read; real ones are about a kilobyte.
const MAX_ID_TOKEN_LEN: usize = 8192;
/// No board has a point this far from the corner (the largest is 19×19).
const BOARD_LIMIT: u32 = 25;

/// Why a request was refused before anything was done with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("nickname must be 2 to 20 characters, not {0}")]
    NicknameLength(usize),
    #[error("nickname may hold letters, digits, '-' and '_', not {0:?}")]
    NicknameCharacter(char),
    /// An id that is empty, too long or not made of id characters.
    #[error("{0}")]
    Id(String),
    #[error("{field} may not hold control characters (found U+{code:04X})")]
    ControlCharacter { field: &'static str, code: u32 },
    #[error("{field} is longer than {max} bytes")]
    TooLong { field: &'static str, max: usize },
    #[error("point is missing")]
    NoPoint,
    #[error("point (column {column}, row {row}) is off any board")]
    OffBoard { column: u32, row: u32 },
    #[error("{field} {value} is not a known value")]
    UnknownValue { field: &'static str, value: i32 },
    #[error("the ID token is too long")]
    IdTokenTooLong,
    #[error("board size {0} is not offered: use 9, 13 or 19")]
    BoardSize(u32),
    #[error("komi {0} is not offered: use 0 (none) to 50 points, in steps of 0.5")]
    Komi(String),
    #[error("{0} seconds a move is not offered: use 0 (no limit) or 5 to 600")]
    MoveTime(u32),
}

impl Invalid {
    /// The reason a client reads (`docs/errors.md`).
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Invalid::NicknameLength(_) | Invalid::NicknameCharacter(_) => "NICKNAME_INVALID",
            Invalid::BoardSize(_) => "BOARD_SIZE_NOT_OFFERED",
            Invalid::Komi(_) => "KOMI_NOT_OFFERED",
            Invalid::MoveTime(_) => "MOVE_TIME_NOT_OFFERED",
            Invalid::NoPoint | Invalid::OffBoard { .. } => "OFF_BOARD",
            Invalid::Id(_)
            | Invalid::ControlCharacter { .. }
            | Invalid::TooLong { .. }
            | Invalid::UnknownValue { .. }
            | Invalid::IdTokenTooLong => "INVALID_ARGUMENT",
        }
    }
}

impl From<Invalid> for Status {
    fn from(invalid: Invalid) -> Status {
        ttakji_platform::refusal::refused(
            tonic::Code::InvalidArgument,
            invalid.reason(),
            invalid.to_string(),
        )
    }
}

fn nickname_character(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

/// A nickname: 2 to 20 letters, digits, `-` or `_`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nickname(String);

impl Nickname {
    /// Checks a nickname a player chose.
    ///
    /// # Errors
    /// When it is too short, too long, or holds another character.
    pub fn parse(name: &str) -> Result<Nickname, Invalid> {
        let len = name.chars().count();
        if !(2..=20).contains(&len) {
            return Err(Invalid::NicknameLength(len));
        }
        if let Some(bad) = name.chars().find(|c| !nickname_character(*c)) {
            return Err(Invalid::NicknameCharacter(bad));
        }
        Ok(Nickname(name.to_owned()))
    }

    /// A nickname made from the name on a Google account: its letters and
    /// digits, up to 20 of them ("player" when fewer than 2 are left).
    #[must_use]
    pub fn from_account_name(name: Option<&str>) -> Nickname {
        let cleaned: String = name
            .unwrap_or_default()
            .chars()
            .filter(|c| nickname_character(*c))
            .take(20)
            .collect();
        if cleaned.chars().count() >= 2 {
            Nickname(cleaned)
        } else {
            Nickname("player".to_owned())
        }
    }

    /// This nickname, shortened to 15 characters and followed by `number`
    /// modulo 10,000, for when the nickname itself is taken.
    #[must_use]
    pub fn numbered(&self, number: u128) -> Nickname {
        let stem: String = self.0.chars().take(15).collect();
        Nickname(format!("{stem}{}", number % 10_000))
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A game's id as a client sent it, checked to be an id.
///
/// # Errors
/// When `id` is empty, too long or not made of id characters.
pub fn game_id(id: &str) -> Result<GameId, Invalid> {
    GameId::parse(id).map_err(|status| Invalid::Id(status.message().to_owned()))
}

/// A table's house rules (seed 001), resolved against its preset: what the
/// matchmaker keeps with the challenge.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub board_size: u32,
    /// `ttakji` for area scoring, `japanese` for territory scoring.
    pub ruleset: &'static str,
    /// Komi in half points; `None` keeps the ruleset's (7 under area
    /// scoring, 6.5 under territory scoring).
    pub komi_half: Option<i32>,
    /// Seconds a move, 0 for none; `None` takes the service's move clock.
    pub seconds_per_move: Option<u32>,
    pub keep_colors: bool,
    /// The computer plays the seat of a player who is away (seed 001).
    pub stand_in: bool,
}

impl Table {
    /// # Errors
    /// When a choice is unknown or outside what a table may set.
    pub fn parse(rules: &pb::HouseRules) -> Result<Table, Invalid> {
        let preset =
            pb::TablePreset::try_from(rules.preset).map_err(|_| Invalid::UnknownValue {
                field: "preset",
                value: rules.preset,
            })?;
        let scoring = pb::Scoring::try_from(rules.scoring).map_err(|_| Invalid::UnknownValue {
            field: "scoring",
            value: rules.scoring,
        })?;
        // Seed 000's table (the service's move clock), or seed 001's.
        let (size, territory, seconds, stand_in) = match preset {
            pb::TablePreset::Unspecified | pb::TablePreset::Ttakji => (9, false, None, false),
            pb::TablePreset::Classic => (19, true, Some(0), true),
        };
        let board_size = match rules.board_size {
            0 => size,
            9 | 13 | 19 => rules.board_size,
            other => return Err(Invalid::BoardSize(other)),
        };
        let territory = match scoring {
            pb::Scoring::Unspecified => territory,
            pb::Scoring::Area => false,
            pb::Scoring::Territory => true,
        };
        let komi_half = match rules.komi {
            None => None,
            Some(k) if (0.0..=50.0).contains(&k) && (k * 2.0).fract() == 0.0 => {
                // Whole and within 0..=100, checked above.
                #[allow(clippy::cast_possible_truncation)]
                Some((k * 2.0) as i32)
            }
            Some(k) => return Err(Invalid::Komi(k.to_string())),
        };
        let seconds_per_move = match rules.seconds_per_move {
            None => seconds,
            Some(s) if s == 0 || (5..=600).contains(&s) => Some(s),
            Some(s) => return Err(Invalid::MoveTime(s)),
        };
        Ok(Table {
            board_size,
            ruleset: if territory { "japanese" } else { "ttakji" },
            komi_half,
            seconds_per_move,
            keep_colors: rules.keep_colors_on_rematch,
            stand_in: rules.computer_stands_in.unwrap_or(stand_in),
        })
    }
}

/// The longest short text field read (a ruleset's name, a challenge code,
/// a ticket id).
const MAX_TEXT_LEN: usize = 64;

/// A short text field as a client sent it: no control characters (a NUL
/// byte never reaches a store) and no longer than any real value. What the
/// value means is checked by the service it is for.
///
/// # Errors
/// When it holds a control character or is too long.
pub fn text<'a>(value: &'a str, field: &'static str) -> Result<&'a str, Invalid> {
    if value.len() > MAX_TEXT_LEN {
        return Err(Invalid::TooLong {
            field,
            max: MAX_TEXT_LEN,
        });
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(Invalid::ControlCharacter {
            field,
            code: u32::from(c),
        });
    }
    Ok(value)
}

/// A Google ID token short enough to be read.
///
/// # Errors
/// When it is longer than any real one, or holds a control character.
pub fn id_token(token: &str) -> Result<&str, Invalid> {
    if token.len() > MAX_ID_TOKEN_LEN {
        return Err(Invalid::IdTokenTooLong);
    }
    if let Some(c) = token.chars().find(|c| c.is_control()) {
        return Err(Invalid::ControlCharacter {
            field: "id_token",
            code: u32::from(c),
        });
    }
    Ok(token)
}

/// A value of a protobuf enum that this server knows.
fn known<E: TryFrom<i32>>(value: i32, field: &'static str) -> Result<E, Invalid> {
    E::try_from(value).map_err(|_| Invalid::UnknownValue { field, value })
}

/// A stone to place: where, and on which move of which game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayMove {
    pub game_id: GameId,
    pub move_number: u32,
    pub point: pb::Point,
    /// The computer seat's move, from the player whose client thinks.
    pub for_computer: bool,
}

impl TryFrom<pb::PlayMoveRequest> for PlayMove {
    type Error = Invalid;

    fn try_from(request: pb::PlayMoveRequest) -> Result<PlayMove, Invalid> {
        let point = request.point.ok_or(Invalid::NoPoint)?;
        if point.column >= BOARD_LIMIT || point.row >= BOARD_LIMIT {
            return Err(Invalid::OffBoard {
                column: point.column,
                row: point.row,
            });
        }
        Ok(PlayMove {
            game_id: game_id(&request.game_id)?,
            move_number: request.move_number,
            point,
            for_computer: request.for_computer,
        })
    }
}

/// A mark of dead stones as a client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkDead {
    pub game_id: GameId,
    pub point: pb::Point,
    pub dead: bool,
}

impl TryFrom<pb::MarkDeadStonesRequest> for MarkDead {
    type Error = Invalid;

    fn try_from(request: pb::MarkDeadStonesRequest) -> Result<MarkDead, Invalid> {
        let point = request.point.ok_or(Invalid::NoPoint)?;
        if point.column >= BOARD_LIMIT || point.row >= BOARD_LIMIT {
            return Err(Invalid::OffBoard {
                column: point.column,
                row: point.row,
            });
        }
        Ok(MarkDead {
            game_id: game_id(&request.game_id)?,
            point,
            dead: request.dead,
        })
    }
}

/// The terms of a game against the computer. The board size is left to
/// the authority, which knows the sizes it plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AiGame {
    pub board_size: u32,
    pub color: pb::ColorChoice,
    /// Never `Unspecified`: a player who does not say plays Normal.
    pub level: pb::AiLevel,
    /// Never `Unspecified`: a client that does not say gets the server's
    /// engine, as before the choice existed.
    pub engine: pb::AiEngine,
}

impl TryFrom<pb::StartAiGameRequest> for AiGame {
    type Error = Invalid;

    fn try_from(request: pb::StartAiGameRequest) -> Result<AiGame, Invalid> {
        let color = known(request.color, "color")?;
        let level = match known(request.level, "level")? {
            pb::AiLevel::Unspecified => pb::AiLevel::Normal,
            level => level,
        };
        let engine = match known(request.engine, "engine")? {
            pb::AiEngine::Unspecified => pb::AiEngine::Server,
            engine => engine,
        };
        Ok(AiGame {
            board_size: request.board_size,
            color,
            level,
            engine,
        })
    }
}

#[cfg(test)]
mod tests {
    use ttakji_proto::v1 as pb;

    use super::{AiGame, GameId, Invalid, Nickname, PlayMove, Table, game_id};

    #[test]
    fn a_tables_house_rules_start_from_its_preset() {
        let classic = Table::parse(&pb::HouseRules {
            preset: pb::TablePreset::Classic as i32,
            ..Default::default()
        });
        assert_eq!(
            classic,
            Ok(Table {
                board_size: 19,
                ruleset: "japanese",
                komi_half: None,
                seconds_per_move: Some(0),
                keep_colors: false,
                stand_in: true,
            }),
            "seed 001's defaults"
        );
        let changed = Table::parse(&pb::HouseRules {
            preset: pb::TablePreset::Classic as i32,
            board_size: 13,
            komi: Some(0.0),
            scoring: pb::Scoring::Area as i32,
            seconds_per_move: Some(60),
            keep_colors_on_rematch: true,
            computer_stands_in: Some(false),
        });
        assert_eq!(
            changed,
            Ok(Table {
                board_size: 13,
                ruleset: "ttakji",
                komi_half: Some(0),
                seconds_per_move: Some(60),
                keep_colors: true,
                stand_in: false,
            })
        );
        let ttakji = Table::parse(&pb::HouseRules::default()).expect("the default table");
        assert_eq!(
            (
                ttakji.board_size,
                ttakji.ruleset,
                ttakji.seconds_per_move,
                ttakji.stand_in
            ),
            (9, "ttakji", None, false),
            "seed 000's table: the clock runs for a player who is away"
        );
    }

    #[test]
    fn a_table_refuses_what_no_table_may_set() {
        let with = |f: &dyn Fn(&mut pb::HouseRules)| {
            let mut rules = pb::HouseRules::default();
            f(&mut rules);
            Table::parse(&rules).map_err(|e| e.to_string())
        };
        for (bad, says) in [
            (with(&|r| r.board_size = 11), "board size 11 is not offered"),
            (with(&|r| r.komi = Some(6.3)), "komi 6.3 is not offered"),
            (with(&|r| r.komi = Some(-1.0)), "komi -1 is not offered"),
            (with(&|r| r.komi = Some(51.0)), "komi 51 is not offered"),
            (
                with(&|r| r.komi = Some(f64::NAN)),
                "komi NaN is not offered",
            ),
            (with(&|r| r.seconds_per_move = Some(3)), "3 seconds a move"),
            (
                with(&|r| r.seconds_per_move = Some(601)),
                "601 seconds a move",
            ),
            (with(&|r| r.preset = 9), "preset 9 is not a known value"),
            (with(&|r| r.scoring = 7), "scoring 7 is not a known value"),
        ] {
            let message = bad.expect_err(says);
            assert!(message.contains(says), "{message}");
        }
        assert!(with(&|r| r.komi = Some(6.5)).is_ok());
        assert!(with(&|r| r.seconds_per_move = Some(0)).is_ok());
    }

    #[test]
    fn a_nickname_is_two_to_twenty_letters_digits_dashes_or_underscores() {
        for good in [
            "jin",
            "Lee_Sedol",
            "shin-jinseo",
            "이세돌",
            "ab",
            "a".repeat(20).as_str(),
        ] {
            assert_eq!(
                Nickname::parse(good).map(|n| n.as_str().to_owned()),
                Ok(good.to_owned())
            );
        }
        assert_eq!(Nickname::parse("a"), Err(Invalid::NicknameLength(1)));
        assert_eq!(
            Nickname::parse("twenty-one-characters"),
            Err(Invalid::NicknameLength(21))
        );
        assert_eq!(
            Nickname::parse("no spaces"),
            Err(Invalid::NicknameCharacter(' '))
        );
        let status = tonic::Status::from(Invalid::NicknameCharacter(' '));
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert_eq!(
            status.message(),
            "nickname may hold letters, digits, '-' and '_', not ' '"
        );
    }

    #[test]
    fn a_google_name_becomes_a_valid_nickname() {
        let made = |name: Option<&str>| Nickname::from_account_name(name).as_str().to_owned();
        assert_eq!(made(Some("Cho Hunhyun")), "ChoHunhyun");
        assert_eq!(made(Some("?")), "player");
        assert_eq!(made(None), "player");
        let long = made(Some("abcdefghijklmnopqrstuvwxyz"));
        assert_eq!(long, "abcdefghijklmnopqrst");
        let numbered = Nickname::from_account_name(Some(&long)).numbered(19_876);
        assert_eq!(numbered.as_str(), "abcdefghijklmno9876");
        assert!(Nickname::parse(numbered.as_str()).is_ok());
    }

    #[test]
    fn a_game_id_must_look_like_an_id() {
        assert!(game_id("0123456789abcdef0123456789abcdef").is_ok());
        assert_eq!(
            game_id("").map(GameId::into_string),
            Err(Invalid::Id("game_id is empty".to_owned()))
        );
        assert!(matches!(game_id("../../etc/passwd"), Err(Invalid::Id(_))));
    }

    fn play(point: Option<(u32, u32)>, game_id: &str) -> Result<PlayMove, Invalid> {
        PlayMove::try_from(pb::PlayMoveRequest {
            game_id: game_id.to_owned(),
            move_number: 3,
            point: point.map(|(column, row)| pb::Point { column, row }),
            ..Default::default()
        })
    }

    #[test]
    fn a_move_needs_a_point_on_some_board_before_its_game_id_is_read() {
        assert!(play(Some((18, 18)), "g1").is_ok());
        assert_eq!(play(None, "g1"), Err(Invalid::NoPoint));
        assert_eq!(
            play(Some((25, 0)), ""),
            Err(Invalid::OffBoard { column: 25, row: 0 })
        );
        assert!(matches!(play(Some((0, 0)), ""), Err(Invalid::Id(_))));
    }

    #[test]
    fn an_ai_game_needs_known_colours_and_levels_and_defaults_to_normal() {
        let terms = |color: i32, level: i32| {
            AiGame::try_from(pb::StartAiGameRequest {
                board_size: 9,
                color,
                level,
                ..Default::default()
            })
        };
        assert_eq!(
            terms(pb::ColorChoice::Black as i32, 0).map(|t| t.level),
            Ok(pb::AiLevel::Normal)
        );
        assert_eq!(
            terms(7, 1),
            Err(Invalid::UnknownValue {
                field: "color",
                value: 7
            })
        );
        assert_eq!(
            terms(1, 99),
            Err(Invalid::UnknownValue {
                field: "level",
                value: 99
            })
        );
    }

    #[test]
    fn short_text_fields_refuse_control_characters_and_great_lengths() {
        assert_eq!(super::text("japanese", "ruleset"), Ok("japanese"));
        assert_eq!(super::text("", "ruleset"), Ok(""));
        let nul = super::text("jap\0anese", "ruleset").expect_err("a NUL byte");
        assert_eq!(
            nul.to_string(),
            "ruleset may not hold control characters (found U+0000)"
        );
        assert!(super::text("a\u{7f}", "code").is_err(), "DEL");
        assert!(super::text("a\u{85}", "code").is_err(), "NEL");
        let long = "x".repeat(65);
        assert_eq!(
            super::text(&long, "code")
                .expect_err("too long")
                .to_string(),
            "code is longer than 64 bytes"
        );
        assert!(super::id_token("ey\0J").is_err());
    }

    #[test]
    fn an_id_token_longer_than_any_real_one_is_refused() {
        assert!(super::id_token(&"x".repeat(8192)).is_ok());
        assert_eq!(
            super::id_token(&"x".repeat(8193)),
            Err(Invalid::IdTokenTooLong)
        );
    }
}
