//! The v1beta1 Keeper Secrets Manager provider (`spec.provider.keepersecurity`), where it differs from v1.

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
}
