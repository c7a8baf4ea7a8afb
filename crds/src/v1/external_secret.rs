//! ExternalSecret: which remote secrets to fetch, and how to build the target Secret.

use crate::meta::LocalObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// ExternalSecretSpec defines the desired state of ExternalSecret.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "external-secrets.io",
    version = "v1",
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
    selectable = ".spec.secretStoreRef.name",
    selectable = ".spec.secretStoreRef.kind",
    selectable = ".spec.target.name",
    selectable = ".spec.refreshInterval",
    derive = "PartialEq",
    derive = "Default",
    doc = "ExternalSecret is the Schema for the external-secrets API.\nIt defines how to fetch data from external APIs and make it available as Kubernetes Secrets."
)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretSpec {
    /// SecretStoreRef defines which SecretStore to fetch the ExternalSecret data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_store_ref: Option<SecretStoreRef>,
    /// ExternalSecretTarget defines the Kubernetes Secret to be created,
    /// there can be only one target per ExternalSecret.
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
    /// SyncWindows optionally restricts when periodic refreshes may occur.
    /// Evaluated in UTC, only for Periodic refresh policy (or when refreshPolicy is unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_windows: Option<ExternalSecretSyncWindows>,
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
            sync_windows: Default::default(),
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_policy: Option<ExternalSecretMetadataPolicy>,
    /// Used to select a specific property of the Provider value (if a map), if supported
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// Used to select a specific version of the Provider value, if supported
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Used to define a conversion Strategy. Defaults to Default when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversion_strategy: Option<ExternalSecretConversionStrategy>,
    /// Used to define a decoding Strategy. Defaults to None when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoding_strategy: Option<ExternalSecretDecodingStrategy>,
    /// Controls how ESO handles fetched secret data containing NUL bytes for this source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub null_byte_policy: Option<ExternalSecretNullBytePolicy>,
}

/// ExternalSecretConversionStrategy defines strategies for converting secret values.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretConversionStrategy {
    #[default]
    Default,
    Unicode,
}

/// ExternalSecretDecodingStrategy defines strategies for decoding secret values.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretDecodingStrategy {
    Auto,
    Base64,
    #[serde(rename = "Base64URL")]
    Base64Url,
    #[default]
    None,
}

/// ExternalSecretMetadataPolicy defines policies for fetching metadata from provider secrets.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretMetadataPolicy {
    #[default]
    None,
    Fetch,
}

/// ExternalSecretNullBytePolicy defines how fetched secret data containing NUL bytes should be handled.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ExternalSecretNullBytePolicy {
    Ignore,
    Fail,
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
    BeyondtrustWorkloadCredentialsDynamicSecret,
    ClusterGenerator,
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

/// SecretStoreRef defines which SecretStore to fetch the ExternalSecret data.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreRef {
    /// Name of the SecretStore resource
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: Option<String>,
    /// Kind of the SecretStore resource (SecretStore or ClusterSecretStore)
    /// Defaults to `SecretStore`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<SecretStoreRefKind>,
}

/// The values of `kind` in [`SecretStoreRef`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum SecretStoreRefKind {
    #[default]
    SecretStore,
    ClusterSecretStore,
}

/// ExternalSecretDataFromRemoteRef defines the connection between the Kubernetes Secret keys and the Provider data
/// when using DataFrom to fetch multiple values from a Provider.
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

/// ExternalSecretFind defines configuration for finding secrets in the provider.
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
    /// Used to define a conversion Strategy. Defaults to Default when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversion_strategy: Option<ExternalSecretConversionStrategy>,
    /// Used to define a decoding Strategy. Defaults to None when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoding_strategy: Option<ExternalSecretDecodingStrategy>,
    /// Controls how ESO handles fetched secret data containing NUL bytes for this find source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub null_byte_policy: Option<ExternalSecretNullBytePolicy>,
}

/// FindName defines criteria for finding secrets by name patterns.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FindName {
    /// Finds secrets base
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regexp: Option<String>,
}

/// ExternalSecretRewrite defines how to rewrite secret data values before they are written to the Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct ExternalSecretRewrite {
    /// Used to merge key/values in one single Secret
    /// The resulting key will contain all values from the specified secrets
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<ExternalSecretRewriteMerge>,
    /// Used to rewrite with regular expressions.
    /// The resulting key will be the output of a regexp.ReplaceAll operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regexp: Option<ExternalSecretRewriteRegexp>,
    /// Used to apply string transformation on the secrets.
    /// The resulting key will be the output of the template applied by the operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<ExternalSecretRewriteTransform>,
}

