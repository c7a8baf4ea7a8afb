//! The Chef Infra Server data bags provider: `spec.provider.chef` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ChefProvider configures a store to sync secrets using basic chef server connection credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ChefProvider {
    /// Auth defines the information necessary to authenticate against chef Server
    pub auth: ChefAuth,
    /// UserName should be the user ID on the chef server
    pub username: String,
    /// ServerURL is the chef server URL used to connect to. If using orgs you should include your org in the url and terminate the url with a "/"
    pub server_url: String,
}

/// ChefAuth contains a secretRef for credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ChefAuth {
    /// ChefAuthSecretRef holds secret references for chef server login credentials.
    pub secret_ref: ChefAuthSecretRef,
}

/// ChefAuthSecretRef holds secret references for chef server login credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ChefAuthSecretRef {
    /// SecretKey is the Signing Key in PEM format, used for authentication.
    pub private_key_secret_ref: SecretKeySelector,
}
