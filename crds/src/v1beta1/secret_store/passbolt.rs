//! The v1beta1 Passbolt provider (`spec.provider.passbolt`), where it differs from v1.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PassboltProvider defines configuration for the Passbolt provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PassboltProvider {
    /// Auth defines the information necessary to authenticate against Passbolt Server
    pub auth: PassboltAuth,
    /// Host defines the Passbolt Server to connect to
    pub host: String,
}

/// PassboltAuth contains credentials and configuration for authenticating with the Passbolt server.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PassboltAuth {
    /// PasswordSecretRef is a reference to the secret containing the Passbolt password
    pub password_secret_ref: SecretKeySelector,
    /// PrivateKeySecretRef is a reference to the secret containing the Passbolt private key
    pub private_key_secret_ref: SecretKeySelector,
}
