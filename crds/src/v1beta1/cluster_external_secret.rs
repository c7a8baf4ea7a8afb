//! The v1beta1 ClusterExternalSecret, where it differs from v1.

use crate::meta::LabelSelector;
use crate::v1::cluster_external_secret::{
    ClusterExternalSecretNamespaceFailure, ExternalSecretMetadata,
};
use crate::v1beta1::external_secret::ExternalSecretSpec;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ClusterExternalSecretSpec defines the desired state of ClusterExternalSecret.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[kube(
    group = "external-secrets.io",
    version = "v1beta1",
    kind = "ClusterExternalSecret",
    plural = "clusterexternalsecrets",
    status = "ClusterExternalSecretStatus",
    shortname = "ces",
    category = "external-secrets",
    printcolumn = r#"{"name": "Store", "type": "string", "jsonPath": ".spec.externalSecretSpec.secretStoreRef.name"}"#,
    printcolumn = r#"{"name": "Refresh Interval", "type": "string", "jsonPath": ".spec.refreshTime"}"#,
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}"#,
    served = false,
    storage = false,
    deprecated,
    derive = "PartialEq",
    derive = "Default",
    doc = "ClusterExternalSecret is the schema for the clusterexternalsecrets API."
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterExternalSecretSpec {
    /// The spec for the ExternalSecrets to be created
    pub external_secret_spec: ExternalSecretSpec,
    /// The name of the external secrets to be created.
    /// Defaults to the name of the ClusterExternalSecret
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub external_secret_name: Option<String>,
    /// The metadata of the external secrets to be created
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_secret_metadata: Option<ExternalSecretMetadata>,
    /// The labels to select by to find the Namespaces to create the ExternalSecrets in
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// A list of labels to select by to find the Namespaces to create the ExternalSecrets in. The selectors are ORed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespace_selectors: Vec<LabelSelector>,
    /// Choose namespaces by name. This field is ORed with anything that NamespaceSelectors ends up choosing.
    ///
    /// Deprecated: Use NamespaceSelectors instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(
        regex(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        length(min = 1, max = 63)
    ))]
    pub namespaces: Vec<String>,
    /// The time in which the controller should reconcile its objects and recheck namespaces for labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_time: Option<String>,
}

/// ClusterExternalSecretStatus defines the observed state of ClusterExternalSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ClusterExternalSecretStatus {
    /// ExternalSecretName is the name of the ExternalSecrets created by the ClusterExternalSecret
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_secret_name: Option<String>,
    /// Failed namespaces are the namespaces that failed to apply an ExternalSecret
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_namespaces: Vec<ClusterExternalSecretNamespaceFailure>,
    /// ProvisionedNamespaces are the namespaces where the ClusterExternalSecret has secrets
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provisioned_namespaces: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ClusterExternalSecretStatusCondition>,
}

/// ClusterExternalSecretStatusCondition indicates the status of the ClusterExternalSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ClusterExternalSecretStatusCondition {
    /// ClusterExternalSecretConditionType indicates the condition of the ClusterExternalSecret.
    pub r#type: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
