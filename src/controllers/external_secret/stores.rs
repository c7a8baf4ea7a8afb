//! Finding the store an ExternalSecret (or one of its entries) reads from, in the controller's
//! watch caches, and upstream's rules for using it: controller class, readiness ("flood
//! gate") and a ClusterSecretStore's `spec.conditions`.

use std::collections::BTreeMap;
use std::sync::Arc;

use external_secrets_crds::meta::LabelSelector;
use external_secrets_crds::v1::{
    ClusterSecretStore, ClusterSecretStoreCondition, SecretStore, SecretStoreRef,
    SecretStoreRefKind, SecretStoreSpec, SecretStoreStatus,
};
use external_secrets_providers::StoreRef;
use kube::runtime::reflector::{ObjectRef, Store};

use super::error::Error;
use super::read::NamespaceLabels;
use crate::controllers::push_secret::data_to::StoreIdentity;

/// The watch caches of both store kinds.
#[derive(Clone)]
pub struct Stores {
    /// SecretStores of every namespace.
    pub secret_stores: Store<SecretStore>,
    /// ClusterSecretStores.
    pub cluster_secret_stores: Store<ClusterSecretStore>,
}

/// A store found in the caches.
#[derive(Debug, Clone)]
pub enum FoundStore {
    /// A SecretStore in the ExternalSecret's namespace.
    Namespaced(Arc<SecretStore>),
    /// A ClusterSecretStore.
    Cluster(Arc<ClusterSecretStore>),
}

