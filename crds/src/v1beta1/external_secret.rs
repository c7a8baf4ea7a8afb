//! The v1beta1 ExternalSecret, where it differs from v1.

use crate::meta::LocalObjectReference;
use crate::v1::cluster_external_secret::ExternalSecretMetadata;
use crate::v1::external_secret::{
    ExternalSecretConversionStrategy, ExternalSecretDecodingStrategy, ExternalSecretDeletionPolicy,
    ExternalSecretMetadataPolicy, ExternalSecretRefreshPolicy, ExternalSecretRewriteRegexp,
    ExternalSecretRewriteTransform, FindName, SecretStoreRef, TemplateEngineVersion,
    TemplateMergePolicy, TemplateScope,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// ExternalSecretSpec defines the desired state of ExternalSecret.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "external-secrets.io",
    version = "v1beta1",
    kind = "ExternalSecret",
    plural = "externalsecrets",
    namespaced,
    status = "ExternalSecretStatus",
    shortname = "es",
    category = "external-secrets",
    printcolumn = r#"{"name": "StoreType", "type": "string", "jsonPath": ".spec.secretStoreRef.kind"}"#,
    printcolumn = r#"{"name": "Store", "type": "string", "jsonPath": ".spec.secretStoreRef.name"}"#,
    printcolumn = r#"{"name": "Refresh Interval", "type": "string", "jsonPath": ".spec.refreshInterval"}"#,
    printcolumn = r#"{"name": "Status", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name": "Last Sync", "type": "date", "jsonPath": ".status.refreshTime"}"#,
    served = false,
    storage = false,
    deprecated,
    derive = "PartialEq",
    derive = "Default",
    doc = "ExternalSecret is the schema for the external-secrets API."
)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretSpec {
    /// SecretStoreRef defines which SecretStore to fetch the ExternalSecret data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_store_ref: Option<SecretStoreRef>,
    /// ExternalSecretTarget defines the Kubernetes Secret to be created
    /// There can be only one target per ExternalSecret.
    #[serde(default)]
    pub target: ExternalSecretTarget,
    /// RefreshPolicy determines how the ExternalSecret should be refreshed:
    /// - CreatedOnce: Creates the Secret only if it does not exist and does not update it thereafter
    /// - Periodic: Synchronizes the Secret from the external source at regular intervals specified by refreshInterval.
    ///   No periodic updates occur if refreshInterval is 0.
    /// - OnChange: Only synchronizes the Secret when the ExternalSecret's metadata or specification changes
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_policy: Option<ExternalSecretRefreshPolicy>,
    /// RefreshInterval is the amount of time before the values are read again from the SecretStore provider,
    /// specified as Golang Duration strings.
    /// Valid time units are "ns", "us" (or "µs"), "ms", "s", "m", "h"
    /// Example values: "1h0m0s", "2h30m0s", "10m0s"
    /// May be set to "0s" to fetch and create it once. Defaults to 1h0m0s.
    #[serde(default = "default_refresh_interval")]
    pub refresh_interval: String,
    /// Data defines the connection between the Kubernetes Secret keys and the Provider data
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<ExternalSecretData>,
    /// DataFrom is used to fetch all properties from a specific Provider data
    /// If multiple entries are specified, the Secret keys are merged in the specified order
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_from: Vec<ExternalSecretDataFromRemoteRef>,
}

impl Default for ExternalSecretSpec {
    fn default() -> Self {
        Self {
            data: Default::default(),
            data_from: Default::default(),
            refresh_interval: default_refresh_interval(),
            refresh_policy: Default::default(),
            secret_store_ref: Default::default(),
            target: Default::default(),
        }
    }
}

/// ExternalSecretData defines the connection between the Kubernetes Secret key (spec.data.<key>) and the Provider data.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretData {
    /// The key in the Kubernetes Secret to store the value.
    #[schemars(regex(pattern = "^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub secret_key: String,
    /// RemoteRef points to the remote secret and defines
    /// which secret (version/property/..) to fetch.
    pub remote_ref: ExternalSecretDataRemoteRef,
    /// SourceRef allows you to override the source
    /// from which the value will be pulled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<StoreSourceRef>,
}

