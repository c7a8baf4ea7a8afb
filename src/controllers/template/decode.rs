//! `decodingStrategy` and `valuesDecodingStrategy`: provider values and rendered template
//! values decoded as upstream decodes them.

use base64::Engine;
use external_secrets_providers::request::DecodingStrategy;

/// A value a `Base64` or `Base64Url` strategy cannot decode (the value itself is never named).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not standard base64.
    #[error("the value is not valid base64")]
    Base64,
    /// Not URL-safe base64.
    #[error("the value is not valid base64url")]
    Base64Url,
}

/// Applies a decoding strategy; `Auto` keeps values that are not base64.
pub fn decode(strategy: DecodingStrategy, value: Vec<u8>) -> Result<Vec<u8>, DecodeError> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let text = || String::from_utf8_lossy(&value).trim().to_owned();
    match strategy {
        DecodingStrategy::None => Ok(value),
        DecodingStrategy::Base64 => STANDARD.decode(text()).map_err(|_| DecodeError::Base64),
        DecodingStrategy::Base64Url => URL_SAFE.decode(text()).map_err(|_| DecodeError::Base64Url),
        DecodingStrategy::Auto => Ok(STANDARD
            .decode(text())
            .or_else(|_| URL_SAFE.decode(text()))
            .unwrap_or(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_strategies() {
        assert_eq!(
            decode(DecodingStrategy::Base64, b"aGk=".to_vec()).unwrap(),
            b"hi"
        );
        for strategy in [DecodingStrategy::Base64, DecodingStrategy::Base64Url] {
            let error = decode(strategy, b"hunter2-s3cr3t!".to_vec())
                .unwrap_err()
                .to_string();
            assert!(
                error.starts_with("the value is not valid base64") && !error.contains("hunter2"),
                "{error}"
            );
        }
        assert_eq!(
            decode(DecodingStrategy::Base64Url, b"Pz8-".to_vec()).unwrap(),
            b"??>"
        );
        assert_eq!(
            decode(DecodingStrategy::Auto, b"aGk=".to_vec()).unwrap(),
            b"hi"
        );
        assert_eq!(
            decode(DecodingStrategy::Auto, b"plain!".to_vec()).unwrap(),
            b"plain!"
        );
        assert_eq!(
            decode(DecodingStrategy::None, b"aGk=".to_vec()).unwrap(),
            b"aGk="
        );
    }
}
