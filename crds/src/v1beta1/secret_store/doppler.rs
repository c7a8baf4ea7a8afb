//! The v1beta1 Doppler provider (`spec.provider.doppler`), where it differs from v1.

use crate::v1::secret_store::doppler::{
    DopplerAuthSecretRef, DopplerFormat, DopplerNameTransformer,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// DopplerProvider configures a store to sync secrets using the Doppler provider.
/// Project and Config are required if not using a Service Token.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DopplerProvider {
    /// Auth configures how the Operator authenticates with the Doppler API
    pub auth: DopplerAuth,
    /// Doppler project (required if not using a Service Token)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Doppler config (required if not using a Service Token)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// Environment variable compatible name transforms that change secret names to a different format
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_transformer: Option<DopplerNameTransformer>,
    /// Format enables the downloading of secrets as a file (string)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<DopplerFormat>,
}

/// DopplerAuth defines the authentication method for the Doppler provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DopplerAuth {
    /// DopplerAuthSecretRef defines a reference to a secret containing credentials for the Doppler provider.
    pub secret_ref: DopplerAuthSecretRef,
}
