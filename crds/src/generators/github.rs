//! The `GithubAccessToken` generator: GitHub App installation access tokens.

use crate::meta::SecretRef;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// GithubAccessTokenSpec defines the desired state to generate a GitHub access token.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "GithubAccessToken",
    plural = "githubaccesstokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "GithubAccessToken generates ghs_ accessToken"
)]
#[serde(rename_all = "camelCase")]
pub struct GithubAccessTokenSpec {
    /// URL configures the GitHub instance URL. Defaults to https://github.com/.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(rename = "appID")]
    pub app_id: String,
    #[serde(rename = "installID")]
    pub install_id: String,
    /// List of repositories the token will have access to. If omitted, defaults to all repositories the GitHub App
    /// is installed to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repositories: Vec<String>,
    /// Map of permissions the token will have. If omitted, defaults to all permissions the GitHub App has.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub permissions: BTreeMap<String, String>,
    /// Auth configures how ESO authenticates with a Github instance.
    pub auth: GithubAuth,
}

/// GithubAuth defines the authentication configuration for GitHub access.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GithubAuth {
    /// GithubSecretRef references a secret containing GitHub credentials.
    pub private_key: SecretRef,
}
