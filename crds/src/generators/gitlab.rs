//! The `GitlabDeployToken` generator: GitLab deploy tokens.

use crate::meta::SecretRef;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GitlabDeployTokenSpec defines the desired state to generate a GitLab deploy token.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "GitlabDeployToken",
    plural = "gitlabdeploytokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "GitlabDeployToken generates a GitLab deploy token."
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "exactly one of projectID or groupID must be set", "rule": "has(self.projectID) != has(self.groupID)"}]))]
pub struct GitlabDeployTokenSpec {
    /// URL configures the GitLab instance URL. Defaults to https://gitlab.com.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// ProjectID is the numeric ID or unescaped path (e.g. group/project) of the
    /// project to create the deploy token in. The generator URL-escapes paths before
    /// calling the GitLab API, so do not pre-encode. Mutually exclusive with groupID.
    #[serde(rename = "projectID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub project_id: Option<String>,
    /// GroupID is the numeric ID or unescaped path (e.g. parent/group) of the group to
    /// create the deploy token in. The generator URL-escapes paths before calling the
    /// GitLab API, so do not pre-encode. Mutually exclusive with projectID.
    #[serde(rename = "groupID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub group_id: Option<String>,
    /// Name of the deploy token.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Scopes granted to the deploy token. At least one scope is required.
    #[schemars(length(min = 1))]
    pub scopes: Vec<GitlabDeployTokenScope>,
    /// ExpiresAt is an optional expiry for the deploy token. If omitted the token does
    /// not expire on the GitLab side and is revoked only when the generator state is
    /// cleaned up (on regeneration or when the consuming ExternalSecret is deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub expires_at: Option<Time>,
    /// Username is an optional username for the deploy token. GitLab defaults it to
    /// gitlab+deploy-token-{n} when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Auth configures how ESO authenticates with the GitLab API.
    pub auth: GitlabDeployTokenAuth,
}

/// GitlabDeployTokenAuth defines the authentication configuration for the GitLab API.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GitlabDeployTokenAuth {
    /// Token references a secret containing a GitLab access token (personal, group, or
    /// project) with the api scope and at least the Maintainer role on the target.
    pub token: SecretRef,
}

/// GitlabDeployTokenScope is a scope that can be granted to a GitLab deploy token.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum GitlabDeployTokenScope {
    #[serde(rename = "read_repository")]
    ReadRepository,
    #[serde(rename = "read_registry")]
    ReadRegistry,
    #[serde(rename = "write_registry")]
    WriteRegistry,
    #[serde(rename = "read_package_registry")]
    ReadPackageRegistry,
    #[serde(rename = "write_package_registry")]
    WritePackageRegistry,
    #[serde(rename = "read_virtual_registry")]
    ReadVirtualRegistry,
    #[serde(rename = "write_virtual_registry")]
    WriteVirtualRegistry,
}
