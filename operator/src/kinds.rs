//! The kinds the operator writes, with what the API needs to address them; the ones it prunes
//! (everything but Namespaces and CRDs, which hold user data) are marked.

use kube::core::{ApiResource, GroupVersionKind};

/// One kind the operator manages.
#[derive(Clone, Copy, Debug)]
pub struct ManagedKind {
    /// API group ("" for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Resource (plural).
    pub plural: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether objects no longer desired are deleted.
    pub pruned: bool,
}

impl ManagedKind {
    /// Whether the operator keeps a watch cache of it: every pruned kind but cert-manager's,
    /// which may not be served.
    pub fn cached(&self) -> bool {
        self.group != "cert-manager.io"
    }

    /// The kube `ApiResource` of this kind.
    pub fn resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(self.group, self.version, self.kind),
            self.plural,
        )
    }
}

const fn kind(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    pruned: bool,
) -> ManagedKind {
    ManagedKind {
        group,
        version,
        kind,
        plural,
        namespaced,
        pruned,
    }
}

/// Every kind the desired objects may contain.
pub const KINDS: &[ManagedKind] = &[
    kind("", "v1", "Namespace", "namespaces", false, false),
    kind(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        false,
    ),
    kind(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
        true,
    ),
    kind("", "v1", "ServiceAccount", "serviceaccounts", true, true),
    kind(
        "cert-manager.io",
        "v1",
        "Certificate",
        "certificates",
        true,
        true,
    ),
    kind("", "v1", "Secret", "secrets", true, true),
    kind("", "v1", "ConfigMap", "configmaps", true, true),
    kind(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
        true,
    ),
    kind(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        true,
    ),
    kind(
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
        true,
    ),
    kind(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
        true,
    ),
    kind("", "v1", "Service", "services", true, true),
    kind("apps", "v1", "Deployment", "deployments", true, true),
    kind(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
        true,
    ),
];

/// The managed kind named `kind`.
pub fn find(kind: &str) -> Option<&'static ManagedKind> {
    KINDS.iter().find(|known| known.kind == kind)
}

/// cert-manager's Certificate CRD, whose presence switches cert-manager mode on.
pub const CERTIFICATE_CRD: &str = "certificates.cert-manager.io";
