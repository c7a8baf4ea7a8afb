//! The 1Password Connect provider: `spec.provider.onepassword` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// OnePasswordProvider configures a store to sync secrets using the 1Password Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OnePasswordProvider {
    /// Auth defines the information necessary to authenticate against OnePassword Connect Server
    pub auth: OnePasswordAuth,
    /// ConnectHost defines the OnePassword Connect Server to connect to
    pub connect_host: String,
    /// Vaults defines which OnePassword vaults to search in which order
    #[schemars(extend("additionalProperties" = {"type": "integer"}))]
    pub vaults: BTreeMap<String, i64>,
}

/// OnePasswordAuth contains a secretRef for credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OnePasswordAuth {
    /// OnePasswordAuthSecretRef holds secret references for 1Password credentials.
    pub secret_ref: OnePasswordAuthSecretRef,
}

/// OnePasswordAuthSecretRef holds secret references for 1Password credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OnePasswordAuthSecretRef {
    /// The ConnectToken is used for authentication to a 1Password Connect Server.
    pub connect_token_secret_ref: SecretKeySelector,
}
