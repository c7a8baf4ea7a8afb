//! The v1beta1 CyberArk Conjur provider (`spec.provider.conjur`), where it differs from v1.

use crate::v1::secret_store::CaProvider;
use crate::v1::secret_store::conjur::{ConjurApiKey, ConjurJwt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ConjurProvider defines configuration for the CyberArk Conjur provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConjurProvider {
    /// URL is the endpoint of the Conjur instance.
    pub url: String,
    /// CABundle is a PEM encoded CA bundle that will be used to validate the Conjur server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    /// Used to provide custom certificate authority (CA) certificates
    /// for a secret store. The CAProvider points to a Secret or ConfigMap resource
    /// that contains a PEM-encoded certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
    /// Defines authentication settings for connecting to Conjur.
    pub auth: ConjurAuth,
}

/// ConjurAuth defines the methods of authentication with Conjur.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConjurAuth {
    /// Authenticates with Conjur using an API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apikey: Option<ConjurApiKey>,
    /// Jwt enables JWT authentication using Kubernetes service account tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwt: Option<ConjurJwt>,
}
