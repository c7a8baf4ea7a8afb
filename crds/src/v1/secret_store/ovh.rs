//! The OVHcloud Secret Manager provider: `spec.provider.ovh` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// OvhProvider holds the configuration to synchronize secrets with OVHcloud's Secret Manager.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OvhProvider {
    /// specifies the OKMS server endpoint.
    pub server: String,
    /// specifies the OKMS ID.
    pub okmsid: String,
    /// Enables or disables check-and-set (CAS) (default: false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cas_required: Option<bool>,
    /// Setup a timeout in seconds when requests to the KMS are made (default: 30).
    #[serde(default = "default_okms_timeout")]
    #[schemars(range(min = 1))]
    pub okms_timeout: i32,
    /// Authentication method (mtls or token).
    pub auth: OvhAuth,
}

impl Default for OvhProvider {
    fn default() -> Self {
        Self {
            auth: Default::default(),
            cas_required: Default::default(),
            okms_timeout: default_okms_timeout(),
            okmsid: Default::default(),
            server: Default::default(),
        }
    }
}

/// OvhAuth tells the controller how to authenticate to OVHcloud's Secret Manager, either using mTLS or a token.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OvhAuth {
    /// OvhClientMTLS defines the configuration required to authenticate to OVHcloud's Secret Manager using mTLS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtls: Option<OvhClientMtls>,
    /// OvhClientToken defines the configuration required to authenticate to OVHcloud's Secret Manager using a token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<OvhClientToken>,
}

/// OvhClientMTLS defines the configuration required to authenticate to OVHcloud's Secret Manager using mTLS.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OvhClientMtls {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub cert_secret_ref: SecretKeySelector,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub key_secret_ref: SecretKeySelector,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// CAProvider provides a custom certificate authority for accessing the provider's store.
    /// The CAProvider points to a Secret or ConfigMap resource that contains a PEM-encoded certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
}

/// OvhClientToken defines the configuration required to authenticate to OVHcloud's Secret Manager using a token.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OvhClientToken {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub token_secret_ref: SecretKeySelector,
}

fn default_okms_timeout() -> i32 {
    30
}
