//! The v1beta1 Infisical provider (`spec.provider.infisical`), where it differs from v1.

use crate::v1::secret_store::infisical::UniversalAuthCredentials;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// InfisicalProvider configures a store to sync secrets using the Infisical provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfisicalProvider {
    /// Auth configures how the Operator authenticates with the Infisical API
    pub auth: InfisicalAuth,
    /// SecretsScope defines the scope of the secrets within the workspace
    pub secrets_scope: MachineIdentityScopeInWorkspace,
    /// HostAPI specifies the base URL of the Infisical API. If not provided, it defaults to "https://app.infisical.com/api".
    #[serde(rename = "hostAPI", default = "default_host_api")]
    pub host_api: String,
}

impl Default for InfisicalProvider {
    fn default() -> Self {
        Self {
            auth: Default::default(),
            host_api: default_host_api(),
            secrets_scope: Default::default(),
        }
    }
}

/// InfisicalAuth defines the authentication methods for the Infisical provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct InfisicalAuth {
    /// UniversalAuthCredentials defines the credentials for Infisical Universal Auth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub universal_auth_credentials: Option<UniversalAuthCredentials>,
}

/// MachineIdentityScopeInWorkspace defines the scope of a machine identity in an Infisical workspace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineIdentityScopeInWorkspace {
    /// SecretsPath specifies the path to the secrets within the workspace. Defaults to "/" if not provided.
    #[serde(default = "default_secrets_path")]
    pub secrets_path: String,
    /// Recursive indicates whether the secrets should be fetched recursively. Defaults to false if not provided.
    #[serde(default)]
    pub recursive: bool,
    /// EnvironmentSlug is the required slug identifier for the environment.
    pub environment_slug: String,
    /// ProjectSlug is the required slug identifier for the project.
    pub project_slug: String,
    /// ExpandSecretReferences indicates whether secret references should be expanded. Defaults to true if not provided.
    #[serde(default = "default_expand_secret_references")]
    pub expand_secret_references: bool,
}

impl Default for MachineIdentityScopeInWorkspace {
    fn default() -> Self {
        Self {
            environment_slug: Default::default(),
            expand_secret_references: default_expand_secret_references(),
            project_slug: Default::default(),
            recursive: Default::default(),
            secrets_path: default_secrets_path(),
        }
    }
}

fn default_host_api() -> String {
    "https://app.infisical.com/api".to_owned()
}

fn default_expand_secret_references() -> bool {
    true
}

fn default_secrets_path() -> String {
    "/".to_owned()
}
