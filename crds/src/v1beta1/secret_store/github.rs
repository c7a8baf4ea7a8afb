//! The v1beta1 GitHub Actions secrets provider (`spec.provider.github`), where it differs from v1.

use crate::v1::secret_store::github::GithubAppAuth;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GithubProvider configures a store to push secrets to Github Actions.
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
}

impl Default for GithubProvider {
    fn default() -> Self {
        Self {
            app_id: Default::default(),
            auth: Default::default(),
            environment: Default::default(),
            installation_id: Default::default(),
            organization: Default::default(),
            repository: Default::default(),
            upload_url: Default::default(),
            url: default_url(),
        }
    }
}

fn default_url() -> String {
    "https://github.com/".to_owned()
}
