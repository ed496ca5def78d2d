//! Rulesets as values: scoring, ko, suicide, komi, move cap and how dead stones are settled.

use std::fmt;

use thiserror::Error;

use crate::point::{BoardSize, BoardSizeError};

/// How the board is counted at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scoring {
    /// Stones on the board plus empty points surrounded only by one colour
    /// (Chinese-style; Ttakji's own).
    Area,
    /// Empty points surrounded plus prisoners plus dead stones removed; no
    /// territory inside seki (Japanese-style).
    Territory,
}

/// Which repetitions of the board are forbidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KoRule {
    /// No move may recreate any earlier whole-board position.
    PositionalSuperko,
    /// No move may recreate an earlier position with the same player to move.
    SituationalSuperko,
    /// Only the immediate retake (recreating the position before the
    /// opponent's last move) is forbidden; longer cycles are allowed.
    Simple,
}

/// How dead stones are settled after the game ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeadStoneRule {
    /// The engine's fixed, conservative calculation decides (area rules).
    Automatic,
    /// The players mark and confirm them; the calculation only proposes.
    Agreement,
    /// Nothing is removed: every stone on the board counts (Tromp-Taylor).
    None,
}

/// Komi in half points, so 6.5 is exact. Positive komi is added to White.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Komi(i32);

impl Komi {
    /// No komi.
    pub const ZERO: Komi = Komi(0);
    /// Largest komi accepted either way: more than any board's area.
    pub const LIMIT_HALF_POINTS: i32 = 2 * 400;

    /// Komi from a number of half points (13 is 6.5).
    pub fn from_half_points(half: i32) -> Result<Komi, KomiError> {
        if half.abs() <= Self::LIMIT_HALF_POINTS {
            Ok(Komi(half))
        } else {
            Err(KomiError(format!("{}", f64::from(half) / 2.0)))
        }
    }

    /// Komi in half points.
    #[must_use]
    pub const fn half_points(self) -> i32 {
        self.0
    }

    /// Parses `7`, `6.5`, `-0.5`, `7.0`; refuses quarters and nonsense.
    pub fn parse(s: &str) -> Result<Komi, KomiError> {
        let t = s.trim();
        let bad = || KomiError(t.to_owned());
        let value: f64 = t.parse().map_err(|_| bad())?;
        if !value.is_finite() {
            return Err(bad());
        }
        let half = value * 2.0;
        if half.fract() != 0.0 || half.abs() > f64::from(Self::LIMIT_HALF_POINTS) {
            return Err(bad());
        }
        // Integral and within ±800 after the checks above.
        Komi::from_half_points(half as i32)
    }
}

impl fmt::Display for Komi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 % 2 == 0 {
            write!(f, "{}", self.0 / 2)
        } else {
            let sign = if self.0 < 0 { "-" } else { "" };
            write!(f, "{}{}.5", sign, self.0.abs() / 2)
        }
    }
}

/// A komi that is not a whole or half number of points, or is absurdly large.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("komi `{0}` is not accepted (a whole or half number of points, at most 400 either way)")]
pub struct KomiError(pub String);

/// The named rulesets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Ttakji's own: area, komi 7, positional superko, no suicide, 300-move
    /// cap on 9×9, automatic dead stones.
    Ttakji,
    /// Chinese: area, komi 7.5, positional superko, no suicide.
    Chinese,
    /// Japanese: territory, komi 6.5, simple ko, dead stones by agreement.
    Japanese,
    /// Tromp-Taylor: area, komi 7.5, positional superko, suicide allowed,
    /// every stone on the board counts.
    TrompTaylor,
}

impl Preset {
    /// Every preset, in the order they are listed to users.
    pub const ALL: [Preset; 4] = [
        Preset::Ttakji,
        Preset::Chinese,
        Preset::Japanese,
        Preset::TrompTaylor,
    ];

