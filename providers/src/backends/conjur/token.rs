//! Conjur access tokens: the signed JSON an authenticator answers (`{"protected", "payload",
//! "signature"}`, the payload base64 JSON with `iat` and optionally `exp`), sent base64-encoded
//! in `Authorization: Token token="..."`. Renewed as upstream's client renews them: after 85% of
//! their lifetime, or after five minutes when they carry no expiry.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::error::{ProviderError, Result};
use crate::value::SecretValue;

/// Lifetime assumed for a token without `exp` (upstream's).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// An access token and when to renew it.
pub struct AccessToken {
    /// The token as the `Authorization` header carries it (base64 of the raw JSON).
    pub header_value: SecretValue,
    /// When to authenticate again.
    pub renew_at: Instant,
}

/// The parts of the token's JSON checked here.
#[derive(Deserialize)]
struct Signed {
    #[serde(rename = "protected")]
    _protected: IgnoredAny,
    payload: String,
    #[serde(rename = "signature")]
    _signature: IgnoredAny,
}

/// The payload's times.
#[derive(Deserialize)]
struct Times {
    iat: f64,
    #[serde(default)]
    exp: Option<f64>,
}

impl AccessToken {
    /// Reads an authenticator's answer `raw`, refused with upstream's messages when it is not a
    /// Conjur access token.
    pub fn parse(raw: &SecretValue, received: Instant) -> Result<Self> {
        let invalid =
            |what: &str| ProviderError::invalid_data(format!("failed to authenticate: {what}"));
        let signed: Signed = serde_json::from_slice(raw.expose())
            .map_err(|_| invalid("Unrecognized token format"))?;
        let payload = decode(&signed.payload)
            .ok_or_else(|| invalid("access token field 'payload' is not valid base64"))?;
        let times: Times = serde_json::from_slice(&payload)
            .map_err(|_| invalid("access token field 'payload' does not contain 'iat'"))?;
        let lifetime = match times.exp {
            Some(exp) if exp < times.iat => {
                return Err(invalid("access token expired before it was issued"));
            }
            Some(exp) => {
                Duration::try_from_secs_f64((exp - times.iat) * 0.85).unwrap_or(DEFAULT_LIFETIME)
            }
            None => DEFAULT_LIFETIME,
        };
        let encoded = base64::engine::general_purpose::STANDARD.encode(raw.expose());
        Ok(Self {
            header_value: SecretValue::new(encoded),
            renew_at: received.checked_add(lifetime).unwrap_or(received),
        })
    }

    /// Whether the token is still to be used at `now`.
    pub fn fresh(&self, now: Instant) -> bool {
        now < self.renew_at
    }
}

/// Base64 in either alphabet, padded or not (Conjur's payloads are URL-safe; upstream's client
/// reads standard).
fn decode(text: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(payload: &str) -> SecretValue {
        let payload = base64::engine::general_purpose::URL_SAFE.encode(payload);
        SecretValue::new(format!(
            r#"{{"protected":"e30=","payload":"{payload}","signature":"c2ln"}}"#
        ))
    }

    #[test]
    fn tokens_are_renewed_after_most_of_their_lifetime() {
        let now = Instant::now();
        let parsed =
            AccessToken::parse(&token(r#"{"sub":"host/a","iat":1000,"exp":1480}"#), now).unwrap();
        assert_eq!(parsed.renew_at, now + Duration::from_secs(408));
        assert!(parsed.fresh(now));
        assert!(!parsed.fresh(now + Duration::from_secs(408)));
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(parsed.header_value.expose())
            .unwrap();
        assert_eq!(
            decoded,
            token(r#"{"sub":"host/a","iat":1000,"exp":1480}"#).expose()
        );
        let no_expiry = AccessToken::parse(&token(r#"{"iat":5}"#), now).unwrap();
        assert_eq!(no_expiry.renew_at, now + DEFAULT_LIFETIME);
    }

    #[test]
    fn other_answers_are_refused_without_quoting_them() {
        let now = Instant::now();
        for (raw, message) in [
            ("s3cret", "Unrecognized token format"),
            (
                r#"{"protected":"","payload":"!!","signature":""}"#,
                "is not valid base64",
            ),
            (
                r#"{"protected":"","payload":"e30=","signature":""}"#,
                "does not contain 'iat'",
            ),
        ] {
            let error = AccessToken::parse(&SecretValue::new(raw), now)
                .err()
                .unwrap();
            assert!(error.message().contains(message), "{}", error.message());
            assert!(!error.message().contains("s3cret"));
        }
        let backwards = token(r#"{"iat":10,"exp":5}"#);
        assert!(AccessToken::parse(&backwards, now).is_err());
    }
}
