//! The v1beta1 Password Depot provider (`spec.provider.passworddepot`), where it differs from v1.

use crate::v1::secret_store::password_depot::PasswordDepotSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PasswordDepotProvider configures a store to sync secrets with a Password Depot instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PasswordDepotProvider {
    /// URL configures the Password Depot instance URL.
    pub host: String,
    /// Database to use as source
    pub database: String,
    /// Auth configures how secret-manager authenticates with a Password Depot instance.
    pub auth: PasswordDepotAuth,
}

/// PasswordDepotAuth defines the authentication method for the Password Depot provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PasswordDepotAuth {
    /// PasswordDepotSecretRef defines a reference to a secret containing credentials for the Password Depot provider.
    pub secret_ref: PasswordDepotSecretRef,
}
