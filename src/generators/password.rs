//! The `Password` generator, as upstream's (sethvargo/go-password underneath): `length`
//! (default 24) characters of which `digits` and `symbols` (default 25 % of the length each)
//! are digits and symbols from `symbolCharacters`, the rest letters (lower case only with
//! `noUpper`), every character at a random place and, unless `allowRepeat`, used once. One
//! password per `secretKeys` entry (default `password`), encoded as `encoding` says.
//!
//! Every size is bounded before anything is allocated ([`MAX_LENGTH`], [`MAX_KEYS`],
//! [`MAX_SYMBOL_BYTES`]) and the counts are combined without overflow. Characters are drawn
//! per class (without replacement unless `allowRepeat`, so a symbol set with repeated or
//! already-used characters cannot loop forever) and then shuffled, which places every character
//! at a uniformly random position in linear time, as upstream's random inserts do in quadratic.

use std::collections::BTreeMap;

use async_trait::async_trait;
use base64::Engine as _;
use external_secrets_crds::generators::{Password, PasswordEncoding, PasswordSpec};
use external_secrets_providers::credentials::CredentialResolver;

use super::random::{self, RandomError};
use super::{Error, Generated, Generator};

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &str = "0123456789";
/// Upstream's default `symbolCharacters`.
const SYMBOLS: &str = r#"~!@#$%^&*()_+`-={}|[]\:"<>?,./"#;
const DEFAULT_LENGTH: i64 = 24;
/// The longest password generated.
pub const MAX_LENGTH: i64 = 10_000;
/// The most `secretKeys` (passwords per generation).
pub const MAX_KEYS: usize = 100;
/// The longest `symbolCharacters`, in bytes.
pub const MAX_SYMBOL_BYTES: usize = 1_024;

