//! Types shared by the Yandex Cloud providers (authentication, CA, fetching).

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// YandexAuth defines the authentication method for the Yandex provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct YandexAuth {
    /// The authorized key used for authentication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorized_key_secret_ref: Option<SecretKeySelector>,
}

/// FetchingPolicy configures how the provider interprets the `data.secretKey.remoteRef.key` field in ExternalSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct FetchingPolicy {
    /// ByID configures the provider to interpret the `data.secretKey.remoteRef.key` field in ExternalSecret as secret ID.
    #[serde(rename = "byID", skip_serializing_if = "Option::is_none")]
    pub by_id: Option<ById>,
    /// ByName configures the provider to interpret the `data.secretKey.remoteRef.key` field in ExternalSecret as secret name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_name: Option<ByName>,
}

/// ByID configures the provider to interpret the `data.secretKey.remoteRef.key` field in ExternalSecret as secret ID.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
pub struct ById {}

/// ByName configures the provider to interpret the `data.secretKey.remoteRef.key` field in ExternalSecret as secret name.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ByName {
    /// The folder to fetch secrets from
    #[serde(rename = "folderID")]
    pub folder_id: String,
}
