//! ClusterPushSecret: a PushSecret template stamped into selected namespaces.

use crate::meta::LabelSelector;
use crate::v1::cluster_external_secret::ExternalSecretMetadata;
use crate::v1alpha1::push_secret::{PushSecretSpec, PushSecretStatusCondition};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ClusterPushSecretSpec defines the configuration for a ClusterPushSecret resource.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "external-secrets.io",
    version = "v1alpha1",
    kind = "ClusterPushSecret",
    plural = "clusterpushsecrets",
    status = "ClusterPushSecretStatus",
    category = "external-secrets",
    printcolumn = r#"{"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name": "Status", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    derive = "PartialEq",
    derive = "Default",
    doc = "ClusterPushSecret is the Schema for the ClusterPushSecrets API that enables cluster-wide management of pushing Kubernetes secrets to external providers."
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPushSecretSpec {
    /// PushSecretSpec defines what to do with the secrets.
    pub push_secret_spec: PushSecretSpec,
    /// The time in which the controller should reconcile its objects and recheck namespaces for labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_time: Option<String>,
    /// The name of the push secrets to be created.
    /// Defaults to the name of the ClusterPushSecret
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub push_secret_name: Option<String>,
    /// The metadata of the external secrets to be created
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_secret_metadata: Option<ExternalSecretMetadata>,
    /// A list of labels to select by to find the Namespaces to create the ExternalSecrets in. The selectors are ORed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespace_selectors: Vec<LabelSelector>,
}

/// ClusterPushSecretStatus contains the status information for the ClusterPushSecret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPushSecretStatus {
    /// Failed namespaces are the namespaces that failed to apply an PushSecret
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_namespaces: Vec<ClusterPushSecretNamespaceFailure>,
    /// ProvisionedNamespaces are the namespaces where the ClusterPushSecret has secrets
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provisioned_namespaces: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_secret_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<PushSecretStatusCondition>,
}

/// ClusterPushSecretNamespaceFailure represents a failed namespace deployment and it's reason.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPushSecretNamespaceFailure {
    /// Namespace is the namespace that failed when trying to apply an PushSecret
    pub namespace: String,
    /// Reason is why the PushSecret failed to apply to the namespace
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