/// ExternalSecretDataRemoteRef defines Provider data location.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretDataRemoteRef {
    /// Key is the key used in the Provider, mandatory
    pub key: String,
    /// Policy for fetching tags/labels from provider secrets, possible options are Fetch, None. Defaults to None
    #[serde(default)]
    pub metadata_policy: ExternalSecretMetadataPolicy,
    /// Used to select a specific property of the Provider value (if a map), if supported
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// Used to select a specific version of the Provider value, if supported
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Used to define a conversion Strategy
    #[serde(default)]
    pub conversion_strategy: ExternalSecretConversionStrategy,
    /// Used to define a decoding Strategy
    #[serde(default)]
    pub decoding_strategy: ExternalSecretDecodingStrategy,
}

/// StoreSourceRef allows you to override the SecretStore source
/// from which the secret will be pulled from.
/// You can define at maximum one property.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct StoreSourceRef {
    /// SecretStoreRef defines which SecretStore to fetch the ExternalSecret data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_ref: Option<SecretStoreRef>,
    /// GeneratorRef points to a generator custom resource.
    ///
    /// Deprecated: The generatorRef is not implemented in .data[].
    /// this will be removed with v1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator_ref: Option<GeneratorRef>,
}

/// GeneratorRef points to a generator custom resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GeneratorRef {
    /// Specify the apiVersion of the generator resource
    #[serde(default = "default_api_version")]
    pub api_version: String,
    /// Specify the Kind of the generator resource
    pub kind: GeneratorRefKind,
    /// Specify the name of the generator resource
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: String,
}

/// The values of `kind` in [`GeneratorRef`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum GeneratorRefKind {
    #[serde(rename = "ACRAccessToken")]
    AcrAccessToken,
    ClusterGenerator,
    #[serde(rename = "ECRAuthorizationToken")]
    EcrAuthorizationToken,
    Fake,
    #[serde(rename = "GCRAccessToken")]
    GcrAccessToken,
    GithubAccessToken,
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
}

/// ExternalSecretDataFromRemoteRef defines a reference to multiple secrets in the provider to be fetched using options.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretDataFromRemoteRef {
    /// Used to extract multiple key/value pairs from one secret
    /// Note: Extract does not support sourceRef.Generator or sourceRef.GeneratorRef.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extract: Option<ExternalSecretDataRemoteRef>,
    /// Used to find secrets based on tags or regular expressions
    /// Note: Find does not support sourceRef.Generator or sourceRef.GeneratorRef.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub find: Option<ExternalSecretFind>,
    /// Used to rewrite secret Keys after getting them from the secret Provider
    /// Multiple Rewrite operations can be provided. They are applied in a layered order (first to last)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrite: Vec<ExternalSecretRewrite>,
    /// SourceRef points to a store or generator
    /// which contains secret values ready to use.
    /// Use this in combination with Extract or Find pull values out of
    /// a specific SecretStore.
    /// When sourceRef points to a generator Extract or Find is not supported.
    /// The generator returns a static map of values
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<StoreGeneratorSourceRef>,
}

/// ExternalSecretFind defines criteria for finding secrets in the provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretFind {
    /// A root path to start the find operations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Finds secrets based on the name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<FindName>,
    /// Find secrets based on tags.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// Used to define a conversion Strategy
    #[serde(default)]
    pub conversion_strategy: ExternalSecretConversionStrategy,
    /// Used to define a decoding Strategy
    #[serde(default)]
    pub decoding_strategy: ExternalSecretDecodingStrategy,
}

/// ExternalSecretRewrite defines rules on how to rewrite secret keys.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct ExternalSecretRewrite {
    /// Used to rewrite with regular expressions.
    /// The resulting key will be the output of a regexp.ReplaceAll operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regexp: Option<ExternalSecretRewriteRegexp>,
    /// Used to apply string transformation on the secrets.
    /// The resulting key will be the output of the template applied by the operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<ExternalSecretRewriteTransform>,
}

