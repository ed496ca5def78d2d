//! Values of the services' settings as an operator writes them, in a flag
//! or a `TTAKJI_*` variable, turned into typed values in one place.

use std::time::Duration;

/// A number of seconds, whole or not (`10`, `2.5`), as a duration.
///
/// # Errors
/// When `text` is not a finite number of seconds of zero or more.
pub fn seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(format!("a number of seconds is zero or more, not {text}"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text} seconds: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_may_be_whole_or_fractional_but_never_negative_or_endless() {
        assert_eq!(seconds("10"), Ok(Duration::from_secs(10)));
        assert_eq!(seconds("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(seconds("0"), Ok(Duration::ZERO));
        assert!(seconds("-1").is_err());
        assert!(seconds("inf").is_err());
        assert!(seconds("NaN").is_err());
        assert!(seconds("ten").is_err());
    }
}
