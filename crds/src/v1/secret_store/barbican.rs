//! The OpenStack Barbican provider: `spec.provider.barbican` of a SecretStore.

use crate::meta::{SecretKeySelector, SecretRef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BarbicanProvider setup a store to sync secrets with barbican.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BarbicanProvider {
    #[serde(rename = "authURL", skip_serializing_if = "Option::is_none")]
    pub auth_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// BarbicanAuth contains the authentication information for Barbican.
    pub auth: BarbicanAuth,
}

/// BarbicanAuth contains the authentication information for Barbican.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct BarbicanAuth {
    /// BarbicanProviderUsernameRef defines a reference to a secret containing username for the Barbican provider.
    pub username: BarbicanProviderUsernameRef,
    /// BarbicanProviderPasswordRef defines a reference to a secret containing password for the Barbican provider.
    pub password: SecretRef,
}

/// BarbicanProviderUsernameRef defines a reference to a secret containing username for the Barbican provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct BarbicanProviderUsernameRef {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}
