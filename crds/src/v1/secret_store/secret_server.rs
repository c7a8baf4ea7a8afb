//! The Delinea Secret Server provider: `spec.provider.secretserver` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SecretServerProvider provides access to authenticate to a secrets provider server.
/// See: https://github.com/DelineaXPM/tss-sdk-go/blob/main/server/server.go.
/// Authentication requires either Token, or both Username and Password. If Token is
/// set it takes precedence and Username/Password are ignored.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "either token, or both username and password, must be set", "rule": "has(self.token) || (has(self.username) && has(self.password))"}]))]
pub struct SecretServerProvider {
    /// Username is the secret server account username.
    /// Required unless Token is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<SecretServerProviderRef>,
    /// Password is the secret server account password.
    /// Required unless Token is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<SecretServerProviderRef>,
    /// Token is an access token used to authenticate to the secret server,
    /// as an alternative to Username and Password. When set, Username and
    /// Password are not required and are ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<SecretServerProviderRef>,
    /// Domain is the secret server domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// ServerURL
    /// URL to your secret server installation
    #[serde(rename = "serverURL")]
    pub server_url: String,
    /// PEM/base64 encoded CA bundle used to validate Secret ServerURL. Only used
    /// if the ServerURL URL is using HTTPS protocol. If not set the system root certificates
    /// are used to validate the TLS connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// The provider for the CA bundle to use to validate Secret ServerURL certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
}

/// SecretServerProviderRef references a value that can be specified directly or via a secret
/// for a SecretServerProvider. Exactly one of Value or SecretRef must be set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "exactly one of value or secretRef must be set", "rule": "has(self.value) != has(self.secretRef)"}]))]
pub struct SecretServerProviderRef {
    /// Value can be specified directly to set a value without using a secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub value: Option<String>,
    /// SecretRef references a key in a secret that will be used as value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}
