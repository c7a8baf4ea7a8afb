//! The Pulumi ESC provider: `spec.provider.pulumi` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PulumiProvider defines configuration for accessing secrets from Pulumi ESC.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "Exactly one of 'auth' or deprecated 'accessToken' must be specified", "rule": "(has(self.auth) && !has(self.accessToken)) || (!has(self.auth) && has(self.accessToken))"}]))]
pub struct PulumiProvider {
    /// APIURL is the URL of the Pulumi API.
    #[serde(default = "default_api_url")]
    pub api_url: String,
    /// Auth configures how the Operator authenticates with the Pulumi API.
    /// Either auth or the deprecated accessToken field must be specified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<PulumiAuth>,
    /// Organization are a space to collaborate on shared projects and stacks.
    /// To create a new organization, visit https://app.pulumi.com/ and click "New Organization".
    pub organization: String,
    /// Project is the name of the Pulumi ESC project the environment belongs to.
    pub project: String,
    /// Environment are YAML documents composed of static key-value pairs, programmatic expressions,
    /// dynamically retrieved values from supported providers including all major clouds,
    /// and other Pulumi ESC environments.
    /// To create a new environment, visit https://www.pulumi.com/docs/esc/environments/ for more information.
    pub environment: String,
    /// AccessToken is the access tokens to sign in to the Pulumi Cloud Console.
    ///
    /// Deprecated: Use auth.accessToken instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_token: Option<PulumiProviderSecretRef>,
}

impl Default for PulumiProvider {
    fn default() -> Self {
        Self {
            access_token: Default::default(),
            api_url: default_api_url(),
            auth: Default::default(),
            environment: Default::default(),
            organization: Default::default(),
            project: Default::default(),
        }
    }
}

/// PulumiProviderSecretRef contains the secret reference for Pulumi authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PulumiProviderSecretRef {
    /// SecretRef is a reference to a secret containing the Pulumi API token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

/// PulumiAuth configures authentication with the Pulumi API.
/// Exactly one of accessToken or oidcConfig must be specified.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "Exactly one of 'accessToken' or 'oidcConfig' must be specified", "rule": "(has(self.accessToken) && !has(self.oidcConfig)) || (!has(self.accessToken) && has(self.oidcConfig))"}]))]
pub struct PulumiAuth {
    /// AccessToken authenticates using a Pulumi access token stored in a Kubernetes Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_token: Option<PulumiProviderSecretRef>,
    /// OIDCConfig authenticates using Kubernetes ServiceAccount tokens via OIDC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oidc_config: Option<PulumiOidcAuth>,
}

/// PulumiOIDCAuth configures OIDC authentication with Pulumi using Kubernetes ServiceAccount tokens.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PulumiOidcAuth {
    /// Organization is the name of the Pulumi organization configured for OIDC authentication.
    pub organization: String,
    /// ServiceAccountRef specifies the Kubernetes ServiceAccount to use for authentication.
    pub service_account_ref: ServiceAccountSelector,
    /// ExpirationSeconds sets the token validity duration for service account and OIDC token.
    /// Defaults to 10 minutes.
    #[serde(default = "default_expiration_seconds")]
    #[schemars(range(min = 600))]
    pub expiration_seconds: i64,
}

impl Default for PulumiOidcAuth {
    fn default() -> Self {
        Self {
            expiration_seconds: default_expiration_seconds(),
            organization: Default::default(),
            service_account_ref: Default::default(),
        }
    }
}

fn default_api_url() -> String {
    "https://api.pulumi.com/api/esc".to_owned()
}

fn default_expiration_seconds() -> i64 {
    600
}
