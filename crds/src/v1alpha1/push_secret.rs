//! PushSecret: push the data of a Kubernetes Secret to one or more stores.

use crate::meta::LabelSelector;
use crate::v1::external_secret::{
    ExternalSecretRewriteRegexp, ExternalSecretRewriteTransform, ExternalSecretTemplate,
    GeneratorRef, SecretStoreRefKind,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// PushSecretSpec configures the behavior of the PushSecret.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "external-secrets.io",
    version = "v1alpha1",
    kind = "PushSecret",
    plural = "pushsecrets",
    namespaced,
    status = "PushSecretStatus",
    shortname = "ps",
    category = "external-secrets",
    printcolumn = r#"{"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name": "Status", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    printcolumn = r#"{"name": "Last Sync", "type": "date", "jsonPath": ".status.refreshTime"}"#,
    derive = "PartialEq",
    derive = "Default",
    doc = "PushSecret is the Schema for the PushSecrets API that enables pushing Kubernetes secrets to external secret providers."
)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretSpec {
    /// The Interval to which External Secrets will try to push a secret definition
    #[serde(default = "default_refresh_interval")]
    pub refresh_interval: String,
    pub secret_store_refs: Vec<PushSecretStoreRef>,
    /// UpdatePolicy to handle Secrets in the provider.
    #[serde(default)]
    pub update_policy: PushSecretUpdatePolicy,
    /// Deletion Policy to handle Secrets in the provider.
    #[serde(default)]
    pub deletion_policy: PushSecretDeletionPolicy,
    /// The Secret Selector (k8s source) for the Push Secret
    pub selector: PushSecretSelector,
    /// Secret Data that should be pushed to providers
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<PushSecretData>,
    /// DataTo defines bulk push rules that expand source Secret keys into provider entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_to: Vec<PushSecretDataTo>,
    /// Template defines a blueprint for the created Secret resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<ExternalSecretTemplate>,
}

impl Default for PushSecretSpec {
    fn default() -> Self {
        Self {
            data: Default::default(),
            data_to: Default::default(),
            deletion_policy: Default::default(),
            refresh_interval: default_refresh_interval(),
            secret_store_refs: Default::default(),
            selector: Default::default(),
            template: Default::default(),
            update_policy: Default::default(),
        }
    }
}

/// PushSecretData defines data to be pushed to the provider and associated metadata.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretData {
    /// Match a given Secret Key to be pushed to the provider.
    pub r#match: PushSecretMatch,
    /// Metadata is metadata attached to the secret.
    /// The structure of metadata is provider specific, please look it up in the provider documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_fields")]
    pub metadata: Option<serde_json::Value>,
    /// Used to define a conversion Strategy for the secret keys
    #[serde(default)]
    pub conversion_strategy: PushSecretConversionStrategy,
}

/// PushSecretConversionStrategy defines how secret values are converted when pushed to providers.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum PushSecretConversionStrategy {
    #[default]
    None,
    ReverseUnicode,
}

/// PushSecretMatch defines how a source Secret key maps to a destination in the provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretMatch {
    /// Secret Key to be pushed
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key: Option<String>,
    /// Remote Refs to push to providers.
    pub remote_ref: PushSecretRemoteRef,
}

/// PushSecretRemoteRef defines the location of the secret in the provider.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretRemoteRef {
    /// Name of the resulting provider secret.
    pub remote_key: String,
    /// Name of the property in the resulting secret
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
}

