//! The v1beta1 fake (static, for tests) provider (`spec.provider.fake`), where it differs from v1.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// FakeProviderData defines a key-value pair for the fake provider used in testing.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FakeProviderData {
    pub key: String,
    pub value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// FakeProvider configures a fake provider that returns static values.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FakeProvider {
    pub data: Vec<FakeProviderData>,
}
