//! The senhasegura DevOps Secrets Management provider: `spec.provider.senhasegura` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SenhaseguraProvider setup a store to sync secrets with senhasegura.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SenhaseguraProvider {
    /// URL of senhasegura
    pub url: String,
    /// Module defines which senhasegura module should be used to get secrets
    pub module: String,
    /// Auth defines parameters to authenticate in senhasegura
    pub auth: SenhaseguraAuth,
    /// IgnoreSslCertificate defines if SSL certificate must be ignored
    #[serde(default)]
    pub ignore_ssl_certificate: bool,
}

/// SenhaseguraAuth tells the controller how to do auth in senhasegura.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SenhaseguraAuth {
    pub client_id: String,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub client_secret_secret_ref: SecretKeySelector,
}
