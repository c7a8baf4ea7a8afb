//! ClusterGenerator: a cluster-scoped wrapper holding the spec of any one generator kind.

use crate::generators::acr::AcrAccessTokenSpec;
use crate::generators::beyondtrust_workload_credentials::BeyondtrustWorkloadCredentialsDynamicSecretSpec;
use crate::generators::cloudsmith::CloudsmithAccessTokenSpec;
use crate::generators::ecr::EcrAuthorizationTokenSpec;
use crate::generators::fake::FakeSpec;
use crate::generators::gcr::GcrAccessTokenSpec;
use crate::generators::github::GithubAccessTokenSpec;
use crate::generators::gitlab::GitlabDeployTokenSpec;
use crate::generators::grafana::GrafanaSpec;
use crate::generators::mfa::MfaSpec;
use crate::generators::password::PasswordSpec;
use crate::generators::quay::QuayAccessTokenSpec;
use crate::generators::ssh_key::SshKeySpec;
use crate::generators::sts::StsSessionTokenSpec;
use crate::generators::uuid::UuidSpec;
use crate::generators::vault::VaultDynamicSecretSpec;
use crate::generators::webhook::WebhookSpec;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ClusterGeneratorSpec defines the desired state of a ClusterGenerator.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "ClusterGenerator",
    plural = "clustergenerators",
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    doc = "ClusterGenerator represents a cluster-wide generator which can be referenced as part of `generatorRef` fields."
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterGeneratorSpec {
    /// Kind the kind of this generator.
    pub kind: GeneratorKind,
    /// Generator the spec for this generator, must match the kind.
    pub generator: GeneratorSpec,
}

/// GeneratorSpec defines the configuration for various supported generator types.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct GeneratorSpec {
    /// ACRAccessTokenSpec defines how to generate the access token
    /// e.g. how to authenticate and which registry to use.
    /// see: https://github.com/Azure/acr/blob/main/docs/AAD-OAuth.md#overview
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acr_access_token_spec: Option<AcrAccessTokenSpec>,
    /// BeyondtrustWorkloadCredentialsDynamicSecretSpec defines the desired spec for BeyondtrustWorkloadCredentials dynamic generator.
    /// This generator enables obtaining temporary, short-lived credentials from BeyondTrust Workload Credentials.
    /// For more information, see: https://docs.beyondtrust.com/bt-docs/docs/secrets-api
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beyondtrust_workload_credentials_dynamic_secret_spec:
        Option<BeyondtrustWorkloadCredentialsDynamicSecretSpec>,
    /// CloudsmithAccessTokenSpec defines the configuration for generating a Cloudsmith access token using OIDC authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloudsmith_access_token_spec: Option<CloudsmithAccessTokenSpec>,
    /// ECRAuthorizationTokenSpec defines the desired state to generate an AWS ECR authorization token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecr_authorization_token_spec: Option<EcrAuthorizationTokenSpec>,
    /// FakeSpec contains the static data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fake_spec: Option<FakeSpec>,
    /// GCRAccessTokenSpec defines the desired state to generate a Google Container Registry access token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcr_access_token_spec: Option<GcrAccessTokenSpec>,
    /// GithubAccessTokenSpec defines the desired state to generate a GitHub access token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub github_access_token_spec: Option<GithubAccessTokenSpec>,
    /// GitlabDeployTokenSpec defines the desired state to generate a GitLab deploy token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gitlab_deploy_token_spec: Option<GitlabDeployTokenSpec>,
    /// QuayAccessTokenSpec defines the desired state to generate a Quay access token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quay_access_token_spec: Option<QuayAccessTokenSpec>,
    /// PasswordSpec controls the behavior of the password generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_spec: Option<PasswordSpec>,
    /// SSHKeySpec controls the behavior of the ssh key generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_key_spec: Option<SshKeySpec>,
    /// STSSessionTokenSpec defines the desired state to generate an AWS STS session token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sts_session_token_spec: Option<StsSessionTokenSpec>,
    /// UUIDSpec controls the behavior of the uuid generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid_spec: Option<UuidSpec>,
    /// VaultDynamicSecretSpec defines the desired spec of VaultDynamicSecret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vault_dynamic_secret_spec: Option<VaultDynamicSecretSpec>,
    /// WebhookSpec controls the behavior of the external generator. Any body parameters should be passed to the server through the parameters field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_spec: Option<WebhookSpec>,
    /// GrafanaSpec controls the behavior of the grafana generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grafana_spec: Option<GrafanaSpec>,
    /// MFASpec controls the behavior of the mfa generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mfa_spec: Option<MfaSpec>,
}

/// GeneratorKind represents a kind of generator.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum GeneratorKind {
    #[serde(rename = "ACRAccessToken")]
    AcrAccessToken,
    BeyondtrustWorkloadCredentialsDynamicSecret,
    CloudsmithAccessToken,
    #[serde(rename = "ECRAuthorizationToken")]
    EcrAuthorizationToken,
    Fake,
    #[serde(rename = "GCRAccessToken")]
    GcrAccessToken,
    GithubAccessToken,
    GitlabDeployToken,
    QuayAccessToken,
    Password,
    #[serde(rename = "SSHKey")]
    SshKey,
    #[serde(rename = "STSSessionToken")]
    StsSessionToken,
    #[serde(rename = "UUID")]
    Uuid,
    VaultDynamicSecret,
    Webhook,
    Grafana,
    #[serde(rename = "MFA")]
    Mfa,
}
