//! Secret bytes that cannot leak through formatting.
//!
//! Every value a provider returns or receives travels as a [`SecretValue`]: its `Debug` and
//! `Display` print only a placeholder, so a value that ends up in a `tracing` field, an error
//! message built with `format!` or a test failure shows `<redacted>` instead of the secret.
//! Reading the bytes takes an explicit [`SecretValue::expose`].

use std::collections::BTreeMap;
use std::fmt;

/// Secret values by key: what `get_secret_map` and `get_all_secrets` return.
pub type SecretMap = BTreeMap<String, SecretValue>;

/// The bytes of a secret, redacted when formatted.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretValue(Vec<u8>);

impl SecretValue {
    /// Wraps bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Self(bytes.into())
    }

    /// The bytes. Named so every place that reads a secret is easy to find.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// The bytes as UTF-8 text, if they are.
    pub fn expose_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The bytes, consuming the wrapper.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// Number of bytes (not secret: sizes are shown in debug output).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "SecretValue(<redacted {} bytes>)", self.0.len())
    }
}

impl fmt::Display for SecretValue {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("<redacted>")
    }
}

impl From<Vec<u8>> for SecretValue {
    fn from(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }
}

impl From<String> for SecretValue {
    fn from(text: String) -> Self {
        Self(text.into_bytes())
    }
}

impl From<&str> for SecretValue {
    fn from(text: &str) -> Self {
        Self(text.as_bytes().to_vec())
    }
}

impl From<&[u8]> for SecretValue {
    fn from(bytes: &[u8]) -> Self {
        Self(bytes.to_vec())
    }
}

impl From<k8s_openapi::ByteString> for SecretValue {
    fn from(bytes: k8s_openapi::ByteString) -> Self {
        Self(bytes.0)
    }
}

impl From<SecretValue> for k8s_openapi::ByteString {
    fn from(value: SecretValue) -> Self {
        k8s_openapi::ByteString(value.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_never_shows_the_bytes() {
        let value = SecretValue::from("hunter2");
        assert_eq!(format!("{value}"), "<redacted>");
        assert_eq!(format!("{value:?}"), "SecretValue(<redacted 7 bytes>)");
        let map: SecretMap = [("password".to_owned(), value.clone())].into();
        assert!(!format!("{map:?}").contains("hunter2"));
        assert_eq!(value.expose(), b"hunter2");
        assert_eq!(value.expose_str(), Some("hunter2"));
    }
}
