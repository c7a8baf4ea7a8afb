//! The Passbolt provider: `spec.provider.passbolt` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PassboltProvider provides access to Passbolt secrets manager.
/// See: https://www.passbolt.com.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PassboltProvider {
    /// Auth defines the information necessary to authenticate against Passbolt Server
    pub auth: PassboltAuth,
    /// Host defines the Passbolt Server to connect to
    pub host: String,
    /// PEM encoded CA bundle used to validate Passbolt server certificate. Only used
    /// if the Host URL is using HTTPS protocol. If not set the system root certificates
    /// are used to validate the TLS connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// The provider for the CA bundle to use to validate Passbolt server certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
}

/// PassboltAuth contains a secretRef for the passbolt credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PassboltAuth {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub password_secret_ref: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub private_key_secret_ref: SecretKeySelector,
}
