//! The resources the server serves: the built-in kinds and, at runtime, every served version
//! of every established CustomResourceDefinition. Discovery and routing read this registry.
//! Workload, Service, RBAC and policy kinds are stored as given (no controllers act on them),
//! so charts and manifests that carry them can be applied and dry-run against the server.

use crate::schema::Schema;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Built-in behaviour attached to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    /// Plain storage.
    None,
    Namespace,
    Secret,
    ConfigMap,
    ServiceAccount,
    CustomResourceDefinition,
    /// `authentication.k8s.io/v1` TokenReview: create-only, never stored.
    TokenReview,
    /// `authorization.k8s.io/v1` SubjectAccessReview: create-only, never stored.
    SubjectAccessReview,
}

/// Identifies the storage of a resource, shared by all its versions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct GroupResource {
    pub group: String,
    pub resource: String,
}

/// One resource served at one group/version.
#[derive(Debug)]
pub(crate) struct ResourceInfo {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    /// Has a `/status` subresource: main-resource writes ignore `status`, status writes
    /// ignore everything else.
    pub status_subresource: bool,
    /// Keeps `metadata.generation`, bumped on changes outside metadata (and status).
    pub generation: bool,
    /// Served from a CRD.
    pub custom: bool,
    /// The compiled schema of this version (custom resources only).
    pub schema: Option<Arc<Schema>>,
    pub special: Special,
}

impl ResourceInfo {
    /// The storage key of the resource.
    pub(crate) fn group_resource(&self) -> GroupResource {
        GroupResource {
            group: self.group.clone(),
            resource: self.plural.clone(),
        }
    }

    /// `group/version`, or `version` for the core group.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The verbs listed in discovery.
    pub(crate) fn verbs(&self) -> Vec<&'static str> {
        match self.special {
            Special::TokenReview | Special::SubjectAccessReview => vec!["create"],
            _ => vec![
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        }
    }

    /// Whether objects are kept (false for create-only review kinds).
    pub(crate) fn stored(&self) -> bool {
        !self.is_review()
    }

    /// Whether this is a create-only review kind, answered and never stored.
    pub(crate) fn is_review(&self) -> bool {
        matches!(
            self.special,
            Special::TokenReview | Special::SubjectAccessReview
        )
    }
}

/// All served resources, by (group, version, plural).
#[derive(Default)]
pub(crate) struct Registry {
    resources: HashMap<(String, String, String), Arc<ResourceInfo>>,
    /// Versions of each group, preferred first.
    groups: BTreeMap<String, Vec<String>>,
}

impl Registry {
    /// The registry with every built-in kind.
    pub(crate) fn with_builtins() -> Self {
        let mut registry = Self::default();
        for info in builtins() {
            registry.insert(info);
        }
        registry
    }

    /// Adds or replaces one resource version.
    pub(crate) fn insert(&mut self, info: ResourceInfo) {
        let key = (
            info.group.clone(),
            info.version.clone(),
            info.plural.clone(),
        );
        let versions = self.groups.entry(info.group.clone()).or_default();
        if !versions.contains(&info.version) {
            versions.push(info.version.clone());
            versions.sort_by(|a, b| compare_versions(a, b));
        }
        self.resources.insert(key, Arc::new(info));
    }

    /// Removes every version of a resource.
    pub(crate) fn remove_resource(&mut self, group: &str, plural: &str) {
        self.resources
            .retain(|(g, _, p), _| !(g == group && p == plural));
        self.rebuild_groups();
    }

    fn rebuild_groups(&mut self) {
        self.groups.clear();
        for (group, version, _) in self.resources.keys() {
            let versions = self.groups.entry(group.clone()).or_default();
            if !versions.contains(version) {
                versions.push(version.clone());
            }
        }
        for versions in self.groups.values_mut() {
            versions.sort_by(|a, b| compare_versions(a, b));
        }
    }

    /// The resource served at `group/version/plural`.
    pub(crate) fn get(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceInfo>> {
        self.resources
            .get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
            .cloned()
    }

    /// Groups (core group `""` included) with their versions, preferred first.
    pub(crate) fn groups(&self) -> &BTreeMap<String, Vec<String>> {
        &self.groups
    }

    /// Resources of one group/version, sorted by plural.
    pub(crate) fn resources_of(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        let mut found: Vec<Arc<ResourceInfo>> = self
            .resources
            .iter()
            .filter(|((g, v, _), _)| g == group && v == version)
            .map(|(_, info)| info.clone())
            .collect();
        found.sort_by(|a, b| a.plural.cmp(&b.plural));
        found
    }

    /// Any served version of a stored resource (used when only the group/resource is known).
    pub(crate) fn any_version(&self, resource: &GroupResource) -> Option<Arc<ResourceInfo>> {
        let versions = self.groups.get(&resource.group)?;
        versions
            .iter()
            .find_map(|version| self.get(&resource.group, version, &resource.resource))
    }

    /// Whether a resource version is served (for the 404 of non-served CRD versions).
    pub(crate) fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.groups
            .get(group)
            .is_some_and(|versions| versions.iter().any(|v| v == version))
    }
}

/// Kubernetes version priority: GA before beta before alpha, higher numbers first, then
/// anything else alphabetically.
pub(crate) fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    fn rank(version: &str) -> (u8, i64, i64, String) {
        let parsed = version.strip_prefix('v').and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let major: i64 = digits.parse().ok()?;
            let tail = &rest[digits.len()..];
            let (stage, minor) = if tail.is_empty() {
                (3, 0)
            } else if let Some(number) = tail.strip_prefix("beta") {
                (2, number.parse().ok()?)
            } else if let Some(number) = tail.strip_prefix("alpha") {
                (1, number.parse().ok()?)
            } else {
                return None;
            };
            Some((stage, major, minor))
        });
        match parsed {
            Some((stage, major, minor)) => (stage, major, minor, String::new()),
            None => (0, 0, 0, version.to_owned()),
        }
    }
    let (a, b) = (rank(a), rank(b));
    b.0.cmp(&a.0)
        .then(b.1.cmp(&a.1))
        .then(b.2.cmp(&a.2))
        .then(a.3.cmp(&b.3))
}

