//! The ngrok provider: `spec.provider.ngrok` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// NgrokProvider configures a store to sync secrets with a ngrok vault to use in traffic policies.
/// See: https://ngrok.com/blog-post/secrets-for-traffic-policy
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NgrokProvider {
    /// APIURL is the URL of the ngrok API.
    #[serde(default = "default_api_url")]
    pub api_url: String,
    /// Auth configures how the ngrok provider authenticates with the ngrok API.
    pub auth: NgrokAuth,
    /// Vault configures the ngrok vault to sync secrets with.
    pub vault: NgrokVault,
}

impl Default for NgrokProvider {
    fn default() -> Self {
        Self {
            api_url: default_api_url(),
            auth: Default::default(),
            vault: Default::default(),
        }
    }
}

/// NgrokAuth configures the authentication method for the ngrok provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct NgrokAuth {
    /// APIKey is the API Key used to authenticate with ngrok. See https://ngrok.com/docs/api/#authentication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<NgrokProviderSecretRef>,
}

/// NgrokProviderSecretRef contains the secret reference for the ngrok provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct NgrokProviderSecretRef {
    /// SecretRef is a reference to a secret containing the ngrok API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

/// NgrokVault configures the ngrok vault to sync secrets with.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct NgrokVault {
    /// Name is the name of the ngrok vault to sync secrets with.
    pub name: String,
}

fn default_api_url() -> String {
    "https://api.ngrok.com".to_owned()
}