/// ExternalSecretRewriteMerge defines configuration for merging secret values.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretRewriteMerge {
    /// Used to define the target key of the merge operation.
    /// Required if strategy is JSON. Ignored otherwise.
    #[serde(default)]
    pub into: String,
    /// Used to define key priority in conflict resolution.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub priority: Vec<String>,
    /// Used to define the policy when a key in the priority list does not exist in the input.
    #[serde(default)]
    pub priority_policy: ExternalSecretRewriteMergePriorityPolicy,
    /// Used to define the policy to use in conflict resolution.
    #[serde(default)]
    pub conflict_policy: ExternalSecretRewriteMergeConflictPolicy,
    /// Used to define the strategy to use in the merge operation.
    #[serde(default)]
    pub strategy: ExternalSecretRewriteMergeStrategy,
}

/// ExternalSecretRewriteMergeConflictPolicy defines the policy for resolving conflicts when merging secrets.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretRewriteMergeConflictPolicy {
    Ignore,
    #[default]
    Error,
}

/// ExternalSecretRewriteMergePriorityPolicy defines the policy for handling missing keys in the priority
/// list during merge operations.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretRewriteMergePriorityPolicy {
    IgnoreNotFound,
    #[default]
    Strict,
}

/// ExternalSecretRewriteMergeStrategy defines the strategy for merging secrets.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretRewriteMergeStrategy {
    #[default]
    Extract,
    #[serde(rename = "JSON")]
    Json,
}

/// ExternalSecretRewriteRegexp defines configuration for rewriting secrets using regular expressions.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretRewriteRegexp {
    /// Used to define the regular expression of a re.Compiler.
    pub source: String,
    /// Used to define the target pattern of a ReplaceAll operation.
    pub target: String,
}

/// ExternalSecretRewriteTransform defines configuration for transforming secrets using templates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretRewriteTransform {
    /// Used to define the template to apply on the secret name.
    /// `.value ` will specify the secret name in the template.
    pub template: String,
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

/// ExternalSecretRefreshPolicy defines how and when the ExternalSecret should be refreshed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ExternalSecretRefreshPolicy {
    CreatedOnce,
    Periodic,
    OnChange,
}

/// ExternalSecretSyncWindows optionally restricts when periodic syncs may occur.
/// All windows in the list share the same Kind.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretSyncWindows {
    /// Kind applies to every window in the list.
    /// "allow" -- syncs are permitted only while at least one window is active;
    ///            all other times are blocked.
    /// "deny"  -- syncs are blocked while any window is active;
    ///            all other times are permitted.
    pub kind: ExternalSecretSyncWindowKind,
    /// Windows is the list of schedule+duration pairs.
    #[schemars(length(min = 1))]
    pub windows: Vec<ExternalSecretSyncWindowEntry>,
}

/// ExternalSecretSyncWindowKind defines whether a SyncWindow permits or
/// blocks periodic refreshes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ExternalSecretSyncWindowKind {
    #[serde(rename = "allow")]
    Allow,
    #[serde(rename = "deny")]
    Deny,
}

/// ExternalSecretSyncWindowEntry defines a single cron-schedule + duration pair
/// within a SyncWindows block.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretSyncWindowEntry {
    /// Schedule is a standard 5-field cron expression evaluated in UTC, or a
    /// named shorthand such as @daily or @every 1h. It marks the start time of
    /// each window occurrence.
    /// Example: "0 22 * * 1-5" opens a window every weekday at 22:00 UTC.
    #[schemars(
        regex(
            pattern = r#"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|@every [^\s]+.*|[^\s]+( [^\s]+){4})$"#
        ),
        length(min = 1)
    )]
    pub schedule: String,
    /// Duration specifies how long the window stays open after each Schedule
    /// firing. Example: "8h".
    pub duration: String,
}