struct Builtin {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    namespaced: bool,
    status: bool,
    generation: bool,
    special: Special,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        short_names: &["ns"],
        categories: &[],
        namespaced: false,
        status: true,
        generation: false,
        special: Special::Namespace,
    },
    Builtin {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::Secret,
    },
    Builtin {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        short_names: &["cm"],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::ConfigMap,
    },
    Builtin {
        group: "",
        version: "v1",
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        short_names: &["sa"],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::ServiceAccount,
    },
    Builtin {
        group: "",
        version: "v1",
        kind: "Event",
        plural: "events",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "events.k8s.io",
        version: "v1",
        kind: "Event",
        plural: "events",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "coordination.k8s.io",
        version: "v1",
        kind: "Lease",
        plural: "leases",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind: "ValidatingWebhookConfiguration",
        plural: "validatingwebhookconfigurations",
        short_names: &[],
        categories: &["api-extensions"],
        namespaced: false,
        status: false,
        generation: true,
        special: Special::None,
    },
    Builtin {
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind: "MutatingWebhookConfiguration",
        plural: "mutatingwebhookconfigurations",
        short_names: &[],
        categories: &["api-extensions"],
        namespaced: false,
        status: false,
        generation: true,
        special: Special::None,
    },
    Builtin {
        group: "apiextensions.k8s.io",
        version: "v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        namespaced: false,
        status: true,
        generation: true,
        special: Special::CustomResourceDefinition,
    },
    Builtin {
        group: "",
        version: "v1",
        kind: "Service",
        plural: "services",
        short_names: &["svc"],
        categories: &["all"],
        namespaced: true,
        status: true,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        short_names: &["deploy"],
        categories: &["all"],
        namespaced: true,
        status: true,
        generation: true,
        special: Special::None,
    },
    Builtin {
        group: "policy",
        version: "v1",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        short_names: &["pdb"],
        categories: &[],
        namespaced: true,
        status: true,
        generation: true,
        special: Special::None,
    },
    Builtin {
        group: "networking.k8s.io",
        version: "v1",
        kind: "NetworkPolicy",
        plural: "networkpolicies",
        short_names: &["netpol"],
        categories: &[],
        namespaced: true,
        status: false,
        generation: true,
        special: Special::None,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRole",
        plural: "clusterroles",
        short_names: &[],
        categories: &[],
        namespaced: false,
        status: false,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRoleBinding",
        plural: "clusterrolebindings",
        short_names: &[],
        categories: &[],
        namespaced: false,
        status: false,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "Role",
        plural: "roles",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "RoleBinding",
        plural: "rolebindings",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        generation: false,
        special: Special::None,
    },
    Builtin {
        group: "authentication.k8s.io",
        version: "v1",
        kind: "TokenReview",
        plural: "tokenreviews",
        short_names: &[],
        categories: &[],
        namespaced: false,
        status: false,
        generation: false,
        special: Special::TokenReview,
    },
    Builtin {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "SubjectAccessReview",
        plural: "subjectaccessreviews",
        short_names: &[],
        categories: &[],
        namespaced: false,
        status: false,
        generation: false,
        special: Special::SubjectAccessReview,
    },
];

fn builtins() -> impl Iterator<Item = ResourceInfo> {
    BUILTINS.iter().map(|builtin| ResourceInfo {
        group: builtin.group.to_owned(),
        version: builtin.version.to_owned(),
        kind: builtin.kind.to_owned(),
        plural: builtin.plural.to_owned(),
        singular: builtin.kind.to_lowercase(),
        short_names: builtin
            .short_names
            .iter()
            .map(|name| (*name).to_owned())
            .collect(),
        categories: builtin
            .categories
            .iter()
            .map(|name| (*name).to_owned())
            .collect(),
        namespaced: builtin.namespaced,
        status_subresource: builtin.status,
        generation: builtin.generation,
        custom: false,
        schema: None,
        special: builtin.special,
    })
}

/// Top-level fields the built-in kinds know; other top-level fields are pruned (and rejected
/// under `fieldValidation=Strict`). `None` means the kind is not checked.
pub(crate) fn builtin_fields(info: &ResourceInfo) -> Option<&'static [&'static str]> {
    Some(match (info.group.as_str(), info.plural.as_str()) {
        ("", "secrets") => &[
            "apiVersion",
            "kind",
            "metadata",
            "data",
            "stringData",
            "type",
            "immutable",
        ],
        ("", "configmaps") => &[
            "apiVersion",
            "kind",
            "metadata",
            "data",
            "binaryData",
            "immutable",
        ],
        ("", "namespaces") => &["apiVersion", "kind", "metadata", "spec", "status"],
        ("", "serviceaccounts") => &[
            "apiVersion",
            "kind",
            "metadata",
            "secrets",
            "imagePullSecrets",
            "automountServiceAccountToken",
        ],
        ("coordination.k8s.io", "leases") => &["apiVersion", "kind", "metadata", "spec"],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_like_kubernetes() {
        let mut versions = vec!["v1alpha1", "v1beta1", "v2", "v1", "foo", "v10beta3"];
        versions.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            versions,
            vec!["v2", "v1", "v10beta3", "v1beta1", "v1alpha1", "foo"]
        );
    }
}
