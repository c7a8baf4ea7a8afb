//! The GitLab CI/CD variables provider: `spec.provider.gitlab` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::CaProvider;
use k8s_openapi::ByteString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GitlabProvider configures a store to sync secrets with a GitLab instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GitlabProvider {
    /// URL configures the GitLab instance URL. Defaults to https://gitlab.com/.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Auth configures how secret-manager authenticates with a GitLab instance.
    pub auth: GitlabAuth,
    /// ProjectID specifies a project where secrets are located.
    #[serde(rename = "projectID", skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// InheritFromGroups specifies whether parent groups should be discovered and checked for secrets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherit_from_groups: Option<bool>,
    /// GroupIDs specify, which gitlab groups to pull secrets from. Group secrets are read from left to right followed by the project variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_i_ds: Vec<String>,
    /// Environment environment_scope of gitlab CI/CD variables (Please see https://docs.gitlab.com/ee/ci/environments/#create-a-static-environment on how to create environments)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// Base64 encoded certificate for the GitLab server sdk. The sdk MUST run with HTTPS to make sure no MITM attack
    /// can be performed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
    /// see: https://external-secrets.io/latest/spec/#external-secrets.io/v1alpha1.CAProvider
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_provider: Option<CaProvider>,
}

/// GitlabAuth defines the authentication method for accessing GitLab API.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GitlabAuth {
    /// GitlabSecretRef contains the secret reference for GitLab authentication credentials.
    #[serde(rename = "SecretRef")]
    pub secret_ref: GitlabSecretRef,
}

/// GitlabSecretRef contains the secret reference for GitLab authentication credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GitlabSecretRef {
    /// AccessToken is used for authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_token: Option<SecretKeySelector>,
}
