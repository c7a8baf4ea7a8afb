//! The Bitwarden Secrets Manager provider: `spec.provider.bitwardensecretsmanager` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BitwardenSecretsManagerProvider configures a store to sync secrets with a Bitwarden Secrets Manager instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BitwardenSecretsManagerProvider {
    #[serde(rename = "apiURL", skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    #[serde(rename = "identityURL", skip_serializing_if = "Option::is_none")]
    pub identity_url: Option<String>,
    #[serde(
        rename = "bitwardenServerSDKURL",
        skip_serializing_if = "Option::is_none"
    )]
    pub bitwarden_server_sdkurl: Option<String>,
    /// Base64 encoded certificate for the bitwarden server sdk. The sdk MUST run with HTTPS to make sure no MITM attack
    /// can be performed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    /// see: https://external-secrets.io/latest/spec/#external-secrets.io/v1alpha1.CAProvider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
    /// OrganizationID determines which organization this secret store manages.
    #[serde(rename = "organizationID")]
    pub organization_id: String,
    /// ProjectID determines which project this secret store manages.
    #[serde(rename = "projectID")]
    pub project_id: String,
    /// Auth configures how secret-manager authenticates with a bitwarden machine account instance.
    /// Make sure that the token being used has permissions on the given secret.
    pub auth: BitwardenSecretsManagerAuth,
}

/// BitwardenSecretsManagerAuth contains the ref to the secret that contains the machine account token.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BitwardenSecretsManagerAuth {
    /// BitwardenSecretsManagerSecretRef contains the credential ref to the bitwarden instance.
    pub secret_ref: BitwardenSecretsManagerSecretRef,
}

/// BitwardenSecretsManagerSecretRef contains the credential ref to the bitwarden instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BitwardenSecretsManagerSecretRef {
    /// AccessToken used for the bitwarden instance.
    pub credentials: SecretKeySelector,
}
