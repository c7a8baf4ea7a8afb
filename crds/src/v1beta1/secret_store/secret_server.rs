//! The v1beta1 Delinea Secret Server provider (`spec.provider.secretserver`), where it differs from v1.

use crate::meta::ValueOrSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SecretServerProvider defines configuration for the Delinea Secret Server provider.
/// See https://github.com/DelineaXPM/tss-sdk-go/blob/main/server/server.go.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretServerProvider {
    /// Username is the secret server account username.
    pub username: ValueOrSecretRef,
    /// Password is the secret server account password.
    pub password: ValueOrSecretRef,
    /// ServerURL
    /// URL to your secret server installation
    #[serde(rename = "serverURL")]
    pub server_url: String,
}
