//! Go duration strings (`"1h30m"`, `"250ms"`, `"1.5s"`), as upstream's API accepts them.
//!
//! `metav1.Duration` fields (the webhook `timeout`) and `retrySettings.retryInterval` are parsed
//! with Go's `time.ParseDuration`; this is the same grammar: an optional sign, then one or more
//! decimal numbers each followed by a unit (`ns`, `us`/`µs`, `ms`, `s`, `m`, `h`), or a bare `0`.
//! Negative durations are rejected since nothing here can use one.

use std::time::Duration;

/// Why a text is not a usable Go duration; each variant carries the text as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not Go's duration grammar.
    #[error("invalid duration {0:?}")]
    Invalid(String),
    /// A negative duration other than `-0`.
    #[error("negative duration {0:?} is not allowed")]
    Negative(String),
    /// A number without a unit.
    #[error("missing unit in duration {0:?}")]
    MissingUnit(String),
    /// A unit Go does not know.
    #[error("unknown unit {unit:?} in duration {text:?}")]
    UnknownUnit {
        /// The unit.
        unit: String,
        /// The whole text.
        text: String,
    },
    /// More nanoseconds than 64 bits hold.
    #[error("duration {0:?} is too long")]
    TooLong(String),
}

/// Parses a Go duration string.
pub fn parse_go_duration(text: &str) -> Result<Duration, DurationError> {
    let invalid = || DurationError::Invalid(text.to_owned());
    let unsigned = match text.strip_prefix('-') {
        Some("0") => return Ok(Duration::ZERO),
        Some(_) => return Err(DurationError::Negative(text.to_owned())),
        None => text.strip_prefix('+').unwrap_or(text),
    };
    if unsigned == "0" {
        return Ok(Duration::ZERO);
    }
    if unsigned.is_empty() {
        return Err(invalid());
    }
    let mut rest = unsigned;
    let mut total_nanos: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|character: char| !(character.is_ascii_digit() || character == '.'))
            .ok_or_else(|| DurationError::MissingUnit(text.to_owned()))?;
        let number = &rest[..number_end];
        if number.is_empty() || number == "." {
            return Err(invalid());
        }
        let value: f64 = number.parse().map_err(|_| invalid())?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|character: char| character.is_ascii_digit() || character == '.')
            .unwrap_or(rest.len());
        let nanos_per_unit = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            unit => {
                return Err(DurationError::UnknownUnit {
                    unit: unit.to_owned(),
                    text: text.to_owned(),
                });
            }
        };
        total_nanos += value * nanos_per_unit;
        rest = &rest[unit_end..];
    }
    if total_nanos > u64::MAX as f64 {
        return Err(DurationError::TooLong(text.to_owned()));
    }
    Ok(Duration::from_nanos(total_nanos.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_go_parses() {
        let cases = [
            ("0", Duration::ZERO),
            ("-0", Duration::ZERO),
            ("300ms", Duration::from_millis(300)),
            ("1.5s", Duration::from_millis(1500)),
            ("1h30m", Duration::from_secs(5400)),
            ("2m3s", Duration::from_secs(123)),
            ("10us", Duration::from_micros(10)),
            ("10µs", Duration::from_micros(10)),
            ("5ns", Duration::from_nanos(5)),
            ("+1s", Duration::from_secs(1)),
            (".5s", Duration::from_millis(500)),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_go_duration(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn rejects_what_go_rejects() {
        for text in ["", "1", "s", "1d", "1.s.", "-1s", "1m-1s", ".s"] {
            assert!(parse_go_duration(text).is_err(), "{text} should fail");
        }
    }
}
