//! The Fortanix Data Security Manager provider: `spec.provider.fortanix` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// FortanixProvider provides access to Fortanix SDKMS API using the provided credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FortanixProvider {
    /// APIURL is the URL of SDKMS API. Defaults to `sdkms.fortanix.com`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// APIKey is the API token to access SDKMS Applications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<FortanixProviderSecretRef>,
}

/// FortanixProviderSecretRef is a secret reference containing the SDKMS API Key.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FortanixProviderSecretRef {
    /// SecretRef is a reference to a secret containing the SDKMS API Key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}
