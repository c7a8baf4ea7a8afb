//! The `Password` generator: random passwords.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PasswordSpec controls the behavior of the password generator.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "Password",
    plural = "passwords",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "Password generates a random password based on the\nconfiguration parameters in spec.\nYou can specify the length, characterset and other attributes."
)]
#[serde(rename_all = "camelCase")]
// Upstream requires these fields although they have defaults; the serde defaults (which keep
// deserialization lenient) would otherwise drop them from the schema's `required`.
#[schemars(extend("required" = ["allowRepeat", "length", "noUpper"]))]
pub struct PasswordSpec {
    /// Length of the password to be generated.
    /// Defaults to 24
    #[serde(default = "default_length")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub length: i64,
    /// Digits specifies the number of digits in the generated
    /// password. If omitted it defaults to 25% of the length of the password
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub digits: Option<i64>,
    /// Symbols specifies the number of symbol characters in the generated
    /// password. If omitted it defaults to 25% of the length of the password
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub symbols: Option<i64>,
    /// SymbolCharacters specifies the special characters that should be used
    /// in the generated password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol_characters: Option<String>,
    /// Set NoUpper to disable uppercase characters
    #[serde(default)]
    pub no_upper: bool,
    /// set AllowRepeat to true to allow repeating characters.
    #[serde(default)]
    pub allow_repeat: bool,
    /// SecretKeys defines the keys that will be populated with generated passwords.
    /// Defaults to "password" when not set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1))]
    pub secret_keys: Vec<String>,
    /// Encoding specifies the encoding of the generated password.
    /// Valid values are:
    /// - "raw" (default): no encoding
    /// - "base64": standard base64 encoding
    /// - "base64url": base64url encoding
    /// - "base32": base32 encoding
    /// - "hex": hexadecimal encoding
    #[serde(default)]
    pub encoding: PasswordEncoding,
}

impl Default for PasswordSpec {
    fn default() -> Self {
        Self {
            allow_repeat: Default::default(),
            digits: Default::default(),
            encoding: Default::default(),
            length: default_length(),
            no_upper: Default::default(),
            secret_keys: Default::default(),
            symbol_characters: Default::default(),
            symbols: Default::default(),
        }
    }
}

/// The values of `encoding` in [`PasswordSpec`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum PasswordEncoding {
    #[serde(rename = "base64")]
    Base64,
    #[serde(rename = "base64url")]
    Base64url,
    #[serde(rename = "base32")]
    Base32,
    #[serde(rename = "hex")]
    Hex,
    #[default]
    #[serde(rename = "raw")]
    Raw,
}

fn default_length() -> i64 {
    24
}
