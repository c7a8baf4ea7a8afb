//! `ExternalSecretsManager`: the singleton (`cluster`) with settings for every operand the
//! operator manages, and a mirror of the operand controller's conditions.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CommonConfigs;

/// Operator-wide settings; `ExternalSecretsConfig.spec.appConfig` wins over them.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "operator.openshift.io",
    version = "v1alpha1",
    kind = "ExternalSecretsManager",
    status = "ExternalSecretsManagerStatus",
    shortname = "esm",
    shortname = "externalsecretsmanager",
    shortname = "esmanager",
    category = "external-secrets-operator",
    category = "external-secrets",
    label("app.kubernetes.io/name", "externalsecretsmanager"),
    label("app.kubernetes.io/part-of", "external-secrets-operator"),
    printcolumn = r#"{"jsonPath": ".metadata.creationTimestamp", "name": "AGE", "type": "date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretsManagerSpec {
    /// globalConfig holds the settings shared by every operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_config: Option<GlobalConfig>,
}

/// Settings shared by every operand, lowest priority.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalConfig {
    /// The settings `ExternalSecretsConfig.spec.appConfig` can override.
    #[serde(flatten)]
    pub common: CommonConfigs,
    /// labels to add to every operand object (the config's own labels win).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "minProperties" = 0,
        "maxProperties" = 20,
        "x-kubernetes-map-type" = "granular"
    ))]
    pub labels: Option<BTreeMap<String, String>>,
}

/// What the operator's controllers observed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretsManagerStatus {
    /// controllerStatuses: one entry per controller of the operator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-map-keys" = ["name"], "x-kubernetes-list-type" = "map"))]
    pub controller_statuses: Vec<ControllerStatus>,
    /// lastTransitionTime is when a condition last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "external_secrets_crds::schema::date_time")]
    pub last_transition_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
}

/// The conditions of one controller.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerStatus {
    /// name of the controller.
    pub name: String,
    /// conditions of the controller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-map-keys" = ["type"], "x-kubernetes-list-type" = "map"))]
    pub conditions: Vec<ManagerCondition>,
    /// observedGeneration of the object the conditions were computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0), extend("format" = "int64"))]
    pub observed_generation: Option<i64>,
}

/// A condition copied from a controller (type, status, message).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ManagerCondition {
    /// type of the condition.
    #[serde(rename = "type")]
    pub type_: String,
    /// status: True, False or Unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// message: details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