/// PushSecretDataTo defines how to bulk-push secrets to providers without explicit per-key mappings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "storeRef must specify either name or labelSelector", "rule": "has(self.storeRef) && (has(self.storeRef.name) || has(self.storeRef.labelSelector))"}, {"message": "remoteKey and rewrite are mutually exclusive: rewrite is only supported in per-key mode (without remoteKey)", "rule": "!has(self.remoteKey) || !has(self.rewrite) || size(self.rewrite) == 0"}]))]
pub struct PushSecretDataTo {
    /// StoreRef specifies which SecretStore to push to. Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_ref: Option<PushSecretStoreRef>,
    /// RemoteKey is the name of the single provider secret that will receive ALL
    /// matched keys bundled as a JSON object (e.g. {"DB_HOST":"...","DB_USER":"..."}).
    /// When set, per-key expansion is skipped and a single push is performed.
    /// The provider's store prefix (if any) is still prepended to this value.
    /// When not set, each matched key is pushed as its own individual provider secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_key: Option<String>,
    /// Match pattern for selecting keys from the source Secret.
    /// If not specified, all keys are selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#match: Option<PushSecretDataToMatch>,
    /// Rewrite operations to transform keys before pushing to the provider.
    /// Operations are applied sequentially.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrite: Vec<PushSecretRewrite>,
    /// Metadata is metadata attached to the secret.
    /// The structure of metadata is provider specific, please look it up in the provider documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_fields")]
    pub metadata: Option<serde_json::Value>,
    /// Used to define a conversion Strategy for the secret keys
    #[serde(default)]
    pub conversion_strategy: PushSecretConversionStrategy,
}

/// PushSecretDataToMatch defines pattern matching for key selection.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretDataToMatch {
    /// Regexp matches keys by regular expression.
    /// If not specified, all keys are matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regexp: Option<String>,
}

/// PushSecretRewrite defines how to transform secret keys before pushing.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "exactly one of regexp or transform must be set", "rule": "(has(self.regexp) && !has(self.transform)) || (!has(self.regexp) && has(self.transform))"}]))]
pub struct PushSecretRewrite {
    /// Used to rewrite with regular expressions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regexp: Option<ExternalSecretRewriteRegexp>,
    /// Used to apply string transformation on the secrets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<ExternalSecretRewriteTransform>,
}

/// PushSecretStoreRef contains a reference on how to sync to a SecretStore.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretStoreRef {
    /// Optionally, sync to the SecretStore of the given name
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: Option<String>,
    /// Optionally, sync to secret stores with label selector
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Kind of the SecretStore resource (SecretStore or ClusterSecretStore)
    #[serde(default)]
    pub kind: SecretStoreRefKind,
}

/// PushSecretDeletionPolicy defines how push secrets are deleted in the provider.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum PushSecretDeletionPolicy {
    Delete,
    #[default]
    None,
}

/// PushSecretSelector defines criteria for selecting the source Secret for pushing to providers.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("minProperties" = 1), extend("maxProperties" = 1))]
pub struct PushSecretSelector {
    /// Select a Secret to Push.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<PushSecretSecret>,
    /// Point to a generator to create a Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator_ref: Option<GeneratorRef>,
}

/// PushSecretSecret defines a Secret that will be used as a source for pushing to providers.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretSecret {
    /// Name of the Secret.
    /// The Secret must exist in the same namespace as the PushSecret manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"#),
        length(min = 1, max = 253)
    )]
    pub name: Option<String>,
    /// Selector chooses secrets using a labelSelector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// PushSecretUpdatePolicy defines how push secrets are updated in the provider.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default, JsonSchema)]
pub enum PushSecretUpdatePolicy {
    #[default]
    Replace,
    IfNotExists,
}

/// PushSecretStatusCondition indicates the status of the PushSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretStatusCondition {
    /// PushSecretConditionType indicates the condition of the PushSecret.
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

/// PushSecretStatus indicates the history of the status of PushSecret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretStatus {
    /// refreshTime is the time and date the external secret was fetched and
    /// the target secret updated
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time", extend("nullable" = true))]
    pub refresh_time: Option<Time>,
    /// SyncedResourceVersion keeps track of the last synced version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synced_resource_version: Option<String>,
    /// Synced PushSecrets, including secrets that already exist in provider.
    /// Matches secret stores to PushSecretData that was stored to that secret store.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub synced_push_secrets: BTreeMap<String, BTreeMap<String, PushSecretData>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<PushSecretStatusCondition>,
}

fn default_refresh_interval() -> String {
    "1h0m0s".to_owned()
}