/// StoreGeneratorSourceRef allows you to override the source
/// from which the secret will be pulled from.
/// You can define at maximum one property.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct StoreGeneratorSourceRef {
    /// SecretStoreRef defines which SecretStore to fetch the ExternalSecret data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_ref: Option<SecretStoreRef>,
    /// GeneratorRef points to a generator custom resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator_ref: Option<GeneratorRef>,
}

/// ExternalSecretTarget defines the Kubernetes Secret to be created
/// There can be only one target per ExternalSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretTarget {
    /// The name of the Secret resource to be managed.
    /// Defaults to the .metadata.name of the ExternalSecret resource
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: Option<String>,
    /// CreationPolicy defines rules on how to create the resulting Secret.
    /// Defaults to "Owner"
    #[serde(default)]
    pub creation_policy: ExternalSecretCreationPolicy,
    /// DeletionPolicy defines rules on how to delete the resulting Secret.
    /// Defaults to "Retain"
    #[serde(default)]
    pub deletion_policy: ExternalSecretDeletionPolicy,
    /// Template defines a blueprint for the created Secret resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<ExternalSecretTemplate>,
    /// Immutable defines if the final secret will be immutable
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
}

/// ExternalSecretCreationPolicy defines rules on how to create the resulting Secret.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretCreationPolicy {
    #[default]
    Owner,
    Orphan,
    Merge,
    None,
}

/// ExternalSecretTemplate defines a blueprint for the created Secret resource.
/// we can not use native corev1.Secret, it will have empty ObjectMeta values: https://github.com/kubernetes-sigs/controller-tools/issues/448
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretTemplate {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// EngineVersion specifies the template engine version
    /// that should be used to compile/execute the
    /// template specified in .data and .templateFrom[].
    #[serde(default)]
    pub engine_version: TemplateEngineVersion,
    /// ExternalSecretTemplateMetadata defines metadata fields for the Secret blueprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ExternalSecretMetadata>,
    /// TemplateMergePolicy defines how template values should be merged when generating a secret.
    #[serde(default)]
    pub merge_policy: TemplateMergePolicy,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub template_from: Vec<TemplateFrom>,
}

/// TemplateFrom defines a source for template data.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TemplateFrom {
    /// TemplateRef defines a reference to a template source in a ConfigMap or Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map: Option<TemplateRef>,
    /// TemplateRef defines a reference to a template source in a ConfigMap or Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<TemplateRef>,
    /// TemplateTarget defines the target field where the template result will be stored.
    #[serde(default)]
    pub target: TemplateTarget,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub literal: Option<String>,
}

/// TemplateRef defines a reference to a template source in a ConfigMap or Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TemplateRef {
    /// The name of the ConfigMap/Secret resource
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: String,
    /// A list of keys in the ConfigMap/Secret to use as templates for Secret data
    pub items: Vec<TemplateRefItem>,
}

/// TemplateRefItem defines which key in the referenced ConfigMap or Secret to use as a template.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TemplateRefItem {
    /// A key in the ConfigMap/Secret
    #[schemars(regex(pattern = "^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub key: String,
    /// TemplateScope defines the scope of the template when processing template data.
    #[serde(default)]
    pub template_as: TemplateScope,
}

/// TemplateTarget defines the target field where the template result will be stored.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum TemplateTarget {
    #[default]
    Data,
    Annotations,
    Labels,
}

/// ExternalSecretStatus defines the observed state of ExternalSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretStatus {
    /// refreshTime is the time and date the external secret was fetched and
    /// the target secret updated
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time", extend("nullable" = true))]
    pub refresh_time: Option<Time>,
    /// SyncedResourceVersion keeps track of the last synced version
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synced_resource_version: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ExternalSecretStatusCondition>,
    /// Binding represents a servicebinding.io Provisioned Service reference to the secret
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<LocalObjectReference>,
}

/// ExternalSecretStatusCondition contains condition information for an ExternalSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretStatusCondition {
    /// ExternalSecretConditionType defines the condition type for an ExternalSecret.
    pub r#type: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub last_transition_time: Option<Time>,
}

fn default_refresh_interval() -> String {
    "1h0m0s".to_owned()
}

fn default_api_version() -> String {
    "generators.external-secrets.io/v1alpha1".to_owned()
}
