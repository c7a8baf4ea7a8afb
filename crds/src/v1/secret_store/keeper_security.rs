//! The Keeper Secrets Manager provider: `spec.provider.keepersecurity` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// KeeperSecurityProvider Configures a store to sync secrets using Keeper Security.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct KeeperSecurityProvider {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub auth_ref: SecretKeySelector,
    #[serde(rename = "folderID")]
    pub folder_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get_by_title_fallback: Option<bool>,
}
