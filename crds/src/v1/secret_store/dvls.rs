//! The Devolutions Server (DVLS) provider: `spec.provider.dvls` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// DVLSProvider configures a store to sync secrets using Devolutions Server.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DvlsProvider {
    /// ServerURL is the DVLS instance URL (e.g., https://dvls.example.com).
    pub server_url: String,
    /// Vault is the name or UUID of the vault to fetch secrets from.
    /// When omitted, the vault must be specified in the secret key using the legacy format "<vault-id>/<entry-id>".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vault: Option<String>,
    /// Insecure allows connecting to DVLS over plain HTTP.
    /// This is NOT RECOMMENDED for production use.
    /// Set to true only if you understand the security implications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// Auth defines the authentication method to use.
    pub auth: DvlsAuth,
}

/// DVLSAuth defines the authentication method for the DVLS provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DvlsAuth {
    /// SecretRef contains the Application ID and Application Secret for authentication.
    pub secret_ref: DvlsAuthSecretRef,
}

/// DVLSAuthSecretRef defines the secret references for DVLS authentication credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DvlsAuthSecretRef {
    /// AppID is the reference to the secret containing the Application ID.
    pub app_id: SecretKeySelector,
    /// AppSecret is the reference to the secret containing the Application Secret.
    pub app_secret: SecretKeySelector,
}
