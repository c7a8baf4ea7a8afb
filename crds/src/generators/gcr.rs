//! The `GCRAccessToken` generator: Google Container/Artifact Registry access tokens.

use crate::meta::ServiceAccountSelector;
use crate::v1::secret_store::gcp::{GcpWorkloadIdentityFederation, GcpsmAuthSecretRef};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GCRAccessTokenSpec defines the desired state to generate a Google Container Registry access token.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "GCRAccessToken",
    root = "GcrAccessToken",
    plural = "gcraccesstokens",
    namespaced,
    category = "external-secrets",
    category = "external-secrets-generators",
    derive = "PartialEq",
    derive = "Default",
    doc = "GCRAccessToken generates an GCP access token\nthat can be used to authenticate with GCR."
)]
#[serde(rename_all = "camelCase")]
pub struct GcrAccessTokenSpec {
    /// Auth defines the means for authenticating with GCP
    pub auth: GcpsmAuth,
    /// ProjectID defines which project to use to authenticate with
    #[serde(rename = "projectID")]
    pub project_id: String,
}

/// GCPSMAuth defines the authentication methods for Google Cloud Platform.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpsmAuth {
    /// GCPSMAuthSecretRef defines the reference to a secret containing Google Cloud Platform credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<GcpsmAuthSecretRef>,
    /// GCPWorkloadIdentity defines the configuration for using GCP Workload Identity authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity: Option<GcpWorkloadIdentity>,
    /// GCPWorkloadIdentityFederation holds the configurations required for generating federated access tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity_federation: Option<GcpWorkloadIdentityFederation>,
}

/// GCPWorkloadIdentity defines the configuration for using GCP Workload Identity authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpWorkloadIdentity {
    /// ServiceAccountSelector is a reference to a ServiceAccount resource.
    pub service_account_ref: ServiceAccountSelector,
    pub cluster_location: String,
    pub cluster_name: String,
    #[serde(rename = "clusterProjectID", skip_serializing_if = "Option::is_none")]
    pub cluster_project_id: Option<String>,
}