    /// The name used in GTP (`kata-set-rules`), SGF `RU` and the API.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Ttakji => "ttakji",
            Preset::Chinese => "chinese",
            Preset::Japanese => "japanese",
            Preset::TrompTaylor => "tromp-taylor",
        }
    }

    /// Reads a preset name, in any case; `tromp_taylor`, `TrompTaylor` and
    /// SGF's `Chinese`/`Japanese` are understood too.
    pub fn parse(s: &str) -> Result<Preset, RulesError> {
        let norm: String = s
            .trim()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match norm.as_str() {
            "ttakji" => Ok(Preset::Ttakji),
            "chinese" | "cn" => Ok(Preset::Chinese),
            "japanese" | "jp" => Ok(Preset::Japanese),
            "tromptaylor" | "tt" => Ok(Preset::TrompTaylor),
            _ => Err(RulesError::UnknownPreset(s.to_owned())),
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A ruleset that is not known, or a setting that cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RulesError {
    #[error("unknown rules `{0}` (known: ttakji, chinese, japanese, tromp-taylor)")]
    UnknownPreset(String),
    #[error(transparent)]
    BoardSize(#[from] BoardSizeError),
    #[error(transparent)]
    Komi(#[from] KomiError),
}

/// One ruleset: everything that decides legality and the count, travelling
/// with the game as a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rules {
    /// The preset these rules started from (named in SGF `RU` and GTP).
    pub preset: Preset,
    pub board_size: BoardSize,
    pub komi: Komi,
    pub scoring: Scoring,
    pub ko: KoRule,
    pub suicide_allowed: bool,
    /// Total moves (passes included) after which the game is counted as if
    /// both had passed; `None` for no cap.
    pub move_cap: Option<u32>,
    pub dead_stones: DeadStoneRule,
}

/// The cap Ttakji uses on 9×9.
const TTAKJI_CAP_9X9: u32 = 300;

impl Rules {
    /// Ttakji's default: 9×9, area, komi 7, positional superko, no suicide,
    /// 300 moves, automatic dead stones.
    #[must_use]
    pub const fn ttakji() -> Rules {
        Rules {
            preset: Preset::Ttakji,
            board_size: BoardSize::NINE,
            komi: Komi(14),
            scoring: Scoring::Area,
            ko: KoRule::PositionalSuperko,
            suicide_allowed: false,
            move_cap: Some(TTAKJI_CAP_9X9),
            dead_stones: DeadStoneRule::Automatic,
        }
    }

    /// Chinese rules on 9×9 (komi 7.5).
    #[must_use]
    pub const fn chinese() -> Rules {
        Rules {
            preset: Preset::Chinese,
            board_size: BoardSize::NINE,
            komi: Komi(15),
            scoring: Scoring::Area,
            ko: KoRule::PositionalSuperko,
            suicide_allowed: false,
            move_cap: None,
            dead_stones: DeadStoneRule::Automatic,
        }
    }

    /// Japanese rules on 9×9 (komi 6.5, simple ko, dead stones agreed).
    #[must_use]
    pub const fn japanese() -> Rules {
        Rules {
            preset: Preset::Japanese,
            board_size: BoardSize::NINE,
            komi: Komi(13),
            scoring: Scoring::Territory,
            ko: KoRule::Simple,
            suicide_allowed: false,
            move_cap: None,
            dead_stones: DeadStoneRule::Agreement,
        }
    }

    /// Tromp-Taylor rules on 9×9 (komi 7.5, suicide allowed, no removal).
    #[must_use]
    pub const fn tromp_taylor() -> Rules {
        Rules {
            preset: Preset::TrompTaylor,
            board_size: BoardSize::NINE,
            komi: Komi(15),
            scoring: Scoring::Area,
            ko: KoRule::PositionalSuperko,
            suicide_allowed: true,
            move_cap: None,
            dead_stones: DeadStoneRule::None,
        }
    }

    /// The rules of a preset, on 9×9.
    #[must_use]
    pub const fn preset(preset: Preset) -> Rules {
        match preset {
            Preset::Ttakji => Rules::ttakji(),
            Preset::Chinese => Rules::chinese(),
            Preset::Japanese => Rules::japanese(),
            Preset::TrompTaylor => Rules::tromp_taylor(),
        }
    }

    /// The rules named `name` (see [`Preset::parse`]), on 9×9.
    pub fn named(name: &str) -> Result<Rules, RulesError> {
        Preset::parse(name).map(Rules::preset)
    }

    /// The same rules on another board. Ttakji's move cap grows with the
    /// board's area (300 on 9×9, so 3.7 moves a point: 626 on 13×13, 1338 on
    /// 19×19), since a fixed 300 would cut a 19×19 game short.
    #[must_use]
    pub fn with_board_size(mut self, size: BoardSize) -> Rules {
        if self.preset == Preset::Ttakji && self.move_cap.is_some() {
            let points = size.points() as u32;
            self.move_cap = Some((TTAKJI_CAP_9X9 * points).div_ceil(81));
        }
        self.board_size = size;
        self
    }

    /// The same rules with another komi.
    #[must_use]
    pub const fn with_komi(mut self, komi: Komi) -> Rules {
        self.komi = komi;
        self
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::ttakji()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn komi_is_kept_in_half_points() {
        assert_eq!(Komi::parse("6.5").map(Komi::half_points), Ok(13));
        assert_eq!(Komi::parse("7").map(|k| k.to_string()), Ok("7".into()));
        assert_eq!(
            Komi::parse("-0.5").map(|k| k.to_string()),
            Ok("-0.5".into())
        );
        assert_eq!(Komi::parse("0").map(|k| k.to_string()), Ok("0".into()));
        assert!(Komi::parse("6.25").is_err());
        assert!(Komi::parse("NaN").is_err());
        assert!(Komi::parse("1e9").is_err());
    }

    #[test]
    fn presets_are_named_values() {
        for p in Preset::ALL {
            assert_eq!(Preset::parse(p.name()), Ok(p));
        }
        assert_eq!(Preset::parse("Tromp_Taylor"), Ok(Preset::TrompTaylor));
        assert!(matches!(
            Preset::parse("korean"),
            Err(RulesError::UnknownPreset(_))
        ));
        let r = Rules::ttakji();
        assert_eq!(
            (r.komi.to_string(), r.move_cap),
            ("7".to_owned(), Some(300))
        );
        assert!(Rules::tromp_taylor().suicide_allowed);
        assert_eq!(Rules::japanese().ko, KoRule::Simple);
        assert_eq!(
            Rules::ttakji()
                .with_board_size(BoardSize::NINETEEN)
                .move_cap,
            Some(1338)
        );
    }
}
