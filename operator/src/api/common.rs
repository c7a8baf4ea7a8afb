//! Settings both kinds share: the pod and container settings every operand Deployment gets
//! (`CommonConfigs`, inlined into `appConfig` and `globalConfig`), the proxy, and the enums.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, ResourceRequirements, Toleration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Settings that apply to every operand Deployment; set on `ExternalSecretsConfig.spec.appConfig`
/// they win over the same settings on `ExternalSecretsManager.spec.globalConfig`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommonConfigs {
    /// logLevel sets the verbosity of the operand's logs: 1 to 5, higher is more verbose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 5), extend("default" = 1, "format" = "int32"))]
    pub log_level: Option<i32>,
    /// resources are the compute resources of every operand container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::api::crds::resources")]
    pub resources: Option<ResourceRequirements>,
    /// affinity is the scheduling affinity of every operand pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::api::crds::affinity")]
    pub affinity: Option<Affinity>,
    /// tolerations are the taints every operand pod tolerates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        schema_with = "crate::api::crds::tolerations",
        length(min = 0, max = 50),
        extend("x-kubernetes-list-type" = "atomic")
    )]
    pub tolerations: Option<Vec<Toleration>>,
    /// nodeSelector restricts every operand pod to nodes with these labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "minProperties" = 0,
        "maxProperties" = 50,
        "x-kubernetes-map-type" = "atomic"
    ))]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// proxy sets the HTTP(S) proxy of every operand container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyConfig>,
}

/// The proxy the operand's containers use (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyConfig {
    /// httpProxy is the proxy for HTTP requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 0, max = 2048))]
    pub http_proxy: Option<String>,
    /// httpsProxy is the proxy for HTTPS requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 0, max = 2048))]
    pub https_proxy: Option<String>,
    /// noProxy lists the hosts, domains and CIDRs reached without the proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 0, max = 4096))]
    pub no_proxy: Option<String>,
    /// networkPolicyProvisioning: with Managed the operator adds an egress NetworkPolicy to the
    /// proxy's ports for the operand; with Unmanaged the user provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Managed"))]
    pub network_policy_provisioning: Option<NetworkPolicyProvisioning>,
}

/// Who provides the NetworkPolicy that lets the operand reach its proxy.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum NetworkPolicyProvisioning {
    // The operator creates it.
    #[default]
    Managed,
    // The user does.
    Unmanaged,
}

/// Whether an optional feature is on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Mode {
    // The feature is installed and managed.
    Enabled,
    // The feature is not installed; what it created is removed.
    #[default]
    Disabled,
}
