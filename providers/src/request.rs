//! What a controller asks of a provider: plain Rust request types, free of API-version details.
//!
//! The CRD types (`ExternalSecretDataRemoteRef`, `ExternalSecretFind`, `PushSecretData`, ...) are
//! converted into these once, at the edge (see `convert`), so backends never see empty strings
//! standing for "unset" and never depend on how an API version spells a field.

use std::collections::BTreeMap;

use crate::error::{ProviderError, Result};
use crate::value::{SecretMap, SecretValue};

/// Whether provider-side metadata (tags, labels) is fetched along with a value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MetadataPolicy {
    /// Only the value (upstream's default).
    #[default]
    None,
    /// The value's metadata as well, for providers that support it.
    Fetch,
}

/// How key names returned by find (or a map) are made valid Secret keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ConversionStrategy {
    /// Characters outside `[-._a-zA-Z0-9]` (letters and digits of any script) become `_`.
    #[default]
    Default,
    /// Such characters become `_UXXXX_` with the code point in hex.
    Unicode,
}

/// How a fetched value is decoded before it is written; applied by the controller, carried here
/// so providers that must know (none yet) can.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum DecodingStrategy {
    /// Kept as fetched.
    #[default]
    None,
    /// Base64 or base64url, padded or not, if it decodes; otherwise kept.
    Auto,
    /// Standard base64.
    Base64,
    /// URL-safe base64.
    Base64Url,
}

/// Where one secret lives in the provider: upstream's `ExternalSecretDataRemoteRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct RemoteRef {
    /// The provider's name for the secret.
    pub key: String,
    /// One property of a structured value (a JSON path for most providers).
    pub property: Option<String>,
    /// A specific version, where the provider keeps versions.
    pub version: Option<String>,
    /// Whether to fetch metadata too.
    pub metadata_policy: MetadataPolicy,
    /// How the value is decoded afterwards.
    pub decoding_strategy: DecodingStrategy,
    /// How map keys are converted afterwards.
    pub conversion_strategy: ConversionStrategy,
}

impl RemoteRef {
    /// A reference to `key` with everything else unset.
    pub fn new(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            ..Self::default()
        }
    }

    /// The same reference narrowed to one property.
    #[must_use]
    pub fn with_property(mut self, property: impl Into<String>) -> Self {
        self.property = Some(property.into());
        self
    }

    /// The same reference pinned to one version.
    #[must_use]
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }
}

/// Name criteria of a find.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FindName {
    /// A regular expression (RE2 syntax, unanchored) the secret's name must match.
    pub regexp: String,
}

impl FindName {
    /// The expression compiled (the regex crate bounds its size), refused with upstream's message
    /// when it does not compile: every backend's find by name goes through here.
    pub fn matcher(&self) -> crate::error::Result<regex::Regex> {
        regex::Regex::new(&self.regexp).map_err(|error| {
            crate::error::ProviderError::invalid_request(format!(
                "could not compile find.name.regexp [{}]: {error}",
                self.regexp
            ))
        })
    }
}

/// Which secrets to fetch at once: upstream's `ExternalSecretFind`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Find {
    /// A root path to search under.
    pub path: Option<String>,
    /// Name criteria.
    pub name: Option<FindName>,
    /// Tags every found secret must carry, with these values.
    pub tags: BTreeMap<String, String>,
    /// How the found names are turned into Secret keys.
    pub conversion_strategy: ConversionStrategy,
    /// How the values are decoded afterwards.
    pub decoding_strategy: DecodingStrategy,
}

impl Find {
    /// A find by name regular expression only.
    pub fn by_name(regexp: impl Into<String>) -> Self {
        Self {
            name: Some(FindName {
                regexp: regexp.into(),
            }),
            ..Self::default()
        }
    }
}

/// Where a pushed secret lives in the provider: upstream's `PushSecretRemoteRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushRemoteRef {
    /// The provider's name for the secret.
    pub remote_key: String,
    /// One property inside the remote secret, for providers that store structured values.
    pub property: Option<String>,
}

impl PushRemoteRef {
    /// A reference to `remote_key` with no property.
    pub fn new(remote_key: impl Into<String>) -> Self {
        Self {
            remote_key: remote_key.into(),
            property: None,
        }
    }
}

/// What a push target may copy from the source Secret besides its data (the kubernetes provider
/// copies labels, annotations and type, as upstream does).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMetadata {
    /// The source Secret's labels.
    pub labels: BTreeMap<String, String>,
    /// The source Secret's annotations.
    pub annotations: BTreeMap<String, String>,
    /// The source Secret's `type`, if set.
    pub secret_type: Option<String>,
}

