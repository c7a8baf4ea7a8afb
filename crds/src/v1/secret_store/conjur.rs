//! The CyberArk Conjur provider: `spec.provider.conjur` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use crate::v1::secret_store::CaProvider;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ConjurProvider provides access to a Conjur provider.
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

/// ConjurAuth is the way to provide authentication credentials to the ConjurProvider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct ConjurAuth {
    /// Authenticates with Conjur using an API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apikey: Option<ConjurApiKey>,
    /// Jwt enables JWT authentication using Kubernetes service account tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwt: Option<ConjurJwt>,
    /// Cert enables certificate-based authentication using a client certificate and key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert: Option<ConjurCert>,
}

/// ConjurAPIKey contains references to a Secret resource that holds
/// the Conjur username and API key.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConjurApiKey {
    /// Account is the Conjur organization account name.
    pub account: String,
    /// A reference to a specific 'key' containing the Conjur username
    /// within a Secret resource. In some instances, `key` is a required field.
    pub user_ref: SecretKeySelector,
    /// A reference to a specific 'key' containing the Conjur API key
    /// within a Secret resource. In some instances, `key` is a required field.
    pub api_key_ref: SecretKeySelector,
}

/// ConjurCert defines the Cert authentication configuration for Conjur provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConjurCert {
    /// Account is the Conjur organization account name.
    pub account: String,
    /// The conjur authn cert webservice id
    #[serde(rename = "serviceID")]
    pub service_id: String,
    /// Optional HostID for cert authentication (can be omitted when using 'spiffe' mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// ClientCertRef is a reference to a specific 'key' containing the client certificate
    /// within a Secret resource. The certificate must be PEM-encoded.
    pub client_cert_ref: SecretKeySelector,
    /// ClientKeyRef is a reference to a specific 'key' containing the private RSA client key
    /// within a Secret resource. The key must be PEM-encoded.
    pub client_key_ref: SecretKeySelector,
}

/// ConjurJWT defines the JWT authentication configuration for Conjur provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConjurJwt {
    /// Account is the Conjur organization account name.
    pub account: String,
    /// The conjur authn jwt webservice id
    #[serde(rename = "serviceID")]
    pub service_id: String,
    /// Optional HostID for JWT authentication. This may be used depending
    /// on how the Conjur JWT authenticator policy is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// Optional SecretRef that refers to a key in a Secret resource containing JWT token to
    /// authenticate with Conjur using the JWT authentication method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
    /// Optional ServiceAccountRef specifies the Kubernetes service account for which to request
    /// a token for with the `TokenRequest` API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
}
