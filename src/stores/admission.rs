//! Which namespaces may use a ClusterSecretStore: its `spec.conditions` (namespace names,
//! regular expressions, label selectors), as upstream checks them.

use std::collections::BTreeMap;

use external_secrets_crds::v1::{ClusterSecretStore, ClusterSecretStoreCondition};
use k8s_openapi::api::core::v1::Namespace;
use kube::{Api, ResourceExt};

use super::{Error, FoundStore};
use crate::labels::selector_matches;

/// Where namespace labels come from, for ClusterSecretStore `namespaceSelector` conditions.
pub enum NamespaceLabels {
    /// The cluster's Namespaces.
    Cluster(Box<Api<Namespace>>),
    /// Namespaces known up front (`render`); an unknown namespace has no labels.
    Known(BTreeMap<String, BTreeMap<String, String>>),
}

impl NamespaceLabels {
    /// The labels of `namespace`.
    pub async fn of(&self, namespace: &str) -> Result<BTreeMap<String, String>, Error> {
        match self {
            NamespaceLabels::Cluster(api) => {
                let found = api.get(namespace).await.map_err(Error::NamespaceLabels)?;
                Ok(found.metadata.labels.unwrap_or_default())
            }
            NamespaceLabels::Known(known) => Ok(known.get(namespace).cloned().unwrap_or_default()),
        }
    }
}

/// Fails when `store` is a ClusterSecretStore whose conditions exclude `namespace`.
pub async fn check_admitted(
    store: &FoundStore,
    namespace: &str,
    namespaces: &NamespaceLabels,
) -> Result<(), Error> {
    if let FoundStore::Cluster(cluster) = store
        && !cluster_store_admits(cluster, namespace, namespaces).await?
    {
        return Err(Error::NotAllowed {
            store: cluster.name_any(),
            namespace: namespace.to_owned(),
        });
    }
    Ok(())
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
        let regex = regex::Regex::new(pattern).map_err(|error| Error::InvalidCondition {
            pattern: pattern.clone(),
            message: error.to_string(),
        })?;
        if regex.is_match(namespace) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
