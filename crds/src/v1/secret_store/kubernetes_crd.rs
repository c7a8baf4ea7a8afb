//! The Kubernetes custom resources provider: `spec.provider.crd` of a SecretStore.

use crate::meta::SecretKeySelector;
use crate::v1::secret_store::kubernetes::{KubernetesAuth, KubernetesServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// CRDProvider configures a store to fetch data from arbitrary Kubernetes
/// resources, including both custom resources (CRDs) and core API resources
/// (e.g. ConfigMap, addressed by setting resource.group to ""). Kubernetes
/// Secrets are intentionally blocked; use the Kubernetes provider for those.
///
/// # Authentication modes
///
/// In-cluster: set auth.serviceAccount and omit server. The server URL defaults
/// to the in-cluster API (kubernetes.default) and the controller mints a
/// short-lived token for the referenced ServiceAccount to read CRDs locally.
///
/// Remote cluster: set server plus auth (serviceAccount, token, or cert) or
/// authRef (a kubeconfig Secret), exactly like the Kubernetes provider.
///
/// # Remote reference keys
///
///   - SecretStore: the key is the object name only; '/' is not allowed. The API
///     namespace is always the store namespace, never part of the key.
///   - ClusterSecretStore: use "namespace/objectName" to read a namespaced CR;
///     a key without '/' addresses a cluster-scoped CR by object name. For
///     dataFrom Find with a namespaced kind, listing spans all namespaces and
///     result keys are "namespace/objectName".
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"message": "one of auth or authRef is required", "rule": "has(self.auth) || has(self.authRef)"}, {"message": "at most one of the fields in [auth authRef] may be set", "rule": "[has(self.auth),has(self.authRef)].filter(x,x==true).size() <= 1"}]))]
pub struct CrdProvider {
    /// Server configures the Kubernetes API address and TLS trust, same as the
    /// Kubernetes provider. When omitted, the URL defaults to the in-cluster API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<KubernetesServer>,
    /// Auth configures authentication to the Kubernetes API, same as the
    /// Kubernetes provider. Required when Server.URL is set (unless using AuthRef).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<KubernetesAuth>,
    /// AuthRef references a Secret containing a kubeconfig. Same semantics as the
    /// Kubernetes provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_ref: Option<SecretKeySelector>,
    /// Resource identifies the CRD by its API group, version and kind.
    pub resource: CrdProviderResource,
    /// Whitelist optionally restricts which object names and requested properties
    /// are allowed to be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whitelist: Option<CrdProviderWhitelist>,
}

/// CRDProviderResource identifies a Kubernetes resource (CRD or core) by its
/// full API coordinates: group, version and kind.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CrdProviderResource {
    /// Group is the API group of the resource. Use "" (empty string) for core
    /// Kubernetes resources such as ConfigMap; use e.g. "config.example.io"
    /// for a CRD. The field is required to be present in the manifest — write
    /// `group: ""` explicitly for core resources so typos fail at admission
    /// time rather than later at discovery.
    pub group: String,
    /// Version is the API version of the resource (e.g. "v1alpha1").
    #[schemars(length(min = 1))]
    pub version: String,
    /// Kind is the Kubernetes resource kind (e.g. "MyCustomResource").
    #[schemars(length(min = 1))]
    pub kind: String,
}

/// CRDProviderWhitelist configures allow-list rules for CRD reads.
/// If any rules are present, a request must satisfy ALL non-empty filters of at
/// least one rule; requests that match no rule are denied.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CrdProviderWhitelist {
    /// Rules is a list of allow rules. If rules are set, at least one rule must
    /// match for a request to be allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<CrdProviderWhitelistRule>,
}

/// CRDProviderWhitelistRule defines a single allow rule for CRD reads.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CrdProviderWhitelistRule {
    /// Name is an optional regular expression matched against the bare object name.
    /// For both SecretStore and ClusterSecretStore this is always the object name
    /// without any namespace prefix (e.g. "my-db-spec", not "prod/my-db-spec").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace is an optional regular expression matched against the namespace of
    /// the object. Applies only when a ClusterSecretStore is used; it is ignored
    /// for SecretStore (where the namespace is fixed to the store namespace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Properties is an optional list of regular expressions matched against
    /// requested property keys (for example: "spec.secretValue").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<String>,
}
