//! Store resolution shared by every controller, `render` and the webhook: finding a
//! SecretStore or ClusterSecretStore (in the watch caches or through the API), the controller
//! class check, a ClusterSecretStore's `spec.conditions` (which namespaces may use it), the
//! readiness flood gate, and the provider client of a found store. Nothing here knows which
//! controller asks; the controllers sit above this module and never borrow from each other.

pub mod admission;
pub mod api_calls;
pub mod cache;
pub mod error;
pub mod lookup;

use std::collections::BTreeMap;
use std::sync::Arc;

use external_secrets_crds::v1::{
    ClusterSecretStore, SecretStore, SecretStoreRef, SecretStoreRefKind, SecretStoreSpec,
    SecretStoreStatus,
};
use external_secrets_crds::v1alpha1::PushSecretStoreRef;
use external_secrets_providers::{Backend, ClientManager, ProviderError, SharedClient, StoreRef};

pub use admission::NamespaceLabels;
pub use cache::Stores;
pub use error::Error;

/// A store found in the caches or through the API.
#[derive(Debug, Clone)]
pub enum FoundStore {
    /// A SecretStore in the namespace of the object using it.
    Namespaced(Arc<SecretStore>),
    /// A ClusterSecretStore.
    Cluster(Arc<ClusterSecretStore>),
}

/// A store as PushSecret `dataTo` entries select it: name, kind and labels.
pub struct StoreIdentity<'a> {
    /// Its name.
    pub name: &'a str,
    /// SecretStore or ClusterSecretStore.
    pub kind: SecretStoreRefKind,
    /// Its labels.
    pub labels: &'a BTreeMap<String, String>,
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

    /// Whether the store's `Ready` condition is True. A store without one (not validated yet)
    /// is not usable either: upstream's flood gate (`assertStoreIsUsable` in
    /// `pkg/controllers/secretstore/client_manager.go`) refuses a missing condition too.
    pub fn usable(&self) -> bool {
        let ready = self
            .status()
            .and_then(|status| status.conditions.iter().find(|c| c.r#type == "Ready"));
        ready.is_some_and(|condition| condition.status == "True")
    }

    /// The capabilities the store controller recorded, if any.
    pub fn status_capabilities(&self) -> Option<&str> {
        self.status()?.capabilities.as_deref()
    }

    /// Whether the store belongs to the controller of `controller_class`.
    pub fn is_processed_by(&self, controller_class: &str) -> bool {
        should_process(self.spec(), controller_class)
    }

    /// `kind "name"`, for messages.
    pub fn describe(&self) -> String {
        let id = self.store_ref().id;
        format!("{} {:?}", id.kind, id.name)
    }

    /// The `provider` and `call` labels of `operation` on this store, as upstream's
    /// providers report them (see [`api_calls`]).
    pub fn api_call(&self, operation: api_calls::Operation<'_>) -> (&'static str, &'static str) {
        let provider = &self.spec().provider;
        let own = Backend::of(provider).map_or("unknown", |backend| backend.name());
        api_calls::api_call(provider, own, operation)
    }

    /// The cached provider client of this store for an object in `namespace`.
    pub async fn client(
        &self,
        clients: &ClientManager,
        namespace: &str,
    ) -> Result<SharedClient, ProviderError> {
        clients.client(&self.store_ref(), Some(namespace)).await
    }
}

/// The kind and name of a store reference, defaulted as upstream defaults it.
pub fn kind_and_name(reference: &SecretStoreRef) -> (SecretStoreRefKind, &str) {
    (
        reference.kind.unwrap_or_default(),
        reference.name.as_deref().unwrap_or_default(),
    )
}

/// Whether a PushSecret's `secretStoreRefs` names the store `name` of `kind` (its `dataTo`
/// entries may only name listed stores; the controller and the webhook both check it).
pub fn is_listed(name: &str, kind: SecretStoreRefKind, store_refs: &[PushSecretStoreRef]) -> bool {
    store_refs
        .iter()
        .any(|listed| listed.kind == kind && listed.name.as_deref() == Some(name))
}

/// Upstream's `ShouldProcessStore`: a store without `spec.controller` belongs to every
/// controller; otherwise only to the controller of that class.
pub fn should_process(spec: &SecretStoreSpec, controller_class: &str) -> bool {
    match spec.controller.as_deref() {
        None | Some("") => true,
        Some(class) => class == controller_class,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_filtering_follows_upstream() {
        let mut spec = SecretStoreSpec::default();
        assert!(should_process(&spec, "default"));
        assert!(should_process(&spec, ""));
        spec.controller = Some(String::new());
        assert!(should_process(&spec, "other"));
        spec.controller = Some("dev".into());
        assert!(should_process(&spec, "dev"));
        assert!(!should_process(&spec, "default"));
        assert!(!should_process(&spec, ""));
    }

    fn store_with_ready(status: Option<&str>) -> FoundStore {
        let conditions = status.map_or_else(Vec::new, |status| {
            vec![serde_json::json!({"type": "Ready", "status": status})]
        });
        let store: SecretStore = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "vault", "namespace": "team"},
            "spec": {"provider": {}},
            "status": {"conditions": conditions},
        }))
        .unwrap();
        FoundStore::Namespaced(Arc::new(store))
    }

    /// Upstream `assertStoreIsUsable` (pkg/controllers/secretstore/client_manager.go): a nil
    /// Ready condition or one not `True` fails with `errSecretStoreNotReady`
    /// ("%s %q is not ready").
    #[test]
    fn flood_gate_refuses_stores_without_a_true_ready_condition() {
        assert!(store_with_ready(Some("True")).usable());
        assert!(!store_with_ready(Some("False")).usable());
        assert!(!store_with_ready(Some("Unknown")).usable());
        assert!(
            !store_with_ready(None).usable(),
            "no condition yet: refused"
        );
        let refused = Error::NotReady(store_with_ready(None).describe()).to_string();
        assert_eq!(refused, r#"SecretStore "vault" is not ready"#);
    }
}
