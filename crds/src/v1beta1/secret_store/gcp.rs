//! The v1beta1 Google Cloud Secret Manager provider (`spec.provider.gcpsm`), where it differs from v1.

use crate::v1::secret_store::gcp::{GcpWorkloadIdentity, GcpsmAuthSecretRef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GCPSMProvider Configures a store to sync secrets using the GCP Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
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
}

/// GCPSMAuth defines the authentication methods for the GCP Secret Manager provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GcpsmAuth {
    /// GCPSMAuthSecretRef defines a reference to a secret containing credentials for the GCP Secret Manager provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<GcpsmAuthSecretRef>,
    /// GCPWorkloadIdentity defines configuration for using GCP Workload Identity authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity: Option<GcpWorkloadIdentity>,
}