/// Why no password could be generated: a spec field out of bounds (upstream's messages where
/// upstream has the check), or the random source failed.
#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    /// `length` above [`MAX_LENGTH`].
    #[error("length must be at most {MAX_LENGTH}")]
    TooLong,
    /// More `secretKeys` than [`MAX_KEYS`].
    #[error("secretKeys must have at most {MAX_KEYS} entries")]
    TooManyKeys,
    /// `symbolCharacters` longer than [`MAX_SYMBOL_BYTES`].
    #[error("symbolCharacters must be at most {MAX_SYMBOL_BYTES} bytes")]
    TooManySymbols,
    /// An empty or repeated `secretKeys` entry.
    #[error("secretKeys must be non-empty and unique")]
    Keys,
    /// `digits` + `symbols` exceed `length`.
    #[error("number of digits and symbols must be less than total length")]
    TooShort,
    /// Negative `digits`.
    #[error("digits must not be negative")]
    NegativeDigits,
    /// Negative `symbols`.
    #[error("symbols must not be negative")]
    NegativeSymbols,
    /// A class (`letters`, `digits`, `symbols`) has no characters to draw from.
    #[error("no characters available for {0}")]
    NoCharacters(&'static str),
    /// A class has fewer distinct characters than asked for, without `allowRepeat`.
    #[error("number of {0} exceeds available {0} and repeats are not allowed")]
    Exhausted(&'static str),
    /// A drawn index fell outside its set.
    #[error("random index out of range")]
    OutOfRange,
    /// The random source failed.
    #[error(transparent)]
    Random(#[from] RandomError),
}

/// The passwords `spec` asks for, by key.
pub fn generate(spec: &PasswordSpec) -> Result<BTreeMap<String, Vec<u8>>, PasswordError> {
    let length = if spec.length > 0 {
        spec.length
    } else {
        DEFAULT_LENGTH
    };
    // Upstream computes the defaults as int(float32(length) * 0.25).
    if length > MAX_LENGTH {
        return Err(PasswordError::TooLong);
    }
    if spec.secret_keys.len() > MAX_KEYS {
        return Err(PasswordError::TooManyKeys);
    }
    let quarter = length / 4;
    let digits = spec.digits.unwrap_or(quarter);
    let symbols = spec.symbols.unwrap_or(quarter);
    let symbol_set = spec.symbol_characters.as_deref().unwrap_or(SYMBOLS);
    if symbol_set.len() > MAX_SYMBOL_BYTES {
        return Err(PasswordError::TooManySymbols);
    }
    let keys = if spec.secret_keys.is_empty() {
        vec!["password".to_owned()]
    } else {
        spec.secret_keys.clone()
    };
    let mut seen = std::collections::BTreeSet::new();
    if keys.iter().any(|key| key.is_empty() || !seen.insert(key)) {
        return Err(PasswordError::Keys);
    }
    let letters = if spec.no_upper {
        LOWER.to_owned()
    } else {
        format!("{LOWER}{UPPER}")
    };
    let shape = Shape {
        letters: count(
            length
                .checked_sub(digits)
                .and_then(|rest| rest.checked_sub(symbols))
                .unwrap_or(-1),
            PasswordError::TooShort,
        )?,
        digits: count(digits, PasswordError::NegativeDigits)?,
        symbols: count(symbols, PasswordError::NegativeSymbols)?,
        allow_repeat: spec.allow_repeat,
    };
    keys.into_iter()
        .map(|key| {
            let password = shape.password(&letters, symbol_set)?;
            Ok((key, encode(password.as_bytes(), spec.encoding)))
        })
        .collect()
}

fn count(value: i64, problem: PasswordError) -> Result<usize, PasswordError> {
    usize::try_from(value).map_err(|_| problem)
}

/// How many characters of each class a password has.
struct Shape {
    letters: usize,
    digits: usize,
    symbols: usize,
    allow_repeat: bool,
}

impl Shape {
    /// One password: each class's characters drawn, then all of them shuffled.
    fn password(&self, letters: &str, symbols: &str) -> Result<String, PasswordError> {
        let mut password: Vec<char> = Vec::new();
        let mut used = std::collections::BTreeSet::new();
        for (needed, set, class) in [
            (self.letters, letters, "letters"),
            (self.digits, DIGITS, "digits"),
            (self.symbols, symbols, "symbols"),
        ] {
            let mut set: Vec<char> = set.chars().collect();
            if !self.allow_repeat {
                set.sort_unstable();
                set.dedup();
                set.retain(|character| !used.contains(character));
            }
            if needed > 0 && set.is_empty() {
                return Err(PasswordError::NoCharacters(class));
            }
            if !self.allow_repeat && needed > set.len() {
                return Err(PasswordError::Exhausted(class));
            }
            for _ in 0..needed {
                let at = random::index(set.len())?;
                let character = if self.allow_repeat {
                    set.get(at).copied()
                } else {
                    (at < set.len()).then(|| set.swap_remove(at))
                }
                .ok_or(PasswordError::OutOfRange)?;
                used.insert(character);
                password.push(character);
            }
        }
        // Fisher-Yates: every order equally likely.
        for last in (1..password.len()).rev() {
            password.swap(last, random::index(last + 1)?.min(last));
        }
        Ok(password.into_iter().collect())
    }
}

/// `encoding` applied to a password (upstream: raw, base64, base64url, base32, hex).
fn encode(password: &[u8], encoding: PasswordEncoding) -> Vec<u8> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    match encoding {
        PasswordEncoding::Raw => password.to_vec(),
        PasswordEncoding::Base64 => STANDARD.encode(password).into_bytes(),
        PasswordEncoding::Base64url => URL_SAFE.encode(password).into_bytes(),
        PasswordEncoding::Base32 => data_encoding::BASE32.encode(password).into_bytes(),
        PasswordEncoding::Hex => data_encoding::HEXLOWER.encode(password).into_bytes(),
    }
}

/// Generates passwords.
pub struct PasswordGenerator;

#[async_trait]
impl Generator for PasswordGenerator {
    type Object = Password;
    type Spec = PasswordSpec;
    const CLUSTER_FIELD: &'static str = "passwordSpec";

    async fn generate(
        &self,
        spec: PasswordSpec,
        _: CredentialResolver,
    ) -> Result<Generated, Error> {
        Ok(generate(&spec)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(json: serde_json::Value) -> PasswordSpec {
        serde_json::from_value(json).unwrap()
    }

    fn text(map: &BTreeMap<String, Vec<u8>>, key: &str) -> String {
        String::from_utf8(map[key].clone()).unwrap()
    }

    #[test]
    fn defaults_give_24_characters_with_a_quarter_digits_and_symbols() {
        let generated = generate(&spec(json!({}))).unwrap();
        let password = text(&generated, "password");
        assert_eq!(password.chars().count(), 24);
        assert_eq!(password.chars().filter(char::is_ascii_digit).count(), 6);
        assert_eq!(password.chars().filter(|c| SYMBOLS.contains(*c)).count(), 6);
        assert_eq!(
            password.chars().filter(char::is_ascii_alphabetic).count(),
            12
        );
        let unique: std::collections::BTreeSet<char> = password.chars().collect();
        assert_eq!(unique.len(), 24, "no repeats by default");
        assert_ne!(
            password,
            text(&generate(&spec(json!({}))).unwrap(), "password")
        );
    }

    #[test]
    fn classes_symbol_set_keys_and_encodings_follow_the_spec() {
        let generated = generate(&spec(json!({"length": 40, "digits": 0, "symbols": 5,
            "symbolCharacters": "-", "noUpper": true, "allowRepeat": true,
            "secretKeys": ["a", "b"]})))
        .unwrap();
        for key in ["a", "b"] {
            let password = text(&generated, key);
            assert_eq!(password.len(), 40);
            assert_eq!(password.matches('-').count(), 5);
            assert!(
                password.chars().all(|c| c == '-' || c.is_ascii_lowercase()),
                "{password}"
            );
        }
        let hex = generate(&spec(json!({"length": 8, "encoding": "hex"}))).unwrap();
        assert_eq!(text(&hex, "password").len(), 16);
        let base64 = generate(&spec(json!({"length": 12, "encoding": "base64"}))).unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(text(&base64, "password"))
            .unwrap();
        assert_eq!(decoded.len(), 12);
    }

    #[test]
    fn impossible_specs_are_refused_with_upstreams_messages() {
        let too_many = generate(&spec(json!({"length": 4, "digits": 3, "symbols": 3})))
            .unwrap_err()
            .to_string();
        assert_eq!(
            too_many,
            "number of digits and symbols must be less than total length"
        );
        let digits = generate(&spec(json!({"length": 20, "digits": 11, "symbols": 0})))
            .unwrap_err()
            .to_string();
        assert!(digits.contains("repeats are not allowed"), "{digits}");
        let keys = generate(&spec(json!({"secretKeys": ["a", "a"]})))
            .unwrap_err()
            .to_string();
        assert_eq!(keys, "secretKeys must be non-empty and unique");
    }

    #[test]
    fn hostile_sizes_are_refused_before_allocating_and_never_overflow() {
        let long = generate(&spec(json!({"length": i64::MAX})))
            .unwrap_err()
            .to_string();
        assert_eq!(long, "length must be at most 10000");
        let keys: Vec<String> = (0..=MAX_KEYS).map(|n| n.to_string()).collect();
        let many = generate(&spec(json!({"secretKeys": keys})))
            .unwrap_err()
            .to_string();
        assert_eq!(many, "secretKeys must have at most 100 entries");
        let symbols = "!".repeat(MAX_SYMBOL_BYTES + 1);
        let wide = generate(&spec(json!({"symbolCharacters": symbols})))
            .unwrap_err()
            .to_string();
        assert_eq!(wide, "symbolCharacters must be at most 1024 bytes");
        for (digits, symbols) in [(i64::MIN, 0), (0, i64::MIN), (i64::MAX, i64::MAX), (-1, 1)] {
            let error = generate(&spec(json!({"length": 10, "digits": digits,
                "symbols": symbols})))
            .unwrap_err()
            .to_string();
            assert!(!error.is_empty());
        }
    }

    #[test]
    fn the_largest_password_is_generated_with_every_class_counted() {
        let generated = generate(&spec(json!({"length": MAX_LENGTH, "allowRepeat": true,
            "secretKeys": ["a", "b", "c"]})))
        .unwrap();
        let password = text(&generated, "c");
        assert_eq!(password.chars().count(), 10_000);
        assert_eq!(password.chars().filter(char::is_ascii_digit).count(), 2_500);
    }

    #[test]
    fn repeated_or_overlapping_symbol_characters_cannot_loop_forever() {
        let repeated = generate(&spec(json!({"length": 8, "digits": 0, "symbols": 4,
            "symbolCharacters": "!!!!"})))
        .unwrap_err()
        .to_string();
        assert!(repeated.contains("repeats are not allowed"), "{repeated}");
        let overlapping = generate(&spec(json!({"length": 30, "digits": 0, "symbols": 4,
            "symbolCharacters": "abcd!?", "noUpper": true})))
        .unwrap_err()
        .to_string();
        assert!(
            overlapping.contains("repeats are not allowed"),
            "{overlapping}"
        );
        // All 26 letters are drawn first, so only `!` and `?` remain for the symbols.
        let fits = generate(&spec(json!({"length": 28, "digits": 0, "symbols": 2,
            "symbolCharacters": "ab!?", "noUpper": true})))
        .unwrap();
        let unique: std::collections::BTreeSet<char> = text(&fits, "password").chars().collect();
        assert_eq!(unique.len(), 28, "no repeats across classes");
        assert!(unique.contains(&'!') && unique.contains(&'?'));
    }
}
