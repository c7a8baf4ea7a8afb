//! The Scaleway Secret Manager provider: `spec.provider.scaleway` of a SecretStore.

use crate::meta::ValueOrSecretRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ScalewayProvider defines the configuration for the Scaleway Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ScalewayProvider {
    /// APIURL is the url of the api to use. Defaults to https://api.scaleway.com
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// Region where your secrets are located: https://developers.scaleway.com/en/quickstart/#region-and-zone
    pub region: String,
    /// ProjectID is the id of your project, which you can find in the console: https://console.scaleway.com/project/settings
    pub project_id: String,
    /// AccessKey is the non-secret part of the api key.
    pub access_key: ValueOrSecretRef,
    /// SecretKey is the non-secret part of the api key.
    pub secret_key: ValueOrSecretRef,
}
