//! The v1beta1 IBM Cloud Secrets Manager provider (`spec.provider.ibm`), where it differs from v1.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::ibm::IbmAuthContainerAuth;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// IBMProvider configures a store to sync secrets using a IBM Cloud Secrets Manager backend.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct IbmProvider {
    /// Auth configures how secret-manager authenticates with the IBM secrets manager.
    pub auth: IbmAuth,
    /// ServiceURL is the Endpoint URL that is specific to the Secrets Manager service instance
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_url: Option<String>,
}

/// IBMAuth defines the authentication methods for the IBM Cloud Secrets Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct IbmAuth {
    /// IBMAuthSecretRef defines a reference to a secret containing credentials for the IBM provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<IbmAuthSecretRef>,
    /// IBMAuthContainerAuth defines authentication using IBM Container-based auth with IAM Trusted Profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_auth: Option<IbmAuthContainerAuth>,
}

/// IBMAuthSecretRef defines a reference to a secret containing credentials for the IBM provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct IbmAuthSecretRef {
    /// The SecretAccessKey is used for authentication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_api_key_secret_ref: Option<SecretKeySelector>,
}
