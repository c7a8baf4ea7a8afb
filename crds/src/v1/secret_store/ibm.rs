//! The IBM Cloud Secrets Manager provider: `spec.provider.ibm` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// IBMProvider configures a store to sync secrets using a IBM Cloud Secrets Manager
/// backend.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct IbmProvider {
    /// Auth configures how secret-manager authenticates with the IBM secrets manager.
    pub auth: IbmAuth,
    /// ServiceURL is the Endpoint URL that is specific to the Secrets Manager service instance
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_url: Option<String>,
}

/// IBMAuth defines authentication options for connecting to IBM Cloud Secrets Manager.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct IbmAuth {
    /// IBMAuthSecretRef contains the secret reference for IBM Cloud API key authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<IbmAuthSecretRef>,
    /// IBMAuthContainerAuth defines container-based authentication with IAM Trusted Profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_auth: Option<IbmAuthContainerAuth>,
}

/// IBMAuthContainerAuth defines container-based authentication with IAM Trusted Profile.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct IbmAuthContainerAuth {
    /// the IBM Trusted Profile
    pub profile: String,
    /// Location the token is mounted on the pod
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iam_endpoint: Option<String>,
}

/// IBMAuthSecretRef contains the secret reference for IBM Cloud API key authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct IbmAuthSecretRef {
    /// The SecretAccessKey is used for authentication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_api_key_secret_ref: Option<SecretKeySelector>,
    /// The IAM endpoint used to obain a token
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iam_endpoint: Option<String>,
}
