//! The fake (static, for tests) provider: `spec.provider.fake` of a SecretStore.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// FakeProvider configures a fake provider that returns static values.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FakeProvider {
    pub data: Vec<FakeProviderData>,
    /// ValidationResult is defined type for the number of validation results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::integer")]
    pub validation_result: Option<i64>,
}

/// FakeProviderData defines a key-value pair with optional version for the fake provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FakeProviderData {
    pub key: String,
    pub value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}
