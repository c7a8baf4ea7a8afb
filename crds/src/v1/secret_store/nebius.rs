//! The Nebius MysteryBox provider: `spec.provider.nebiusmysterybox` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::SecretCaProvider;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// NebiusMysteryboxProvider Configures a store to sync secrets using the Nebius Mysterybox provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct NebiusMysteryboxProvider {
    /// NebiusMysterybox API endpoint
    pub api_domain: String,
    /// Auth defines parameters to authenticate in MysteryBox
    pub auth: NebiusAuth,
    /// The provider for the CA bundle to use to validate NebiusMysterybox server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<SecretCaProvider>,
}

/// NebiusAuth defines the authentication method for the Nebius provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "either serviceAccountCredsSecretRef or tokenSecretRef must be set", "rule": "has(self.serviceAccountCredsSecretRef) || has(self.tokenSecretRef)"}]))]
pub struct NebiusAuth {
    /// ServiceAccountCreds references a Kubernetes Secret key that contains a JSON
    /// document with service account credentials used to get an IAM token.
    ///
    /// Expected JSON structure:
    /// {
    ///   "subject-credentials": {
    ///     "alg": "RS256",
    ///     "private-key": "-----BEGIN PRIVATE KEY-----\n<private-key>\n-----END PRIVATE KEY-----\n",
    ///     "kid": "<public-key-id>",
    ///     "iss": "<issuer-service-account-id>",
    ///     "sub": "<subject-service-account-id>"
    ///   }
    /// }
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_creds_secret_ref: Option<SecretKeySelector>,
    /// Token authenticates with Nebius Mysterybox by presenting a token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<SecretKeySelector>,
}
