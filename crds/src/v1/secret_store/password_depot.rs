//! The Password Depot provider: `spec.provider.passworddepot` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PasswordDepotProvider configures a store to sync secrets with a Password Depot instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PasswordDepotProvider {
    /// URL configures the Password Depot instance URL.
    pub host: String,
    /// Database to use as source
    pub database: String,
    /// Auth configures how secret-manager authenticates with a Password Depot instance.
    pub auth: PasswordDepotAuth,
}

/// PasswordDepotAuth defines the authentication method for the Password Depot provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PasswordDepotAuth {
    /// PasswordDepotSecretRef contains the secret reference for Password Depot authentication.
    pub secret_ref: PasswordDepotSecretRef,
}

/// PasswordDepotSecretRef contains the secret reference for Password Depot authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PasswordDepotSecretRef {
    /// Username / Password is used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials: Option<SecretKeySelector>,
}
