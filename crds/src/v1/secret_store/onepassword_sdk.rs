//! The 1Password SDK provider: `spec.provider.onepasswordSDK` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// OnePasswordSDKProvider configures a store to sync secrets using the 1Password sdk.
/// Exactly one of Vault or Environment must be set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "at most one of the fields in [vault environment] may be set", "rule": "[has(self.vault),has(self.environment)].filter(x,x==true).size() <= 1"}]))]
pub struct OnePasswordSdkProvider {
    /// Vault defines the vault's name or uuid to access. Do NOT add op:// prefix. This will be done automatically.
    /// Mutually exclusive with Environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vault: Option<String>,
    /// Environment defines the 1Password Environment ID to read variables from.
    /// Environments are read-only: PushSecret, DeleteSecret, and SecretExists return an error when set.
    /// Mutually exclusive with Vault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// IntegrationInfo specifies the name and version of the integration built using the 1Password Go SDK.
    /// If you don't know which name and version to use, use `DefaultIntegrationName` and `DefaultIntegrationVersion`, respectively.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integration_info: Option<IntegrationInfo>,
    /// Auth defines the information necessary to authenticate against OnePassword API.
    pub auth: OnePasswordSdkAuth,
    /// Cache configures client-side caching for read operations (GetSecret, GetSecretMap).
    /// When enabled, secrets are cached with the specified TTL.
    /// Write operations (PushSecret, DeleteSecret) automatically invalidate relevant cache entries.
    /// If omitted, caching is disabled (default).
    /// cache: {} is a valid option to set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheConfig>,
}

/// OnePasswordSDKAuth contains a secretRef for the service account token.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OnePasswordSdkAuth {
    /// ServiceAccountSecretRef points to the secret containing the token to access 1Password vault.
    pub service_account_secret_ref: SecretKeySelector,
}

/// CacheConfig configures client-side caching for read operations.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CacheConfig {
    /// TTL is the time-to-live for cached secrets.
    /// Format: duration string (e.g., "5m", "1h", "30s")
    #[serde(default = "default_ttl")]
    pub ttl: String,
    /// MaxSize is the maximum number of secrets to cache.
    /// When the cache is full, least-recently-used entries are evicted.
    #[serde(default = "default_max_size")]
    #[schemars(schema_with = "crate::schema::integer", range(min = 1))]
    pub max_size: i64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            max_size: default_max_size(),
            ttl: default_ttl(),
        }
    }
}

/// IntegrationInfo specifies the name and version of the integration built using the 1Password Go SDK.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationInfo {
    /// Name defaults to "1Password SDK".
    #[serde(default = "default_name")]
    pub name: String,
    /// Version defaults to "v1.0.0".
    #[serde(default = "default_version")]
    pub version: String,
}

impl Default for IntegrationInfo {
    fn default() -> Self {
        Self {
            name: default_name(),
            version: default_version(),
        }
    }
}

fn default_max_size() -> i64 {
    100
}

fn default_ttl() -> String {
    "5m".to_owned()
}

fn default_name() -> String {
    "1Password SDK".to_owned()
}

fn default_version() -> String {
    "v1.0.0".to_owned()
}
