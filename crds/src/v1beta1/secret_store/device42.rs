//! The v1beta1 Device42 provider (`spec.provider.device42`), where it differs from v1.

use crate::v1::secret_store::password_depot::PasswordDepotSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Device42Provider configures a store to sync secrets with a Device42 instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct Device42Provider {
    /// URL configures the Device42 instance URL.
    pub host: String,
    /// Auth configures how secret-manager authenticates with a Device42 instance.
    pub auth: Device42Auth,
}

/// Device42Auth defines the authentication method for the Device42 provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct Device42Auth {
    /// Device42SecretRef defines a reference to a secret containing credentials for the Device42 provider.
    pub secret_ref: PasswordDepotSecretRef,
}
