//! The Previder Secrets Manager provider: `spec.provider.previder` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PreviderProvider configures a store to sync secrets using the Previder Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PreviderProvider {
    /// PreviderAuth contains a secretRef for credentials.
    pub auth: PreviderAuth,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_uri: Option<String>,
}

/// PreviderAuth contains a secretRef for credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PreviderAuth {
    /// PreviderAuthSecretRef holds secret references for Previder Vault credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<PreviderAuthSecretRef>,
}

/// PreviderAuthSecretRef holds secret references for Previder Vault credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PreviderAuthSecretRef {
    /// The AccessToken is used for authentication
    pub access_token: SecretKeySelector,
}