/// ExternalSecretTarget defines the Kubernetes Secret to be created,
/// there can be only one target per ExternalSecret.
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
    /// Manifest defines a custom Kubernetes resource to create instead of a Secret.
    /// When specified, ExternalSecret will create the resource type defined here
    /// (e.g., ConfigMap, Custom Resource) instead of a Secret.
    /// Warning: Using Generic target. Make sure access policies and encryption are properly configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<ManifestReference>,
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
    CreateOrMerge,
}

/// ExternalSecretDeletionPolicy defines rules on how to delete the resulting Secret.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum ExternalSecretDeletionPolicy {
    Delete,
    Merge,
    #[default]
    Retain,
}

/// ManifestReference defines a custom Kubernetes resource type to be created
/// instead of a Secret. This allows ExternalSecret to create ConfigMaps,
/// Custom Resources, or any other Kubernetes resource type.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ManifestReference {
    /// APIVersion of the target resource (e.g., "v1" for ConfigMap, "argoproj.io/v1alpha1" for ArgoCD Application)
    #[schemars(length(min = 1))]
    pub api_version: String,
    /// Kind of the target resource (e.g., "ConfigMap", "Application")
    #[schemars(length(min = 1))]
    pub kind: String,
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
    pub metadata: Option<ExternalSecretTemplateMetadata>,
    /// TemplateMergePolicy defines how the rendered template should be merged with the existing Secret data.
    #[serde(default)]
    pub merge_policy: TemplateMergePolicy,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub template_from: Vec<TemplateFrom>,
}

/// TemplateEngineVersion specifies the template engine version that should be used to
/// compile/execute the template.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum TemplateEngineVersion {
    #[default]
    #[serde(rename = "v2")]
    V2,
}

/// TemplateMergePolicy defines how the rendered template should be merged with the existing Secret data.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum TemplateMergePolicy {
    #[default]
    Replace,
    Merge,
}

/// ExternalSecretTemplateMetadata defines metadata fields for the Secret blueprint.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretTemplateMetadata {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
}

/// TemplateFrom specifies a source for templates.
/// Each item in the list can either reference a ConfigMap or a Secret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateFrom {
    /// TemplateRef specifies a reference to either a ConfigMap or a Secret resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map: Option<TemplateRef>,
    /// TemplateRef specifies a reference to either a ConfigMap or a Secret resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<TemplateRef>,
    /// Target specifies where to place the template result.
    /// For Secret resources the accepted values are empty, "Data", "Annotations" and "Labels";
    /// any other value is rejected because it would allow writes to privileged Secret fields.
    /// For custom resources (when spec.target.manifest is set), this supports
    /// nested paths like "spec.database.config" or "data".
    #[serde(default = "default_target")]
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub literal: Option<String>,
    /// Used to define a decoding Strategy for the rendered template values.
    /// Defaults to None when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values_decoding_strategy: Option<ExternalSecretDecodingStrategy>,
}

impl Default for TemplateFrom {
    fn default() -> Self {
        Self {
            config_map: Default::default(),
            literal: Default::default(),
            secret: Default::default(),
            target: default_target(),
            values_decoding_strategy: Default::default(),
        }
    }
}

/// TemplateRef specifies a reference to either a ConfigMap or a Secret resource.
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

/// TemplateRefItem specifies a key in the ConfigMap/Secret to use as a template for Secret data.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TemplateRefItem {
    /// A key in the ConfigMap/Secret
    #[schemars(regex(pattern = "^[-._a-zA-Z0-9]+$"), length(min = 1, max = 253))]
    pub key: String,
    /// TemplateScope specifies how the template keys should be interpreted.
    #[serde(default)]
    pub template_as: TemplateScope,
}

/// TemplateScope specifies how the template keys should be interpreted.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum TemplateScope {
    #[default]
    Values,
    KeysAndValues,
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

/// ExternalSecretStatusCondition defines a status condition of an ExternalSecret resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretStatusCondition {
    /// ExternalSecretConditionType defines a value type for ExternalSecret conditions.
    pub r#type: ExternalSecretConditionType,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub last_transition_time: Option<Time>,
}

/// ExternalSecretConditionType defines a value type for ExternalSecret conditions.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ExternalSecretConditionType {
    Ready,
    Deleted,
}

fn default_refresh_interval() -> String {
    "1h0m0s".to_owned()
}

fn default_api_version() -> String {
    "generators.external-secrets.io/v1alpha1".to_owned()
}

fn default_target() -> String {
    "Data".to_owned()
}
