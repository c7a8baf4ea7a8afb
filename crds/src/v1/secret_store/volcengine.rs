//! The Volcengine KMS provider: `spec.provider.volcengine` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// VolcengineProvider defines the configuration for the Volcengine provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolcengineProvider {
    /// Region specifies the Volcengine region to connect to.
    pub region: String,
    /// Auth defines the authentication method to use.
    /// If not specified, the provider will try to use IRSA (IAM Role for Service Account).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<VolcengineAuth>,
}

/// VolcengineAuth defines the authentication method for the Volcengine provider.
/// Only one of the fields should be set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolcengineAuth {
    /// SecretRef defines the static credentials to use for authentication.
    /// If not set, IRSA is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<VolcengineAuthSecretRef>,
}

/// VolcengineAuthSecretRef defines the secret reference for static credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolcengineAuthSecretRef {
    /// AccessKeyID is the reference to the secret containing the Access Key ID.
    #[serde(rename = "accessKeyID")]
    pub access_key_id: SecretKeySelector,
    /// SecretAccessKey is the reference to the secret containing the Secret Access Key.
    pub secret_access_key: SecretKeySelector,
    /// Token is the reference to the secret containing the STS(Security Token Service) Token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<SecretKeySelector>,
}
