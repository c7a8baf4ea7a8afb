//! The GitHub Actions secrets provider: `spec.provider.github` of a SecretStore.

use crate::meta::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GithubProvider provides access and authentication to a GitHub instance .
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GithubProvider {
    /// URL configures the Github instance URL. Defaults to https://github.com/.
    #[serde(default = "default_url")]
    pub url: String,
    /// Upload URL for enterprise instances. Default to URL.
    #[serde(rename = "uploadURL", skip_serializing_if = "Option::is_none")]
    pub upload_url: Option<String>,
    /// auth configures how secret-manager authenticates with a Github instance.
    pub auth: GithubAppAuth,
    /// appID specifies the Github APP that will be used to authenticate the client
    #[serde(rename = "appID")]
    pub app_id: i64,
    /// installationID specifies the Github APP installation that will be used to authenticate the client
    #[serde(rename = "installationID")]
    pub installation_id: i64,
    /// organization will be used to fetch secrets from the Github organization
    pub organization: String,
    /// repository will be used to fetch secrets from the Github repository within an organization
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// environment will be used to fetch secrets from a particular environment within a github repository
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// orgSecretVisibility controls the visibility of organization secrets pushed via PushSecret.
    /// Valid values are "all" or "private".
    /// When unset, new secrets are created with visibility "all" and existing secrets preserve
    /// whatever visibility they already have in GitHub.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub org_secret_visibility: Option<GithubOrgSecretVisibility>,
}

impl Default for GithubProvider {
    fn default() -> Self {
        Self {
            app_id: Default::default(),
            auth: Default::default(),
            environment: Default::default(),
            installation_id: Default::default(),
            org_secret_visibility: Default::default(),
            organization: Default::default(),
            repository: Default::default(),
            upload_url: Default::default(),
            url: default_url(),
        }
    }
}

/// GithubAppAuth defines authentication configuration using a GitHub App for accessing GitHub API.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GithubAppAuth {
    /// SecretKeySelector is a reference to a specific 'key' within a Secret resource.
    /// In some instances, `key` is a required field.
    pub private_key: SecretKeySelector,
}

/// The values of `orgSecretVisibility` in [`GithubProvider`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum GithubOrgSecretVisibility {
    #[serde(rename = "all")]
    All,
    #[serde(rename = "private")]
    Private,
}

fn default_url() -> String {
    "https://github.com/".to_owned()
}
