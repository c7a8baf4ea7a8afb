//! The Google Cloud Secret Manager provider: `spec.provider.gcpsm` of a SecretStore.

use crate::meta::{SecretKeySelector, ServiceAccountSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GCPSMProvider Configures a store to sync secrets using the GCP Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GcpsmProvider {
    /// Auth defines the information necessary to authenticate against GCP
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<GcpsmAuth>,
    /// ProjectID project where secret is located
    #[serde(rename = "projectID", skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Location optionally defines a location for a secret
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// SecretVersionSelectionPolicy specifies how the provider selects a secret version
    /// when "latest" is disabled or destroyed.
    /// Possible values are:
    /// - LatestOrFail: the provider always uses "latest", or fails if that version is disabled/destroyed.
    /// - LatestOrFetch: the provider falls back to fetching the latest version if the version is DESTROYED or DISABLED
    #[serde(default = "default_secret_version_selection_policy")]
    pub secret_version_selection_policy: String,
}

impl Default for GcpsmProvider {
    fn default() -> Self {
        Self {
            auth: Default::default(),
            location: Default::default(),
            project_id: Default::default(),
            secret_version_selection_policy: default_secret_version_selection_policy(),
        }
    }
}

/// GCPSMAuth defines the authentication methods for Google Cloud Platform Secret Manager.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpsmAuth {
    /// GCPSMAuthSecretRef contains the secret references for GCP Secret Manager authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<GcpsmAuthSecretRef>,
    /// GCPWorkloadIdentity defines configuration for workload identity authentication to GCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity: Option<GcpWorkloadIdentity>,
    /// GCPWorkloadIdentityFederation holds the configurations required for generating federated access tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity_federation: Option<GcpWorkloadIdentityFederation>,
}

/// GCPSMAuthSecretRef contains the secret references for GCP Secret Manager authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpsmAuthSecretRef {
    /// The SecretAccessKey is used for authentication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_access_key_secret_ref: Option<SecretKeySelector>,
}

/// GCPWorkloadIdentity defines configuration for workload identity authentication to GCP.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpWorkloadIdentity {
    /// ServiceAccountSelector is a reference to a ServiceAccount resource.
    pub service_account_ref: ServiceAccountSelector,
    /// ClusterLocation is the location of the cluster
    /// If not specified, it fetches information from the metadata server
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_location: Option<String>,
    /// ClusterName is the name of the cluster
    /// If not specified, it fetches information from the metadata server
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    /// ClusterProjectID is the project ID of the cluster
    /// If not specified, it fetches information from the metadata server
    #[serde(rename = "clusterProjectID", skip_serializing_if = "Option::is_none")]
    pub cluster_project_id: Option<String>,
}

/// GCPWorkloadIdentityFederation holds the configurations required for generating federated access tokens.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpWorkloadIdentityFederation {
    /// credConfig holds the configmap reference containing the GCP external account credential configuration in JSON format and the key name containing the json data.
    /// For using Kubernetes cluster as the identity provider, use serviceAccountRef instead. Operators mounted serviceaccount token cannot be used as the token source, instead
    /// serviceAccountRef must be used by providing operators service account details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cred_config: Option<ConfigMapReference>,
    /// serviceAccountRef is the reference to the kubernetes ServiceAccount to be used for obtaining the tokens,
    /// when Kubernetes is configured as provider in workload identity pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_ref: Option<ServiceAccountSelector>,
    /// awsSecurityCredentials is for configuring AWS region and credentials to use for obtaining the access token,
    /// when using the AWS metadata server is not an option.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws_security_credentials: Option<AwsCredentialsConfig>,
    /// audience is the Secure Token Service (STS) audience which contains the resource name for the workload identity pool and the provider identifier in that pool.
    /// If specified, Audience found in the external account credential config will be overridden with the configured value.
    /// audience must be provided when serviceAccountRef or awsSecurityCredentials is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// externalTokenEndpoint is the endpoint explicitly set up to provide tokens, which will be matched against the
    /// credential_source.url in the provided credConfig. This field is merely to double-check the external token source
    /// URL is having the expected value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_token_endpoint: Option<String>,
    /// GCPServiceAccountEmail is the email of the Google Cloud service account to impersonate
    /// after Workload Identity Federation. Use this to grant access through the service account's
    /// IAM bindings (for example roles/secretmanager.secretAccessor). When set, it overrides
    /// service_account_impersonation_url in the external account JSON from credConfig;
    /// when serviceAccountRef is set, it also overrides the "iam.gke.io/gcp-service-account" annotation
    /// on that ServiceAccount.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r#"^.*@.*\.iam\.gserviceaccount\.com$"#), length(min = 1), extend("example" = "my-gsa@my-project.iam.gserviceaccount.com"))]
    pub gcp_service_account_email: Option<String>,
}

/// AwsCredentialsConfig holds the region and the Secret reference which contains the AWS credentials.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct AwsCredentialsConfig {
    /// region is for configuring the AWS region to be used.
    #[schemars(regex(pattern = "^[a-z0-9-]+$"), length(min = 1, max = 50), extend("example" = "ap-south-1"))]
    pub region: String,
    /// awsCredentialsSecretRef is the reference to the secret which holds the AWS credentials.
    /// Secret should be created with below names for keys
    /// - aws_access_key_id: Access Key ID, which is the unique identifier for the AWS account or the IAM user.
    /// - aws_secret_access_key: Secret Access Key, which is used to authenticate requests made to AWS services.
    /// - aws_session_token: Session Token, is the short-lived token to authenticate requests made to AWS services.
    pub aws_credentials_secret_ref: SecretReference,
}

/// SecretReference holds the details of a secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretReference {
    /// name of the secret.
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: String,
    /// namespace in which the secret exists. If empty, secret will looked up in local namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    )]
    pub namespace: Option<String>,
}

/// ConfigMapReference holds the details of a configmap.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapReference {
    /// name of the configmap.
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: String,
    /// namespace in which the configmap exists. If empty, configmap will looked up in local namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    )]
    pub namespace: Option<String>,
    /// key name holding the external account credential config.
    #[schemars(regex(pattern = "^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub key: String,
}

fn default_secret_version_selection_policy() -> String {
    "LatestOrFail".to_owned()
}
