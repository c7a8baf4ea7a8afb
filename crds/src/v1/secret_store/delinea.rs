//! The Delinea DevOps Secrets Vault provider: `spec.provider.delinea` of a SecretStore.

use crate::meta::ValueOrSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// DelineaProvider provides access to Delinea secrets vault Server.
/// See: https://github.com/DelineaXPM/dsv-sdk-go/blob/main/vault/vault.go.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DelineaProvider {
    /// ClientID is the non-secret part of the credential.
    pub client_id: ValueOrSecretRef,
    /// ClientSecret is the secret part of the credential.
    pub client_secret: ValueOrSecretRef,
    /// Tenant is the chosen hostname / site name.
    pub tenant: String,
    /// URLTemplate
    /// If unset, defaults to "https://%s.secretsvaultcloud.%s/v1/%s%s".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_template: Option<String>,
    /// TLD is based on the server location that was chosen during provisioning.
    /// If unset, defaults to "com".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tld: Option<String>,
}