/// One value to push: the source Secret's data plus upstream's `PushSecretData`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PushRequest {
    /// All data of the source Kubernetes Secret.
    pub secret_data: SecretMap,
    /// Labels, annotations and type of the source Secret (empty when the caller has none).
    pub source_metadata: SourceMetadata,
    /// The key of `secret_data` to push; `None` pushes the whole Secret as a JSON object.
    pub secret_key: Option<String>,
    /// Where to push.
    pub remote_ref: PushRemoteRef,
    /// Provider-specific metadata (`PushSecretData.metadata`).
    pub metadata: Option<serde_json::Value>,
}

impl PushRequest {
    /// Pushes `secret_data[secret_key]` to `remote_key`.
    pub fn single(
        secret_data: SecretMap,
        secret_key: impl Into<String>,
        remote_key: impl Into<String>,
    ) -> Self {
        Self {
            secret_data,
            source_metadata: SourceMetadata::default(),
            secret_key: Some(secret_key.into()),
            remote_ref: PushRemoteRef::new(remote_key),
            metadata: None,
        }
    }

    /// The same request carrying the source Secret's labels, annotations and type.
    #[must_use]
    pub fn with_source_metadata(mut self, source_metadata: SourceMetadata) -> Self {
        self.source_metadata = source_metadata;
        self
    }

    /// The bytes to push, as upstream extracts them: the selected key's value, or with no key the
    /// whole Secret as a JSON object of strings (keys sorted).
    pub fn value(&self) -> Result<SecretValue> {
        match &self.secret_key {
            Some(key) => self.secret_data.get(key).cloned().ok_or_else(|| {
                ProviderError::invalid_request(format!(
                    "failed to find secret key in secret with key: {key}"
                ))
            }),
            None => {
                let object: BTreeMap<&str, String> = self
                    .secret_data
                    .iter()
                    .map(|(key, value)| {
                        (
                            key.as_str(),
                            String::from_utf8_lossy(value.expose()).into_owned(),
                        )
                    })
                    .collect();
                let json = serde_json::to_vec(&object).map_err(|error| {
                    ProviderError::invalid_request(format!(
                        "failed to marshal secret data: {error}"
                    ))
                })?;
                Ok(SecretValue::new(json))
            }
        }
    }
}

/// Applies a conversion strategy to every key of a map, as upstream's `ConvertKeys` does; two
/// keys that convert to the same name are an error rather than a silent overwrite.
pub fn convert_keys(strategy: ConversionStrategy, input: SecretMap) -> Result<SecretMap> {
    let mut output = SecretMap::new();
    for (key, value) in input {
        let converted = convert_key(strategy, &key);
        if output.contains_key(&converted) {
            return Err(ProviderError::invalid_data(format!(
                "secret name collision during conversion: {converted}"
            )));
        }
        output.insert(converted, value);
    }
    Ok(output)
}

/// Converts one key name: characters other than letters, digits, `-`, `.` and `_` are replaced.
pub fn convert_key(strategy: ConversionStrategy, key: &str) -> String {
    let mut converted = String::with_capacity(key.len());
    for character in key.chars() {
        if character.is_alphanumeric() || matches!(character, '-' | '.' | '_') {
            converted.push(character);
            continue;
        }
        match strategy {
            ConversionStrategy::Default => converted.push('_'),
            ConversionStrategy::Unicode => {
                converted.push_str(&format!("_U{:04x}_", u32::from(character)));
            }
        }
    }
    converted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> SecretMap {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), SecretValue::from(*value)))
            .collect()
    }

    #[test]
    fn push_value_selects_a_key_or_serialises_the_whole_secret() {
        let secret = data(&[("user", "admin"), ("pass", "p\"w")]);
        let one = PushRequest::single(secret.clone(), "user", "remote");
        assert_eq!(one.value().unwrap().expose(), b"admin");

        let whole = PushRequest {
            secret_key: None,
            ..one.clone()
        };
        assert_eq!(
            whole.value().unwrap().expose_str(),
            Some(r#"{"pass":"p\"w","user":"admin"}"#)
        );

        let missing = PushRequest::single(secret, "nope", "remote");
        let error = missing.value().unwrap_err();
        assert_eq!(
            error.message(),
            "failed to find secret key in secret with key: nope"
        );
    }

    #[test]
    fn keys_are_converted_like_upstream() {
        assert_eq!(
            convert_key(ConversionStrategy::Default, "a/b c.d-é_1"),
            "a_b_c.d-é_1"
        );
        assert_eq!(
            convert_key(ConversionStrategy::Unicode, "a/b@"),
            "a_U002f_b_U0040_"
        );
    }

    #[test]
    fn colliding_conversions_are_an_error() {
        let error = convert_keys(
            ConversionStrategy::Default,
            data(&[("a/b", "1"), ("a_b", "2")]),
        )
        .unwrap_err();
        assert_eq!(
            error.message(),
            "secret name collision during conversion: a_b"
        );
    }
}