impl FoundStore {
    /// The store as the provider layer sees it.
    pub fn store_ref(&self) -> StoreRef<'_> {
        match self {
            FoundStore::Namespaced(store) => StoreRef::from(store.as_ref()),
            FoundStore::Cluster(store) => StoreRef::from(store.as_ref()),
        }
    }

    /// The spec.
    pub fn spec(&self) -> &SecretStoreSpec {
        match self {
            FoundStore::Namespaced(store) => &store.spec,
            FoundStore::Cluster(store) => &store.spec.0,
        }
    }

    /// Name, kind and labels, as PushSecret `dataTo` entries select stores.
    pub fn identity(&self) -> StoreIdentity<'_> {
        let (name, kind, metadata) = match self {
            FoundStore::Namespaced(store) => (
                store.metadata.name.as_deref(),
                SecretStoreRefKind::SecretStore,
                &store.metadata,
            ),
            FoundStore::Cluster(store) => (
                store.metadata.name.as_deref(),
                SecretStoreRefKind::ClusterSecretStore,
                &store.metadata,
            ),
        };
        static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
        StoreIdentity {
            name: name.unwrap_or_default(),
            kind,
            labels: metadata.labels.as_ref().unwrap_or(&NO_LABELS),
        }
    }

    fn status(&self) -> Option<&SecretStoreStatus> {
        match self {
            FoundStore::Namespaced(store) => store.status.as_ref(),
            FoundStore::Cluster(store) => store.status.as_ref(),
        }
    }

    /// Whether the store's `Ready` condition is True, or it has none yet (upstream's flood
    /// gate lets stores of unknown state through).
    pub fn usable(&self) -> bool {
        let ready = self
            .status()
            .and_then(|status| status.conditions.iter().find(|c| c.r#type == "Ready"));
        ready.is_none_or(|condition| condition.status == "True")
    }

    /// The capabilities the store controller recorded, if any.
    pub fn status_capabilities(&self) -> Option<&str> {
        self.status()?.capabilities.as_deref()
    }

    /// `kind "name"`, for messages.
    pub fn describe(&self) -> String {
        let id = self.store_ref().id;
        format!("{} {:?}", id.kind, id.name)
    }
}

/// The kind and name of a store reference, defaulted as upstream defaults it.
pub fn kind_and_name(reference: &SecretStoreRef) -> (SecretStoreRefKind, &str) {
    (
        reference.kind.unwrap_or_default(),
        reference.name.as_deref().unwrap_or_default(),
    )
}

impl Stores {
    /// The store `reference` names, seen from `namespace`.
    pub fn find(&self, reference: &SecretStoreRef, namespace: &str) -> Result<FoundStore, Error> {
        let (kind, name) = kind_and_name(reference);
        if name.is_empty() {
            return Err(Error::InvalidSpec(
                "spec.secretStoreRef.name: a store name is required".into(),
            ));
        }
        let found = match kind {
            SecretStoreRefKind::SecretStore => self
                .secret_stores
                .get(&ObjectRef::new(name).within(namespace))
                .map(FoundStore::Namespaced),
            SecretStoreRefKind::ClusterSecretStore => self
                .cluster_secret_stores
                .get(&ObjectRef::new(name))
                .map(FoundStore::Cluster),
        };
        found.ok_or_else(|| Error::StoreNotFound(format!("{kind:?} {name:?}")))
    }
}

/// Whether a ClusterSecretStore's `spec.conditions` admit `namespace` (any one condition
/// matching admits it; no conditions admit every namespace), as upstream checks them.
pub async fn cluster_store_admits(
    store: &ClusterSecretStore,
    namespace: &str,
    namespaces: &NamespaceLabels,
) -> Result<bool, Error> {
    let conditions = &store.spec.0.conditions;
    if conditions.is_empty() {
        return Ok(true);
    }
    let mut labels: Option<BTreeMap<String, String>> = None;
    for condition in conditions {
        if condition_admits_by_name(condition, namespace)? {
            return Ok(true);
        }
        if let Some(selector) = &condition.namespace_selector {
            let labels = match &labels {
                Some(labels) => labels,
                None => labels.insert(namespaces.of(namespace).await?),
            };
            if selector_matches(selector, labels) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

fn condition_admits_by_name(
    condition: &ClusterSecretStoreCondition,
    namespace: &str,
) -> Result<bool, Error> {
    if condition.namespaces.iter().any(|name| name == namespace) {
        return Ok(true);
    }
    for pattern in &condition.namespace_regexes {
        let regex = regex::Regex::new(pattern).map_err(|error| {
            Error::InvalidSpec(format!(
                "spec.conditions.namespaceRegexes: invalid regular expression {pattern:?}: {error}"
            ))
        })?;
        if regex.is_match(namespace) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Kubernetes label selector semantics (matchLabels and matchExpressions, ANDed).
pub fn selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let by_label = selector
        .match_labels
        .iter()
        .all(|(key, value)| labels.get(key) == Some(value));
    let by_expression = selector.match_expressions.iter().all(|expr| {
        let value = labels.get(&expr.key);
        let values = &expr.values;
        match expr.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    by_label && by_expression
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::meta::LabelSelectorRequirement;

    #[test]
    fn conditions_admit_by_name_or_regex() {
        let condition = ClusterSecretStoreCondition {
            namespaces: vec!["team-a".into()],
            namespace_regexes: vec!["^prod-.*$".into()],
            ..ClusterSecretStoreCondition::default()
        };
        assert!(condition_admits_by_name(&condition, "team-a").unwrap());
        assert!(condition_admits_by_name(&condition, "prod-eu").unwrap());
        assert!(!condition_admits_by_name(&condition, "team-b").unwrap());
        let broken = ClusterSecretStoreCondition {
            namespace_regexes: vec!["(".into()],
            ..ClusterSecretStoreCondition::default()
        };
        let error = condition_admits_by_name(&broken, "x")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.conditions.namespaceRegexes"),
            "{error}"
        );
    }

    #[test]
    fn label_selectors_follow_kubernetes_semantics() {
        let labels: BTreeMap<String, String> =
            [("env".into(), "prod".into()), ("team".into(), "a".into())].into();
        let expression = |key: &str, operator: &str, values: &[&str]| LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        };
        let selector = |expressions: Vec<LabelSelectorRequirement>| LabelSelector {
            match_labels: [("team".to_owned(), "a".to_owned())].into(),
            match_expressions: expressions,
        };
        assert!(selector_matches(&selector(vec![]), &labels));
        assert!(selector_matches(
            &selector(vec![expression("env", "In", &["prod", "stage"])]),
            &labels
        ));
        assert!(!selector_matches(
            &selector(vec![expression("env", "NotIn", &["prod"])]),
            &labels
        ));
        assert!(selector_matches(
            &selector(vec![expression("owner", "DoesNotExist", &[])]),
            &labels
        ));
        assert!(!selector_matches(
            &selector(vec![expression("owner", "Exists", &[])]),
            &labels
        ));
    }
}
