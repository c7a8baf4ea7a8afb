//! GeneratorState: what a generator produced for a PushSecret/ExternalSecret, kept so it
//! can be cleaned up later.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GeneratorStateSpec defines the desired state of a generator state resource.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "generators.external-secrets.io",
    version = "v1alpha1",
    kind = "GeneratorState",
    plural = "generatorstates",
    namespaced,
    status = "GeneratorStateStatus",
    shortname = "gs",
    category = "external-secrets",
    category = "external-secrets-generators",
    printcolumn = r#"{"name": "GC Deadline", "type": "string", "jsonPath": ".spec.garbageCollectionDeadline"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#,
    derive = "PartialEq",
    doc = "GeneratorState represents the state created and managed by a generator resource."
)]
#[serde(rename_all = "camelCase")]
pub struct GeneratorStateSpec {
    /// GarbageCollectionDeadline is the time after which the generator state
    /// will be deleted.
    /// It is set by the controller which creates the generator state and
    /// can be set configured by the user.
    /// If the garbage collection deadline is not set the generator state will not be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub garbage_collection_deadline: Option<Time>,
    /// Resource is the generator manifest that produced the state.
    /// It is a snapshot of the generator manifest at the time the state was produced.
    /// This manifest will be used to delete the resource. Any configuration that is referenced
    /// in the manifest should be available at the time of garbage collection. If that is not the case deletion will
    /// be blocked by a finalizer.
    #[schemars(schema_with = "crate::schema::preserve_unknown_fields")]
    pub resource: serde_json::Value,
    /// State is the state that was produced by the generator implementation.
    #[schemars(schema_with = "crate::schema::preserve_unknown_fields")]
    pub state: serde_json::Value,
}

/// GeneratorStateStatus defines the observed state of a generator state resource.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GeneratorStateStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<GeneratorStateStatusCondition>,
}

/// GeneratorStateStatusCondition represents the observed condition of a generator state.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct GeneratorStateStatusCondition {
    /// GeneratorStateConditionType represents the type of condition for a generator state.
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
