//! The Doppler provider: `spec.provider.doppler` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
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

/// DopplerAuth configures authentication with the Doppler API.
/// Exactly one of secretRef or oidcConfig must be specified.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "Exactly one of 'secretRef' or 'oidcConfig' must be specified", "rule": "(has(self.secretRef) && !has(self.oidcConfig)) || (!has(self.secretRef) && has(self.oidcConfig))"}]))]
pub struct DopplerAuth {
    /// SecretRef authenticates using a Doppler service token stored in a Kubernetes Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<DopplerAuthSecretRef>,
    /// OIDCConfig authenticates using Kubernetes ServiceAccount tokens via OIDC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oidc_config: Option<DopplerOidcAuth>,
}

/// DopplerOIDCAuth configures OIDC authentication with Doppler using Kubernetes ServiceAccount tokens.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DopplerOidcAuth {
    /// Identity is the Doppler Service Account Identity ID configured for OIDC authentication.
    pub identity: String,
    /// ServiceAccountRef specifies the Kubernetes ServiceAccount to use for authentication.
    pub service_account_ref: ServiceAccountSelector,
    /// ExpirationSeconds sets the ServiceAccount token validity duration.
    /// Defaults to 10 minutes.
    #[serde(default = "default_expiration_seconds")]
    pub expiration_seconds: i64,
}

impl Default for DopplerOidcAuth {
    fn default() -> Self {
        Self {
            expiration_seconds: default_expiration_seconds(),
            identity: Default::default(),
            service_account_ref: Default::default(),
        }
    }
}

/// DopplerAuthSecretRef contains the secret reference for accessing the Doppler API.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DopplerAuthSecretRef {
    /// The DopplerToken is used for authentication.
    /// See https://docs.doppler.com/reference/api#authentication for auth token types.
    /// The Key attribute defaults to dopplerToken if not specified.
    pub doppler_token: SecretKeySelector,
}

/// The values of `format` in [`DopplerProvider`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum DopplerFormat {
    #[serde(rename = "json")]
    Json,
    #[serde(rename = "dotnet-json")]
    DotnetJson,
    #[serde(rename = "env")]
    Env,
    #[serde(rename = "yaml")]
    Yaml,
    #[serde(rename = "docker")]
    Docker,
}

/// The values of `nameTransformer` in [`DopplerProvider`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum DopplerNameTransformer {
    #[serde(rename = "upper-camel")]
    UpperCamel,
    #[serde(rename = "camel")]
    Camel,
    #[serde(rename = "lower-snake")]
    LowerSnake,
    #[serde(rename = "tf-var")]
    TfVar,
    #[serde(rename = "dotnet-env")]
    DotnetEnv,
    #[serde(rename = "lower-kebab")]
    LowerKebab,
}

fn default_expiration_seconds() -> i64 {
    600
}
